//! Registered coverage scans (docs/tasks.md, "Registered scans"), run in the page. Each scan
//! produces its own JSON output (`raw`); Nova measures the document separately (`DocumentFacts`) so
//! that the host can check the scan's claims against what was measured. The scan reads the URL it
//! runs on when it starts: a page that changes its route while the scan waits for hydration gives a
//! result that no longer matches the tab (the host reports `effective_url_mismatch`).

use std::collections::{BTreeMap, BTreeSet};

use nova_shared::protocol::{DocumentFacts, ScanParams, ScanResult, scan};
use serde_json::{Value, json};
use wasm_bindgen::JsCast;
use web_sys::{Element, HtmlElement};

use crate::dom::{self, Failure, fail};

/// Quiet time that counts as hydrated.
const QUIET_MS: f64 = 300.0;

fn now() -> f64 {
    js_sys::Date::now()
}

/// Waits until the document is complete and no mutation happened for [`QUIET_MS`], or the
/// timeout passes. Returns whether it became stable.
async fn hydrate(timeout_ms: u32) -> bool {
    let Ok(doc) = dom::document() else { return false };
    let changes = crate::changes::Changes::watch(&doc);
    let deadline = now() + f64::from(timeout_ms);
    loop {
        if doc.ready_state() == "complete" && changes.quiet_ms() >= QUIET_MS {
            return true;
        }
        if now() >= deadline {
            return false;
        }
        crate::settle::sleep(50.0).await;
    }
}

/// Every open shadow root under `root`, depth first.
fn shadow_roots(root: &web_sys::Node, out: &mut Vec<web_sys::ShadowRoot>, depth: u32) {
    if depth > 32 {
        return;
    }
    let list = match root.dyn_ref::<web_sys::Document>() {
        Some(d) => d.query_selector_all("*"),
        None => match root.dyn_ref::<web_sys::ShadowRoot>() {
            Some(s) => s.query_selector_all("*"),
            None => return,
        },
    };
    let Ok(list) = list else { return };
    for i in 0..list.length() {
        if let Some(el) = list.item(i).as_ref().and_then(dom::as_element)
            && let Some(sr) = el.shadow_root()
        {
            shadow_roots(&sr, out, depth + 1);
            out.push(sr);
        }
    }
}

fn inner_text(el: &Element) -> String {
    dom::as_html(el).map(HtmlElement::inner_text).unwrap_or_default()
}

fn shadow_text(sr: &web_sys::ShadowRoot) -> String {
    let children = sr.children();
    (0..children.length())
        .filter_map(|i| children.item(i))
        .map(|c| inner_text(&c))
        .collect::<Vec<_>>()
        .join(" ")
}

fn all(doc: &web_sys::Document, css: &str) -> Vec<Element> {
    doc.query_selector_all(css)
        .map(|l| {
            (0..l.length()).filter_map(|i| l.item(i)).filter_map(|n| dom::as_element(&n).cloned()).collect()
        })
        .unwrap_or_default()
}

fn same_origin_frames(doc: &web_sys::Document) -> Vec<web_sys::Document> {
    all(doc, "iframe, frame")
        .iter()
        .filter_map(|f| dom::as_iframe(f).and_then(|f| f.content_document()))
        .collect()
}

/// What Nova measures of the document: rendered body text, elements, frames, shadow roots.
fn measure(doc: &web_sys::Document) -> DocumentFacts {
    let mut roots = Vec::new();
    shadow_roots(doc, &mut roots, 0);
    let shadow_nodes: u64 =
        roots.iter().map(|r| r.query_selector_all("*").map_or(0, |l| u64::from(l.length()))).sum();
    let body = doc.body().map(|b| b.inner_text()).unwrap_or_default();
    DocumentFacts {
        effective_url: doc.location().and_then(|l| l.href().ok()).unwrap_or_default(),
        visible_text_chars_measured: dom::collapse(&body).chars().count() as u64,
        node_count_measured: u64::from(doc.query_selector_all("*").map_or(0, |l| l.length())) + shadow_nodes,
        iframe_count: all(doc, "iframe, frame").len() as u64,
        shadow_root_count: roots.len() as u64,
        ready_state: doc.ready_state(),
    }
}

fn attr_texts(doc: &web_sys::Document, css: &str, attr: &str) -> Vec<String> {
    all(doc, css)
        .iter()
        .filter_map(|e| e.get_attribute(attr))
        .map(|t| dom::collapse(&t))
        .filter(|t| !t.is_empty())
        .collect()
}

/// `nova_full_page_text_v1`.
fn full_page_text(doc: &web_sys::Document, p: &ScanParams, url: &str) -> Value {
    let mut parts = vec![doc.body().map(|b| b.inner_text()).unwrap_or_default()];
    let mut roots = Vec::new();
    shadow_roots(doc, &mut roots, 0);
    if p.include_shadow_dom {
        parts.extend(roots.iter().map(shadow_text));
    }
    let frames = same_origin_frames(doc);
    if p.include_iframes {
        parts.extend(frames.iter().filter_map(|d| d.body()).map(|b| b.inner_text()));
    }
    let text = dom::collapse(&parts.join(" "));
    let aria = attr_texts(doc, "[aria-label]", "aria-label");
    let placeholders = attr_texts(doc, "input[placeholder], textarea[placeholder]", "placeholder");
    let alts = attr_texts(doc, "img[alt]", "alt");
    if text.is_empty() && aria.is_empty() && placeholders.is_empty() && alts.is_empty() {
        return Value::Null;
    }
    json!({
        "effectiveUrl": url,
        "text": text,
        "textChars": text.chars().count(),
        "ariaLabels": aria,
        "placeholders": placeholders,
        "altTexts": alts,
        "counts": {
            "nodes": doc.query_selector_all("*").map_or(0, |l| l.length()),
            "controls": all(doc, "input, select, textarea, button").len(),
            "iframes": all(doc, "iframe, frame").len(),
            "shadowRoots": roots.len(),
        },
        "includedVisibleText": true, "includedAriaLabels": true, "includedInputs": true, "includedAltText": true,
        "includedShadowDom": p.include_shadow_dom, "includedIframes": p.include_iframes,
    })
}

const LANDMARKS: &[&str] = &["header", "nav", "main", "aside", "section", "article", "footer"];

/// `nova_structured_dom_v1`.
fn structured_dom(doc: &web_sys::Document, url: &str) -> Value {
    let sequence: Vec<String> = all(doc, &LANDMARKS.join(", ")).iter().map(dom::tag).collect();
    let landmarks: BTreeSet<&String> = sequence.iter().collect();
    let roles: BTreeSet<String> = attr_texts(doc, "[role]", "role").into_iter().collect();
    let count = |css: &str| all(doc, css).len();
    json!({
        "effectiveUrl": url,
        "textChars": 0,
        "tagSequence": sequence,
        "landmarks": landmarks,
        "roles": roles,
        "counts": {
            "buttons": count("button, [role=button], input[type=submit], input[type=button]"),
            "inputs": count("input:not([type=hidden]), select, textarea"),
            "links": count("a[href]"),
            "forms": count("form"),
            "headings": {"h1": count("h1"), "h2": count("h2"), "h3": count("h3"), "h4": count("h4"), "h5": count("h5"), "h6": count("h6")},
            "modalLike": count("[role=dialog], [aria-modal=true]"),
            "iframes": count("iframe, frame"),
        },
    })
}

/// The language of a node: its closest `lang`, else the document's.
fn lang_of(el: &Element, default: &str) -> String {
    el.closest("[lang]")
        .ok()
        .flatten()
        .and_then(|l| l.get_attribute("lang"))
        .map(|l| l.trim().to_owned())
        .filter(|l| !l.is_empty())
        .unwrap_or_else(|| default.to_owned())
}

/// `nova_i18n_spellcheck_v1`: visible text per language, and language containers whose text
/// is not shown.
fn i18n_spellcheck(doc: &web_sys::Document, url: &str) -> Value {
    let default = doc.document_element().and_then(|r| r.get_attribute("lang")).unwrap_or_default();
    let mut by_lang: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let Ok(walker) = doc
        .create_tree_walker_with_what_to_show(&doc.body().map_or_else(|| doc.clone().into(), Into::into), 4)
    else {
        return Value::Null;
    };
    let mut visible_chars = 0usize;
    let mut total_chars = 0usize;
    while let Ok(Some(node)) = walker.next_node() {
        let Some(parent) = node.parent_element() else { continue };
        if matches!(dom::tag(&parent).as_str(), "script" | "style" | "noscript" | "template") {
            continue;
        }
        let text = dom::collapse(&node.text_content().unwrap_or_default());
        if text.is_empty() {
            continue;
        }
        total_chars += text.chars().count();
        if !dom::is_rendered(&parent) {
            continue;
        }
        visible_chars += text.chars().count();
        by_lang.entry(lang_of(&parent, &default)).or_default().push(text);
    }
    let hidden: Vec<Value> = all(doc, "body [lang]")
        .iter()
        .filter(|e| !dom::is_rendered(e))
        .filter_map(|e| {
            let text = dom::collapse(&e.text_content().unwrap_or_default());
            (!text.is_empty()).then(|| json!({"lang": e.get_attribute("lang"), "chars": text.chars().count(), "tag": dom::tag(e)}))
        })
        .collect();
    if visible_chars == 0 && hidden.is_empty() {
        return Value::Null;
    }
    let segments: Vec<Value> =
        by_lang.into_iter().map(|(lang, parts)| json!({"lang": lang, "text": parts.join(" ")})).collect();
    json!({
        "effectiveUrl": url,
        "documentLang": default,
        "textChars": visible_chars,
        "visibleChars": visible_chars,
        "totalChars": total_chars,
        "segments": segments,
        "hiddenLanguageContainers": hidden,
    })
}

async fn run(p: ScanParams) -> Result<ScanResult, Failure> {
    if !scan::ALL.contains(&p.scan_id.as_str()) {
        return Err(fail(nova_shared::reason::BAD_PARAMS, format!("unknown scan `{}`", p.scan_id)));
    }
    let doc = dom::document()?;
    let url = doc.location().and_then(|l| l.href().ok()).unwrap_or_default();
    let started = now();
    let stable = if p.wait_for_hydration {
        hydrate(p.hydration_timeout_ms).await
    } else {
        doc.ready_state() == "complete"
    };
    let waited = now() - started;
    let t0 = now();
    let output = match p.scan_id.as_str() {
        scan::FULL_PAGE_TEXT => full_page_text(&doc, &p, &url),
        scan::STRUCTURED_DOM => structured_dom(&doc, &url),
        _ => i18n_spellcheck(&doc, &url),
    };
    let mut raw = output.to_string();
    if raw.len() > scan::MAX_RAW_BYTES {
        let mut cut = scan::MAX_RAW_BYTES;
        while !raw.is_char_boundary(cut) {
            cut -= 1;
        }
        raw.truncate(cut);
    }
    let scan_ms = now() - t0;
    Ok(ScanResult {
        raw,
        document: measure(&doc),
        hydration_stable: stable,
        hydration_wait_ms: waited as u32,
        scan_ms: scan_ms as u32,
    })
}

/// `page.scan`: a promise of the reply envelope.
pub fn scan(p: ScanParams) -> js_sys::Promise {
    wasm_bindgen_futures::future_to_promise(async move {
        Ok(crate::actions::envelope(run(p).await.map(|r| crate::background::to_js(&r))))
    })
}
