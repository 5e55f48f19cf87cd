//! What page-side code reports back: the compact page model, text reads and action reports.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The compact model `nova.perceive` returns.
///
/// Designed for tokens: one short line per interactive element (`ref role "name"` plus a few
/// state words) instead of a nested accessibility tree; every element keeps a ref usable as a
/// selector.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct PageModel {
    /// Document URL.
    pub url: String,
    /// Document title.
    pub title: String,
    /// `document.readyState`.
    pub ready_state: String,
    /// Compact page condition: `ok`, `login_required`, `consent_required`, `bot_challenge`,
    /// `geo_blocked`.
    pub page_state: String,
    /// Viewport and scroll position.
    pub viewport: Viewport,
    /// Interactive elements, one compact line each: `e12 button "Send"`.
    pub elements: Vec<String>,
    /// Landmarks: `main`, `navigation "Primary"`, ...
    pub landmarks: Vec<String>,
    /// Forms: `form f1 "Sign in": e3 e4 e5`.
    pub forms: Vec<String>,
    /// Visible text (hidden and off-screen text left out), whitespace collapsed.
    pub text: String,
    /// What was cut to respect the size bounds.
    pub truncated: Truncation,
    /// Characters of hidden text taken out of `text` (Unicode tags and runs of variation
    /// selectors: [`crate::invisible`]). The host reports them in `promptInjectionWarning` and
    /// leaves this out of the reply.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub hidden_chars: u32,
    /// Visible identity, SSO, payment or consent overlays (absent when none is showing).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub identity_overlay_warning: Option<IdentityOverlayWarning>,
    /// Visible fields the browser's password manager or autofill may fill (absent when none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub autofill_warning: Option<AutofillWarning>,
    /// Inline handlers that open native dialogs, or an inline `onbeforeunload` (absent when none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub native_dialog_warning: Option<NativeDialogWarning>,
    /// Front-end frameworks recognised by their DOM markers, with how to type into their inputs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub framework_hints: Vec<FrameworkHint>,
    /// The browser asks for an HTTP sign-in in a dialog of its own, for the tab's document or a
    /// request its page made (absent when it does not). Added by the extension's background,
    /// which alone sees it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http_sign_in: Option<crate::sign_in::HttpSignIn>,
    /// The `core.*` signals the page shows (`core.login_state`: `logged_in`, ...), read through
    /// the adapter the request carried; none without one. The host files them as operational
    /// knowledge and leaves them out of the reply.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub signals: std::collections::BTreeMap<String, serde_json::Value>,
}

/// `identityOverlayWarning`: overlays that belong to the person (sign-in, payment, consent).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct IdentityOverlayWarning {
    /// What was detected, strongest evidence first.
    pub items: Vec<OverlayItem>,
    /// `ask_user` when any item is `sso`, `payment` or `identity`; `dismiss_or_ask` for consent
    /// banners only.
    pub recommended_action: String,
    /// What the agent should do, in one sentence.
    pub message: String,
}

/// One detected overlay.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct OverlayItem {
    /// `sso`, `payment`, `consent` or `identity` (a site's own modal sign-in).
    pub kind: String,
    /// Who runs it: `Google`, `Stripe`, `OneTrust`, ... or `site` for the page's own.
    pub provider: String,
    /// The provider's origin (`https://accounts.google.com`), else the page's origin.
    pub origin: String,
    /// 0..1: about 0.9 for a known provider origin or consent platform, lower for text and
    /// shape heuristics.
    pub confidence: f64,
    /// Whether it blocks the page: `aria-modal`, a modal dialog, or it covers the viewport centre.
    pub blocking: bool,
    /// The observation it rests on, e.g. `iframe src accounts.google.com`.
    pub evidence: String,
}

/// `autofillWarning`: fields a password manager or autofill may fill or decorate with
/// suggestion popups that page scripts (and so MCP tools) cannot see.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct AutofillWarning {
    /// The fields, in document order.
    pub fields: Vec<AutofillField>,
    /// What to expect.
    pub message: String,
}

/// One autofill-sensitive field.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct AutofillField {
    /// The field's perceive ref (`e12`), usable as a selector.
    pub selector: String,
    /// `login_identifier`, `password`, `new_password`, `one_time_code`, `cc_number`, `cc_exp`,
    /// `cc_csc` or `address`.
    pub autofill_field_role: String,
}

/// `nativeDialogWarning` on `nova.perceive`: the page can open alert / confirm / prompt or a
/// leave-page dialog, which the person has to answer outside MCP visibility.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct NativeDialogWarning {
    /// What may happen and what to do.
    pub message: String,
    /// The body has an inline `onbeforeunload`: leaving the page may ask for confirmation.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub before_unload: bool,
    /// Refs of visible elements (at most 5) whose inline handlers call alert, confirm or prompt.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub elements: Vec<String>,
}

/// One `frameworkHints[]` entry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct FrameworkHint {
    /// `react`, `next`, `vue`, `nuxt`, `angular` or `svelte`.
    pub framework: String,
    /// The DOM marker seen, e.g. `#__next` or `[ng-version=17.3.0]`.
    pub evidence: String,
    /// How to interact with its controlled inputs.
    pub hint: String,
}

/// Viewport geometry in CSS pixels.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Viewport {
    /// Viewport width.
    pub width: u32,
    /// Viewport height.
    pub height: u32,
    /// Vertical scroll offset.
    pub scroll_y: u32,
    /// Full document height.
    pub document_height: u32,
}

/// Truncation notes.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Truncation {
    /// True when either list or the text was cut.
    pub any: bool,
    /// Interactive elements found in total (listed or not).
    pub elements_total: u32,
    /// Visible text characters found in total.
    pub text_chars_total: u32,
}

/// Result of `page.readText`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct TextRead {
    /// Document URL.
    pub url: String,
    /// Document title.
    pub title: String,
    /// Visible text, whitespace collapsed.
    pub text: String,
    /// Whether `text` was cut at the requested bound.
    pub truncated: bool,
    /// Visible characters in total.
    pub total_chars: u32,
    /// Characters of hidden text taken out of `text`, as [`PageModel::hidden_chars`].
    #[serde(default, skip_serializing_if = "is_zero")]
    pub hidden_chars: u32,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// Result of `page.click` and `page.type`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ActionReport {
    /// True only once the page was touched (events dispatched to the element).
    pub action_dispatched: bool,
    /// URL before the action.
    pub url_before: String,
    /// Where the action left the person: the URL right after dispatch, or, when the action began
    /// a navigation away from the document, the URL of the document it landed on.
    pub url_after: String,
    /// The destination of a navigation away from the document that the action began (a link,
    /// a form submission, a script setting `location`), as the page announced it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub navigation_started: Option<String>,
    /// True when that navigation committed a new document before the reply (`urlAfter` is then
    /// the new document's URL, after redirects).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub navigated: bool,
    /// Whether the new document finished loading before the reply (only after a navigation).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load_complete: Option<bool>,
    /// The tab's navigation epoch once the new document committed (only after a navigation).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nav_epoch: Option<u32>,
    /// A short description of the element acted on: `button "Send"`.
    pub element: String,
    /// What the element looks like after the action (`value` for inputs, text for editors),
    /// left empty for password fields.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub readback: Option<String>,
    /// True when the element is a password field (the value is never reported or stored).
    pub sensitive: bool,
    /// Which input path was used: `native_input`, `contenteditable`, `click`.
    pub method: String,
    /// Non-fatal observations, e.g. `value shorter than typed (maxlength)`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// The field acted on is one the browser's autofill or password manager decorates: a
    /// suggestion popup may have opened outside the page DOM, invisible to MCP tools.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub autofill_popup_warning: Option<String>,
    /// The autofill role of that field (`login_identifier`, `password`, `cc_number`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub autofill_field_role: Option<String>,
    /// The field kept less than was typed (never reported for password fields).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub truncation_warning: Option<TruncationWarning>,
    /// `medium` when the clicked element contains or operates a file input, so the click may
    /// open a native file chooser. (`high`, a file input or its label, is refused before
    /// dispatch with `file_input_click`.)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file_input_risk: Option<String>,
    /// Why the click was classified as a file-input risk.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file_input_risk_reason: Option<String>,
    /// A selector for the file input, to use with `nova.file_upload` instead.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file_upload_selector_hint: Option<String>,
    /// The element (or an ancestor) has an inline handler calling alert / confirm / prompt, or a
    /// link was clicked on a page with an inline `onbeforeunload`: a native dialog may be
    /// waiting for the person.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub native_dialog_warning: Option<String>,
    /// The page the action began to open asks for an HTTP sign-in in the browser's own dialog
    /// (or asked, and the browser gave up on it): the page did not open. Added by the
    /// extension's background, which alone sees it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http_sign_in: Option<crate::sign_in::HttpSignIn>,
}

/// `truncationWarning`: the field stored fewer characters than were typed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct TruncationWarning {
    /// Characters the value should have had.
    pub requested: u32,
    /// Characters it has.
    pub stored: u32,
    /// The field's `maxlength`, when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_length: Option<u32>,
}

/// The message of a refused click on a file input (`file_input_click`); it names the selector
/// for `nova.file_upload`, which [`file_upload_hint`] reads back on the host.
pub fn file_input_click_message(what: &str, why: &str, hint: &str) -> String {
    format!(
        "{what} {why}: clicking it would open a native file chooser outside MCP visibility, so nothing was clicked; use nova.file_upload with selector `{hint}`"
    )
}

/// The selector named by a [`file_input_click_message`].
pub fn file_upload_hint(message: &str) -> Option<&str> {
    let (_, rest) = message.rsplit_once("nova.file_upload with selector `")?;
    rest.strip_suffix('`')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_upload_hint_survives_the_refusal_message() {
        let m = file_input_click_message("file \"Photo\"", "is a file input", "#photo");
        assert_eq!(file_upload_hint(&m), Some("#photo"));
        let odd = file_input_click_message("file", "is a file input", "input[name=\"a`b\"]");
        assert_eq!(file_upload_hint(&odd), Some("input[name=\"a`b\"]"));
        assert_eq!(file_upload_hint("element_not_found"), None);
    }

    #[test]
    fn awareness_fields_are_optional_and_camel_case() {
        let golden = r#"{"actionDispatched":true,"urlBefore":"u","urlAfter":"u","element":"textbox","readback":"abc","sensitive":false,"method":"native_input","autofillPopupWarning":"w","autofillFieldRole":"login_identifier","truncationWarning":{"requested":5,"stored":3,"maxLength":3}}"#;
        let r: ActionReport = serde_json::from_str(golden).expect("parse");
        assert_eq!(
            r.truncation_warning,
            Some(TruncationWarning { requested: 5, stored: 3, max_length: Some(3) })
        );
        assert_eq!(serde_json::to_string(&r).expect("serialise"), golden);
        let plain = r#"{"actionDispatched":false,"urlBefore":"","urlAfter":"","element":"","sensitive":false,"method":"click"}"#;
        let r: ActionReport = serde_json::from_str(plain).expect("parse");
        assert_eq!(serde_json::to_string(&r).expect("serialise"), plain);
        assert!(serde_json::from_str::<ActionReport>(&plain.replace("}", r#","bogus":1}"#)).is_err());
    }

    #[test]
    fn an_overlay_warning_has_the_seed_shape() {
        let golden = r#"{"items":[{"kind":"sso","provider":"Google","origin":"https://accounts.google.com","confidence":0.9,"blocking":true,"evidence":"link accounts.google.com"}],"recommendedAction":"ask_user","message":"m"}"#;
        let w: IdentityOverlayWarning = serde_json::from_str(golden).expect("parse");
        assert_eq!(serde_json::to_string(&w).expect("serialise"), golden);
    }
}
