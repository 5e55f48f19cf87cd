//! The worker's state (the native port, navigation epochs, waiters, armed watches) and the small
//! helpers every part of the worker shares: failures, JS conversion, posting to the host.

use std::cell::RefCell;
use std::collections::HashMap;

use js_sys::{Function, Object, Reflect};
use nova_shared::protocol::{self, Envelope};
use serde::Serialize;
use wasm_bindgen::prelude::*;

use crate::bindings::{self, Port};

/// First reconnect delay after the port drops.
pub(super) const BACKOFF_START_MS: i32 = 250;
/// Longest reconnect delay.
pub(super) const BACKOFF_MAX_MS: i32 = 10_000;

/// A failure: reason code and message.
pub(super) type Failure = (String, String);

pub(super) fn fail(code: &str, message: impl Into<String>) -> Failure {
    (code.to_owned(), message.into())
}

#[derive(Default)]
pub(super) struct State {
    pub(super) port: Option<Port>,
    /// Which connection to the host `port` is (one more at each connect): an answer goes back
    /// only on the connection its request came on.
    pub(super) connection: u32,
    pub(super) backoff_ms: i32,
    pub(super) epochs: HashMap<i32, u32>,
    pub(super) chunks: protocol::Reassembler,
    /// Navigation waiters: tab, the tab's nav epoch when the wait began, resolver.
    pub(super) nav_waiters: Vec<(i32, u32, Function)>,
    /// Waiters for the next top-level commit: tab, epoch when the wait began, resolver.
    pub(super) commit_waiters: Vec<(i32, u32, Function)>,
    /// Watches armed by `page.act`, by watch id.
    pub(super) watches: HashMap<String, Armed>,
    /// Documents (tab, frame) that came with a CSP that forbids WebAssembly.
    pub(super) strict_csp: HashMap<(i32, protocol::FrameId), bool>,
    /// The tabs whose top document's script has answered, with the navigation epoch it answered
    /// in: an action to it in the same epoch needs no question first (`readyMs`).
    pub(super) listening: HashMap<i32, u32>,
    /// Our own requests to the hub (from the extension pages): id -> resolver.
    pub(super) hub_waiters: HashMap<u32, Function>,
    pub(super) next_request: u32,
    /// Why the port last dropped.
    pub(super) last_error: Option<String>,
    /// STOP pressed while the hub was unreachable.
    pub(super) pending_stop: bool,
    /// Open permission-prompt windows: prompt id -> window id.
    pub(super) prompt_windows: HashMap<String, i32>,
}

thread_local! {
    pub(super) static STATE: RefCell<State> = RefCell::new(State { backoff_ms: BACKOFF_START_MS, ..Default::default() });
}

/// Serialises to a plain JS object (maps as objects, not `Map`).
pub fn to_js<T: Serialize + ?Sized>(value: &T) -> JsValue {
    value.serialize(&serde_wasm_bindgen::Serializer::json_compatible()).unwrap_or(JsValue::NULL)
}

pub(super) fn from_js<T: serde::de::DeserializeOwned>(value: JsValue) -> Result<T, String> {
    serde_wasm_bindgen::from_value(value).map_err(|e| e.to_string())
}

pub(super) fn post(env: &Envelope) {
    STATE.with(|s| {
        if let Some(port) = &s.borrow().port
            && let Err(e) = port.post_message(&to_js(env))
        {
            bindings::log(&format!("cannot post to host: {}", bindings::error_text(&e)));
        }
    });
}

pub(super) fn obj(pairs: &[(&str, JsValue)]) -> JsValue {
    let o = Object::new();
    for (k, v) in pairs {
        let _ = Reflect::set(&o, &(*k).into(), v);
    }
    o.into()
}

/// A watch armed by `page.act`.
#[derive(Clone, Copy)]
pub(super) struct Armed {
    /// The tab.
    pub tab: i32,
    /// The tab's navigation epoch at dispatch.
    pub epoch: u32,
    /// When the watch began (ms since the epoch).
    pub started: f64,
    /// The action began a navigation away from the top document: the verdict comes from the
    /// next document, so nothing is asked of the one being left.
    pub leaving: bool,
}
