//! The OK part of `nova.memory_stats` (docs/ok.md, "Statistics"): over a window of hours, how
//! many observations came in (by source and outcome), how the current facts stand, how many
//! claims conflicted, and the busiest signal keys and services.

use rusqlite::{Connection, params};
use serde_json::{Map, Value, json};

use super::Knowledge;
use super::facts;
use crate::call::CallError;

/// What to count.
#[derive(Debug, Clone, Copy)]
pub struct Query<'a> {
    /// From when (ms).
    pub since: i64,
    /// Now (ms), by the memory clock.
    pub now: i64,
    /// The freshness window (ms): facts older count as stale.
    pub window_ms: i64,
    /// How many signal keys and services to list.
    pub top: usize,
    /// Only signal keys or services starting with this.
    pub filter: Option<&'a str>,
}

/// The counts.
pub fn stats(k: &Knowledge, q: &Query<'_>) -> Result<Value, CallError> {
    k.with(|c| {
        let filter = q.filter.map(|f| format!("{}%", f.replace('%', "\\%").replace('_', "\\_")));
        let matches = "(?2 IS NULL OR signal_key LIKE ?2 ESCAPE '\\' OR service_key LIKE ?2 ESCAPE '\\')";
        let grouped = |column: &str| -> rusqlite::Result<Vec<(String, i64)>> {
            let mut stmt = c.prepare(&format!(
                "SELECT {column}, COUNT(*) n FROM ok_observations WHERE observed_at >= ?1 AND {matches}
                   AND {column} IS NOT NULL GROUP BY {column} ORDER BY n DESC, {column} LIMIT ?3"
            ))?;
            stmt.query_map(params![q.since, filter, i64::try_from(q.top).unwrap_or(i64::MAX)], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })?
            .collect()
        };
        let by = |column: &str| -> rusqlite::Result<Map<String, Value>> {
            let mut stmt = c.prepare(&format!(
                "SELECT {column}, COUNT(*) FROM ok_observations WHERE observed_at >= ?1 AND {matches} GROUP BY {column}"
            ))?;
            stmt.query_map(params![q.since, filter], |r| Ok((r.get::<_, String>(0)?, json!(r.get::<_, i64>(1)?))))?
                .collect()
        };
        let outcomes = by("outcome")?;
        let sources = by("source_kind")?;
        let total: i64 = sources.values().filter_map(Value::as_i64).sum();
        let facts = fact_states(c, q)?;
        Ok(json!({
            "observations": {"total": total, "bySource": sources, "byOutcome": outcomes},
            "conflicts": outcomes.get("conflicted").cloned().unwrap_or(json!(0)),
            "facts": facts,
            "topSignalKeys": grouped("signal_key")?.into_iter()
                .map(|(k, n)| json!({"signalKey": k, "observations": n})).collect::<Vec<_>>(),
            "topServices": grouped("service_key")?.into_iter()
                .map(|(k, n)| json!({"serviceKey": k, "observations": n})).collect::<Vec<_>>(),
        }))
    })
}

/// Current facts by the state an agent would be told (`stale` past the window), and how many
/// were replaced in the window.
fn fact_states(c: &Connection, q: &Query<'_>) -> rusqlite::Result<Value> {
    let mut stmt = c.prepare("SELECT DISTINCT scope_ref FROM ok_facts WHERE valid_to IS NULL")?;
    let scopes: Vec<String> = stmt.query_map([], |r| r.get(0))?.collect::<rusqlite::Result<_>>()?;
    let mut by_state: Map<String, Value> = Map::new();
    let mut current = 0;
    for f in facts::current_in(c, &scopes)? {
        let service = f.scope_ref.rsplit(['@', ':']).next().unwrap_or_default();
        if q.filter.is_some_and(|p| !f.key.starts_with(p) && !service.starts_with(p)) {
            continue;
        }
        current += 1;
        let state = f.current().state_at(q.now, q.window_ms).to_owned();
        let n = by_state.get(&state).and_then(Value::as_i64).unwrap_or(0);
        by_state.insert(state, json!(n + 1));
    }
    let superseded: i64 = c.query_row(
        "SELECT COUNT(*) FROM ok_facts WHERE valid_to IS NOT NULL AND valid_to >= ?1
           AND (?2 IS NULL OR fact_key LIKE ?2 ESCAPE '\\')",
        params![q.since, q.filter.map(|f| format!("{}%", f.replace('%', "\\%").replace('_', "\\_")))],
        |r| r.get(0),
    )?;
    Ok(json!({"current": current, "byState": by_state, "supersededInWindow": superseded}))
}
