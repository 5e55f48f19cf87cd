//! Collectors: `chat.*`, `form.*` and `overlay.*` facts, read through the adapter the host chose for the
//! page. Facts that describe a change ("an assistant turn was created", "a stream started",
//! "a form was submitted") are measured against a baseline taken when the watch is armed,
//! before the dispatch, and latched once seen.

use std::cell::RefCell;

use nova_shared::adapter::Adapter;
use nova_shared::cls::Observed;
use nova_shared::facts::FactKey;
use serde_json::{Value, json};
use wasm_bindgen::prelude::*;

use crate::dom;

/// Visible overlays: dialogs, modal layers, consent banners.
const OVERLAYS: &str = "[role=\"dialog\"]:visible, [role=\"alertdialog\"]:visible, dialog[open]:visible, \
                        [aria-modal=\"true\"]:visible, [id*=\"consent\" i]:visible, [class*=\"cookie-banner\" i]:visible";

/// Generic chat heuristics, used when the host sent no adapter.
fn generic() -> Adapter {
    Adapter {
        name: "generic-chat".into(),
        url_contains: String::new(),
        composer: Some(
            "textarea:visible, [contenteditable=\"true\"]:visible, [role=\"textbox\"]:visible".into(),
        ),
        send: None,
        messages: Some("[data-message-author-role], .msg, .message".into()),
        assistant: Some(
            "[data-message-author-role=\"assistant\"], .msg.assistant, .message.assistant".into(),
        ),
        streaming: Some("[aria-busy=\"true\"], .typing, .streaming".into()),
        error_banner: Some("[role=\"alert\"], .error-banner, .error".into()),
    }
}

#[derive(Default)]
struct State {
    adapter: Option<Adapter>,
    assistant_baseline: u32,
    stream_started: bool,
    submitted: bool,
    /// The banner already on screen when the watch was armed: not news.
    banner_baseline: Option<web_sys::Element>,
    listener: Option<Closure<dyn FnMut()>>,
}

thread_local! {
    static STATE: RefCell<State> = RefCell::new(State::default());
}

fn adapter() -> Adapter {
    STATE.with(|s| s.borrow().adapter.clone()).unwrap_or_else(generic)
}

fn count(sel: Option<&str>) -> u32 {
    sel.and_then(|s| dom::count(s).ok()).unwrap_or(0)
}

fn visible_banner(sel: Option<&str>) -> Option<web_sys::Element> {
    sel?.split(',').find_map(|one| {
        let el = dom::resolve(&format!("{}:visible", one.trim())).ok()?;
        (!dom::collapse(&el.text_content().unwrap_or_default()).is_empty()).then_some(el)
    })
}

fn stream_active(a: &Adapter) -> bool {
    a.streaming.as_deref().is_some_and(|s| {
        s.split(',').any(|one| dom::count(&format!("{}:visible", one.trim())).unwrap_or(0) > 0)
    })
}

/// Sets the adapter for checks (no baseline).
pub fn use_adapter(a: Option<Adapter>) {
    STATE.with(|s| {
        let mut s = s.borrow_mut();
        s.adapter = a;
        s.banner_baseline = None;
    });
}

/// Arms the change facts: takes baselines before the dispatch and listens for submits.
pub fn arm(a: Option<Adapter>) {
    use_adapter(a);
    let ad = adapter();
    let baseline = count(ad.assistant.as_deref());
    let banner = visible_banner(ad.error_banner.as_deref());
    STATE.with(|s| {
        let mut s = s.borrow_mut();
        s.assistant_baseline = baseline;
        s.banner_baseline = banner;
        s.stream_started = false;
        s.submitted = false;
        if s.listener.is_none()
            && let Ok(doc) = dom::document()
        {
            let on_submit = Closure::<dyn FnMut()>::new(|| STATE.with(|s| s.borrow_mut().submitted = true));
            let _ = doc.add_event_listener_with_callback_and_bool(
                "submit",
                on_submit.as_ref().unchecked_ref(),
                true,
            );
            s.listener = Some(on_submit);
        }
    });
}

/// Reads a `chat.*` or `form.*` fact.
pub fn read(key: &FactKey) -> Observed {
    let a = adapter();
    match (key.namespace.as_str(), key.path.as_str()) {
        ("chat", "composer") => {
            Ok(a.composer.as_deref().and_then(|c| dom::resolve(c).ok()).map_or(Value::Null, |e| json!(dom::describe(&e))))
        }
        ("chat", "messageCount") => Ok(json!(count(a.messages.as_deref()))),
        ("chat", "assistantTurnCreated") => {
            let baseline = STATE.with(|s| s.borrow().assistant_baseline);
            Ok(json!(count(a.assistant.as_deref()) > baseline))
        }
        ("chat", "streamActive") => Ok(json!(stream_active(&a))),
        ("chat", "streamActive.started") => {
            let now = stream_active(&a);
            Ok(json!(STATE.with(|s| {
                let mut s = s.borrow_mut();
                s.stream_started |= now;
                s.stream_started
            })))
        }
        ("chat", "errorBanner") => {
            // A banner that was already showing when the action started is not its outcome.
            let banner = visible_banner(a.error_banner.as_deref());
            let stale = STATE.with(|s| s.borrow().banner_baseline.clone());
            Ok(match banner {
                Some(b) if stale.as_ref() != Some(&b) => json!(dom::collapse(&b.text_content().unwrap_or_default())),
                _ => Value::Null,
            })
        }
        ("form", "submitted") => Ok(json!(STATE.with(|s| s.borrow().submitted))),
        ("form", "validationErrors") => Ok(json!(dom::count(
            "[aria-invalid=\"true\"]:visible, .field-error:visible, .invalid-feedback:visible, .error-message:visible"
        )
        .unwrap_or(0))),
        ("overlay", "present") => Ok(json!(dom::count(OVERLAYS).unwrap_or(0) > 0)),
        ("overlay", "count") => Ok(json!(dom::count(OVERLAYS).unwrap_or(0))),
        ("overlay", "text") => Ok(visible_banner(Some(OVERLAYS))
            .map_or(Value::Null, |e| json!(dom::collapse(&e.text_content().unwrap_or_default()))))
        ,
        (ns, path) => Err(format!("no collector for `{ns}.{path}`")),
    }
}
