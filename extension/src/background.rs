//! The background service worker (event page in Firefox): keeps the native-messaging port to
//! the hub open (reconnecting with backoff), tracks tabs and navigation epochs, and serves the
//! hub's requests, forwarding page work to the content script of the target tab.
//!
//! `state` holds the worker's state and the helpers all its parts share (failures, JS
//! conversion, posting to the host); `ui` serves the person's pages (popup, options, prompts);
//! `sign_in` keeps the HTTP sign-ins the browser asks for in a dialog no page sees.

use std::collections::BTreeMap;

use js_sys::{Function, Promise, Reflect};
use nova_shared::protocol::{
    self, Envelope, FrameInfo, FramesParams, Hello, Kind, NavigateParams, NavigateResult, ScreenshotParams,
    ScreenshotResult, TabInfo, method,
};
use nova_shared::reason;
use serde::Serialize;
use serde_json::Value;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::{JsFuture, spawn_local};

use crate::bindings;
use crate::timing;

mod sign_in;
mod state;
mod ui;

pub use state::to_js;
use state::{BACKOFF_MAX_MS, BACKOFF_START_MS, Failure, STATE, fail, from_js, obj, post};
pub use ui::bg_ui;

/// Entry point, called by `background.js` once the module is initialised.
#[wasm_bindgen]
pub fn bg_start() {
    bindings::log("background started");
    connect();
}

/// Browser events forwarded by `background.js` (listeners are registered there synchronously so
/// they also wake a stopped worker).
#[wasm_bindgen]
pub fn bg_event(name: String, detail: JsValue) {
    let tab_id = Reflect::get(&detail, &"tabId".into()).ok().and_then(|v| v.as_f64()).map(|v| v as i32);
    let top_frame = Reflect::get(&detail, &"frameId".into()).ok().and_then(|v| v.as_f64()) == Some(0.0);
    match name.as_str() {
        "committed" if top_frame => {
            if let Some(tab) = tab_id {
                sign_in::committed(tab);
                let woken: Vec<Function> = STATE.with(|s| {
                    let mut s = s.borrow_mut();
                    *s.epochs.entry(tab).or_insert(0) += 1;
                    let (mine, rest) = s.commit_waiters.drain(..).partition(|(t, _, _)| *t == tab);
                    s.commit_waiters = rest;
                    mine.into_iter().map(|(_, _, f)| f).collect()
                });
                for f in woken {
                    let _ = f.call1(&JsValue::NULL, &"committed".into());
                }
            }
            spawn_local(send_tabs());
        }
        // A load superseded by a newer navigation (Firefox aborts the initial about:blank when
        // a tab is sent elsewhere) is not the outcome of the navigation being waited for.
        "navError" if bindings::superseded_load(&detail) => {}
        "completed" | "navError" | "sameDoc" if top_frame => {
            let outcome = match name.as_str() {
                "navError" => {
                    let e = Reflect::get(&detail, &"error".into()).ok().and_then(|v| v.as_string());
                    if let Some(tab) = tab_id {
                        sign_in::navigation_failed(tab, e.as_deref().unwrap_or_default());
                    }
                    format!("error:{}", e.unwrap_or_default())
                }
                _ => "completed".to_owned(),
            };
            if let Some(tab) = tab_id {
                resolve_waiters(tab, &outcome, name == "completed");
            }
            spawn_local(send_tabs());
        }
        "removed" => {
            if let Some(tab) = tab_id {
                sign_in::closed(tab);
                STATE.with(|s| {
                    let mut s = s.borrow_mut();
                    s.epochs.remove(&tab);
                    s.strict_csp.retain(|(t, _), _| *t != tab);
                    s.listening.remove(&tab);
                });
                resolve_waiters(tab, "error:tab closed", false);
            }
            spawn_local(send_tabs());
        }
        "headers" => {
            let frame = Reflect::get(&detail, &"frameId".into())
                .ok()
                .and_then(|v| v.as_f64())
                .map(|v| v as protocol::FrameId);
            if let (Some(tab), Some(frame)) = (tab_id, frame) {
                let strict = csp_headers(&detail).iter().any(|p| nova_shared::csp::forbids_wasm(p));
                STATE.with(|s| s.borrow_mut().strict_csp.insert((tab, frame), strict));
            }
            // Firefox fires no `onAuthRequired` for a document: its headers say it asks.
            if top_frame && let Some(tab) = sign_in::from_headers(&detail) {
                resolve_waiters(tab, SIGN_IN_ASKED, false);
            }
        }
        "tabs" => spawn_local(send_tabs()),
        // The document a tab is opening asks for an HTTP sign-in: its navigation waits on the
        // person (or was given up, headless), and a navigation waited for ends now.
        "signIn" => {
            if let Some(tab) = sign_in::asked(&detail) {
                resolve_waiters(tab, SIGN_IN_ASKED, false);
            }
        }
        "signInDone" => sign_in::done(&detail),
        _ => {}
    }
}

/// The outcome a navigation waiter gets when the document asks for an HTTP sign-in.
const SIGN_IN_ASKED: &str = "signIn";
/// How long a navigation whose document asks for a sign-in waits to see whether the browser
/// gave up on its dialog (headless Chromium does so at once) before saying the tab waits on it.
const SIGN_IN_GIVE_UP_MS: i32 = 300;
/// How long a navigation to an address carrying a user name and password waits for the
/// browser to answer its site's ask with them, before saying the tab waits on a dialog.
const SIGN_IN_FROM_ADDRESS_MS: f64 = 10_000.0;

/// The CSP header values (enforced and report-only: a report-only violation still fires an
/// event at the page) of a `webRequest.onHeadersReceived` detail.
fn csp_headers(detail: &JsValue) -> Vec<String> {
    let headers = Reflect::get(detail, &"responseHeaders".into()).unwrap_or(JsValue::UNDEFINED);
    js_sys::Array::from(&headers)
        .iter()
        .filter(|h| {
            field::<String>(h, "name").is_some_and(|n| {
                let n = n.to_ascii_lowercase();
                n == "content-security-policy" || n == "content-security-policy-report-only"
            })
        })
        .filter_map(|h| field::<String>(&h, "value"))
        .collect()
}

/// Resolves the tab's navigation waiters. With `only_after_commit`, only waiters that saw a
/// navigation commit since they began (a late `completed` of the previous page must not end a
/// wait for the next one).
fn resolve_waiters(tab: i32, outcome: &str, only_after_commit: bool) {
    let waiters: Vec<Function> = STATE.with(|s| {
        let mut s = s.borrow_mut();
        let current = s.epochs.get(&tab).copied().unwrap_or(0);
        let (mine, rest): (Vec<_>, Vec<_>) = s
            .nav_waiters
            .drain(..)
            .partition(|(t, epoch0, _)| *t == tab && (!only_after_commit || current > *epoch0));
        s.nav_waiters = rest;
        mine.into_iter().map(|(_, _, f)| f).collect()
    });
    for f in waiters {
        let _ = f.call1(&JsValue::NULL, &JsValue::from_str(outcome));
    }
}

fn connect() {
    let port = bindings::connect_native(nova_shared::NATIVE_HOST_NAME);
    // Every message is answered on the connection it came on, or not at all.
    let connection = STATE.with(|s| {
        let mut s = s.borrow_mut();
        s.connection = s.connection.wrapping_add(1);
        s.connection
    });
    let on_message = Closure::<dyn FnMut(JsValue)>::new(move |msg: JsValue| {
        STATE.with(|s| s.borrow_mut().backoff_ms = BACKOFF_START_MS);
        spawn_local(on_host_message(msg, connection));
    });
    port.on_message().add_listener(on_message.as_ref().unchecked_ref());
    on_message.forget();
    let on_disconnect = Closure::<dyn FnMut(JsValue)>::new(|p: JsValue| {
        let why = bindings::port_error(p.unchecked_ref()).unwrap_or_else(|| "closed".into());
        let delay = STATE.with(|s| {
            let mut s = s.borrow_mut();
            s.port = None;
            let d = s.backoff_ms;
            s.backoff_ms = (d * 2).min(BACKOFF_MAX_MS);
            d
        });
        bindings::log(&format!("host disconnected ({why}); reconnecting in {delay} ms"));
        ui::on_disconnect(&why);
        let retry = Closure::once_into_js(connect);
        bindings::set_timeout(retry.unchecked_ref(), delay);
    });
    port.on_disconnect().add_listener(on_disconnect.as_ref().unchecked_ref());
    on_disconnect.forget();
    STATE.with(|s| s.borrow_mut().port = Some(port));
    let hello = Hello {
        extension_version: manifest_version(),
        browser: if bindings::is_firefox() { "firefox" } else { "chromium" }.into(),
        user_agent: bindings::user_agent(),
    };
    post(&Envelope::event(method::HELLO, serde_json::to_value(hello).unwrap_or_default()));
    spawn_local(send_tabs());
    ui::on_connect();
}

fn manifest_version() -> String {
    Reflect::get(&bindings::get_manifest(), &"version".into())
        .ok()
        .and_then(|v| v.as_string())
        .unwrap_or_default()
}

async fn send_tabs() {
    if STATE.with(|s| s.borrow().port.is_none()) {
        return;
    }
    if let Ok(tabs) = list_tabs().await {
        post(&Envelope::event(method::TABS_CHANGED, serde_json::to_value(tabs).unwrap_or_default()));
    }
}

/// One message from the host on connection number `connection`.
async fn on_host_message(msg: JsValue, connection: u32) {
    let started = timing::now();
    let env: Envelope = match from_js(msg) {
        Ok(env) => env,
        Err(e) => {
            bindings::log(&format!("malformed frame from host: {e}"));
            return;
        }
    };
    let env = match env.kind {
        Kind::Chunk => match take_chunk(env) {
            Some(whole) => whole,
            None => return,
        },
        _ => env,
    };
    match env.kind {
        Kind::Res => return ui::on_response(env),
        Kind::Evt => {
            return ui::on_event(env.method.as_deref().unwrap_or(""), env.params.unwrap_or(Value::Null));
        }
        _ => {}
    }
    let id = env.id;
    let mut stages = BTreeMap::new();
    let name = env.method.as_deref().unwrap_or("");
    let mut reply = match handle(name, env.params.unwrap_or(Value::Null), &mut stages).await {
        Ok(v) => Envelope::ok(id, v),
        Err((code, message)) => Envelope::err(id, &code, message),
    };
    stages.insert("backgroundMs".into(), timing::now() - started);
    reply.timing = Some(stages);
    // The host that asked is gone (a new one may be connected): the answer is dropped, never
    // given to a host that did not ask.
    if STATE.with(|s| s.borrow().connection) != connection {
        bindings::log(&format!("dropped the answer to `{name}`: the host that asked disconnected"));
        return;
    }
    post(&reply);
}

/// Collects chunk frames; returns the whole envelope once the last piece arrived.
fn take_chunk(env: Envelope) -> Option<Envelope> {
    let chunk = env.chunk?;
    match STATE.with(|s| s.borrow_mut().chunks.push(env.id, chunk))? {
        Ok(whole) => Some(whole),
        Err(e) => {
            bindings::log(&format!("dropped a chunked frame: {e}"));
            None
        }
    }
}

/// Answers one request from the hub; the stages of a page request go into `stages`.
async fn handle(name: &str, params: Value, stages: &mut BTreeMap<String, f64>) -> Result<Value, Failure> {
    fn parse<T: serde::de::DeserializeOwned>(p: Value) -> Result<T, Failure> {
        serde_json::from_value(p).map_err(|e| fail(reason::BAD_PARAMS, e.to_string()))
    }
    fn out<T: Serialize>(v: T) -> Result<Value, Failure> {
        serde_json::to_value(v).map_err(|e| fail(reason::INTERNAL, e.to_string()))
    }
    match name {
        method::PING => Ok(params),
        method::TABS_LIST => out(list_tabs().await?),
        method::NAVIGATE => out(navigate(parse(params)?).await?),
        method::SCREENSHOT => out(screenshot(parse(params)?).await?),
        method::FRAMES => {
            let p: FramesParams = parse(params)?;
            out(frames(resolve_tab(&p.target).await?).await?)
        }
        method::FETCH => out(fetch(parse(params)?).await?),
        method::PERCEIVE
        | method::READ_TEXT
        | method::CLICK
        | method::TYPE
        | method::CHECK
        | method::ACT
        | method::SCAN
        | method::ROUTE
        | method::UPLOAD
        | method::DISMISS
        | method::PKS_PROBE
        | method::PKS_STEP
        | method::ORDER
        | method::SUBMITTER
        | method::REV => {
            let target = params.get("target").and_then(Value::as_str).unwrap_or("active").to_owned();
            let tab = resolve_tab(&target).await?;
            // The browser's sign-in dialog holds the tab (Firefox's page answers nothing while
            // it shows): say so now instead of when the page has not answered.
            if let Some(asked) = sign_in::document_waiting(tab) {
                return Err(fail(
                    reason::HTTP_SIGN_IN,
                    format!("the tab is opening a page that asks for a sign-in: {}", asked.question()),
                ));
            }
            let mut params = params;
            let epoch = epoch_of(tab);
            if matches!(name, method::CHECK | method::ACT) {
                params["navEpoch"] = epoch.into();
            }
            if name == method::ACT
                && let Some(id) = params.get("watchId").and_then(Value::as_str)
            {
                let armed = state::Armed { tab, epoch, started: js_sys::Date::now(), leaving: false };
                STATE.with(|s| s.borrow_mut().watches.insert(id.to_owned(), armed));
            }
            let top_frame = params.get("frameId").and_then(Value::as_u64).unwrap_or(0) == 0;
            let watch_id = params.get("watchId").and_then(Value::as_str).map(str::to_owned);
            // `{"click": {...}}`, `{"type": {...}}` or `{"select": {...}}`: its kind and selector
            // are kept for the report of a guarded action whose answer is lost.
            let action = (name == method::ACT)
                .then(|| params.get("action").and_then(Value::as_object))
                .flatten()
                .and_then(|a| a.iter().next())
                .map(|(kind, p)| Taken {
                    kind: kind.clone(),
                    selector: p.get("selector").and_then(Value::as_str).unwrap_or_default().to_owned(),
                })
                .unwrap_or_default();
            let asked_at = js_sys::Date::now();
            let (report, page_stages) = match to_page(tab, name, params).await {
                Err((code, message))
                    if code == reason::GONE_AFTER_DISPATCH && name == method::ACT && top_frame =>
                {
                    match taken_then_left(tab, epoch, action).await {
                        Some(report) => (report, BTreeMap::new()),
                        None => return Err((code, message)),
                    }
                }
                answered => answered?,
            };
            stages.extend(page_stages);
            let mut report = report;
            if name == method::PERCEIVE
                && let Some(asked) = sign_in::waiting(tab)
            {
                report["httpSignIn"] = serde_json::to_value(asked).unwrap_or_default();
            }
            let leaving = top_frame && report.get("navigationStarted").is_some_and(Value::is_string);
            if matches!(name, method::CLICK | method::TYPE) && leaving {
                return Ok(follow(tab, epoch, asked_at, report).await);
            }
            if let (method::ACT, true, Some(id)) = (name, leaving, watch_id) {
                STATE.with(|s| s.borrow_mut().watches.get_mut(&id).map(|w| w.leaving = true));
            }
            Ok(report)
        }
        method::WATCH => watch(params).await,
        other => Err(fail(reason::UNKNOWN_METHOD, format!("the extension has no method `{other}`"))),
    }
}

/// `site.fetch`: GET with the user's session, from the extension (host permissions cover every
/// site). Used to read sitemaps and link lists for URL units.
async fn fetch(p: protocol::FetchParams) -> Result<protocol::FetchResult, Failure> {
    if !(p.url.starts_with("http://") || p.url.starts_with("https://")) {
        return Err(fail(reason::BAD_PARAMS, format!("only http(s) URLs can be fetched, not `{}`", p.url)));
    }
    let r = bindings::fetch_with_session(&p.url).await.map_err(js_err(reason::NAVIGATION_FAILED))?;
    let (status, content_type, mut body) = (r.status, r.content_type, r.body);
    let final_url = if r.final_url.is_empty() { p.url.clone() } else { r.final_url };
    let max = p.max_bytes as usize;
    if body.len() > max {
        let mut cut = max;
        while !body.is_char_boundary(cut) {
            cut -= 1;
        }
        body.truncate(cut);
    }
    Ok(protocol::FetchResult { status, final_url, content_type, body })
}

fn js_err(code: &str) -> impl Fn(JsValue) -> Failure + '_ {
    move |e| fail(code, bindings::error_text(&e))
}

fn field<T: serde::de::DeserializeOwned>(obj: &JsValue, name: &str) -> Option<T> {
    Reflect::get(obj, &name.into()).ok().and_then(|v| serde_wasm_bindgen::from_value(v).ok())
}

/// Tabs agents may work in: those of normal windows, without Nova's own pages (popup opened as
/// a tab, options, permission prompts), which are the person's side and never a target.
async fn work_tabs() -> Result<Vec<JsValue>, Failure> {
    let all = bindings::tabs_query(&obj(&[("windowType", "normal".into())]))
        .await
        .map_err(js_err(reason::INTERNAL))?;
    let own = bindings::runtime_url("");
    Ok(js_sys::Array::from(&all)
        .iter()
        .filter(|t| !field::<String>(t, "url").is_some_and(|u| u.starts_with(&own)))
        .collect())
}

/// The tab the person looks at: the active tab of the last focused window, else (a prompt
/// window or Nova's own page has the focus) the work tab used last.
async fn active_tab_id() -> Option<i32> {
    let tabs = work_tabs().await.ok()?;
    let q = obj(&[("active", true.into()), ("lastFocusedWindow", true.into())]);
    let focused: Option<i32> =
        bindings::tabs_query(&q).await.ok().and_then(|f| field(&js_sys::Array::from(&f).get(0), "id"));
    if let Some(id) = focused
        && tabs.iter().any(|t| field::<i32>(t, "id") == Some(id))
    {
        return Some(id);
    }
    let last = |t: &JsValue| field::<f64>(t, "lastAccessed").unwrap_or(0.0);
    let active_first = |t: &JsValue| field::<bool>(t, "active").unwrap_or(false);
    tabs.iter()
        .max_by(|a, b| {
            (active_first(a), last(a))
                .partial_cmp(&(active_first(b), last(b)))
                .unwrap_or(std::cmp::Ordering::Equal)
        })
        .and_then(|t| field(t, "id"))
}

async fn list_tabs() -> Result<Vec<TabInfo>, Failure> {
    let all = work_tabs().await?;
    let active = active_tab_id().await;
    let epochs = STATE.with(|s| s.borrow().epochs.clone());
    Ok(all
        .iter()
        .filter_map(|t| {
            let id: i32 = field(t, "id")?;
            Some(TabInfo {
                target_id: id.to_string(),
                window_id: field(t, "windowId").unwrap_or(-1),
                url: field(t, "url").unwrap_or_default(),
                title: field(t, "title").unwrap_or_default(),
                active: Some(id) == active,
                nav_epoch: epochs.get(&id).copied().unwrap_or(0),
            })
        })
        .collect())
}

async fn resolve_tab(target: &str) -> Result<i32, Failure> {
    let id = if target == "active" { active_tab_id().await } else { target.parse().ok() };
    let id = id.ok_or_else(|| fail(reason::TARGET_NOT_FOUND, format!("no tab `{target}`")))?;
    bindings::tabs_get(id).await.map_err(|_| fail(reason::TARGET_NOT_FOUND, format!("no tab `{target}`")))?;
    Ok(id)
}

/// Resolves when the tab's top frame finishes loading (or fails, or `timeout_ms` passes):
/// `completed`, `error:<text>` or `timeout`.
fn nav_waiter(tab: i32, since_epoch: u32, timeout_ms: u32) -> Promise {
    Promise::new(&mut |resolve, _reject| {
        STATE.with(|s| s.borrow_mut().nav_waiters.push((tab, since_epoch, resolve.clone())));
        let timeout = Closure::once_into_js(move || {
            let _ = resolve.call1(&JsValue::NULL, &"timeout".into());
        });
        bindings::set_timeout(timeout.unchecked_ref(), i32::try_from(timeout_ms).unwrap_or(i32::MAX));
    })
}

async fn navigate(p: NavigateParams) -> Result<NavigateResult, Failure> {
    let started = js_sys::Date::now();
    let (tab, url_before, epoch0, outcome) = if p.new_tab {
        let created = bindings::tabs_create(&obj(&[("url", p.url.as_str().into()), ("active", true.into())]))
            .await
            .map_err(js_err(reason::NAVIGATION_FAILED))?;
        let tab: i32 = field(&created, "id").ok_or_else(|| fail(reason::INTERNAL, "new tab has no id"))?;
        let outcome = wasm_bindgen_futures::JsFuture::from(nav_waiter(tab, 0, p.timeout_ms)).await;
        (tab, String::new(), 0, outcome)
    } else {
        let tab = resolve_tab(&p.target).await?;
        let before = bindings::tabs_get(tab).await.map_err(js_err(reason::TARGET_NOT_FOUND))?;
        let epoch0 = epoch_of(tab);
        let waiter = nav_waiter(tab, epoch0, p.timeout_ms);
        sign_in::navigation_begins(tab);
        bindings::tabs_update(tab, &obj(&[("url", p.url.as_str().into())]))
            .await
            .map_err(js_err(reason::NAVIGATION_FAILED))?;
        let outcome = wasm_bindgen_futures::JsFuture::from(waiter).await;
        (tab, field(&before, "url").unwrap_or_default(), epoch0, outcome)
    };
    let mut outcome = outcome.ok().and_then(|v| v.as_string()).unwrap_or_default();
    // The error of a load this navigation replaced comes first (see `next_document`).
    if outcome.starts_with("error:") && still_loading(tab, Some(&p.url)).await {
        let left = (f64::from(p.timeout_ms) - (js_sys::Date::now() - started)).max(0.0) as u32;
        outcome = next_document(tab, epoch0, left, Some(&p.url)).await;
    }
    if outcome == SIGN_IN_ASKED && sign_in::in_address(&p.url) && sign_in::asks(tab) < 2 {
        // The person put the sign-in in the address: the browser answers the site's ask with
        // it, however long the page takes after; only another ask (the sign-in refused), or no
        // page in a while, means a dialog waits.
        let left =
            (f64::from(p.timeout_ms) - (js_sys::Date::now() - started)).clamp(0.0, SIGN_IN_FROM_ADDRESS_MS);
        let next = next_document(tab, epoch0, left as u32, Some(&p.url)).await;
        if next != "timeout" {
            outcome = next;
        }
    }
    if outcome == SIGN_IN_ASKED || outcome.starts_with("error:") {
        if outcome == SIGN_IN_ASKED {
            // A moment for the browser to give up on a dialog it cannot show (headless
            // Chromium), or to answer with a sign-in it kept.
            sleep_ms(SIGN_IN_GIVE_UP_MS).await;
        }
        // The site asked again after the browser answered with the address's sign-in.
        let refused = if sign_in::in_address(&p.url) && sign_in::asks(tab) >= 2 {
            "the user name and password in the address were refused; "
        } else {
            ""
        };
        if let Some(asked) = sign_in::document_waiting(tab) {
            return Err(fail(
                reason::HTTP_SIGN_IN,
                format!("{} did not open: {refused}{}", p.url, asked.question()),
            ));
        }
        if let Some(asked) = sign_in::gave_up(tab, started) {
            let error = outcome.strip_prefix("error:").filter(|e| !e.is_empty());
            return Err(fail(
                reason::HTTP_SIGN_IN,
                format!(
                    "{} did not open: {refused}{} asks for a user name and password, and the \
                     browser gave up on it without showing its dialog ({}a headless browser shows \
                     none): the page does not open without the person's sign-in. {}",
                    p.url,
                    asked.who(),
                    error.map(|e| format!("{e}; ")).unwrap_or_default(),
                    nova_shared::sign_in::ASK_THE_PERSON
                ),
            ));
        }
        if outcome == SIGN_IN_ASKED {
            // The browser answered it with a sign-in it kept: the navigation goes on.
            let left = (f64::from(p.timeout_ms) - (js_sys::Date::now() - started)).max(0.0) as u32;
            outcome = next_document(tab, epoch0, left, Some(&p.url)).await;
        }
    }
    if let Some(error) = outcome.strip_prefix("error:") {
        return Err(fail(reason::NAVIGATION_FAILED, format!("navigation to {} failed: {error}", p.url)));
    }
    let after = bindings::tabs_get(tab).await.map_err(js_err(reason::TARGET_NOT_FOUND))?;
    Ok(NavigateResult {
        target_id: tab.to_string(),
        url_before,
        url: field(&after, "url").unwrap_or_default(),
        title: field(&after, "title").unwrap_or_default(),
        nav_epoch: STATE.with(|s| s.borrow().epochs.get(&tab).copied().unwrap_or(0)),
        load_complete: outcome == "completed",
    })
}

/// Waits (at most `ms`) until the tab has loaded a document after epoch `epoch0`, also when it
/// already has: `completed`, `error:<text>` or `timeout`, as [`nav_waiter`].
///
/// Chromium reports a load that a newer navigation replaced (one the page had started, still
/// waiting on its server) as aborted, and that error comes before the newer navigation's end:
/// an error while the tab is still loading (`bound_for`, when given; else any address) was the
/// replaced load's, and is passed over (at most [`REPLACED_LOADS_MAX`] times).
async fn next_document(tab: i32, epoch0: u32, ms: u32, bound_for: Option<&str>) -> String {
    let started = js_sys::Date::now();
    let mut passed = 0;
    loop {
        let left = (f64::from(ms) - (js_sys::Date::now() - started)).max(0.0) as u32;
        let waiter = nav_waiter(tab, epoch0, left);
        let loaded_already = epoch_of(tab) != epoch0 && tab_status(tab).await.as_deref() == Some("complete");
        if loaded_already {
            return "completed".to_owned();
        }
        let outcome = wasm_bindgen_futures::JsFuture::from(waiter)
            .await
            .ok()
            .and_then(|v| v.as_string())
            .unwrap_or_default();
        if passed == REPLACED_LOADS_MAX
            || !outcome.starts_with("error:")
            || !still_loading(tab, bound_for).await
        {
            return outcome;
        }
        passed += 1;
    }
}

/// Waits (at most `ms`) until the tab has committed a document after epoch `epoch0`. The
/// verdict of a watch does not wait for the new document's images and scripts to load: its
/// page module answers as soon as it runs.
async fn next_commit(tab: i32, epoch0: u32, ms: f64) {
    if epoch_of(tab) != epoch0 {
        return;
    }
    race_commit(tab, epoch0, ms, None).await;
}

/// Races `work` (when given) against the tab committing a document after epoch `since` and a
/// timer of `ms`: `work`'s value, `"committed"`, or undefined when the timer won.
async fn race_commit(tab: i32, since: u32, ms: f64, work: Option<Promise>) -> JsValue {
    let committed = Promise::new(&mut |resolve, _| {
        STATE.with(|s| s.borrow_mut().commit_waiters.push((tab, since, resolve)));
    });
    let timer = Promise::new(&mut |resolve, _| {
        bindings::set_timeout(&resolve, ms.min(f64::from(i32::MAX)) as i32);
    });
    // An answer that is already there wins over a commit seen at the same time.
    let racers = js_sys::Array::new();
    if let Some(w) = work {
        racers.push(&w);
    }
    racers.push(&timer);
    racers.push(&committed);
    let raced = JsFuture::from(Promise::race(&racers)).await.unwrap_or(JsValue::UNDEFINED);
    STATE.with(|s| s.borrow_mut().commit_waiters.retain(|(t, e, _)| !(*t == tab && *e == since)));
    raced
}

/// How long a raw click or keystroke that began a navigation waits for the new document.
const FOLLOW_MS: u32 = 10_000;

/// A raw click or keystroke began a navigation away from its document: waits (at most
/// [`FOLLOW_MS`]) for the new document to load, then reports where the action landed
/// (`urlAfter`, `navigated`, `loadComplete`, `navEpoch`). A navigation that never commits (a
/// download, a 204, an error) leaves `urlAfter` at the tab's URL and `navigated` false; one
/// whose page asks for an HTTP sign-in (or did, since the action was asked for at `since`, and
/// the browser gave up) says who asks (`httpSignIn`).
async fn follow(tab: i32, epoch0: u32, since: f64, mut report: Value) -> Value {
    let outcome = next_document(tab, epoch0, FOLLOW_MS, None).await;
    if outcome == SIGN_IN_ASKED {
        // As for a navigation: a moment for the browser to give up on its dialog or answer it.
        sleep_ms(SIGN_IN_GIVE_UP_MS).await;
    }
    if let Some(asked) = sign_in::document_waiting(tab).or_else(|| sign_in::gave_up(tab, since)) {
        report["httpSignIn"] = serde_json::to_value(asked).unwrap_or_default();
    }
    let navigated = epoch_of(tab) != epoch0;
    let url = tab_url(tab).await;
    if !url.is_empty() {
        report["urlAfter"] = url.into();
    }
    if navigated {
        report["navigated"] = true.into();
        report["loadComplete"] = (outcome == "completed").into();
        report["navEpoch"] = epoch_of(tab).into();
    }
    report
}

async fn screenshot(p: ScreenshotParams) -> Result<ScreenshotResult, Failure> {
    let tab = resolve_tab(&p.target).await?;
    let info = bindings::tabs_get(tab).await.map_err(js_err(reason::TARGET_NOT_FOUND))?;
    if field::<bool>(&info, "active") != Some(true) {
        bindings::tabs_update(tab, &obj(&[("active", true.into())]))
            .await
            .map_err(js_err(reason::CAPTURE_FAILED))?;
    }
    let window: i32 = field(&info, "windowId").unwrap_or(-2);
    let mut options = vec![("format", JsValue::from_str(&p.format))];
    if p.format == "jpeg" {
        options.push(("quality", p.quality.into()));
    }
    let options = obj(&options);
    // A capture right after a navigation or activation can fail while the compositor has no
    // frame yet, and Chromium allows two captures a second: wait and retry (three attempts).
    let mut attempt = 0;
    let data = loop {
        match bindings::capture_visible_tab(window, &options).await {
            Ok(d) => break d,
            Err(e) if attempt < 2 => {
                let text = bindings::error_text(&e);
                bindings::log(&format!("capture failed ({text}); retrying"));
                sleep_ms(if text.contains("MAX_CAPTURE_VISIBLE_TAB_CALLS_PER_SECOND") { 600 } else { 200 })
                    .await;
                attempt += 1;
            }
            Err(e) => return Err(js_err(reason::CAPTURE_FAILED)(e)),
        }
    };
    let data_url = data.as_string().unwrap_or_default();
    let thumbnail_data_url = match p.thumbnail_max_px {
        Some(max) => match thumbnail(&data_url, max).await {
            Ok(t) => Some(t),
            Err(e) => {
                bindings::log(&format!("thumbnail failed: {}", bindings::error_text(&e)));
                None
            }
        },
        None => None,
    };
    Ok(ScreenshotResult {
        target_id: tab.to_string(),
        url: field(&info, "url").unwrap_or_default(),
        data_url,
        thumbnail_data_url,
    })
}

/// A JPEG thumbnail of a captured image, its longer side at most `max` pixels.
async fn thumbnail(data_url: &str, max: u32) -> Result<String, JsValue> {
    let bytes = bindings::jpeg_thumbnail(data_url, max).await?;
    use base64::Engine as _;
    Ok(format!("data:image/jpeg;base64,{}", base64::engine::general_purpose::STANDARD.encode(bytes)))
}

async fn sleep_ms(ms: i32) {
    let p = Promise::new(&mut |resolve, _| {
        bindings::set_timeout(&resolve, ms);
    });
    let _ = wasm_bindgen_futures::JsFuture::from(p).await;
}

fn epoch_of(tab: i32) -> u32 {
    STATE.with(|s| s.borrow().epochs.get(&tab).copied().unwrap_or(0))
}

/// How long after its window a watched page may take to answer before it counts as a page that
/// stopped answering (`timeout`). The page answers as its window ends, but on a busy machine its
/// timers and messages run late: with two seconds, a silent page in Firefox on a loaded two-core
/// machine read `timeout` instead of `no_signal_yet`. The hub waits 10 s past the window.
const WATCH_ANSWER_SLACK_MS: f64 = 5_000.0;

/// The verdict of a watch armed by `page.act`. When the action navigated, the old document
/// (and its watch) is gone: the watch continues on the new document for what is left of the
/// window, and the result says `navigated`.
async fn watch(mut params: Value) -> Result<Value, Failure> {
    let target = params.get("target").and_then(Value::as_str).unwrap_or("active").to_owned();
    let id = params.get("watchId").and_then(Value::as_str).unwrap_or_default().to_owned();
    let window = params.pointer("/watch/windowMs").and_then(Value::as_f64).unwrap_or(5000.0);
    let armed = STATE.with(|s| s.borrow_mut().watches.remove(&id));
    let tab = match armed {
        Some(a) => a.tab,
        None => resolve_tab(&target).await?,
    };
    let (epoch0, started) =
        armed.map(|a| (a.epoch, a.started)).unwrap_or((epoch_of(tab), js_sys::Date::now()));
    // The action is taking the tab to another document: ask that one, not the one being left
    // (which may never answer). A navigation that never commits leaves the old document to
    // answer at the window's end.
    if armed.is_some_and(|a| a.leaving) {
        let remaining = (window - (js_sys::Date::now() - started)).max(0.0);
        next_commit(tab, epoch0, remaining).await;
    }
    let mut navigated = false;
    loop {
        navigated |= epoch_of(tab) != epoch0;
        let remaining = (window - (js_sys::Date::now() - started)).max(0.0);
        params["navEpoch"] = epoch_of(tab).into();
        params["watch"]["windowMs"] = (remaining.max(1.0) as u32).into();
        match to_page_within(tab, method::WATCH, params.clone(), remaining + WATCH_ANSWER_SLACK_MS).await {
            Ok(mut v) => {
                // The commit event of a navigation may be processed while the watch runs.
                navigated |= epoch_of(tab) != epoch0;
                // Nothing proven: the browser's own sign-in dialog may be what the outcome
                // waits on, where the page shows no dialog.
                if v.get("outcome").and_then(Value::as_str) == Some("pending")
                    && v.get("asking").is_none_or(Value::is_null)
                    && let Some(asked) = sign_in::waiting(tab)
                {
                    v["asking"] = asked.question().into();
                }
                if navigated {
                    v["navigated"] = true.into();
                }
                return Ok(v);
            }
            // Firefox holds the page's timers while its sign-in dialog waits (shown or not):
            // the watch cannot end, and nothing was proven; the dialog is what waits.
            Err((code, _)) if code == reason::TIMEOUT && sign_in::waiting(tab).is_some() => {
                let pending = protocol::WatchResult {
                    outcome: nova_shared::cls::Outcome::Pending,
                    failed_assertions: Vec::new(),
                    held_assertions: Vec::new(),
                    elapsed_ms: (js_sys::Date::now() - started).max(0.0) as u32,
                    navigated: navigated || epoch_of(tab) != epoch0,
                    success_seen: false,
                    url: None,
                    asking: sign_in::waiting(tab).map(|a| a.question()),
                };
                return serde_json::to_value(pending)
                    .map_err(|e| (reason::INTERNAL.to_owned(), format!("the watch's answer: {e}")));
            }
            Err((code, message)) if code == reason::TARGET_NOT_FOUND && message.contains("has no frame") => {
                return Err((
                    reason::FRAME_DESTROYED.to_owned(),
                    format!("the watched frame went away: {message}"),
                ));
            }
            Err((code, message)) => {
                let gone = bindings::document_gone(&message);
                if !gone || remaining < 50.0 {
                    return Err((code, message));
                }
                // The document went away under the watch: follow the navigation if one is
                // under way, then watch the new document.
                next_document(tab, epoch0, remaining as u32, None).await;
                if epoch_of(tab) == epoch0 {
                    return Err((
                        reason::FRAME_DESTROYED.to_owned(),
                        format!("the watched document went away: {message}"),
                    ));
                }
                navigated = true;
            }
        }
    }
}

async fn frames(tab: i32) -> Result<Vec<FrameInfo>, Failure> {
    let all = bindings::get_all_frames(tab).await.map_err(js_err(reason::TARGET_NOT_FOUND))?;
    Ok(js_sys::Array::from(&all)
        .iter()
        .filter_map(|f| {
            Some(FrameInfo {
                frame_id: field(&f, "frameId")?,
                parent_frame_id: field(&f, "parentFrameId").unwrap_or(-1),
                url: field(&f, "url").unwrap_or_default(),
            })
        })
        .collect())
}

/// Sends page work to the content script of one frame (the top frame unless `frameId` says
/// otherwise), injecting it first on pages that were open before the extension loaded.
/// [`to_page`] for a watch: gives up when the tab commits a new document meanwhile (Firefox may
/// leave a message to a document being replaced unanswered, neither a reply nor an error; the
/// caller then watches the new document) or after `ms` (a page that stopped answering).
async fn to_page_within(tab: i32, name: &str, params: Value, ms: f64) -> Result<Value, Failure> {
    let method = name.to_owned();
    let since = epoch_of(tab);
    let work = wasm_bindgen_futures::future_to_promise(async move {
        Ok(to_js(&match to_page(tab, &method, params).await {
            Ok((v, _)) => serde_json::json!({"ok": v}),
            Err((code, message)) => serde_json::json!({"err": [code, message]}),
        }))
    });
    let raced = race_commit(tab, since, ms, Some(work)).await;
    if raced.as_string().as_deref() == Some("committed") {
        return Err(fail(reason::INTERNAL, "the watched document was replaced (channel closed)"));
    }
    let v: Value = from_js(raced).unwrap_or(Value::Null);
    if let Some(ok) = v.get("ok") {
        return Ok(ok.clone());
    }
    match v.get("err").and_then(Value::as_array).map(Vec::as_slice) {
        Some([code, message]) => Err((
            code.as_str().unwrap_or(reason::INTERNAL).to_owned(),
            message.as_str().unwrap_or_default().to_owned(),
        )),
        _ => Err(fail(reason::TIMEOUT, format!("the page did not answer `{name}` within {} ms", ms as i64))),
    }
}

/// Tries after injecting the page script into a frame that was not listening yet.
const NOT_LISTENING_RETRIES: u32 = 5;

/// Whether a send failed because no script listened in that document: the message was not
/// delivered.
fn not_listening(error: &str) -> bool {
    error.contains("Receiving end does not exist") || error.contains("Could not establish connection")
}

/// Page methods that act on the page. Each is delivered at most once: a failure after the send
/// cannot tell "never received" from "received, acted, and the frame went away" (Firefox reports
/// both as "Receiving end does not exist"), so it is answered [`reason::GONE_AFTER_DISPATCH`].
const ACTING: &[&str] =
    &[method::CLICK, method::TYPE, method::ACT, method::UPLOAD, method::DISMISS, method::PKS_STEP];

async fn has_frame(tab: i32, frame: i64) -> Result<bool, Failure> {
    Ok(frame == 0 || frames(tab).await?.iter().any(|f| f.frame_id == frame))
}

fn no_frame(tab: i32, frame: i64) -> Failure {
    fail(reason::TARGET_NOT_FOUND, format!("tab {tab} has no frame {frame}"))
}

/// Tries of injecting the page script into a tab between two documents, 100 ms apart.
const BETWEEN_DOCUMENTS_RETRIES: u32 = 20;

/// Injects the page script into `tab`. Between two documents of a navigation Firefox refuses it
/// as it refuses a page out of reach ("Missing host permission for the tab"): while the tab is
/// loading, the script waits for the new document (a read right after an action that navigated
/// answered `page_not_scriptable`); a page that finished loading is answered at once.
async fn inject_page_script(tab: i32) -> Result<(), Failure> {
    let mut attempt = 0;
    loop {
        let text = match bindings::inject_files(tab, &["content.js"]).await {
            Ok(_) => return Ok(()),
            Err(e) => bindings::error_text(&e),
        };
        if attempt < BETWEEN_DOCUMENTS_RETRIES
            && bindings::document_gone(&text)
            && tab_status(tab).await.as_deref() == Some("loading")
        {
            attempt += 1;
            sleep_ms(100).await;
            continue;
        }
        return Err(fail(reason::PAGE_NOT_SCRIPTABLE, format!("cannot script this page: {text}")));
    }
}

/// Sends `message` to the page script of a frame, injecting the script into a page that was
/// open before the extension loaded. Only for messages that cannot act twice: a send that found
/// no listener is sent again.
async fn deliver(tab: i32, frame: i64, message: &JsValue) -> Result<JsValue, Failure> {
    match bindings::tabs_send_message(tab, message, frame).await {
        Ok(r) => return Ok(r),
        Err(e) => {
            let text = bindings::error_text(&e);
            if !not_listening(&text) {
                return Err(fail(reason::INTERNAL, text));
            }
        }
    }
    inject_page_script(tab).await?;
    // A frame that just appeared may not have its script listening yet (its document is still
    // loading): nobody received the message. A few short tries, then the error.
    let mut attempt = 0;
    loop {
        match bindings::tabs_send_message(tab, message, frame).await {
            Ok(r) => return Ok(r),
            Err(e) if attempt < NOT_LISTENING_RETRIES && not_listening(&bindings::error_text(&e)) => {
                if !has_frame(tab, frame).await? {
                    return Err(no_frame(tab, frame));
                }
                attempt += 1;
                sleep_ms(100).await;
            }
            Err(e) => return Err(js_err(reason::INTERNAL)(e)),
        }
    }
}

/// The URL of `tab`'s document, as the browser has it (empty when the tab is gone).
async fn tab_url(tab: i32) -> String {
    bindings::tabs_get(tab).await.ok().and_then(|t| field::<String>(&t, "url")).unwrap_or_default()
}

/// The tab's loading status as the browser has it (`loading`, `complete`); none when the tab is
/// gone.
async fn tab_status(tab: i32) -> Option<String> {
    bindings::tabs_get(tab).await.ok().and_then(|t| field::<String>(&t, "status"))
}

/// How many errors of loads a newer navigation replaced [`next_document`] passes over.
const REPLACED_LOADS_MAX: usize = 3;

/// Whether the tab is still loading a document it has not committed yet (`url`, when given):
/// Chromium's `pendingUrl`. Firefox reports no replaced load as an error (see
/// `bindings::superseded_load`) and has no such field.
async fn still_loading(tab: i32, url: Option<&str>) -> bool {
    let pending = bindings::tabs_get(tab).await.ok().and_then(|t| field::<String>(&t, "pendingUrl"));
    let href = |u: &str| web_sys::Url::new(u).map(|u| u.href()).ok();
    pending
        .is_some_and(|pending| url.is_none_or(|url| href(&pending).is_some() && href(&pending) == href(url)))
}

/// How long a guarded action whose document went away without answering may take to commit
/// the document it navigated to (ms).
const LEFT_COMMIT_MS: f64 = 2_000.0;

/// A guarded action (`page.act`) as it was sent: its kind (click, type, select) and the selector
/// it names.
#[derive(Default)]
struct Taken {
    kind: String,
    selector: String,
}

/// The report of a guarded action (`page.act`) whose document took it and went away before
/// its answer arrived: Chromium drops an answer in flight when a form's submission lands on
/// the page's own address (Django admin's bulk actions post to the list they are run from).
/// When the tab commits a new document right after (within [`LEFT_COMMIT_MS`] of epoch
/// `epoch`), the action is taken as dispatched and leaving, so its watch judges the outcome on
/// the document it landed on, and the report says so; `None` when no document came. The page
/// never described the element: the report names it by the selector the action was sent with.
/// It leaves `urlBefore` empty: the hub, which recorded the URL in the transition's intent,
/// fills it in.
async fn taken_then_left(tab: i32, epoch: u32, action: Taken) -> Option<Value> {
    next_commit(tab, epoch, LEFT_COMMIT_MS).await;
    if epoch_of(tab) == epoch {
        return None;
    }
    let landed = tab_url(tab).await;
    let report = nova_shared::page::ActionReport {
        action_dispatched: true,
        url_after: landed.clone(),
        navigation_started: Some(landed),
        element: format!("the element at `{}`", action.selector),
        method: action.kind,
        warnings: vec![
            "the page went to a new document before answering: the action is taken as dispatched and judged on the \
             document it landed on"
                .into(),
        ],
        ..Default::default()
    };
    serde_json::to_value(report).ok()
}

/// The answer to an action whose frame or document did not answer after taking it.
async fn gone_after_dispatch(tab: i32, frame: i64, name: &str, detail: &str) -> Failure {
    let place = match has_frame(tab, frame).await {
        Ok(false) => format!("frame {frame} of tab {tab} went away"),
        _ => format!("the document of frame {frame} in tab {tab} did not answer ({detail})"),
    };
    fail(
        reason::GONE_AFTER_DISPATCH,
        format!("`{name}` was delivered and {place}: it may have acted; read the page before trying again"),
    )
}

/// Sends a request to the page script of the frame `params.frameId` of `tab`; its answer, and
/// the stages: the message's round trip (`tabMs`, and `readyMs` for the question that makes
/// sure a script listens before an action), decoding the answer (`decodeMs`), and the page's
/// own (`pageMs` and its parts).
async fn to_page(tab: i32, name: &str, params: Value) -> Result<(Value, BTreeMap<String, f64>), Failure> {
    let frame = params.get("frameId").and_then(Value::as_i64).unwrap_or(0);
    if !has_frame(tab, frame).await? {
        return Err(no_frame(tab, frame));
    }
    let strict_csp = STATE.with(|s| s.borrow().strict_csp.get(&(tab, frame)).copied().unwrap_or(false));
    let envelope = |name: &str, params: Value| {
        to_js(&serde_json::json!({
            "nova": protocol::PROTOCOL_VERSION, "method": name, "params": params, "strictCsp": strict_csp,
        }))
    };
    let acting = ACTING.contains(&name);
    // The top document's script answered in this navigation epoch: it listens, and the action
    // can go at once. Otherwise a harmless question first makes sure a script listens (injecting
    // it if need be), so that the action itself goes out once: Firefox answers "Receiving end
    // does not exist" both when nobody received a message and when the frame went away after
    // taking it, so an action that failed can never be sent again.
    let epoch = epoch_of(tab);
    let listening = frame == 0 && STATE.with(|s| s.borrow().listening.get(&tab) == Some(&epoch));
    let mut stages = BTreeMap::new();
    let mut sending = timing::now();
    let reply = if acting {
        if !listening {
            let ask = serde_json::json!({"target": params.get("target").cloned().unwrap_or_default(), "frameId": frame});
            deliver(tab, frame, &envelope(method::REV, ask)).await?;
            let ready = timing::now();
            stages.insert("readyMs".to_owned(), ready - sending);
            sending = ready;
        }
        match bindings::tabs_send_message(tab, &envelope(name, params), frame).await {
            Ok(r) => r,
            Err(e) => return Err(gone_after_dispatch(tab, frame, name, &bindings::error_text(&e)).await),
        }
    } else {
        deliver(tab, frame, &envelope(name, params)).await?
    };
    if reply.is_undefined() || reply.is_null() {
        // The receiving document went away after taking the message (frame removed, page
        // unloaded): the channel closed without an answer.
        if acting {
            return Err(gone_after_dispatch(tab, frame, name, "the channel closed without an answer").await);
        }
        return Err(fail(reason::INTERNAL, "the page closed the message channel without an answer"));
    }
    stages.insert("tabMs".to_owned(), timing::now() - sending);
    // Only when no navigation committed meanwhile: then the document that answered is the one
    // of this epoch.
    if frame == 0 && epoch_of(tab) == epoch {
        STATE.with(|s| s.borrow_mut().listening.insert(tab, epoch));
    }
    let decoding = timing::now();
    let mut reply: Value = from_js(reply).map_err(|e| fail(reason::INTERNAL, e))?;
    // Most answers come as JSON text (`okJson`: one string crosses instead of an object tree).
    if let Some(text) = reply.as_object_mut().and_then(|r| r.remove("okJson")) {
        let ok: Value = serde_json::from_str(text.as_str().unwrap_or_default())
            .map_err(|e| fail(reason::INTERNAL, format!("the page's answer is not JSON: {e}")))?;
        reply["ok"] = ok;
    }
    stages.insert("decodeMs".to_owned(), timing::now() - decoding);
    for (k, v) in reply.get("timing").and_then(Value::as_object).into_iter().flatten() {
        if let Some(ms) = v.as_f64() {
            stages.insert(k.clone(), ms);
        }
    }
    if let Some(rev) = reply.get("rev").and_then(Value::as_f64) {
        // Sent before the reply on the same port, so the hub knows the document's state when
        // the answer reaches it.
        let stamp = protocol::PageStamp {
            target_id: tab.to_string(),
            frame_id: frame,
            nav_epoch: epoch_of(tab),
            doc_rev: rev as u32,
        };
        post(&Envelope::event(method::PAGE_STAMP, serde_json::to_value(stamp).unwrap_or_default()));
    }
    if let Some(ok) = reply.as_object_mut().and_then(|r| r.remove("ok")) {
        return Ok((ok, stages));
    }
    let code = reply.pointer("/err/code").and_then(Value::as_str).unwrap_or(reason::INTERNAL);
    let message = reply.pointer("/err/message").and_then(Value::as_str).unwrap_or("page script failed");
    Err(fail(code, message))
}
