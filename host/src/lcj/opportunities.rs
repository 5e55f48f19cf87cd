//! Semantic learning opportunities as stored (`host/migrations/0014_lcj_semantic.sql`): open ones
//! (`prompted`, `warned`, `strict`) escalate with each further call on their site until the agent
//! resolves them (`resolved`) or defers them (`deferred`, asked again after a day).

use rusqlite::{Connection, OptionalExtension, params};
use serde_json::Value;

/// Calls on its site, unresolved, after which a prompted opportunity is `warned`.
pub const WARN_AFTER: i64 = 3;
/// Calls after which it is `strict` (the gate then acts at its mode).
pub const STRICT_AFTER: i64 = 6;
/// How long a deferred opportunity stays quiet, ms.
pub const DEFER_MS: i64 = 86_400_000;

/// One opportunity.
#[derive(Debug, Clone, PartialEq)]
pub struct Opportunity {
    /// `sem:{kind}:{origin}:{fingerprint}`.
    pub id: String,
    /// `consent_cmp`, `login_wall`, `risky_repeat`.
    pub kind: String,
    /// The site.
    pub origin: String,
    /// What identifies the situation on it.
    pub fingerprint: String,
    /// `prompted`, `warned`, `strict`, `resolved`, `deferred`.
    pub state: String,
    /// 0 to 1.
    pub confidence: f64,
    /// Why it was raised.
    pub reason: String,
    /// What was seen.
    pub evidence: Value,
    /// A phenomenon to start from.
    pub skeleton: Value,
    /// Calls on the site since, unresolved.
    pub eligible_calls: i64,
    /// The verdict, its reason, what resolved it, when.
    pub verdict: Option<String>,
    /// The verdict's reason.
    pub verdict_reason: Option<String>,
    /// `learn_resolve_opportunity` or `pks_upsert`.
    pub match_source: Option<String>,
    /// When it was resolved or deferred (ms).
    pub resolved_at: Option<i64>,
    /// Whether a domain-exit summary listed it.
    pub summarized: bool,
}

impl Opportunity {
    /// A new opportunity of `kind` on `origin` (`fingerprint`), as raised.
    pub fn new(
        kind: &str,
        origin: &str,
        fingerprint: &str,
        confidence: f64,
        reason: String,
        evidence: Value,
        skeleton: Value,
    ) -> Self {
        Self {
            id: format!("sem:{kind}:{origin}:{fingerprint}"),
            kind: kind.to_owned(),
            origin: origin.to_owned(),
            fingerprint: fingerprint.to_owned(),
            state: "prompted".into(),
            confidence,
            reason,
            evidence,
            skeleton,
            eligible_calls: 0,
            verdict: None,
            verdict_reason: None,
            match_source: None,
            resolved_at: None,
            summarized: false,
        }
    }

    /// Whether it still asks for a resolution.
    pub fn open(&self) -> bool {
        matches!(self.state.as_str(), "prompted" | "warned" | "strict")
    }
}

const COLUMNS: &str = "opportunity_id, kind, origin, fingerprint, state, confidence, reason, evidence_json, \
     skeleton_json, eligible_calls, verdict, verdict_reason, match_source, resolved_at, summarized";

fn row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Opportunity> {
    let json = |s: Option<String>| s.and_then(|s| serde_json::from_str(&s).ok()).unwrap_or(Value::Null);
    Ok(Opportunity {
        id: r.get(0)?,
        kind: r.get(1)?,
        origin: r.get(2)?,
        fingerprint: r.get(3)?,
        state: r.get(4)?,
        confidence: r.get(5)?,
        reason: r.get(6)?,
        evidence: json(r.get(7)?),
        skeleton: json(r.get(8)?),
        eligible_calls: r.get(9)?,
        verdict: r.get(10)?,
        verdict_reason: r.get(11)?,
        match_source: r.get(12)?,
        resolved_at: r.get(13)?,
        summarized: r.get(14)?,
    })
}

/// One opportunity by id.
pub fn get(c: &Connection, id: &str) -> rusqlite::Result<Option<Opportunity>> {
    c.query_row(&format!("SELECT {COLUMNS} FROM lcj_semantic WHERE opportunity_id = ?1"), [id], row)
        .optional()
}

/// The open opportunities of a site, oldest first.
pub fn open_on(c: &Connection, origin: &str) -> rusqlite::Result<Vec<Opportunity>> {
    let mut stmt = c.prepare_cached(&format!(
        "SELECT {COLUMNS} FROM lcj_semantic WHERE origin = ?1 AND state IN ('prompted', 'warned', 'strict')
         ORDER BY created_at, opportunity_id"
    ))?;
    stmt.query_map([origin], row)?.collect()
}

/// Raises `o` (new, or a deferred one whose quiet day is over); returns whether it was raised.
pub fn raise(c: &Connection, o: &Opportunity, owner: &str, now: i64) -> rusqlite::Result<bool> {
    if let Some(old) = get(c, &o.id)? {
        let quiet_over = old.state == "deferred" && old.resolved_at.is_some_and(|at| now - at >= DEFER_MS);
        if !quiet_over {
            return Ok(false);
        }
        c.execute(
            "UPDATE lcj_semantic SET state = 'prompted', eligible_calls = 0, summarized = 0, updated_at = ?2
             WHERE opportunity_id = ?1",
            params![o.id, now],
        )?;
        return Ok(true);
    }
    c.execute(
        "INSERT INTO lcj_semantic (opportunity_id, kind, origin, fingerprint, state, confidence, reason, evidence_json,
             skeleton_json, owner_id, created_at, updated_at)
         VALUES (?1, ?2, ?3, ?4, 'prompted', ?5, ?6, ?7, ?8, ?9, ?10, ?10)",
        params![
            o.id,
            o.kind,
            o.origin,
            o.fingerprint,
            o.confidence,
            o.reason,
            o.evidence.to_string(),
            o.skeleton.to_string(),
            owner,
            now
        ],
    )?;
    Ok(true)
}

/// Counts a call on `origin` against its open opportunities and escalates them.
pub fn escalate(c: &Connection, origin: &str, now: i64) -> rusqlite::Result<()> {
    c.execute(
        "UPDATE lcj_semantic SET eligible_calls = eligible_calls + 1, updated_at = ?2,
             state = CASE WHEN eligible_calls + 1 >= ?4 THEN 'strict'
                          WHEN eligible_calls + 1 >= ?3 THEN 'warned' ELSE state END
         WHERE origin = ?1 AND state IN ('prompted', 'warned', 'strict')",
        params![origin, now, WARN_AFTER, STRICT_AFTER],
    )?;
    Ok(())
}

/// Closes `id` with a verdict (`defer` leaves it deferred); returns it as it was before.
pub fn resolve(
    c: &Connection,
    id: &str,
    verdict: &str,
    reason: Option<&str>,
    source: &str,
    now: i64,
) -> rusqlite::Result<Option<Opportunity>> {
    let Some(before) = get(c, id)? else { return Ok(None) };
    let state = if verdict == "defer" { "deferred" } else { "resolved" };
    c.execute(
        "UPDATE lcj_semantic SET state = ?2, verdict = ?3, verdict_reason = ?4, match_source = ?5, resolved_at = ?6,
             updated_at = ?6 WHERE opportunity_id = ?1",
        params![id, state, verdict, reason, source, now],
    )?;
    Ok(Some(before))
}

/// Marks the site's open opportunities as listed in a domain-exit summary; returns those not
/// listed before.
pub fn summarize(c: &Connection, origin: &str, now: i64) -> rusqlite::Result<Vec<Opportunity>> {
    let fresh: Vec<Opportunity> = open_on(c, origin)?.into_iter().filter(|o| !o.summarized).collect();
    for o in &fresh {
        c.execute(
            "UPDATE lcj_semantic SET summarized = 1, updated_at = ?2 WHERE opportunity_id = ?1",
            params![o.id, now],
        )?;
    }
    Ok(fresh)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn opp(id: &str) -> Opportunity {
        Opportunity {
            id: id.into(),
            ..Opportunity::new("consent_cmp", "a.org", "f", 0.8, "r".into(), json!({}), json!({}))
        }
    }

    #[test]
    fn opportunities_escalate_resolve_and_defer_for_a_day() {
        let dir = tempfile::tempdir().expect("tmp");
        let c = crate::store::open(&dir.path().join("n.db")).expect("open");
        assert!(raise(&c, &opp("sem:a"), "ada", 0).expect("raise"));
        assert!(!raise(&c, &opp("sem:a"), "ada", 1).expect("again"), "raised once");
        let states = |c: &Connection| get(c, "sem:a").expect("get").map(|o| (o.state, o.eligible_calls));
        for _ in 0..WARN_AFTER {
            escalate(&c, "a.org", 2).expect("esc");
        }
        assert_eq!(states(&c), Some(("warned".into(), WARN_AFTER)));
        for _ in WARN_AFTER..STRICT_AFTER {
            escalate(&c, "a.org", 3).expect("esc");
        }
        assert_eq!(states(&c).map(|s| s.0), Some("strict".into()));
        assert_eq!(summarize(&c, "a.org", 4).expect("s").len(), 1);
        assert!(summarize(&c, "a.org", 5).expect("s").is_empty(), "listed once");
        let before = resolve(&c, "sem:a", "defer", None, "learn_resolve_opportunity", 10).expect("r");
        assert_eq!(before.map(|o| o.state), Some("strict".into()));
        assert!(open_on(&c, "a.org").expect("open").is_empty());
        assert!(!raise(&c, &opp("sem:a"), "ada", 10 + DEFER_MS - 1).expect("quiet"));
        assert!(raise(&c, &opp("sem:a"), "ada", 10 + DEFER_MS).expect("asked again"));
        assert_eq!(states(&c), Some(("prompted".into(), 0)));
    }
}
