//! What the person's pages share: asking the background, finding and building elements (text
//! only, never HTML), timers, and the permission-prompt card.

use js_sys::Reflect;
use serde_json::Value;
use wasm_bindgen::prelude::*;
use web_sys::{Document, Element, Event};

use crate::bindings;

/// Asks the background: `op` with `params`; the result or the error message.
pub(super) async fn call(op: &str, params: Value) -> Result<Value, String> {
    let msg = crate::background::to_js(&serde_json::json!({"novaUi": 1, "op": op, "params": params}));
    let reply = bindings::runtime_send_message(&msg).await.map_err(|e| bindings::error_text(&e))?;
    let reply: Value = serde_wasm_bindgen::from_value(reply).map_err(|e| e.to_string())?;
    if reply.get("ok").and_then(Value::as_bool) == Some(true) {
        Ok(reply.get("result").cloned().unwrap_or(Value::Null))
    } else {
        Err(reply.get("message").and_then(Value::as_str).unwrap_or("the extension did not answer").to_owned())
    }
}

pub(super) fn doc() -> Document {
    web_sys::window().and_then(|w| w.document()).expect("extension pages have a document")
}

/// The element with `id` (the static markup has them all).
pub(super) fn by_id(id: &str) -> Element {
    doc().get_element_by_id(id).unwrap_or_else(|| {
        bindings::log(&format!("page markup has no #{id}"));
        doc().create_element("div").expect("div")
    })
}

/// A new child of `parent`: `<tag class=…>text</tag>`.
pub(super) fn add(parent: &Element, tag: &str, class: &str, text: &str) -> Element {
    let el = doc().create_element(tag).expect("element");
    if !class.is_empty() {
        el.set_class_name(class);
    }
    if !text.is_empty() {
        el.set_text_content(Some(text));
    }
    let _ = parent.append_child(&el);
    el
}

/// A new child of `parent` whose text may hold `code` spans in backticks (the gate table's
/// wording): each span becomes a `<code>` element; the rest stays plain text.
pub(super) fn add_with_code(parent: &Element, tag: &str, class: &str, text: &str) -> Element {
    let el = add(parent, tag, class, "");
    for (i, part) in text.split('`').enumerate() {
        if part.is_empty() {
            continue;
        }
        if i % 2 == 1 {
            add(&el, "code", "", part);
        } else {
            let _ = el.append_with_str_1(part);
        }
    }
    el
}

/// Removes every child.
pub(super) fn clear(el: &Element) {
    el.set_text_content(None);
}

/// Shows or hides.
pub(super) fn show(el: &Element, visible: bool) {
    if visible {
        let _ = el.remove_attribute("hidden");
    } else {
        let _ = el.set_attribute("hidden", "");
    }
}

/// Listens for `event` on `el` for the page's lifetime.
pub(super) fn on(el: &Element, event: &str, f: impl FnMut(Event) + 'static) {
    let cb = Closure::<dyn FnMut(Event)>::new(f);
    let _ = el.add_event_listener_with_callback(event, cb.as_ref().unchecked_ref());
    cb.forget();
}

/// Clicks on `[data-action]` descendants of `container`: `f(action, data-id)`. One listener
/// for content that is redrawn.
pub(super) fn on_action(container: &Element, f: impl Fn(String, String) + 'static) {
    on(container, "click", move |e| {
        let Some(target) = e.target().and_then(|t| t.dyn_into::<Element>().ok()) else { return };
        let Ok(Some(el)) = target.closest("[data-action]") else { return };
        let action = el.get_attribute("data-action").unwrap_or_default();
        let id = el.get_attribute("data-id").unwrap_or_default();
        f(action, id);
    });
}

/// Runs `f` every `ms` milliseconds.
pub(super) fn every(ms: i32, f: impl FnMut() + 'static) {
    let cb = Closure::<dyn FnMut()>::new(f);
    bindings::set_interval(cb.as_ref().unchecked_ref(), ms);
    cb.forget();
}

/// `HH:MM:SS` in local time.
pub(super) fn clock(ms: i64) -> String {
    let d = js_sys::Date::new(&JsValue::from_f64(ms as f64));
    format!("{:02}:{:02}:{:02}", d.get_hours(), d.get_minutes(), d.get_seconds())
}

/// `YYYY-MM-DD HH:MM:SS` in local time.
pub(super) fn date_time(ms: i64) -> String {
    let d = js_sys::Date::new(&JsValue::from_f64(ms as f64));
    format!("{}-{:02}-{:02} {}", d.get_full_year(), d.get_month() + 1, d.get_date(), clock(ms))
}

/// The value of an input or select.
pub(super) fn value(el: &Element) -> String {
    Reflect::get(el, &"value".into()).ok().and_then(|v| v.as_string()).unwrap_or_default()
}

/// Sets the value of an input or select.
pub(super) fn set_value(el: &Element, v: &str) {
    let _ = Reflect::set(el, &"value".into(), &v.into());
}

/// Whether a checkbox is checked.
pub(super) fn checked(el: &Element) -> bool {
    Reflect::get(el, &"checked".into()).ok().and_then(|v| v.as_bool()).unwrap_or(false)
}

/// Sets a checkbox.
pub(super) fn set_checked(el: &Element, v: bool) {
    let _ = Reflect::set(el, &"checked".into(), &v.into());
}

/// A string field of a JSON object.
pub(super) fn s<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or_default()
}

/// An integer field of a JSON object.
pub(super) fn n(v: &Value, key: &str) -> i64 {
    v.get(key).and_then(Value::as_i64).unwrap_or(0)
}

/// A prompt as a card with Approve / Deny (`data-action` approve|deny, `data-id` prompt id).
pub(super) fn prompt_card(parent: &Element, p: &Value, now_ms: i64) -> Element {
    let card = add(parent, "div", "prompt", "");
    let _ = card.set_attribute("data-prompt", s(p, "promptId"));
    add(&card, "div", "prompt-title", s(p, "title"));
    add(&card, "p", "prompt-message", s(p, "message"));
    let mut who = format!("Asked by {}", s(p, "agentId"));
    match (p.get("pageUrl").and_then(Value::as_str), p.get("targetId").and_then(Value::as_str)) {
        (Some(url), _) => who.push_str(&format!(" about {url}")),
        (None, Some(t)) => who.push_str(&format!(" about tab {t}")),
        _ => {}
    }
    let left = (n(p, "expiresAtMs") - now_ms).max(0) / 1000;
    who.push_str(&format!(" · {left} s left"));
    add(&card, "div", "muted", &who);
    let buttons = add(&card, "div", "buttons", "");
    for (action, label, class) in [("approve", "Approve", "approve"), ("deny", "Deny", "deny")] {
        let b = add(&buttons, "button", class, label);
        let _ = b.set_attribute("data-action", action);
        let _ = b.set_attribute("data-id", s(p, "promptId"));
    }
    card
}
