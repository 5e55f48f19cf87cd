//! What the activity report shows, read from the store for a time window: calls, gate blocks with
//! how each clears, guarded transitions (in doubt first), task runs with their evidence and gaps,
//! OK facts, PKS and learning changes, STOP / resume and permission prompts. Every string passes
//! the [`Redactor`]. A table an older store lacks reads as empty.

use std::path::Path;

use base64::Engine as _;
use rusqlite::{Connection, Row, params};
use serde_json::{Value, json};

use super::calls::{self, Filter};
use super::redact::Redactor;
use super::show::parse;
use crate::paths::DataDir;

/// At most this many calls go into one report (the newest); the report says when more matched.
pub const MAX_CALLS: usize = 20_000;
/// At most this many screenshots are inlined, each at most [`MAX_SHOT_BYTES`].
pub const MAX_SHOTS: usize = 24;
/// The largest screenshot file inlined.
pub const MAX_SHOT_BYTES: u64 = 400 * 1024;

/// The report's data.
pub fn collect(
    conn: &Connection,
    data: &DataDir,
    filter: &Filter,
    redactor: &Redactor,
    with_screenshots: bool,
) -> anyhow::Result<Value> {
    let (from, to) = (filter.since_ms.unwrap_or(0), filter.until_ms.unwrap_or(i64::MAX));
    let calls = calls::query(conn, filter, Some(MAX_CALLS))?;
    let matched = calls::count(conn, filter)?;
    let shots: Vec<Value> = if with_screenshots {
        calls
            .iter()
            .rev()
            .filter(|c| c.tool == "nova.capture_screenshot")
            .filter_map(|c| inline_shot(data, &c.call_id).map(|d| json!({"callId": c.call_id, "dataUrl": d})))
            .take(MAX_SHOTS)
            .collect()
    } else {
        Vec::new()
    };
    let gates: Vec<Value> = crate::aag::GATES
        .iter()
        .map(|g| json!({"id": g.id, "trigger": g.trigger, "clears": g.clear, "bypass": g.bypass}))
        .collect();
    let report = json!({
        "generatedAt": crate::time::iso(crate::time::now_ms()),
        "window": {"since": filter.since_ms.map(crate::time::iso), "until": filter.until_ms.map(crate::time::iso)},
        "version": env!("CARGO_PKG_VERSION"),
        "schemaVersion": crate::store::schema_version(conn).unwrap_or(0),
        "callsMatched": matched,
        "calls": calls,
        "gates": gates,
        "transitions": rows(conn, TRANSITIONS, params![from, to], transition)?,
        "tasks": rows(conn, TASKS, params![from, to], task)?,
        "okFacts": rows(conn, OK_FACTS, params![from, to], ok_fact)?,
        "pksEntries": rows(conn, PKS_ENTRIES, params![from, to], pks_entry)?,
        "learning": rows(conn, LEARNING, params![from, to], learning)?,
        "opportunities": rows(conn, OPPORTUNITIES, params![from, to], opportunity)?,
        "control": rows(conn, CONTROL, params![from, to], control)?,
        "prompts": rows(conn, PROMPTS, params![from, to], prompt)?,
        "screenshots": shots,
        "screenshotsIncluded": with_screenshots,
    });
    Ok(redactor.json(&report))
}

fn rows(
    conn: &Connection,
    sql: &str,
    p: impl rusqlite::Params,
    f: fn(&Row<'_>) -> rusqlite::Result<Value>,
) -> rusqlite::Result<Vec<Value>> {
    let mut stmt = match conn.prepare(sql) {
        Ok(s) => s,
        Err(rusqlite::Error::SqliteFailure(_, Some(m))) if m.contains("no such") => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    stmt.query_map(p, f)?.collect()
}

const TRANSITIONS: &str = "SELECT transition_id, call_id, tool, agent_id, target_id, url_before, state, dispatch_status, \
     verification_status, indeterminate_reason, retry_advice, failed_assertions, contract_json, started_at_ms, \
     completed_at_ms, caveat, held_assertions FROM transitions WHERE started_at_ms >= ?1 AND started_at_ms < ?2 \
     ORDER BY (state = 'in_doubt' OR verification_status = 'indeterminate') DESC, started_at_ms DESC LIMIT 2000";

fn transition(r: &Row<'_>) -> rusqlite::Result<Value> {
    let state: String = r.get(6)?;
    let verification: Option<String> = r.get(8)?;
    Ok(json!({
        "transitionId": r.get::<_, String>(0)?, "callId": r.get::<_, String>(1)?, "tool": r.get::<_, String>(2)?,
        "agent": r.get::<_, String>(3)?, "tab": r.get::<_, String>(4)?, "url": r.get::<_, Option<String>>(5)?,
        "inDoubt": state == "in_doubt" || verification.as_deref() == Some("indeterminate"),
        "state": state, "dispatchStatus": r.get::<_, Option<String>>(7)?, "verificationStatus": verification,
        "indeterminateReason": r.get::<_, Option<String>>(9)?, "retryAdvice": r.get::<_, Option<String>>(10)?,
        "failedAssertions": parse(r.get(11)?), "contract": parse(r.get(12)?),
        "at": crate::time::iso(r.get(13)?), "completedAt": r.get::<_, Option<i64>>(14)?.map(crate::time::iso),
        "caveat": r.get::<_, Option<String>>(15)?, "heldAssertions": parse(r.get(16)?),
    }))
}

const TASKS: &str = "SELECT i.instance_id, i.effective_task_kind, i.status, i.agent_id, i.target_url, i.started_at_ms, \
     i.completed_at_ms, i.evidence_snapshot, COALESCE(p.display_name, json_extract(i.effective_context_json, '$.displayName')), \
     (SELECT COUNT(*) FROM task_units u WHERE u.instance_id = i.instance_id), \
     (SELECT COUNT(*) FROM task_units u WHERE u.instance_id = i.instance_id AND u.status = 'checked'), \
     (SELECT json_group_array(u.label) FROM (SELECT COALESCE(url, unit_key) AS label FROM task_units u WHERE u.instance_id = i.instance_id \
        AND u.status IN ('discovered', 'blocked', 'failed') ORDER BY position LIMIT 50) u) \
     FROM task_instances i LEFT JOIN task_profiles p ON p.profile_id = i.profile_id \
     WHERE i.last_activity_at_ms >= ?1 AND i.started_at_ms < ?2 ORDER BY i.started_at_ms DESC LIMIT 500";

fn task(r: &Row<'_>) -> rusqlite::Result<Value> {
    Ok(json!({
        "instanceId": r.get::<_, String>(0)?, "kind": r.get::<_, String>(1)?, "status": r.get::<_, String>(2)?,
        "agent": r.get::<_, String>(3)?, "url": r.get::<_, Option<String>>(4)?,
        "at": crate::time::iso(r.get(5)?), "completedAt": r.get::<_, Option<i64>>(6)?.map(crate::time::iso),
        "evidence": parse(r.get(7)?), "profile": r.get::<_, Option<String>>(8)?,
        "units": r.get::<_, i64>(9)?, "unitsChecked": r.get::<_, i64>(10)?, "gaps": parse(r.get(11)?),
    }))
}

const OK_FACTS: &str = "SELECT scope_ref, fact_key, value_json, fact_state, certainty_level, confidence, target_id, url, \
     last_observed_at, contradiction_count FROM ok_facts WHERE last_observed_at >= ?1 AND first_observed_at < ?2 \
     ORDER BY last_observed_at DESC LIMIT 2000";

fn ok_fact(r: &Row<'_>) -> rusqlite::Result<Value> {
    Ok(json!({
        "scope": r.get::<_, String>(0)?, "factKey": r.get::<_, String>(1)?, "value": parse(r.get(2)?),
        "state": r.get::<_, String>(3)?, "certainty": r.get::<_, String>(4)?, "confidence": r.get::<_, f64>(5)?,
        "tab": r.get::<_, String>(6)?, "url": r.get::<_, Option<String>>(7)?,
        "at": crate::time::iso(r.get(8)?), "contradictions": r.get::<_, i64>(9)?,
    }))
}

const PKS_ENTRIES: &str = "SELECT scope, stable_id, kind, learning_level, origin, success_count, failure_count, \
     deprecated, deprecated_reason, created_at, updated_at FROM pks_phenomena \
     WHERE updated_at >= ?1 AND created_at < ?2 ORDER BY updated_at DESC LIMIT 1000";

fn pks_entry(r: &Row<'_>) -> rusqlite::Result<Value> {
    let created: i64 = r.get(9)?;
    let updated: i64 = r.get(10)?;
    Ok(json!({
        "site": r.get::<_, String>(0)?, "entry": r.get::<_, String>(1)?, "kind": r.get::<_, String>(2)?,
        "level": r.get::<_, String>(3)?, "origin": r.get::<_, String>(4)?,
        "successes": r.get::<_, i64>(5)?, "failures": r.get::<_, i64>(6)?,
        "retired": r.get::<_, bool>(7)?, "retiredWhy": r.get::<_, Option<String>>(8)?,
        "change": if created == updated { "created" } else { "updated" },
        "at": crate::time::iso(updated),
    }))
}

const LEARNING: &str = "SELECT stable_id, context_host, from_level, to_level, reason_kind, reason_json, owner_id, created_at \
     FROM lcj_audit WHERE created_at >= ?1 AND created_at < ?2 ORDER BY created_at DESC LIMIT 2000";

fn learning(r: &Row<'_>) -> rusqlite::Result<Value> {
    Ok(json!({
        "entry": r.get::<_, String>(0)?, "host": r.get::<_, String>(1)?, "from": r.get::<_, String>(2)?,
        "to": r.get::<_, String>(3)?, "reason": r.get::<_, String>(4)?, "details": parse(r.get(5)?),
        "agent": r.get::<_, Option<String>>(6)?, "at": crate::time::iso(r.get(7)?),
    }))
}

const OPPORTUNITIES: &str = "SELECT opportunity_id, kind, origin, state, reason, verdict, updated_at FROM lcj_semantic \
     WHERE updated_at >= ?1 AND created_at < ?2 ORDER BY updated_at DESC LIMIT 500";

fn opportunity(r: &Row<'_>) -> rusqlite::Result<Value> {
    Ok(json!({
        "id": r.get::<_, String>(0)?, "kind": r.get::<_, String>(1)?, "origin": r.get::<_, String>(2)?,
        "state": r.get::<_, String>(3)?, "reason": r.get::<_, String>(4)?, "verdict": r.get::<_, Option<String>>(5)?,
        "at": crate::time::iso(r.get(6)?),
    }))
}

const CONTROL: &str = "SELECT kind, by_whom, at_ms FROM control_events WHERE at_ms >= ?1 AND at_ms < ?2 ORDER BY at_ms DESC LIMIT 1000";

fn control(r: &Row<'_>) -> rusqlite::Result<Value> {
    Ok(
        json!({"kind": r.get::<_, String>(0)?, "by": r.get::<_, String>(1)?, "at": crate::time::iso(r.get(2)?)}),
    )
}

const PROMPTS: &str = "SELECT prompt_id, agent_id, target_id, title, question, decision, asked_at_ms, decided_at_ms \
     FROM approvals WHERE asked_at_ms >= ?1 AND asked_at_ms < ?2 ORDER BY asked_at_ms DESC LIMIT 1000";

fn prompt(r: &Row<'_>) -> rusqlite::Result<Value> {
    Ok(json!({
        "promptId": r.get::<_, String>(0)?, "agent": r.get::<_, String>(1)?, "tab": r.get::<_, Option<String>>(2)?,
        "title": r.get::<_, String>(3)?, "question": r.get::<_, String>(4)?, "decision": r.get::<_, String>(5)?,
        "at": crate::time::iso(r.get(6)?), "decidedAt": r.get::<_, Option<i64>>(7)?.map(crate::time::iso),
    }))
}

/// A saved screenshot as a `data:` URL, when its file exists and is small enough to inline.
fn inline_shot(data: &DataDir, call_id: &str) -> Option<String> {
    let path = super::show::screenshot(data, call_id)?;
    let path = Path::new(&path);
    if std::fs::metadata(path).ok()?.len() > MAX_SHOT_BYTES {
        return None;
    }
    let mime = match path.extension()?.to_str()? {
        "png" => "image/png",
        "webp" => "image/webp",
        _ => "image/jpeg",
    };
    let bytes = std::fs::read(path).ok()?;
    Some(format!("data:{mime};base64,{}", base64::engine::general_purpose::STANDARD.encode(bytes)))
}
