//! A batch of claims applied to the store in one transaction (docs/ok.md, "What a claim
//! does"): each valid claim is kept as an observation and meets the current fact of its scope
//! and key under the rules; claims with a malformed key, a value of the wrong type or a value
//! that looks like a secret are rejected with a warning and leave no trace.

use rusqlite::Connection;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use super::facts::{self, Fact, NewFact, Observation};
use super::rules::{self, Certainty, Decision, Incoming, Source};
use super::signals::{self, Home, KeyError};
use super::{Knowledge, Place};
use crate::call::CallError;

/// One claim.
#[derive(Debug, Clone, PartialEq)]
pub struct Claim {
    /// The signal key.
    pub key: String,
    /// The observed value.
    pub value: Value,
    /// How sure the observer is.
    pub certainty: Certainty,
    /// What the observer saw.
    pub evidence: Option<String>,
}

/// Who observes, where and when.
#[derive(Debug, Clone, Copy)]
pub struct Batch<'a> {
    /// The tab, URL and service.
    pub place: &'a Place,
    /// An agent or Nova itself.
    pub source: Source,
    /// The agent.
    pub agent_id: Option<&'a str>,
    /// Groups the claims of one perception.
    pub perception_id: Option<&'a str>,
    /// Now (ms), by the memory clock.
    pub now: i64,
    /// The freshness window (ms).
    pub window_ms: i64,
}

/// What a batch did (the counters and `facts[]` of `nova.ok_observe`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Report {
    /// Claims kept as observations (all but the rejected).
    pub accepted: usize,
    /// Claims refused.
    pub rejected: usize,
    /// Claims that lost to the current fact, which is now `conflicted`.
    pub conflicted: usize,
    /// Tentative differing claims, kept as observations only.
    pub observation_only: usize,
    /// Facts replaced.
    pub superseded: usize,
    /// One entry per accepted claim: `key`, `value` (what OK now holds), `state`, `isNew`,
    /// `scope`.
    pub facts: Vec<Value>,
    /// What the agent should know.
    pub warnings: Vec<String>,
}

/// The first 16 hex characters of SHA-256 of `service:identity`: an account's scope id.
pub fn fingerprint(service: &str, identity: &str) -> String {
    Sha256::digest(format!("{service}:{identity}").as_bytes())
        .iter()
        .take(8)
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Applies `claims` (keys already checked for unknown core signals by the caller).
pub fn apply(k: &Knowledge, b: &Batch<'_>, claims: &[Claim]) -> Result<Report, CallError> {
    k.with(|c| {
        let tx = crate::store::write_tx(c)?;
        let report = apply_in(&tx, b, claims)?;
        tx.commit()?;
        Ok(report)
    })
}

fn apply_in(c: &Connection, b: &Batch<'_>, claims: &[Claim]) -> rusqlite::Result<Report> {
    let place = b.place;
    let binding = place.binding();
    let service = place.service.as_ref().map(|_| place.service_scope());
    facts::ensure_scope(c, &binding, service.as_deref(), b.now)?;
    let before = facts::binding(c, &binding)?.unwrap_or_default();
    // A new URL: what described the old page is stale.
    if before.last_url.as_deref().is_some_and(|u| u != place.url) {
        let route: Vec<String> = nova_shared::facts::CORE_FACTS
            .iter()
            .filter(|p| signals::core(p).is_some_and(|s| s.route))
            .map(|p| format!("core.{p}"))
            .collect();
        facts::mark_stale(c, &binding, &route.iter().map(String::as_str).collect::<Vec<_>>(), b.now)?;
    }
    facts::set_url(c, &binding, &place.url, b.now)?;
    let mut account = before.account_ref.clone();
    let mut report = Report::default();
    // Who is signed in, first: the account's facts in the same batch go to its scope.
    if let (Some(svc), Some(identity)) = (&place.service, identity(claims)) {
        let scope = format!("account:{}", fingerprint(svc, &identity));
        facts::ensure_scope(c, &scope, service.as_deref(), b.now)?;
        facts::set_account(c, &binding, &scope, b.now)?;
        account = Some(scope);
    }
    for (i, claim) in claims.iter().enumerate() {
        let signal = match signals::parse(&claim.key) {
            Ok(s) => s,
            Err(KeyError::Format(m) | KeyError::UnknownCore(m)) => {
                report.reject(i, &m);
                continue;
            }
        };
        if let Err(m) = signal.value.check(&claim.key, &claim.value) {
            report.reject(i, &m);
            continue;
        }
        if let Some(why) = super::secret::why(&claim.key, &claim.value, claim.evidence.as_deref()) {
            report.reject(i, &format!("{why}; secrets are never stored, report what the page shows instead"));
            continue;
        }
        let scope = match signal.home {
            Home::Binding => binding.clone(),
            Home::Service => place.service_scope(),
            Home::Account => account.clone().unwrap_or_else(|| place.service_scope()),
        };
        facts::ensure_scope(c, &scope, service.as_deref().filter(|s| *s != scope), b.now)?;
        one(c, b, claim, (&scope, signal.value.as_str()), &mut report)?;
    }
    Ok(report)
}

/// The signed-in identity a batch names: the email, else the display name.
fn identity(claims: &[Claim]) -> Option<String> {
    let of = |key: &str| {
        claims
            .iter()
            .filter(|c| c.key == key && super::secret::why(&c.key, &c.value, None).is_none())
            .find_map(|c| c.value.as_str().map(|s| s.trim().to_lowercase()).filter(|s| !s.is_empty()))
    };
    of("core.account.email").or_else(|| of("core.account.display_name"))
}

/// One valid claim in `scope`.
fn one(
    c: &Connection,
    b: &Batch<'_>,
    claim: &Claim,
    (scope, value_type): (&str, &str),
    report: &mut Report,
) -> rusqlite::Result<()> {
    let current = facts::current(c, scope, &claim.key)?;
    let active = if current.is_none() { facts::active_count(c, scope)? } else { 0 };
    let incoming = Incoming { value: &claim.value, certainty: claim.certainty, source: b.source };
    let decision =
        rules::decide(current.as_ref().map(Fact::current).as_ref(), &incoming, b.now, b.window_ms, active);
    let confidence = rules::confidence(claim.certainty, b.source);
    let new = NewFact {
        scope,
        key: &claim.key,
        value: &claim.value,
        value_type,
        confidence,
        certainty: claim.certainty.as_str(),
        source: b.source,
        target_id: &b.place.target,
        url: &b.place.url,
        at: b.now,
    };
    let kind = super::scope_kind(scope);
    let (fact_id, entry) = match (decision, &current) {
        (Decision::Reinforce, Some(cur)) => {
            let seen = (b.place.target.as_str(), b.place.url.as_str());
            facts::reinforce(c, cur, (confidence, claim.certainty.as_str()), seen, b.now)?;
            (Some(cur.id), (&claim.value, "confirmed", false))
        }
        (Decision::Supersede, Some(cur)) => {
            report.superseded += 1;
            (Some(facts::supersede(c, cur, &new)?), (&claim.value, "fresh", true))
        }
        (Decision::Conflict, Some(cur)) => {
            facts::conflict(c, cur, b.now)?;
            report.conflicted += 1;
            report.warnings.push(format!(
                "{}: you saw {} but OK holds {} ({} observation, confidence {:.2}); the fact is now \
                 conflicted: look again and report with certainty `certain` if the page clearly shows it",
                claim.key,
                claim.value,
                cur.value,
                cur.source.as_str(),
                cur.confidence
            ));
            (Some(cur.id), (&cur.value, "conflicted", false))
        }
        (Decision::ObservationOnly, cur) => {
            report.observation_only += 1;
            report.warnings.push(format!(
                "{}: a tentative claim never replaces a differing fact; it is kept as an observation only",
                claim.key
            ));
            (
                cur.as_ref().map(|f| f.id),
                (cur.as_ref().map_or(&claim.value, |f| &f.value), "observation_only", false),
            )
        }
        (Decision::ScopeFull, _) => {
            report.observation_only += 1;
            report.warnings.push(format!(
                "{}: the {kind} scope already holds {} facts; it is kept as an observation only: report \
                 only the signals the task needs",
                claim.key,
                rules::MAX_ACTIVE_FACTS
            ));
            (None, (&claim.value, "scope_full", false))
        }
        // New, or a decision about a fact that is not there (cannot happen): a new fact.
        _ => (Some(facts::insert(c, &new)?), (&claim.value, "fresh", true)),
    };
    // Nova re-reading what it already holds adds nothing worth a row: the fact's support count
    // and last observation time say it.
    let worth_a_row = !(b.source == Source::System && decision == Decision::Reinforce);
    if worth_a_row {
        facts::observe(
            c,
            &Observation {
                scope,
                place: b.place,
                perception_id: b.perception_id,
                agent_id: b.agent_id,
                key: &claim.key,
                value: &claim.value,
                certainty: claim.certainty.as_str(),
                confidence,
                source: b.source,
                evidence: claim.evidence.as_deref(),
                outcome: decision.outcome(),
                fact_id,
                at: b.now,
            },
        )?;
    }
    report.accepted += 1;
    let (value, state, is_new) = entry;
    report
        .facts
        .push(json!({"key": claim.key, "value": value, "state": state, "isNew": is_new, "scope": kind}));
    Ok(())
}

impl Report {
    fn reject(&mut self, i: usize, why: &str) {
        self.rejected += 1;
        self.warnings.push(format!("claims[{i}] rejected: {why}"));
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    const WINDOW: i64 = 300_000;

    fn store() -> (tempfile::TempDir, Knowledge) {
        let dir = tempfile::tempdir().expect("tmp");
        let k = Knowledge::open(&dir.path().join("nova.db")).expect("open");
        (dir, k)
    }

    fn place(target: &str, url: &str) -> Place {
        Place { target: target.into(), url: url.into(), service: Some("acme".into()) }
    }

    fn claim(key: &str, value: Value, certainty: Certainty) -> Claim {
        Claim { key: key.into(), value, certainty, evidence: None }
    }

    fn run(k: &Knowledge, p: &Place, source: Source, now: i64, claims: &[Claim]) -> Report {
        let b = Batch { place: p, source, agent_id: Some("a"), perception_id: None, now, window_ms: WINDOW };
        apply(k, &b, claims).expect("apply")
    }

    fn states(r: &Report) -> Vec<String> {
        r.facts.iter().map(|f| f["state"].as_str().unwrap_or_default().to_owned()).collect()
    }

    fn count(k: &Knowledge, sql: &str) -> i64 {
        k.with(|c| c.query_row(sql, [], |r| r.get(0))).expect("count")
    }

    #[test]
    fn every_claim_outcome_and_its_trace() {
        use Certainty::*;
        let (_d, k) = store();
        let p = place("1", "http://acme.test/dashboard");
        let t = 1_000_000;
        let r = run(&k, &p, Source::Agent, t, &[claim("core.plan.tier", json!("pro"), Likely)]);
        assert_eq!((r.accepted, states(&r)), (1, vec!["fresh".to_owned()]));
        assert_eq!(r.facts[0]["isNew"], json!(true));
        let r = run(&k, &p, Source::Agent, t + 1, &[claim("core.plan.tier", json!("pro"), Tentative)]);
        assert_eq!(states(&r), ["confirmed"], "the same value reinforces");
        let r = run(&k, &p, Source::Agent, t + 2, &[claim("core.plan.tier", json!("free"), Tentative)]);
        assert_eq!((states(&r), r.observation_only), (vec!["observation_only".to_owned()], 1));
        assert_eq!(r.facts[0]["value"], json!("pro"), "OK still holds pro");
        let r = run(&k, &p, Source::Agent, t + 3, &[claim("core.plan.tier", json!("free"), Likely)]);
        assert_eq!((states(&r), r.conflicted), (vec!["conflicted".to_owned()], 1));
        assert!(r.warnings[0].contains("conflicted"), "{:?}", r.warnings);
        let r = run(&k, &p, Source::Agent, t + 4, &[claim("core.plan.tier", json!("free"), Likely)]);
        assert_eq!((states(&r), r.superseded), (vec!["fresh".to_owned()], 1), "a conflicted fact yields");
        // History: one current row, the old one closed and pointing at it; every claim observed.
        assert_eq!(count(&k, "SELECT COUNT(*) FROM ok_facts WHERE valid_to IS NULL"), 1);
        assert_eq!(
            count(&k, "SELECT COUNT(*) FROM ok_facts o JOIN ok_facts n ON o.superseded_by_fact_id = n.id
                       WHERE o.fact_state = 'superseded' AND n.valid_to IS NULL AND n.value_json = '\"free\"'"),
            1
        );
        assert_eq!(count(&k, "SELECT COUNT(*) FROM ok_observations"), 5);
        assert!(k.with(|c| c.execute("DELETE FROM ok_observations", [])).is_err(), "append-only");
    }

    #[test]
    fn rejected_claims_leave_no_trace_and_the_rest_go_on() {
        let (_d, k) = store();
        let p = place("1", "http://acme.test/");
        let r = run(
            &k,
            &p,
            Source::Agent,
            1,
            &[
                claim("Bad Key", json!(1), Certainty::Likely),
                claim("core.login_state", json!("yes"), Certainty::Likely),
                claim("acme.api_token", json!("x"), Certainty::Likely),
                claim("acme.note", json!("sk-abcdefghijklmnopqrstuvwxyz"), Certainty::Likely),
                claim("core.login_state", json!("logged_in"), Certainty::Likely),
            ],
        );
        assert_eq!((r.accepted, r.rejected), (1, 4));
        assert!(r.warnings.iter().all(|w| w.starts_with("claims[")), "{:?}", r.warnings);
        assert!(r.warnings[2].contains("never stored"), "{:?}", r.warnings);
        assert_eq!(count(&k, "SELECT COUNT(*) FROM ok_observations"), 1);
        assert_eq!(count(&k, "SELECT COUNT(*) FROM ok_observations WHERE value_json LIKE '%sk-%'"), 0);
    }

    #[test]
    fn a_scope_holds_at_most_500_facts() {
        let (_d, k) = store();
        let p = place("1", "http://acme.test/");
        for chunk in 0..10 {
            let claims: Vec<Claim> = (0..50)
                .map(|i| claim(&format!("acme.k{}", chunk * 50 + i), json!(i), Certainty::Likely))
                .collect();
            assert_eq!(run(&k, &p, Source::Agent, 1, &claims).accepted, 50);
        }
        let r = run(&k, &p, Source::Agent, 2, &[claim("acme.one_more", json!(1), Certainty::Likely)]);
        assert_eq!(states(&r), ["scope_full"]);
        assert_eq!(count(&k, "SELECT COUNT(*) FROM ok_facts WHERE fact_key = 'acme.one_more'"), 0);
        // Other scopes are not full: a service fact still goes in.
        let r = run(&k, &p, Source::Agent, 2, &[claim("core.ui.language", json!("en"), Certainty::Likely)]);
        assert_eq!(states(&r), ["fresh"]);
    }

    #[test]
    fn tabs_keep_their_own_facts_and_share_the_service_and_account() {
        let (_d, k) = store();
        let (a, b) = (place("1", "http://acme.test/chat"), place("2", "http://acme.test/settings"));
        run(
            &k,
            &a,
            Source::Agent,
            1,
            &[
                claim("core.page.type", json!("chat"), Certainty::Certain),
                claim("core.ui.language", json!("en"), Certainty::Certain),
                claim("core.account.email", json!("ada@acme.test"), Certainty::Certain),
                claim("core.plan.tier", json!("team"), Certainty::Certain),
            ],
        );
        let of = |p: &Place| -> BTreeMap<String, (Value, String)> {
            super::super::hints::context(&k, p)
                .expect("ctx")
                .into_iter()
                .map(|f| (f.key.clone(), (f.value, super::super::scope_kind(&f.scope_ref).to_owned())))
                .collect()
        };
        let in_a = of(&a);
        assert_eq!(in_a["core.page.type"], (json!("chat"), "binding".into()));
        assert_eq!(in_a["core.ui.language"], (json!("en"), "service".into()));
        assert_eq!(in_a["core.plan.tier"], (json!("team"), "account".into()));
        let in_b = of(&b);
        assert!(!in_b.contains_key("core.page.type"), "tab 2 does not inherit tab 1's page");
        assert_eq!(in_b["core.ui.language"], (json!("en"), "service".into()));
        assert!(!in_b.contains_key("core.plan.tier"), "tab 2 has not seen who is signed in");
        let fp = fingerprint("acme", "ada@acme.test");
        assert_eq!(fp.len(), 16);
        assert_eq!(count(&k, &format!("SELECT COUNT(*) FROM ok_scopes WHERE scope_ref = 'account:{fp}'")), 1);
    }

    #[test]
    fn a_new_url_makes_the_page_type_stale_and_page_reads_follow_the_page() {
        let (_d, k) = store();
        let login = place("1", "http://acme.test/login");
        let r =
            run(&k, &login, Source::System, 1, &[claim("core.page.type", json!("login"), Certainty::Likely)]);
        assert_eq!(states(&r), ["fresh"]);
        let home = place("1", "http://acme.test/home");
        let r = run(
            &k,
            &home,
            Source::System,
            2,
            &[claim("core.page.type", json!("dashboard"), Certainty::Likely)],
        );
        assert_eq!((states(&r), r.superseded), (vec!["fresh".to_owned()], 1));
        // An agent's word meets a differing page read: conflicted, not overwritten.
        run(&k, &home, Source::Agent, 3, &[claim("core.login_state", json!("logged_in"), Certainty::Likely)]);
        let r = run(
            &k,
            &home,
            Source::System,
            4,
            &[claim("core.login_state", json!("logged_out"), Certainty::Likely)],
        );
        assert_eq!(states(&r), ["conflicted"]);
        // Re-reading the same value writes no observation row.
        let rows = count(&k, "SELECT COUNT(*) FROM ok_observations");
        run(&k, &home, Source::System, 5, &[claim("core.page.type", json!("dashboard"), Certainty::Likely)]);
        assert_eq!(count(&k, "SELECT COUNT(*) FROM ok_observations"), rows);
    }
}
