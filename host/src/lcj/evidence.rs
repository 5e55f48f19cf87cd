//! What the journal holds for one phenomenon (docs/learning.md, "Promotion gates"): its
//! observations (attributed to it, raised under its candidate key, or made with one of its
//! selectors before it was stored) counted over the gates' windows.

use std::collections::HashSet;

use rusqlite::Connection;

use super::rows::{self, Candidate, Seen};
use super::{attribution, keys};
use crate::pks::records::Entry;

const DAY: i64 = 86_400_000;

/// The counts the promotion gates compare.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Evidence {
    /// The candidate key it is counted under.
    pub candidate_key: String,
    /// The best candidate under that key (any agent).
    pub candidate: Option<Candidate>,
    /// Observations in 14 days, and the successes among them.
    pub support_14d: i64,
    /// Successes in 14 days.
    pub successes_14d: i64,
    /// Successes in 30 days: the larger of actions and dismissals, and confirmed telemetry (one
    /// attempt is not counted twice).
    pub successes_30d: i64,
    /// Distinct activity sessions those successes came from.
    pub success_sessions_30d: i64,
    /// Failures in 30 days.
    pub failures_30d: i64,
    /// Drift events (light or hard) in 7 days.
    pub drift_7d: i64,
    /// Hard drift events in 24 hours.
    pub hard_drift_24h: i64,
    /// Failures since the last success or neutral outcome.
    pub consecutive_failures: i64,
    /// Successes since it was retired (30 days), and their sessions: what revival counts.
    pub revive_successes: i64,
    /// Sessions of those.
    pub revive_sessions: i64,
}

/// The candidate key an entry is counted under.
pub fn key_of(host: &str, e: &Entry) -> String {
    e.candidate_key.clone().unwrap_or_else(|| keys::of_entry(host, &e.id))
}

/// Whether observation `o` counts for entry `e` (its key `ck`, its selectors).
fn belongs(o: &Seen, e: &Entry, ck: &str, selectors: &[String]) -> bool {
    match &o.target {
        Some(t) => t.eq_ignore_ascii_case(&e.id),
        None => {
            o.candidate_key.as_deref() == Some(ck)
                || o.selector.as_ref().is_some_and(|s| selectors.contains(s))
        }
    }
}

/// Successes of `seen` as the gates count them, and their distinct sessions.
pub fn successes<'a>(seen: impl Iterator<Item = &'a Seen> + Clone) -> (i64, i64) {
    let won = seen.filter(|o| o.outcome > 0);
    let acted = won.clone().filter(|o| o.kind != "telemetry_confirmed").count();
    let confirmed = won.clone().filter(|o| o.kind == "telemetry_confirmed").count();
    let sessions: HashSet<&str> = won.map(|o| o.session.as_str()).collect();
    (acted.max(confirmed) as i64, sessions.len() as i64)
}

/// Failures in a row, newest first: a success or a neutral outcome ends the run.
pub fn failures_in_a_row<'a>(newest_first: impl Iterator<Item = &'a Seen>) -> i64 {
    newest_first.take_while(|o| o.outcome < 0).count() as i64
}

/// The evidence for `e` of `host` at `now`.
pub fn of_entry(c: &Connection, host: &str, e: &Entry, now: i64) -> rusqlite::Result<Evidence> {
    let ck = key_of(host, e);
    let selectors = attribution::selectors(e);
    let all = rows::observations(c, host, now - 30 * DAY)?;
    let mine: Vec<&Seen> =
        all.iter().filter(|o| o.kind != "perceive_signature" && belongs(o, e, &ck, &selectors)).collect();
    let since = |days_ms: i64| mine.iter().copied().filter(move |o| o.at >= now - days_ms);
    let (successes_14d, _) = successes(since(14 * DAY));
    let (successes_30d, success_sessions_30d) = successes(since(30 * DAY));
    let retired = e.deprecated_at.unwrap_or(i64::MAX);
    let (revive_successes, revive_sessions) = successes(since(30 * DAY).filter(move |o| o.at > retired));
    Ok(Evidence {
        candidate: rows::best_candidate(c, host, &ck)?,
        candidate_key: ck,
        support_14d: since(14 * DAY).count() as i64,
        successes_14d,
        successes_30d,
        success_sessions_30d,
        failures_30d: since(30 * DAY).filter(|o| o.outcome < 0).count() as i64,
        drift_7d: since(7 * DAY).filter(|o| o.severity > 0).count() as i64,
        hard_drift_24h: since(DAY).filter(|o| o.severity >= 2).count() as i64,
        consecutive_failures: failures_in_a_row(mine.iter().copied()),
        revive_successes,
        revive_sessions,
    })
}

#[cfg(test)]
mod tests {
    use serde_json::Value;

    use super::*;

    fn seen(kind: &str, outcome: i64, session: &str) -> Seen {
        Seen {
            kind: kind.into(),
            outcome,
            severity: 0,
            session: session.into(),
            tool: "t".into(),
            target: None,
            candidate_key: None,
            selector: None,
            payload: Value::Null,
            at: 0,
        }
    }

    #[test]
    fn one_attempt_is_not_counted_twice_and_neutral_breaks_a_run() {
        let s = [
            seen("action_success", 1, "a"),
            seen("telemetry_confirmed", 1, "a"),
            seen("blocker_dismissed", 1, "b"),
            seen("telemetry_confirmed", 1, "b"),
            seen("action_failure", -1, "b"),
        ];
        assert_eq!(successes(s.iter()), (2, 2));
        let run = [
            seen("action_failure", -1, "a"),
            seen("selector_drift", -1, "a"),
            seen("x", 0, "a"),
            seen("action_failure", -1, "a"),
        ];
        assert_eq!(failures_in_a_row(run.iter()), 2);
    }
}
