//! The promotion gates (docs/learning.md, "Promotion gates"): the conditions of each
//! learning-level transition, compared against what the journal holds for a phenomenon
//! (`crate::lcj::evidence`). `nova.learn_promote` decides with them and `nova.explain` shows them.
//!
//! | transition | from | approved when |
//! |---|---|---|
//! | `l0_to_l1` | L0 | 14 days: a candidate not disproven nor diagnostic, confidence ≥ 0.70, support ≥ 2, successes ≥ 1, score ≥ 0.55 |
//! | `l1_to_l2` | L1 | 30 days: successes ≥ 3 from ≥ 2 activity sessions, failures ≤ 1, no drift in 7 days (consent platforms: ≥ 5, ≥ 3, 0) |
//! | `demotion` | L2 | a hard drift event in 24 hours, or ≥ 2 failures in a row |
//! | `deprecation` | L0 / L1 / L2 | ≥ 3 (L0, L1) or ≥ 5 (L2) failures in a row |
//! | `revive` | retired | since it was retired: ≥ 2 successes from ≥ 2 sessions (30 days), no drift in 7 days |
//!
//! The L0 score is `0.40·min(1, support/5) + 0.30·successes/support + 0.30·confidence`.

use serde::Deserialize;

use crate::lcj::evidence::Evidence;
use crate::pks::records::{self, Entry};

/// A transition between levels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Transition {
    /// Candidate to shadow.
    L0ToL1,
    /// Shadow to active.
    L1ToL2,
    /// Active back to shadow.
    Demotion,
    /// Retired.
    Deprecation,
    /// Retired back to shadow.
    Revive,
}

impl Transition {
    /// Every transition, in the order they are evaluated.
    pub const ALL: [Self; 5] = [Self::L0ToL1, Self::L1ToL2, Self::Demotion, Self::Deprecation, Self::Revive];

    /// Its wire name (`l0_to_l1`), which is also the audit's reason kind.
    pub fn name(self) -> &'static str {
        match self {
            Self::L0ToL1 => "l0_to_l1",
            Self::L1ToL2 => "l1_to_l2",
            Self::Demotion => "demotion",
            Self::Deprecation => "deprecation",
            Self::Revive => "revive",
        }
    }

    /// Whether it starts from where `e` is.
    pub fn starts_at(self, e: &Entry) -> bool {
        let retired = e.deprecated.is_some();
        match self {
            Self::L0ToL1 => !retired && e.level == "L0",
            Self::L1ToL2 => !retired && e.level == "L1",
            Self::Demotion => !retired && e.level == "L2",
            Self::Deprecation => !retired,
            Self::Revive => retired,
        }
    }
}

/// One condition of a transition: what it requires, what the journal shows, and why it fails.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Gate {
    /// Its name (`successes_30d`).
    pub gate: &'static str,
    /// What is required (`>= 3`).
    pub required: String,
    /// What the journal shows.
    pub observed: String,
    /// Whether it holds.
    pub pass: bool,
    /// Why it fails, in a sentence.
    #[serde(skip)]
    pub why: String,
}

fn gate(gate: &'static str, required: &str, observed: impl ToString, pass: bool, why: String) -> Gate {
    Gate { gate, required: required.to_owned(), observed: observed.to_string(), pass, why }
}

/// The L0 score of the evidence.
pub fn l0_score(ev: &Evidence) -> f64 {
    let support = ev.support_14d.max(0) as f64;
    let confidence = ev.candidate.as_ref().map_or(0.0, |c| c.confidence);
    let ratio = if support > 0.0 { ev.successes_14d as f64 / support } else { 0.0 };
    let score = 0.40 * (support / 5.0).min(1.0) + 0.30 * ratio.min(1.0) + 0.30 * confidence;
    (score * 1000.0).round() / 1000.0
}

/// Whether the consent-platform variant of `l1_to_l2` applies.
pub fn consent_variant(e: &Entry) -> bool {
    e.kind == "consent_cmp"
}

fn level_gate(e: &Entry, t: Transition, wanted: &str) -> Gate {
    gate("level", wanted, shown(e), t.starts_at(e), format!("it is {}, not {wanted}", shown(e)))
}

/// The conditions of `t` on `e` given its evidence, and the level it leads to.
pub fn gates(t: Transition, e: &Entry, ev: &Evidence) -> (Vec<Gate>, &'static str) {
    let run = ev.consecutive_failures;
    match t {
        Transition::L0ToL1 => {
            let c = ev.candidate.as_ref();
            let status = c.map_or("none", |c| c.status.as_str());
            let origin = c.map_or("none", |c| c.origin.as_str());
            let confidence = c.map_or(0.0, |c| c.confidence);
            let score = l0_score(ev);
            (
                vec![
                    level_gate(e, t, "L0"),
                    gate(
                        "candidate",
                        "open, not diagnostic",
                        format!("{status}, {origin}"),
                        c.is_some_and(|c| c.status != "disproven" && c.origin != "diagnostic"),
                        match c {
                            None => "no learning candidate backs it yet".to_owned(),
                            Some(c) if c.status == "disproven" => "its candidate was disproven".to_owned(),
                            Some(_) => {
                                "its candidate is diagnostic (from failures): never promoted".to_owned()
                            }
                        },
                    ),
                    gate(
                        "confidence",
                        ">= 0.70",
                        format!("{confidence:.2}"),
                        confidence >= 0.70,
                        format!("a confidence of {confidence:.2}; 0.70 is needed"),
                    ),
                    gate(
                        "support_14d",
                        ">= 2",
                        ev.support_14d,
                        ev.support_14d >= 2,
                        format!("{} observation(s) in 14 days; 2 are needed", ev.support_14d),
                    ),
                    gate(
                        "successes_14d",
                        ">= 1",
                        ev.successes_14d,
                        ev.successes_14d >= 1,
                        "no success in 14 days".to_owned(),
                    ),
                    gate(
                        "score",
                        ">= 0.55",
                        format!("{score:.3}"),
                        score >= 0.55,
                        format!("an evidence score of {score:.3}; 0.55 is needed"),
                    ),
                ],
                "L1",
            )
        }
        Transition::L1ToL2 => {
            let (n, s, f) = if consent_variant(e) { (5, 3, 0) } else { (3, 2, 1) };
            (
                vec![
                    level_gate(e, t, "L1"),
                    gate(
                        "successes_30d",
                        &format!(">= {n}"),
                        ev.successes_30d,
                        ev.successes_30d >= n,
                        format!("{} successes in 30 days; {n} are needed", ev.successes_30d),
                    ),
                    gate(
                        "success_sessions_30d",
                        &format!(">= {s}"),
                        ev.success_sessions_30d,
                        ev.success_sessions_30d >= s,
                        format!(
                            "successes from {} activity session(s); {s} are needed",
                            ev.success_sessions_30d
                        ),
                    ),
                    gate(
                        "failures_30d",
                        &format!("<= {f}"),
                        ev.failures_30d,
                        ev.failures_30d <= f,
                        format!("{} failure(s) in 30 days; at most {f}", ev.failures_30d),
                    ),
                    gate(
                        "drift_7d",
                        "0",
                        ev.drift_7d,
                        ev.drift_7d == 0,
                        format!("{} drift event(s) in 7 days", ev.drift_7d),
                    ),
                ],
                "L2",
            )
        }
        Transition::Demotion => (
            vec![
                level_gate(e, t, "L2"),
                gate(
                    "hard_drift_24h_or_failures_in_a_row",
                    ">= 1 hard drift in 24 h, or >= 2 failures in a row",
                    format!("{} hard drift, {run} failure(s) in a row", ev.hard_drift_24h),
                    ev.hard_drift_24h >= 1 || run >= 2,
                    format!(
                        "{} hard drift event(s) in 24 hours and {run} failure(s) in a row: it holds",
                        ev.hard_drift_24h
                    ),
                ),
            ],
            "L1",
        ),
        Transition::Deprecation => {
            let limit = records::failures_to_retire(&e.level);
            (
                vec![
                    gate(
                        "retired",
                        "no",
                        if e.deprecated.is_some() { "yes" } else { "no" },
                        e.deprecated.is_none(),
                        "it is already retired".to_owned(),
                    ),
                    gate(
                        "failures_in_a_row",
                        &format!(">= {limit}"),
                        run,
                        run >= limit,
                        format!("{run} failure(s) in a row; {limit} retire a {} entry", e.level),
                    ),
                ],
                "deprecated",
            )
        }
        Transition::Revive => (
            vec![
                gate(
                    "retired",
                    "yes",
                    if e.deprecated.is_some() { "yes" } else { "no" },
                    e.deprecated.is_some(),
                    "it is not retired".to_owned(),
                ),
                gate(
                    "successes_since_retired",
                    ">= 2",
                    ev.revive_successes,
                    ev.revive_successes >= 2,
                    format!(
                        "{} success(es) since it was retired; 2 fresh ones are needed",
                        ev.revive_successes
                    ),
                ),
                gate(
                    "sessions_since_retired",
                    ">= 2",
                    ev.revive_sessions,
                    ev.revive_sessions >= 2,
                    format!("fresh successes from {} activity session(s); 2 are needed", ev.revive_sessions),
                ),
                gate(
                    "drift_7d",
                    "0",
                    ev.drift_7d,
                    ev.drift_7d == 0,
                    format!("{} drift event(s) in 7 days", ev.drift_7d),
                ),
            ],
            "L1",
        ),
    }
}

/// The level a transition leads to, or why it is not approved (the first condition that fails).
pub fn decide(t: Transition, e: &Entry, ev: &Evidence) -> Result<&'static str, String> {
    let (gates, to) = gates(t, e, ev);
    match gates.into_iter().find(|g| !g.pass) {
        Some(g) => Err(g.why),
        None => Ok(to),
    }
}

/// The transition an entry would take next on its way up (or back), for `nova.explain`.
pub fn next(e: &Entry) -> Transition {
    match (e.deprecated.is_some(), e.level.as_str()) {
        (true, _) => Transition::Revive,
        (false, "L0") => Transition::L0ToL1,
        (false, "L1") => Transition::L1ToL2,
        _ => Transition::Demotion,
    }
}

/// How an entry's level is shown (`retired` while it is).
pub fn shown(e: &Entry) -> String {
    if e.deprecated.is_some() { "retired".to_owned() } else { e.level.clone() }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lcj::rows::Candidate;

    fn entry(kind: &str, level: &str, retired: bool) -> Entry {
        Entry { deprecated: retired.then(|| "why".to_owned()), ..Entry::sample("x", kind, level) }
    }

    fn candidate(status: &str, origin: &str, confidence: f64) -> Option<Candidate> {
        Some(Candidate {
            id: 1,
            status: status.into(),
            confidence,
            origin: origin.into(),
            stable_id: "lcj_sid_x".into(),
            updated_at: 0,
        })
    }

    #[test]
    fn candidate_to_shadow_needs_support_success_confidence_and_score() {
        let e = entry("modal", "L0", false);
        let ev = Evidence {
            candidate: candidate("verified", "write", 0.82),
            support_14d: 2,
            successes_14d: 2,
            ..Evidence::default()
        };
        // 0.40·0.4 + 0.30·1 + 0.30·0.82 = 0.706
        assert_eq!(l0_score(&ev), 0.706);
        assert_eq!(decide(Transition::L0ToL1, &e, &ev), Ok("L1"));
        let lucky = Evidence { support_14d: 1, successes_14d: 1, ..ev.clone() };
        assert!(decide(Transition::L0ToL1, &e, &lucky).expect_err("one run").contains("2 are needed"));
        let diag = Evidence { candidate: candidate("verified", "diagnostic", 0.75), ..ev.clone() };
        assert!(decide(Transition::L0ToL1, &e, &diag).expect_err("diag").contains("diagnostic"));
        let gone = Evidence { candidate: candidate("disproven", "semantic", 0.9), ..ev.clone() };
        assert!(decide(Transition::L0ToL1, &e, &gone).expect_err("no").contains("disproven"));
        let unsure = Evidence { candidate: candidate("unverified", "semantic", 0.65), ..ev.clone() };
        assert!(decide(Transition::L0ToL1, &e, &unsure).expect_err("c").contains("0.70"));
        let failing = Evidence {
            support_14d: 5,
            successes_14d: 1,
            candidate: candidate("verified", "write", 0.7),
            ..ev
        };
        // 0.40 + 0.06 + 0.21 = 0.67: passes; with no success it fails on successes first.
        assert_eq!(decide(Transition::L0ToL1, &e, &failing), Ok("L1"));
        assert!(decide(Transition::L0ToL1, &entry("modal", "L1", false), &failing).is_err(), "not L0");
    }

    #[test]
    fn shadow_to_active_is_stricter_for_consent_platforms() {
        let ev =
            Evidence { successes_30d: 3, success_sessions_30d: 2, failures_30d: 1, ..Evidence::default() };
        assert_eq!(decide(Transition::L1ToL2, &entry("modal", "L1", false), &ev), Ok("L2"));
        let one = Evidence { success_sessions_30d: 1, ..ev.clone() };
        assert!(
            decide(Transition::L1ToL2, &entry("modal", "L1", false), &one)
                .expect_err("s")
                .contains("session")
        );
        let drift = Evidence { drift_7d: 1, ..ev.clone() };
        assert!(decide(Transition::L1ToL2, &entry("modal", "L1", false), &drift).is_err());
        let cmp = entry("consent_cmp", "L1", false);
        assert!(decide(Transition::L1ToL2, &cmp, &ev).expect_err("5").contains("5 are needed"));
        let more = Evidence { successes_30d: 5, success_sessions_30d: 3, failures_30d: 0, ..ev };
        assert_eq!(decide(Transition::L1ToL2, &cmp, &more), Ok("L2"));
    }

    #[test]
    fn failures_and_drift_demote_retire_and_fresh_evidence_revives() {
        let l2 = entry("modal", "L2", false);
        assert!(
            decide(Transition::Demotion, &l2, &Evidence { consecutive_failures: 1, ..Evidence::default() })
                .is_err()
        );
        assert_eq!(
            decide(Transition::Demotion, &l2, &Evidence { consecutive_failures: 2, ..Evidence::default() }),
            Ok("L1")
        );
        assert_eq!(
            decide(Transition::Demotion, &l2, &Evidence { hard_drift_24h: 1, ..Evidence::default() }),
            Ok("L1")
        );
        let four = Evidence { consecutive_failures: 4, ..Evidence::default() };
        assert!(decide(Transition::Deprecation, &l2, &four).is_err());
        assert_eq!(decide(Transition::Deprecation, &entry("modal", "L1", false), &four), Ok("deprecated"));
        let retired = entry("modal", "L1", true);
        let old = Evidence { successes_30d: 9, success_sessions_30d: 4, ..Evidence::default() };
        assert!(decide(Transition::Revive, &retired, &old).expect_err("stale").contains("fresh"));
        let fresh = Evidence { revive_successes: 2, revive_sessions: 2, ..Evidence::default() };
        assert_eq!(decide(Transition::Revive, &retired, &fresh), Ok("L1"));
        assert!(decide(Transition::Revive, &retired, &Evidence { drift_7d: 1, ..fresh }).is_err());
    }
}
