//! One tool call's observation row: what the call was (tool, action kind, surface, signal
//! flags), where it ran and how it ended (docs/tasks.md, "Evidence (TOB)" and "Signal flags").
//! A leaf: the call pipeline builds rows, [`crate::tob`] writes them.

use serde::Serialize;

/// Signal flags, a 64-bit mask (docs/tasks.md, "Signal flags").
pub mod flags {
    /// Page content reached the agent.
    pub const CONTENT_EXPOSED: i64 = 1 << 0;
    /// Pixels reached the agent.
    pub const VISUAL_EXPOSED: i64 = 1 << 1;
    /// DOM structure reached the agent.
    pub const DOM_EXPOSED: i64 = 1 << 2;
    /// A selector was resolved against the page.
    pub const SELECTOR_TOUCHED: i64 = 1 << 3;
    /// A navigation was requested.
    pub const NAVIGATION_INTENT: i64 = 1 << 4;
    /// A navigation committed.
    pub const NAVIGATION_COMMITTED: i64 = 1 << 5;
    /// The call tried to change the page.
    pub const MUTATION_ATTEMPTED: i64 = 1 << 6;
    /// The page was changed (events dispatched).
    pub const MUTATION_COMMITTED: i64 = 1 << 7;
    /// The agent supplied input text.
    pub const INPUT_SUPPLIED: i64 = 1 << 8;
    /// A search ran.
    pub const SEARCH_EXECUTED: i64 = 1 << 9;
    /// Console output reached the agent.
    pub const CONSOLE_EXPOSED: i64 = 1 << 10;
    /// A file reached the agent.
    pub const FILE_EXPOSED: i64 = 1 << 11;
    /// Only the viewport was covered.
    pub const VIEWPORT_ONLY: i64 = 1 << 12;
    /// The whole document was covered.
    pub const FULL_DOCUMENT: i64 = 1 << 13;
    /// The target tab was resolved.
    pub const TARGET_RESOLVED: i64 = 1 << 14;

    /// Each flag with its name in docs/tasks.md, for people reading a call (`nova log show`).
    pub const NAMES: &[(i64, &str)] = &[
        (CONTENT_EXPOSED, "ContentExposed"),
        (VISUAL_EXPOSED, "VisualExposed"),
        (DOM_EXPOSED, "DomExposed"),
        (SELECTOR_TOUCHED, "SelectorTouched"),
        (NAVIGATION_INTENT, "NavigationIntent"),
        (NAVIGATION_COMMITTED, "NavigationCommitted"),
        (MUTATION_ATTEMPTED, "MutationAttempted"),
        (MUTATION_COMMITTED, "MutationCommitted"),
        (INPUT_SUPPLIED, "InputSupplied"),
        (SEARCH_EXECUTED, "SearchExecuted"),
        (CONSOLE_EXPOSED, "ConsoleExposed"),
        (FILE_EXPOSED, "FileExposed"),
        (VIEWPORT_ONLY, "ViewportOnly"),
        (FULL_DOCUMENT, "FullDocument"),
        (TARGET_RESOLVED, "TargetResolved"),
    ];

    /// The names of the flags set in `mask`.
    pub fn names(mask: i64) -> Vec<&'static str> {
        NAMES.iter().filter(|(bit, _)| mask & bit != 0).map(|(_, n)| *n).collect()
    }
}

/// Action kind of a call (docs/tasks.md, "Evidence (TOB)").
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ActionKind {
    /// Reads page content.
    Read,
    /// Opens or changes the page.
    Navigate,
    /// Touches elements.
    Interact,
    /// Writes Nova state (tasks, claims, knowledge).
    Write,
    /// Everything else (tool discovery, leases).
    #[default]
    Meta,
}

impl ActionKind {
    /// The stored name (the `action_kind` column).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Read => "read",
            Self::Navigate => "navigate",
            Self::Interact => "interact",
            Self::Write => "write",
            Self::Meta => "meta",
        }
    }
}

/// How a call ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// The call did what was asked.
    Success,
    /// The call ran and failed.
    Failed,
    /// A gate or lease stopped the call before it ran.
    BlockedPreflight,
    /// The arguments were rejected before anything ran.
    InvalidParams,
}

impl Outcome {
    /// The stored name (the `outcome` column).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Success => "success",
            Self::Failed => "failed",
            Self::BlockedPreflight => "blocked_preflight",
            Self::InvalidParams => "invalid_params",
        }
    }
}

/// One observation row.
#[derive(Debug, Clone, Default)]
pub struct Observation {
    /// dispatch_call_id.
    pub call_id: String,
    /// dispatch_seq.
    pub seq: i64,
    /// Tool name.
    pub tool: String,
    /// What the tool does (its declaration's action kind).
    pub action_kind: ActionKind,
    /// What the tool acts on (its declaration's entity; the `surface` column).
    pub surface: &'static str,
    /// Agent id (argument, else MCP client name, else `default`).
    pub agent_id: String,
    /// MCP session id.
    pub mcp_session: String,
    /// Resolved target.
    pub target_id: Option<String>,
    /// URL before the call.
    pub url_before: Option<String>,
    /// URL after the call.
    pub url_after: Option<String>,
    /// Navigation epoch before.
    pub nav_epoch_before: Option<u32>,
    /// Navigation epoch after.
    pub nav_epoch_after: Option<u32>,
    /// Signal flags.
    pub signal_flags: i64,
    /// Logical success.
    pub ok: bool,
    /// Whether the call reached the browser.
    pub executed: bool,
    /// Outcome.
    pub outcome: Option<Outcome>,
    /// Reason code on failure.
    pub reason_code: Option<String>,
    /// Error code (`aag_blocked:<gate>` for gate blocks).
    pub error_code: Option<String>,
    /// Stage that blocked the call.
    pub block_stage: Option<String>,
    /// Selector used.
    pub selector: Option<String>,
    /// Redacted arguments.
    pub args_json: Option<String>,
    /// Start time.
    pub started_at_ms: i64,
    /// Duration.
    pub duration_ms: i64,
    /// The TOB scope the call is bound to.
    pub workflow_scope_id: Option<String>,
    /// live | prelude_backfill | epilogue_grace.
    pub binding_mode: Option<String>,
    /// Coverage evidence of a registered scan (JSON).
    pub evidence_json: Option<String>,
    /// Gates that warned, would have blocked or were bypassed on this call (JSON object of
    /// gate id -> status).
    pub aag_gates: Option<String>,
}

/// What a tool's declaration says for its rows: action kind, surface and the signal flags it
/// always carries (`registry::classify`).
pub type Class = (ActionKind, &'static str, i64);

impl Observation {
    /// The row of a call starting now: a new call id, its sequence number (the recorder's
    /// next), and the tool's class.
    pub fn start(seq: i64, tool: &str, class: Class, agent_id: &str, session: &str) -> Self {
        let (action_kind, surface, signal_flags) = class;
        Self {
            call_id: uuid::Uuid::new_v4().to_string(),
            seq,
            tool: tool.to_owned(),
            action_kind,
            surface,
            agent_id: agent_id.to_owned(),
            mcp_session: session.to_owned(),
            signal_flags,
            started_at_ms: crate::time::now_ms(),
            ..Default::default()
        }
    }

    /// The row of a call `nova mcp` answered itself (`reason`: `browser_not_connected` when no
    /// hub was there, `hub_lost_in_flight` when the hub died running it), so that support staff
    /// see the agent tried.
    pub fn refused_by_relay(
        seq: i64,
        tool: &str,
        class: Class,
        agent_id: &str,
        session: &str,
        reason: &str,
    ) -> Self {
        Self {
            outcome: Some(Outcome::Failed),
            reason_code: Some(reason.into()),
            block_stage: Some("relay".into()),
            ..Self::start(seq, tool, class, agent_id, session)
        }
    }

    /// Adds gate decisions (gate id, `warned` / `would_block` / `bypassed`) to `aag_gates`.
    pub fn note_gates<'a>(&mut self, decisions: impl IntoIterator<Item = (&'a str, &'a str)>) {
        let mut decisions = decisions.into_iter().peekable();
        if decisions.peek().is_none() {
            return;
        }
        let mut all: serde_json::Map<String, serde_json::Value> =
            self.aag_gates.as_deref().and_then(|j| serde_json::from_str(j).ok()).unwrap_or_default();
        all.extend(decisions.map(|(gate, status)| (gate.to_owned(), status.into())));
        self.aag_gates = Some(serde_json::Value::Object(all).to_string());
    }
}
