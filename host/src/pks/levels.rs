//! Learning levels as PKS keeps them (docs/pks.md, "Learning levels"): `L0` candidate, `L1`
//! shadow, `L2` active, and retired. Only active entries are matched and applied. Each
//! transition has a rule, decided from an entry's health; `nova.learn_promote` asks for them.
//!
//! | transition | from | approved when |
//! |---|---|---|
//! | `l0_to_l1` | L0 | always (a candidate is looked at in shadow) |
//! | `l1_to_l2` | L1 | ≥ 3 successes in 30 days, reported from ≥ 2 sessions, success rate ≥ 0.8, no failure since the last success |
//! | `demotion` | L2 | ≥ 2 failures in a row, or drift debt ≥ 0.40 |
//! | `deprecation` | L1 / L2 | ≥ 3 (L1) or ≥ 5 (L2) failures in a row, or drift debt ≥ 0.40 |
//! | `revive` | retired | the last reported outcome is a success (fresh verified evidence); back to L1 |

use serde::Deserialize;

use super::records::{Entry, Record};

/// Drift debt at which an entry is demoted or retired: the drift gate's threshold.
pub const DRIFT_LIMIT: f64 = super::drift::THRESHOLD;

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

/// One condition of a transition: what it requires, what the entry shows, and why it fails.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Gate {
    /// Its name (`successes_30d`).
    pub gate: &'static str,
    /// What is required (`>= 3`).
    pub required: String,
    /// What the entry shows.
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

/// The conditions of a transition on an entry, and the level it leads to.
pub fn gates(t: Transition, e: &Entry, r: &Record) -> (Vec<Gate>, &'static str) {
    let failures = e.attempts.3;
    let retired = e.deprecated.is_some();
    let level = e.level.as_str();
    let debt = format!("{:.2}", e.drift_debt);
    match t {
        Transition::L0ToL1 => (
            vec![gate(
                "level",
                "L0",
                shown(e),
                level == "L0" && !retired,
                format!("it is {}, not a candidate (L0)", shown(e)),
            )],
            "L1",
        ),
        Transition::L1ToL2 => (
            vec![
                gate(
                    "level",
                    "L1",
                    shown(e),
                    level == "L1" && !retired,
                    format!("it is {}, not in shadow (L1)", shown(e)),
                ),
                gate(
                    "successes_30d",
                    ">= 3",
                    r.successes_30d,
                    r.successes_30d >= 3,
                    format!("{} successes in 30 days; 3 are needed", r.successes_30d),
                ),
                gate(
                    "success_sessions_30d",
                    ">= 2",
                    r.sessions_30d,
                    r.sessions_30d >= 2,
                    format!("successes from {} session(s); 2 are needed", r.sessions_30d),
                ),
                gate(
                    "success_rate_30d",
                    ">= 0.80",
                    r.rate_30d.map_or("none".to_owned(), |x| format!("{x:.2}")),
                    r.rate_30d.is_some_and(|x| x >= 0.8),
                    format!("a success rate of {:.2}; 0.80 is needed", r.rate_30d.unwrap_or(0.0)),
                ),
                gate(
                    "failures_in_a_row",
                    "0",
                    failures,
                    failures == 0,
                    format!("{failures} failure(s) since the last success"),
                ),
            ],
            "L2",
        ),
        Transition::Demotion => (
            vec![
                gate(
                    "level",
                    "L2",
                    shown(e),
                    level == "L2" && !retired,
                    format!("it is {}, not active (L2)", shown(e)),
                ),
                gate(
                    "failures_or_drift",
                    ">= 2 failures in a row or drift >= 0.40",
                    format!("{failures} failure(s), drift {debt}"),
                    failures >= 2 || e.drift_debt >= DRIFT_LIMIT,
                    format!("{failures} failure(s) in a row and drift debt {debt}: it holds"),
                ),
            ],
            "L1",
        ),
        Transition::Deprecation => {
            let limit = super::records::failures_to_retire(level);
            (
                vec![
                    gate(
                        "retired",
                        "no",
                        if retired { "yes" } else { "no" },
                        !retired,
                        "it is already retired".to_owned(),
                    ),
                    gate(
                        "failures_or_drift",
                        &format!(">= {limit} failures in a row or drift >= 0.40"),
                        format!("{failures} failure(s), drift {debt}"),
                        failures >= limit || e.drift_debt >= DRIFT_LIMIT,
                        format!("{failures} failure(s) in a row ({limit} retire it) and drift debt {debt}"),
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
                    if retired { "yes" } else { "no" },
                    retired,
                    "it is not retired".to_owned(),
                ),
                gate(
                    "last_outcome",
                    "success",
                    e.last.0.as_deref().unwrap_or("none"),
                    e.last.0.as_deref() == Some("success"),
                    "no success was reported since it was retired".to_owned(),
                ),
            ],
            "L1",
        ),
    }
}

/// The level a transition leads to, or why it is not approved (the first condition that fails).
pub fn decide(t: Transition, e: &Entry, r: &Record) -> Result<&'static str, String> {
    let (gates, to) = gates(t, e, r);
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

fn shown(e: &Entry) -> String {
    if e.deprecated.is_some() { "retired".to_owned() } else { e.level.clone() }
}

#[cfg(test)]
mod tests {
    use serde_json::Value;

    use super::*;

    fn entry(level: &str, failures: i64, deprecated: bool, last: Option<&str>) -> Entry {
        Entry {
            id: "x".into(),
            kind: "consent_cmp".into(),
            level: level.into(),
            origin: "manual".into(),
            fingerprint: Value::Null,
            playbook: Value::Null,
            context: Value::Null,
            deprecated: deprecated.then(|| "why".to_owned()),
            drift_debt: 0.0,
            attempts: (0, 0, 0, failures),
            last: (last.map(str::to_owned), None),
            updated_at: 0,
        }
    }

    #[test]
    fn each_transition_has_its_rule() {
        let good = Record { successes_30d: 3, sessions_30d: 2, rate_30d: Some(1.0) };
        assert_eq!(decide(Transition::L0ToL1, &entry("L0", 0, false, None), &good), Ok("L1"));
        assert!(decide(Transition::L0ToL1, &entry("L1", 0, false, None), &good).is_err());
        assert_eq!(decide(Transition::L1ToL2, &entry("L1", 0, false, None), &good), Ok("L2"));
        let one_session = Record { sessions_30d: 1, ..good };
        assert!(
            decide(Transition::L1ToL2, &entry("L1", 0, false, None), &one_session)
                .expect_err("s")
                .contains("session")
        );
        let two = Record { successes_30d: 2, ..good };
        assert!(
            decide(Transition::L1ToL2, &entry("L1", 0, false, None), &two)
                .expect_err("n")
                .contains("3 are needed")
        );
        assert!(decide(Transition::L1ToL2, &entry("L1", 1, false, None), &good).is_err(), "a failure since");
        assert_eq!(decide(Transition::Demotion, &entry("L2", 2, false, None), &good), Ok("L1"));
        assert!(decide(Transition::Demotion, &entry("L2", 1, false, None), &good).is_err());
        assert_eq!(decide(Transition::Deprecation, &entry("L1", 3, false, None), &good), Ok("deprecated"));
        assert!(decide(Transition::Deprecation, &entry("L2", 4, false, None), &good).is_err());
        assert_eq!(decide(Transition::Revive, &entry("L1", 0, true, Some("success")), &good), Ok("L1"));
        assert!(decide(Transition::Revive, &entry("L1", 3, true, Some("failure")), &good).is_err());
    }
}
