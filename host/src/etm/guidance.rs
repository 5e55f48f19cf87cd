//! Guidance logs (docs/tasks.md, "Guidance"): lessons agents and people log against a profile,
//! deduplicated by a normalised payload hash; recurring ones become promotion candidates and are
//! promoted into the profile's `stableGuidance` atomically (contentRev + 1).

use rusqlite::{OptionalExtension as _, params};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

use super::{ok, soft};
use crate::call::{CallError, CallRecord, ToolReply};
use crate::time::now_ms;

/// Most entries a profile's `stableGuidance` holds.
pub const MAX_STABLE_GUIDANCE: usize = 200;

/// Lowercases strings, collapses whitespace and drops minor punctuation, recursively; keys sort.
fn normalize(v: &Value) -> Value {
    match v {
        Value::String(s) => {
            let cleaned: String = s
                .to_lowercase()
                .chars()
                .filter(|c| !matches!(c, '.' | ',' | ';' | ':' | '!' | '?' | '"' | '\''))
                .collect();
            json!(cleaned.split_whitespace().collect::<Vec<_>>().join(" "))
        }
        Value::Array(a) => Value::Array(a.iter().map(normalize).collect()),
        Value::Object(o) => {
            let mut keys: Vec<&String> = o.keys().collect();
            keys.sort();
            Value::Object(keys.into_iter().map(|k| (k.clone(), normalize(&o[k]))).collect::<Map<_, _>>())
        }
        other => other.clone(),
    }
}

/// The 64-hex hash of a guidance entry's identity: kind and normalised payload.
pub fn normalized_hash(kind: &str, payload: &Map<String, Value>) -> String {
    let text = format!("{kind}|{}", normalize(&Value::Object(payload.clone())));
    Sha256::digest(text.as_bytes()).iter().map(|b| format!("{b:02x}")).collect()
}

fn wire<T: serde::Serialize>(v: T) -> String {
    serde_json::to_value(v).ok().and_then(|v| v.as_str().map(str::to_owned)).unwrap_or_default()
}

fn log_json(r: &rusqlite::Row<'_>) -> rusqlite::Result<Value> {
    Ok(json!({
        "guidanceLogId": r.get::<_, String>(0)?, "profileId": r.get::<_, Option<String>>(1)?,
        "instanceId": r.get::<_, Option<String>>(2)?, "normalizedHash": r.get::<_, String>(3)?,
        "guidanceKind": r.get::<_, String>(4)?,
        "payload": serde_json::from_str::<Value>(&r.get::<_, String>(5)?).unwrap_or(Value::Null),
        "sourceKind": r.get::<_, String>(6)?, "sourceRef": r.get::<_, Option<String>>(7)?,
        "status": r.get::<_, String>(8)?, "occurrenceCount": r.get::<_, i64>(9)?,
        "promotedToContentRev": r.get::<_, Option<i64>>(10)?, "createdAtUtc": r.get::<_, i64>(11)?,
        "updatedAtUtc": r.get::<_, i64>(12)?,
    }))
}

const LOG_COLUMNS: &str = "guidance_log_id, profile_id, instance_id, normalized_hash, guidance_kind, payload,
    source_kind, source_ref, status, occurrence_count, promoted_to_content_rev, created_at_ms, updated_at_ms";

/// Guidance kinds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum GuidanceKind {
    /// Style.
    Style,
    /// Terminology.
    Terminology,
    /// Scope rule.
    ScopeRule,
    /// Workflow.
    Workflow,
    /// Quality.
    Quality,
    /// Match telemetry.
    MatchTelemetry,
    /// Anything else.
    Custom,
}

/// Who logged guidance.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SourceKind {
    /// The user.
    User,
    /// An agent.
    Agent,
    /// A reviewer.
    Reviewer,
    /// A migration.
    Migration,
    /// Nova itself.
    System,
}

crate::tool_args! {
    /// `nova.task_guidance_log_add`.
    #[derive(Debug, Clone, Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields, rename_all = "camelCase")]
    pub struct GuidanceAddArgs [agent] {
        /// Profile (without it the entry is `proposed`).
        #[serde(default)]
        pub profile_id: Option<String>,
        /// Instance.
        #[serde(default)]
        pub instance_id: Option<String>,
        /// Kind.
        pub guidance_kind: GuidanceKind,
        /// Payload (text, appliesTo, rationale, decision, ...; extra keys allowed).
        #[serde(default)]
        pub payload: serde_json::Map<String, Value>,
        /// Who.
        pub source_kind: SourceKind,
        /// Reference.
        #[serde(default)]
        pub source_ref: Option<String>,
    }
}

/// Guidance-log status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum GuidanceStatus {
    /// Logged.
    Logged,
    /// Proposed.
    Proposed,
    /// Accepted.
    Accepted,
    /// Rejected.
    Rejected,
    /// Promoted.
    Promoted,
}

crate::tool_args! {
    /// `nova.task_guidance_logs`.
    #[derive(Debug, Clone, Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields, rename_all = "camelCase")]
    pub struct GuidanceLogsArgs [agent] {
        /// Filter.
        #[serde(default)]
        pub profile_id: Option<String>,
        /// Filter.
        #[serde(default)]
        pub instance_id: Option<String>,
        /// Filter.
        #[serde(default)]
        pub guidance_kind: Option<GuidanceKind>,
        /// Filter.
        #[serde(default)]
        pub status: Option<GuidanceStatus>,
        /// 1-200, default 50.
        #[serde(default = "fifty")]
        #[schemars(range(min = 1, max = 200))]
        pub limit: u32,
    }
}

fn fifty() -> u32 {
    50
}

crate::tool_args! {
    /// `nova.task_promotion_candidates`.
    #[derive(Debug, Clone, Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields, rename_all = "camelCase")]
    pub struct CandidatesArgs [agent] {
        /// The profile.
        pub profile_id: String,
        /// Minimum occurrenceCount, 1-100, default 3 (alias `minOccurrences`).
        #[serde(default = "three", alias = "minOccurrences")]
        #[schemars(range(min = 1, max = 100))]
        pub threshold: u32,
    }
}

fn three() -> u32 {
    3
}

crate::tool_args! {
    /// `nova.task_promote_guidance`.
    #[derive(Debug, Clone, Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields, rename_all = "camelCase")]
    pub struct PromoteArgs [agent] {
        /// The log entry.
        pub guidance_log_id: String,
        /// The profile it is promoted into.
        pub profile_id: String,
    }
}

/// The narrow context of the guidance tools: task memory only.
pub struct Guidance<'h> {
    /// Task memory.
    pub etm: &'h super::Etm,
}

impl<'h> From<&'h crate::hub::Hub> for Guidance<'h> {
    fn from(hub: &'h crate::hub::Hub) -> Self {
        Self { etm: &hub.etm }
    }
}

impl Guidance<'_> {
    /// `nova.task_guidance_log_add`.
    pub async fn task_guidance_log_add(
        &self,
        rec: &mut CallRecord,
        a: GuidanceAddArgs,
    ) -> Result<ToolReply, CallError> {
        rec.executed();
        let kind = wire(a.guidance_kind);
        let hash = normalized_hash(&kind, &a.payload);
        let now = now_ms();
        self.etm.with(|c| {
            let existing: Option<(String, i64, String)> = c
                .query_row(
                    "SELECT guidance_log_id, occurrence_count, status FROM task_guidance_logs
                     WHERE normalized_hash = ?1 AND profile_id IS ?2",
                    params![hash, a.profile_id],
                    |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
                )
                .optional()?;
            let (id, count, status) = match existing {
                Some((id, n, status)) => {
                    // A recurrence of a logged entry proposes it.
                    let status = if status == "logged" { "proposed".to_owned() } else { status };
                    c.execute(
                        "UPDATE task_guidance_logs SET occurrence_count = ?1, status = ?2, updated_at_ms = ?3 WHERE guidance_log_id = ?4",
                        params![n + 1, status, now, id],
                    )?;
                    (id, n + 1, status)
                }
                None => {
                    let id = uuid::Uuid::new_v4().simple().to_string();
                    let status = if a.profile_id.is_some() { "logged" } else { "proposed" };
                    c.execute(
                        "INSERT INTO task_guidance_logs (guidance_log_id, profile_id, instance_id, normalized_hash, guidance_kind,
                            payload, source_kind, source_ref, status, occurrence_count, created_at_ms, updated_at_ms)
                         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, 1, ?10, ?10)",
                        params![
                            id,
                            a.profile_id,
                            a.instance_id,
                            hash,
                            kind,
                            Value::Object(a.payload.clone()).to_string(),
                            wire(a.source_kind),
                            a.source_ref,
                            status,
                            now
                        ],
                    )?;
                    (id, 1, status.to_owned())
                }
            };
            Ok(ok(json!({"guidanceLogId": id, "normalizedHash": hash, "occurrenceCount": count, "status": status})))
        })
    }

    /// `nova.task_guidance_logs`.
    pub async fn task_guidance_logs(
        &self,
        rec: &mut CallRecord,
        a: GuidanceLogsArgs,
    ) -> Result<ToolReply, CallError> {
        crate::call::check_range("limit", a.limit, (1, 200, 50))?;
        rec.executed();
        let kind = a.guidance_kind.map(wire);
        let status = a.status.map(wire);
        self.etm.with(|c| {
            let logs: Vec<Value> = c
                .prepare(&format!(
                    "SELECT {LOG_COLUMNS} FROM task_guidance_logs
                     WHERE (?1 IS NULL OR profile_id = ?1) AND (?2 IS NULL OR instance_id = ?2)
                       AND (?3 IS NULL OR guidance_kind = ?3) AND (?4 IS NULL OR status = ?4)
                     ORDER BY updated_at_ms DESC LIMIT ?5"
                ))?
                .query_map(params![a.profile_id, a.instance_id, kind, status, a.limit], log_json)?
                .collect::<Result<_, _>>()?;
            let mut body = json!({"count": logs.len(), "logs": logs});
            if let Some(p) = &a.profile_id {
                let (total, completed, failed): (i64, i64, i64) = c.query_row(
                    "SELECT COUNT(*), COALESCE(SUM(status = 'completed'), 0), COALESCE(SUM(status IN ('failed', 'aborted')), 0)
                     FROM task_instances WHERE profile_id = ?1",
                    [p],
                    |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
                )?;
                let percent = if total > 0 { completed as f64 * 100.0 / total as f64 } else { 0.0 };
                body["profileLearningStats"] = json!({
                    "instanceCount": total, "completedCount": completed, "completionPercent": percent,
                    "terminalFailureCount": failed, "completionRate": percent / 100.0, "abortedCount": failed,
                });
            }
            Ok(ok(body))
        })
    }

    /// `nova.task_promotion_candidates`.
    pub async fn task_promotion_candidates(
        &self,
        rec: &mut CallRecord,
        a: CandidatesArgs,
    ) -> Result<ToolReply, CallError> {
        crate::call::check_range("threshold", a.threshold, (1, 100, 3))?;
        rec.executed();
        self.etm.with(|c| {
            let rows: Vec<Value> = c
                .prepare(&format!(
                    "SELECT {LOG_COLUMNS} FROM task_guidance_logs
                     WHERE profile_id = ?1 AND occurrence_count >= ?2 AND status IN ('logged', 'proposed', 'accepted')
                     ORDER BY occurrence_count DESC"
                ))?
                .query_map(params![a.profile_id, a.threshold], log_json)?
                .collect::<Result<_, _>>()?;
            let (overrides, guidance): (Vec<Value>, Vec<Value>) =
                rows.into_iter().partition(|r| r["payload"].get("overrides").is_some());
            let pick = |r: &Value| {
                json!({
                    "guidanceLogId": r["guidanceLogId"], "guidanceKind": r["guidanceKind"], "payload": r["payload"],
                    "sourceKind": r["sourceKind"], "occurrenceCount": r["occurrenceCount"], "status": r["status"],
                    "createdAtUtc": r["createdAtUtc"],
                })
            };
            Ok(ok(json!({
                "profileId": a.profile_id, "threshold": a.threshold,
                "guidanceCandidates": guidance.iter().map(pick).collect::<Vec<_>>(), "guidanceCandidateCount": guidance.len(),
                "overrideCandidates": overrides.iter().map(pick).collect::<Vec<_>>(), "overrideCandidateCount": overrides.len(),
            })))
        })
    }

    /// `nova.task_promote_guidance`.
    pub async fn task_promote_guidance(
        &self,
        rec: &mut CallRecord,
        a: PromoteArgs,
    ) -> Result<ToolReply, CallError> {
        rec.executed();
        self.etm.with(|c| {
            let tx = crate::store::write_tx(c)?;
            let log: Option<(Option<String>, String, String, String)> = tx
                .query_row(
                    "SELECT profile_id, status, payload, guidance_kind FROM task_guidance_logs WHERE guidance_log_id = ?1",
                    [&a.guidance_log_id],
                    |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
                )
                .optional()?;
            let Some((owner, status, payload, kind)) = log else {
                return Ok(soft("not_found", "Guidance log entry not found.", json!({"guidanceLogId": a.guidance_log_id})));
            };
            if status == "promoted" {
                return Ok(soft("already_promoted", "This entry is already promoted.", json!({"guidanceLogId": a.guidance_log_id})));
            }
            if owner.as_deref().is_some_and(|o| o != a.profile_id) {
                return Ok(soft("profile_mismatch", "The entry belongs to another profile.", json!({"profileId": owner})));
            }
            let profile: Option<(String, i64, bool)> = tx
                .query_row(
                    "SELECT stable_guidance, content_rev, archived FROM task_profiles WHERE profile_id = ?1",
                    [&a.profile_id],
                    |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
                )
                .optional()?;
            let Some((guidance, rev, archived)) = profile else {
                return Ok(soft("not_found", "Profile not found.", json!({"profileId": a.profile_id})));
            };
            if archived {
                return Ok(soft("profile_archived", "The profile is archived.", json!({"profileId": a.profile_id})));
            }
            let mut list: Vec<Value> = serde_json::from_str(&guidance).unwrap_or_default();
            if list.len() >= MAX_STABLE_GUIDANCE {
                return Ok(soft("size_limit", format!("stableGuidance already holds {MAX_STABLE_GUIDANCE} entries"), json!({})));
            }
            let payload: Value = serde_json::from_str(&payload).unwrap_or(Value::Null);
            list.push(json!({
                "guidanceId": a.guidance_log_id, "kind": kind,
                "text": payload.get("text").cloned().unwrap_or_else(|| json!(payload.to_string())),
            }));
            let new_rev = rev + 1;
            let now = now_ms();
            tx.execute(
                "UPDATE task_profiles SET stable_guidance = ?1, content_rev = ?2, updated_at_ms = ?3 WHERE profile_id = ?4",
                params![Value::Array(list).to_string(), new_rev, now, a.profile_id],
            )?;
            tx.execute(
                "UPDATE task_guidance_logs SET status = 'promoted', promoted_to_content_rev = ?1, profile_id = ?2, updated_at_ms = ?3
                 WHERE guidance_log_id = ?4",
                params![new_rev, a.profile_id, now, a.guidance_log_id],
            )?;
            tx.commit()?;
            Ok(ok(json!({
                "profileId": a.profile_id, "guidanceLogId": a.guidance_log_id, "promotedToContentRev": new_rev,
                "message": format!("Guidance promoted into profile {} (contentRev {new_rev}).", a.profile_id),
            })))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rewording_whitespace_case_and_punctuation_keep_the_hash() {
        let p = |t: &str| {
            let Value::Object(m) = json!({"text": t, "tags": ["A"]}) else { unreachable!() };
            m
        };
        let h = normalized_hash("style", &p("Use the formal  'Sie'."));
        assert_eq!(h, normalized_hash("style", &p("use the formal sie")));
        assert_ne!(h, normalized_hash("style", &p("use the informal du")));
        assert_ne!(h, normalized_hash("terminology", &p("use the formal sie")));
        assert_eq!(h.len(), 64);
    }
}
