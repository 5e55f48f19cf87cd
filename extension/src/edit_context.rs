//! Typing into an editor that takes its input through an EditContext (Chromium 121 and later):
//! CodeMirror 6 attaches one to its content element there (Prefect's JSON fields), and then
//! reads neither editing commands nor changes to the element's text, only the context's
//! `textupdate` events. Text typed the usual way shows on the page while the editor's own
//! value stays empty, and the form it belongs to refuses what the person seems to have typed.

use js_sys::{Array, Function, Object, Reflect};
use wasm_bindgen::{JsCast, JsValue};
use web_sys::Element;

/// The EditContext of the editing host `el` is or sits in, if it has one.
pub fn of(el: &Element) -> Option<JsValue> {
    let mut at = Some(el.clone());
    while let Some(e) = at {
        if let Some(ctx) = Reflect::get(&e, &"editContext".into()).ok().filter(JsValue::is_object) {
            return Some(ctx);
        }
        at = e.parent_element();
    }
    None
}

/// Types `text` into `ctx` as the browser does for a key press: the context's text and caret
/// are updated, then a `textupdate` event tells its editor. With `clear` the text replaces all
/// the context holds, else it goes at its end. Whether the event was delivered.
pub fn type_into(ctx: &JsValue, text: &str, clear: bool) -> bool {
    let held = Reflect::get(ctx, &"text".into()).ok().and_then(|t| t.as_string()).unwrap_or_default();
    let end = units(&held);
    let start = if clear { 0 } else { end };
    let caret = start + units(text);
    let (start, end, caret) = (JsValue::from(start), JsValue::from(end), JsValue::from(caret));
    let updated = call(ctx, "updateText", &[start.clone(), end.clone(), text.into()])
        && call(ctx, "updateSelection", &[caret.clone(), caret.clone()]);
    let init = Object::new();
    let fields = [
        ("text", JsValue::from(text)),
        ("updateRangeStart", start),
        ("updateRangeEnd", end),
        ("selectionStart", caret.clone()),
        ("selectionEnd", caret),
    ];
    for (name, value) in fields {
        let _ = Reflect::set(&init, &name.into(), &value);
    }
    let Some(event) = Reflect::get(&js_sys::global(), &"TextUpdateEvent".into())
        .ok()
        .and_then(|c| c.dyn_into::<Function>().ok())
        .and_then(|c| Reflect::construct(&c, &Array::of2(&"textupdate".into(), &init)).ok())
    else {
        return false;
    };
    updated && call(ctx, "dispatchEvent", &[event])
}

/// Length in UTF-16 code units, the context's measure.
fn units(s: &str) -> u32 {
    u32::try_from(s.encode_utf16().count()).unwrap_or(u32::MAX)
}

/// Calls `ctx.name(args...)`; whether it ran.
fn call(ctx: &JsValue, name: &str, args: &[JsValue]) -> bool {
    Reflect::get(ctx, &name.into())
        .ok()
        .and_then(|f| f.dyn_into::<Function>().ok())
        .is_some_and(|f| f.apply(ctx, &args.iter().collect::<Array>()).is_ok())
}
