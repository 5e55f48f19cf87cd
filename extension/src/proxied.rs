//! A form control a person operates through what is drawn in its place: the control itself is
//! transparent, hidden or a pixel wide, and its `<label>` is drawn in its place (a custom
//! checkbox, a toggle button, Quasar's select, whose focus target is a transparent one-pixel
//! input inside the field's label), or it is laid transparent over an element drawn beneath it
//! (Wagtail's image upload: a transparent `<input type=file>` over a button "Or choose from
//! your computer", which a person's click never reaches). The page read lists the control,
//! and a click presses where its label shows, as a person's does (docs/perceive.md, what an
//! element's line holds).

use wasm_bindgen::{JsCast, JsValue};
use web_sys::Element;

use crate::{dom, select2};

/// The label a person sees in place of `el`, a form control not seen itself; `None` when `el`
/// shows itself, or has no label that shows.
pub fn label_in_place(el: &Element) -> Option<Element> {
    if !matches!(dom::tag(el).as_str(), "input" | "select" | "textarea") || dom::input_type(el) == "hidden" {
        return None;
    }
    // Select2 draws a picker of its own in the hidden select's place, read instead.
    if shows(el) || select2::is_hidden_select(el) {
        return None;
    }
    let labels = js_sys::Reflect::get(el, &"labels".into()).ok().filter(|l| l.is_object())?;
    let labels: &web_sys::NodeList = labels.unchecked_ref();
    // Labels are elements; by node type, not `instanceof` (a frame's nodes are of its realm).
    (0..labels.length())
        .filter_map(|i| labels.item(i))
        .filter(|n| n.node_type() == web_sys::Node::ELEMENT_NODE)
        .map(|n| n.unchecked_into::<Element>())
        .find(shows)
}

/// What a person sees in place of `el`, a form control not seen itself: its label that shows
/// ([`label_in_place`]), else the element it is laid over ([`laid_over`]).
pub fn in_place(el: &Element) -> Option<Element> {
    label_in_place(el).or_else(|| laid_over(el))
}

/// The element drawn beneath `control`, a transparent form control laid over it: its parent or
/// a sibling that shows and that the control covers ([`covers`]); `None` otherwise.
fn laid_over(control: &Element) -> Option<Element> {
    if !matches!(dom::tag(control).as_str(), "input" | "select" | "textarea")
        || dom::input_type(control) == "hidden"
        || !transparent(control)
    {
        return None;
    }
    let parent = control.parent_element()?;
    let kids = parent.children();
    (0..kids.length())
        .filter_map(|i| kids.item(i))
        .filter(|k| k != control)
        .chain(std::iter::once(parent))
        .find(|under| shows(under) && over_middle(control, under))
}

/// Whether `control`, rendered but fully transparent and taking the pointer, lies over the
/// middle of `under`, so a person's click on `under` reaches the control instead.
pub fn covers(control: &Element, under: &Element) -> bool {
    transparent(control) && over_middle(control, under)
}

/// Whether `el` is rendered, fully transparent, more than a pixel wide and high, and takes the
/// pointer.
fn transparent(el: &Element) -> bool {
    let r = el.get_bounding_client_rect();
    dom::is_rendered(el)
        && !dom::is_seen(el)
        && r.width() > 1.0
        && r.height() > 1.0
        && dom::computed(el, "pointer-events").as_deref() != Some("none")
}

/// Whether the box of `control` holds the middle of `under`; where that middle is in view, the
/// page is asked what a click there reaches first, and the control must come before `under`.
fn over_middle(control: &Element, under: &Element) -> bool {
    let (c, u) = (control.get_bounding_client_rect(), under.get_bounding_client_rect());
    let (x, y) = (u.left() + u.width() / 2.0, u.top() + u.height() / 2.0);
    if x < c.left() || x > c.right() || y < c.top() || y > c.bottom() {
        return false;
    }
    let Some(view) = under.owner_document().and_then(|d| d.default_view()) else { return true };
    let inner = |v: Result<JsValue, JsValue>| v.ok().and_then(|v| v.as_f64()).unwrap_or(0.0);
    let (w, h) = (inner(view.inner_width()), inner(view.inner_height()));
    if x < 0.0 || y < 0.0 || x >= w || y >= h {
        return true;
    }
    let Some(root) = dom::Root::of(under) else { return true };
    let stack = root.elements_from_point(x as f32, y as f32);
    let at = |e: &Element| stack.iter().position(|s| s == e);
    match (at(control), at(under)) {
        (Some(c), Some(u)) => c < u,
        (Some(_), None) => true,
        _ => false,
    }
}

/// Whether `el` is seen, with a box more than a pixel wide and high.
fn shows(el: &Element) -> bool {
    if !dom::is_seen(el) {
        return false;
    }
    let r = el.get_bounding_client_rect();
    r.width() > 1.0 && r.height() > 1.0
}
