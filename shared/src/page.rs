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
}

/// Result of `page.click` and `page.type`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ActionReport {
    /// True only once the page was touched (events dispatched to the element).
    pub action_dispatched: bool,
    /// URL before the action.
    pub url_before: String,
    /// URL right after the action.
    pub url_after: String,
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
}
