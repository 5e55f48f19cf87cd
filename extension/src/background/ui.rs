//! The background's side of the person's controls: answers the extension pages (popup,
//! options, prompt) and carries their requests to the hub (`ui.*`), opens a prompt window when
//! an agent asks for permission, and keeps the toolbar badge (`STOP`, `?`).
//!
//! STOP pressed while the hub is unreachable is kept (memory and `storage.local`) and sent as
//! soon as the hub is back, so the stop still reaches the store before any agent can act.

use js_sys::{Function, Promise, Reflect};
use nova_shared::protocol::{Envelope, Kind};
use nova_shared::ui::{Prompt, StopState, method};
use serde_json::{Value, json};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::{JsFuture, future_to_promise, spawn_local};

use super::state::{Failure, STATE, fail, from_js, obj, post, to_js};
use crate::bindings;

/// How long a page waits for the hub.
const HUB_TIMEOUT_MS: i32 = 5_000;
/// `storage.local` key of a STOP not yet delivered to the hub.
const PENDING_STOP_KEY: &str = "novaPendingStop";

/// Sends `method` to the hub and waits for the answer.
pub(super) async fn hub_request(method: &str, params: Value) -> Result<Value, Failure> {
    if STATE.with(|s| s.borrow().port.is_none()) {
        return Err(fail("host_not_connected", not_connected_reason()));
    }
    let id = STATE.with(|s| {
        let mut s = s.borrow_mut();
        s.next_request = s.next_request.wrapping_add(1).max(1);
        s.next_request
    });
    let answer = Promise::new(&mut |resolve, _| {
        STATE.with(|s| s.borrow_mut().hub_waiters.insert(id, resolve.clone()));
        let timeout = Closure::once_into_js(move || {
            if let Some(r) = STATE.with(|s| s.borrow_mut().hub_waiters.remove(&id)) {
                let _ = r.call1(&JsValue::NULL, &JsValue::UNDEFINED);
            }
        });
        bindings::set_timeout(timeout.unchecked_ref(), HUB_TIMEOUT_MS);
    });
    post(&Envelope::request(id, method, params));
    let reply = JsFuture::from(answer).await.unwrap_or(JsValue::UNDEFINED);
    if reply.is_undefined() {
        return Err(fail("host_not_connected", format!("the Nova host did not answer `{method}`")));
    }
    let env: Envelope = from_js(reply).map_err(|e| fail("internal", e))?;
    match env.error {
        Some(e) => Err((e.code, e.message)),
        None => Ok(env.result.unwrap_or(Value::Null)),
    }
}

/// A response from the hub to one of our requests.
pub(super) fn on_response(env: Envelope) {
    if env.kind != Kind::Res {
        return;
    }
    if let Some(resolve) = STATE.with(|s| s.borrow_mut().hub_waiters.remove(&env.id)) {
        let _ = resolve.call1(&JsValue::NULL, &to_js(&env));
    }
}

/// The port dropped: waiting pages get an error, the reason is kept for the popup.
pub(super) fn on_disconnect(why: &str) {
    let waiters: Vec<Function> = STATE.with(|s| {
        let mut s = s.borrow_mut();
        s.last_error = Some(why.to_owned());
        s.hub_waiters.drain().map(|(_, f)| f).collect()
    });
    for w in waiters {
        let _ = w.call1(&JsValue::NULL, &JsValue::UNDEFINED);
    }
}

/// Just (re)connected: deliver a STOP pressed meanwhile, refresh the badge.
pub(super) fn on_connect() {
    spawn_local(async {
        let queued = STATE.with(|s| s.borrow().pending_stop)
            || bindings::storage_get(PENDING_STOP_KEY).await.is_truthy();
        if queued {
            match hub_request(method::STOP, json!({})).await {
                Ok(_) => {
                    STATE.with(|s| s.borrow_mut().pending_stop = false);
                    bindings::storage_set(PENDING_STOP_KEY, &JsValue::FALSE).await;
                    bindings::log("queued STOP delivered to the host");
                }
                Err((_, m)) => bindings::log(&format!("queued STOP not delivered yet: {m}")),
            }
        }
        refresh_badge().await;
    });
}

/// Events the hub pushes to the extension.
pub(super) fn on_event(name: &str, params: Value) {
    match name {
        method::PROMPT_OPEN => {
            if let Ok(p) = serde_json::from_value::<Prompt>(params) {
                spawn_local(open_prompt(p));
            }
        }
        method::PROMPT_CLOSED => {
            let id = params.get("promptId").and_then(Value::as_str).unwrap_or_default().to_owned();
            spawn_local(async move {
                if let Some(w) = STATE.with(|s| s.borrow_mut().prompt_windows.remove(&id)) {
                    bindings::windows_remove(w).await;
                }
                refresh_badge().await;
            });
        }
        method::STOP_CHANGED => spawn_local(refresh_badge()),
        _ => {}
    }
}

async fn open_prompt(p: Prompt) {
    let url = bindings::runtime_url(&format!("prompt.html?id={}", p.prompt_id));
    let props = obj(&[
        ("url", url.into()),
        ("type", "popup".into()),
        ("width", 460.into()),
        ("height", 440.into()),
        ("focused", true.into()),
    ]);
    match bindings::windows_create(&props).await {
        Ok(w) => {
            STATE.with(|s| s.borrow_mut().prompt_windows.insert(p.prompt_id.clone(), w));
        }
        Err(e) => bindings::log(&format!("cannot open the prompt window: {}", bindings::error_text(&e))),
    }
    refresh_badge().await;
}

/// `STOP` (red) while stopped, `?` (amber) while a prompt waits, nothing otherwise.
async fn refresh_badge() {
    let status = hub_request(method::STATUS, json!({})).await.ok();
    let stopped =
        status.as_ref().and_then(|s| s.pointer("/stop/engaged")).and_then(Value::as_bool).unwrap_or(false)
            || STATE.with(|s| s.borrow().pending_stop);
    let asking = status
        .as_ref()
        .and_then(|s| s.get("prompts"))
        .and_then(Value::as_array)
        .is_some_and(|p| !p.is_empty());
    match (stopped, asking) {
        (true, _) => bindings::set_badge("STOP", "#c62828").await,
        (false, true) => bindings::set_badge("?", "#f9a825").await,
        _ => bindings::set_badge("", "#000000").await,
    }
}

/// Why the hub is not reachable, with what to do about it.
fn not_connected_reason() -> String {
    let last = STATE.with(|s| s.borrow().last_error.clone()).unwrap_or_default();
    let l = last.to_lowercase();
    if bindings::host_missing(&last) {
        "The Nova host is not installed for this browser: run `nova install` (or `cargo xtask run`)."
            .to_owned()
    } else if l.contains("forbidden") {
        "The Nova host does not allow this extension: run `nova install` again to update its manifest."
            .to_owned()
    } else if l.contains("exited") {
        "The Nova host exited; `nova doctor` shows why (logs in the Nova data dir).".to_owned()
    } else if last.is_empty() {
        "Connecting to the Nova host…".to_owned()
    } else {
        format!("The Nova host is not reachable ({last}); reconnecting.")
    }
}

/// Requests from the extension's pages: `{novaUi: 1, op, params}` -> `{ok, result}` or
/// `{ok: false, code, message}`.
#[wasm_bindgen]
pub fn bg_ui(msg: JsValue) -> Promise {
    future_to_promise(async move {
        let op = Reflect::get(&msg, &"op".into()).ok().and_then(|v| v.as_string()).unwrap_or_default();
        let params: Value =
            from_js(Reflect::get(&msg, &"params".into()).unwrap_or(JsValue::NULL)).unwrap_or(Value::Null);
        let params = if params.is_null() { json!({}) } else { params };
        let reply = match answer(&op, params).await {
            Ok(v) => json!({"ok": true, "result": v}),
            Err((code, message)) => json!({"ok": false, "code": code, "message": message}),
        };
        Ok(to_js(&reply))
    })
}

async fn answer(op: &str, params: Value) -> Result<Value, Failure> {
    match op {
        "status" => Ok(match hub_request(method::STATUS, json!({})).await {
            Ok(status) if STATE.with(|s| s.borrow().pending_stop) => {
                // Connected again with a STOP still queued: deliver it now.
                on_connect();
                json!({"connected": true, "status": status, "pendingStop": true})
            }
            Ok(status) => json!({"connected": true, "status": status}),
            Err((_, message)) => json!({
                "connected": false,
                "reason": message,
                "pendingStop": STATE.with(|s| s.borrow().pending_stop),
            }),
        }),
        "stop" => match hub_request(method::STOP, json!({})).await {
            Ok(v) => {
                spawn_local(refresh_badge());
                Ok(v)
            }
            Err(_) => {
                // Kept until the hub is back; no agent can act without the hub meanwhile.
                STATE.with(|s| s.borrow_mut().pending_stop = true);
                bindings::storage_set(PENDING_STOP_KEY, &JsValue::TRUE).await;
                spawn_local(refresh_badge());
                let stop = StopState { engaged: true, by: Some("popup".into()), at_ms: None };
                Ok(json!({"engaged": stop.engaged, "by": stop.by, "queued": true}))
            }
        },
        "resume" => {
            let queued = STATE.with(|s| s.borrow().pending_stop);
            let v = match hub_request(method::RESUME, json!({})).await {
                Ok(v) => v,
                // A STOP that never reached the hub is simply withdrawn.
                Err(_) if queued => json!({"engaged": false}),
                Err(e) => return Err(e),
            };
            STATE.with(|s| s.borrow_mut().pending_stop = false);
            bindings::storage_set(PENDING_STOP_KEY, &JsValue::FALSE).await;
            spawn_local(refresh_badge());
            Ok(v)
        }
        "settings" => hub_request(method::SETTINGS, json!({})).await,
        "settingsSet" => hub_request(method::SETTINGS_SET, params).await,
        "approvals" => hub_request(method::APPROVALS, json!({})).await,
        "report" => {
            // The hub makes the report and offers it once at a loopback URL; a tab opens it.
            let v = hub_request(method::REPORT, params).await?;
            let url = v["url"].as_str().unwrap_or_default();
            bindings::tabs_create(&obj(&[("url", url.into()), ("active", true.into())]))
                .await
                .map_err(|e| fail("tab_not_opened", format!("the report tab could not open: {e:?}")))?;
            Ok(v)
        }
        "answer" => {
            let v = hub_request(method::ANSWER, params).await?;
            spawn_local(refresh_badge());
            Ok(v)
        }
        other => Err(fail("unknown_op", format!("the background has no operation `{other}`"))),
    }
}
