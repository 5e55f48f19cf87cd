//! The PKS tables (`host/migrations/0010_pks.sql`): a domain record per site, its phenomena
//! with their health, and every reported outcome.

use rusqlite::{Connection, OptionalExtension, params};
use serde_json::Value;
use sha2::{Digest, Sha256};

use super::model::Phenomenon;

/// Days the success rate looks back over.
pub const HEALTH_DAYS: i64 = 30;

/// A site's record.
#[derive(Debug, Clone, PartialEq)]
pub struct Domain {
    /// The site.
    pub scope: String,
    /// `unknown`, `low`, `medium`, `high`.
    pub trust: String,
    /// What the site is (`classification`, capabilities, ...).
    pub context: Value,
    /// Goes up with every change to the site's knowledge.
    pub content_rev: i64,
    /// Last change (ms).
    pub updated_at: i64,
}

/// One stored phenomenon.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// Its stable id.
    pub id: String,
    /// Its type (`consent_cmp`, ...).
    pub kind: String,
    /// `L0` candidate, `L1` shadow, `L2` active.
    pub level: String,
    /// Where it came from (`manual`, `platform:onetrust`, ...).
    pub origin: String,
    /// Its fingerprint, playbook and context as stored.
    pub fingerprint: Value,
    /// Its playbook.
    pub playbook: Value,
    /// Where it applies.
    pub context: Value,
    /// Retired, and why.
    pub deprecated: Option<String>,
    /// Drift debt, 0 to 1.
    pub drift_debt: f64,
    /// Attempts, successes, failures, failures in a row.
    pub attempts: (i64, i64, i64, i64),
    /// Last outcome and when.
    pub last: (Option<String>, Option<i64>),
    /// Last change (ms).
    pub updated_at: i64,
    /// The learning candidate it grew from (`nova.learn_generate`), when it did.
    pub candidate_key: Option<String>,
    /// When it was retired (ms), while it is.
    pub deprecated_at: Option<i64>,
}

#[cfg(test)]
impl Entry {
    /// A bare entry for tests: `id` of `kind` at `level`, nothing else known.
    pub fn sample(id: &str, kind: &str, level: &str) -> Self {
        Self {
            id: id.into(),
            kind: kind.into(),
            level: level.into(),
            origin: "manual".into(),
            fingerprint: Value::Null,
            playbook: Value::Null,
            context: Value::Null,
            deprecated: None,
            drift_debt: 0.0,
            attempts: (0, 0, 0, 0),
            last: (None, None),
            updated_at: 0,
            candidate_key: None,
            deprecated_at: None,
        }
    }
}

impl Entry {
    /// Whether agents may use it (`L2`, not deprecated): the only entries matched and applied.
    pub fn active(&self) -> bool {
        self.level == "L2" && self.deprecated.is_none()
    }
}

/// The site's record.
pub fn domain(c: &Connection, scope: &str) -> rusqlite::Result<Option<Domain>> {
    c.query_row(
        "SELECT scope, trust, context_json, content_rev, updated_at FROM pks_domains WHERE scope = ?1",
        [scope],
        |r| {
            let ctx: String = r.get(2)?;
            Ok(Domain {
                scope: r.get(0)?,
                trust: r.get(1)?,
                context: serde_json::from_str(&ctx).unwrap_or(Value::Null),
                content_rev: r.get(3)?,
                updated_at: r.get(4)?,
            })
        },
    )
    .optional()
}

/// Every site, in name order.
pub fn domains(c: &Connection) -> rusqlite::Result<Vec<Domain>> {
    let mut stmt = c.prepare("SELECT scope FROM pks_domains ORDER BY scope")?;
    let scopes: Vec<String> = stmt.query_map([], |r| r.get(0))?.collect::<rusqlite::Result<_>>()?;
    Ok(scopes.iter().filter_map(|s| domain(c, s).ok().flatten()).collect())
}

/// Creates the site's record if needed, sets what is given, and counts a change.
pub fn touch_domain(
    c: &Connection,
    scope: &str,
    trust: Option<&str>,
    context: Option<&Value>,
    now: i64,
) -> rusqlite::Result<()> {
    c.execute(
        "INSERT INTO pks_domains (scope, created_at, updated_at) VALUES (?1, ?2, ?2) ON CONFLICT (scope) DO NOTHING",
        params![scope, now],
    )?;
    if let Some(t) = trust {
        c.execute("UPDATE pks_domains SET trust = ?2 WHERE scope = ?1", params![scope, t])?;
    }
    if let Some(ctx) = context {
        c.execute(
            "UPDATE pks_domains SET context_json = ?2 WHERE scope = ?1",
            params![scope, ctx.to_string()],
        )?;
    }
    c.execute(
        "UPDATE pks_domains SET content_rev = content_rev + 1, updated_at = ?2 WHERE scope = ?1",
        params![scope, now],
    )?;
    Ok(())
}

const COLUMNS: &str = "stable_id, kind, learning_level, origin, fingerprint_json, playbook_json, context_json, \
     deprecated, deprecated_reason, drift_debt, total_attempts, success_count, failure_count, consecutive_failures, \
     last_outcome, last_attempt_at, updated_at, candidate_key, deprecated_at";

fn row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Entry> {
    let json = |i: usize| -> rusqlite::Result<Value> {
        Ok(serde_json::from_str(&r.get::<_, String>(i)?).unwrap_or(Value::Null))
    };
    let deprecated: bool = r.get(7)?;
    Ok(Entry {
        id: r.get(0)?,
        kind: r.get(1)?,
        level: r.get(2)?,
        origin: r.get(3)?,
        fingerprint: json(4)?,
        playbook: json(5)?,
        context: json(6)?,
        deprecated: deprecated.then(|| r.get::<_, Option<String>>(8).ok().flatten().unwrap_or_default()),
        drift_debt: r.get(9)?,
        attempts: (r.get(10)?, r.get(11)?, r.get(12)?, r.get(13)?),
        last: (r.get(14)?, r.get(15)?),
        updated_at: r.get(16)?,
        candidate_key: r.get(17)?,
        deprecated_at: r.get(18)?,
    })
}

/// One phenomenon of the site, its id matched without regard to case.
pub fn entry(c: &Connection, scope: &str, id: &str) -> rusqlite::Result<Option<Entry>> {
    c.query_row(
        &format!("SELECT {COLUMNS} FROM pks_phenomena WHERE scope = ?1 AND stable_id = ?2 COLLATE NOCASE"),
        params![scope, id],
        row,
    )
    .optional()
}

/// Every phenomenon of the site, by id.
pub fn entries(c: &Connection, scope: &str) -> rusqlite::Result<Vec<Entry>> {
    let mut stmt =
        c.prepare(&format!("SELECT {COLUMNS} FROM pks_phenomena WHERE scope = ?1 ORDER BY stable_id"))?;
    stmt.query_map([scope], row)?.collect()
}

/// The id a phenomenon gets when it names none: its type and a hash of its fingerprint.
pub fn stable_id(p: &Phenomenon) -> String {
    let mut signals: Vec<_> = p.fingerprint.signals.iter().map(|s| (s.kind, &s.matches, &s.locale)).collect();
    signals.sort();
    let digest = Sha256::digest(format!("{signals:?}").as_bytes());
    format!("{}_{}", p.kind.as_str(), digest.iter().take(4).map(|b| format!("{b:02x}")).collect::<String>())
}

/// What an upsert did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Upserted {
    /// A new phenomenon (at `level`).
    Created,
    /// An existing one rewritten.
    Updated,
    /// A deprecated one rewritten and back in use.
    Reactivated,
}

impl Upserted {
    /// Wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Created => "created",
            Self::Updated => "updated",
            Self::Reactivated => "reactivated",
        }
    }
}

/// Writes `p` as `id` into `scope` (a new one at `level`, from `origin`). The drift baseline
/// stays what it was when the phenomenon was first stored.
pub fn upsert(
    c: &Connection,
    scope: &str,
    id: &str,
    p: &Phenomenon,
    (level, origin): (&str, &str),
    now: i64,
) -> rusqlite::Result<Upserted> {
    let fingerprint = serde_json::to_string(&p.fingerprint).unwrap_or_default();
    let playbook = serde_json::to_string(&p.playbook).unwrap_or_default();
    let context = serde_json::to_string(&p.context).unwrap_or_default();
    c.execute(
        "INSERT INTO pks_domains (scope, created_at, updated_at) VALUES (?1, ?2, ?2) ON CONFLICT (scope) DO NOTHING",
        params![scope, now],
    )?;
    let existing = entry(c, scope, id)?;
    let done = match &existing {
        None => {
            let baseline = serde_json::to_string(&p.fingerprint.signals).unwrap_or_default();
            c.execute(
                "INSERT INTO pks_phenomena (scope, stable_id, kind, learning_level, origin, fingerprint_json,
                     playbook_json, context_json, baseline_json, created_at, updated_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?10)",
                params![
                    scope,
                    id,
                    p.kind.as_str(),
                    level,
                    origin,
                    fingerprint,
                    playbook,
                    context,
                    baseline,
                    now
                ],
            )?;
            Upserted::Created
        }
        Some(e) => {
            c.execute(
                "UPDATE pks_phenomena SET kind = ?3, fingerprint_json = ?4, playbook_json = ?5, context_json = ?6,
                     deprecated = 0, deprecated_reason = NULL, deprecated_at = NULL, updated_at = ?7
                 WHERE scope = ?1 AND stable_id = ?2",
                params![scope, e.id, p.kind.as_str(), fingerprint, playbook, context, now],
            )?;
            if e.deprecated.is_some() { Upserted::Reactivated } else { Upserted::Updated }
        }
    };
    touch_domain(c, scope, None, None, now)?;
    Ok(done)
}

/// Retires a phenomenon; false when there is none.
pub fn deprecate(c: &Connection, scope: &str, id: &str, reason: &str, now: i64) -> rusqlite::Result<bool> {
    let n = c.execute(
        "UPDATE pks_phenomena SET deprecated = 1, deprecated_reason = ?3, updated_at = ?4,
             deprecated_at = CASE WHEN deprecated = 1 THEN deprecated_at ELSE ?4 END
         WHERE scope = ?1 AND stable_id = ?2 COLLATE NOCASE",
        params![scope, id, reason, now],
    )?;
    if n > 0 {
        touch_domain(c, scope, None, None, now)?;
    }
    Ok(n > 0)
}

/// Links an entry to the learning candidate it grew from.
pub fn set_candidate_key(c: &Connection, scope: &str, id: &str, key: &str) -> rusqlite::Result<()> {
    c.execute(
        "UPDATE pks_phenomena SET candidate_key = ?3 WHERE scope = ?1 AND stable_id = ?2 COLLATE NOCASE",
        params![scope, id, key],
    )?;
    Ok(())
}

/// Sets an entry's drift debt.
pub fn set_drift(c: &Connection, scope: &str, id: &str, debt: f64) -> rusqlite::Result<()> {
    c.execute(
        "UPDATE pks_phenomena SET drift_debt = ?3 WHERE scope = ?1 AND stable_id = ?2",
        params![scope, id, debt],
    )?;
    Ok(())
}

/// An entry's drift baseline: its signals as first stored.
pub fn baseline(c: &Connection, scope: &str, id: &str) -> rusqlite::Result<Vec<super::model::Signal>> {
    let json: Option<String> = c
        .query_row(
            "SELECT baseline_json FROM pks_phenomena WHERE scope = ?1 AND stable_id = ?2",
            params![scope, id],
            |r| r.get(0),
        )
        .optional()?;
    Ok(json.and_then(|j| serde_json::from_str(&j).ok()).unwrap_or_default())
}

/// Failures in a row that retire an entry, by level: a shadow entry after 3, an active one
/// after 5.
pub fn failures_to_retire(level: &str) -> i64 {
    if level == "L2" { 5 } else { 3 }
}

/// One reported outcome.
pub struct Outcome<'a> {
    /// `success`, `failure` or `not_applicable`.
    pub outcome: &'a str,
    /// How long it took, ms.
    pub elapsed_ms: Option<i64>,
    /// The tab.
    pub target_id: Option<&'a str>,
    /// The MCP session that reported it.
    pub session_id: Option<&'a str>,
    /// What was seen (`presentSignals`, ...), as JSON.
    pub features: Option<&'a Value>,
}

/// Records an outcome of `id` and updates its health; whether it retired the entry (too many
/// failures in a row). `None` when there is no such entry. `not_applicable` is kept but counts
/// neither as an attempt nor as a failure.
pub fn report(
    c: &Connection,
    scope: &str,
    id: &str,
    o: &Outcome<'_>,
    now: i64,
) -> rusqlite::Result<Option<(Entry, bool)>> {
    let Some(e) = entry(c, scope, id)? else { return Ok(None) };
    c.execute(
        "INSERT INTO pks_telemetry (scope, stable_id, at, outcome, elapsed_ms, target_id, session_id, features_json)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
        params![scope, e.id, now, o.outcome, o.elapsed_ms, o.target_id, o.session_id, o.features.map(Value::to_string)],
    )?;
    let counted = match o.outcome {
        "success" => {
            "total_attempts = total_attempts + 1, success_count = success_count + 1, consecutive_failures = 0,
             consecutive_successes = consecutive_successes + 1"
        }
        "failure" => {
            "total_attempts = total_attempts + 1, failure_count = failure_count + 1,
             consecutive_failures = consecutive_failures + 1, consecutive_successes = 0"
        }
        _ => "total_attempts = total_attempts",
    };
    c.execute(
        &format!(
            "UPDATE pks_phenomena SET {counted}, last_outcome = ?3, last_attempt_at = ?4, updated_at = ?4
             WHERE scope = ?1 AND stable_id = ?2"
        ),
        params![scope, e.id, o.outcome, now],
    )?;
    let after = entry(c, scope, &e.id)?.unwrap_or(e);
    let retire = after.deprecated.is_none() && after.attempts.3 >= failures_to_retire(&after.level);
    if retire {
        let why = format!("{} failures in a row", after.attempts.3);
        deprecate(c, scope, &after.id, &why, now)?;
    } else {
        touch_domain(c, scope, None, None, now)?;
    }
    Ok(Some((entry(c, scope, &after.id)?.unwrap_or(after), retire)))
}

/// What an entry's last 30 days say, beyond its counters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Record {
    /// Successes in the last 30 days.
    pub successes_30d: i64,
    /// Distinct sessions those came from.
    pub sessions_30d: i64,
    /// Success rate over 30 days.
    pub rate_30d: Option<f64>,
}

/// An entry's last 30 days: successes, the sessions they came from, the success rate.
pub fn recent(c: &Connection, scope: &str, id: &str, now: i64) -> rusqlite::Result<Record> {
    let since = now - HEALTH_DAYS * 86_400_000;
    let (successes_30d, sessions_30d): (i64, i64) = c.query_row(
        "SELECT COUNT(*), COUNT(DISTINCT session_id) FROM pks_telemetry
         WHERE scope = ?1 AND stable_id = ?2 COLLATE NOCASE AND at >= ?3 AND outcome = 'success'",
        params![scope, id, since],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?;
    let (rate_30d, _) = success_rate(c, scope, id, now)?;
    Ok(Record { successes_30d, sessions_30d, rate_30d })
}

/// Moves an entry to `level` (`L0`, `L1`, `L2`; back in use if it was retired), or retires it
/// (`deprecated`, with `reason`).
pub fn set_level(
    c: &Connection,
    scope: &str,
    id: &str,
    level: &str,
    reason: &str,
    now: i64,
) -> rusqlite::Result<()> {
    if level == "deprecated" {
        deprecate(c, scope, id, reason, now)?;
        return Ok(());
    }
    c.execute(
        "UPDATE pks_phenomena SET learning_level = ?3, deprecated = 0, deprecated_reason = NULL, deprecated_at = NULL,
             consecutive_failures = CASE WHEN deprecated = 1 THEN 0 ELSE consecutive_failures END, updated_at = ?4
         WHERE scope = ?1 AND stable_id = ?2 COLLATE NOCASE",
        params![scope, id, level, now],
    )?;
    touch_domain(c, scope, None, None, now)
}

/// Success rate over the last 30 days and the attempts it counts (`not_applicable` is no
/// attempt); `None` without attempts.
pub fn success_rate(c: &Connection, scope: &str, id: &str, now: i64) -> rusqlite::Result<(Option<f64>, i64)> {
    let since = now - HEALTH_DAYS * 86_400_000;
    let (ok, all): (i64, i64) = c.query_row(
        "SELECT COALESCE(SUM(outcome = 'success'), 0), COUNT(*) FROM pks_telemetry
         WHERE scope = ?1 AND stable_id = ?2 COLLATE NOCASE AND at >= ?3 AND outcome != 'not_applicable'",
        params![scope, id, since],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?;
    Ok(((all > 0).then(|| ok as f64 / all as f64), all))
}

/// A site's hint: key, kind, text, routes.
pub type Hint = (String, String, String, Option<Value>);

/// Writes a hint; whether it was new.
pub fn upsert_hint(c: &Connection, scope: &str, h: &Hint, now: i64) -> rusqlite::Result<bool> {
    c.execute(
        "INSERT INTO pks_domains (scope, created_at, updated_at) VALUES (?1, ?2, ?2) ON CONFLICT (scope) DO NOTHING",
        params![scope, now],
    )?;
    let existed: bool = c.query_row(
        "SELECT EXISTS (SELECT 1 FROM pks_hints WHERE scope = ?1 AND hint_key = ?2)",
        params![scope, h.0],
        |r| r.get(0),
    )?;
    c.execute(
        "INSERT INTO pks_hints (scope, hint_key, kind, text, routes_json, created_at, updated_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?6)
         ON CONFLICT (scope, hint_key) DO UPDATE SET kind = ?3, text = ?4, routes_json = ?5, updated_at = ?6",
        params![scope, h.0, h.1, h.2, h.3.as_ref().map(Value::to_string), now],
    )?;
    touch_domain(c, scope, None, None, now)?;
    Ok(!existed)
}

/// A site's hints, oldest first.
pub fn hints(c: &Connection, scope: &str) -> rusqlite::Result<Vec<Hint>> {
    let mut st = c.prepare(
        "SELECT hint_key, kind, text, routes_json FROM pks_hints WHERE scope = ?1 ORDER BY created_at, hint_key",
    )?;
    st.query_map([scope], |r| {
        let routes: Option<String> = r.get(3)?;
        Ok((r.get(0)?, r.get(1)?, r.get(2)?, routes.and_then(|j| serde_json::from_str(&j).ok())))
    })?
    .collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn phenomenon(selector: &str) -> Phenomenon {
        serde_json::from_value(json!({
            "type": "consent_cmp",
            "fingerprint": {"signals": [{"kind": "dom", "match": selector}]},
            "playbook": {"policy": "reject_preferred", "actions": [
                {"type": "click", "selector": "#reject", "declaredPolarity": "reject"}]}
        }))
        .expect("phenomenon")
    }

    #[test]
    fn entries_are_created_updated_retired_and_brought_back() {
        let dir = tempfile::tempdir().expect("tmp");
        let c = crate::store::open(&dir.path().join("nova.db")).expect("open");
        let p = phenomenon("#banner");
        let id = stable_id(&p);
        assert!(id.starts_with("consent_cmp_") && id.len() == "consent_cmp_".len() + 8, "{id}");
        assert_eq!(stable_id(&phenomenon("#banner")), id, "the same fingerprint, the same id");
        assert_eq!(upsert(&c, "example.org", &id, &p, ("L1", "manual"), 1).expect("up"), Upserted::Created);
        assert_eq!(
            upsert(&c, "example.org", &id.to_uppercase(), &p, ("L1", "manual"), 2).expect("up"),
            Upserted::Updated
        );
        assert!(deprecate(&c, "example.org", &id, "the banner changed", 3).expect("dep"));
        let e = entry(&c, "example.org", &id).expect("q").expect("entry");
        assert_eq!(e.deprecated.as_deref(), Some("the banner changed"));
        assert!(!e.active());
        assert_eq!(
            upsert(&c, "example.org", &id, &p, ("L1", "manual"), 4).expect("up"),
            Upserted::Reactivated
        );
        let d = domain(&c, "example.org").expect("q").expect("domain");
        assert_eq!(d.content_rev, 4, "every change counts");
        assert_eq!(entries(&c, "example.org").expect("q").len(), 1);
        assert_eq!(success_rate(&c, "example.org", &id, 5).expect("rate"), (None, 0));
        assert!(!deprecate(&c, "example.org", "nope", "x", 6).expect("dep"));

        // Health: successes and failures counted, `not_applicable` not; three failures in a row
        // retire a shadow entry.
        let o = |outcome| Outcome {
            outcome,
            elapsed_ms: Some(120),
            target_id: Some("1"),
            session_id: Some("s"),
            features: None,
        };
        report(&c, "example.org", &id, &o("success"), 10).expect("r");
        report(&c, "example.org", &id, &o("not_applicable"), 11).expect("r");
        let (e, retired) = report(&c, "example.org", &id, &o("failure"), 12).expect("r").expect("entry");
        assert_eq!((e.attempts, retired), ((2, 1, 1, 1), false));
        assert_eq!(success_rate(&c, "example.org", &id, 13).expect("rate"), (Some(0.5), 2));
        report(&c, "example.org", &id, &o("failure"), 14).expect("r");
        let (e, retired) = report(&c, "example.org", &id, &o("failure"), 15).expect("r").expect("entry");
        assert!(retired && e.deprecated.as_deref() == Some("3 failures in a row"), "{e:?}");
        let late = HEALTH_DAYS * 86_400_000 + 20;
        assert_eq!(
            success_rate(&c, "example.org", &id, late).expect("rate"),
            (None, 0),
            "older than 30 days"
        );
        assert!(report(&c, "example.org", "nope", &o("success"), 16).expect("r").is_none());
    }
}
