//! `page.order`: selectors in the document order of the elements they name, so a form's fields
//! are filled top to bottom, as a person fills them (docs/cls.md, `nova.guarded_submit_form`),
//! and which of them name nothing, so a sign-in types nothing on a page without its form.

use nova_shared::protocol::{ORDER_MAX_SELECTORS, OrderParams, OrderResult};
use nova_shared::reason;
use web_sys::{Element, Node};

use crate::dom::{self, Failure, fail};

/// The request's selectors (each once) in document order; those naming nothing last, and said.
pub fn order(p: &OrderParams) -> Result<OrderResult, Failure> {
    if p.selectors.len() > ORDER_MAX_SELECTORS {
        return Err(fail(
            reason::BAD_PARAMS,
            format!("selectors: {} given, at most {ORDER_MAX_SELECTORS}", p.selectors.len()),
        ));
    }
    let mut placed: Vec<(String, Element)> = Vec::new();
    let mut unplaced: Vec<String> = Vec::new();
    for sel in &p.selectors {
        if placed.iter().any(|(s, _)| s == sel) || unplaced.contains(sel) {
            continue;
        }
        match dom::resolve(sel) {
            Ok(el) => {
                let at = placed.iter().position(|(_, other)| precedes(&el, other)).unwrap_or(placed.len());
                placed.insert(at, (sel.clone(), el));
            }
            Err(_) => unplaced.push(sel.clone()),
        }
    }
    let mut selectors: Vec<String> = placed.into_iter().map(|(s, _)| s).collect();
    selectors.extend(unplaced.iter().cloned());
    Ok(OrderResult { selectors, missing: unplaced })
}

/// Whether `a` comes before `b` in the page. Elements in different trees (a shadow root, a
/// frame) are compared by the elements of the top document that hold them; two elements with
/// no order between them keep the order they came in (an insertion sort: never a panic on a
/// comparison that is not total).
fn precedes(a: &Element, b: &Element) -> bool {
    let pos = a.compare_document_position(b);
    if pos & Node::DOCUMENT_POSITION_DISCONNECTED == 0 {
        return pos & Node::DOCUMENT_POSITION_FOLLOWING != 0;
    }
    let (outer_a, outer_b) = (outermost(a), outermost(b));
    let pos = outer_a.compare_document_position(&outer_b);
    pos & Node::DOCUMENT_POSITION_DISCONNECTED == 0 && pos & Node::DOCUMENT_POSITION_FOLLOWING != 0
}

/// The element of the top document that holds `el`: its shadow hosts and frame elements,
/// climbed to the end.
fn outermost(el: &Element) -> Element {
    let mut el = el.clone();
    while let Some(up) = dom::holder(&el.get_root_node()) {
        el = up;
    }
    el
}
