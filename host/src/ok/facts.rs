//! The OK tables (`host/migrations/0009_ok.sql`): observations (append-only), facts with their
//! history (one current row per scope and key), and scopes with their revision and, for a
//! binding, the URL and account last seen in it.

use rusqlite::{Connection, OptionalExtension, params};
use serde_json::Value;

use super::rules::{Current, Source};

/// One fact row.
#[derive(Debug, Clone, PartialEq)]
pub struct Fact {
    /// Row id.
    pub id: i64,
    /// `binding:1@acme`, `service:acme`, ...
    pub scope_ref: String,
    /// The signal key.
    pub key: String,
    /// Its value.
    pub value: Value,
    /// The stored state (`fresh`, `confirmed`, `conflicted`, `stale`, `superseded`).
    pub state: String,
    /// Confidence 0 to 1.
    pub confidence: f64,
    /// Observations that agreed with it.
    pub support_count: i64,
    /// Observations that contradicted it and lost.
    pub contradiction_count: i64,
    /// `certain`, `likely` or `tentative`.
    pub certainty: String,
    /// `agent` or `system`.
    pub source: Source,
    /// The tab it was last observed in.
    pub target_id: String,
    /// The URL it was last observed at.
    pub url: Option<String>,
    /// First and last observed (ms).
    pub first_observed_at: i64,
    /// Last observed (ms).
    pub last_observed_at: i64,
}

impl Fact {
    /// What the rules need of it.
    pub fn current(&self) -> Current {
        Current {
            value: self.value.clone(),
            confidence: self.confidence,
            state: self.state.clone(),
            source: self.source,
            last_observed_at: self.last_observed_at,
        }
    }
}

const COLUMNS: &str = "id, scope_ref, fact_key, value_json, fact_state, confidence, support_count, \
     contradiction_count, certainty_level, source_kind, target_id, url, first_observed_at, last_observed_at";

fn row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Fact> {
    let value: String = r.get(3)?;
    let source: String = r.get(9)?;
    Ok(Fact {
        id: r.get(0)?,
        scope_ref: r.get(1)?,
        key: r.get(2)?,
        value: serde_json::from_str(&value).unwrap_or(Value::Null),
        state: r.get(4)?,
        confidence: r.get(5)?,
        support_count: r.get(6)?,
        contradiction_count: r.get(7)?,
        certainty: r.get(8)?,
        source: Source::parse(&source),
        target_id: r.get(10)?,
        url: r.get(11)?,
        first_observed_at: r.get(12)?,
        last_observed_at: r.get(13)?,
    })
}

/// The current fact of `scope` and `key`.
pub fn current(c: &Connection, scope: &str, key: &str) -> rusqlite::Result<Option<Fact>> {
    c.query_row(
        &format!(
            "SELECT {COLUMNS} FROM ok_facts WHERE scope_ref = ?1 AND fact_key = ?2 AND valid_to IS NULL"
        ),
        params![scope, key],
        row,
    )
    .optional()
}

/// The current facts of `scopes`, by key.
pub fn current_in(c: &Connection, scopes: &[String]) -> rusqlite::Result<Vec<Fact>> {
    let mut out = Vec::new();
    let mut stmt = c.prepare_cached(&format!(
        "SELECT {COLUMNS} FROM ok_facts WHERE scope_ref = ?1 AND valid_to IS NULL ORDER BY fact_key"
    ))?;
    for scope in scopes {
        out.extend(stmt.query_map([scope], row)?.collect::<rusqlite::Result<Vec<_>>>()?);
    }
    Ok(out)
}

/// How many current facts `scope` holds.
pub fn active_count(c: &Connection, scope: &str) -> rusqlite::Result<usize> {
    c.query_row("SELECT COUNT(*) FROM ok_facts WHERE scope_ref = ?1 AND valid_to IS NULL", [scope], |r| {
        r.get::<_, i64>(0)
    })
    .map(|n| usize::try_from(n).unwrap_or(0))
}

/// A new current fact.
pub struct NewFact<'a> {
    /// Its scope.
    pub scope: &'a str,
    /// The signal key.
    pub key: &'a str,
    /// Its value.
    pub value: &'a Value,
    /// `string`, `boolean`, `json_array`, `json`.
    pub value_type: &'a str,
    /// Its confidence.
    pub confidence: f64,
    /// `certain`, `likely`, `tentative`.
    pub certainty: &'a str,
    /// Who observed it.
    pub source: Source,
    /// The tab.
    pub target_id: &'a str,
    /// The URL.
    pub url: &'a str,
    /// When (ms).
    pub at: i64,
}

/// Inserts a new current fact; its id.
pub fn insert(c: &Connection, f: &NewFact<'_>) -> rusqlite::Result<i64> {
    c.execute(
        "INSERT INTO ok_facts (scope_ref, fact_key, value_json, value_type, fact_state, confidence,
             certainty_level, source_kind, target_id, url, valid_from, first_observed_at, last_observed_at,
             last_verified_at)
         VALUES (?1, ?2, ?3, ?4, 'fresh', ?5, ?6, ?7, ?8, ?9, ?10, ?10, ?10, ?10)",
        params![
            f.scope,
            f.key,
            f.value.to_string(),
            f.value_type,
            f.confidence,
            f.certainty,
            f.source.as_str(),
            f.target_id,
            f.url,
            f.at
        ],
    )?;
    bump(c, f.scope, f.at)?;
    Ok(c.last_insert_rowid())
}

/// The same value seen again (in `target` at `url`): support + 1, `confirmed`, the higher
/// confidence kept; the fact now says where it was last seen.
pub fn reinforce(
    c: &Connection,
    fact: &Fact,
    (confidence, certainty): (f64, &str),
    (target, url): (&str, &str),
    at: i64,
) -> rusqlite::Result<()> {
    let (confidence, certainty) = if confidence > fact.confidence {
        (confidence, certainty)
    } else {
        (fact.confidence, fact.certainty.as_str())
    };
    c.execute(
        "UPDATE ok_facts SET support_count = support_count + 1, fact_state = 'confirmed', confidence = ?2,
             certainty_level = ?3, target_id = ?4, url = ?5, last_observed_at = ?6, last_verified_at = ?6,
             content_rev = content_rev + 1
         WHERE id = ?1",
        params![fact.id, confidence, certainty, target, url, at],
    )?;
    bump(c, &fact.scope_ref, at)
}

/// A differing value lost: the fact is marked `conflicted`.
pub fn conflict(c: &Connection, fact: &Fact, at: i64) -> rusqlite::Result<()> {
    c.execute(
        "UPDATE ok_facts SET fact_state = 'conflicted', contradiction_count = contradiction_count + 1,
             content_rev = content_rev + 1
         WHERE id = ?1",
        [fact.id],
    )?;
    bump(c, &fact.scope_ref, at)
}

/// Replaces `old` with `new`: `old` becomes history (`superseded`, valid until `at`) pointing
/// at the new current fact.
pub fn supersede(c: &Connection, old: &Fact, new: &NewFact<'_>) -> rusqlite::Result<i64> {
    c.execute(
        "UPDATE ok_facts SET fact_state = 'superseded', valid_to = ?2, content_rev = content_rev + 1 WHERE id = ?1",
        params![old.id, new.at],
    )?;
    let id = insert(c, new)?;
    c.execute("UPDATE ok_facts SET superseded_by_fact_id = ?2 WHERE id = ?1", params![old.id, id])?;
    Ok(id)
}

/// Marks the current facts of `keys` in `scope` stale (the page they described is gone).
pub fn mark_stale(c: &Connection, scope: &str, keys: &[&str], at: i64) -> rusqlite::Result<usize> {
    let mut n = 0;
    for key in keys {
        n += c.execute(
            "UPDATE ok_facts SET fact_state = 'stale', content_rev = content_rev + 1
             WHERE scope_ref = ?1 AND fact_key = ?2 AND valid_to IS NULL AND fact_state != 'stale'",
            params![scope, key],
        )?;
    }
    if n > 0 {
        bump(c, scope, at)?;
    }
    Ok(n)
}

/// One observation, as stored.
pub struct Observation<'a> {
    /// The scope it was filed in.
    pub scope: &'a str,
    /// The tab, URL and service.
    pub place: &'a super::Place,
    /// Groups the claims of one perception.
    pub perception_id: Option<&'a str>,
    /// The agent (system observations: none).
    pub agent_id: Option<&'a str>,
    /// The signal key.
    pub key: &'a str,
    /// The value.
    pub value: &'a Value,
    /// `certain`, `likely`, `tentative`.
    pub certainty: &'a str,
    /// Its confidence.
    pub confidence: f64,
    /// Who observed.
    pub source: Source,
    /// What the observer says it saw.
    pub evidence: Option<&'a str>,
    /// The claim outcome.
    pub outcome: &'a str,
    /// The fact it made, reinforced or contradicted.
    pub fact_id: Option<i64>,
    /// When (ms).
    pub at: i64,
}

/// Appends an observation.
pub fn observe(c: &Connection, o: &Observation<'_>) -> rusqlite::Result<()> {
    c.execute(
        "INSERT INTO ok_observations (observed_at, scope_ref, target_id, service_key, url, perception_id,
             agent_id, signal_key, value_json, certainty_level, confidence, source_kind, evidence, outcome, fact_id)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)",
        params![
            o.at,
            o.scope,
            o.place.target,
            o.place.service,
            o.place.url,
            o.perception_id,
            o.agent_id,
            o.key,
            o.value.to_string(),
            o.certainty,
            o.confidence,
            o.source.as_str(),
            o.evidence,
            o.outcome,
            o.fact_id
        ],
    )?;
    Ok(())
}

/// What is kept of a binding (a tab on a service).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Binding {
    /// The URL its state was last observed at.
    pub last_url: Option<String>,
    /// The account seen in it (`account:{fingerprint}`).
    pub account_ref: Option<String>,
}

/// The binding `scope`, if this tab was ever observed on this service.
pub fn binding(c: &Connection, scope: &str) -> rusqlite::Result<Option<Binding>> {
    c.query_row("SELECT last_url, account_ref FROM ok_scopes WHERE scope_ref = ?1", [scope], |r| {
        Ok(Binding { last_url: r.get(0)?, account_ref: r.get(1)? })
    })
    .optional()
}

/// Makes sure `scope` exists (with its parent: a binding's and an account's is the service).
pub fn ensure_scope(c: &Connection, scope: &str, parent: Option<&str>, at: i64) -> rusqlite::Result<()> {
    if let Some(p) = parent {
        ensure_scope(c, p, None, at)?;
    }
    c.execute(
        "INSERT INTO ok_scopes (scope_ref, kind, parent_ref, created_at, updated_at) VALUES (?1, ?2, ?3, ?4, ?4)
         ON CONFLICT (scope_ref) DO NOTHING",
        params![scope, super::scope_kind(scope), parent, at],
    )?;
    Ok(())
}

/// Records the URL a binding was observed at.
pub fn set_url(c: &Connection, scope: &str, url: &str, at: i64) -> rusqlite::Result<()> {
    c.execute(
        "UPDATE ok_scopes SET last_url = ?2, updated_at = ?3 WHERE scope_ref = ?1",
        params![scope, url, at],
    )?;
    Ok(())
}

/// Links a binding to the account seen in it.
pub fn set_account(c: &Connection, scope: &str, account: &str, at: i64) -> rusqlite::Result<()> {
    c.execute(
        "UPDATE ok_scopes SET account_ref = ?2, updated_at = ?3 WHERE scope_ref = ?1",
        params![scope, account, at],
    )?;
    Ok(())
}

/// A change in `scope`: its revision and its parent's go up.
fn bump(c: &Connection, scope: &str, at: i64) -> rusqlite::Result<()> {
    c.execute(
        "UPDATE ok_scopes SET content_rev = content_rev + 1, updated_at = ?2
         WHERE scope_ref = ?1 OR scope_ref = (SELECT parent_ref FROM ok_scopes WHERE scope_ref = ?1)",
        params![scope, at],
    )?;
    Ok(())
}
