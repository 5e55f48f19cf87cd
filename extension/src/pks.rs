//! The page side of applying stored site knowledge: `page.pksProbe` (which of a fingerprint's
//! signals are on the page; whether it is free again after a playbook) and `page.pksStep` (one
//! playbook action, only on an element inside the surface its `maxScope` allows, through the
//! checks of `page.click`).

use nova_shared::protocol::ClickParams;
use nova_shared::protocol::pks::{
    Check, CheckOutcome, Probe, ProbeParams, ProbeResult, StepKind, StepParams, StepResult,
};
use nova_shared::reason;
use wasm_bindgen::JsCast;
use web_sys::Element;

use crate::dom::{self, Failure, fail};

/// Points per side of the grid obstruction is measured on.
const GRID: u32 = 10;
/// Share of the viewport a layer must cover to count as an obstruction of its own.
const LAYER_SHARE: f64 = 0.5;

/// `page.pksProbe`.
pub fn probe(p: &ProbeParams) -> Result<ProbeResult, Failure> {
    let text = std::cell::OnceCell::new();
    let proposals: Vec<Option<String>> = p
        .probes
        .iter()
        .map(|probe| match probe {
            Probe::Holder { text } => holder(text),
            Probe::FrameSrc { selector, within } => frame_src(selector, within.as_deref()),
            _ => None,
        })
        .collect();
    let present = p
        .probes
        .iter()
        .zip(&proposals)
        .map(|(probe, proposal)| match probe {
            Probe::Dom { selector } => dom::resolve(selector).is_ok_and(|e| dom::is_visible(&e)),
            Probe::Present { selectors } => selectors.iter().any(|s| dom::count(s).is_ok_and(|n| n > 0)),
            Probe::Text { text: want } => text.get_or_init(visible_text).contains(&want.to_lowercase()),
            Probe::ScrollLocked => scroll_locked(),
            Probe::Overlay => !covering_layers().is_empty(),
            Probe::Holder { .. } | Probe::FrameSrc { .. } => proposal.is_some(),
        })
        .collect();
    let surface = p.surface.as_deref().and_then(|s| dom::resolve(s).ok()).filter(dom::is_visible);
    let checks = p.checks.iter().map(|c| check(c, surface.as_ref())).collect();
    Ok(ProbeResult { present, checks, proposals, url: dom::href() })
}

fn visible_text() -> String {
    dom::document().ok().and_then(|d| d.body()).map(|b| b.inner_text().to_lowercase()).unwrap_or_default()
}

/// The address of the iframe `selector` names, when it is one (and inside `within`'s element).
fn frame_src(selector: &str, within: Option<&str>) -> Option<String> {
    let el = dom::resolve(selector).ok()?;
    if let Some(w) = within {
        let outer = dom::resolve(w).ok()?;
        if !inside(&el, &outer) {
            return None;
        }
    }
    dom::as_iframe(&el).map(|f| f.src())
}

/// Ancestors a proposal climbs from the element showing the text.
const HOLDER_LEVELS: usize = 8;

/// An exact selector for the closest box around visible `text` that can be named: its id, its
/// `data-testid` or its `aria-label`.
fn holder(text: &str) -> Option<String> {
    let doc = dom::document().ok()?;
    let want = text.to_lowercase();
    let all = doc.query_selector_all("body *").ok()?;
    // The innermost visible element whose own text holds it.
    let inner = (0..all.length())
        .rev()
        .filter_map(|i| all.item(i))
        .filter_map(|n| n.dyn_into::<Element>().ok())
        .find(|el| {
            el.text_content().is_some_and(|t| t.to_lowercase().contains(&want)) && dom::is_visible(el)
        })?;
    let quote = |v: &str| v.replace('\\', "\\\\").replace('"', "\\\"");
    std::iter::successors(Some(inner), |e| e.parent_element()).take(HOLDER_LEVELS).find_map(|e| {
        let tag = dom::tag(&e);
        if tag == "body" || tag == "html" {
            return None;
        }
        let id = e.id();
        if !id.is_empty() && id.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_') {
            return Some(format!("#{id}"));
        }
        if let Some(t) = e.get_attribute("data-testid").filter(|t| !t.is_empty()) {
            return Some(format!("{tag}[data-testid=\"{}\"]", quote(&t)));
        }
        e.get_attribute("aria-label")
            .filter(|l| !l.is_empty())
            .map(|l| format!("{tag}[aria-label=\"{}\"]", quote(&l)))
    })
}

fn style(el: &Element, property: &str) -> String {
    dom::window()
        .ok()
        .and_then(|w| w.get_computed_style(el).ok().flatten())
        .and_then(|s| s.get_property_value(property).ok())
        .unwrap_or_default()
}

fn scroll_locked() -> bool {
    let Ok(doc) = dom::document() else { return false };
    let hidden = |el: &Element| {
        ["overflow-y", "overflow"].iter().any(|p| matches!(style(el, p).as_str(), "hidden" | "clip"))
    };
    let root = doc.document_element().is_some_and(|r| hidden(&r));
    let body = doc.body().is_some_and(|b| hidden(&b) || style(&b, "position") == "fixed");
    root || body
}

fn viewport() -> (f64, f64) {
    let w = dom::window().ok();
    let size = |v: Option<wasm_bindgen::JsValue>| v.and_then(|v| v.as_f64()).unwrap_or(0.0);
    (
        size(w.as_ref().and_then(|w| w.inner_width().ok())),
        size(w.as_ref().and_then(|w| w.inner_height().ok())),
    )
}

/// Fixed layers above the page (z-index 1 or more) covering at least half of the viewport: a
/// modal's backdrop, a consent wall.
fn covering_layers() -> Vec<Element> {
    let (w, h) = viewport();
    let Ok(doc) = dom::document() else { return Vec::new() };
    let Ok(all) = doc.query_selector_all("body *") else { return Vec::new() };
    (0..all.length())
        .filter_map(|i| all.item(i))
        .filter_map(|n| n.dyn_into::<Element>().ok())
        .filter(|el| {
            if style(el, "position") != "fixed" || style(el, "z-index").parse::<i64>().unwrap_or(0) < 1 {
                return false;
            }
            let r = el.get_bounding_client_rect();
            let cw = (r.right().min(w) - r.left().max(0.0)).max(0.0);
            let ch = (r.bottom().min(h) - r.top().max(0.0)).max(0.0);
            dom::is_visible(el) && w * h > 0.0 && cw * ch / (w * h) >= LAYER_SHARE
        })
        .collect()
}

/// Whether `el` is `outer` or inside it, across shadow roots and same-origin frames.
fn inside(el: &Element, outer: &Element) -> bool {
    let mut node: Option<web_sys::Node> = Some(el.clone().into());
    while let Some(n) = node {
        if n.is_same_node(Some(outer)) {
            return true;
        }
        node = match n.parent_node() {
            Some(p)
                if matches!(
                    p.node_type(),
                    web_sys::Node::DOCUMENT_FRAGMENT_NODE | web_sys::Node::DOCUMENT_NODE
                ) =>
            {
                dom::holder(&p).map(Into::into)
            }
            other => other,
        };
    }
    false
}

/// Whether the point reaches the page: not the surface, not a covering layer.
fn covered_at(x: f64, y: f64, surface: Option<&Element>, layers: &[Element]) -> bool {
    let Ok(doc) = dom::document() else { return false };
    let Some(hit) = doc.element_from_point(x as f32, y as f32) else { return false };
    surface.is_some_and(|s| inside(&hit, s)) || layers.iter().any(|l| inside(&hit, l))
}

fn check(c: &Check, surface: Option<&Element>) -> CheckOutcome {
    let (w, h) = viewport();
    match c {
        Check::ObstructionCleared { threshold } => {
            let layers = covering_layers();
            let n = (0..GRID * GRID)
                .filter(|i| {
                    let (x, y) = (f64::from(i % GRID) + 0.5, f64::from(i / GRID) + 0.5);
                    covered_at(x * w / f64::from(GRID), y * h / f64::from(GRID), surface, &layers)
                })
                .count();
            let share = n as f64 / f64::from(GRID * GRID);
            CheckOutcome {
                ok: share <= *threshold,
                detail: format!("{share:.2} of the viewport covered (at most {threshold} allowed)"),
            }
        }
        Check::ScrollUnlocked => {
            let locked = scroll_locked();
            CheckOutcome {
                ok: !locked,
                detail: if locked { "the page still cannot scroll" } else { "the page scrolls" }.into(),
            }
        }
        Check::TopmostClickabilityRestored => {
            let layers = covering_layers();
            let points = [(0.5, 0.5), (0.25, 0.25), (0.75, 0.25), (0.25, 0.75), (0.75, 0.75)];
            let blocked = points.iter().filter(|(x, y)| covered_at(x * w, y * h, surface, &layers)).count();
            CheckOutcome {
                ok: blocked == 0,
                detail: format!("{blocked} of 5 points of the viewport still covered"),
            }
        }
        Check::Absent { selector } => {
            let there = dom::resolve(selector).is_ok_and(|e| dom::is_visible(&e));
            CheckOutcome {
                ok: !there,
                detail: if there {
                    format!("`{selector}` is still visible")
                } else {
                    format!("`{selector}` is gone")
                },
            }
        }
    }
}

fn press(el: &Element, key: &str) {
    for kind in ["keydown", "keyup"] {
        let init = web_sys::KeyboardEventInit::new();
        init.set_bubbles(true);
        init.set_cancelable(true);
        init.set_composed(true);
        init.set_key(key);
        init.set_code(key);
        if let Ok(e) = web_sys::KeyboardEvent::new_with_keyboard_event_init_dict(kind, &init) {
            let _ = el.dispatch_event(&e);
        }
    }
}

/// `page.pksStep`.
pub fn step(p: &StepParams) -> Result<StepResult, Failure> {
    let surface = match &p.within {
        Some(s) => Some(
            dom::resolve(s)
                .map_err(|(code, m)| fail(&code, format!("the surface is not on the page: {m}")))?,
        ),
        None => None,
    };
    let found = p.selectors.iter().find_map(|s| dom::resolve(s).ok().map(|e| (s.clone(), e)));
    let (selector, el) = match (found, p.kind, &surface) {
        (Some(f), _, _) => f,
        // Escape, or a key with no element, goes to the surface.
        (None, StepKind::Dismiss | StepKind::PressKey, Some(s)) if p.selectors.is_empty() => {
            (p.within.clone().unwrap_or_default(), s.clone())
        }
        (None, _, _) => {
            return Err(fail(
                reason::ELEMENT_NOT_FOUND,
                format!(
                    "nothing matches {}",
                    p.selectors.iter().map(|s| format!("`{s}`")).collect::<Vec<_>>().join(" or ")
                ),
            ));
        }
    };
    let what = dom::describe(&el);
    if let Some(s) = &surface {
        let held = if p.same_frame { el.owner_document() == s.owner_document() } else { inside(&el, s) };
        if !held {
            let bound = if p.same_frame { "the surface's frame" } else { "the surface" };
            return Err(fail(
                reason::PKS_OUTSIDE_SCOPE,
                format!("{what} is outside {bound} (`{}`)", p.within.as_deref().unwrap_or_default()),
            ));
        }
    }
    if p.top_frame && el.owner_document() != dom::document().ok() {
        return Err(fail(reason::PKS_OUTSIDE_SCOPE, format!("{what} is not in the top frame")));
    }
    match p.kind {
        StepKind::Click => {
            let click = ClickParams {
                target: String::new(),
                frame_id: None,
                selector: selector.clone(),
                guarded: false,
                double_click: false,
            };
            crate::actions::click(&click)?;
        }
        StepKind::PressKey => press(&el, p.key.as_deref().unwrap_or("Escape")),
        StepKind::Dismiss => crate::tools::escape(&el),
    }
    Ok(StepResult { selector, element: what, url_after: dom::href() })
}
