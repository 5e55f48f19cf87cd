//! Retention of observation rows (docs/tasks.md, "Retention"), run when a hub starts: rows of
//! cleanly closed scopes go after 7 days, rows of problematic scopes (any none / unknown grade,
//! incomplete ingestion, faulted) and blocked-preflight and unscoped rows after 30 days. A scope's
//! rows are never pruned before it is closed (its evidence snapshot is written before closing).

use rusqlite::{Connection, params};

/// Clean closed scopes.
pub const CLEAN_DAYS: i64 = 7;
/// Problematic scopes, blocked-preflight and unscoped rows.
pub const PROBLEM_DAYS: i64 = 30;

const DAY_MS: i64 = 86_400_000;

/// Deletes expired rows; returns how many.
pub fn prune(c: &Connection, now_ms: i64) -> rusqlite::Result<usize> {
    let clean_before = now_ms - CLEAN_DAYS * DAY_MS;
    let problem_before = now_ms - PROBLEM_DAYS * DAY_MS;
    let mut n = c.execute(
        "DELETE FROM observations WHERE started_at_ms < ?1
           AND (outcome_kind = 'blocked_preflight' OR workflow_scope_id IS NULL)",
        [problem_before],
    )?;
    // A scope is clean when it closed with complete ingestion and, for a task run, a snapshot
    // without none / unknown grades.
    n += c.execute(
        "DELETE FROM observations WHERE workflow_scope_id IN (
           SELECT s.scope_id FROM tob_scopes s LEFT JOIN task_instances i ON i.instance_id = s.instance_id
           WHERE s.state = 'closed' AND s.closed_at_ms < ?1 AND s.ingestion_complete = 1
             AND (s.kind = 'lease' OR (i.evidence_snapshot IS NOT NULL
                  AND COALESCE(json_extract(i.evidence_snapshot, '$.counts.none'), 0) = 0
                  AND COALESCE(json_extract(i.evidence_snapshot, '$.counts.unknown'), 0) = 0)))",
        [clean_before],
    )?;
    n += c.execute(
        "DELETE FROM observations WHERE workflow_scope_id IN (
           SELECT scope_id FROM tob_scopes WHERE state IN ('closed', 'faulted') AND COALESCE(closed_at_ms, opened_at_ms) < ?1)",
        params![problem_before],
    )?;
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn obs(c: &Connection, seq: i64, scope: Option<&str>, outcome: &str, at: i64) {
        c.execute(
            "INSERT INTO observations (seq, call_id, request_id_short, tool, agent_id, mcp_session, action_kind, surface,
                signal_flags, ok, executed, outcome_kind, started_at_ms, duration_ms, workflow_scope_id)
             VALUES (?1, ?2, 'x', 'nova.read_text', 'a', 's', 'read', 'dom_node', 0, 1, 1, ?3, ?4, 1, ?5)",
            params![seq, format!("c{seq}"), outcome, at, scope],
        )
        .expect("insert");
    }

    #[test]
    fn clean_scopes_go_after_a_week_problematic_ones_after_a_month_open_ones_never() {
        let dir = tempfile::tempdir().expect("tmp");
        let c = crate::store::open(&dir.path().join("nova.db")).expect("open");
        let now = 100 * DAY_MS;
        let day = |d: i64| now - d * DAY_MS;
        for (scope, instance, state, closed, snapshot) in [
            ("clean", "i1", "closed", day(8), Some(r#"{"counts":{"none":0,"unknown":0}}"#)),
            ("gappy", "i2", "closed", day(8), Some(r#"{"counts":{"none":3,"unknown":0}}"#)),
            ("old-gappy", "i3", "closed", day(31), Some(r#"{"counts":{"none":3,"unknown":0}}"#)),
            ("open", "i4", "active", day(60), None),
        ] {
            c.execute(
                "INSERT INTO task_instances (instance_id, effective_context_hash, effective_context_json, status,
                    discovery_state, agent_id, effective_task_kind, started_at_ms, last_activity_at_ms, evidence_snapshot)
                 VALUES (?1, 'h', '{}', 'completed', 'frozen', 'a', 'x', 0, 0, ?2)",
                params![instance, snapshot],
            )
            .expect("instance");
            c.execute(
                "INSERT INTO tob_scopes (scope_id, kind, instance_id, target_id, agent_id, state, opened_at_ms, closed_at_ms,
                    ingestion_complete) VALUES (?1, 'instance', ?2, '1', 'a', ?3, 0, ?4, 1)",
                params![scope, instance, state, if state == "closed" { Some(closed) } else { None }],
            )
            .expect("scope");
        }
        obs(&c, 1, Some("clean"), "success", day(9));
        obs(&c, 2, Some("gappy"), "success", day(9));
        obs(&c, 3, Some("old-gappy"), "success", day(32));
        obs(&c, 4, Some("open"), "success", day(61));
        obs(&c, 5, None, "blocked_preflight", day(31));
        obs(&c, 6, None, "success", day(29));
        let pruned = prune(&c, now).expect("prune");
        let left: Vec<i64> = c
            .prepare("SELECT seq FROM observations ORDER BY seq")
            .expect("q")
            .query_map([], |r| r.get(0))
            .expect("rows")
            .collect::<Result<_, _>>()
            .expect("seq");
        assert_eq!((pruned, left), (3, vec![2, 4, 6]));
    }
}
