//! Collectors: `chat.*`, `form.*`, `overlay.*` and `core.*` facts, read through the adapter the
//! host chose for the page. Facts that describe a change ("an assistant turn was created", "a
//! stream started", "a form was submitted") are measured against a baseline taken when the watch is
//! armed, before the dispatch, and latched once seen. A watch or a check looks for the adapter's
//! selectors inside the page's open shadow roots too ([`crate::shadows`]).

use std::cell::{OnceCell, RefCell};

use nova_shared::adapter::Adapter;
use nova_shared::cls::Observed;
use nova_shared::facts::FactKey;
use nova_shared::selector::alternatives;
use serde_json::{Value, json};
use wasm_bindgen::prelude::*;

use crate::{dom, note, shadows};

/// Visible overlays: dialogs, modal layers, consent banners.
const OVERLAYS: &str = "[role=\"dialog\"]:visible, [role=\"alertdialog\"]:visible, dialog[open]:visible, \
                        [aria-modal=\"true\"]:visible, [id*=\"consent\" i]:visible, [class*=\"cookie-banner\" i]:visible";

#[derive(Default)]
struct State {
    adapter: Option<Adapter>,
    assistant_baseline: u32,
    stream_started: bool,
    submitted: bool,
    /// The banners already on screen when the watch was armed (a chat's earlier error
    /// messages): not news.
    banner_baseline: Vec<web_sys::Element>,
    listener: Option<Closure<dyn FnMut()>>,
}

thread_local! {
    static STATE: RefCell<State> = RefCell::new(State::default());
}

fn adapter() -> Adapter {
    STATE.with(|s| s.borrow().adapter.clone()).unwrap_or_else(nova_shared::adapter::generic)
}

/// A one-line text box, where a chat's composer is one the adapter does not name (NiceGUI's is
/// Quasar's `<input>`), as `nova.guarded_send_message` takes the first text box a read found.
const TEXT_BOX: &str = "input:not([type]):visible, input[type=text]:visible";

/// Most shadow roots a read looks for a chat in ([`signals`]).
const PAGE_TYPE_ROOTS: usize = 200;

fn count(sel: Option<&str>) -> u32 {
    sel.map_or(0, shadows::count)
}

/// One alternative of an adapter's selector list, visible matches only (adapters may already
/// say `:visible`; said twice it would be no selector at all, and the signal would never show).
fn shown(one: &str) -> String {
    let one = one.trim();
    if one.ends_with(":visible") { one.to_owned() } else { format!("{one}:visible") }
}

fn visible_banner(sel: Option<&str>) -> Option<web_sys::Element> {
    banners(sel).next()
}

/// The visible elements `sel` matches that say something, alternative by alternative (an
/// alternative is looked at only once those before it are used up).
fn banners(sel: Option<&str>) -> impl Iterator<Item = web_sys::Element> {
    sel.map(alternatives)
        .unwrap_or_default()
        .into_iter()
        .flat_map(|one| shadows::all(&shown(one)))
        .filter(|el| !note::text(el).is_empty())
}

fn stream_active(a: &Adapter) -> bool {
    visible(a.chat.streaming.as_deref())
}

/// Sets the adapter for checks (no baseline).
pub fn use_adapter(a: Option<Adapter>) {
    STATE.with(|s| {
        let mut s = s.borrow_mut();
        s.adapter = a;
        s.banner_baseline.clear();
    });
}

/// Arms the change facts: takes baselines before the dispatch and listens for submits.
pub fn arm(a: Option<Adapter>) {
    use_adapter(a);
    let ad = adapter();
    let baseline = count(ad.chat.assistant.as_deref());
    let banner = banners(ad.chat.error_banner.as_deref()).collect();
    STATE.with(|s| {
        let mut s = s.borrow_mut();
        s.assistant_baseline = baseline;
        s.banner_baseline = banner;
        s.stream_started = false;
        s.submitted = false;
        if s.listener.is_none()
            && let Ok(doc) = dom::document()
        {
            let on_submit = Closure::<dyn FnMut()>::new(|| STATE.with(|s| s.borrow_mut().submitted = true));
            let _ = doc.add_event_listener_with_callback_and_bool(
                "submit",
                on_submit.as_ref().unchecked_ref(),
                true,
            );
            s.listener = Some(on_submit);
        }
    });
}

/// The text of the first visible match of any alternative of `sel`.
fn text_of(sel: Option<&str>) -> Option<String> {
    let el = alternatives(sel?).into_iter().find_map(|one| shadows::first(&shown(one)))?;
    let text = match dom::as_select(&el) {
        Some(select) => select.selected_options().item(0).map(|o| o.text_content().unwrap_or_default()),
        None => el.text_content(),
    };
    Some(dom::collapse(&text.unwrap_or_default())).filter(|t| !t.is_empty())
}

fn visible(sel: Option<&str>) -> bool {
    sel.is_some_and(|s| alternatives(s).into_iter().any(|one| shadows::first(&shown(one)).is_some()))
}

/// Whether anything `sel` matches is in the document, showing or not (each alternative without
/// its `:visible`).
fn present(sel: Option<&str>) -> bool {
    sel.is_some_and(|s| {
        alternatives(s)
            .into_iter()
            .any(|one| shadows::first(one.trim().trim_end_matches(":visible")).is_some())
    })
}

/// `page.signOut`: `shown` when a sign-out control shows (the adapter's `login.loggedIn`, or
/// one named like it), `hidden` when one is in the document but does not show (in a closed
/// account menu), else `none`.
pub fn sign_out() -> &'static str {
    let a = adapter();
    let marks = a.login.logged_in.as_deref();
    if visible(marks) || crate::signout::shown() {
        "shown"
    } else if present(marks) || crate::signout::present() {
        "hidden"
    } else {
        "none"
    }
}

fn texts_of(sel: Option<&str>) -> Vec<String> {
    let Some(sel) = sel else { return Vec::new() };
    shadows::all(sel)
        .into_iter()
        .map(|n| dom::collapse(&n.text_content().unwrap_or_default()))
        .filter(|t| !t.is_empty())
        .collect()
}

/// Plan tiers of the core vocabulary, found in a plan label.
fn tier(label: &str) -> Option<&'static str> {
    let lower = label.to_lowercase();
    ["enterprise", "team", "pro", "free"]
        .into_iter()
        .find(|t| lower.split(|c: char| !c.is_alphanumeric()).any(|w| w == *t))
}

/// Whether the page paints dark: the root's `color-scheme`, else the luminance of the body's
/// background.
fn theme() -> Option<&'static str> {
    let win = web_sys::window()?;
    let doc = win.document()?;
    let root = doc.document_element()?;
    for attr in ["data-theme", "data-color-mode", "data-bs-theme"] {
        if let Some(v) = root.get_attribute(attr).map(|v| v.to_lowercase()) {
            if v.contains("dark") {
                return Some("dark");
            }
            if v.contains("light") {
                return Some("light");
            }
        }
    }
    let class = root.class_name().to_lowercase();
    if class.split_whitespace().any(|c| c == "dark" || c == "theme-dark" || c == "dark-mode") {
        return Some("dark");
    }
    let body = doc.body()?;
    let bg = win.get_computed_style(&body).ok()??.get_property_value("background-color").ok()?;
    let nums: Vec<f64> = bg
        .trim_start_matches(|c: char| !c.is_ascii_digit())
        .split([',', ')', ' '])
        .filter_map(|p| p.trim().parse().ok())
        .collect();
    match nums.as_slice() {
        // Transparent: the canvas is the browser's default (light) unless the page says otherwise.
        [_, _, _, a] if *a == 0.0 => Some("light"),
        [r, g, b, ..] => Some(if 0.2126 * r + 0.7152 * g + 0.0722 * b < 128.0 { "dark" } else { "light" }),
        _ => None,
    }
}

/// A `core.*` signal, read from what the page visibly shows. Null when the page does not show it.
/// `password` holds whether a password field shows, looked up once for all the signals of one
/// read (it is a query of the whole document) and only by the signals that need it.
///
/// A sign-out control wins over a password field: a signed-in person is asked for passwords too
/// (changing one, creating someone else's account), and a sign-in page never offers to sign out.
fn core(a: &Adapter, path: &str, password: &OnceCell<bool>) -> Value {
    let signed_in = OnceCell::new();
    let sign_out_shown =
        || *signed_in.get_or_init(|| visible(a.login.logged_in.as_deref()) || crate::signout::shown());
    let password_shown = || *password.get_or_init(|| visible(a.login.password.as_deref()));
    match path {
        "login_state" => {
            if sign_out_shown() {
                json!("logged_in")
            } else if password_shown() {
                json!("logged_out")
            } else {
                Value::Null
            }
        }
        "page.type" => {
            let path = web_sys::window()
                .and_then(|w| w.location().pathname().ok())
                .unwrap_or_default()
                .to_lowercase();
            if password_shown() && !sign_out_shown() {
                json!("login")
            } else if path.contains("settings") || path.contains("preferences") {
                json!("settings")
            } else if visible(a.chat.messages.as_deref())
                && (visible(a.chat.composer.as_deref()) || visible(Some(TEXT_BOX)))
            {
                // A text box alone is no chat (a ticket's comment box, a page's body): a
                // conversation shows too.
                json!("chat")
            } else {
                Value::Null
            }
        }
        "ui.language" => dom::document()
            .ok()
            .and_then(|d| d.document_element())
            .and_then(|r| r.get_attribute("lang"))
            .filter(|l| !l.trim().is_empty())
            .map_or(Value::Null, |l| json!(l.trim())),
        "ui.theme" => theme().map_or(Value::Null, |t| json!(t)),
        "model.active" => text_of(a.picker.model_selected.as_deref())
            .map(|t| t.trim_start_matches("Model:").trim().to_owned())
            .map_or(Value::Null, |t| json!(t)),
        "models.available" => {
            let all = texts_of(a.picker.model_options.as_deref());
            if all.is_empty() { Value::Null } else { json!(all) }
        }
        "account.display_name" => {
            text_of(a.account.display_name.as_deref()).map_or(Value::Null, |t| json!(t))
        }
        "account.email" => text_of(a.account.email.as_deref()).map_or(Value::Null, |t| json!(t)),
        "plan.label" => text_of(a.account.plan.as_deref()).map_or(Value::Null, |t| json!(t)),
        "plan.tier" => {
            text_of(a.account.plan.as_deref()).and_then(|l| tier(&l)).map_or(Value::Null, |t| json!(t))
        }
        "subscription.active" => text_of(a.account.plan.as_deref())
            .and_then(|l| tier(&l))
            .map_or(Value::Null, |t| json!(t != "free")),
        // Not visible in a generic way: null until a site adapter or an OK claim supplies them.
        _ => Value::Null,
    }
}

/// The `core.*` signals the page shows, read through `a` (those it does not show are left out),
/// in the document; the page type also in `roots`, the open shadow roots the read's walk entered
/// (the first [`PAGE_TYPE_ROOTS`]), when the document does not say it.
pub fn signals(a: &Adapter, roots: &[web_sys::ShadowRoot]) -> std::collections::BTreeMap<String, Value> {
    let password = OnceCell::new();
    let mut found: std::collections::BTreeMap<String, Value> = nova_shared::facts::CORE_FACTS
        .iter()
        .map(|path| (format!("core.{path}"), core(a, path, &password)))
        .filter(|(_, v)| !v.is_null())
        .collect();
    // A chat drawn inside a web component (Deep Chat) shows its conversation in a shadow root.
    // Only the page type is looked for there, so a page of many components pays a few queries
    // per root and read, not one per signal.
    if !roots.is_empty() && !found.contains_key("core.page.type") {
        let roots = roots.iter().take(PAGE_TYPE_ROOTS).cloned().collect();
        let _looking = shadows::Looking::at(std::rc::Rc::new(roots));
        let kind = core(a, "page.type", &password);
        if !kind.is_null() {
            found.insert("core.page.type".into(), kind);
        }
    }
    found
}

/// Reads a `chat.*`, `form.*`, `overlay.*` or `core.*` fact.
pub fn read(key: &FactKey) -> Observed {
    let a = adapter();
    match (key.namespace.as_str(), key.path.as_str()) {
        ("chat", "composer") => Ok(a
            .chat
            .composer
            .as_deref()
            .and_then(shadows::first)
            .map_or(Value::Null, |e| json!(dom::describe(&e)))),
        ("chat", "messageCount") => Ok(json!(count(a.chat.messages.as_deref()))),
        ("chat", "assistantTurnCreated") => {
            let baseline = STATE.with(|s| s.borrow().assistant_baseline);
            Ok(json!(count(a.chat.assistant.as_deref()) > baseline))
        }
        ("chat", "streamActive") => Ok(json!(stream_active(&a))),
        ("chat", "streamActive.started") => {
            let now = stream_active(&a);
            Ok(json!(STATE.with(|s| {
                let mut s = s.borrow_mut();
                s.stream_started |= now;
                s.stream_started
            })))
        }
        ("chat", "errorBanner") => {
            // A banner that was already showing when the action started is not its outcome, nor
            // is one that carries a success message: Bootstrap, Material UI, Ant Design, Chakra
            // and React-Toastify mark their success alerts role="alert" too.
            let shown = banners(a.chat.error_banner.as_deref());
            let fresh: Vec<_> =
                STATE.with(|s| shown.filter(|b| !s.borrow().banner_baseline.contains(b)).collect());
            let successes: Vec<_> =
                if fresh.is_empty() { Vec::new() } else { banners(a.form.success.as_deref()).collect() };
            let banner = fresh.into_iter().find(|b| !successes.iter().any(|s| b.contains(Some(s))));
            Ok(banner.map_or(Value::Null, |b| json!(note::text(&b))))
        }
        ("form", "submitted") => Ok(json!(STATE.with(|s| s.borrow().submitted))),
        ("form", "validationErrors") => Ok(json!(count(a.form.validation_error.as_deref()))),
        ("form", "errorNote") => {
            Ok(visible_banner(a.form.error_note.as_deref()).map_or(Value::Null, |e| json!(note::text(&e))))
        }
        ("overlay", "present") => Ok(json!(shadows::count(OVERLAYS) > 0)),
        ("overlay", "count") => Ok(json!(shadows::count(OVERLAYS))),
        ("overlay", "text") => {
            Ok(visible_banner(Some(OVERLAYS)).map_or(Value::Null, |e| json!(note::text(&e))))
        }
        ("core", path) => Ok(core(&a, path, &OnceCell::new())),
        (ns, path) => Err(format!("no collector for `{ns}.{path}`")),
    }
}
