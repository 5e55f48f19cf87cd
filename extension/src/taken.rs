//! Typing into a rich text editor as a person's keys do, so that an editor keeping its own
//! model of the text takes it (README, `nova.type_selector`).
//!
//! A person's keys announce the text they type with a `textInput` event before the browser
//! inserts it; the browser's editing command (`insertText`), which types everywhere else, does
//! not. React's `onBeforeInput` listens to `textInput`, and Draft.js (Wagtail's Draftail, and
//! many composers) takes typed text there: it cancels the event and applies the text to its
//! model, a line break in it as a line break, or lets the browser insert it and reads it back.
//! Typed with the editing command alone, Draft.js never hears the text, sees its element change
//! under it and draws the text twice (the browser's and its own); the fallback that then sets
//! the element's text is drawn over, and the form sends an empty body. So the text is announced
//! first ([`announce`]): the page takes it (cancels it), or the browser inserts it for the
//! announcement, or nothing happens and the editing command types it.

use js_sys::{Function, Reflect};
use wasm_bindgen::{JsCast, JsValue};
use web_sys::{Element, Event};

/// What became of a text announced with `textInput`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Announced {
    /// The page cancelled the announcement: its editor applies the text itself, maybe a
    /// moment later (React may render in a microtask).
    Taken,
    /// The browser inserted the text (what `changed` says).
    Inserted,
    /// Nothing: no such event in this browser, or it inserts nothing for one a script sent.
    Nothing,
}

/// Announces `text` at `el` with a `textInput` event; `changed` tells, afterwards, whether the
/// editor's text changed.
pub fn announce(el: &Element, text: &str, changed: impl FnOnce() -> bool) -> Announced {
    let Some(event) = text_event(el, text) else { return Announced::Nothing };
    let proceeded = el.dispatch_event(&event).unwrap_or(true);
    if !proceeded {
        Announced::Taken
    } else if changed() {
        Announced::Inserted
    } else {
        Announced::Nothing
    }
}

/// A bubbling, cancellable `textInput` event carrying `data` (`document.createEvent` and
/// `initTextEvent`: the interface has no constructor); `None` where the browser has none.
fn text_event(el: &Element, data: &str) -> Option<Event> {
    let doc = el.owner_document()?;
    let event = doc.create_event("TextEvent").ok()?;
    let init = Reflect::get(&event, &"initTextEvent".into()).ok()?.dyn_into::<Function>().ok()?;
    let view: JsValue = doc.default_view().map_or(JsValue::NULL, JsValue::from);
    let args = js_sys::Array::of5(&"textInput".into(), &true.into(), &true.into(), &view, &data.into());
    init.apply(&event, &args).ok()?;
    Some(event)
}
