//! Instance rows, work units and the event log of ETM (docs/tasks.md, "Task runs").

use rusqlite::{Connection, OptionalExtension as _, params};
use serde_json::{Value, json};

use super::args::*;
use super::completion::{CompletionCondition, Counts};
use crate::time::now_ms;
use crate::url as normalize;

/// An instance row.
#[derive(Debug, Clone)]
pub struct Instance {
    /// Id.
    pub instance_id: String,
    /// Profile.
    pub profile_id: Option<String>,
    /// Profile revision applied.
    pub profile_rev_applied: Option<i64>,
    /// Revision.
    pub rev: i64,
    /// Context hash.
    pub context_hash: String,
    /// Effective context.
    pub context: Value,
    /// Status.
    pub status: String,
    /// Discovery state.
    pub discovery: String,
    /// Owner agent.
    pub agent_id: String,
    /// Target URL.
    pub target_url: Option<String>,
    /// Bound tab.
    pub target_id: Option<String>,
    /// Effective task kind.
    pub task_kind: String,
    /// 1 legacy, 2 with a unit source.
    pub coverage_schema: i64,
    /// Resume state.
    pub resume_state: Value,
    /// Mandatory-check states.
    pub checks_state: Value,
    /// TOB scope.
    pub scope_id: Option<String>,
    /// Why there is no scope.
    pub scope_reason: Option<String>,
    /// Started.
    pub started_at_ms: i64,
    /// Last activity.
    pub last_activity_at_ms: i64,
    /// Completed.
    pub completed_at_ms: Option<i64>,
}

impl Instance {
    pub(crate) fn terminal(&self) -> bool {
        matches!(self.status.as_str(), "completed" | "aborted" | "failed")
    }

    pub(crate) fn condition(&self) -> Option<CompletionCondition> {
        serde_json::from_value(self.context.get("completionCondition")?.clone()).ok()
    }

    pub(crate) fn mandatory_checks(&self) -> Vec<MandatoryCheck> {
        self.context
            .get("mandatoryChecks")
            .and_then(|v| serde_json::from_value(v.clone()).ok())
            .unwrap_or_default()
    }

    pub(crate) fn verification(&self) -> Option<VerificationContract> {
        serde_json::from_value(self.context.get("verificationContract")?.clone()).ok()
    }

    pub(crate) fn pending_checks(&self) -> Vec<String> {
        self.mandatory_checks()
            .into_iter()
            .filter(|c| c.required)
            .filter(|c| {
                !matches!(
                    self.checks_state.get(&c.check_id).and_then(Value::as_str),
                    Some("satisfied" | "waived" | "not_applicable")
                )
            })
            .map(|c| c.check_id)
            .collect()
    }
}

pub(crate) const INSTANCE_COLUMNS: &str =
    "instance_id, profile_id, profile_rev_applied, instance_rev, effective_context_hash,
    effective_context_json, status, discovery_state, agent_id, target_url, target_id, effective_task_kind,
    coverage_schema_version, resume_state, mandatory_checks_state, evidence_scope_id, evidence_scope_reason,
    started_at_ms, last_activity_at_ms, completed_at_ms";

pub(crate) fn instance_from(r: &rusqlite::Row<'_>) -> rusqlite::Result<Instance> {
    let parse = |s: String| serde_json::from_str(&s).unwrap_or(Value::Null);
    Ok(Instance {
        instance_id: r.get(0)?,
        profile_id: r.get(1)?,
        profile_rev_applied: r.get(2)?,
        rev: r.get(3)?,
        context_hash: r.get(4)?,
        context: parse(r.get(5)?),
        status: r.get(6)?,
        discovery: r.get(7)?,
        agent_id: r.get(8)?,
        target_url: r.get(9)?,
        target_id: r.get(10)?,
        task_kind: r.get(11)?,
        coverage_schema: r.get(12)?,
        resume_state: parse(r.get(13)?),
        checks_state: parse(r.get(14)?),
        scope_id: r.get(15)?,
        scope_reason: r.get(16)?,
        started_at_ms: r.get(17)?,
        last_activity_at_ms: r.get(18)?,
        completed_at_ms: r.get(19)?,
    })
}

/// Loads an instance.
pub fn load_instance(c: &Connection, id: &str) -> rusqlite::Result<Option<Instance>> {
    c.query_row(
        &format!("SELECT {INSTANCE_COLUMNS} FROM task_instances WHERE instance_id = ?1"),
        [id],
        instance_from,
    )
    .optional()
}

/// A non-negative count column.
pub fn count_at(r: &rusqlite::Row<'_>, i: usize) -> rusqlite::Result<u64> {
    Ok(u64::try_from(r.get::<_, i64>(i)?).unwrap_or(0))
}

/// Unit counts of an instance.
pub fn counts(c: &Connection, id: &str) -> rusqlite::Result<Counts> {
    let mut out = Counts::default();
    let mut stmt =
        c.prepare_cached("SELECT status, COUNT(*) FROM task_units WHERE instance_id = ?1 GROUP BY status")?;
    for row in stmt.query_map([id], |r| Ok((r.get::<_, String>(0)?, count_at(r, 1)?)))? {
        let (status, n) = row?;
        out.total_units += n;
        match status.as_str() {
            "checked" => out.checked_units += n,
            "excluded" => out.excluded_units += n,
            "blocked" => out.blocked_units += n,
            "failed" => out.failed_units += n,
            _ => out.remaining_units += n,
        }
    }
    out.distinct_findings =
        c.query_row("SELECT COUNT(*) FROM task_findings WHERE instance_id = ?1", [id], |r| count_at(r, 0))?;
    Ok(out)
}

/// URL-unit counts: (total, checked, excluded, remaining, groups).
pub fn url_counts(c: &Connection, id: &str) -> rusqlite::Result<(u64, u64, u64, u64, u64)> {
    c.query_row(
        "SELECT COUNT(*), COALESCE(SUM(status = 'checked'), 0), COALESCE(SUM(status = 'excluded'), 0),
                COUNT(DISTINCT group_id)
         FROM task_units WHERE instance_id = ?1 AND url_hash IS NOT NULL",
        [id],
        |r| {
            let (t, ch, ex, g) = (count_at(r, 0)?, count_at(r, 1)?, count_at(r, 2)?, count_at(r, 3)?);
            Ok((t, ch, ex, t - ch - ex, g))
        },
    )
}

/// Looks up a stored result for `(instance, clientEventId)`.
pub(crate) fn replay(
    c: &Connection,
    instance: &str,
    client_event_id: &str,
) -> rusqlite::Result<Option<Value>> {
    let stored: Option<Option<String>> = c
        .query_row(
            "SELECT result_json FROM task_events WHERE instance_id = ?1 AND client_event_id = ?2",
            params![instance, client_event_id],
            |r| r.get(0),
        )
        .optional()?;
    Ok(stored.flatten().and_then(|s| serde_json::from_str::<Value>(&s).ok()).map(|mut v| {
        v["duplicate"] = json!(true);
        v
    }))
}

#[allow(clippy::too_many_arguments)]
pub(crate) fn log_event(
    c: &Connection,
    instance: &str,
    client_event_id: Option<&str>,
    kind: &str,
    rev_before: i64,
    rev_after: i64,
    delta: &Value,
    result: Option<&Value>,
    agent: &str,
) -> rusqlite::Result<()> {
    c.execute(
        "INSERT INTO task_events (instance_id, client_event_id, kind, rev_before, rev_after, delta_json, result_json, agent_id, at_ms)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
        params![
            instance,
            client_event_id,
            kind,
            rev_before,
            rev_after,
            delta.to_string(),
            result.map(Value::to_string),
            agent,
            now_ms()
        ],
    )?;
    Ok(())
}

/// Deep-merges `patch` into `base` (objects merge, everything else replaces).
pub(crate) fn merge(base: &mut Value, patch: &Value) {
    match (base, patch) {
        (Value::Object(b), Value::Object(p)) => {
            for (k, v) in p {
                merge(b.entry(k.clone()).or_insert(Value::Null), v);
            }
        }
        (b, p) => *b = p.clone(),
    }
}

/// Applies a collection patch `{include: [...], exclude: [...]}` (or a plain list) to a list.
pub(crate) fn patch_list(list: &mut Vec<Value>, patch: &Value) {
    match patch {
        Value::Array(items) => *list = items.clone(),
        Value::Object(p) => {
            if let Some(Value::Array(ex)) = p.get("exclude") {
                list.retain(|v| !ex.contains(v));
            }
            if let Some(Value::Array(inc)) = p.get("include") {
                for v in inc {
                    if !list.contains(v) {
                        list.push(v.clone());
                    }
                }
            }
        }
        _ => {}
    }
}

/// A unit key as the agent may write it: the key itself, or the URL of a URL unit.
pub(crate) fn resolve_unit_key(
    c: &Connection,
    instance: &str,
    key: &str,
) -> rusqlite::Result<Option<String>> {
    let direct: Option<String> = c
        .query_row(
            "SELECT unit_key FROM task_units WHERE instance_id = ?1 AND unit_key = ?2",
            params![instance, key],
            |r| r.get(0),
        )
        .optional()?;
    if direct.is_some() {
        return Ok(direct);
    }
    let Some(norm) = normalize::normalize(key) else { return Ok(None) };
    c.query_row(
        "SELECT unit_key FROM task_units WHERE instance_id = ?1 AND url_hash = ?2",
        params![instance, normalize::url_hash(&norm)],
        |r| r.get(0),
    )
    .optional()
}

/// Inserts a unit unless it exists; returns whether it was new.
pub(crate) fn insert_unit(
    c: &Connection,
    instance: &str,
    key: &str,
    kind: &str,
    source: Option<&str>,
) -> rusqlite::Result<bool> {
    let position: i64 = c.query_row(
        "SELECT COALESCE(MAX(position), 0) + 1 FROM task_units WHERE instance_id = ?1",
        [instance],
        |r| r.get(0),
    )?;
    let url = normalize::normalize(key);
    let (unit_key, coverage_kind, hash, group) = match &url {
        Some(n) => {
            let h = normalize::url_hash(n);
            (format!("url:{h}"), Some("url"), Some(h), Some(normalize::pattern(n)))
        }
        None => (key.to_owned(), None, None, None),
    };
    let n = c.execute(
        "INSERT OR IGNORE INTO task_units (instance_id, unit_key, unit_kind, status, coverage_kind, url, url_normalized,
             url_hash, group_id, source_kind, position, updated_at_ms)
         VALUES (?1, ?2, ?3, 'discovered', ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
        params![
            instance,
            unit_key,
            if url.is_some() { "url" } else { kind },
            coverage_kind,
            url.as_ref().map(|_| key),
            url,
            hash,
            group,
            source,
            position,
            now_ms()
        ],
    )?;
    Ok(n > 0)
}

/// Allowed unit moves (docs/tasks.md, "State machines").
pub(crate) fn unit_move_ok(from: &str, to: UnitStatus) -> bool {
    matches!(
        (from, to),
        ("discovered", _)
            | ("blocked", UnitStatus::Checked | UnitStatus::Excluded)
            | ("failed", UnitStatus::Checked | UnitStatus::Excluded)
    ) || (from == to.as_str())
}

pub(crate) fn discovery_move_ok(from: &str, to: DiscoveryState) -> bool {
    !(from == "frozen" && to != DiscoveryState::Frozen)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unit_and_discovery_moves() {
        assert!(unit_move_ok("discovered", UnitStatus::Checked));
        assert!(unit_move_ok("blocked", UnitStatus::Excluded));
        assert!(!unit_move_ok("checked", UnitStatus::Failed));
        assert!(!unit_move_ok("excluded", UnitStatus::Checked));
        assert!(!discovery_move_ok("frozen", DiscoveryState::Partial));
        assert!(discovery_move_ok("frozen", DiscoveryState::Frozen));
        assert!(discovery_move_ok("unknown", DiscoveryState::Frozen));
    }
}
