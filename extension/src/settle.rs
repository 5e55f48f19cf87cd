//! Waiting, briefly, for the page to stop moving before a read or an action (docs/perceive.md,
//! "A page that is still moving"). An application that shows what a click opened by sliding or
//! fading it in (a drawer, a dialog, a new entry at the top of a list) is, for a few hundred
//! milliseconds, neither in its old state nor in its new one: text half faded in is judged not
//! seen, and a field still sliding into place lies under what it slides over. A read or an
//! action that arrives meanwhile waits until the animations running in the document end, at
//! most [`MAX_MS`].
//!
//! Which animations count: those the browser runs (CSS transitions and animations, and the Web
//! Animations a script starts), playing on the document's clock, with an end within
//! [`MAX_MS`]. Not endless ones (a spinner, a pulsing badge), not those driven by scrolling, not
//! paused ones, and not one that ends later than that (a slow progress bar): waiting would not
//! see the page settle. What a script moves frame by frame itself is not seen.
//!
//! An action also waits for the page's answer to the typing just done in the document
//! ([`AFTER_TYPING_MS`], or the longer pause a field typed into declares: [`crate::debounce`]),
//! and then while a request of the page's own is marked in flight ([`busy`]).

use std::cell::Cell;

use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;
use web_sys::{Animation, AnimationPlayState, Document};

use crate::timing;

/// How long, at most, a read or an action waits for the page to stop moving (ms).
pub const MAX_MS: f64 = 1000.0;

/// How long after an animation's end the page is looked at again: one frame, in which the
/// browser paints its last state and a page's `transitionend` handler runs.
const FRAME_MS: f64 = 20.0;

/// How long after the last typing in the document an action waits (ms). A page answers typing
/// after a pause of its own (a debounced handler: a slug made from a title, live validation,
/// search as you type, commonly 100 to 300 ms), and a person's hand never reaches the next
/// control sooner; a form filled and submitted in one call would otherwise be sent before the
/// page made what it makes of the text (Wagtail's slug: `This field is required`).
pub const AFTER_TYPING_MS: f64 = 300.0;

/// The longest pause after typing a field may make an action wait (ms): a declared pause
/// longer than this is not waited out in full.
pub const MAX_DECLARED_MS: f64 = 2000.0;

/// How long, at most, an action waits while the page's answer to the typing is in flight (ms).
pub const MAX_BUSY_MS: f64 = 2000.0;

/// How often a request in flight is looked at again (ms).
const BUSY_POLL_MS: f64 = 50.0;

thread_local! {
    /// When the page's answer to the typing done in the document is due (`timing::now`): the
    /// latest of each typing's time plus its pause.
    static ANSWER_DUE: Cell<f64> = const { Cell::new(f64::NEG_INFINITY) };
}

/// Notes that text was just typed into `field`: an action waits [`AFTER_TYPING_MS`], or the
/// longer pause the field declares (at most [`MAX_DECLARED_MS`]).
pub fn typed(field: &web_sys::Element) {
    let pause = crate::debounce::declared_ms(field).unwrap_or(0.0).clamp(AFTER_TYPING_MS, MAX_DECLARED_MS);
    let due = timing::now() + pause;
    ANSWER_DUE.with(|t| t.set(t.get().max(due)));
}

/// How long an action still waits for the page's answer to the typing (ms; 0 or less: none).
fn typing_left() -> f64 {
    ANSWER_DUE.with(Cell::get) - timing::now()
}

/// Whether the page marks a request of its own in flight (htmx's `htmx-request` class, on the
/// element that sent it or the indicator it names): the answer to the typing is on its way,
/// and a press now would race it.
fn busy(doc: &Document) -> bool {
    doc.query_selector(".htmx-request").ok().flatten().is_some()
}

/// A promise of how long the page moved (ms) once the document's animations have ended, or
/// [`MAX_MS`] has passed; `None` when nothing that ends soon is moving (no wait at all). An
/// action (`acting`) also waits until the page's answer to the last typing is due, and then
/// while the page marks a request in flight (at most [`MAX_BUSY_MS`] more).
pub fn quiet(doc: &Document, acting: bool) -> Option<js_sys::Promise> {
    let typing = if acting { typing_left() } else { f64::NEG_INFINITY };
    // The page's answer to typing may still be in flight for a while after its pause.
    let answering = typing > -MAX_BUSY_MS;
    let waiting_on = move |doc: &Document, spent: f64| {
        if answering && spent < typing.max(0.0) + MAX_BUSY_MS && busy(doc) { BUSY_POLL_MS } else { 0.0 }
    };
    let first = moving_ms(doc, MAX_MS).max(typing).max(waiting_on(doc, 0.0));
    if first <= 0.0 {
        return None;
    }
    let doc = doc.clone();
    Some(wasm_bindgen_futures::future_to_promise(async move {
        let start = timing::now();
        let mut wait = first;
        loop {
            sleep(wait + FRAME_MS).await;
            let spent = timing::now() - start;
            wait = moving_ms(&doc, MAX_MS - spent).max(waiting_on(&doc, spent));
            if wait <= 0.0 {
                return Ok(JsValue::from_f64(spent));
            }
        }
    }))
}

/// How long until the last of the document's running animations that end within `within` ms
/// ends (ms); 0 when none does.
fn moving_ms(doc: &Document, within: f64) -> f64 {
    if within <= 0.0 {
        return 0.0;
    }
    let clock: JsValue = doc.timeline().into();
    doc.get_animations()
        .iter()
        .filter_map(|a| a.dyn_into::<Animation>().ok())
        .filter(|a| a.play_state() == AnimationPlayState::Running)
        .filter(|a| a.timeline().is_some_and(|t| JsValue::from(t) == clock))
        .filter_map(|a| remaining_ms(&a))
        .filter(|&ms| ms > 0.0 && ms <= within)
        .fold(0.0, f64::max)
}

/// How long `a` still runs (ms, on the document's clock); `None` when it never ends.
fn remaining_ms(a: &Animation) -> Option<f64> {
    let timing = a.effect()?.get_computed_timing();
    let end = timing.get_end_time().filter(|e| e.is_finite())?;
    let at = timing.get_local_time().unwrap_or(0.0);
    let rate = a.playback_rate();
    match rate {
        r if r > 0.0 => Some((end - at) / r),
        r if r < 0.0 => Some(at / -r),
        _ => None,
    }
}

/// Resolves after `ms` on the page's timers (also the scan's wait for hydration).
pub(crate) async fn sleep(ms: f64) {
    let promise = js_sys::Promise::new(&mut |resolve, _| {
        let set = web_sys::window()
            .map(|w| w.set_timeout_with_callback_and_timeout_and_arguments_0(&resolve, ms.ceil() as i32));
        if !matches!(set, Some(Ok(_))) {
            // No timer to wait on: waiting must never hold the answer back for good.
            let _ = resolve.call0(&JsValue::NULL);
        }
    });
    let _ = wasm_bindgen_futures::JsFuture::from(promise).await;
}
