//! The content-script entry point: requests from the background arrive here as
//! `{nova, method, params}` and are answered with `{ok}` or `{err: {code, message}}`.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use nova_shared::protocol::{
    ActParams, CheckParams, ClickParams, DOUBLE_CLICK_GAP_MS, PageAction, PerceiveParams, RevParams,
    RevResult, TypeParams, WatchParams, method,
};
use nova_shared::reason;
use serde::Serialize;
use serde::de::DeserializeOwned;
use wasm_bindgen::prelude::*;

use crate::actions;
use crate::background::to_js;
use crate::collect;
use crate::dom::{Failure, fail};
use crate::perceive;
use crate::timing;
use crate::watch;

fn then_wrap(promise: js_sys::Promise, f: impl FnOnce(JsValue) -> JsValue + 'static) -> JsValue {
    let mut f = Some(f);
    js_sys::Promise::new(&mut |resolve, _reject| {
        let mut f = f.take();
        let cb = Closure::<dyn FnMut(JsValue)>::new(move |v: JsValue| {
            let out = f.take().map_or(JsValue::NULL, |f| f(v));
            let _ = resolve.call1(&JsValue::NULL, &out);
        });
        let _ = promise.then(&cb);
        // The promise settles once; the closure lives until then.
        cb.forget();
    })
    .into()
}

thread_local! {
    /// Watches armed by `page.act`, awaited by `page.watch`.
    static WATCHES: RefCell<HashMap<String, js_sys::Promise>> = RefCell::new(HashMap::new());
}

/// `page.act`: arms the watch, dispatches, and answers with the dispatch report at once; the
/// watch keeps running for the following `page.watch`. A picker that is not a `<select>` is
/// opened first, and the answer is a promise: its options may show a moment later
/// ([`crate::listbox`]).
fn act(msg: &JsValue) -> JsValue {
    let p: ActParams = match params(msg) {
        Ok(p) => p,
        Err(e) => return actions::envelope(Err(e)),
    };
    if let PageAction::Click(c) = &p.action
        && c.double_click
    {
        return twice(c.clone(), move |_| armed(p));
    }
    let PageAction::Select(picker) = &p.action else { return armed(p) };
    let picker = picker.clone();
    wasm_bindgen_futures::future_to_promise(async move {
        Ok(match crate::listbox::open(&picker).await {
            Ok(()) => armed(p),
            Err(e) => actions::envelope(Err(e)),
        })
    })
    .into()
}

/// A double-click: its first press now, and `then`, which presses again, after the gap a
/// person's hand leaves between the two ([`DOUBLE_CLICK_GAP_MS`]). A first press refused is the
/// answer, and nothing was dispatched.
fn twice(p: ClickParams, then: impl FnOnce(ClickParams) -> JsValue + 'static) -> JsValue {
    if let Err(e) = actions::first_press(&p) {
        return actions::envelope(Err(e));
    }
    wasm_bindgen_futures::future_to_promise(async move {
        crate::settle::sleep(f64::from(DOUBLE_CLICK_GAP_MS)).await;
        Ok(then(p))
    })
    .into()
}

/// `page.type`; the reply waits for an editor that took the text to draw it
/// ([`crate::readback`]).
fn typed(msg: &JsValue) -> JsValue {
    let p: TypeParams = match params(msg) {
        Ok(p) => p,
        Err(e) => return text_envelope(Err(e)),
    };
    match actions::type_text(&p) {
        Ok(report) if crate::readback::pending(&report) => {
            wasm_bindgen_futures::future_to_promise(async move {
                Ok(text_envelope(out(Ok(crate::readback::read_back(&p, report).await))))
            })
            .into()
        }
        r => text_envelope(out(r)),
    }
}

/// [`act`] once the action can be dispatched.
fn armed(p: ActParams) -> JsValue {
    let report = Rc::new(RefCell::new(None));
    let slot = report.clone();
    let action = p.action.clone();
    let promise = watch::watch(
        p.watch,
        p.nav_epoch,
        move || {
            let r = match &action {
                PageAction::Click(c) => actions::click(c),
                PageAction::Type(t) => actions::type_text(t),
                PageAction::Select(o) => crate::listbox::select(o),
            };
            let done = match &r {
                Ok(report) if report.navigation_started.is_some() => watch::Dispatch::Leaves,
                Ok(_) => watch::Dispatch::Stays,
                Err(_) => watch::Dispatch::Nothing,
            };
            *slot.borrow_mut() = Some(r);
            done
        },
        true,
    );
    let taken = report.borrow_mut().take();
    match taken {
        Some(Ok(r)) => {
            WATCHES.with(|w| w.borrow_mut().insert(p.watch_id, promise));
            match p.action {
                // The watch is armed; the report waits for an editor that took the text to draw it.
                PageAction::Type(t) if crate::readback::pending(&r) => {
                    wasm_bindgen_futures::future_to_promise(async move {
                        Ok(actions::envelope(Ok(to_js(&crate::readback::read_back(&t, r).await))))
                    })
                    .into()
                }
                _ => actions::envelope(Ok(to_js(&r))),
            }
        }
        Some(Err(e)) => actions::envelope(Err(e)),
        None => actions::envelope(Err(fail(reason::INTERNAL, "the action did not run"))),
    }
}

/// `page.watch`: the verdict of the watch `page.act` armed here, or a new watch (the action
/// navigated and this is the new document).
fn watch_only(msg: &JsValue) -> JsValue {
    match params::<WatchParams>(msg) {
        Ok(p) => {
            let armed = WATCHES.with(|w| w.borrow_mut().remove(&p.watch_id));
            let promise =
                armed.unwrap_or_else(|| watch::watch(p.watch, p.nav_epoch, || watch::Dispatch::Stays, false));
            then_wrap(promise, |w| actions::envelope(Ok(w)))
        }
        Err(e) => actions::envelope(Err(e)),
    }
}

fn params<T: DeserializeOwned>(msg: &JsValue) -> Result<T, Failure> {
    let p = js_sys::Reflect::get(msg, &"params".into()).unwrap_or(JsValue::NULL);
    serde_wasm_bindgen::from_value(p).map_err(|e| fail(reason::BAD_PARAMS, e.to_string()))
}

/// An answer as JSON text: one string crosses to the background instead of a tree of objects
/// (a whole read of a long page is thousands of them, which the browser copies one by one;
/// docs/performance.md). The background reads `okJson` as it reads `ok`.
fn out<T: Serialize>(r: Result<T, Failure>) -> Result<String, Failure> {
    r.and_then(|v| serde_json::to_string(&v).map_err(|e| fail(reason::INTERNAL, e.to_string())))
}

/// The envelope of an answer given as JSON text ([`out`]): `{okJson}` or `{err}`.
fn text_envelope(result: Result<String, Failure>) -> JsValue {
    match result {
        Ok(text) => {
            let o = js_sys::Object::new();
            let _ = js_sys::Reflect::set(&o, &"okJson".into(), &text.into());
            o.into()
        }
        Err(e) => actions::envelope(Err(e)),
    }
}

/// Handles one request from the background; never throws. Returns the reply, or a promise of
/// it for `page.watch` and `page.scan`, which wait, and for `page.act` choosing in a picker that
/// is not a `<select>`, which waits for its options. Every reply carries `rev`, the document's
/// revision when it answered ([`crate::docrev`]).
///
/// A read or an action first waits while a young page has drawn nothing yet, and an action
/// while a young page lacks its target ([`crate::drawn`]); then while the page is moving
/// ([`crate::settle`]): the reply then comes as a promise too, and its timing has the waits
/// (`settleMs`).
#[wasm_bindgen]
pub fn content_handle(msg: JsValue) -> JsValue {
    crate::docrev::start();
    let name = method_of(&msg);
    let doc = web_sys::window().and_then(|w| w.document());
    match doc.filter(|_| SETTLES.contains(&name.as_str())) {
        Some(doc) => match crate::drawn::first_screen(&doc, target_of(&msg, &name)) {
            Some(drawing) => then_wrap(drawing, move |waited| settled(msg, &doc, waited.as_f64())),
            None => settled(msg, &doc, None),
        },
        None => timed(&msg, None),
    }
}

/// The selector an action is for: its `selector`, or in `page.act` its action's; none for a
/// read.
fn target_of(msg: &JsValue, name: &str) -> Option<String> {
    let get = |v: &JsValue, key: &str| js_sys::Reflect::get(v, &key.into()).ok().filter(JsValue::is_object);
    let params = get(msg, "params")?;
    let holder = match name {
        method::CLICK | method::TYPE | method::UPLOAD => params,
        method::ACT => {
            // `{"click": {...}}`, `{"type": {...}}` or `{"select": {...}}`.
            let action = get(&params, "action")?;
            let kind = js_sys::Object::keys(action.dyn_ref::<js_sys::Object>()?).get(0).as_string()?;
            get(&action, &kind)?
        }
        _ => return None,
    };
    js_sys::Reflect::get(&holder, &"selector".into()).ok()?.as_string()
}

/// [`timed`] once the page has stopped moving; `drawing` is how long it waited for the page's
/// first screen.
fn settled(msg: JsValue, doc: &web_sys::Document, drawing: Option<f64>) -> JsValue {
    let acting = matches!(method_of(&msg).as_str(), method::CLICK | method::ACT | method::UPLOAD);
    match crate::settle::quiet(doc, acting) {
        Some(quiet) => then_wrap(quiet, move |waited| {
            let total = drawing.unwrap_or(0.0) + waited.as_f64().unwrap_or(0.0);
            timed(&msg, Some(total))
        }),
        None => timed(&msg, drawing),
    }
}

/// The requests that wait for the page to stop moving: reads and actions. Not the checks of a
/// watch, which look again until the outcome shows, nor a scan, which waits for its own quiet.
const SETTLES: [&str; 9] = [
    method::PERCEIVE,
    method::ORDER,
    method::SUBMITTER,
    method::READ_TEXT,
    method::CLICK,
    method::TYPE,
    method::ACT,
    method::UPLOAD,
    method::DISMISS,
];

/// [`answer`], with the page's own time and its parts (a waiting answer has none: it mostly
/// waits), and `settled`, how long it waited for the page to stop moving.
fn timed(msg: &JsValue, settled: Option<f64>) -> JsValue {
    let started = timing::now();
    timing::take_parts();
    let reply = answer(msg);
    match reply.dyn_ref::<js_sys::Promise>() {
        Some(promise) => then_wrap(promise.clone(), stamped),
        None => {
            let mut parts = timing::take_parts();
            parts.insert("pageMs".into(), timing::now() - started);
            if let Some(ms) = settled {
                parts.insert("settleMs".into(), ms);
            }
            let _ = js_sys::Reflect::set(&reply, &"timing".into(), &to_js(&parts));
            stamped(reply)
        }
    }
}

/// The request's method name.
fn method_of(msg: &JsValue) -> String {
    js_sys::Reflect::get(msg, &"method".into()).ok().and_then(|m| m.as_string()).unwrap_or_default()
}

/// Adds the document's revision to a reply envelope.
fn stamped(reply: JsValue) -> JsValue {
    let _ = js_sys::Reflect::set(&reply, &"rev".into(), &crate::docrev::current().into());
    reply
}

fn answer(msg: &JsValue) -> JsValue {
    let name = method_of(msg);
    let result = match name.as_str() {
        method::PERCEIVE => params(msg).and_then(|p: PerceiveParams| {
            let page = timing::part("walkMs", || perceive::perceive(&p)).map(|(mut page, roots)| {
                if let Some(a) = &p.adapter {
                    page.signals = timing::part("signalsMs", || collect::signals(a, &roots));
                }
                page
            });
            timing::part("encodeMs", || out(page))
        }),
        method::READ_TEXT => params(msg).and_then(|p| out(perceive::read_text(&p))),
        method::CLICK => match params::<ClickParams>(msg) {
            Ok(p) if p.double_click => return twice(p, |p| text_envelope(out(actions::click(&p)))),
            p => p.and_then(|p| out(actions::click(&p))),
        },
        method::TYPE => return typed(msg),
        method::CHECK => params(msg).and_then(|p: CheckParams| out(Ok(watch::check(&p)))),
        method::ACT => return act(msg),
        method::WATCH => return watch_only(msg),
        method::ROUTE => params(msg).and_then(|p| out(crate::tools::route(&p))),
        method::UPLOAD => params(msg).and_then(|p| out(crate::tools::upload(&p))),
        method::DISMISS => params(msg).and_then(|p| out(crate::tools::dismiss(&p))),
        method::PKS_PROBE => params(msg).and_then(|p| out(crate::pks::probe(&p))),
        method::PKS_STEP => params(msg).and_then(|p| out(crate::pks::step(&p))),
        method::ORDER => params(msg).and_then(|p| out(crate::order::order(&p))),
        method::SUBMITTER => params(msg).and_then(|p| out(crate::submitter::submitter(&p))),
        method::REV => {
            params(msg).and_then(|_: RevParams| out(Ok(RevResult { doc_rev: crate::docrev::current() })))
        }
        method::SCAN => {
            return match params(msg) {
                Ok(p) => crate::scan::scan(p).into(),
                Err(e) => actions::envelope(Err(e)),
            };
        }
        other => Err(fail(reason::UNKNOWN_METHOD, format!("the page script has no method `{other}`"))),
    };
    text_envelope(result)
}
