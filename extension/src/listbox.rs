//! Choosing an option in a picker. A `<select>` gets it at once; any other picker (a listbox,
//! a menu, an input combobox) is opened with a click, then its option is clicked as a person
//! would. Frameworks that update the page after a click's handlers have returned (Svelte and
//! Vue render a microtask or a frame later) show the list only then, so the option is waited
//! for, briefly, before the guarded choice is dispatched.

use nova_shared::page::ActionReport;
use nova_shared::protocol::{ClickParams, SelectParams};
use nova_shared::reason;
use web_sys::Element;

use crate::actions;
use crate::dom::{self, Failure, fail};

/// How long an opened picker may take to show the option asked for (ms).
pub const OPEN_WAIT_MS: u32 = 1500;
/// How often a picker being opened is looked at (ms).
const POLL_MS: u32 = 50;
/// What an option of an opened picker is: its role's, or Selectize's markup
/// ([`crate::selectize::OPTIONS`]).
fn options() -> String {
    format!("[role=\"option\"], [role=\"menuitem\"], [role=\"menuitemradio\"], {}", crate::selectize::OPTIONS)
}

/// The visible option (matched by `options`, see [`options`]) named `wanted` (exactly, else
/// the first containing it, case aside).
fn find(options: &str, wanted: &str) -> Option<Element> {
    let list = dom::document().ok()?.query_selector_all(options).ok()?;
    let visible: Vec<Element> = (0..list.length())
        .filter_map(|i| list.item(i))
        .filter_map(|n| dom::as_element(&n).cloned())
        .filter(dom::is_visible)
        .collect();
    let found = actions::pick(
        visible.iter().enumerate().map(|(i, e)| (i, e.text_content().unwrap_or_default())),
        wanted,
    )?;
    visible.into_iter().nth(found)
}

/// Opens the picker `p.selector` with a click, unless it is a `<select>`, and waits until an
/// option named `p.option` shows, at most [`OPEN_WAIT_MS`]. Opening is not the guarded action:
/// the choice is, which [`choose`] dispatches once the watch is armed.
pub async fn open(p: &SelectParams) -> Result<(), Failure> {
    let el = dom::resolve(&p.selector)?;
    if dom::as_select(&el).is_some() {
        return Ok(());
    }
    actions::click(&ClickParams {
        target: p.target.clone(),
        frame_id: p.frame_id,
        selector: p.selector.clone(),
        guarded: true,
        double_click: false,
    })?;
    let options = options();
    for _ in 0..OPEN_WAIT_MS / POLL_MS {
        if find(&options, &p.option).is_some() {
            break;
        }
        crate::settle::sleep(f64::from(POLL_MS)).await;
    }
    Ok(())
}

/// `page.act` with a select action: a `<select>` gets its option at once
/// ([`actions::choose`]); any other picker was opened by [`open`] and its option is clicked.
pub fn select(p: &SelectParams) -> Result<ActionReport, Failure> {
    let el = dom::resolve(&p.selector)?;
    let what = dom::describe(&el);
    let url_before = dom::href();
    match dom::as_select(&el) {
        Some(select) => actions::choose(select, &el, &p.option, what, url_before),
        None => choose(&p.option, what, url_before),
    }
}

/// Clicks the option named `wanted` of the picker [`open`] opened (`what` describes the
/// picker).
fn choose(wanted: &str, what: String, url_before: String) -> Result<ActionReport, Failure> {
    let option = find(&options(), wanted).ok_or_else(|| {
        let m = format!("no visible option \"{wanted}\" within {OPEN_WAIT_MS} ms of opening {what}");
        fail(reason::ELEMENT_NOT_FOUND, m)
    })?;
    if dom::is_disabled(&option) {
        return Err(fail(reason::ELEMENT_DISABLED, format!("option \"{wanted}\" is disabled")));
    }
    let (x, y) = actions::actionable(&option)?;
    actions::press(&option, x, y);
    Ok(ActionReport {
        action_dispatched: true,
        url_before,
        url_after: dom::href(),
        element: format!("{what} -> {}", dom::describe(&option)),
        readback: None,
        sensitive: false,
        method: "select".into(),
        warnings: Vec::new(),
        ..Default::default()
    })
}
