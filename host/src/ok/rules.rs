//! How a claim meets the current fact of its scope and key (docs/ok.md, "What a claim does"):
//! confidence from certainty and source, the supersedence rules, and the fact states. Pure
//! functions; `ok::observe` applies what they decide.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Active facts one scope may hold; a claim for a new key beyond it is `scope_full`.
pub const MAX_ACTIVE_FACTS: usize = 500;

/// How much more confident a differing claim must be than the current fact to replace it.
pub const SUPERSEDE_MARGIN: f64 = 0.15;

/// How sure the observer is.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Certainty {
    /// Clearly visible: confidence 0.95.
    Certain,
    /// The default: confidence 0.75.
    #[default]
    Likely,
    /// A weak signal: confidence 0.50; never replaces a differing fact.
    Tentative,
}

impl Certainty {
    /// Wire and stored name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Certain => "certain",
            Self::Likely => "likely",
            Self::Tentative => "tentative",
        }
    }

    fn base(self) -> f64 {
        match self {
            Self::Certain => 0.95,
            Self::Likely => 0.75,
            Self::Tentative => 0.50,
        }
    }
}

/// Who observed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// An agent's `nova.ok_observe` claim (weight 1.0).
    Agent,
    /// What Nova read in the page itself after a perceive (weight 0.8).
    System,
}

impl Source {
    /// Stored name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Agent => "agent",
            Self::System => "system",
        }
    }

    /// Parses a stored name.
    pub fn parse(s: &str) -> Self {
        if s == "system" { Self::System } else { Self::Agent }
    }
}

/// Confidence of a claim: certainty times source weight (system: 0.76, 0.60, 0.40).
pub fn confidence(certainty: Certainty, source: Source) -> f64 {
    let weight = match source {
        Source::Agent => 1.0,
        Source::System => 0.8,
    };
    certainty.base() * weight
}

/// The current fact of a scope and key, as the rules need it.
#[derive(Debug, Clone, PartialEq)]
pub struct Current {
    /// Its value.
    pub value: Value,
    /// Its confidence.
    pub confidence: f64,
    /// Its stored state (`fresh`, `confirmed`, `conflicted`, `stale`).
    pub state: String,
    /// Who observed it.
    pub source: Source,
    /// When it was last observed (ms).
    pub last_observed_at: i64,
}

impl Current {
    /// The state an agent is told: `stale` once older than the freshness window, else the stored
    /// one.
    pub fn state_at(&self, now: i64, window_ms: i64) -> &str {
        if now - self.last_observed_at > window_ms { "stale" } else { &self.state }
    }
}

/// An incoming claim.
#[derive(Debug, Clone, PartialEq)]
pub struct Incoming<'a> {
    /// The claimed value.
    pub value: &'a Value,
    /// Its certainty.
    pub certainty: Certainty,
    /// Who claims it.
    pub source: Source,
}

/// What a claim does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// No current fact: a new one (`fresh`).
    New,
    /// The same value again: support + 1, the fact is `confirmed`.
    Reinforce,
    /// A differing value that wins: the old fact is closed (`superseded`), the new one `fresh`.
    Supersede,
    /// A differing value that loses: the fact stays, marked `conflicted`.
    Conflict,
    /// A tentative differing value: recorded as an observation only.
    ObservationOnly,
    /// No current fact and the scope is full: recorded as an observation only.
    ScopeFull,
}

impl Decision {
    /// The claim outcome stored with the observation.
    pub fn outcome(self) -> &'static str {
        match self {
            Self::New | Self::Reinforce => "fresh",
            Self::Supersede => "superseded_fresh",
            Self::Conflict => "conflicted",
            Self::ObservationOnly => "observation_only",
            Self::ScopeFull => "scope_full",
        }
    }
}

/// Decides what `incoming` does to `current` at `now`, in a scope holding `active` facts.
pub fn decide(
    current: Option<&Current>,
    incoming: &Incoming<'_>,
    now: i64,
    window_ms: i64,
    active: usize,
) -> Decision {
    let Some(cur) = current else {
        return if active >= MAX_ACTIVE_FACTS { Decision::ScopeFull } else { Decision::New };
    };
    if cur.value == *incoming.value {
        return Decision::Reinforce;
    }
    if incoming.certainty == Certainty::Tentative {
        return Decision::ObservationOnly;
    }
    // A page read replaces Nova's own earlier read: what the page showed then no longer holds.
    if incoming.source == Source::System && cur.source == Source::System {
        return Decision::Supersede;
    }
    let weak = matches!(cur.state_at(now, window_ms), "stale" | "conflicted" | "invalid");
    let stronger =
        confidence(incoming.certainty, incoming.source) + 1e-9 >= cur.confidence + SUPERSEDE_MARGIN;
    let agent_over_system = incoming.source == Source::Agent
        && incoming.certainty == Certainty::Certain
        && cur.source == Source::System;
    if weak || stronger || agent_over_system { Decision::Supersede } else { Decision::Conflict }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    const WINDOW: i64 = 300_000;

    fn fact(value: Value, certainty: Certainty, source: Source, state: &str, at: i64) -> Current {
        Current {
            value,
            confidence: confidence(certainty, source),
            state: state.into(),
            source,
            last_observed_at: at,
        }
    }

    fn claim(v: &Value, certainty: Certainty, source: Source) -> Incoming<'_> {
        Incoming { value: v, certainty, source }
    }

    #[test]
    fn confidence_is_certainty_times_source_weight() {
        assert!((confidence(Certainty::Certain, Source::System) - 0.76).abs() < 1e-9);
        assert!((confidence(Certainty::Likely, Source::System) - 0.60).abs() < 1e-9);
        assert!((confidence(Certainty::Tentative, Source::System) - 0.40).abs() < 1e-9);
        assert!((confidence(Certainty::Likely, Source::Agent) - 0.75).abs() < 1e-9);
    }

    #[test]
    fn every_rule_of_supersedence() {
        use Certainty::*;
        use Source::*;
        let (pro, free) = (json!("pro"), json!("free"));
        let now = 1_000_000;
        let likely_agent = fact(pro.clone(), Likely, Agent, "fresh", now - 1000);
        assert_eq!(decide(None, &claim(&free, Likely, Agent), now, WINDOW, 0), Decision::New);
        assert_eq!(decide(None, &claim(&free, Likely, Agent), now, WINDOW, 500), Decision::ScopeFull);
        assert_eq!(decide(None, &claim(&free, Likely, Agent), now, WINDOW, 499), Decision::New);
        assert_eq!(
            decide(Some(&likely_agent), &claim(&pro, Tentative, Agent), now, WINDOW, 1),
            Decision::Reinforce
        );
        // A differing value: tentative never wins; equal confidence conflicts; +0.15 wins.
        assert_eq!(
            decide(Some(&likely_agent), &claim(&free, Tentative, Agent), now, WINDOW, 1),
            Decision::ObservationOnly
        );
        assert_eq!(
            decide(Some(&likely_agent), &claim(&free, Likely, Agent), now, WINDOW, 1),
            Decision::Conflict
        );
        assert_eq!(
            decide(Some(&likely_agent), &claim(&free, Certain, Agent), now, WINDOW, 1),
            Decision::Supersede
        );
        // Exactly the margin wins (0.60 + 0.15 = 0.75).
        let system = fact(pro.clone(), Likely, System, "fresh", now - 1000);
        assert_eq!(decide(Some(&system), &claim(&free, Likely, Agent), now, WINDOW, 1), Decision::Supersede);
        // An agent's certain claim wins over a system fact of any confidence.
        let system_certain = fact(pro.clone(), Certain, System, "fresh", now - 1000);
        assert_eq!(
            decide(Some(&system_certain), &claim(&free, Certain, Agent), now, WINDOW, 1),
            Decision::Supersede
        );
        assert_eq!(
            decide(Some(&system_certain), &claim(&free, Likely, Agent), now, WINDOW, 1),
            Decision::Conflict
        );
        // A weak current fact (conflicted, stale, or older than the window) yields to any
        // non-tentative claim, a system one too.
        let certain_agent = fact(pro.clone(), Certain, Agent, "conflicted", now - 1000);
        assert_eq!(
            decide(Some(&certain_agent), &claim(&free, Likely, System), now, WINDOW, 1),
            Decision::Supersede
        );
        let marked = fact(pro.clone(), Certain, Agent, "stale", now - 1000);
        assert_eq!(decide(Some(&marked), &claim(&free, Likely, System), now, WINDOW, 1), Decision::Supersede);
        let old = fact(pro.clone(), Certain, Agent, "fresh", now - WINDOW - 1);
        assert_eq!(old.state_at(now, WINDOW), "stale");
        assert_eq!(decide(Some(&old), &claim(&free, Likely, System), now, WINDOW, 1), Decision::Supersede);
        assert_eq!(
            decide(Some(&old), &claim(&free, Tentative, Agent), now, WINDOW, 1),
            Decision::ObservationOnly
        );
        // Nova's own reads follow the page; they only conflict with what an agent reported.
        assert_eq!(
            decide(Some(&system_certain), &claim(&free, Likely, System), now, WINDOW, 1),
            Decision::Supersede
        );
        assert_eq!(
            decide(Some(&likely_agent), &claim(&free, Certain, System), now, WINDOW, 1),
            Decision::Conflict
        );
        let young = fact(pro, Certain, Agent, "fresh", now - WINDOW);
        assert_eq!(young.state_at(now, WINDOW), "fresh", "the window is inclusive");
    }
}
