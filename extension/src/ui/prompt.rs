//! The permission prompt window: one agent question (`prompt.html?id=…`) with Approve / Deny
//! and the time left. It closes itself once answered; the hub closes it on timeout.

use serde_json::{Value, json};
use wasm_bindgen_futures::spawn_local;

use super::kit::{add, by_id, call, clear, on_action, prompt_card, s, show};

pub(super) fn start() {
    let id = web_sys::window()
        .and_then(|w| w.location().search().ok())
        .and_then(|q| q.strip_prefix("?id=").map(str::to_owned))
        .unwrap_or_default();
    on_action(&by_id("prompt"), |action, id| {
        let decision = if action == "approve" { "approved" } else { "denied" };
        spawn_local(async move {
            match call("answer", json!({"promptId": id, "decision": decision})).await {
                Ok(_) => done(&format!("You {decision} this request. This window closes now.")),
                Err(e) => done(&format!("Could not answer: {e}")),
            }
            let close = wasm_bindgen::closure::Closure::once_into_js(|| {
                if let Some(w) = web_sys::window() {
                    let _ = w.close();
                }
            });
            crate::bindings::set_timeout(wasm_bindgen::JsCast::unchecked_ref(&close), 1_200);
        })
    });
    spawn_local(render(id.clone()));
    super::kit::every(1_000, move || spawn_local(render(id.clone())));
}

fn done(text: &str) {
    let box_ = by_id("prompt");
    clear(&box_);
    add(&box_, "p", "done", text);
    if let Some(b) = super::kit::doc().body() {
        let _ = b.set_attribute("data-answered", "true");
    }
}

async fn render(id: String) {
    if super::kit::doc().body().and_then(|b| b.get_attribute("data-answered")).is_some() {
        return;
    }
    let status = match call("status", json!({})).await {
        Ok(v) => v,
        Err(e) => return done(&format!("Cannot reach Nova: {e}")),
    };
    let prompts = status.pointer("/status/prompts").and_then(Value::as_array).cloned().unwrap_or_default();
    let box_ = by_id("prompt");
    clear(&box_);
    match prompts.iter().find(|p| s(p, "promptId") == id) {
        Some(p) => {
            prompt_card(&box_, p, js_sys::Date::now() as i64);
        }
        None => {
            add(&box_, "p", "done", "This request is no longer waiting (answered elsewhere or timed out).");
        }
    }
    show(&box_, true);
    if let Some(b) = super::kit::doc().body() {
        let _ = b.set_attribute("data-loaded", "true");
    }
}
