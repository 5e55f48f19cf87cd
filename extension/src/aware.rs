//! Awareness signals (docs/gates.md and the README's "Awareness signals"): what on a page belongs
//! to the person or happens outside the page DOM, where MCP tools cannot see it.
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
//! - `query`: the selectors and queries the checks share.
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
mod query;

pub use autofill::{autofill_fields, autofill_popup};
pub use dialogs::{native_dialog_risk, native_dialogs};
pub use files::{FileRisk, file_input_risk};
pub use frameworks::frameworks;
pub use overlay::identity_overlays;
pub use page_text::{challenge_text, geo_blocked_text};
