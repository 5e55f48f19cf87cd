//! Whether an action started a navigation away from its document.
//!
//! A click on a link, a form submission or a script that sets `location` leaves the document
//! after the action's reply is sent: the URL right after dispatch is still the old one. While an
//! action dispatches its events, [`Leaving`] listens for the Navigation API's `navigate` event
//! (Chrome 102+, Firefox 147+) and for form submissions nobody cancelled; the background then
//! waits for the new document, so `urlAfter` names where the action landed (docs/evidence.md).

use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;

use crate::bindings;
use crate::dom;

type Listener = Closure<dyn FnMut(web_sys::Event)>;

/// Listens while an action dispatches; [`Leaving::destination`] says where it was going. The
/// listeners go when it is dropped, also when the action fails half way.
pub struct Leaving {
    seen: std::rc::Rc<std::cell::RefCell<Seen>>,
    navigate: Option<(web_sys::EventTarget, Listener)>,
    submit: Option<(web_sys::Window, Listener)>,
}

#[derive(Default)]
struct Seen {
    /// The destination of a cross-document navigation the page began.
    url: Option<String>,
    /// A `submit` event, to look at once every handler ran (whether one cancelled it).
    submit: Option<web_sys::SubmitEvent>,
}

impl Leaving {
    /// Starts listening (nothing is listened to where the window is out of reach).
    pub fn listen() -> Self {
        let seen = std::rc::Rc::new(std::cell::RefCell::new(Seen::default()));
        let navigate = bindings::navigation().map(|target| {
            let s = seen.clone();
            let f: Listener = Closure::new(move |ev: web_sys::Event| {
                if let Some(url) = bindings::navigate_destination(&ev) {
                    s.borrow_mut().url = Some(url);
                }
            });
            let _ = target.add_event_listener_with_callback("navigate", f.as_ref().unchecked_ref());
            (target, f)
        });
        let submit = dom::window().ok().map(|w| {
            let s = seen.clone();
            let f: Listener = Closure::new(move |ev: web_sys::Event| {
                s.borrow_mut().submit = ev.dyn_into::<web_sys::SubmitEvent>().ok();
            });
            let _ = w.add_event_listener_with_callback("submit", f.as_ref().unchecked_ref());
            (w, f)
        });
        Self { seen, navigate, submit }
    }

    /// A click on `el` that no handler cancelled follows its link, if it is in one (Firefox
    /// does not tell a content script's `navigate` listener before the reply is sent).
    pub fn clicked(&self, el: &web_sys::Element, not_cancelled: bool) {
        let Some(link) = el.closest("a[href]").ok().flatten() else { return };
        let Some(link) = link.dyn_ref::<web_sys::HtmlAnchorElement>() else { return };
        let target = link.target().to_ascii_lowercase();
        let elsewhere = !matches!(target.as_str(), "" | "_self" | "_top" | "_parent");
        let url = link.href();
        if !not_cancelled || elsewhere || link.has_attribute("download") || url.starts_with("javascript:") {
            return;
        }
        let mut seen = self.seen.borrow_mut();
        if seen.url.is_none() {
            seen.url = Some(url);
        }
    }

    /// Stops listening. Where the action sent the document, if it began leaving it: the
    /// destination of a `navigate` event that is not where the document already is, else the
    /// target of a form submission no handler cancelled (its navigation starts a task later).
    pub fn destination(self, now: &str) -> Option<String> {
        let seen = self.seen.borrow();
        if let Some(url) = seen.url.as_deref() {
            return (!same_document(url, now)).then(|| url.to_owned());
        }
        let ev = seen.submit.as_ref().filter(|e| !e.default_prevented())?;
        let form = ev.target()?.dyn_into::<web_sys::HtmlFormElement>().ok()?;
        let submitter = ev.submitter();
        let attr = |name: &str| {
            submitter
                .as_ref()
                .and_then(|b| b.get_attribute(&format!("form{name}")))
                .or_else(|| form.get_attribute(name))
        };
        // A dialog form closes its dialog; a form aimed at another window leaves this one alone.
        let method = attr("method").unwrap_or_default();
        let target = attr("target").unwrap_or_default().to_ascii_lowercase();
        if method.eq_ignore_ascii_case("dialog")
            || !matches!(target.as_str(), "" | "_self" | "_top" | "_parent")
        {
            return None;
        }
        Some(form.action())
    }
}

impl Drop for Leaving {
    fn drop(&mut self) {
        if let Some((t, f)) = &self.navigate {
            let _ = t.remove_event_listener_with_callback("navigate", f.as_ref().unchecked_ref());
        }
        if let Some((w, f)) = &self.submit {
            let _ = w.remove_event_listener_with_callback("submit", f.as_ref().unchecked_ref());
        }
    }
}

/// Whether `url` is the document at `now`, or a fragment of it.
fn same_document(url: &str, now: &str) -> bool {
    let base = |u: &str| u.split('#').next().unwrap_or(u).to_owned();
    url == now || (url.contains('#') && base(url) == base(now))
}
