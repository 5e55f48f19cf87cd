//! The HTTP sign-ins the browser asks for in a dialog of its own (README, "Awareness signals",
//! `httpSignIn`). Two sightings: `webRequest.onAuthRequired`, kept until its request ends
//! (`background.js` forwards the end of those requests only), which Chromium fires for every
//! request and Firefox not for a document; and a document's response headers, a 401 (407 from
//! a proxy) with a challenge the browser prompts for, kept until the tab's next document
//! commits or its navigation fails. The tab's page cannot see them: its reads and its guarded
//! actions' verdicts get them from here, and a navigation whose document asks ends at once
//! with what asks ([`nova_shared::reason::HTTP_SIGN_IN`]).

use std::cell::RefCell;
use std::collections::HashMap;

use js_sys::Reflect;
use nova_shared::sign_in::{self, HttpSignIn};
use wasm_bindgen::JsValue;

/// A sign-in asked for: its tab, and what asks.
struct Asked {
    tab: i32,
    sign_in: HttpSignIn,
}

#[derive(Default)]
struct SignIns {
    /// The sign-ins waiting for an answer, by request id.
    waiting: HashMap<String, Asked>,
    /// The last document sign-in asked in each tab since its navigation began, answered or
    /// not, until a document commits there.
    last: HashMap<i32, HttpSignIn>,
    /// How many times each tab's document asked since its navigation began (the site's first
    /// ask, then one per answer it refused), until a document commits there.
    asks: HashMap<i32, u32>,
    /// The document sign-in each tab's navigation failed on (headless Chromium gives up on the
    /// dialog it cannot show), with when (ms since the epoch), until the tab's next navigation:
    /// the failed navigation names it.
    gave_up: HashMap<i32, (f64, HttpSignIn)>,
}

thread_local! {
    static SIGN_INS: RefCell<SignIns> = RefCell::new(SignIns::default());
}

fn text(detail: &JsValue, name: &str) -> Option<String> {
    Reflect::get(detail, &name.into()).ok()?.as_string()
}

/// `scheme://host[:port]` of `url`, without a user name or password it may carry.
fn origin(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else { return String::new() };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    format!("{scheme}://{host}")
}

/// Whether `url` carries a user name (and password) for its site, as `http://ada:…@host/`:
/// the browser answers the site's first ask with them, without a dialog.
pub(super) fn in_address(url: &str) -> bool {
    let Some((_, rest)) = url.split_once("://") else { return false };
    rest.split(['/', '?', '#']).next().unwrap_or_default().contains('@')
}

/// Records a sign-in from an `onAuthRequired` detail; the tab it was asked in, when the
/// document the tab is opening asks (its navigation waits on it).
pub(super) fn asked(detail: &JsValue) -> Option<i32> {
    let proxy = Reflect::get(detail, &"isProxy".into()).ok().and_then(|v| v.as_bool()).unwrap_or(false);
    let origin = if proxy {
        let challenger = Reflect::get(detail, &"challenger".into()).unwrap_or(JsValue::UNDEFINED);
        let host = text(&challenger, "host").unwrap_or_default();
        let port = Reflect::get(&challenger, &"port".into()).ok().and_then(|v| v.as_f64());
        port.map_or(host.clone(), |p| format!("{host}:{p}"))
    } else {
        origin(&text(detail, "url").unwrap_or_default())
    };
    let realm = sign_in::realm(text(detail, "realm").as_deref());
    record(detail, HttpSignIn { origin, realm, proxy, document: false })
}

/// Records a sign-in from an `onHeadersReceived` detail of a top document (its response
/// headers asked for): a 401 or 407 whose challenge the browser prompts for. The tab, when one.
pub(super) fn from_headers(detail: &JsValue) -> Option<i32> {
    let status = Reflect::get(detail, &"statusCode".into()).ok()?.as_f64()?;
    let proxy = status == 407.0;
    if status != 401.0 && !proxy {
        return None;
    }
    let wanted = if proxy { "proxy-authenticate" } else { "www-authenticate" };
    let headers = Reflect::get(detail, &"responseHeaders".into()).unwrap_or(JsValue::UNDEFINED);
    let realm = js_sys::Array::from(&headers)
        .iter()
        .filter(|h| text(h, "name").is_some_and(|n| n.eq_ignore_ascii_case(wanted)))
        .find_map(|h| sign_in::challenge(&text(&h, "value").unwrap_or_default()))?;
    let origin = origin(&text(detail, "url").unwrap_or_default());
    record(detail, HttpSignIn { origin, realm, proxy, document: false })
}

/// Keeps `sign_in` under the detail's request id; the tab, when the tab's top document asks.
fn record(detail: &JsValue, mut sign_in: HttpSignIn) -> Option<i32> {
    let tab = Reflect::get(detail, &"tabId".into()).ok()?.as_f64()? as i32;
    let id = text(detail, "requestId")?;
    if tab < 0 {
        return None; // the worker's or another extension's own request: no tab waits on it
    }
    let document = text(detail, "type").as_deref() == Some("main_frame");
    sign_in.document = document;
    SIGN_INS.with(|s| {
        let mut s = s.borrow_mut();
        if document {
            s.last.insert(tab, sign_in.clone());
            *s.asks.entry(tab).or_default() += 1;
        }
        s.waiting.insert(id, Asked { tab, sign_in });
    });
    document.then_some(tab)
}

/// Whether a request's or navigation's error says the browser gave up on a sign-in
/// (`net::ERR_INVALID_AUTH_CREDENTIALS`), not that the request was cancelled or failed for
/// another reason (the tab went elsewhere).
fn gave_up_on_sign_in(error: &str) -> bool {
    error.contains("AUTH")
}

/// The request of a sign-in ended: answered, refused, or failed (`error` in the detail).
pub(super) fn done(detail: &JsValue) {
    let Some(id) = text(detail, "requestId") else { return };
    let failed = text(detail, "error").is_some_and(|e| gave_up_on_sign_in(&e));
    SIGN_INS.with(|s| {
        let mut s = s.borrow_mut();
        if let Some(a) = s.waiting.remove(&id)
            && failed
            && a.sign_in.document
        {
            s.gave_up.insert(a.tab, (js_sys::Date::now(), a.sign_in));
        }
    });
}

/// The sign-in waiting in `tab`, the document's first.
pub(super) fn waiting(tab: i32) -> Option<HttpSignIn> {
    SIGN_INS.with(|s| {
        let s = s.borrow();
        let mut mine = s.waiting.values().filter(|a| a.tab == tab).map(|a| &a.sign_in);
        let first = mine.next()?;
        Some(mine.find(|a| a.document).unwrap_or(first).clone())
    })
}

/// The document sign-in waiting in `tab`, if one does.
pub(super) fn document_waiting(tab: i32) -> Option<HttpSignIn> {
    waiting(tab).filter(|a| a.document)
}

/// The document sign-in the browser gave up on in `tab` at `since` (ms since the epoch) or
/// later.
pub(super) fn gave_up(tab: i32, since: f64) -> Option<HttpSignIn> {
    SIGN_INS.with(|s| s.borrow().gave_up.get(&tab).filter(|(at, _)| *at >= since).map(|(_, g)| g.clone()))
}

/// A document committed in `tab`: the one that asked, if one did, was answered (by the person,
/// or by the browser with a sign-in it kept).
pub(super) fn committed(tab: i32) {
    SIGN_INS.with(|s| {
        let mut s = s.borrow_mut();
        s.waiting.retain(|_, a| a.tab != tab || !a.sign_in.document);
        s.last.remove(&tab);
        s.asks.remove(&tab);
    });
}

/// How many times the document `tab` is opening asked for a sign-in.
pub(super) fn asks(tab: i32) -> u32 {
    SIGN_INS.with(|s| s.borrow().asks.get(&tab).copied().unwrap_or(0))
}

/// A navigation of `tab` begins: nothing asked before names what happens to it.
pub(super) fn navigation_begins(tab: i32) {
    committed(tab);
    SIGN_INS.with(|s| s.borrow_mut().gave_up.remove(&tab));
}

/// The navigation of `tab`'s top document failed with `error`: no document sign-in waits, and
/// the last one asked was given up on when the error says so (its request may have ended
/// first, with another error).
pub(super) fn navigation_failed(tab: i32, error: &str) {
    SIGN_INS.with(|s| {
        let mut s = s.borrow_mut();
        s.waiting.retain(|_, a| a.tab != tab || !a.sign_in.document);
        if let Some(last) = s.last.get(&tab).cloned().filter(|_| gave_up_on_sign_in(error)) {
            s.gave_up.insert(tab, (js_sys::Date::now(), last));
        }
    });
}

/// `tab` closed: its sign-ins are gone with it.
pub(super) fn closed(tab: i32) {
    SIGN_INS.with(|s| {
        let mut s = s.borrow_mut();
        s.waiting.retain(|_, a| a.tab != tab);
        s.last.remove(&tab);
        s.asks.remove(&tab);
        s.gave_up.remove(&tab);
    });
}

#[cfg(test)]
mod tests {
    use super::{in_address, origin};

    #[test]
    fn an_origin_drops_the_path_and_any_credentials() {
        assert_eq!(origin("http://127.0.0.1:5232/.web/?x#y"), "http://127.0.0.1:5232");
        assert_eq!(origin("https://ada:secret@intranet.example/a"), "https://intranet.example");
        assert_eq!(origin("https://intranet.example"), "https://intranet.example");
        assert_eq!(origin("nonsense"), "");
    }

    #[test]
    fn a_sign_in_is_in_the_address_only_before_its_host() {
        assert!(in_address("http://ada:secret@127.0.0.1:5232/private"));
        assert!(in_address("https://ada@intranet.example"));
        assert!(!in_address("https://intranet.example/a@b?to=ada@example.org"));
        assert!(!in_address("mailto:ada@example.org"));
    }
}
