//! The call pipeline every tool call goes through, whatever transport it came by:
//! parse and bound-check arguments -> run the tool -> record one TOB observation (always,
//! including invalid, blocked and failed calls).
//!
//! The gate pipeline (AAG, `crate::aag::pipeline`) runs before the tool; a blocked call is
//! recorded and never runs.

use std::sync::Arc;
use std::time::Instant;

use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};

use crate::bridge::{Bridge, BridgeError};
use crate::lease::{Leases, OwnerMismatch};
use crate::paths::DataDir;
use crate::time::now_ms;
use crate::tob::{self, Observation, Outcome, Recorder};

/// Everything a tool call needs: the browser, the store, the leases.
pub struct Hub {
    /// The data dir.
    pub data: DataDir,
    /// The extension connection.
    pub bridge: Arc<Bridge>,
    /// The observation recorder.
    pub recorder: Recorder,
    /// Tab leases.
    pub leases: Leases,
    /// Guarded transitions.
    pub cls: crate::cls::Cls,
    /// Task memory (ETM / TUC).
    pub etm: crate::etm::Etm,
    /// TOB scopes.
    pub scopes: crate::tob::scope::Scopes,
    /// The person's controls (STOP, handover notes).
    pub control: crate::aag::control::Control,
    /// Connected sessions and the activity feed (the popup).
    pub presence: crate::aag::ui::Presence,
    /// Permission prompts waiting for the person.
    pub prompts: crate::aag::prompt::Prompts,
    /// Sessions' gate state kept across hub restarts.
    pub resumes: crate::aag::resume::Resumes,
}

impl Hub {
    /// Opens everything a hub keeps in the data dir around a bridge.
    pub fn open(data: DataDir, bridge: Arc<Bridge>) -> Result<Self, crate::store::StoreError> {
        let db = data.db();
        match crate::tob::retention::prune(&crate::store::open(&db)?, now_ms()) {
            Ok(0) => {}
            Ok(n) => tracing::info!(rows = n, "expired observation rows pruned"),
            Err(e) => tracing::warn!(error = %e, "observation retention failed"),
        }
        Ok(Self {
            recorder: Recorder::start(&db)?,
            leases: Leases::open(&db)?,
            cls: crate::cls::Cls::open(&db)?,
            etm: crate::etm::Etm::open(&db)?,
            scopes: crate::tob::scope::Scopes::open(&db)?,
            control: crate::aag::control::Control::open(&db)?,
            presence: crate::aag::ui::Presence::default(),
            prompts: crate::aag::prompt::Prompts::default(),
            resumes: crate::aag::resume::Resumes::open(&db)?,
            data,
            bridge,
        })
    }
}

/// One MCP session (one connection).
#[derive(Debug, Clone)]
pub struct Session {
    /// Session id, recorded on every observation.
    pub id: String,
    /// Gate state of the session (bundles, perception, loops).
    pub state: crate::aag::SharedState,
}

impl Session {
    /// A new session with a random id.
    pub fn new() -> Self {
        Self { id: uuid::Uuid::new_v4().simple().to_string(), state: crate::aag::SharedState::default() }
    }
}

impl Default for Session {
    fn default() -> Self {
        Self::new()
    }
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
            Self::Owner(_) => crate::lease::OWNER_MISMATCH,
            Self::NotAllowed { reason, .. } => reason,
            Self::Store(_) => "store_error",
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
            reply.structured["message"] = json!(crate::mcp::NOT_CONNECTED_HELP);
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
    /// The session's gate state (a sequence runs its steps in the same session).
    pub session_state: crate::aag::SharedState,
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

/// Parses tool arguments, turning serde's message into one that names the field.
pub fn parse_args<T: DeserializeOwned>(args: Map<String, Value>) -> Result<T, CallError> {
    serde_json::from_value(Value::Object(args)).map_err(|e| {
        let message = e.to_string();
        let field = message.split('`').nth(1).map(str::to_owned);
        CallError::InvalidParams { field, message: format!("invalid arguments: {message}") }
    })
}

/// Arguments as recorded: the arguments the tool declares secret (typed text, passwords) are
/// replaced by their length, so that no secret is ever stored.
fn redact(tool: &str, args: &Map<String, Value>) -> String {
    let mut copy = args.clone();
    let secret_keys = crate::registry::find(tool).map_or(&[][..], |t| t.secrets);
    for key in secret_keys {
        if let Some(Value::String(text)) = copy.get(*key) {
            let n = text.chars().count();
            copy.insert((*key).into(), json!(format!("<redacted {n} chars>")));
        }
    }
    Value::Object(copy).to_string()
}

impl Hub {
    /// Runs one tool call end to end and records it.
    pub async fn call_tool(
        &self,
        session: &Session,
        name: &str,
        args: Map<String, Value>,
    ) -> Result<ToolReply, CallError> {
        let started = Instant::now();
        let agent_id =
            args.get("agentId").and_then(Value::as_str).unwrap_or(crate::lease::DEFAULT_AGENT).to_owned();
        let (_, _, base_flags) = tob::classify(name);
        let mut rec = CallRecord {
            obs: Observation {
                call_id: uuid::Uuid::new_v4().to_string(),
                seq: self.recorder.next_seq(),
                tool: name.to_owned(),
                agent_id,
                mcp_session: session.id.clone(),
                signal_flags: base_flags,
                args_json: Some(redact(name, &args)),
                started_at_ms: now_ms(),
                ..Default::default()
            },
            session_state: session.state.clone(),
            force_bypass: crate::aag::force_bypass(&args),
        };
        let span = tracing::info_span!("tool", call = %&rec.obs.call_id[..8], tool = name);
        let _guard = span.enter();
        let agent = rec.obs.agent_id.clone();
        let gates = self.preflight(session, name, &args, &agent).await;
        if let Some(mut block) = gates.block {
            // Not executed; recorded as blocked before dispatch.
            let obs = &mut rec.obs;
            obs.duration_ms = i64::try_from(started.elapsed().as_millis()).unwrap_or(i64::MAX);
            obs.outcome = Some(Outcome::BlockedPreflight);
            obs.block_stage = Some("aag_preflight".into());
            obs.error_code = gates.blocked_by.map(|g| format!("aag_blocked:{g}"));
            obs.reason_code = block.structured.get("reasonCode").and_then(Value::as_str).map(str::to_owned);
            obs.note_gates(gates.decisions.iter().copied());
            if let Some(t) = args.get("targetId").and_then(Value::as_str) {
                obs.target_id = Some(t.to_owned());
            }
            tracing::info!(gate = ?gates.blocked_by, "blocked by a gate");
            self.presence.called(&session.id, crate::aag::ui::activity(&rec.obs, None));
            self.recorder.record(rec.obs);
            block.meta.extend(gates.meta);
            if !gates.warnings.is_empty() {
                block.structured["_aagGates"] = Value::Object(gates.warnings);
            }
            return Ok(block);
        }
        // `_meta` is for the gates (forceBypass); tools never see it.
        let gate_args = args.clone();
        let mut args = args;
        args.remove("_meta");
        rec.obs.note_gates(gates.decisions.iter().copied());
        let result = self.run(&mut rec, name, args).await;
        let obs = &mut rec.obs;
        obs.duration_ms = i64::try_from(started.elapsed().as_millis()).unwrap_or(i64::MAX);
        match &result {
            Ok(reply) => {
                obs.ok = !reply.is_error;
                obs.outcome = Some(if reply.is_error { Outcome::Failed } else { Outcome::Success });
                obs.reason_code =
                    reply.structured.get("reasonCode").and_then(Value::as_str).map(str::to_owned);
            }
            Err(e) => {
                obs.outcome = Some(match e {
                    CallError::Owner(_) | CallError::NotAllowed { .. } => Outcome::BlockedPreflight,
                    CallError::Store(_) => Outcome::Failed,
                    _ => Outcome::InvalidParams,
                });
                obs.block_stage = Some(match e {
                    CallError::Owner(_) => "lease".to_owned(),
                    CallError::NotAllowed { .. } => "settings".to_owned(),
                    CallError::Store(_) => "store".to_owned(),
                    _ => "validation".to_owned(),
                });
                obs.reason_code = Some(e.reason_code().to_owned());
            }
        }
        tracing::info!(ok = obs.ok, ms = obs.duration_ms, reason = ?obs.reason_code, "tool call");
        if obs.workflow_scope_id.is_none()
            && let Some(target) = obs.target_id.as_deref()
            && let Some((scope, mode)) = self.scopes.bind(target, &obs.agent_id)
        {
            obs.workflow_scope_id = Some(scope);
            obs.binding_mode = Some(mode.to_owned());
        }
        self.attribute_call(&rec.obs);
        self.after_call(session, &gate_args, &rec.obs);
        let hint = self.scan_hint(&rec.obs);
        let structured = result.as_ref().ok().map(|r| &r.structured);
        self.presence.called(&session.id, crate::aag::ui::activity(&rec.obs, structured));
        self.recorder.record(rec.obs);
        let mut result = result;
        if let Ok(reply) = result.as_mut() {
            if let Some(h) = hint {
                reply.structured["_aagGates"]["coverageScanRecommended"] = h;
            }
            for (k, v) in gates.warnings {
                reply.structured["_aagGates"][k] = v;
            }
            reply.meta.extend(gates.meta);
        }
        result
    }

    async fn run(
        &self,
        rec: &mut CallRecord,
        name: &str,
        args: Map<String, Value>,
    ) -> Result<ToolReply, CallError> {
        self.scopes.sweep();
        let tool = crate::registry::find(name).ok_or_else(|| CallError::UnknownTool(name.to_owned()))?;
        (tool.run)(self, rec, args).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typed_text_is_never_recorded() {
        let args = json!({"selector": "#pw", "text": "hunter2"});
        let Value::Object(map) = args else { unreachable!() };
        let recorded = redact("nova.type_selector", &map);
        assert!(!recorded.contains("hunter2"), "{recorded}");
        assert!(recorded.contains("<redacted 7 chars>"));
    }

    #[test]
    fn parse_errors_name_the_field() {
        let Value::Object(map) = json!({"selector": "a", "nope": 1}) else { unreachable!() };
        let err = parse_args::<crate::browse::ClickArgs>(map).expect_err("unknown field");
        match err {
            CallError::InvalidParams { field, message } => {
                assert_eq!(field.as_deref(), Some("nope"));
                assert!(message.contains("nope"));
            }
            other => panic!("unexpected {other:?}"),
        }
    }
}
