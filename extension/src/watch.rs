//! Facts, assertion checks and the postcondition watch, in the page.
//!
//! The watch is event-driven: a `MutationObserver` on the document plus `input`/`change`
//! listeners re-evaluate the postconditions whenever the page changes; timers exist only for
//! the success hold (`stabilityMs`) and the end of the window. No polling loops.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use js_sys::{Function, Promise};
use nova_shared::cls::{self, Assertion, Observed, Outcome};
use nova_shared::facts::{self, FactKey};
use nova_shared::protocol::{CheckParams, CheckResult, WatchResult, WatchSpec};
use serde_json::{Value, json};
use wasm_bindgen::prelude::*;
use web_sys::{MutationObserver, MutationObserverInit, ShadowRoot};

use crate::{dom, shadows};

/// Reads one fact in this frame's document.
pub fn read_fact(a: &Assertion, nav_epoch: u32) -> Observed {
    if a.frame_id.as_deref().is_some_and(|f| f != "0") {
        return Err(format!(
            "`{}`: facts of frame {} are read through that frame's frameId",
            a.fact_key,
            a.frame_id.as_deref().unwrap_or("")
        ));
    }
    let key = facts::parse(&a.fact_key)?;
    match key.namespace.as_str() {
        "page" => page_fact(&key, nav_epoch),
        "dom" => dom_fact(&key),
        "chat" | "form" | "overlay" | "core" => crate::collect::read(&key),
        other => Err(format!("no collector for `{other}.*` facts on this page yet")),
    }
}

fn page_fact(key: &FactKey, nav_epoch: u32) -> Observed {
    let doc = dom::document().map_err(|e| e.1)?;
    let location = dom::window().map_err(|e| e.1)?.location();
    Ok(match key.path.as_str() {
        "url" => json!(location.href().unwrap_or_default()),
        "origin" => json!(location.origin().unwrap_or_default()),
        "title" => json!(doc.title()),
        "readyState" => json!(doc.ready_state()),
        "navEpoch" => json!(nav_epoch),
        "signOut" => json!(crate::collect::sign_out()),
        "busy" => json!(crate::drawn::busy()),
        other => return Err(format!("unknown page fact `{other}`")),
    })
}

fn dom_fact(key: &FactKey) -> Observed {
    let (selector, attr) = match key.path.as_str() {
        "attr" => key
            .attr_parts()
            .map(|(s, n)| (s.to_owned(), Some(n.to_owned())))
            .ok_or("dom.attr takes SELECTOR|ATTRIBUTE")?,
        _ => (key.arg.clone().unwrap_or_default(), None),
    };
    if key.path == "count" {
        return dom::count(&selector).map(|n| json!(n)).map_err(|e| e.1);
    }
    let found = match dom::resolve(&selector) {
        Ok(el) => Some(el),
        Err((code, _)) if code == nova_shared::reason::ELEMENT_NOT_FOUND => None,
        Err((_, message)) => return Err(message),
    };
    let Some(el) = found else {
        return Ok(match key.path.as_str() {
            "exists" | "visible" | "checked" | "enabled" => json!(false),
            _ => Value::Null,
        });
    };
    // A password field's value never leaves the page: filled or empty is all it says.
    if dom::tag(&el) == "input" && dom::input_type(&el) == "password" {
        let masked = |v: String| json!(if v.is_empty() { "" } else { facts::PASSWORD_FILLED });
        if key.path == "value" {
            let typed = js_sys::Reflect::get(&el, &"value".into()).ok().and_then(|v| v.as_string());
            return Ok(typed.map_or(Value::Null, masked));
        }
        if attr.as_deref().is_some_and(|n| n.eq_ignore_ascii_case("value")) {
            return Ok(el.get_attribute("value").map_or(Value::Null, masked));
        }
    }
    Ok(match key.path.as_str() {
        "exists" => json!(true),
        "visible" => json!(dom::is_visible(&el)),
        "text" => json!(dom::collapse(&el.text_content().unwrap_or_default())),
        // A picker's text box holds its filter; the choice is shown beside it (Selectize), or
        // is the hidden select's (Select2).
        "value" => crate::selectize::choice(&el)
            .or_else(|| crate::select2::value(&el))
            .or_else(|| js_sys::Reflect::get(&el, &"value".into()).ok().and_then(|v| v.as_string()))
            .map_or(Value::Null, |v| json!(v)),
        "attr" => attr.and_then(|n| el.get_attribute(&n)).map_or(Value::Null, |v| json!(v)),
        "checked" => json!(
            js_sys::Reflect::get(&el, &"checked".into()).ok().and_then(|v| v.as_bool()).unwrap_or(false)
        ),
        "enabled" => json!(!dom::is_disabled(&el)),
        other => return Err(format!("unknown dom fact `{other}`")),
    })
}

/// `page.check`.
pub fn check(p: &CheckParams) -> CheckResult {
    crate::collect::use_adapter(p.adapter.clone());
    let _looking = shadows::Looking::at(Rc::new(shadows::of_page()));
    let (verdict, failed_assertions) = cls::evaluate(&p.set, &mut |a| read_fact(a, p.nav_epoch));
    CheckResult { verdict, failed_assertions }
}

fn now() -> f64 {
    js_sys::Date::now()
}

struct State {
    spec: WatchSpec,
    nav_epoch: u32,
    started: f64,
    success_since: Option<f64>,
    success_seen: bool,
    /// What made the outcome ambiguous when it last was (the ambiguous assertions that held).
    ambiguous_seen: Option<Vec<cls::AssertionResult>>,
    /// The failure signal already held before the dispatch: it is not evidence until it has
    /// cleared once (a stale error banner, last attempt's validation messages).
    stale_fail: bool,
    /// Likewise for the success signal; while it has not cleared, only an element that was not
    /// showing it before and shows it now, saying something none of those did (or what one
    /// still showing beside it says), is evidence, and only while it shows ([`witnesses`],
    /// [`Witness::news`]).
    stale_success: bool,
    /// The elements that showed the success signal before the dispatch.
    stale_witnesses: Vec<Witness>,
    /// The dialogs asking the person something before the dispatch ([`crate::asking::open`]):
    /// one that opens after it is the page waiting for an answer.
    dialogs_before: Vec<web_sys::Element>,
    /// Which of the success set's `any` assertions held before the dispatch: one that did not
    /// and holds now is news (the agent's `page.url contains "/overview"` beside a generic
    /// success marker that was always there).
    stale_any: Vec<bool>,
    /// The action began a navigation away from this document: what shows here until it goes
    /// (a submit attempt marking a field `:user-invalid`, last attempt's errors) is not the
    /// outcome, the new document is. Only the window's end judges here (a navigation that never
    /// committed).
    leaving: bool,
    /// The document this watch runs in is still being parsed (a document the action navigated
    /// to, asked as soon as it committed): the signals of a half-read page are not the outcome
    /// yet, so nothing is judged before `DOMContentLoaded` (or the window's end).
    parsing: bool,
    last_errors: Vec<cls::AssertionResult>,
    resolve: Option<Function>,
    observer: Option<MutationObserver>,
    listener: Option<Closure<dyn FnMut(JsValue)>>,
    /// The page's open shadow roots, observed and looked into by the collectors: those found
    /// when the watch was armed and those of every element added since.
    roots: Rc<Vec<ShadowRoot>>,
}

type Shared = Rc<RefCell<State>>;

/// The elements showing what `a` wants when it asks for an element in this frame
/// (`dom.exists(SELECTOR) eq true`, `dom.visible(SELECTOR) eq true`); `None` for any other
/// assertion.
fn shown_by(a: &Assertion) -> Option<Vec<web_sys::Element>> {
    let asks = a.operator == cls::Operator::Eq
        && a.expected == Some(json!(true))
        && a.frame_id.as_deref().is_none_or(|f| f == "0");
    let key = facts::parse(&a.fact_key).ok().filter(|k| asks && k.namespace == "dom")?;
    let visible = match key.path.as_str() {
        "exists" => false,
        "visible" => true,
        _ => return None,
    };
    let all = dom::all(key.arg.as_deref().unwrap_or_default()).unwrap_or_default();
    Some(all.into_iter().filter(|e| !visible || dom::is_visible(e)).collect())
}

/// The elements showing what the success assertions that ask for an element want ([`shown_by`]).
fn witnesses(success: &cls::AssertionSet) -> Vec<web_sys::Element> {
    success.all.iter().chain(&success.any).filter_map(shown_by).flatten().collect()
}

/// Whether the success set holds with the elements that say the page is at work left out
/// ([`crate::drawn::at_work`]): an assertion asking for an element holds only through one that
/// says what the action did. Bootstrap's spinner says "Loading..." in a `role="status"` span
/// while a form saves; read as the success message it is not, a save that then failed was a
/// success.
fn holds_beyond_work(success: &cls::AssertionSet, observe: &mut dyn FnMut(&Assertion) -> Observed) -> bool {
    cls::holds(success, &mut |a| match shown_by(a) {
        Some(shown) if !shown.is_empty() && shown.iter().all(crate::drawn::at_work) => Ok(json!(false)),
        _ => observe(a),
    })
}

/// An element that showed the success signal, and what it said.
struct Witness {
    element: web_sys::Element,
    text: String,
    /// It says the page is at work, not what it did ([`crate::drawn::at_work`]).
    at_work: bool,
}

impl Witness {
    fn of(element: web_sys::Element) -> Self {
        let text = dom::said(&element);
        let at_work = crate::drawn::at_work(&element);
        Self { element, text, at_work }
    }

    /// Whether this witness is news beside those that showed before the dispatch (`stale`),
    /// among those showing now (`now`): another element, in words, not saying the page is at
    /// work, and saying something else, or the same as one of those while that one still
    /// shows. A page drawn again after the action (a single-page app's new view) replaces its
    /// elements with new ones that say what the old ones did: MLflow's "Beta" and "New" badges
    /// carry `role="status"` on every view, and prove nothing; nor does the spinner it shows,
    /// also `role="status"`, while the view loads. A page that stacks its messages adds a new
    /// one beside the old: Node-RED's "Successfully deployed" shows for five seconds, and a
    /// deploy in that time adds another.
    fn news(&self, stale: &[Witness], now: &[web_sys::Element]) -> bool {
        let still_shows = |s: &Witness| now.contains(&s.element);
        let mut echoes = stale.iter().filter(|s| s.text == self.text).peekable();
        !self.at_work
            && !self.text.is_empty()
            && !stale.iter().any(|s| s.element == self.element)
            && (echoes.peek().is_none() || echoes.any(still_shows))
    }
}

/// What proves a success now: the success assertions that hold (`heldAssertions`).
fn proof(s: &State) -> Vec<cls::AssertionResult> {
    let _looking = shadows::Looking::at(s.roots.clone());
    let epoch = s.nav_epoch;
    cls::held(&s.spec.postconditions.success, &mut |a| read_fact(a, epoch))
}

/// What the last dialog opened since the dispatch (not among `before`) asks, when one shows.
fn opened_since(before: &[web_sys::Element]) -> Option<String> {
    let doc = dom::document().ok()?;
    let new = crate::asking::open(&doc).into_iter().rfind(|d| !before.contains(d))?;
    Some(crate::asking::question(&new))
}

fn finish(state: &Shared, outcome: Outcome, failed: Vec<cls::AssertionResult>) {
    let mut s = state.borrow_mut();
    let held_assertions =
        if outcome == Outcome::Success && s.resolve.is_some() { proof(&s) } else { Vec::new() };
    let Some(resolve) = s.resolve.take() else {
        return;
    };
    if let Some(o) = s.observer.take() {
        o.disconnect();
    }
    if let (Some(l), Ok(doc)) = (s.listener.take(), dom::document()) {
        for kind in ["input", "change"] {
            let _ = doc.remove_event_listener_with_callback_and_bool(kind, l.as_ref().unchecked_ref(), true);
        }
    }
    let result = WatchResult {
        outcome,
        failed_assertions: failed,
        held_assertions,
        elapsed_ms: (now() - s.started).max(0.0) as u32,
        navigated: false,
        success_seen: s.success_seen,
        url: web_sys::window().and_then(|w| w.location().href().ok()),
        asking: (outcome == Outcome::Pending).then(|| opened_since(&s.dialogs_before)).flatten(),
    };
    drop(s);
    let _ = resolve.call1(&JsValue::NULL, &crate::background::to_js(&result));
}

fn evaluate(state: &Shared) {
    let (outcome, details, hold) = {
        let mut s = state.borrow_mut();
        if s.resolve.is_none() || s.leaving || s.parsing {
            return;
        }
        let _looking = shadows::Looking::at(s.roots.clone());
        let epoch = s.nav_epoch;
        let post = s.spec.postconditions.clone();
        // Each fact is read once per evaluation: every check below sees the same page.
        let mut read: HashMap<(String, Option<String>), Observed> = HashMap::new();
        let mut observe = |a: &Assertion| {
            read.entry((a.fact_key.clone(), a.frame_id.clone()))
                .or_insert_with(|| read_fact(a, epoch))
                .clone()
        };
        let fail_now = cls::holds(&post.forbidden, &mut observe);
        let success_now = cls::holds(&post.success, &mut observe);
        s.stale_fail &= fail_now;
        s.stale_success &= success_now;
        // An `any` assertion that did not hold before is news; so is a new success message
        // beside last action's (Wagtail's "Image updated." while its "Upload successful" still
        // slides away), for as long as it shows.
        let fresh = !s.stale_success
            || post
                .success
                .any
                .iter()
                .zip(&s.stale_any)
                .any(|(a, &was)| !was && cls::check(a, &observe(a)).passed)
            || {
                let now = witnesses(&post.success);
                now.iter().any(|e| Witness::of(e.clone()).news(&s.stale_witnesses, &now))
            };
        let (mut o, d) = cls::classify(&post, &mut observe);
        if o == Outcome::Fail && s.stale_fail {
            o = if success_now && fresh { Outcome::Success } else { Outcome::Pending };
        }
        if o == Outcome::Success && (!fresh || !holds_beyond_work(&post.success, &mut observe)) {
            o = Outcome::Pending;
        }
        (o, d, s.spec.hold_ms)
    };
    match outcome {
        Outcome::Fail => finish(state, Outcome::Fail, details),
        Outcome::Success => {
            let start_hold = {
                let mut s = state.borrow_mut();
                s.success_seen = true;
                s.success_since.is_none().then(|| {
                    s.success_since = Some(now());
                })
            };
            if hold == 0 {
                finish(state, Outcome::Success, Vec::new());
            } else if start_hold.is_some() {
                // Success must still hold when the timer fires.
                let st = state.clone();
                let timer = Closure::once_into_js(move || {
                    let held = st.borrow().success_since.is_some_and(|t| now() - t >= f64::from(hold) - 1.0);
                    evaluate(&st);
                    if held && st.borrow().success_since.is_some() {
                        finish(&st, Outcome::Success, Vec::new());
                    }
                });
                let _ = dom::window().map(|w| {
                    w.set_timeout_with_callback_and_timeout_and_arguments_0(
                        timer.unchecked_ref(),
                        hold as i32,
                    )
                });
            }
        }
        other => {
            let mut s = state.borrow_mut();
            s.success_since = None;
            match other {
                Outcome::Ambiguous => s.ambiguous_seen = Some(details),
                Outcome::EvalError => s.last_errors = details,
                _ => s.last_errors.clear(),
            }
        }
    }
}

/// What the watch's observer is told about: the whole tree's children, attributes and texts.
fn observing() -> MutationObserverInit {
    let init = MutationObserverInit::new();
    init.set_subtree(true);
    init.set_child_list(true);
    init.set_attributes(true);
    init.set_character_data(true);
    init
}

/// Observes `root` and, since mutation observers stop at shadow and frame boundaries, every open
/// shadow root and same-origin frame document under it. The shadow roots of `root`'s own
/// document go into `found` (those inside frames do not: the collectors read this document).
fn observe_tree(
    observer: &MutationObserver,
    init: &MutationObserverInit,
    root: &web_sys::Node,
    found: &mut Vec<ShadowRoot>,
) {
    let _ = observer.observe_with_options(root, init);
    shadows::walk(root, true, &mut |entered| match entered {
        shadows::Entered::Shadow { root, in_frame } => {
            let _ = observer.observe_with_options(root, init);
            if !in_frame && found.len() < shadows::MAX_ROOTS {
                found.push(root.clone());
            }
        }
        shadows::Entered::Frame(inner) => {
            let _ = observer.observe_with_options(inner, init);
        }
    });
}

/// Follows the open shadow roots of what the page added (a chat's new message drawn as a web
/// component): observed, so what is drawn inside them later is seen, and looked into.
fn follow_added(state: &Shared, records: &js_sys::Array) {
    let mut fresh = Vec::new();
    for record in records.iter() {
        let added = record.unchecked_ref::<web_sys::MutationRecord>().added_nodes();
        for node in (0..added.length()).filter_map(|i| added.item(i)) {
            if dom::as_element(&node).is_some() {
                shadows::under(&node, &mut fresh);
            }
        }
    }
    if fresh.is_empty() {
        return;
    }
    let mut s = state.borrow_mut();
    let init = observing();
    for root in fresh {
        if s.roots.len() >= shadows::MAX_ROOTS || s.roots.contains(&root) {
            continue;
        }
        if let Some(observer) = &s.observer {
            let _ = observer.observe_with_options(&root, &init);
        }
        Rc::make_mut(&mut s.roots).push(root);
    }
}

/// What the dispatch run by [`watch`] did.
pub enum Dispatch {
    /// Nothing was dispatched: the watch ends at once.
    Nothing,
    /// Events were dispatched; the document stays.
    Stays,
    /// Events were dispatched and began a navigation away from the document.
    Leaves,
}

/// Arms the watch and returns a promise of its [`WatchResult`]. `after_arming` runs right
/// after the observer is armed (the dispatch, for `page.act`), so no change is missed; when it
/// dispatched nothing the watch ends at once, and when it began a navigation away from the
/// document, nothing here is the outcome before the window's end. `before_dispatch` says the
/// watch is armed before the action (signals already present then are stale).
pub fn watch(
    spec: WatchSpec,
    nav_epoch: u32,
    after_arming: impl FnOnce() -> Dispatch,
    before_dispatch: bool,
) -> Promise {
    let adapter = spec.adapter.clone();
    let state: Shared = Rc::new(RefCell::new(State {
        spec,
        nav_epoch,
        started: now(),
        success_since: None,
        success_seen: false,
        ambiguous_seen: None,
        stale_fail: false,
        stale_success: false,
        stale_witnesses: Vec::new(),
        dialogs_before: Vec::new(),
        stale_any: Vec::new(),
        leaving: false,
        parsing: false,
        last_errors: Vec::new(),
        resolve: None,
        observer: None,
        listener: None,
        roots: Rc::new(Vec::new()),
    }));
    let promise = Promise::new(&mut |resolve, _| {
        state.borrow_mut().resolve = Some(resolve);
    });
    let st = state.clone();
    // Called with the mutation records by the observer, with an event by the listeners.
    let on_mutation = Closure::<dyn FnMut(JsValue)>::new(move |records: JsValue| {
        if let Some(records) = records.dyn_ref::<js_sys::Array>() {
            follow_added(&st, records);
        }
        evaluate(&st);
    });
    if let (Ok(observer), Ok(doc)) =
        (MutationObserver::new(on_mutation.as_ref().unchecked_ref()), dom::document())
    {
        let mut roots = Vec::new();
        if let Some(root) = doc.document_element() {
            observe_tree(&observer, &observing(), &root, &mut roots);
        }
        for kind in ["input", "change"] {
            let _ = doc.add_event_listener_with_callback_and_bool(
                kind,
                on_mutation.as_ref().unchecked_ref(),
                true,
            );
        }
        let mut s = state.borrow_mut();
        s.observer = Some(observer);
        s.listener = Some(on_mutation);
        s.roots = Rc::new(roots);
    }
    let looking = shadows::Looking::at(state.borrow().roots.clone());
    crate::collect::arm(adapter);
    // Signals already showing before the dispatch are not its outcome. A watch armed on a
    // document the action navigated to has no "before": everything there is news.
    if before_dispatch {
        let mut s = state.borrow_mut();
        let (epoch, post) = (s.nav_epoch, s.spec.postconditions.clone());
        let mut observe = |a: &Assertion| read_fact(a, epoch);
        s.stale_fail = cls::holds(&post.forbidden, &mut observe);
        s.dialogs_before = dom::document().map(|d| crate::asking::open(&d)).unwrap_or_default();
        s.stale_success = cls::holds(&post.success, &mut observe);
        if s.stale_success {
            s.stale_witnesses = witnesses(&post.success).into_iter().map(Witness::of).collect();
            s.stale_any = post.success.any.iter().map(|a| cls::check(a, &observe(a)).passed).collect();
        }
    }
    drop(looking);
    match after_arming() {
        Dispatch::Nothing => {
            finish(&state, Outcome::Pending, Vec::new());
            return promise;
        }
        Dispatch::Leaves => state.borrow_mut().leaving = true,
        Dispatch::Stays => {}
    }
    if let Ok(doc) = dom::document()
        && !before_dispatch
        && doc.ready_state() == "loading"
    {
        state.borrow_mut().parsing = true;
        let st = state.clone();
        let parsed = Closure::once_into_js(move || {
            st.borrow_mut().parsing = false;
            evaluate(&st);
        });
        let _ = doc.add_event_listener_with_callback("DOMContentLoaded", parsed.unchecked_ref());
    }
    let st = state.clone();
    let window = state.borrow().spec.window_ms;
    let end = Closure::once_into_js(move || {
        // The action began a navigation that has not replaced this document within the window:
        // what shows here says nothing about its outcome.
        if st.borrow().leaving {
            finish(&st, Outcome::Pending, Vec::new());
            return;
        }
        let (ambiguous, errors, evidence) = {
            let s = st.borrow();
            let _looking = shadows::Looking::at(s.roots.clone());
            let (epoch, post) = (s.nav_epoch, s.spec.postconditions.clone());
            let mut observe = |a: &Assertion| read_fact(a, epoch);
            let evidence = if cls::holds(&post.forbidden, &mut observe) {
                cls::forbidden_evidence(&post, &mut observe)
            } else {
                Vec::new()
            };
            (s.ambiguous_seen.clone(), s.last_errors.clone(), evidence)
        };
        // A failure signal still showing when the window closes is the outcome, even if it
        // was already there before the dispatch.
        if !evidence.is_empty() {
            finish(&st, Outcome::Fail, evidence);
        } else if let Some(why) = ambiguous {
            finish(&st, Outcome::Ambiguous, why);
        } else if !errors.is_empty() {
            finish(&st, Outcome::EvalError, errors);
        } else {
            finish(&st, Outcome::Pending, Vec::new());
        }
    });
    let _ = dom::window()
        .map(|w| w.set_timeout_with_callback_and_timeout_and_arguments_0(end.unchecked_ref(), window as i32));
    evaluate(&state);
    promise
}
