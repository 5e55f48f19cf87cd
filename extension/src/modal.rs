//! The modal dialog a person is confined to (README, "Selectors are CSS plus `>>>`").
//! While a `<dialog>` opened with `showModal()` shows, the rest of its document is inert: nothing
//! behind it can be clicked, focused or typed into. A selector that matches an element behind
//! it and one inside it means the one inside, the only one a person could reach: a modal form's
//! "Account" field, not the filter of the same name in the page's header. An element behind it,
//! or inside an `inert` one, is not acted on.

use wasm_bindgen::JsCast;
use web_sys::{Element, Node, ShadowRoot};

/// The modal dialog open in `el`'s document, when `el` lies outside it: the last one in the
/// document (one opened from another is drawn over it). `None` when no modal dialog is open, or
/// `el` is inside it or inside an open popover (a list a dialog's field opens in the top layer).
pub fn shutting_out(el: &Element) -> Option<Element> {
    if el.closest(":popover-open").ok().flatten().is_some() {
        return None;
    }
    let doc = el.owner_document()?;
    // `:modal` is unknown to browsers before 2022: there, no modal is known.
    let open = doc.query_selector_all("dialog:modal").ok()?;
    let modal = open.item(open.length().checked_sub(1)?)?.dyn_into::<Element>().ok()?;
    (!inside(el, &modal)).then_some(modal)
}

/// What keeps a person from `el`: the modal dialog it lies behind ([`shutting_out`]), else the
/// `inert` element it lies in.
pub fn barred(el: &Element) -> Option<Element> {
    shutting_out(el).or_else(|| el.closest("[inert]").ok().flatten())
}

/// Whether `el` lies inside `outer`, through the shadow roots between them.
pub fn inside(el: &Element, outer: &Element) -> bool {
    let mut at: Option<Node> = Some(el.clone().into());
    while let Some(node) = at {
        if outer.contains(Some(&node)) {
            return true;
        }
        let root = node.get_root_node();
        at = root.dyn_ref::<ShadowRoot>().map(|s| s.host().into());
    }
    false
}
