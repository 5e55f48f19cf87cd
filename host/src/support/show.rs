//! `nova log show CALL_ID`: everything the store knows about one call: its row, the arguments as
//! stored (secrets were never stored), the gates that spoke and how each clears, the guarded
//! transition with its contract and failed assertions, the evidence (signal flags, task scope,
//! unit grades), the screenshot file and the learning journal's event.

use rusqlite::{Connection, OptionalExtension, params};
use serde_json::{Value, json};

use super::calls::{self, CallRow};
use crate::paths::DataDir;

/// The whole record of the call `id` names (full id or a prefix of at least 4 digits).
pub fn show(conn: &Connection, data: &DataDir, id: &str) -> Result<Value, String> {
    let call = calls::find(conn, id)?;
    let db = |e: rusqlite::Error| format!("the store could not be read: {e}");
    let obs = conn
        .query_row(
            "SELECT args_json, aag_gates, error_code, block_stage, signal_flags, action_kind, surface, executed, \
                    url_before, url_after, nav_epoch_before, nav_epoch_after, selector, workflow_scope_id, \
                    binding_mode, evidence_json, outcome_kind, reason_code \
             FROM observations WHERE call_id = ?1",
            [&call.call_id],
            |r| {
                Ok(json!({
                    "args": parse(r.get::<_, Option<String>>(0)?),
                    "aagGates": parse(r.get::<_, Option<String>>(1)?),
                    "errorCode": r.get::<_, Option<String>>(2)?,
                    "blockStage": r.get::<_, Option<String>>(3)?,
                    "signalFlags": crate::observation::flags::names(r.get(4)?),
                    "actionKind": r.get::<_, String>(5)?,
                    "surface": r.get::<_, String>(6)?,
                    "executed": r.get::<_, bool>(7)?,
                    "urlBefore": r.get::<_, Option<String>>(8)?,
                    "urlAfter": r.get::<_, Option<String>>(9)?,
                    "navEpochBefore": r.get::<_, Option<i64>>(10)?,
                    "navEpochAfter": r.get::<_, Option<i64>>(11)?,
                    "selector": r.get::<_, Option<String>>(12)?,
                    "workflowScopeId": r.get::<_, Option<String>>(13)?,
                    "bindingMode": r.get::<_, Option<String>>(14)?,
                    "coverageEvidence": parse(r.get::<_, Option<String>>(15)?),
                    "outcomeKind": r.get::<_, String>(16)?,
                    "reasonCode": r.get::<_, Option<String>>(17)?,
                }))
            },
        )
        .optional()
        .map_err(db)?
        // A call its hub died in has no observation row: only its transition tells.
        .unwrap_or_else(|| json!({"executed": Value::Null, "signalFlags": []}));
    let gates = gates_that_spoke(&obs);
    let transition = match &call.transition_id {
        Some(t) => transition(conn, t).map_err(db)?,
        None => Value::Null,
    };
    let units = unit_grades(conn, &call, obs["workflowScopeId"].as_str()).map_err(db)?;
    let journal = conn
        .query_row(
            "SELECT success, error_text, context_host, activity_session_id, task_id FROM lcj_tool_events \
             WHERE call_id = ?1 LIMIT 1",
            [&call.call_id],
            |r| {
                Ok(json!({
                    "success": r.get::<_, bool>(0)?, "errorText": r.get::<_, Option<String>>(1)?,
                    "host": r.get::<_, String>(2)?, "activitySession": r.get::<_, String>(3)?,
                    "learnTask": r.get::<_, Option<String>>(4)?,
                }))
            },
        )
        .optional()
        .map_err(db)?;
    Ok(json!({
        "call": call,
        "arguments": obs["args"],
        "gates": gates,
        "transition": transition,
        "evidence": {
            "signalFlags": obs["signalFlags"], "actionKind": obs["actionKind"], "surface": obs["surface"],
            "executed": obs["executed"], "outcomeKind": obs["outcomeKind"], "errorCode": obs["errorCode"],
            "blockStage": obs["blockStage"], "selector": obs["selector"],
            "urlBefore": obs["urlBefore"], "urlAfter": obs["urlAfter"],
            "navEpochBefore": obs["navEpochBefore"], "navEpochAfter": obs["navEpochAfter"],
            "workflowScopeId": obs["workflowScopeId"], "bindingMode": obs["bindingMode"],
            "coverageEvidence": obs["coverageEvidence"], "unitGrades": units,
            "grade": grade(&call, &obs, &transition),
        },
        "screenshot": screenshot(data, &call.call_id),
        "journal": journal,
    }))
}

/// JSON kept as text in a column, as JSON (the text itself when it is not JSON).
pub(crate) fn parse(s: Option<String>) -> Value {
    s.map_or(Value::Null, |s| serde_json::from_str(&s).unwrap_or(Value::String(s)))
}

/// Every gate that spoke: the one that blocked (from the error code) and those that warned, would
/// have blocked or were bypassed; each with what triggers it and how it clears.
fn gates_that_spoke(obs: &Value) -> Vec<Value> {
    let mut spoke: Vec<(String, String)> = Vec::new();
    if let Some(g) = obs["errorCode"].as_str().and_then(|c| c.strip_prefix("aag_blocked:")) {
        spoke.push((g.to_owned(), "blocked".into()));
    }
    if let Some(map) = obs["aagGates"].as_object() {
        spoke.extend(map.iter().map(|(g, s)| (g.clone(), s.as_str().unwrap_or("spoke").to_owned())));
    }
    spoke
        .into_iter()
        .map(|(id, status)| {
            let spec = crate::aag::GATES.iter().find(|g| g.id == id);
            json!({
                "gateId": id, "status": status,
                "reasonCode": if status == "blocked" { obs["reasonCode"].clone() } else { Value::Null },
                "trigger": spec.map(|g| g.trigger), "clears": spec.map(|g| g.clear),
                "forceBypassAvailable": spec.map(|g| g.bypass),
            })
        })
        .collect()
}

/// A guarded transition's journal row.
pub(crate) fn transition(conn: &Connection, id: &str) -> rusqlite::Result<Value> {
    conn.query_row(
        "SELECT transition_id, tool, state, dispatch_status, verification_status, indeterminate_reason, \
                retry_advice, precondition_verdict, outcome_verdict, failed_assertions, contract_json, \
                retry_policy, started_at_ms, dispatched_at_ms, completed_at_ms, url_before, target_id, agent_id, \
                caveat, held_assertions \
         FROM transitions WHERE transition_id = ?1",
        params![id],
        |r| {
            Ok(json!({
                "transitionId": r.get::<_, String>(0)?, "tool": r.get::<_, String>(1)?,
                "state": r.get::<_, String>(2)?, "dispatchStatus": r.get::<_, Option<String>>(3)?,
                "verificationStatus": r.get::<_, Option<String>>(4)?,
                "indeterminateReason": r.get::<_, Option<String>>(5)?,
                "retryAdvice": r.get::<_, Option<String>>(6)?,
                "preconditionVerdict": r.get::<_, Option<String>>(7)?,
                "outcomeVerdict": r.get::<_, Option<String>>(8)?,
                "failedAssertions": parse(r.get(9)?), "contract": parse(r.get(10)?),
                "retryPolicy": r.get::<_, String>(11)?,
                "startedAt": r.get::<_, i64>(12).map(crate::time::iso)?,
                "dispatchedAt": r.get::<_, Option<i64>>(13)?.map(crate::time::iso),
                "completedAt": r.get::<_, Option<i64>>(14)?.map(crate::time::iso),
                "urlBefore": r.get::<_, Option<String>>(15)?, "tab": r.get::<_, String>(16)?,
                "agent": r.get::<_, String>(17)?, "caveat": r.get::<_, Option<String>>(18)?,
                "heldAssertions": parse(r.get(19)?),
            }))
        },
    )
}

/// The call's evidence grade in one word: what a support person can lean on.
fn grade(call: &CallRow, obs: &Value, transition: &Value) -> &'static str {
    match call.outcome.as_str() {
        // The verdict stands, but something the journal names weakens it (docs/cls.md, "Result").
        "verified_success" if !transition["caveat"].is_null() => "likely",
        "verified_success" | "verified_fail" => "verified",
        "in_doubt" => "in_doubt",
        "blocked" | "invalid" => "not_executed",
        _ if obs["executed"] == json!(false) => "not_executed",
        _ if obs["signalFlags"].as_array().is_some_and(|f| f.iter().any(|f| f == "MutationCommitted")) => {
            "dispatched_unverified"
        }
        _ => "observed",
    }
}

/// The grades of the task units the call's page belongs to, in the task run its scope names.
fn unit_grades(conn: &Connection, call: &CallRow, scope: Option<&str>) -> rusqlite::Result<Vec<Value>> {
    let (Some(scope), Some(url)) = (scope, call.url.as_deref()) else { return Ok(Vec::new()) };
    let mut stmt = conn.prepare(
        "SELECT u.instance_id, u.unit_key, u.status, u.evidence_class, u.reason FROM task_units u \
         JOIN task_instances i ON i.instance_id = u.instance_id \
         WHERE i.evidence_scope_id = ?1 AND (u.url = ?2 OR u.url_normalized = ?2) LIMIT 20",
    )?;
    stmt.query_map(params![scope, url], |r| {
        Ok(json!({
            "taskInstance": r.get::<_, String>(0)?, "unitKey": r.get::<_, String>(1)?,
            "status": r.get::<_, String>(2)?, "evidenceClass": r.get::<_, Option<String>>(3)?,
            "reason": r.get::<_, Option<String>>(4)?,
        }))
    })?
    .collect()
}

/// The screenshot `nova.capture_screenshot` saved for the call, if its file is still there.
pub(crate) fn screenshot(data: &DataDir, call_id: &str) -> Option<String> {
    ["png", "jpeg", "jpg", "webp"]
        .iter()
        .map(|ext| data.screenshots().join(format!("{call_id}.{ext}")))
        .find(|p| p.is_file())
        .map(|p| p.display().to_string())
}
