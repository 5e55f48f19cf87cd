//! Retention of the learning journal (docs/learning.md, "Retention"), run when a hub starts:
//! tool events and observations after 30 days (counted into daily rollups first, which are kept
//! for good), candidates and the level audit after 180 days. Curated candidates (those a stored
//! phenomenon grew from or is counted under) are never pruned, nor the tool events they name.

use rusqlite::{Connection, params};

/// Days the hot tables (tool events, observations, open semantic opportunities' evidence) keep.
pub const HOT_DAYS: i64 = 30;
/// Days candidates and the audit keep.
pub const CURATED_DAYS: i64 = 180;

const DAY_MS: i64 = 86_400_000;

/// The curated candidate keys: each stored phenomenon's own key and the key it grew from.
pub fn curated_keys(c: &Connection) -> rusqlite::Result<Vec<String>> {
    let mut stmt = c.prepare("SELECT scope, stable_id, candidate_key FROM pks_phenomena")?;
    let rows = stmt.query_map([], |r| {
        Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?, r.get::<_, Option<String>>(2)?))
    })?;
    let mut keys = Vec::new();
    for row in rows {
        let (scope, id, grew_from) = row?;
        keys.push(super::keys::of_entry(&scope, &id));
        keys.extend(grew_from);
    }
    Ok(keys)
}

/// Prunes what expired at `now`, keeping the `curated` candidate keys; returns how many rows
/// went.
pub fn prune(c: &mut Connection, now: i64, curated: &[String]) -> rusqlite::Result<usize> {
    let hot = now - HOT_DAYS * DAY_MS;
    let old = now - CURATED_DAYS * DAY_MS;
    let tx = crate::store::write_tx(c)?;
    tx.execute("CREATE TEMP TABLE IF NOT EXISTS lcj_keep (k TEXT PRIMARY KEY)", [])?;
    tx.execute("DELETE FROM temp.lcj_keep", [])?;
    {
        let mut keep = tx.prepare("INSERT OR IGNORE INTO temp.lcj_keep (k) VALUES (?1)")?;
        for k in curated {
            keep.execute([k])?;
        }
    }
    // Roll up what goes.
    tx.execute(
        "INSERT INTO lcj_rollups (day, context_host, tool_name, events, failures)
         SELECT date(created_at / 1000, 'unixepoch'), context_host, tool_name, COUNT(*), SUM(success = 0)
         FROM lcj_tool_events WHERE created_at < ?1 GROUP BY 1, 2, 3
         ON CONFLICT (day, context_host, tool_name) DO UPDATE SET events = events + excluded.events,
             failures = failures + excluded.failures",
        [hot],
    )?;
    tx.execute(
        "INSERT INTO lcj_rollups (day, context_host, tool_name, observations)
         SELECT date(created_at / 1000, 'unixepoch'), context_host, tool_name, COUNT(*)
         FROM lcj_observations WHERE created_at < ?1 GROUP BY 1, 2, 3
         ON CONFLICT (day, context_host, tool_name) DO UPDATE SET observations = observations + excluded.observations",
        [hot],
    )?;
    let mut n = tx.execute("DELETE FROM lcj_observations WHERE created_at < ?1", [hot])?;
    n += tx.execute(
        "DELETE FROM lcj_tool_events WHERE created_at < ?1 AND event_id NOT IN (
             SELECT source_event_id FROM lcj_candidates WHERE candidate_key IN (SELECT k FROM temp.lcj_keep)
                 AND source_event_id IS NOT NULL
             UNION SELECT resolution_event_id FROM lcj_candidates WHERE candidate_key IN (SELECT k FROM temp.lcj_keep)
                 AND resolution_event_id IS NOT NULL)",
        [hot],
    )?;
    n += tx.execute(
        "DELETE FROM lcj_candidates WHERE updated_at < ?1 AND candidate_key NOT IN (SELECT k FROM temp.lcj_keep)",
        [old],
    )?;
    n += tx.execute("DELETE FROM lcj_audit WHERE created_at < ?1", [old])?;
    n += tx.execute(
        "DELETE FROM lcj_semantic WHERE state IN ('resolved', 'deferred') AND updated_at < ?1",
        params![hot],
    )?;
    tx.commit()?;
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn old_evidence_is_rolled_up_and_curated_candidates_stay() {
        let dir = tempfile::tempdir().expect("tmp");
        let mut c = crate::store::open(&dir.path().join("n.db")).expect("open");
        let now = 400 * DAY_MS;
        let old = now - 31 * DAY_MS;
        let ancient = now - 181 * DAY_MS;
        for (id, at) in [(1, old), (2, old), (3, now)] {
            c.execute(
                "INSERT INTO lcj_tool_events (event_id, owner_id, tool_name, success, duration_ms, context_host,
                     activity_session_id, created_at) VALUES (?1, 'ada', 'nova.click_selector', 1, 1, 'a.org', 's', ?2)",
                params![id, at],
            )
            .expect("event");
        }
        c.execute(
            "INSERT INTO lcj_observations (kind, outcome, severity, context_host, owner_id, activity_session_id,
                 tool_name, throttle_key, created_at) VALUES ('action_success', 1, 0, 'a.org', 'ada', 's', 'nova.click_selector', 'k', ?1)",
            [old],
        )
        .expect("obs");
        for (key, source) in [("curated", 1), ("plain", 2)] {
            c.execute(
                "INSERT INTO lcj_candidates (owner_id, context_host, component, claim, status, confidence, origin,
                     source_event_id, candidate_key, fingerprint_hash, stable_id, created_at, updated_at)
                 VALUES ('ada', 'a.org', 'c', 'x', 'verified', 0.8, 'write', ?2, ?1, 'h', 's', ?3, ?3)",
                params![key, source, ancient],
            )
            .expect("candidate");
        }
        let n = prune(&mut c, now, &["curated".to_owned()]).expect("prune");
        assert_eq!(n, 3, "one observation, event 2, the plain candidate");
        let count = |sql: &str| c.query_row(sql, [], |r| r.get::<_, i64>(0)).expect("count");
        assert_eq!(count("SELECT COUNT(*) FROM lcj_tool_events"), 2, "the curated candidate's event stays");
        assert_eq!(count("SELECT COUNT(*) FROM lcj_candidates WHERE candidate_key = 'curated'"), 1);
        assert_eq!(count("SELECT SUM(events) FROM lcj_rollups"), 2, "both old events were counted first");
        assert_eq!(count("SELECT SUM(observations) FROM lcj_rollups"), 1);
    }
}
