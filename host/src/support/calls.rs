//! The calls as support sees them: one row per tool call (the TOB observation, with the verdict
//! of its guarded transition when it had one), and the filters of `nova log` (docs/support.md).

use rusqlite::types::Value as Sql;
use rusqlite::{Connection, Row};
use serde::{Deserialize, Serialize};

/// What a call came to, as `nova log` prints it and `--outcome` filters it.
pub const OUTCOMES: &[&str] =
    &["success", "failed", "blocked", "invalid", "verified_success", "verified_fail", "in_doubt"];

/// The filters of `nova log` and `nova report`; every one is optional and they all hold at once.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    /// Calls that started at or after (ms since the epoch).
    pub since_ms: Option<i64>,
    /// Calls that started before.
    pub until_ms: Option<i64>,
    /// Tool names (`nova.click_selector`; `click_selector` is read as `nova.click_selector`).
    pub tools: Vec<String>,
    /// Agent ids.
    pub agents: Vec<String>,
    /// Tab ids.
    pub tabs: Vec<String>,
    /// MCP session ids (a prefix is enough).
    pub sessions: Vec<String>,
    /// Outcomes, from [`OUTCOMES`].
    pub outcomes: Vec<String>,
    /// Gate ids that blocked, warned or were bypassed on the call.
    pub gates: Vec<String>,
    /// Only calls after this sequence number (`--follow`).
    pub after_seq: Option<i64>,
}

/// One call.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CallRow {
    /// Sequence number, monotonic across hub restarts; none for a call its hub died in.
    pub seq: Option<i64>,
    /// The call's id.
    pub call_id: String,
    /// When it started (ms since the epoch).
    pub at_ms: i64,
    /// The same as ISO 8601 (UTC).
    pub at: String,
    /// The agent that made it.
    pub agent: String,
    /// Its MCP session.
    pub mcp_session: String,
    /// The tab it ran on, when one was resolved.
    pub tab: Option<String>,
    /// The tool.
    pub tool: String,
    /// What it came to (one of [`OUTCOMES`]).
    pub outcome: String,
    /// The reason code: the gate's, the verdict's or the error's; for a verified success, what
    /// weakens it (`post_back_unconfirmed`, `sign_in_unconfirmed`).
    pub reason: Option<String>,
    /// The URL it ran on (after, else before).
    pub url: Option<String>,
    /// How long it took.
    pub duration_ms: i64,
    /// The guarded transition it ran, if any.
    pub transition_id: Option<String>,
    /// The gate that blocked it, if one did.
    pub gate: Option<String>,
}

/// The calls that were recorded: the observation rows with their transition. A plain subquery
/// SQLite flattens, so that filters and `ORDER BY at_ms` use the observations' indexes.
const RECORDED: &str = "(SELECT o.seq AS seq, o.call_id AS call_id, o.started_at_ms AS at_ms, o.agent_id AS agent, \
        o.mcp_session AS session, o.target_id AS tab, o.tool AS tool, o.outcome_kind AS kind, \
        o.reason_code AS reason_code, o.error_code AS error_code, o.url_effective AS url, \
        o.duration_ms AS duration_ms, o.aag_gates AS aag_gates, t.transition_id AS transition_id, \
        t.state AS state, t.verification_status AS verification, t.indeterminate_reason AS indeterminate, \
        t.dispatch_status AS dispatch, t.caveat AS caveat \
     FROM observations o LEFT JOIN transitions t ON t.call_id = o.call_id) c";

/// [`RECORDED`] without the transitions, for counts that do not filter by outcome.
const RECORDED_BARE: &str = "(SELECT o.seq AS seq, o.call_id AS call_id, o.started_at_ms AS at_ms, \
        o.agent_id AS agent, o.mcp_session AS session, o.target_id AS tab, o.tool AS tool, \
        o.error_code AS error_code, o.aag_gates AS aag_gates FROM observations o) c";

/// The transitions a hub died in the middle of (marked in doubt by the next hub): their call has
/// no observation, since the hub that would have written it is gone, and no sequence number.
const LOST: &str = "(SELECT NULL AS seq, t.call_id AS call_id, t.started_at_ms AS at_ms, t.agent_id AS agent, \
        t.mcp_session AS session, t.target_id AS tab, t.tool AS tool, 'failed' AS kind, \
        NULL AS reason_code, NULL AS error_code, t.url_before AS url, 0 AS duration_ms, NULL AS aag_gates, \
        t.transition_id AS transition_id, t.state AS state, t.verification_status AS verification, \
        t.indeterminate_reason AS indeterminate, t.dispatch_status AS dispatch, t.caveat AS caveat \
     FROM transitions t WHERE t.state = 'in_doubt' \
        AND NOT EXISTS (SELECT 1 FROM observations o2 WHERE o2.call_id = t.call_id)) c";

/// The columns [`row`] reads, in order.
pub(crate) const COLUMNS: &str = "c.seq, c.call_id, c.at_ms, c.agent, c.session, c.tab, c.tool, c.kind, \
     c.reason_code, c.error_code, c.url, c.duration_ms, c.transition_id, c.state, c.verification, \
     c.indeterminate, c.dispatch, c.caveat";

/// The SQL expression of a call's outcome (one of [`OUTCOMES`]), over `c`.
const OUTCOME_SQL: &str = "CASE \
     WHEN c.kind = 'blocked_preflight' THEN 'blocked' \
     WHEN c.kind = 'invalid_params' THEN 'invalid' \
     WHEN c.state = 'in_doubt' OR c.verification = 'indeterminate' THEN 'in_doubt' \
     WHEN c.verification = 'verified_success' THEN 'verified_success' \
     WHEN c.verification = 'verified_fail' THEN 'verified_fail' \
     WHEN c.kind = 'success' THEN 'success' ELSE 'failed' END";

/// Reads one row selected with [`COLUMNS`] and then [`OUTCOME_SQL`].
pub(crate) fn row(r: &Row<'_>) -> rusqlite::Result<CallRow> {
    // The outcome is decided once, in SQL (`OUTCOME_SQL`), where `--outcome` filters by it too.
    let outcome: String = r.get(18)?;
    let outcome = outcome.as_str();
    let state: Option<String> = r.get(13)?;
    let reason_code: Option<String> = r.get(8)?;
    let error_code: Option<String> = r.get(9)?;
    let indeterminate: Option<String> = r.get(15)?;
    let dispatch: Option<String> = r.get(16)?;
    let caveat: Option<String> = r.get(17)?;
    let gate = error_code.as_deref().and_then(|c| c.strip_prefix("aag_blocked:")).map(str::to_owned);
    let reason = match outcome {
        // The hub that ran it died before the verdict (the journal's reason says only `timeout`).
        "in_doubt" if state.as_deref() == Some("in_doubt") => Some("hub_died_before_verdict".to_owned()),
        // What the journal kept of why (a form whose page then asked to sign in), else the watch's.
        "in_doubt" => caveat.or(indeterminate).or(reason_code),
        // What weakens a verified success (a post-back with no success message).
        "verified_success" => caveat.or(reason_code),
        _ => reason_code.or(error_code).or(dispatch.filter(|d| d != "dispatched")),
    };
    let at_ms: i64 = r.get(2)?;
    Ok(CallRow {
        seq: r.get(0)?,
        call_id: r.get(1)?,
        at_ms,
        at: crate::time::iso(at_ms),
        agent: r.get(3)?,
        mcp_session: r.get(4)?,
        tab: r.get(5)?,
        tool: r.get(6)?,
        outcome: outcome.into(),
        reason,
        url: r.get(10)?,
        duration_ms: r.get(11)?,
        transition_id: r.get(12)?,
        gate,
    })
}

impl Filter {
    /// Checks the values that have a closed set; the error names the flag and what it takes.
    pub fn validate(&self) -> Result<(), String> {
        if let Some(bad) = self.outcomes.iter().find(|o| !OUTCOMES.contains(&o.as_str())) {
            return Err(format!("--outcome `{bad}` is not one of {}", OUTCOMES.join(", ")));
        }
        if let (Some(s), Some(u)) = (self.since_ms, self.until_ms)
            && s >= u
        {
            return Err("--since must be before --until".into());
        }
        Ok(())
    }

    /// The WHERE clause and its parameters.
    fn clause(&self) -> (String, Vec<Sql>) {
        let mut parts: Vec<String> = Vec::new();
        let mut params: Vec<Sql> = Vec::new();
        if let Some(s) = self.since_ms {
            parts.push("c.at_ms >= ?".into());
            params.push(Sql::Integer(s));
        }
        if let Some(u) = self.until_ms {
            parts.push("c.at_ms < ?".into());
            params.push(Sql::Integer(u));
        }
        if let Some(seq) = self.after_seq {
            parts.push("c.seq > ?".into());
            params.push(Sql::Integer(seq));
        }
        let tools: Vec<String> = self
            .tools
            .iter()
            .map(|t| if t.contains('.') { t.clone() } else { format!("nova.{t}") })
            .collect();
        any_of(&mut parts, &mut params, "c.tool = ?", &tools);
        any_of(&mut parts, &mut params, "c.agent = ?", &self.agents);
        any_of(&mut parts, &mut params, "c.tab = ?", &self.tabs);
        let prefixes: Vec<String> = self.sessions.iter().map(|s| format!("{}%", like_escape(s))).collect();
        any_of(&mut parts, &mut params, "c.session LIKE ? ESCAPE '\\'", &prefixes);
        any_of(&mut parts, &mut params, &format!("({OUTCOME_SQL}) = ?"), &self.outcomes);
        if !self.gates.is_empty() {
            let mut ors = Vec::new();
            for g in &self.gates {
                ors.push("c.error_code = ? OR c.aag_gates LIKE ? ESCAPE '\\'");
                params.push(Sql::Text(format!("aag_blocked:{g}")));
                params.push(Sql::Text(format!("%\"{}\"%", like_escape(g))));
            }
            parts.push(format!("({})", ors.join(" OR ")));
        }
        let clause = if parts.is_empty() { String::new() } else { format!("WHERE {}", parts.join(" AND ")) };
        (clause, params)
    }
}

fn any_of(parts: &mut Vec<String>, params: &mut Vec<Sql>, test: &str, values: &[String]) {
    if values.is_empty() {
        return;
    }
    parts.push(format!("({})", vec![test; values.len()].join(" OR ")));
    params.extend(values.iter().map(|v| Sql::Text(v.clone())));
}

fn like_escape(s: &str) -> String {
    s.replace('\\', "\\\\").replace('%', "\\%").replace('_', "\\_")
}

/// The last `limit` calls matching `filter` (all when `None`), oldest first.
pub fn query(conn: &Connection, filter: &Filter, limit: Option<usize>) -> rusqlite::Result<Vec<CallRow>> {
    let (clause, params) = filter.clause();
    let limit_sql = limit.map_or(String::new(), |n| format!("LIMIT {n}"));
    let mut rows = Vec::new();
    // Lost calls have no sequence number: `--follow` (after a sequence number) never lists them.
    let relations: &[&str] = if filter.after_seq.is_some() { &[RECORDED] } else { &[RECORDED, LOST] };
    for relation in relations {
        let sql = format!(
            "SELECT {COLUMNS}, {OUTCOME_SQL} FROM {relation} {clause} ORDER BY c.at_ms DESC, c.seq DESC {limit_sql}"
        );
        let mut stmt = conn.prepare(&sql)?;
        let found = stmt.query_map(rusqlite::params_from_iter(params.iter()), row)?;
        rows.extend(found.collect::<rusqlite::Result<Vec<_>>>()?);
    }
    rows.sort_by_key(|r| std::cmp::Reverse((r.at_ms, r.seq)));
    if let Some(n) = limit {
        rows.truncate(n);
    }
    rows.reverse();
    Ok(rows)
}

/// How many calls match `filter`.
pub fn count(conn: &Connection, filter: &Filter) -> rusqlite::Result<i64> {
    let (clause, params) = filter.clause();
    let recorded = if filter.outcomes.is_empty() { RECORDED_BARE } else { RECORDED };
    let mut total = 0;
    for relation in [recorded, LOST] {
        let sql = format!("SELECT COUNT(*) FROM {relation} {clause}");
        total += conn.query_row(&sql, rusqlite::params_from_iter(params.iter()), |r| r.get::<_, i64>(0))?;
    }
    Ok(total)
}

/// The call whose id is `id`, or starts with it (the 8-digit short id of the hub's log lines).
pub fn find(conn: &Connection, id: &str) -> Result<CallRow, String> {
    if id.len() < 4 || !id.chars().all(|c| c.is_ascii_hexdigit() || c == '-') {
        return Err(format!("`{id}` is not a call id (at least 4 hex digits, as `nova log` prints them)"));
    }
    // GLOB, unlike LIKE, is case-sensitive and so walks the call id's index (ids are lowercase).
    let pattern = format!("{}*", id.to_ascii_lowercase());
    let mut found: Vec<CallRow> = Vec::new();
    for relation in [RECORDED, LOST] {
        let sql = format!(
            "SELECT {COLUMNS}, {OUTCOME_SQL} FROM {relation} WHERE c.call_id GLOB ?1 ORDER BY c.at_ms LIMIT 2"
        );
        let rows: rusqlite::Result<Vec<CallRow>> =
            conn.prepare(&sql).and_then(|mut s| s.query_map([&pattern], row)?.collect());
        found.extend(rows.map_err(|e| format!("the store could not be read: {e}"))?);
    }
    match found.as_slice() {
        [one] => Ok(one.clone()),
        [] => Err(format!("no call `{id}` in this store (see `nova log`)")),
        _ => Err(format!("`{id}` names more than one call; give more digits")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bad_outcome_names_the_flag_and_the_choices() {
        let f = Filter { outcomes: vec!["maybe".into()], ..Default::default() };
        let e = f.validate().expect_err("refused");
        assert!(e.contains("--outcome `maybe`") && e.contains("in_doubt"), "{e}");
        let f = Filter { since_ms: Some(5), until_ms: Some(5), ..Default::default() };
        assert!(f.validate().is_err());
    }

    #[test]
    fn short_tool_names_and_session_prefixes_are_read_as_people_type_them() {
        let f = Filter {
            tools: vec!["click_selector".into()],
            sessions: vec!["ab_".into()],
            ..Default::default()
        };
        let (clause, params) = f.clause();
        assert!(clause.contains("c.tool = ?") && clause.contains("LIKE"), "{clause}");
        assert_eq!(params[0], Sql::Text("nova.click_selector".into()));
        assert_eq!(params[1], Sql::Text("ab\\_%".into()));
    }
}
