//! DOM helpers for page-side code: selector resolution (CSS, `>>>`, perceive refs), element
//! roles and names, visibility.

use std::cell::RefCell;

use js_sys::{Reflect, WeakMap};
use nova_shared::reason;
use nova_shared::selector::{self, Selector};
use wasm_bindgen::{JsCast, JsValue};
use web_sys::{Document, Element, HtmlElement, HtmlIFrameElement, ShadowRoot};

use crate::attrs::Attrs;
use crate::select2;

/// A failure: reason code and message.
pub type Failure = (String, String);

/// Builds a failure.
pub fn fail(code: &str, message: impl Into<String>) -> Failure {
    (code.to_owned(), message.into())
}

/// The page's window.
pub fn window() -> Result<web_sys::Window, Failure> {
    web_sys::window().ok_or_else(|| fail(reason::INTERNAL, "no window"))
}

/// The URL of this frame's document now.
pub fn href() -> String {
    window().ok().and_then(|w| w.location().href().ok()).unwrap_or_default()
}

/// The top document of this frame.
pub fn document() -> Result<Document, Failure> {
    window()?.document().ok_or_else(|| fail(reason::INTERNAL, "no document"))
}

/// A place selectors run in: a document or an open shadow root.
pub enum Root {
    /// A document (top, or a same-origin iframe's).
    Doc(Document),
    /// An open shadow root.
    Shadow(ShadowRoot),
}

impl Root {
    /// The first match of `css` in this root (an alternative ending in `:visible`: its first
    /// visible match).
    pub fn query(&self, css: &str) -> Result<Option<Element>, Failure> {
        if css.contains(":visible") {
            // `:visible` (ours, not CSS) picks the first visible match; each alternative of a
            // selector list is tried in order.
            for part in selector::alternatives(css) {
                let found = match visible_base(part) {
                    Some(base) => self.query_all(base)?.into_iter().find(is_visible),
                    None => self.query_first(part)?,
                };
                if found.is_some() {
                    return Ok(found);
                }
            }
            return Ok(None);
        }
        self.query_first(css)
    }

    /// Every match, in document order.
    fn query_all(&self, css: &str) -> Result<Vec<Element>, Failure> {
        let list = match self {
            Self::Doc(d) => d.query_selector_all(css),
            Self::Shadow(s) => s.query_selector_all(css),
        }
        .map_err(|_| fail(reason::INVALID_SELECTOR, format!("`{css}` is not a valid CSS selector")))?;
        Ok(elements(&list))
    }

    fn query_first(&self, css: &str) -> Result<Option<Element>, Failure> {
        let found = match self {
            Self::Doc(d) => d.query_selector(css),
            Self::Shadow(s) => s.query_selector(css),
        };
        found.map_err(|_| fail(reason::INVALID_SELECTOR, format!("`{css}` is not a valid CSS selector")))
    }

    /// The element at a viewport point within this root.
    pub fn element_from_point(&self, x: f32, y: f32) -> Option<Element> {
        match self {
            Self::Doc(d) => d.element_from_point(x, y),
            Self::Shadow(s) => s.element_from_point(x, y),
        }
    }

    /// Every element at a viewport point within this root, topmost first.
    pub fn elements_from_point(&self, x: f32, y: f32) -> Vec<Element> {
        let all = match self {
            Self::Doc(d) => d.elements_from_point(x, y),
            Self::Shadow(s) => s.elements_from_point(x, y),
        };
        // Not `dyn_into` (`instanceof`): a frame's elements are of the frame's realm. The list
        // holds only elements.
        all.iter().map(JsCast::unchecked_into::<Element>).collect()
    }

    /// The root an element lives in.
    pub fn of(el: &Element) -> Option<Self> {
        let node = el.get_root_node();
        match node.node_type() {
            web_sys::Node::DOCUMENT_FRAGMENT_NODE => Some(Self::Shadow(node.unchecked_into())),
            web_sys::Node::DOCUMENT_NODE => Some(Self::Doc(node.unchecked_into())),
            _ => None,
        }
    }
}

/// The root to descend into from `host` for `>>>`: its open shadow root, or the document of a
/// same-origin iframe.
pub fn inner_root(host: &Element) -> Option<Root> {
    if let Some(frame) = as_iframe(host) {
        return frame.content_document().map(Root::Doc);
    }
    host.shadow_root().map(Root::Shadow)
}

/// The element around `el`: its parent, or the host of the shadow root it is a child of.
pub fn around(el: &Element) -> Option<Element> {
    el.parent_element().or_else(|| {
        el.parent_node()
            .filter(|n| n.node_type() == web_sys::Node::DOCUMENT_FRAGMENT_NODE)
            .map(|n| n.unchecked_into::<ShadowRoot>().host())
    })
}

/// The element holding `root` when it is a shadow root (its host) or a frame's document (the
/// frame element); `None` for the top document or a detached node. The way up that
/// [`inner_root`] comes down.
pub fn holder(root: &web_sys::Node) -> Option<Element> {
    // By node type, not `instanceof`: a frame's nodes belong to the frame's own realm.
    match root.node_type() {
        web_sys::Node::DOCUMENT_FRAGMENT_NODE => Some(root.unchecked_ref::<ShadowRoot>().host()),
        web_sys::Node::DOCUMENT_NODE => {
            root.unchecked_ref::<Document>().default_view().and_then(|w| w.frame_element().ok().flatten())
        }
        _ => None,
    }
}

struct Refs {
    by_element: WeakMap,
    elements: Vec<Element>,
}

thread_local! {
    static REFS: RefCell<Option<Refs>> = const { RefCell::new(None) };
}

/// Most refs kept per document; older ones are dropped first.
const MAX_REFS: usize = 50_000;

/// The ref of an element, assigning the next one if it has none. Stable for the document's
/// lifetime, so a ref from one perceive still works after the next.
pub fn ref_for(el: &Element) -> u32 {
    REFS.with(|r| {
        let mut r = r.borrow_mut();
        let refs = r.get_or_insert_with(|| Refs { by_element: WeakMap::new(), elements: Vec::new() });
        if let Some(n) = refs.by_element.get(el).as_f64() {
            return n as u32;
        }
        if refs.elements.len() >= MAX_REFS {
            refs.elements.clear();
            refs.by_element = WeakMap::new();
        }
        refs.elements.push(el.clone());
        let n = u32::try_from(refs.elements.len()).unwrap_or(u32::MAX);
        refs.by_element.set(el, &JsValue::from(n));
        n
    })
}

fn element_for_ref(n: u32) -> Option<Element> {
    REFS.with(|r| r.borrow().as_ref().and_then(|refs| refs.elements.get(n.checked_sub(1)? as usize).cloned()))
}

/// Resolves a selector or ref to its first matching element (behind an open modal dialog, its
/// first inside the dialog: [`reachable`]).
pub fn resolve(sel: &str) -> Result<Element, Failure> {
    let parsed = selector::parse(sel).map_err(|e| fail(reason::INVALID_SELECTOR, e.to_string()))?;
    match parsed {
        Selector::Ref(n) => {
            let el = element_for_ref(n).ok_or_else(|| {
                fail(
                    reason::ELEMENT_NOT_FOUND,
                    format!("no element with ref e{n} on this page; call nova.perceive again"),
                )
            })?;
            if !el.is_connected() {
                return Err(fail(
                    reason::ELEMENT_NOT_FOUND,
                    format!("ref e{n} is gone from the page; call nova.perceive again"),
                ));
            }
            Ok(el)
        }
        Selector::Chain(segments) => {
            let mut root = Root::Doc(document()?);
            let last = segments.len() - 1;
            for (i, css) in segments.iter().enumerate() {
                let el = root.query(css)?.ok_or_else(|| {
                    let context = if i == 0 {
                        String::new()
                    } else {
                        format!(" inside `{}`", segments[..i].join(" >>> "))
                    };
                    fail(reason::ELEMENT_NOT_FOUND, format!("nothing matches `{css}`{context}"))
                })?;
                if i == last {
                    return Ok(reachable(&root, css, el));
                }
                root = inner_root(&el).ok_or_else(|| {
                    fail(
                        reason::ELEMENT_NOT_FOUND,
                        format!(
                            "`{css}` has no open shadow root or same-origin frame to descend into with >>>"
                        ),
                    )
                })?;
            }
            Err(fail(reason::ELEMENT_NOT_FOUND, "empty selector"))
        }
    }
}

/// `first`, the first match of `css` under `root`, or when a modal dialog is open (a modal
/// `<dialog>` or a seen one marked `aria-modal`) and `first` lies behind it, the first match
/// inside the dialog, if one is ([`crate::modal`]).
fn reachable(root: &Root, css: &str, first: Element) -> Element {
    let Some(modal) = crate::modal::confining(&first, is_seen) else { return first };
    let found = matching(root, css).ok().into_iter().flatten();
    found.into_iter().find(|e| crate::modal::inside(e, &modal)).unwrap_or(first)
}

/// `part` without its `:visible` suffix (ours, not CSS; a repeated one counts once), when it has
/// one.
fn visible_base(part: &str) -> Option<&str> {
    let base = part.trim_end_matches(":visible");
    (base.len() < part.len()).then_some(base)
}

/// How many elements match a selector (the last `>>>` segment, inside the root the earlier
/// segments lead to). A ref counts 1 when its element is still on the page.
pub fn count(sel: &str) -> Result<u32, Failure> {
    let parsed = selector::parse(sel).map_err(|e| fail(reason::INVALID_SELECTOR, e.to_string()))?;
    let Selector::Chain(segments) = parsed else {
        return Ok(u32::from(resolve(sel).is_ok()));
    };
    let Some((root, last)) = last_root(&segments)? else { return Ok(0) };
    Ok(u32::try_from(matching(&root, last)?.len()).unwrap_or(u32::MAX))
}

/// Every element a selector matches, as [`count`] counts them, in document order for each of
/// its alternatives; a ref's element while it is on the page.
pub fn all(sel: &str) -> Result<Vec<Element>, Failure> {
    let parsed = selector::parse(sel).map_err(|e| fail(reason::INVALID_SELECTOR, e.to_string()))?;
    let Selector::Chain(segments) = parsed else {
        return Ok(resolve(sel).into_iter().collect());
    };
    match last_root(&segments)? {
        Some((root, last)) => matching(&root, last),
        None => Ok(Vec::new()),
    }
}

/// The root the segments before the last lead to, with the last; `None` when one of them
/// matches nothing or has nothing to descend into.
fn last_root(segments: &[String]) -> Result<Option<(Root, &str)>, Failure> {
    let mut root = Root::Doc(document()?);
    let (last, path) =
        segments.split_last().ok_or_else(|| fail(reason::INVALID_SELECTOR, "empty selector"))?;
    for css in path {
        let Some(host) = root.query(css)? else {
            return Ok(None);
        };
        let Some(inner) = inner_root(&host) else {
            return Ok(None);
        };
        root = inner;
    }
    Ok(Some((root, last)))
}

/// The elements under `root` that `css` matches, an alternative ending in `:visible` only
/// where visible.
pub fn matching(root: &Root, css: &str) -> Result<Vec<Element>, Failure> {
    if !css.contains(":visible") {
        return root.query_all(css);
    }
    let mut found = Vec::new();
    for part in selector::alternatives(css) {
        match visible_base(part) {
            Some(base) => found.extend(root.query_all(base)?.into_iter().filter(is_visible)),
            None => found.extend(root.query_all(part)?),
        }
    }
    Ok(found)
}

/// Whether the element is rendered: has a box, is not `visibility: hidden`, not inside a
/// `display: none` or `content-visibility: hidden` subtree.
pub fn is_visible(el: &Element) -> bool {
    if !is_rendered(el) {
        return false;
    }
    let rect = el.get_bounding_client_rect();
    rect.width() > 0.0 || rect.height() > 0.0
}

#[wasm_bindgen::prelude::wasm_bindgen]
extern "C" {
    /// `Element.checkVisibility(options)`, called directly (web-sys has no binding for it): a
    /// page walk calls it once per element.
    #[wasm_bindgen(extends = Element)]
    type Checkable;

    #[wasm_bindgen(method, js_name = checkVisibility, catch)]
    fn check_visibility(this: &Checkable, options: &js_sys::Object) -> Result<bool, JsValue>;
}

thread_local! {
    /// The options of `checkVisibility` when the browser has it: (rendered, seen). "Seen" also
    /// counts opacity 0, on the element or an ancestor, as not visible.
    static CHECK_VISIBILITY: Option<(js_sys::Object, js_sys::Object)> = {
        let proto = web_sys::window()
            .and_then(|w| Reflect::get(&w, &"Element".into()).ok())
            .and_then(|c| Reflect::get(&c, &"prototype".into()).ok());
        let f = proto.and_then(|p| Reflect::get(&p, &"checkVisibility".into()).ok()).filter(JsValue::is_function);
        f.map(|_| {
            let opts = js_sys::Object::new();
            let _ = Reflect::set(&opts, &"visibilityProperty".into(), &true.into());
            let _ = Reflect::set(&opts, &"contentVisibilityAuto".into(), &false.into());
            let seen = js_sys::Object::new();
            let _ = Reflect::set(&seen, &"visibilityProperty".into(), &true.into());
            let _ = Reflect::set(&seen, &"contentVisibilityAuto".into(), &false.into());
            let _ = Reflect::set(&seen, &"opacityProperty".into(), &true.into());
            (opts, seen)
        })
    };
}

/// Whether the element is rendered, by `Element.checkVisibility` (looked up once): false for
/// `display: none` (itself or an ancestor), `visibility: hidden` and `content-visibility:
/// hidden` subtrees, and boxless elements such as `display: contents`.
pub fn is_rendered(el: &Element) -> bool {
    CHECK_VISIBILITY.with(|cv| match cv {
        Some((opts, _)) => el.unchecked_ref::<Checkable>().check_visibility(opts).unwrap_or(true),
        None => el.get_client_rects().length() > 0,
    })
}

/// Whether a person can see the element at all: rendered ([`is_rendered`]) and not fully
/// transparent (opacity 0 on it or an ancestor).
pub fn is_seen(el: &Element) -> bool {
    CHECK_VISIBILITY.with(|cv| match cv {
        Some((_, seen)) => el.unchecked_ref::<Checkable>().check_visibility(seen).unwrap_or(true),
        None => el.get_client_rects().length() > 0,
    })
}

/// The property and attribute names a page walk passes into the page thousands of times.
/// Interned, each crosses as a cached JavaScript string instead of being decoded from UTF-8
/// on every call (on a 5,000-element page that decoding was a sixth of the walk).
const HOT_NAMES: &[&str] = &[
    "font-size",
    "-webkit-text-fill-color",
    "color",
    "background-color",
    "background-image",
    "clip-path",
    "opacity",
    "filter",
    "text-indent",
    "display",
    "overflow",
    "clip",
    "color-scheme",
    "href",
    "role",
    "type",
    "tabindex",
    "onclick",
    "multiple",
    "contenteditable",
    "aria-label",
    "aria-labelledby",
    "aria-expanded",
    "aria-selected",
    "aria-checked",
    "aria-disabled",
    "alt",
    ":disabled",
];

/// Interns [`HOT_NAMES`] (once per page; later calls are a lookup each).
pub fn intern_names() {
    for name in HOT_NAMES {
        wasm_bindgen::intern(name);
    }
}

/// Whether the element is disabled (attribute, disabled fieldset, or `aria-disabled`).
pub fn is_disabled(el: &Element) -> bool {
    is_disabled_with(el, &tag(el), &Attrs::of(el))
}

/// [`is_disabled`] when the tag and attribute names are known. Only form controls (and
/// form-associated custom elements, whose names hold a hyphen) can match `:disabled`.
pub fn is_disabled_with(el: &Element, t: &str, attrs: &Attrs) -> bool {
    let control =
        matches!(t, "button" | "input" | "select" | "textarea" | "optgroup" | "option" | "fieldset")
            || t.contains('-');
    (control && el.matches(":disabled").unwrap_or(false))
        || attrs.get(el, "aria-disabled").is_some_and(|v| v.eq_ignore_ascii_case("true"))
}

/// A computed CSS length in px (`12.5px`); `None` in any other unit (a percentage, `auto`).
pub fn px(v: &str) -> Option<f64> {
    v.trim().strip_suffix("px")?.trim().parse().ok()
}

/// Collapses whitespace and trims, and drops the characters a browser draws as nothing
/// ([`nova_shared::invisible`]).
pub fn collapse(s: &str) -> String {
    nova_shared::invisible::visible(s).0.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// What `el` says: its text, collapsed, else its `aria-label` (an icon's, a spinner's).
pub fn said(el: &Element) -> String {
    let text = collapse(&el.text_content().unwrap_or_default());
    if text.is_empty() { collapse(&el.get_attribute("aria-label").unwrap_or_default()) } else { text }
}

/// At most `max` characters, with an ellipsis when cut.
pub fn clip(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_owned();
    }
    let mut out: String = s.chars().take(max).collect();
    out.push('…');
    out
}

/// The element's tag, lower case.
pub fn tag(el: &Element) -> String {
    el.local_name().to_ascii_lowercase()
}

/// The input type, lower case (`text` when absent).
pub fn input_type(el: &Element) -> String {
    input_type_with(el, &Attrs::of(el))
}

/// [`input_type`] when the element's attribute names are known.
pub fn input_type_with(el: &Element, attrs: &Attrs) -> String {
    attrs.get(el, "type").map(|t| t.to_ascii_lowercase()).unwrap_or_else(|| "text".into())
}

/// The ARIA role: explicit, else implied by the tag.
pub fn role(el: &Element) -> String {
    role_of(el, &tag(el))
}

/// [`role`] when the tag is already known.
pub fn role_of(el: &Element, t: &str) -> String {
    role_with(el, t, &Attrs::of(el))
}

/// The attributes a link's address is in: `href`, and in a drawing made for old SVG viewers
/// `xlink:href`.
pub const HREFS: [&str; 2] = ["href", "xlink:href"];

/// [`role_of`] when the element's attribute names are known: a bare element's role is its
/// tag's, which costs no further call into the page.
pub fn role_with(el: &Element, t: &str, attrs: &Attrs) -> String {
    if let Some(r) = attrs.get(el, "role").and_then(|r| r.split_whitespace().next().map(str::to_owned)) {
        return r;
    }
    match t {
        "a" if HREFS.iter().any(|h| attrs.has(h)) => "link".into(),
        "button" | "summary" => "button".into(),
        "select" => if attrs.has("multiple") { "listbox" } else { "combobox" }.into(),
        "textarea" => "textbox".into(),
        "option" => "option".into(),
        "input" => match input_type_with(el, attrs).as_str() {
            "button" | "submit" | "reset" | "image" => "button".into(),
            "checkbox" => "checkbox".into(),
            "radio" => "radio".into(),
            "range" => "slider".into(),
            "search" => "searchbox".into(),
            "file" => "file".into(),
            _ => "textbox".into(),
        },
        "nav" => "navigation".into(),
        "main" => "main".into(),
        "header" => "banner".into(),
        "footer" => "contentinfo".into(),
        "aside" => "complementary".into(),
        "form" => "form".into(),
        "search" => "search".into(),
        _ if is_editable_root_with(el, attrs) => "textbox".into(),
        other => other.into(),
    }
}

/// Whether the element is the root of a contenteditable region.
pub fn is_editable_root(el: &Element) -> bool {
    is_editable_root_with(el, &Attrs::of(el))
}

/// [`is_editable_root`] when the element's attribute names are known.
pub fn is_editable_root_with(el: &Element, attrs: &Attrs) -> bool {
    // Only an element carrying the attribute can start an editable region; checking it first
    // keeps this cheap for the thousands of ordinary elements perceive walks past.
    if !attrs.has("contenteditable") {
        return false;
    }
    let Some(h) = as_html(el) else { return false };
    h.is_content_editable()
        && !el.parent_element().and_then(|p| as_html(&p).cloned()).is_some_and(|p| p.is_content_editable())
}

fn text_of_ids(el: &Element, ids: &str) -> String {
    let Some(root) = Root::of(el) else {
        return String::new();
    };
    let parts: Vec<String> = ids
        .split_whitespace()
        .filter_map(|id| match &root {
            Root::Doc(d) => d.get_element_by_id(id),
            Root::Shadow(s) => s.get_element_by_id(id),
        })
        .filter_map(|e| e.text_content())
        .collect();
    collapse(&parts.join(" "))
}

/// The accessible name, approximated: aria-labelledby, aria-label, labels (of form fields and
/// buttons), button values, visible text, then placeholder / title / alt, then the caption of
/// a field's box ([`group_caption`]) and the words beside it ([`words_beside`]), then its
/// `name`; a Select2 picker's, its select's ([`select2`]). At most 80 characters.
pub fn name(el: &Element) -> String {
    name_with(el, &tag(el), &Attrs::of(el))
}

/// [`name`] when the tag and attribute names are known.
pub fn name_with(el: &Element, t: &str, attrs: &Attrs) -> String {
    let attr = |a: &str| attrs.get(el, a).map(|v| collapse(&v)).filter(|v| !v.is_empty());
    // A Select2 picker (its box, its search boxes) is named as the select it stands for; only
    // an element with such a role is asked.
    if matches!(attrs.get(el, "role").as_deref(), Some("combobox" | "searchbox"))
        && let Some(select) = select2::select_of(el)
    {
        return name(&select);
    }
    if let Some(ids) = attrs.get(el, "aria-labelledby") {
        let n = text_of_ids(el, &ids);
        if !n.is_empty() {
            return clip(&n, 80);
        }
    }
    if let Some(n) = attr("aria-label") {
        return clip(&n, 80);
    }
    // A `<label>` names the controls it labels, a `<button>` among them (a custom picker is
    // often a button labelled by the field's label, showing its choice as its text).
    if matches!(t, "input" | "select" | "textarea" | "button")
        && let Ok(labels) = Reflect::get(el, &"labels".into())
        && labels.is_object()
        && let Some(list) = Some(labels.unchecked_ref::<web_sys::NodeList>())
    {
        let text: Vec<String> = (0..list.length())
            .filter_map(|i| list.item(i))
            .filter_map(|n| as_element(&n).map(|e| content_text(e, false, &mut false)))
            .collect();
        let n = collapse(&text.join(" "));
        if !n.is_empty() {
            return clip(&n, 80);
        }
    }
    // A rich text editor holds what was typed, not its name: it is named by the label of the
    // form field it stands for, else its placeholder, else the caption of its box.
    if is_editable_root_with(el, attrs) {
        return stood_for_label(el)
            .or_else(|| {
                ["aria-placeholder", "placeholder", "data-placeholder", "title"].iter().find_map(|a| attr(a))
            })
            .or_else(|| group_caption(el))
            .map(|n| clip(&n, 80))
            .unwrap_or_default();
    }
    if matches!(t, "input" | "select" | "textarea") {
        let kind = if t == "input" { input_type_with(el, attrs) } else { String::new() };
        if matches!(kind.as_str(), "button" | "submit" | "reset") {
            if let Some(v) = attr("value") {
                return clip(&v, 80);
            }
            return if kind == "submit" { "Submit".into() } else { String::new() };
        }
    } else {
        let mut skipped = false;
        let n = collapse(&content_text(el, false, &mut skipped));
        if !n.is_empty() {
            return clip(&n, 80);
        }
        // Icon links and buttons: the name comes from an image's alt, a labelled child, or a
        // child's tooltip (Django admin's calendar link holds `<span title="Choose a Date">`).
        if let Ok(Some(child)) =
            el.query_selector("img[alt]:not([alt='']), [aria-label], svg title, [title]:not([title=''])")
        {
            let n = child
                .get_attribute("alt")
                .or_else(|| child.get_attribute("aria-label"))
                .or_else(|| child.get_attribute("title"))
                .or_else(|| child.text_content())
                .map(|v| collapse(&v))
                .unwrap_or_default();
            if !n.is_empty() {
                return clip(&n, 80);
            }
        }
        // Text hidden from assistive technology names only what has nothing else: a button
        // showing only an icon drawn in a ligature font (`<i aria-hidden="true">send</i>`,
        // NiceGUI's) is named by its word, as a person reading it would. Walked again only when
        // the first walk left such text out.
        if skipped {
            let n = collapse(&content_text(el, true, &mut skipped));
            if !n.is_empty() {
                return clip(&n, 80);
            }
        }
    }
    if let Some(n) = ["placeholder", "title", "alt"].iter().find_map(|a| attr(a)) {
        return clip(&n, 80);
    }
    if matches!(t, "input" | "select" | "textarea") {
        let after = t == "input" && matches!(input_type_with(el, attrs).as_str(), "checkbox" | "radio");
        let caption = group_caption(el);
        match (caption, words_beside(el, after)) {
            (Some(c), Some(w)) => return clip(&format!("{c} {w}"), 80),
            (Some(n), None) | (None, Some(n)) => return n,
            (None, None) => {}
        }
    }
    attr("name").map(|n| clip(&n, 80)).unwrap_or_default()
}

/// The elements of `list`, in its order.
fn elements(list: &web_sys::NodeList) -> Vec<Element> {
    (0..list.length()).filter_map(|i| list.item(i)).filter_map(|n| as_element(&n).cloned()).collect()
}

/// How many boxes up from a rich text editor the field it stands for is looked for.
const STANDS_FOR_DEPTH: usize = 6;

/// The form fields a rich text editor may keep its content in for the form to send: a hidden
/// input (Wagtail's Draftail, Trix's `input`), or a text area it hides (CKEditor's); a text
/// area a person sees is a field of its own ([`kept_in`]).
const KEPT_IN: &str = "input[type=hidden][id], textarea[id]";

/// Whether `field`, a match of [`KEPT_IN`], is one a person does not see.
fn kept_in(field: &Element) -> bool {
    tag(field) == "input" || !is_rendered(field)
}

/// The text of the `<label for>` of the form field the rich text editor `el` stands for: the
/// only [`KEPT_IN`] field in the nearest box around the editor holding one, at most
/// [`STANDS_FOR_DEPTH`] boxes up, that holds no other editor. A hidden field has no `labels`
/// of its own, so its label is found by its id. Wagtail names its body field so:
/// `<label for="id_body">Body</label>` over `<input type="hidden" id="id_body">` beside the
/// Draftail editor.
fn stood_for_label(el: &Element) -> Option<String> {
    let mut around = el.parent_element()?;
    for _ in 0..STANDS_FOR_DEPTH {
        let fields = elements(&around.query_selector_all(KEPT_IN).ok()?);
        if !fields.is_empty() {
            let editors =
                elements(&around.query_selector_all("[contenteditable]:not([contenteditable=false])").ok()?);
            let others = editors.iter().any(|e| e != el && !el.contains(Some(e)) && is_editable_root(e));
            if fields.len() != 1 || others || !kept_in(&fields[0]) {
                return None;
            }
            let id = fields[0].id();
            let labels = Root::of(el)?.query_all("label[for]").ok()?;
            let label = labels.iter().find(|l| l.get_attribute("for").as_deref() == Some(id.as_str()))?;
            let words = collapse(&content_text(label, false, &mut false));
            return (!words.is_empty()).then_some(words);
        }
        around = around.parent_element()?;
    }
    None
}

/// The longest text [`words_beside`] takes for a name: a caption, not a sentence.
const BESIDE_MAX: usize = 40;

/// The controls that end a search for the words beside a field, and that a caption never holds.
const CONTROLS: &str = "input, select, textarea, button";

/// What ends [`words_beside`]'s search besides a control: a line break or another block.
const LINE_ENDS: &str = "input, select, textarea, button, br, p, div, li, tr, td, table";

/// A caption of the box a field nothing else names sits in: a `<label>` just before that box
/// that labels nothing (no `for`, no control inside). Django admin (5.x) captions its split date
/// and time so, `<label>Date joined:</label> <p>Date: <input> <br> Time: <input></p>`, and
/// hand-written forms a field, `<label>Email</label> <div><input></div>`.
fn group_caption(el: &Element) -> Option<String> {
    let label = el.parent_element()?.previous_element_sibling()?;
    if tag(&label) != "label" || label.has_attribute("for") {
        return None;
    }
    if label.query_selector(CONTROLS).ok().flatten().is_some() {
        return None;
    }
    let words = collapse(&content_text(&label, false, &mut false));
    (!words.is_empty() && words.chars().count() <= BESIDE_MAX).then_some(words)
}

/// The words a person reads beside a field nothing else names, on its line: the text just before
/// it (Django's split date and time, `Date: <input> <br> Time: <input>`), or, for a checkbox or
/// radio, just after it (`<input type=checkbox> Remember me`). Only a sibling's: a line break,
/// another control or longer text ends the search.
fn words_beside(el: &Element, after: bool) -> Option<String> {
    let step = |n: &web_sys::Node| if after { n.next_sibling() } else { n.previous_sibling() };
    let mut node = step(el);
    while let Some(n) = node {
        let text = match n.node_type() {
            web_sys::Node::TEXT_NODE => n.node_value().unwrap_or_default(),
            web_sys::Node::ELEMENT_NODE => {
                let e = n.unchecked_ref::<Element>();
                if e.matches(LINE_ENDS).unwrap_or(true)
                    || e.query_selector(LINE_ENDS).ok().flatten().is_some()
                {
                    return None;
                }
                content_text(e, false, &mut false)
            }
            _ => String::new(),
        };
        let words = collapse(&text);
        if !words.is_empty() {
            return (words.chars().count() <= BESIDE_MAX).then_some(words);
        }
        node = step(&n);
    }
    None
}

/// The text an element is named by when its name is its content, and a label's: its text
/// content without what is drawn with `display: none` inside it (Django's theme button holds a
/// label for each theme and shows one) nor the options of a control inside it (Django's
/// `<label>Action: <select>…</select></label>` names its select `Action:`, whose choice is its
/// value), nor, unless `hidden_too`, what is hidden from assistive technology inside it
/// (`aria-hidden="true"`: Wagtail's menu badge draws `2` for the eye beside `(2 new items in
/// this menu)` for the ear; `skipped` is then set). Not innerText: that would lay out, and
/// screen-reader-only labels (drawn in a clipped pixel, part of the accessible name) must be
/// kept. An element holding only text costs one call, as `textContent` does; each element
/// inside is asked whether it is hidden, an HTML one its display. An element laid out apart
/// from the text beside it ([`apart`]) is read apart, as the browsers' accessible names read
/// it: Node-RED's menu item shows "Import" and its shortcut "ctrl-i" at either end of a flex
/// box, "Import ctrl-i", not "Importctrl-i".
fn content_text(el: &Element, hidden_too: bool, skipped: &mut bool) -> String {
    if el.child_element_count() == 0 {
        return el.text_content().unwrap_or_default();
    }
    let mut text = String::new();
    let kids = el.child_nodes();
    for k in (0..kids.length()).filter_map(|i| kids.item(i)) {
        match k.node_type() {
            web_sys::Node::TEXT_NODE => text.push_str(&k.node_value().unwrap_or_default()),
            web_sys::Node::ELEMENT_NODE => {
                let child: &Element = k.unchecked_ref();
                if !hidden_too && child.get_attribute("aria-hidden").as_deref() == Some("true") {
                    *skipped = true;
                    continue;
                }
                // An icon's `<title>` names it, shown or not: SVG keeps its whole text.
                if child.namespace_uri().as_deref() != Some(HTML_NS) {
                    text.push_str(&child.text_content().unwrap_or_default());
                } else if !matches!(tag(child).as_str(), "select" | "textarea") {
                    let display = computed(child, "display").unwrap_or_default();
                    if display != "none" {
                        let gap = if apart(&display) { " " } else { "" };
                        text.push_str(gap);
                        text.push_str(&content_text(child, hidden_too, skipped));
                        text.push_str(gap);
                    }
                }
            }
            _ => {}
        }
    }
    text
}

/// Whether a box with this computed `display` is laid out apart from the text beside it: a
/// block, a list item, a table's parts, a flex or grid container, and an item of one (whose
/// `display` computes to `block`); not an inline box of any kind, nor `contents` (no box).
fn apart(display: &str) -> bool {
    !(display.is_empty()
        || display.starts_with("inline")
        || display.starts_with("ruby")
        || display == "contents")
}

/// `button "Send"`: how an element is named in reports.
pub fn describe(el: &Element) -> String {
    let n = name(el);
    if n.is_empty() { role(el) } else { format!("{} \"{}\"", role(el), n.replace('"', "'")) }
}

/// A name from attributes only (aria-label, aria-labelledby, name, id), for containers such as
/// forms and landmarks whose text content would be the whole section.
pub fn name_attr_only(el: &Element) -> String {
    if let Some(ids) = el.get_attribute("aria-labelledby") {
        let n = text_of_ids(el, &ids);
        if !n.is_empty() {
            return clip(&n, 60);
        }
    }
    ["aria-label", "name", "id"]
        .iter()
        .find_map(|a| el.get_attribute(a).map(|v| collapse(&v)).filter(|v| !v.is_empty()))
        .map(|n| clip(&n, 60))
        .unwrap_or_default()
}

// Realm-safe casts. Nodes inside same-origin iframes belong to another JavaScript realm, where
// `instanceof` against this realm's constructors is false; `dyn_ref` would reject them. These
// casts check the node type and tag instead.

const HTML_NS: &str = "http://www.w3.org/1999/xhtml";

/// The node as an element.
pub fn as_element(node: &web_sys::Node) -> Option<&Element> {
    (node.node_type() == web_sys::Node::ELEMENT_NODE).then(|| node.unchecked_ref())
}

/// The element as an HTML element (not SVG or MathML).
pub fn as_html(el: &Element) -> Option<&HtmlElement> {
    (el.namespace_uri().as_deref() == Some(HTML_NS)).then(|| el.unchecked_ref())
}

fn as_tag<'a, T: JsCast>(el: &'a Element, name: &str) -> Option<&'a T> {
    (as_html(el).is_some() && tag(el) == name).then(|| el.unchecked_ref())
}

/// `<input>`.
pub fn as_input(el: &Element) -> Option<&web_sys::HtmlInputElement> {
    as_tag(el, "input")
}

/// `<textarea>`.
pub fn as_textarea(el: &Element) -> Option<&web_sys::HtmlTextAreaElement> {
    as_tag(el, "textarea")
}

/// `<select>`.
pub fn as_select(el: &Element) -> Option<&web_sys::HtmlSelectElement> {
    as_tag(el, "select")
}

/// `<iframe>`.
pub fn as_iframe(el: &Element) -> Option<&HtmlIFrameElement> {
    as_tag(el, "iframe")
}

/// A function value from any realm.
pub fn as_function(v: &JsValue) -> Option<&js_sys::Function> {
    v.is_function().then(|| v.unchecked_ref())
}

/// One computed style property of `el`, through its own document's window.
pub fn computed(el: &Element, property: &str) -> Option<String> {
    let view = el.owner_document()?.default_view()?;
    view.get_computed_style(el).ok().flatten()?.get_property_value(property).ok()
}

#[cfg(test)]
mod tests {
    use super::px;

    #[test]
    fn a_length_is_read_in_px_only() {
        assert_eq!(px("12.5px"), Some(12.5));
        assert_eq!(px(" -3px "), Some(-3.0));
        assert_eq!(px("0px"), Some(0.0));
        assert_eq!(px("50%"), None);
        assert_eq!(px("auto"), None);
        assert_eq!(px("2em"), None);
    }
}
