//! Page-side parts of `nova.route`, `nova.file_upload` and `nova.dismiss_blockers`.

use base64::Engine as _;
use nova_shared::page::ActionReport;
use nova_shared::protocol::{
    ClickParams, DismissParams, DismissResult, Dismissed, RouteParams, RouteResult, UploadParams,
};
use nova_shared::reason;
use wasm_bindgen::{JsCast, JsValue};
use web_sys::Element;

use crate::dom::{self, Failure, fail};

/// Largest upload accepted by the page side (the host enforces the same bound first).
pub const MAX_UPLOAD_BYTES: usize = 25 * 1024 * 1024;

/// `page.route`: pushes (or replaces) a same-origin URL and tells the app with `popstate`,
/// which is what client-side routers listen to. The document is not reloaded.
pub fn route(p: &RouteParams) -> Result<RouteResult, Failure> {
    let w = dom::window()?;
    let before = dom::href();
    let origin = w.location().origin().unwrap_or_default();
    if !p.url.starts_with(&format!("{origin}/")) && p.url != origin {
        return Err(fail(reason::BAD_PARAMS, format!("{} is not on {origin}; use nova.navigate", p.url)));
    }
    let history = w.history().map_err(|_| fail(reason::INTERNAL, "no history object"))?;
    let pushed = if p.replace {
        history.replace_state_with_url(&JsValue::NULL, "", Some(&p.url))
    } else {
        history.push_state_with_url(&JsValue::NULL, "", Some(&p.url))
    };
    pushed.map_err(|e| fail(reason::NAVIGATION_FAILED, format!("the page refused the route: {e:?}")))?;
    let init = web_sys::PopStateEventInit::new();
    init.set_state(&JsValue::NULL);
    if let Ok(e) = web_sys::PopStateEvent::new_with_event_init_dict("popstate", &init) {
        let _ = w.dispatch_event(&e);
    }
    Ok(RouteResult {
        url_before: before,
        url_after: dom::href(),
        method: if p.replace { "history_replace" } else { "history_push" }.into(),
    })
}

/// `page.upload`: sets the files of an `<input type=file>` the way a user's file picker does,
/// then fires `input` and `change`.
pub fn upload(p: &UploadParams) -> Result<ActionReport, Failure> {
    let el = dom::resolve(&p.selector)?;
    let what = dom::describe(&el);
    let Some(input) = dom::as_input(&el).filter(|i| i.type_().eq_ignore_ascii_case("file")) else {
        // The styled button or label a person clicks to choose files names the input to use.
        let input = crate::aware::file_input_risk(&el).map(|r| format!("; its files go to `{}`", r.hint));
        return Err(fail(
            "element_not_file_input",
            format!("{what} is not a file input{}", input.unwrap_or_default()),
        ));
    };
    if dom::is_disabled(&el) {
        return Err(fail(reason::ELEMENT_DISABLED, format!("{what} is disabled")));
    }
    if p.files.len() > 1 && !input.multiple() {
        return Err(fail(reason::BAD_PARAMS, format!("{what} takes one file; {} were given", p.files.len())));
    }
    let transfer =
        web_sys::DataTransfer::new().map_err(|_| fail(reason::INTERNAL, "DataTransfer unavailable"))?;
    let mut total = 0usize;
    let mut names = Vec::new();
    for f in &p.files {
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(&f.content_base64)
            .map_err(|e| fail(reason::BAD_PARAMS, format!("{}: content is not base64: {e}", f.name)))?;
        total += bytes.len();
        if total > MAX_UPLOAD_BYTES {
            return Err(fail(reason::BAD_PARAMS, format!("uploads are limited to {MAX_UPLOAD_BYTES} bytes")));
        }
        let parts = js_sys::Array::of1(&js_sys::Uint8Array::from(bytes.as_slice()));
        let bag = web_sys::FilePropertyBag::new();
        bag.set_type(&f.mime_type);
        let file = web_sys::File::new_with_u8_array_sequence_and_options(&parts, &f.name, &bag)
            .map_err(|_| fail(reason::INTERNAL, format!("cannot make a file of {}", f.name)))?;
        transfer.items().add_with_file(&file).map_err(|_| fail(reason::INTERNAL, "cannot add the file"))?;
        names.push(format!("{} ({} bytes)", f.name, bytes.len()));
    }
    let before = dom::href();
    input.set_files(transfer.files().as_ref());
    crate::actions::fire(&el, "input");
    crate::actions::fire(&el, "change");
    let count = input.files().map_or(0, |l| l.length());
    Ok(ActionReport {
        action_dispatched: true,
        url_before: before,
        url_after: dom::href(),
        element: what,
        readback: Some(format!("{count} file(s): {}", names.join(", "))),
        sensitive: false,
        method: "file_upload".into(),
        warnings: Vec::new(),
        ..Default::default()
    })
}

/// Visible blockers, most specific first: consent banners, dialogs, modal layers.
const BLOCKERS: &[(&str, &str)] = &[
    (
        "consent",
        "[id*=\"consent\" i], [class*=\"consent\" i], [id*=\"cookie\" i], [class*=\"cookie\" i], [aria-label*=\"cookie\" i]",
    ),
    ("dialog", "dialog[open], [role=\"dialog\"], [role=\"alertdialog\"], [aria-modal=\"true\"]"),
    ("overlay", "[class*=\"modal\" i], [class*=\"overlay\" i], [class*=\"popup\" i], [id*=\"newsletter\" i]"),
];

/// Controls that close or decline, in order of preference.
const DECLINE: &[&str] = &[
    "reject all",
    "reject",
    "decline",
    "only necessary",
    "necessary only",
    "essential only",
    "refuse",
    "deny",
    "no thanks",
    "not now",
    "maybe later",
    "close",
    "dismiss",
    "skip",
    "cancel",
    "×",
    "✕",
    "x",
    "ablehnen",
    "alle ablehnen",
    "nur notwendige",
    "schließen",
    "refuser",
    "fermer",
];

/// Controls that accept (used only when allowed and nothing declines).
const ACCEPT: &[&str] = &[
    "accept all",
    "accept",
    "agree",
    "i agree",
    "allow all",
    "ok",
    "got it",
    "alle akzeptieren",
    "akzeptieren",
];

fn controls(root: &Element) -> Vec<Element> {
    root.query_selector_all(
        "button, [role=\"button\"], a[href], input[type=\"button\"], input[type=\"submit\"]",
    )
    .map(|l| (0..l.length()).filter_map(|i| l.item(i)).filter_map(|n| dom::as_element(&n).cloned()).collect())
    .unwrap_or_default()
}

fn label(el: &Element) -> String {
    let name = dom::name(el);
    let name = if name.trim().is_empty() { el.get_attribute("aria-label").unwrap_or_default() } else { name };
    dom::collapse(&name).to_lowercase()
}

fn pick(root: &Element, words: &[&str]) -> Option<Element> {
    let candidates: Vec<(Element, String)> = controls(root)
        .into_iter()
        .filter(|c| dom::is_visible(c) && !dom::is_disabled(c))
        .map(|c| {
            let l = label(&c);
            (c, l)
        })
        .collect();
    words.iter().find_map(|w| {
        candidates.iter().find(|(_, l)| l == w || (w.len() > 2 && l.starts_with(w))).map(|(c, _)| c.clone())
    })
}

fn visible_blockers() -> Vec<(&'static str, Element)> {
    let Ok(doc) = dom::document() else { return Vec::new() };
    let mut out: Vec<(&'static str, Element)> = Vec::new();
    for (kind, css) in BLOCKERS {
        let Ok(list) = doc.query_selector_all(css) else { continue };
        for el in (0..list.length()).filter_map(|i| list.item(i)).filter_map(|n| dom::as_element(&n).cloned())
        {
            let text = dom::collapse(&el.text_content().unwrap_or_default());
            // Outermost match only, visible and with something to read.
            if !dom::is_visible(&el)
                || text.is_empty()
                || out.iter().any(|(_, o)| o.contains(Some(&el)) || el.contains(Some(o)))
            {
                continue;
            }
            out.push((kind, el));
        }
    }
    out
}

/// Presses Escape on a blocker, and closes it when it is a `<dialog>`.
pub fn escape(el: &Element) {
    let init = web_sys::KeyboardEventInit::new();
    init.set_bubbles(true);
    init.set_cancelable(true);
    init.set_key("Escape");
    init.set_code("Escape");
    init.set_key_code(27);
    if let Ok(e) = web_sys::KeyboardEvent::new_with_keyboard_event_init_dict("keydown", &init) {
        let _ = el.dispatch_event(&e);
    }
    if let Some(d) = el.dyn_ref::<web_sys::HtmlDialogElement>() {
        d.close();
    }
}

/// `page.dismiss`: for each visible blocker, clicks its declining / closing control (accepting
/// only when allowed and nothing else exists), or presses Escape on a dialog without one.
pub fn dismiss(p: &DismissParams) -> Result<DismissResult, Failure> {
    let mut dismissed: Vec<Dismissed> = Vec::new();
    let mut skipped: Vec<(Element, String)> = Vec::new();
    // Blockers stack: one covered by another is tried again once the one above is gone.
    let mut progress = true;
    while progress && (dismissed.len() as u32) < p.max_actions {
        progress = false;
        for (kind, el) in visible_blockers() {
            if (dismissed.len() as u32) >= p.max_actions {
                break;
            }
            if skipped.iter().any(|(s, _)| s == &el) {
                continue;
            }
            let text: String =
                dom::collapse(&el.text_content().unwrap_or_default()).chars().take(120).collect();
            let control = pick(&el, DECLINE).or_else(|| p.allow_accept.then(|| pick(&el, ACCEPT)).flatten());
            let used = match control {
                Some(c) => {
                    let selector = format!("e{}", dom::ref_for(&c));
                    let what = dom::describe(&c);
                    // Unguarded: a control that is a commit point (a submit) is refused and skipped.
                    let click = ClickParams {
                        target: String::new(),
                        frame_id: None,
                        selector,
                        guarded: false,
                        double_click: false,
                    };
                    match crate::actions::click(&click) {
                        Ok(_) => what,
                        Err((code, _)) if code == reason::ELEMENT_COVERED => continue,
                        Err((code, message)) => {
                            skipped.push((el, format!("{text} ({code}: {message})")));
                            continue;
                        }
                    }
                }
                None if kind != "consent" => {
                    escape(&el);
                    "Escape".to_owned()
                }
                None => {
                    skipped.push((el, text));
                    continue;
                }
            };
            let gone = !el.is_connected() || !dom::is_visible(&el);
            dismissed.push(Dismissed { kind: kind.into(), text, control: used, gone });
            progress = true;
        }
    }
    let remaining = visible_blockers().len() as u32;
    Ok(DismissResult {
        dismissed,
        remaining,
        skipped: skipped.into_iter().map(|(_, t)| t).collect(),
        url_after: dom::href(),
    })
}
