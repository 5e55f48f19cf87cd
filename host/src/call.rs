//! What one tool call is made of, for every handler: the session it came in, its observation
//! record, its reply, the errors that refuse it at the protocol level, and argument parsing
//! that names the field and the bound.

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};

use crate::bridge::{BridgeError, NOT_CONNECTED_HELP};
use crate::observation::Observation;

/// One MCP session (one connection).
#[derive(Debug, Clone)]
pub struct Session {
    /// Session id, recorded on every observation.
    pub id: String,
    /// What subsystems keep per session (the gates' state), by type.
    pub slots: SessionSlots,
}

impl Session {
    /// A new session with a random id and nothing kept yet.
    pub fn new() -> Self {
        Self { id: uuid::Uuid::new_v4().simple().to_string(), slots: SessionSlots::default() }
    }
}

impl Default for Session {
    fn default() -> Self {
        Self::new()
    }
}

/// Per-session state that subsystems keep, one value per type, created on first use. The call
/// module knows none of these types: a subsystem asks for its own (`aag` keeps its gate state
/// here), so the call pipeline stays a leaf. Clones share the same values.
#[derive(Clone, Default)]
pub struct SessionSlots(Arc<Mutex<HashMap<TypeId, Arc<dyn Any + Send + Sync>>>>);

impl SessionSlots {
    /// The session's value of type `T` (a new `T::default()` the first time).
    pub fn get<T: Any + Default + Send + Sync>(&self) -> Arc<T> {
        let mut slots = self.0.lock().unwrap_or_else(|p| p.into_inner());
        let slot = slots.entry(TypeId::of::<T>()).or_insert_with(|| Arc::new(T::default()));
        match Arc::clone(slot).downcast::<T>() {
            Ok(value) => value,
            // Unreachable (slots are keyed by their own type); a fresh value rather than a panic.
            Err(_) => {
                let value = Arc::new(T::default());
                *slot = value.clone();
                value
            }
        }
    }
}

impl std::fmt::Debug for SessionSlots {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let n = self.0.lock().map_or(0, |s| s.len());
        write!(f, "SessionSlots({n} kept)")
    }
}

/// JSON-RPC error code for `claim.owner_mismatch`.
pub const OWNER_MISMATCH_CODE: i32 = -32040;
/// JSON-RPC code of a Learn Mode release below the coverage floors.
pub const COVERAGE_NOT_MET_CODE: i32 = -32041;
/// Its reason code.
pub const COVERAGE_NOT_MET: &str = "learn.coverage_not_met";
/// Reason code for a call on a tab another agent holds.
pub const OWNER_MISMATCH: &str = "claim.owner_mismatch";

/// Another agent holds the tab.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("tab {target_id} is claimed by agent `{owner}` for {remaining_ms} more ms")]
pub struct OwnerMismatch {
    /// The tab.
    pub target_id: String,
    /// Who holds it.
    pub owner: String,
    /// Time left on the lease.
    pub remaining_ms: i64,
}

/// A call rejected at the protocol level (JSON-RPC error), not a tool failure.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum CallError {
    /// Arguments did not match the schema or bounds (-32602).
    #[error("{message}")]
    InvalidParams {
        /// The offending field, when known.
        field: Option<String>,
        /// What is wrong, naming the field and the bound.
        message: String,
    },
    /// The tool does not exist (-32602).
    #[error("unknown tool `{0}`")]
    UnknownTool(String),
    /// Another agent holds the tab (-32040).
    #[error(transparent)]
    Owner(#[from] OwnerMismatch),
    /// An unknown `scanId` (-32602, with the known ids).
    #[error("unknown scanId `{0}`")]
    UnknownScan(String),
    /// The user's settings do not allow this (-32002).
    #[error("{message}")]
    NotAllowed {
        /// Reason code.
        reason: &'static str,
        /// What to change.
        message: String,
    },
    /// The store failed (-32603).
    #[error("store error: {0}")]
    Store(String),
    /// A Learn Mode tab released below its coverage floors (-32041 `learn.coverage_not_met`).
    #[error("{message}")]
    Coverage {
        /// What is missing and how to go on.
        message: String,
        /// The task, the floors and the counts (`required`, `current`).
        data: Value,
    },
}

impl CallError {
    /// An invalid-params error for `field`.
    pub fn invalid(field: &str, message: impl Into<String>) -> Self {
        Self::InvalidParams { field: Some(field.to_owned()), message: message.into() }
    }

    /// The reason code recorded for this error.
    pub fn reason_code(&self) -> &'static str {
        match self {
            Self::InvalidParams { .. } | Self::UnknownTool(_) | Self::UnknownScan(_) => "invalid_params",
            Self::Owner(_) => OWNER_MISMATCH,
            Self::NotAllowed { reason, .. } => reason,
            Self::Store(_) => "store_error",
            Self::Coverage { .. } => COVERAGE_NOT_MET,
        }
    }
}

/// A tool result: structured content plus what the agent reads.
#[derive(Debug, Clone)]
pub struct ToolReply {
    /// `structuredContent`: always has `ok` and `status`, and `reasonCode` on failure.
    pub structured: Value,
    /// Whether the MCP result is an error.
    pub is_error: bool,
    /// Text content; the structured JSON when absent.
    pub text: Option<String>,
    /// Image content (base64, mime type).
    pub image: Option<(String, String)>,
    /// MCP `_meta` of the result (`io.nova/aag`, `io.nova/onboarding`).
    pub meta: Map<String, Value>,
}

impl ToolReply {
    /// A success.
    pub fn ok(structured: Value) -> Self {
        Self { structured, is_error: false, text: None, image: None, meta: Map::new() }
    }

    /// A tool failure with a reason code.
    pub fn failure(reason: &str, message: impl Into<String>, retryable: bool) -> Self {
        let structured = json!({
            "ok": false, "status": "failed", "reasonCode": reason,
            "retryable": retryable, "message": message.into(),
        });
        Self { structured, is_error: true, text: None, image: None, meta: Map::new() }
    }

    /// A failure reported by the bridge.
    pub fn bridge_failure(e: &BridgeError) -> Self {
        let mut reply = Self::failure(e.reason_code(), e.to_string(), e.retryable());
        if matches!(e, BridgeError::Disconnected) {
            reply.structured["message"] = json!(NOT_CONNECTED_HELP);
            reply.structured["retryAfterMs"] = json!(2000);
        }
        reply
    }

    /// Sets the text content.
    pub fn with_text(mut self, text: String) -> Self {
        self.text = Some(text);
        self
    }

    /// Adds an image.
    pub fn with_image(mut self, data: String, mime: &str) -> Self {
        self.image = Some((data, mime.to_owned()));
        self
    }
}

/// The observation being built for one call.
pub struct CallRecord {
    /// The row.
    pub obs: Observation,
    /// The session the call came in (a sequence runs its steps in the same session).
    pub session: Session,
    /// `_meta.forceBypass` of the call, for gates that can only judge once the tool ran
    /// (`aag.screenshot_budget`).
    pub force_bypass: bool,
}

impl CallRecord {
    /// Marks the call as having reached the browser.
    pub fn executed(&mut self) {
        self.obs.executed = true;
    }
}

/// Parses tool arguments; the error names the field, with its path inside arrays and objects
/// (`claims[2].certainty`).
pub fn parse_args<T: DeserializeOwned>(args: Map<String, Value>) -> Result<T, CallError> {
    serde_path_to_error::deserialize(Value::Object(args)).map_err(|e| {
        // Where in the arguments it went wrong (`claims[2].certainty`), "." at the top.
        let path = e.path().to_string();
        let message = e.into_inner().to_string();
        if path == "." {
            let field = message.split('`').nth(1).map(str::to_owned);
            CallError::InvalidParams { field, message: format!("invalid arguments: {message}") }
        } else {
            CallError::InvalidParams {
                message: format!("invalid arguments: `{path}`: {message}"),
                field: Some(path),
            }
        }
    })
}

/// Checks `value` against inclusive bounds, naming the field on failure.
pub fn check_range(field: &str, value: u32, bounds: (u32, u32, u32)) -> Result<(), CallError> {
    if value < bounds.0 || value > bounds.1 {
        return Err(CallError::invalid(
            field,
            format!("`{field}` must be between {} and {}, got {value}", bounds.0, bounds.1),
        ));
    }
    Ok(())
}

/// Refuses `text` longer than `max` characters, naming the field and the bound; else its length
/// in characters.
pub fn check_chars(field: &str, text: &str, max: usize) -> Result<usize, CallError> {
    let n = text.chars().count();
    if n > max {
        return Err(CallError::invalid(
            field,
            format!("`{field}` is {n} characters; at most {max} are allowed"),
        ));
    }
    Ok(n)
}

/// The default of `targetId`: the active tab.
pub fn active_tab() -> String {
    "active".to_owned()
}

/// A tool's argument type, with the fields many tools share declared once. The shared fields
/// are named in brackets after the type's name and appended to its own:
/// - `agent`: `agentId`, the calling agent (optional);
/// - `tab`: `targetId`, a target id or `active` (default);
/// - `frame`: `frameId`, the frame to work in (default: the top frame);
/// - `contract`: `transitionContract` of `nova.click` / `nova.type_selector`;
/// - `refine`: `transitionContract` refining the contract a guarded macro builds.
///
/// ```ignore
/// crate::tool_args! {
///     /// `nova.my_tool`.
///     #[derive(Debug, Clone, Deserialize, JsonSchema)]
///     #[serde(deny_unknown_fields, rename_all = "camelCase")]
///     pub struct MyArgs [tab, agent] {
///         /// What to do.
///         pub what: String,
///     }
/// }
/// ```
/// (serde's `flatten` would share them too, but cannot be combined with
/// `deny_unknown_fields`, which every argument type keeps.)
#[macro_export]
macro_rules! tool_args {
    ($(#[$attr:meta])* $vis:vis struct $name:ident [$($shared:ident),* $(,)?] { $($body:tt)* }) => {
        $crate::tool_args!(@fields [$(#[$attr])* $vis struct $name] [$($shared)*] [] [$($body)*]);
    };
    (@fields $head:tt [agent $($rest:ident)*] [$($acc:tt)*] $body:tt) => {
        $crate::tool_args!(@fields $head [$($rest)*] [$($acc)*
            /// Calling agent.
            #[serde(default)]
            pub agent_id: Option<String>,
        ] $body);
    };
    (@fields $head:tt [tab $($rest:ident)*] [$($acc:tt)*] $body:tt) => {
        $crate::tool_args!(@fields $head [$($rest)*] [$($acc)*
            /// Tab: a target id or `active` (default).
            #[serde(default = "crate::call::active_tab")]
            pub target_id: String,
        ] $body);
    };
    (@fields $head:tt [frame $($rest:ident)*] [$($acc:tt)*] $body:tt) => {
        $crate::tool_args!(@fields $head [$($rest)*] [$($acc)*
            /// Frame to work in, as listed in `frames` by `nova.perceive` (default: the top frame,
            /// which already reaches same-origin iframes through `>>>`).
            #[serde(default)]
            pub frame_id: Option<String>,
        ] $body);
    };
    (@fields $head:tt [contract $($rest:ident)*] [$($acc:tt)*] $body:tt) => {
        $crate::tool_args!(@fields $head [$($rest)*] [$($acc)*
            /// Transition contract (docs/cls.md): preconditions are checked in the page before
            /// dispatch, postconditions are watched after it. Required for commit points (submit,
            /// send, login, pay, delete, confirm), which are otherwise refused before dispatch.
            #[serde(default)]
            pub transition_contract: Option<nova_shared::cls::TransitionContract>,
        ] $body);
    };
    (@fields $head:tt [refine $($rest:ident)*] [$($acc:tt)*] $body:tt) => {
        $crate::tool_args!(@fields $head [$($rest)*] [$($acc)*
            /// Refines the built contract: fields as in `transitionContract` of
            /// `nova.click_selector` (preconditions, postconditions, retryPolicy, ...).
            /// `success.any` adds a way to succeed; `success.all` must hold as well.
            #[serde(default)]
            #[schemars(schema_with = "crate::call::refining_contract")]
            pub transition_contract: Option<nova_shared::cls::TransitionContract>,
        ] $body);
    };
    (@fields [$($head:tt)*] [] [$($acc:tt)*] [$($body:tt)*]) => {
        $($head)* { $($body)* $($acc)* }
    };
}

/// The schema of a template's `transitionContract`: named (by the field's description), not
/// spelled out. The template builds the contract itself and refining it is rare; the whole
/// contract schema, listed with `nova.click_selector` in the same bundle, would otherwise take
/// a thousand tokens of an agent's context again in every template. The argument is checked as
/// strictly as any contract.
pub fn refining_contract(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({"type": "object"})
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicU32, Ordering};

    use super::*;

    #[test]
    fn session_slots_are_shared_by_clones_and_kept_per_type() {
        let session = Session::new();
        let call = session.clone();
        call.slots.get::<AtomicU32>().store(7, Ordering::SeqCst);
        assert_eq!(session.slots.get::<AtomicU32>().load(Ordering::SeqCst), 7, "a clone shares the value");
        assert!(
            session.slots.get::<Mutex<String>>().lock().is_ok_and(|s| s.is_empty()),
            "another type starts empty"
        );
        assert_eq!(
            Session::new().slots.get::<AtomicU32>().load(Ordering::SeqCst),
            0,
            "another session starts empty"
        );
    }
}
