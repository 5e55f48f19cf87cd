//! What the awareness checks share: the selectors of password fields and controls, queries
//! that never fail, and refs.

use nova_shared::selector::format_ref;
use web_sys::{Document, Element};

use crate::dom;

/// Password fields.
pub(super) const PASSWORD: &str = "input[type=\"password\" i]";
/// Controls: what a click or a person answers with.
pub(super) const CONTROLS: &str =
    "button, [role=\"button\"], a[href], input[type=\"button\"], input[type=\"submit\"]";

/// Every element matching `css` in a document.
pub(super) fn all(root: &Document, css: &str) -> Vec<Element> {
    root.query_selector_all(css)
        .map(|l| {
            (0..l.length()).filter_map(|i| l.item(i)).filter_map(|n| dom::as_element(&n).cloned()).collect()
        })
        .unwrap_or_default()
}

/// Every element matching `css` inside `root`.
pub(super) fn all_in(root: &Element, css: &str) -> Vec<Element> {
    root.query_selector_all(css)
        .map(|l| {
            (0..l.length()).filter_map(|i| l.item(i)).filter_map(|n| dom::as_element(&n).cloned()).collect()
        })
        .unwrap_or_default()
}

/// The first element matching `css` inside `root`.
pub(super) fn first_in(root: &Element, css: &str) -> Option<Element> {
    root.query_selector(css).ok().flatten()
}

/// The element's perceive ref (`e12`), assigned if it has none.
pub(super) fn ref_of(el: &Element) -> String {
    format_ref(dom::ref_for(el))
}
