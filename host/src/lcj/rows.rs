//! The journal's tables (`host/migrations/0013_lcj.sql`): writing events, candidates,
//! observations and audit events, and reading them back.

use rusqlite::{Connection, OptionalExtension, params};
use serde_json::Value;

use super::keys;

/// Longest candidate claim, characters.
pub const MAX_CLAIM: usize = 280;
/// Longest candidate component, characters.
pub const MAX_COMPONENT: usize = 256;
/// Longest error text of an event, characters.
pub const MAX_ERROR: usize = 220;
/// Longest argument summary of an event, characters.
pub const MAX_ARGS: usize = 400;
/// Largest observation payload, bytes.
pub const MAX_PAYLOAD: usize = 64 * 1024;

/// A tool event.
#[derive(Debug, Clone, Default)]
pub struct Event<'a> {
    /// The call's id.
    pub call_id: &'a str,
    /// The task run, when one is bound.
    pub task_id: Option<&'a str>,
    /// The tab.
    pub tab_id: Option<&'a str>,
    /// The calling agent.
    pub owner_id: &'a str,
    /// The tool.
    pub tool_name: &'a str,
    /// Whether it succeeded.
    pub success: bool,
    /// How long it took, ms.
    pub duration_ms: i64,
    /// Why it failed.
    pub error_text: Option<&'a str>,
    /// The site.
    pub context_host: &'a str,
    /// Its arguments, as recorded (secrets already replaced).
    pub args_summary: Option<&'a str>,
    /// The activity session.
    pub session: &'a str,
    /// When (ms).
    pub at: i64,
}

/// Writes an event; returns its id.
pub fn insert_event(c: &Connection, e: &Event<'_>) -> rusqlite::Result<i64> {
    c.prepare_cached(
        "INSERT INTO lcj_tool_events (call_id, task_id, tab_id, owner_id, tool_name, success, duration_ms,
             error_text, context_host, args_summary, activity_session_id, created_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
    )?
    .execute(params![
        e.call_id,
        e.task_id,
        e.tab_id,
        e.owner_id,
        e.tool_name,
        e.success,
        e.duration_ms,
        e.error_text.map(|t| keys::cut(t, MAX_ERROR)),
        e.context_host,
        e.args_summary.map(|t| keys::cut(t, MAX_ARGS)),
        e.session,
        e.at
    ])?;
    Ok(c.last_insert_rowid())
}

/// A candidate to write or merge.
#[derive(Debug, Clone)]
pub struct NewCandidate<'a> {
    /// Whose.
    pub owner_id: &'a str,
    /// The site.
    pub context_host: &'a str,
    /// The tab and task it came from.
    pub tab_id: Option<&'a str>,
    /// The task run.
    pub task_id: Option<&'a str>,
    /// What it is about.
    pub component: &'a str,
    /// What it claims.
    pub claim: &'a str,
    /// `unverified`, `verified`, `disproven`.
    pub status: &'a str,
    /// 0 to 1.
    pub confidence: f64,
    /// `diagnostic`, `semantic`, `write`, `generated`.
    pub origin: &'a str,
    /// Its key.
    pub candidate_key: &'a str,
    /// The event that raised it.
    pub source_event_id: Option<i64>,
    /// When (ms).
    pub at: i64,
}

/// A stored candidate.
#[derive(Debug, Clone, PartialEq)]
pub struct Candidate {
    /// Its id.
    pub id: i64,
    /// `unverified`, `verified`, `disproven`.
    pub status: String,
    /// 0 to 1.
    pub confidence: f64,
    /// Where it came from.
    pub origin: String,
    /// Its stable id.
    pub stable_id: String,
    /// Last change (ms).
    pub updated_at: i64,
}

const CANDIDATE: &str = "candidate_id, status, confidence, origin, stable_id, updated_at";

fn candidate(r: &rusqlite::Row<'_>) -> rusqlite::Result<Candidate> {
    Ok(Candidate {
        id: r.get(0)?,
        status: r.get(1)?,
        confidence: r.get(2)?,
        origin: r.get(3)?,
        stable_id: r.get(4)?,
        updated_at: r.get(5)?,
    })
}

/// Writes `n`, or merges it into the open candidate of the same owner, site and key (its
/// status and confidence replace the stored ones; a disproven write closes it). Returns the
/// candidate and whether it was created.
pub fn merge_candidate(c: &Connection, n: &NewCandidate<'_>) -> rusqlite::Result<(Candidate, bool)> {
    let open: Option<i64> = c
        .query_row(
            "SELECT candidate_id FROM lcj_candidates
             WHERE owner_id = ?1 AND context_host = ?2 AND candidate_key = ?3 AND status <> 'disproven'",
            params![n.owner_id, n.context_host, n.candidate_key],
            |r| r.get(0),
        )
        .optional()?;
    let verified_at = (n.status == "verified").then_some(n.at);
    let id = match open {
        Some(id) => {
            c.execute(
                "UPDATE lcj_candidates SET status = ?2, confidence = ?3, component = ?4, claim = ?5,
                     verified_at = COALESCE(verified_at, ?6), updated_at = ?7,
                     resolution_event_id = CASE WHEN ?2 <> status THEN ?8 ELSE resolution_event_id END
                 WHERE candidate_id = ?1",
                params![
                    id,
                    n.status,
                    n.confidence,
                    keys::cut(n.component, MAX_COMPONENT),
                    keys::cut(n.claim, MAX_CLAIM),
                    verified_at,
                    n.at,
                    n.source_event_id
                ],
            )?;
            id
        }
        None => {
            c.execute(
                "INSERT INTO lcj_candidates (owner_id, context_host, tab_id, task_id, component, claim, status,
                     confidence, origin, source_event_id, candidate_key, fingerprint_hash, stable_id, verified_at,
                     created_at, updated_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?15)",
                params![
                    n.owner_id,
                    n.context_host,
                    n.tab_id,
                    n.task_id,
                    keys::cut(n.component, MAX_COMPONENT),
                    keys::cut(n.claim, MAX_CLAIM),
                    n.status,
                    n.confidence,
                    n.origin,
                    n.source_event_id,
                    n.candidate_key,
                    keys::fingerprint_hash(n.component, n.claim),
                    keys::stable_id(n.candidate_key),
                    verified_at,
                    n.at
                ],
            )?;
            c.last_insert_rowid()
        }
    };
    let cand = c.query_row(
        &format!("SELECT {CANDIDATE} FROM lcj_candidates WHERE candidate_id = ?1"),
        [id],
        candidate,
    )?;
    Ok((cand, open.is_none()))
}

/// Marks the open unverified candidate of `owner` on `host` under `key` verified at 0.75 (the
/// next success of the tool in the tab that failed).
pub fn verify_open(
    c: &Connection,
    owner: &str,
    host: &str,
    key: &str,
    event: i64,
    at: i64,
) -> rusqlite::Result<()> {
    c.prepare_cached(
        "UPDATE lcj_candidates SET status = 'verified', confidence = MAX(confidence, 0.75), verified_at = ?5,
             resolution_event_id = ?4, updated_at = ?5
         WHERE owner_id = ?1 AND context_host = ?2 AND candidate_key = ?3 AND status = 'unverified'",
    )?
    .execute(params![owner, host, key, event, at])?;
    Ok(())
}

/// The best candidate under `key` on `host` (any owner): the most confident open one, else a
/// disproven one.
pub fn best_candidate(c: &Connection, host: &str, key: &str) -> rusqlite::Result<Option<Candidate>> {
    c.query_row(
        &format!(
            "SELECT {CANDIDATE} FROM lcj_candidates WHERE context_host = ?1 AND candidate_key = ?2
             ORDER BY status = 'disproven', confidence DESC, updated_at DESC LIMIT 1"
        ),
        params![host, key],
        candidate,
    )
    .optional()
}

/// An observation.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Observation {
    /// Its kind (`action_success`, `blocker_dismissed`, ...).
    pub kind: &'static str,
    /// 1 success, 0 neutral, -1 failure.
    pub outcome: i8,
    /// 0 normal, 1 light drift, 2 hard drift.
    pub severity: i8,
    /// The phenomenon it is attributed to.
    pub target_stable_id: Option<String>,
    /// The candidate it supports.
    pub candidate_key: Option<String>,
    /// The selector it used.
    pub selector_norm: Option<String>,
    /// A hash of what it saw.
    pub fingerprint_hash: Option<String>,
    /// What else is known.
    pub payload: Option<Value>,
}

/// Where and by whom an observation was made.
#[derive(Debug, Clone, Copy)]
pub struct Origin<'a> {
    /// The event.
    pub event_id: i64,
    /// The site.
    pub host: &'a str,
    /// The tab.
    pub tab: Option<&'a str>,
    /// The agent.
    pub owner: &'a str,
    /// The activity session.
    pub session: &'a str,
    /// The tool.
    pub tool: &'a str,
    /// The call and its sequence number.
    pub call: (&'a str, i64),
    /// When (ms).
    pub at: i64,
}

/// Writes an observation.
pub fn insert_observation(
    c: &Connection,
    o: &Observation,
    from: &Origin<'_>,
    throttle_key: &str,
) -> rusqlite::Result<()> {
    let payload = o.payload.as_ref().map(Value::to_string).filter(|p| p.len() <= MAX_PAYLOAD);
    c.prepare_cached(
        "INSERT INTO lcj_observations (event_id, kind, outcome, severity, context_host, tab_id, owner_id,
             activity_session_id, tool_name, target_stable_id, candidate_key, selector_norm, fingerprint_hash,
             payload_json, throttle_key, dispatch_call_id, dispatch_seq, created_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18)",
    )?
    .execute(params![
        from.event_id,
        o.kind,
        o.outcome,
        o.severity,
        from.host,
        from.tab,
        from.owner,
        from.session,
        from.tool,
        o.target_stable_id,
        o.candidate_key,
        o.selector_norm,
        o.fingerprint_hash,
        payload,
        throttle_key,
        from.call.0,
        from.call.1,
        from.at
    ])?;
    Ok(())
}

/// A stored observation, as the gates and suggestions read it.
#[derive(Debug, Clone, PartialEq)]
pub struct Seen {
    /// Its kind.
    pub kind: String,
    /// 1, 0 or -1.
    pub outcome: i64,
    /// 0, 1 or 2.
    pub severity: i64,
    /// The activity session.
    pub session: String,
    /// The tool.
    pub tool: String,
    /// The phenomenon it is attributed to.
    pub target: Option<String>,
    /// The candidate it supports.
    pub candidate_key: Option<String>,
    /// The selector.
    pub selector: Option<String>,
    /// What else is known.
    pub payload: Value,
    /// When (ms).
    pub at: i64,
}

/// Observations of `host` since `since` (ms), newest first (at most 10,000).
pub fn observations(c: &Connection, host: &str, since: i64) -> rusqlite::Result<Vec<Seen>> {
    seen(c, host, since, None)
}

/// Observations of `host` made with `selector` since `since` (ms), newest first.
pub fn with_selector(c: &Connection, host: &str, selector: &str, since: i64) -> rusqlite::Result<Vec<Seen>> {
    seen(c, host, since, Some(selector))
}

fn seen(c: &Connection, host: &str, since: i64, selector: Option<&str>) -> rusqlite::Result<Vec<Seen>> {
    let mut stmt = c.prepare_cached(
        "SELECT kind, outcome, severity, activity_session_id, tool_name, target_stable_id, candidate_key,
             selector_norm, payload_json, created_at
         FROM lcj_observations WHERE context_host = ?1 AND created_at >= ?2 AND (?3 IS NULL OR selector_norm = ?3)
         ORDER BY created_at DESC, observation_id DESC LIMIT 10000",
    )?;
    stmt.query_map(params![host, since, selector], |r| {
        Ok(Seen {
            kind: r.get(0)?,
            outcome: r.get(1)?,
            severity: r.get(2)?,
            session: r.get(3)?,
            tool: r.get(4)?,
            target: r.get(5)?,
            candidate_key: r.get(6)?,
            selector: r.get(7)?,
            payload: r
                .get::<_, Option<String>>(8)?
                .and_then(|p| serde_json::from_str(&p).ok())
                .unwrap_or(Value::Null),
            at: r.get(9)?,
        })
    })?
    .collect()
}

/// A learning-level transition, for the audit.
#[derive(Debug, Clone)]
pub struct Audit<'a> {
    /// The phenomenon.
    pub stable_id: &'a str,
    /// The site.
    pub host: &'a str,
    /// Its level before and after.
    pub levels: (&'a str, &'a str),
    /// `l0_to_l1`, `l1_to_l2`, `demotion`, `deprecation`, `revive`.
    pub reason_kind: &'a str,
    /// The gates as they stood.
    pub reason: &'a Value,
    /// Who asked.
    pub owner: &'a str,
    /// When (ms).
    pub at: i64,
}

/// Writes an audit event.
pub fn insert_audit(c: &Connection, a: &Audit<'_>) -> rusqlite::Result<()> {
    c.execute(
        "INSERT INTO lcj_audit (stable_id, context_host, from_level, to_level, reason_kind, reason_json, owner_id,
             created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
        params![a.stable_id, a.host, a.levels.0, a.levels.1, a.reason_kind, a.reason.to_string(), a.owner, a.at],
    )?;
    Ok(())
}
