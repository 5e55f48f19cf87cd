//! The messages of a guarded action: `page.check` (assertions now), `page.act` (arm the
//! postcondition watch, then dispatch) and `page.watch` (its verdict), and the two actions
//! they guard, `page.click` and `page.type`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::FrameId;

/// `page.click` parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ClickParams {
    /// `active` or a target id.
    pub target: String,
    /// Frame to work in (a `webNavigation` frame id); the top frame when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frame_id: Option<FrameId>,
    /// Selector or perceive ref.
    pub selector: String,
    /// Set when a transition contract guards the action; without it a commit-point element
    /// (submit, send, login, pay, delete, confirm) is refused before dispatch.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub guarded: bool,
    /// Press twice, a double-click: the page gets the first press, then, [`DOUBLE_CLICK_GAP_MS`]
    /// later, the second and `dblclick`. Refused on a commit point, which would commit twice.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub double_click: bool,
}

impl ClickParams {
    /// One click in the top frame that a transition contract guards, as the guarded tools
    /// press their submit and confirm buttons.
    pub fn guarded(target: String, selector: String) -> Self {
        Self { target, frame_id: None, selector, guarded: true, double_click: false }
    }
}

/// The time between the two presses of a double-click, as a person's hand leaves it: pages
/// that time the presses themselves (Node-RED opens a node's editor only when the second
/// mousedown comes later than the first, and within 650 ms) see a double-click, and the
/// shortest double-click time a system lets a person set (200 ms) is not reached.
pub const DOUBLE_CLICK_GAP_MS: u32 = 80;

/// `page.type` parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct TypeParams {
    /// `active` or a target id.
    pub target: String,
    /// Frame to work in (a `webNavigation` frame id); the top frame when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frame_id: Option<FrameId>,
    /// Selector or perceive ref.
    pub selector: String,
    /// Set when a transition contract guards the action; without it a commit-point element
    /// (submit, send, login, pay, delete, confirm) is refused before dispatch.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub guarded: bool,
    /// Text to insert.
    pub text: String,
    /// Replace the current content instead of appending.
    pub clear: bool,
    /// Press Enter after typing.
    pub press_enter: bool,
}

/// `page.check` parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct CheckParams {
    /// `active` or a target id.
    pub target: String,
    /// Frame (top frame when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frame_id: Option<FrameId>,
    /// The assertions to evaluate.
    pub set: crate::cls::AssertionSet,
    /// Selectors the `chat.*` / `form.*` collectors use.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub adapter: Option<crate::adapter::Adapter>,
    /// The tab's navigation epoch, for `page.navEpoch` (filled by the background).
    #[serde(default)]
    pub nav_epoch: u32,
}

/// `page.check` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct CheckResult {
    /// The set's verdict.
    pub verdict: crate::cls::Verdict,
    /// Assertions that failed or could not be evaluated.
    pub failed_assertions: Vec<crate::cls::AssertionResult>,
}

/// What to watch after dispatch.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct WatchSpec {
    /// The postconditions.
    pub postconditions: crate::cls::Postconditions,
    /// How long to watch, ms.
    pub window_ms: u32,
    /// How long success must hold, ms.
    pub hold_ms: u32,
    /// Selectors the `chat.*` / `form.*` collectors use.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub adapter: Option<crate::adapter::Adapter>,
}

/// The action `page.act` dispatches.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub enum PageAction {
    /// A click.
    Click(ClickParams),
    /// Typing.
    Type(TypeParams),
    /// Choosing an option of a `<select>` or of a listbox picker.
    Select(SelectParams),
}

/// Choosing an option: a `<select>` gets the option selected (with `input`/`change`); any other
/// picker is clicked open and the visible `[role=option]` named `option` is clicked.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct SelectParams {
    /// `active` or a target id.
    pub target: String,
    /// Frame (top frame when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frame_id: Option<FrameId>,
    /// The picker: a `<select>`, or the control that opens the option list.
    pub selector: String,
    /// The option's visible text (case-insensitive; an exact match wins over a partial one).
    pub option: String,
}

/// `page.act` parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ActParams {
    /// `active` or a target id.
    pub target: String,
    /// Frame (top frame when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frame_id: Option<FrameId>,
    /// What to do.
    pub action: PageAction,
    /// What to watch for.
    pub watch: WatchSpec,
    /// Names the armed watch for the following `page.watch`.
    pub watch_id: String,
    /// The tab's navigation epoch (filled by the background).
    #[serde(default)]
    pub nav_epoch: u32,
}

/// `page.watch` parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct WatchParams {
    /// `active` or a target id.
    pub target: String,
    /// Frame (top frame when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frame_id: Option<FrameId>,
    /// What to watch for (used when no watch with this id is armed in the document).
    pub watch: WatchSpec,
    /// The watch armed by `page.act`.
    pub watch_id: String,
    /// The tab's navigation epoch (filled by the background).
    #[serde(default)]
    pub nav_epoch: u32,
}

/// What the postcondition watch concluded.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct WatchResult {
    /// The final classification.
    pub outcome: crate::cls::Outcome,
    /// Assertions behind a failure, an ambiguity or an evaluation error.
    pub failed_assertions: Vec<crate::cls::AssertionResult>,
    /// What proved a success: the success assertions that held as it was reached.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub held_assertions: Vec<crate::cls::AssertionResult>,
    /// Time from arming to the verdict, ms.
    pub elapsed_ms: u32,
    /// Whether the verdict was reached on a new document after the action navigated.
    #[serde(default)]
    pub navigated: bool,
    /// Whether success was seen at some point without holding for the stability time.
    #[serde(default)]
    pub success_seen: bool,
    /// The URL of the document the verdict was reached on: where the action landed, after
    /// redirects and client-side routing.
    #[serde(default)]
    pub url: Option<String>,
    /// When nothing was proven: what a dialog the page opened after the action, and still
    /// shows, asks (its name, else its text): the page waits for the person's answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub asking: Option<String>,
}
