//! The open shadow roots an adapter's conventions are looked for in, besides the document
//! (docs/cls.md, "Guarded macros and adapters").
//!
//! Chats built of web components (Panel, Lit, Shoelace) draw their messages and error notes
//! inside shadow roots, where a query of the document never reaches: a reply there was never
//! seen, and a send ended `no_signal_yet`. A watch and a check look into every open shadow root
//! of the page too. The watch finds them once when it is armed and follows the page from there
//! (each element the page adds is looked into), so each of its looks costs one query per root,
//! and a page without shadow roots pays nothing. A read's page type is also looked for in the
//! shadow roots the read's walk entered (a chat drawn in one is a chat: `core.page.type`); any
//! other look outside a watch or a check is of the document alone.

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
        under(&root, &mut found);
    }
    found
}

/// Adds to `found` every open shadow root of `node` (an element, itself included, or a shadow
/// root) and of what it holds, those nested inside them too, up to [`MAX_ROOTS`] in all.
pub fn under(node: &Node, found: &mut Vec<ShadowRoot>) {
    walk(node, false, &mut |entered| {
        if let Entered::Shadow { root, in_frame: false } = entered
            && found.len() < MAX_ROOTS
        {
            found.push(root.clone());
        }
    });
}

/// A place a [`walk`] enters.
pub enum Entered<'a> {
    /// An open shadow root.
    Shadow {
        /// The shadow root.
        root: &'a ShadowRoot,
        /// Whether it lies inside a same-origin frame's document.
        in_frame: bool,
    },
    /// The root element of a same-origin frame's document.
    Frame(&'a Element),
}

/// Walks what `node` holds (an element, itself included, a shadow root or a frame's root
/// element), entering every open shadow root and, with `frames`, every same-origin frame, up to
/// [`MAX_DEPTH`] deep. `enter` is told of each place before it is walked.
pub fn walk(node: &Node, frames: bool, enter: &mut dyn FnMut(Entered<'_>)) {
    walk_at(node, frames, false, 0, enter);
}

fn walk_at(node: &Node, frames: bool, in_frame: bool, depth: u32, enter: &mut dyn FnMut(Entered<'_>)) {
    if depth >= MAX_DEPTH {
        return;
    }
    let inside = |el: &Element, enter: &mut dyn FnMut(Entered<'_>)| {
        if let Some(shadow) = el.shadow_root() {
            enter(Entered::Shadow { root: &shadow, in_frame });
            walk_at(&shadow, frames, in_frame, depth + 1, enter);
        }
        if frames
            && let Some(inner) =
                dom::as_iframe(el).and_then(|f| f.content_document()).and_then(|d| d.document_element())
        {
            enter(Entered::Frame(&inner));
            walk_at(&inner, frames, true, depth + 1, enter);
        }
    };
    if let Some(el) = dom::as_element(node) {
        inside(el, enter);
    }
    // Called through the node itself: an element, a shadow root, or a frame's element from
    // another realm.
    let all = js_sys::Reflect::get(node, &"querySelectorAll".into())
        .ok()
        .and_then(|f| dom::as_function(&f).map(|f| f.call1(node, &"*".into())))
        .and_then(Result::ok);
    let Some(all) = all else { return };
    let list: &web_sys::NodeList = all.unchecked_ref();
    for i in 0..list.length() {
        if let Some(el) = list.item(i).as_ref().and_then(dom::as_element) {
            inside(el, enter);
        }
    }
}

/// The shadow roots the current look reaches into, their hosts still on the page.
fn looked_into() -> Rc<Vec<ShadowRoot>> {
    ROOTS.with(|r| r.borrow().clone())
}

/// `sel` as plain CSS when it is, which is looked for in shadow roots too (a ref or a `>>>`
/// chain already says where its element is).
fn plain_css(sel: &str) -> Option<String> {
    match selector::parse(sel) {
        Ok(Selector::Chain(mut segments)) if segments.len() == 1 => segments.pop(),
        _ => None,
    }
}

/// The document, then each shadow root looked into whose host is still on the page.
fn places() -> impl Iterator<Item = Root> {
    let roots = looked_into();
    let shadows =
        (0..roots.len()).map(move |i| roots[i].clone()).filter(|s| s.host().is_connected()).map(Root::Shadow);
    dom::document().ok().map(Root::Doc).into_iter().chain(shadows)
}

/// Every element `sel` matches in the document, then in each shadow root looked into (an
/// alternative ending in `:visible` only where visible). An invalid selector matches nothing.
pub fn all(sel: &str) -> Vec<Element> {
    let Some(css) = plain_css(sel) else { return dom::all(sel).unwrap_or_default() };
    places().flat_map(|root| dom::matching(&root, &css).unwrap_or_default()).collect()
}

/// How many elements [`all`] finds.
pub fn count(sel: &str) -> u32 {
    u32::try_from(all(sel).len()).unwrap_or(u32::MAX)
}

/// The first element `sel` matches: in the document, else in the first shadow root looked into
/// that holds one.
pub fn first(sel: &str) -> Option<Element> {
    let Some(css) = plain_css(sel) else { return dom::resolve(sel).ok() };
    places().find_map(|root| root.query(&css).ok().flatten())
}
