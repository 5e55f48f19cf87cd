//! Awareness signals (docs/gates.md and the README's "Awareness signals"): what on a page belongs to the person or
//! happens outside the page DOM, where MCP tools cannot see it.
//!
//! # Layout
//! - [`overlay`]: sign-in (SSO), payment, consent and modal sign-in overlays
//!   (`identityOverlayWarning`), which feed the `safety.identity_overlay` gate on the host.
//! - [`autofill`]: fields the browser's password manager or autofill decorates
//!   (`autofillWarning`, `autofillPopupWarning`).
//! - [`dialogs`]: inline handlers calling alert / confirm / prompt and an inline
//!   `onbeforeunload` (`nativeDialogWarning`).
//! - [`files`]: clicks that would open a native file chooser (`fileInputRisk`).
//! - [`frameworks`]: front-end frameworks by their DOM markers (`frameworkHints`).
//! - [`page_text`]: texts of bot challenges and geo blocks (for `pageState`).
//!
//! Perceive's cost is its one walk over the page; these checks add a few `querySelectorAll`
//! calls and a handful of point probes, never a second walk. A content script runs in an
//! isolated world and cannot see page JavaScript, so everything rests on the DOM. The rules
//! themselves (URLs, autocomplete tokens, phrases) are pure functions with native unit tests.

pub mod autofill;
pub mod dialogs;
pub mod files;
pub mod frameworks;
pub mod overlay;
pub mod page_text;

pub use autofill::{autofill_fields, autofill_popup};
pub use dialogs::{native_dialog_risk, native_dialogs};
pub use files::file_input_risk;
pub use frameworks::frameworks;
pub use overlay::identity_overlays;
pub use page_text::{challenge_text, geo_blocked_text};

use nova_shared::selector::format_ref;
use web_sys::{Document, Element};

use crate::dom;
use crate::dom::clip;

/// Password fields.
const PASSWORD: &str = "input[type=\"password\" i]";
/// Controls: what a click or a person answers with.
const CONTROLS: &str = "button, [role=\"button\"], a[href], input[type=\"button\"], input[type=\"submit\"]";

/// Every element matching `css` in a document.
fn all(root: &Document, css: &str) -> Vec<Element> {
    root.query_selector_all(css)
        .map(|l| {
            (0..l.length()).filter_map(|i| l.item(i)).filter_map(|n| dom::as_element(&n).cloned()).collect()
        })
        .unwrap_or_default()
}

/// Every element matching `css` inside `root`.
fn all_in(root: &Element, css: &str) -> Vec<Element> {
    root.query_selector_all(css)
        .map(|l| {
            (0..l.length()).filter_map(|i| l.item(i)).filter_map(|n| dom::as_element(&n).cloned()).collect()
        })
        .unwrap_or_default()
}

/// The first element matching `css` inside `root`.
fn first_in(root: &Element, css: &str) -> Option<Element> {
    root.query_selector(css).ok().flatten()
}

/// The element's perceive ref (`e12`), assigned if it has none.
fn ref_of(el: &Element) -> String {
    format_ref(dom::ref_for(el))
}
