//! The person's pages: the toolbar popup, the options page and the permission prompt. The
//! markup is static (`extension/static/*.html`); everything they show and do is here. They talk
//! to the background worker only (`chrome.runtime.sendMessage`, see `background::ui`), which
//! talks to the hub.
//!
//! Page text is always set with `textContent`, never parsed as HTML: titles, URLs and agent
//! messages come from web pages and agents.
//!
//! `kit` holds what the three pages share (asking the background, building elements, prompt
//! cards); `popup`, `options` and `prompt` are the pages.

mod kit;
mod options;
mod popup;
mod prompt;

use wasm_bindgen::prelude::*;

use crate::bindings;

/// Entry point of every page: `ui.js` calls it with the page's `data-page`.
#[wasm_bindgen]
pub fn ui_main(page: String) {
    match page.as_str() {
        "popup" => popup::start(),
        "options" => options::start(),
        "prompt" => prompt::start(),
        other => bindings::log(&format!("unknown page `{other}`")),
    }
}
