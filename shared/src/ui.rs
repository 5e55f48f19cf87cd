//! What the extension's pages (popup, options, permission prompt) and the hub say to each other.
//!
//! The pages talk to the background worker (`chrome.runtime.sendMessage`), which forwards to the
//! hub as `ui.*` requests over the native port: the hub keeps the person's controls in its
//! store, so they survive browser and hub restarts. The hub pushes `ui.prompt.*` events when an
//! agent asks for permission.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Method names (browser -> hub requests and hub -> browser events).
pub mod method {
    /// Request: everything the popup shows ([`Status`]).
    pub const STATUS: &str = "ui.status";
    /// Request: engage the emergency stop (`{}` -> [`super::StopState`]).
    pub const STOP: &str = "ui.stop";
    /// Request: release the emergency stop (`{}` -> [`super::StopState`]).
    pub const RESUME: &str = "ui.resume";
    /// Request: what the options page edits ([`super::SettingsView`]).
    pub const SETTINGS: &str = "ui.settings";
    /// Request: change settings ([`super::SettingsUpdate`] -> [`super::SettingsView`]).
    pub const SETTINGS_SET: &str = "ui.settings.set";
    /// Request: decisions of `nova.permission_prompt`, newest first (`[]` of [`super::Prompt`]).
    pub const APPROVALS: &str = "ui.approvals";
    /// Request: the person's answer to a prompt ([`super::Answer`] -> [`super::Prompt`]).
    pub const ANSWER: &str = "ui.prompt.answer";
    /// Request: an activity report of the last days (`{days?: 1..=90, default 7}` ->
    /// `{url, calls}`, a one-time loopback URL the browser opens).
    pub const REPORT: &str = "ui.report";
    /// Event: an agent asks the person ([`super::Prompt`]).
    pub const PROMPT_OPEN: &str = "ui.prompt.open";
    /// Event: a prompt was answered or timed out (`{promptId, decision}`).
    pub const PROMPT_CLOSED: &str = "ui.prompt.closed";
    /// Event: the stop was engaged or released ([`super::StopState`]).
    pub const STOP_CHANGED: &str = "ui.stop.changed";
}

/// Action groups of the domain policy, as the options page offers them.
pub const ACTION_GROUPS: &[&str] = &["default", "read", "navigate", "interact"];

/// The emergency stop as the person sees it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StopState {
    /// Whether agents are stopped.
    pub engaged: bool,
    /// Who engaged it: `popup`, `cli`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub by: Option<String>,
    /// When, ms since the epoch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at_ms: Option<i64>,
}

/// One connected MCP session.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Agent {
    /// MCP session id.
    pub session_id: String,
    /// The client's name from `initialize` (`claude-code`, `python-agent`, ...).
    pub client: String,
    /// The `agentId`s this session used (`default` when it named none).
    pub agent_ids: Vec<String>,
    /// Tabs its agents hold.
    pub tabs: Vec<HeldTab>,
    /// Tool calls so far.
    pub calls: u64,
    /// Last call, ms since the epoch (0: none yet).
    pub last_call_at_ms: i64,
}

/// A tab an agent holds.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HeldTab {
    /// Tab id.
    pub target_id: String,
    /// The holder.
    pub agent_id: String,
    /// Tab title (empty when the tab is gone).
    pub title: String,
    /// Tab URL.
    pub url: String,
}

/// One line of the activity feed.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Activity {
    /// When the call started, ms since the epoch.
    pub at_ms: i64,
    /// Agent.
    pub agent_id: String,
    /// Tool.
    pub tool: String,
    /// Tab, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_id: Option<String>,
    /// URL the call ended on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// The badge: `verified` (a guarded action proved its outcome), `failed` (proved it did
    /// not happen), `unverified` (outcome unknown), `pending` (still watching), `blocked` (a gate
    /// stopped it), `error`, `ok` (an unguarded call that ran).
    pub badge: String,
    /// Reason code of a block or failure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason_code: Option<String>,
}

/// A permission prompt and its decision.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Prompt {
    /// Id.
    pub prompt_id: String,
    /// The asking agent.
    pub agent_id: String,
    /// The tab the question is about.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_id: Option<String>,
    /// That tab's URL when asked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page_url: Option<String>,
    /// Short title.
    pub title: String,
    /// The question.
    pub message: String,
    /// `pending`, `approved`, `denied`, `timed_out`.
    pub decision: String,
    /// Asked, ms since the epoch.
    pub asked_at_ms: i64,
    /// When it times out (pending prompts), ms since the epoch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at_ms: Option<i64>,
    /// Decided, ms since the epoch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decided_at_ms: Option<i64>,
}

/// The person's answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Answer {
    /// The prompt.
    pub prompt_id: String,
    /// `approved` or `denied`.
    pub decision: String,
}

/// Everything the popup shows.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Status {
    /// Host version.
    pub host_version: String,
    /// Hub process id.
    pub hub_pid: u32,
    /// The emergency stop.
    pub stop: StopState,
    /// Connected MCP sessions.
    pub agents: Vec<Agent>,
    /// Tabs held by agents not connected now (leases outlive sessions).
    pub idle_tabs: Vec<HeldTab>,
    /// Latest tool calls, newest first.
    pub activity: Vec<Activity>,
    /// Prompts waiting for the person.
    pub prompts: Vec<Prompt>,
}

/// One gate as the options page lists it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GateView {
    /// Gate id.
    pub id: String,
    /// Mode in effect.
    pub mode: String,
    /// The product default.
    pub default_mode: String,
    /// Whether `_meta.forceBypass` can pass it.
    pub bypass: bool,
    /// What triggers it.
    pub trigger: String,
    /// How it clears.
    pub clear: String,
}

/// What the options page edits.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SettingsView {
    /// `{"example.com": {"default": "allow", "interact": "block"}}`.
    pub domain_policy: Value,
    /// Every gate with its mode.
    pub gates: Vec<GateView>,
    /// Agents may not open new tabs.
    pub agent_new_tabs_disabled: bool,
    /// Agents may not move work across tabs.
    pub agent_cross_tab_navigation_disabled: bool,
    /// Why the settings file could not be read (defaults in use), if so.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file_error: Option<String>,
}

/// A change from the options page; absent fields stay as they are.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct SettingsUpdate {
    /// The whole domain policy (replaces the old one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub domain_policy: Option<Value>,
    /// Gate modes to set (`"default"` removes the override).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gate_modes: Option<std::collections::BTreeMap<String, String>>,
    /// Agents may not open new tabs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_new_tabs_disabled: Option<bool>,
    /// Agents may not move work across tabs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_cross_tab_navigation_disabled: Option<bool>,
}
