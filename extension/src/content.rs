//! The content-script entry point: requests from the background arrive here as
//! `{nova, method, params}` and are answered with `{ok}` or `{err: {code, message}}`.

use nova_shared::protocol::method;
use nova_shared::reason;
use serde::Serialize;
use serde::de::DeserializeOwned;
use wasm_bindgen::prelude::*;

use crate::actions;
use crate::background::to_js;
use crate::dom::{Failure, fail};
use crate::perceive;

fn params<T: DeserializeOwned>(msg: &JsValue) -> Result<T, Failure> {
    let p = js_sys::Reflect::get(msg, &"params".into()).unwrap_or(JsValue::NULL);
    serde_wasm_bindgen::from_value(p).map_err(|e| fail(reason::BAD_PARAMS, e.to_string()))
}

fn out<T: Serialize>(r: Result<T, Failure>) -> Result<JsValue, Failure> {
    r.map(|v| to_js(&v))
}

/// Handles one request from the background; never throws.
#[wasm_bindgen]
pub fn content_handle(msg: JsValue) -> JsValue {
    let name = js_sys::Reflect::get(&msg, &"method".into())
        .ok()
        .and_then(|m| m.as_string())
        .unwrap_or_default();
    let result = match name.as_str() {
        method::PERCEIVE => params(&msg).and_then(|p| out(perceive::perceive(&p))),
        method::READ_TEXT => params(&msg).and_then(|p| out(perceive::read_text(&p))),
        method::CLICK => params(&msg).and_then(|p| out(actions::click(&p))),
        method::TYPE => params(&msg).and_then(|p| out(actions::type_text(&p))),
        other => Err(fail(
            reason::UNKNOWN_METHOD,
            format!("the page script has no method `{other}`"),
        )),
    };
    actions::envelope(result)
}
