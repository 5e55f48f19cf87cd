//! Every `chrome.*` binding the extension uses, in one place. Firefox exposes the same
//! promise-based APIs under `chrome` in Manifest V3; where Chromium and Firefox differ, the
//! difference is handled here (docs/browsers.md lists them all):
//! - a native port's error: `port.error` (Firefox) vs `chrome.runtime.lastError` (Chromium),
//!   [`port_error`]; a missing host: "No such native application" vs "Specified native
//!   messaging host not found", [`host_missing`];
//! - a load replaced by a newer navigation: Firefox reports NS_BINDING_ABORTED, also for a new
//!   tab's initial about:blank, [`superseded_load`];
//! - a document that went away under a message: different wordings, and Firefox may leave the
//!   message unanswered or refuse injection between two documents, [`document_gone`];
//! - frame ids: Firefox's do not fit 32 bits (`protocol::FrameId` is 64-bit), passed as numbers.

use js_sys::{Function, Promise, Reflect};
use wasm_bindgen::prelude::*;

#[wasm_bindgen]
extern "C" {
    /// A `runtime.Port`.
    pub type Port;
    /// A `chrome.events.Event`.
    pub type ChromeEvent;

    /// `chrome.runtime.connectNative`: a port to the native host (starts it).
    #[wasm_bindgen(js_namespace = ["chrome", "runtime"], js_name = connectNative)]
    pub fn connect_native(application: &str) -> Port;

    /// `port.postMessage`; throws when the port is closed.
    #[wasm_bindgen(method, js_name = postMessage, catch)]
    pub fn post_message(this: &Port, message: &JsValue) -> Result<(), JsValue>;

    /// `port.onMessage`.
    #[wasm_bindgen(method, getter, js_name = onMessage)]
    pub fn on_message(this: &Port) -> ChromeEvent;

    /// `port.onDisconnect`.
    #[wasm_bindgen(method, getter, js_name = onDisconnect)]
    pub fn on_disconnect(this: &Port) -> ChromeEvent;

    /// `port.disconnect`.
    #[wasm_bindgen(method)]
    pub fn disconnect(this: &Port);

    /// `event.addListener`.
    #[wasm_bindgen(method, js_name = addListener)]
    pub fn add_listener(this: &ChromeEvent, listener: &Function);

    /// `chrome.runtime.getManifest`.
    #[wasm_bindgen(js_namespace = ["chrome", "runtime"], js_name = getManifest)]
    pub fn get_manifest() -> JsValue;

    #[wasm_bindgen(js_namespace = ["chrome", "tabs"], js_name = query)]
    fn tabs_query_raw(query: &JsValue) -> Promise;

    #[wasm_bindgen(js_namespace = ["chrome", "tabs"], js_name = get)]
    fn tabs_get_raw(tab_id: i32) -> Promise;

    #[wasm_bindgen(js_namespace = ["chrome", "tabs"], js_name = update)]
    fn tabs_update_raw(tab_id: i32, props: &JsValue) -> Promise;

    #[wasm_bindgen(js_namespace = ["chrome", "tabs"], js_name = create)]
    fn tabs_create_raw(props: &JsValue) -> Promise;

    #[wasm_bindgen(js_namespace = ["chrome", "tabs"], js_name = sendMessage)]
    fn tabs_send_message_raw(tab_id: i32, message: &JsValue, options: &JsValue) -> Promise;

    #[wasm_bindgen(js_namespace = ["chrome", "tabs"], js_name = captureVisibleTab)]
    fn capture_visible_tab_raw(window_id: i32, options: &JsValue) -> Promise;

    #[wasm_bindgen(js_namespace = ["chrome", "webNavigation"], js_name = getAllFrames)]
    fn get_all_frames_raw(details: &JsValue) -> Promise;

    #[wasm_bindgen(js_namespace = ["chrome", "scripting"], js_name = executeScript)]
    fn execute_script_raw(injection: &JsValue) -> Promise;

    /// The global `setTimeout`.
    #[wasm_bindgen(js_name = setTimeout)]
    pub fn set_timeout(handler: &Function, ms: i32) -> JsValue;

    /// The global `setInterval`.
    #[wasm_bindgen(js_name = setInterval)]
    pub fn set_interval(handler: &Function, ms: i32) -> JsValue;

    #[wasm_bindgen(js_namespace = ["chrome", "runtime"], js_name = sendMessage)]
    fn runtime_send_message_raw(message: &JsValue) -> Promise;

    /// `chrome.runtime.getURL`: the URL of a file of the extension.
    #[wasm_bindgen(js_namespace = ["chrome", "runtime"], js_name = getURL)]
    pub fn runtime_url(path: &str) -> String;

    #[wasm_bindgen(js_namespace = ["chrome", "windows"], js_name = create)]
    fn windows_create_raw(props: &JsValue) -> Promise;

    #[wasm_bindgen(js_namespace = ["chrome", "windows"], js_name = remove)]
    fn windows_remove_raw(window_id: i32) -> Promise;

    #[wasm_bindgen(js_namespace = ["chrome", "action"], js_name = setBadgeText)]
    fn set_badge_text_raw(details: &JsValue) -> Promise;

    #[wasm_bindgen(js_namespace = ["chrome", "action"], js_name = setBadgeBackgroundColor)]
    fn set_badge_color_raw(details: &JsValue) -> Promise;

    #[wasm_bindgen(js_namespace = ["chrome", "storage", "local"], js_name = get)]
    fn storage_get_raw(key: &str) -> Promise;

    #[wasm_bindgen(js_namespace = ["chrome", "storage", "local"], js_name = set)]
    fn storage_set_raw(items: &JsValue) -> Promise;
}

/// `chrome.runtime.sendMessage` (extension pages to the background).
pub async fn runtime_send_message(message: &JsValue) -> Result<JsValue, JsValue> {
    wait(runtime_send_message_raw(message)).await
}

/// `chrome.windows.create`; the new window's id.
pub async fn windows_create(props: &JsValue) -> Result<i32, JsValue> {
    let w = wait(windows_create_raw(props)).await?;
    Ok(Reflect::get(&w, &"id".into())?.as_f64().unwrap_or(-1.0) as i32)
}

/// `chrome.windows.remove` (a window already closed is not an error).
pub async fn windows_remove(window_id: i32) {
    let _ = wait(windows_remove_raw(window_id)).await;
}

/// The toolbar badge: `text` on `color` (`""` clears it).
pub async fn set_badge(text: &str, color: &str) {
    let details = js_sys::Object::new();
    let _ = Reflect::set(&details, &"text".into(), &text.into());
    let _ = wait(set_badge_text_raw(&details)).await;
    let details = js_sys::Object::new();
    let _ = Reflect::set(&details, &"color".into(), &color.into());
    let _ = wait(set_badge_color_raw(&details)).await;
}

/// `chrome.storage.local` read of one key (undefined when absent or on error).
pub async fn storage_get(key: &str) -> JsValue {
    match wait(storage_get_raw(key)).await {
        Ok(items) => Reflect::get(&items, &key.into()).unwrap_or(JsValue::UNDEFINED),
        Err(_) => JsValue::UNDEFINED,
    }
}

/// `chrome.storage.local` write of one key.
pub async fn storage_set(key: &str, value: &JsValue) {
    let items = js_sys::Object::new();
    let _ = Reflect::set(&items, &key.into(), value);
    let _ = wait(storage_set_raw(&items)).await;
}

async fn wait(p: Promise) -> Result<JsValue, JsValue> {
    wasm_bindgen_futures::JsFuture::from(p).await
}

/// `chrome.tabs.query`.
pub async fn tabs_query(query: &JsValue) -> Result<JsValue, JsValue> {
    wait(tabs_query_raw(query)).await
}

/// `chrome.tabs.get`.
pub async fn tabs_get(tab_id: i32) -> Result<JsValue, JsValue> {
    wait(tabs_get_raw(tab_id)).await
}

/// `chrome.tabs.update`.
pub async fn tabs_update(tab_id: i32, props: &JsValue) -> Result<JsValue, JsValue> {
    wait(tabs_update_raw(tab_id, props)).await
}

/// `chrome.tabs.create`.
pub async fn tabs_create(props: &JsValue) -> Result<JsValue, JsValue> {
    wait(tabs_create_raw(props)).await
}

/// `chrome.tabs.sendMessage` to one frame.
pub async fn tabs_send_message(
    tab_id: i32,
    message: &JsValue,
    frame_id: nova_shared::protocol::FrameId,
) -> Result<JsValue, JsValue> {
    let options = js_sys::Object::new();
    let _ = Reflect::set(&options, &"frameId".into(), &(frame_id as f64).into());
    wait(tabs_send_message_raw(tab_id, message, &options)).await
}

/// `chrome.tabs.captureVisibleTab`.
pub async fn capture_visible_tab(window_id: i32, options: &JsValue) -> Result<JsValue, JsValue> {
    wait(capture_visible_tab_raw(window_id, options)).await
}

/// `chrome.webNavigation.getAllFrames` for a tab.
pub async fn get_all_frames(tab_id: i32) -> Result<JsValue, JsValue> {
    let details = js_sys::Object::new();
    let _ = Reflect::set(&details, &"tabId".into(), &tab_id.into());
    wait(get_all_frames_raw(&details)).await
}

/// `chrome.scripting.executeScript` with files, in all frames.
pub async fn inject_files(tab_id: i32, files: &[&str]) -> Result<JsValue, JsValue> {
    let target = js_sys::Object::new();
    let _ = Reflect::set(&target, &"tabId".into(), &tab_id.into());
    let _ = Reflect::set(&target, &"allFrames".into(), &true.into());
    let injection = js_sys::Object::new();
    let _ = Reflect::set(&injection, &"target".into(), &target);
    let list: js_sys::Array = files.iter().map(|f| JsValue::from_str(f)).collect();
    let _ = Reflect::set(&injection, &"files".into(), &list);
    wait(execute_script_raw(&injection)).await
}

/// The error a port disconnected with: `port.error` (Firefox) or `chrome.runtime.lastError`
/// (Chromium), as text.
pub fn port_error(port: &Port) -> Option<String> {
    let firefox = Reflect::get(port, &"error".into()).ok().filter(|v| !v.is_undefined() && !v.is_null());
    let chromium = Reflect::get(&js_sys::global(), &"chrome".into())
        .and_then(|c| Reflect::get(&c, &"runtime".into()))
        .and_then(|r| Reflect::get(&r, &"lastError".into()))
        .ok()
        .filter(|v| !v.is_undefined() && !v.is_null());
    firefox.or(chromium).map(|e| error_text(&e))
}

/// Whether a `webNavigation.onErrorOccurred` detail is a load aborted because another
/// navigation replaced it: Firefox reports `Error code 2152398850` (NS_BINDING_ABORTED), also for
/// the initial about:blank of a tab sent elsewhere. (Chromium's `net::ERR_ABORTED` also covers
/// downloads and 204 responses, which do end a navigation, so it stays an error.)
pub fn superseded_load(detail: &JsValue) -> bool {
    let error = Reflect::get(detail, &"error".into()).ok().and_then(|e| e.as_string()).unwrap_or_default();
    error.contains("2152398850")
}

/// Whether a native port error means the host is not registered for this browser.
pub fn host_missing(error: &str) -> bool {
    let e = error.to_lowercase();
    e.contains("native messaging host not found") || e.contains("no such native application")
}

/// Whether a messaging error means the document went away (unloaded, navigating) rather than
/// that the page refused: Chromium says the port or channel "closed" / "Receiving end does not
/// exist"; Firefox says the message manager disconnected or the actor was destroyed, and
/// between two documents of a navigation refuses injection with "Missing host permission for
/// the tab".
pub fn document_gone(message: &str) -> bool {
    [
        "closed",
        "Receiving end does not exist",
        "Message manager disconnected",
        "destroyed before",
        "Missing host permission for the tab",
    ]
    .iter()
    .any(|m| message.contains(m))
}

/// The message of a JS error value.
pub fn error_text(e: &JsValue) -> String {
    Reflect::get(e, &"message".into())
        .ok()
        .and_then(|m| m.as_string())
        .or_else(|| e.as_string())
        .unwrap_or_else(|| format!("{e:?}"))
}

/// Whether this runs in Firefox (its manifest carries `browser_specific_settings` and the
/// runtime exposes `browser`).
pub fn is_firefox() -> bool {
    Reflect::has(&js_sys::global(), &"browser".into()).unwrap_or(false)
}

/// The user agent string.
pub fn user_agent() -> String {
    Reflect::get(&js_sys::global(), &"navigator".into())
        .and_then(|n| Reflect::get(&n, &"userAgent".into()))
        .ok()
        .and_then(|v| v.as_string())
        .unwrap_or_default()
}

/// Logs to the console (visible as INFO:CONSOLE with `--enable-logging=stderr`).
pub fn log(message: &str) {
    web_sys::console::log_1(&JsValue::from_str(&format!("[nova] {message}")));
}

/// A response read whole by [`fetch_with_session`].
pub struct Fetched {
    /// HTTP status.
    pub status: u16,
    /// The URL after redirects (empty when the browser does not say).
    pub final_url: String,
    /// The `Content-Type` header.
    pub content_type: String,
    /// The body as text.
    pub body: String,
}

/// `fetch(url)` from the worker with the person's cookies (`credentials: include`), following
/// redirects, read whole as text.
pub async fn fetch_with_session(url: &str) -> Result<Fetched, JsValue> {
    let global: JsValue = js_sys::global().into();
    let init = js_sys::Object::new();
    Reflect::set(&init, &"credentials".into(), &"include".into())?;
    Reflect::set(&init, &"redirect".into(), &"follow".into())?;
    let response = call_async(&global, "fetch", &[url.into(), init.into()]).await?;
    let number = |name: &str| Reflect::get(&response, &name.into()).ok().and_then(|v| v.as_f64());
    let status = number("status").unwrap_or(0.0) as u16;
    let final_url =
        Reflect::get(&response, &"url".into()).ok().and_then(|v| v.as_string()).unwrap_or_default();
    let headers = Reflect::get(&response, &"headers".into())?;
    let get: Function = Reflect::get(&headers, &"get".into())?.dyn_into()?;
    let content_type = get.call1(&headers, &"content-type".into())?.as_string().unwrap_or_default();
    let body = call_async(&response, "text", &[]).await?.as_string().unwrap_or_default();
    Ok(Fetched { status, final_url, content_type, body })
}

/// A JPEG (quality 0.7) of an image given as a data URL, its longer side at most `max` pixels,
/// made in the worker with `createImageBitmap` and an `OffscreenCanvas`.
pub async fn jpeg_thumbnail(data_url: &str, max: u32) -> Result<Vec<u8>, JsValue> {
    let global: JsValue = js_sys::global().into();
    let response = call_async(&global, "fetch", &[data_url.into()]).await?;
    let blob = call_async(&response, "blob", &[]).await?;
    let bitmap = call_async(&global, "createImageBitmap", &[blob]).await?;
    let size = |name: &str| Reflect::get(&bitmap, &name.into()).ok().and_then(|v| v.as_f64()).unwrap_or(1.0);
    let (w, h) = (size("width"), size("height"));
    let scale = (f64::from(max) / w.max(h)).min(1.0);
    let (tw, th) = ((w * scale).round().max(1.0), (h * scale).round().max(1.0));
    let ctor: Function = Reflect::get(&global, &"OffscreenCanvas".into())?.dyn_into()?;
    let canvas = Reflect::construct(&ctor, &js_sys::Array::of2(&tw.into(), &th.into()))?;
    let get_context: Function = Reflect::get(&canvas, &"getContext".into())?.dyn_into()?;
    let ctx = get_context.call1(&canvas, &"2d".into())?;
    let draw: Function = Reflect::get(&ctx, &"drawImage".into())?.dyn_into()?;
    draw.apply(&ctx, &js_sys::Array::of5(&bitmap, &0.into(), &0.into(), &tw.into(), &th.into()))?;
    let options = js_sys::Object::new();
    Reflect::set(&options, &"type".into(), &"image/jpeg".into())?;
    Reflect::set(&options, &"quality".into(), &0.7.into())?;
    let out = call_async(&canvas, "convertToBlob", &[options.into()]).await?;
    let buffer = call_async(&out, "arrayBuffer", &[]).await?;
    Ok(js_sys::Uint8Array::new(&buffer).to_vec())
}

/// Calls `obj.name(args...)` and awaits the promise it returns.
async fn call_async(obj: &JsValue, name: &str, args: &[JsValue]) -> Result<JsValue, JsValue> {
    let f: Function = Reflect::get(obj, &name.into())?.dyn_into()?;
    let r = f.apply(obj, &args.iter().collect::<js_sys::Array>())?;
    wasm_bindgen_futures::JsFuture::from(Promise::from(r)).await
}

/// `window.navigation`, the Navigation API (Chrome 102+, Firefox 147+), where the page's
/// window has it.
pub fn navigation() -> Option<web_sys::EventTarget> {
    let w = web_sys::window()?;
    Reflect::get(&w, &"navigation".into()).ok().filter(JsValue::is_object).map(JsCast::unchecked_into)
}

/// The destination URL of a `navigate` event that leaves the document: not a fragment change,
/// not a same-document navigation, not a download.
pub fn navigate_destination(ev: &web_sys::Event) -> Option<String> {
    let get = |o: &JsValue, k: &str| Reflect::get(o, &k.into()).unwrap_or(JsValue::UNDEFINED);
    let dest = get(ev, "destination");
    let stays = get(ev, "hashChange").is_truthy()
        || get(&dest, "sameDocument").is_truthy()
        || !get(ev, "downloadRequest").is_null_or_undefined();
    if stays {
        return None;
    }
    get(&dest, "url").as_string()
}
