//! The modal dialog a person is confined to (README, "Selectors are CSS plus `>>>`").
//! While a `<dialog>` opened with `showModal()` shows, the rest of its document is inert: nothing
//! behind it can be clicked, focused or typed into. A selector that matches an element behind
//! it and one inside it means the one inside, the only one a person could reach: a modal form's
//! "Account" field, not the filter of the same name in the page's header. An element behind it,
//! or inside an `inert` one, is not acted on.
//!
//! A page's own dialog (React's, Bootstrap's, JupyterLab's: an element marked
//! `aria-modal="true"`) confines a person only by that promise and a backdrop drawn over the
//! page. A selector that matches behind it and inside it means the one inside as well; an
//! element behind it is not refused for it, only when something covers it (the backdrop), as a
//! page whose marked dialog leaves the rest usable lets a person use it.

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

/// The dialog a selector's match comes from when `el`, its first match, lies outside it: the
/// modal `<dialog>` shutting `el` out ([`shutting_out`]), else the last element marked as a
/// modal dialog (`aria-modal="true"`) that `seen` says shows. `None` when `el` is inside it or
/// inside an open popover.
pub fn confining(el: &Element, seen: impl Fn(&Element) -> bool) -> Option<Element> {
    if let Some(modal) = shutting_out(el) {
        return Some(modal);
    }
    if el.closest(":popover-open").ok().flatten().is_some() {
        return None;
    }
    let marked = el.owner_document()?.query_selector_all("[aria-modal=\"true\"]").ok()?;
    let last = (0..marked.length())
        .rev()
        .filter_map(|k| marked.item(k)?.dyn_into::<Element>().ok())
        .find(|m| seen(m))?;
    (!inside(el, &last)).then_some(last)
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
