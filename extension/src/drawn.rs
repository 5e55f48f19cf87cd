//! Waiting for an application to draw its first screen before a read or an action
//! (docs/perceive.md, "A page that is still drawing"). Many applications serve an empty shell
//! (`<div id="root"></div>`, Gradio's `<gradio-app>`) and build the page with scripts after the
//! load event, often showing "Loading..." while they fetch what they need: read at once, the
//! page is empty or only says it is loading; acted on, nothing matches. A read or an action that
//! arrives while the document is young (under [`YOUNG_MS`] since it started loading) and its
//! body shows nothing (no visible text, link, control or image) or shows that it is loading (a
//! visible `aria-busy="true"` or `role="progressbar"` element, or a short visible text starting
//! with "Loading") waits until neither holds and the document has not changed for [`QUIET_MS`],
//! at most until the document is [`YOUNG_MS`] old. Any other page is not waited for, nor is a
//! document that has drawn once (what it shows later, a reply streaming, is not its first
//! screen). An action on a young document also waits for its target, when that is not drawn
//! yet ([`first_screen`]).

use std::cell::Cell;

use wasm_bindgen::prelude::*;
use web_sys::Document;

use nova_shared::reason;
use nova_shared::selector::parse_ref;

use crate::changes::Changes;
use crate::dom;
use crate::timing;

/// How old a document may be for a read or an action to wait for its first screen (ms).
pub const YOUNG_MS: f64 = 5000.0;
/// How long the document must stay unchanged once something shows (ms).
pub const QUIET_MS: f64 = 300.0;
/// How often a drawing page is looked at (ms).
const POLL_MS: f64 = 50.0;
/// What a person sees even without text: links, controls, media.
const SHOWS: &str =
    "a[href], input, button, select, textarea, img, svg, canvas, video, iframe, embed, object";

/// Elements that say the page is busy.
const BUSY: &str = "[aria-busy=\"true\"], [role=\"progressbar\"]";
/// Elements that say the page is at work on something, not measuring it: busy regions, progress
/// bars and `<progress>` elements with no value (a bar with a value is a meter: a quota, a step
/// of a wizard).
const AT_WORK: &str =
    "[aria-busy=\"true\"], [role=\"progressbar\"]:not([aria-valuenow]), progress:not([value])";

/// Short texts that say the page is loading, outside scripts and styles.
const LOADING: &str = "//body//text()[starts-with(normalize-space(.), 'Loading')]\
    [string-length(normalize-space(.)) <= 24][not(ancestor::script or ancestor::style or ancestor::template)]";
/// How a short text saying the page is at work starts ([`at_work`]).
const WORKING: [&str; 6] = ["Loading", "Saving", "Sending", "Submitting", "Processing", "Please wait"];
/// Texts in the body, outside scripts and styles.
const TEXTS: &str = "//body//text()[normalize-space(.)]\
    [not(ancestor::script or ancestor::style or ancestor::template or ancestor::noscript)]";
/// How many matches of [`SHOWS`] or [`TEXTS`] are looked at, at most.
const LOOK_AT_SHOWN: u32 = 50;
/// How many matches of [`BUSY`] or [`LOADING`] are looked at, at most.
const LOOK_AT: u32 = 10;

/// Whether `doc` shows that it is loading.
fn loading(doc: &Document) -> bool {
    shows_one(doc, BUSY) || says_loading(doc)
}

/// Whether one of the first [`LOOK_AT`] elements `css` matches in `doc` is visible.
fn shows_one(doc: &Document, css: &str) -> bool {
    doc.query_selector_all(css).is_ok_and(|list| {
        (0..list.length().min(LOOK_AT))
            .filter_map(|i| list.item(i))
            .any(|n| dom::as_element(&n).is_some_and(dom::is_visible))
    })
}

/// Whether `doc` shows a short text starting with "Loading" ([`LOADING`]).
fn says_loading(doc: &Document) -> bool {
    let Ok(found) = doc.evaluate(LOADING, doc) else { return false };
    (0..LOOK_AT)
        .map_while(|_| found.iterate_next().ok().flatten())
        .any(|text| text.parent_element().is_some_and(|e| dom::is_visible(&e)))
}

/// `page.busy`: whether the page shows that it is at work ([`AT_WORK`], or a short text starting
/// with "Loading"), such as a single-page application's loading screen while it asks its server
/// whether a password is right.
pub fn busy() -> bool {
    dom::document().is_ok_and(|doc| shows_one(&doc, AT_WORK) || says_loading(&doc))
}

/// Whether `el` says the page is at work rather than what it did: it is or holds an
/// [`AT_WORK`] element, or its whole text (else its `aria-label`) is a short one saying it is
/// loading, saving, sending or processing ([`WORKING`]): a spinner marked `role="status"`, as
/// Bootstrap's and many design systems' are.
pub fn at_work(el: &web_sys::Element) -> bool {
    let said = dom::said(el);
    el.matches(AT_WORK).unwrap_or(false)
        || el.query_selector(AT_WORK).ok().flatten().is_some()
        || (said.chars().count() <= 24 && WORKING.iter().any(|w| said.starts_with(w)))
}

/// Whether a person sees `el`, with the page scrolled by `scroll`: rendered, with a box (read
/// once), and not placed away ([`crate::placed`]).
fn shows(el: &web_sys::Element, scroll: (f64, f64)) -> bool {
    if !dom::is_rendered(el) {
        return false;
    }
    let r = crate::covered::Rect::of(&el.get_bounding_client_rect());
    (r.width > 0.0 || r.height > 0.0)
        && !crate::placed::away(el, &r, scroll, || crate::placed::scrolled_around(el), true)
}

/// Whether the body of `doc` shows nothing yet: no element of [`SHOWS`] and no text that a
/// person sees. What is rendered but placed away does not count (a "Skip to main content" link
/// shown only when focused); past the first [`LOOK_AT_SHOWN`] of either the page is taken as
/// showing something.
fn blank(doc: &Document) -> bool {
    let Some(body) = doc.body() else { return true };
    let scroll = crate::placed::scroll();
    let shows = |el: &web_sys::Element| shows(el, scroll);
    if let Ok(list) = body.query_selector_all(SHOWS)
        && (list.length() > LOOK_AT_SHOWN
            || (0..list.length())
                .filter_map(|i| list.item(i))
                .any(|n| dom::as_element(&n).is_some_and(&shows)))
    {
        return false;
    }
    let Ok(found) = doc.evaluate(TEXTS, doc) else { return false };
    let mut looked = 0;
    while let Ok(Some(text)) = found.iterate_next() {
        looked += 1;
        if looked > LOOK_AT_SHOWN || text.parent_element().is_some_and(|e| shows(&e)) {
            return false;
        }
    }
    true
}

thread_local! {
    /// Whether this document has drawn its first screen (or was read or acted on before): what
    /// it shows later, a reply streaming with `aria-busy`, a progress bar, is not waited for.
    static DRAWN: Cell<bool> = const { Cell::new(false) };
}

/// A promise of how long the page took to draw (ms), when the document is young and shows
/// nothing yet or that it is loading, or when an action's `target` (a selector, not a ref) is
/// not on it yet; `None` otherwise (no wait at all). An application that draws its screen in
/// parts (Streamlit fetches the code of each kind of widget when it first shows one) has drawn
/// something before the control an action is for: on a young document the action waits for
/// its target, at most until the document is [`YOUNG_MS`] old, and then fails as it would
/// have.
pub fn first_screen(doc: &Document, target: Option<String>) -> Option<js_sys::Promise> {
    let young = timing::now() < YOUNG_MS;
    let drawing = young && !DRAWN.get() && (blank(doc) || loading(doc));
    let target = target.filter(|t| young && parse_ref(t).is_none() && missing(t));
    if !drawing && target.is_none() {
        DRAWN.set(true);
        return None;
    }
    let doc = doc.clone();
    Some(wasm_bindgen_futures::future_to_promise(async move {
        let start = timing::now();
        let changes = Changes::watch(&doc);
        while timing::now() < YOUNG_MS
            && ((drawing && (blank(&doc) || loading(&doc) || changes.quiet_ms() < QUIET_MS))
                || target.as_deref().is_some_and(missing))
        {
            crate::settle::sleep(POLL_MS).await;
        }
        DRAWN.set(true);
        Ok(JsValue::from_f64(timing::now() - start))
    }))
}

/// Whether nothing on the page matches `selector` yet (a selector that is not valid is not
/// waited for: it never will match).
fn missing(selector: &str) -> bool {
    dom::resolve(selector).is_err_and(|(code, _)| code == reason::ELEMENT_NOT_FOUND)
}
