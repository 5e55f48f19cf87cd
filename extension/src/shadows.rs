//! The open shadow roots an adapter's conventions are looked for in, besides the document
//! (docs/cls.md, "Guarded macros and adapters").
//!
//! Chats built of web components (Panel, Lit, Shoelace) draw their messages and error notes
//! inside shadow roots, where a query of the document never reaches: a reply there was never
//! seen, and a send ended `no_signal_yet`. A watch and a check look into every open shadow root
//! of the page too. The watch finds them once when it is armed and follows the page from there
//! (each element the page adds is looked into), so each of its looks costs one query per root,
//! and a page without shadow roots pays nothing. Outside a watch or a check (the signals of a
//! read) the document alone is looked in.

use std::cell::RefCell;
use std::rc::Rc;

use nova_shared::selector::{self, Selector};
use wasm_bindgen::JsCast;
use web_sys::{Element, Node, ShadowRoot};

use crate::dom::{self, Root};

/// Most nested shadow roots followed.
const MAX_DEPTH: u32 = 8;

/// Most shadow roots looked into: a page of more components than this is looked into up to it.
pub const MAX_ROOTS: usize = 2_000;

thread_local! {
    /// The shadow roots the current look reaches into, set by [`Looking`].
    static ROOTS: RefCell<Rc<Vec<ShadowRoot>>> = RefCell::new(Rc::new(Vec::new()));
}

/// While it lives, the collectors look into these shadow roots as well as the document; the
/// roots looked into before come back when it is dropped.
pub struct Looking(Rc<Vec<ShadowRoot>>);

impl Looking {
    /// Looks into `roots` until dropped.
    pub fn at(roots: Rc<Vec<ShadowRoot>>) -> Self {
        Self(ROOTS.with(|r| r.replace(roots)))
    }
}

impl Drop for Looking {
    fn drop(&mut self) {
        let before = std::mem::take(&mut self.0);
        ROOTS.with(|r| *r.borrow_mut() = before);
    }
}

/// Every open shadow root of the page's document, depth first, as [`under`] finds them.
pub fn of_page() -> Vec<ShadowRoot> {
    let mut found = Vec::new();
    if let Some(root) = dom::document().ok().and_then(|d| d.document_element()) {
        under(&root, &mut found, 0);
    }
    found
}

/// Adds to `found` every open shadow root of `node` (an element, itself included, or a shadow
/// root) and of what it holds, those nested inside them too, up to [`MAX_ROOTS`] in all.
pub fn under(node: &Node, found: &mut Vec<ShadowRoot>, depth: u32) {
    if depth > MAX_DEPTH || found.len() >= MAX_ROOTS {
        return;
    }
    let visit = |el: &Element, found: &mut Vec<ShadowRoot>| {
        if let Some(shadow) = el.shadow_root()
            && found.len() < MAX_ROOTS
        {
            found.push(shadow.clone());
            under(&shadow, found, depth + 1);
        }
    };
    let list = if let Some(el) = dom::as_element(node) {
        visit(el, found);
        el.query_selector_all("*")
    } else if let Some(shadow) = node.dyn_ref::<ShadowRoot>() {
        shadow.query_selector_all("*")
    } else {
        return;
    };
    let Ok(list) = list else { return };
    for i in 0..list.length() {
        if let Some(el) = list.item(i).as_ref().and_then(dom::as_element) {
            visit(el, found);
        }
    }
}

/// The shadow roots the current look reaches into, their hosts still on the page.
fn looked_into() -> Rc<Vec<ShadowRoot>> {
    ROOTS.with(|r| r.borrow().clone())
}

/// Whether `sel` is plain CSS, which is looked for in shadow roots too (a ref or a `>>>` chain
/// already says where its element is).
fn plain_css(sel: &str) -> bool {
    matches!(selector::parse(sel), Ok(Selector::Chain(segments)) if segments.len() == 1)
}

/// Every element `sel` matches in the document, then in each shadow root looked into (an
/// alternative ending in `:visible` only where visible). An invalid selector matches nothing.
pub fn all(sel: &str) -> Vec<Element> {
    let mut found = dom::all(sel).unwrap_or_default();
    if plain_css(sel) {
        for shadow in looked_into().iter().filter(|s| s.host().is_connected()) {
            found.extend(dom::matching(&Root::Shadow(shadow.clone()), sel).unwrap_or_default());
        }
    }
    found
}

/// How many elements [`all`] finds.
pub fn count(sel: &str) -> u32 {
    u32::try_from(all(sel).len()).unwrap_or(u32::MAX)
}

/// The first element `sel` matches: in the document, else in the first shadow root looked into
/// that holds one.
pub fn first(sel: &str) -> Option<Element> {
    if let Ok(el) = dom::resolve(sel) {
        return Some(el);
    }
    if !plain_css(sel) {
        return None;
    }
    looked_into()
        .iter()
        .filter(|s| s.host().is_connected())
        .find_map(|s| Root::Shadow(s.clone()).query(sel).ok().flatten())
}
