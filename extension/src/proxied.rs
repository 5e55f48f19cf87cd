//! A form control a person operates through its label: the control itself is transparent,
//! hidden or a pixel wide, and its `<label>` is drawn in its place (a custom checkbox, a
//! toggle button, Quasar's select, whose focus target is a transparent one-pixel input inside
//! the field's label). The page read lists the control, and a click presses where its label
//! shows, as a person's does (docs/perceive.md, what an element's line holds).

use wasm_bindgen::JsCast;
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

/// Whether `el` is seen, with a box more than a pixel wide and high.
fn shows(el: &Element) -> bool {
    if !dom::is_seen(el) {
        return false;
    }
    let r = el.get_bounding_client_rect();
    r.width() > 1.0 && r.height() > 1.0
}
