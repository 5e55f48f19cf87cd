//! The completion condition and its evaluator (docs/tasks.md, "Completion"). Pure: the caller
//! gathers the counts, this decides. Order: mandatory checks -> TUC URL gate -> mode rules ->
//! verification (required fast-gate steps) -> evidence gap.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// `completionCondition.coverageMode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CoverageMode {
    /// Every discovered unit, discovery frozen.
    Exhaustive,
    /// `stopMetric >= stopValue`.
    Threshold,
    /// At least a minimum of checked units (default 1).
    Exploratory,
}

/// `completionCondition.stopMetric`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum StopMetric {
    /// Nothing discovered remains.
    AllUnitsProcessed,
    /// Checked units.
    CheckedUnits,
    /// Distinct findings.
    DistinctFindings,
}

/// `evidencePolicy.mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum EvidenceMode {
    /// The evidence gate is off.
    #[default]
    None,
    /// Strong or weak evidence counts as observed.
    RequireObserved,
    /// Only strong evidence counts.
    RequireStrong,
}

/// `evidencePolicy.treatUnknownAs`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum UnknownAs {
    /// Unknown grades count as observed.
    Pass,
    /// Unknown grades count toward the gap.
    #[default]
    Gap,
}

/// `completionCondition.evidencePolicy`.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct EvidencePolicy {
    /// Gate mode.
    #[serde(default)]
    pub mode: EvidenceMode,
    /// Largest accepted gap, 0-100 (default 0).
    #[serde(default)]
    pub max_gap_percent: f64,
    /// How unknown grades count.
    #[serde(default)]
    pub treat_unknown_as: UnknownAs,
}

/// `completionCondition`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct CompletionCondition {
    /// exhaustive | threshold | exploratory.
    pub coverage_mode: CoverageMode,
    /// page, url, selector, file, item, state, modal, role, or a custom kind.
    pub unit_kind: String,
    /// all_units_processed | checked_units | distinct_findings.
    pub stop_metric: StopMetric,
    /// Required for threshold; null for exhaustive; optional minimum for exploratory.
    #[serde(default)]
    pub stop_value: Option<u64>,
    /// The evidence gate.
    #[serde(default)]
    pub evidence_policy: Option<EvidencePolicy>,
}

impl CompletionCondition {
    /// Checks the rules that cannot be expressed in the schema.
    pub fn validate(&self) -> Result<(), String> {
        if self.unit_kind.trim().is_empty() {
            return Err("completionCondition.unitKind must not be empty".into());
        }
        match (self.coverage_mode, self.stop_value) {
            (CoverageMode::Threshold, None) => {
                return Err("completionCondition.stopValue is required when coverageMode is threshold".into());
            }
            (CoverageMode::Exhaustive, Some(_)) => {
                return Err(
                    "completionCondition.stopValue must be null when coverageMode is exhaustive".into()
                );
            }
            _ => {}
        }
        if let Some(p) = &self.evidence_policy
            && !(0.0..=100.0).contains(&p.max_gap_percent)
        {
            return Err(format!(
                "completionCondition.evidencePolicy.maxGapPercent is {}; allowed 0-100",
                p.max_gap_percent
            ));
        }
        Ok(())
    }
}

/// Unit counts of an instance.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Counts {
    /// Every unit.
    pub total_units: u64,
    /// Checked.
    pub checked_units: u64,
    /// Excluded.
    pub excluded_units: u64,
    /// Still discovered (neither checked, excluded, blocked nor failed).
    pub remaining_units: u64,
    /// Blocked.
    pub blocked_units: u64,
    /// Failed.
    pub failed_units: u64,
    /// Distinct findings.
    pub distinct_findings: u64,
}

impl Counts {
    /// The progress object with its short aliases.
    pub fn progress(&self) -> Value {
        let done = self.checked_units + self.excluded_units;
        let percent = if self.total_units == 0 { 0.0 } else { done as f64 * 100.0 / self.total_units as f64 };
        json!({
            "totalUnits": self.total_units, "checkedUnits": self.checked_units,
            "excludedUnits": self.excluded_units, "remainingUnits": self.remaining_units,
            "blockedUnits": self.blocked_units, "failedUnits": self.failed_units,
            "percentComplete": (percent * 10.0).round() / 10.0,
            "distinctFindings": self.distinct_findings,
            "discovered": self.total_units, "checked": self.checked_units,
            "remaining": self.remaining_units, "blocked": self.blocked_units, "failed": self.failed_units,
        })
    }
}

/// Evidence counts from TOB.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Evidence {
    /// Units the agent claimed checked.
    pub claimed: u64,
    /// Strong grades.
    pub strong: u64,
    /// Weak grades.
    pub weak: u64,
    /// None grades.
    pub none: u64,
    /// Unknown grades.
    pub unknown: u64,
}

/// Everything the evaluator looks at.
#[derive(Debug, Clone, Default)]
pub struct Input<'a> {
    /// The condition (none: exploratory with a minimum of 1).
    pub condition: Option<&'a CompletionCondition>,
    /// Unit counts.
    pub counts: Counts,
    /// unknown | partial | frozen.
    pub discovery_frozen: bool,
    /// Mandatory checks not satisfied / waived / not applicable.
    pub pending_checks: Vec<String>,
    /// Open URL units and whether the TUC gate blocks on them.
    pub url_units_remaining: u64,
    /// TUC gate in Block mode (and coverage schema >= 2).
    pub url_gate_blocks: bool,
    /// Required fast-gate verification steps that failed.
    pub failed_required_steps: Vec<String>,
    /// TOB evidence for the checked units (None: not correlated).
    pub evidence: Option<Evidence>,
}

/// Evaluator verdict.
#[derive(Debug, Clone, PartialEq)]
pub struct Decision {
    /// Completion may proceed.
    pub allowed: bool,
    /// Reason code when refused.
    pub reason: Option<&'static str>,
    /// A sentence for people.
    pub message: String,
    /// Evidence-gap figures when refused for it: (gapPercent, maxGapPercent, policyMode).
    pub gap: Option<(f64, f64, &'static str)>,
}

fn refuse(reason: &'static str, message: String) -> Decision {
    Decision { allowed: false, reason: Some(reason), message, gap: None }
}

/// Observed checked units under `policy`.
pub fn observed(e: &Evidence, policy: &EvidencePolicy) -> u64 {
    let unknown = if policy.treat_unknown_as == UnknownAs::Pass { e.unknown } else { 0 };
    match policy.mode {
        EvidenceMode::RequireStrong => e.strong + unknown,
        _ => e.strong + e.weak + unknown,
    }
}

/// `(claimed - observed) / claimed * 100`, rounded to 2 decimals.
pub fn gap_percent(claimed: u64, observed: u64) -> f64 {
    if claimed == 0 {
        return 0.0;
    }
    let gap = claimed.saturating_sub(observed) as f64 * 100.0 / claimed as f64;
    (gap * 100.0).round() / 100.0
}

/// Decides whether an instance may complete.
pub fn evaluate(i: &Input<'_>) -> Decision {
    let c = &i.counts;
    if !i.pending_checks.is_empty() {
        return refuse(
            "pending_mandatory_checks",
            format!("mandatory checks still pending: {}", i.pending_checks.join(", ")),
        );
    }
    if i.url_gate_blocks && i.url_units_remaining > 0 {
        return refuse(
            "url_units_remaining",
            format!("{} URL units are neither checked nor excluded", i.url_units_remaining),
        );
    }
    let default_condition;
    let cond = match i.condition {
        Some(c) => c,
        None => {
            default_condition = CompletionCondition {
                coverage_mode: CoverageMode::Exploratory,
                unit_kind: "item".into(),
                stop_metric: StopMetric::CheckedUnits,
                stop_value: None,
                evidence_policy: None,
            };
            &default_condition
        }
    };
    match cond.coverage_mode {
        CoverageMode::Exhaustive => {
            if !i.discovery_frozen {
                return refuse(
                    "discovery_not_frozen",
                    "exhaustive tasks complete only after discovery is frozen (setDiscoveryState=frozen)"
                        .into(),
                );
            }
            if c.total_units == 0 {
                return refuse("no_units_discovered", "no units were discovered".into());
            }
            if c.blocked_units + c.failed_units > 0 {
                return refuse(
                    "units_blocked_or_failed",
                    format!("{} blocked and {} failed units", c.blocked_units, c.failed_units),
                );
            }
            if c.remaining_units > 0 {
                return refuse("units_remaining", format!("{} units remain", c.remaining_units));
            }
        }
        CoverageMode::Threshold => {
            let target = cond.stop_value.unwrap_or(0);
            let (met, value) = match cond.stop_metric {
                StopMetric::AllUnitsProcessed => {
                    (c.remaining_units == 0 && c.total_units > 0, c.total_units - c.remaining_units)
                }
                StopMetric::CheckedUnits => (c.checked_units >= target, c.checked_units),
                StopMetric::DistinctFindings => (c.distinct_findings >= target, c.distinct_findings),
            };
            if !met {
                return refuse("threshold_not_met", format!("{value} of the required {target} reached"));
            }
        }
        CoverageMode::Exploratory => {
            let minimum = cond.stop_value.unwrap_or(1);
            if c.checked_units < minimum {
                return refuse(
                    "minimum_not_met",
                    format!("{} checked units; at least {minimum} needed", c.checked_units),
                );
            }
        }
    }
    if !i.failed_required_steps.is_empty() {
        return refuse(
            "verification_failed",
            format!("required verification steps failed: {}", i.failed_required_steps.join(", ")),
        );
    }
    if let (Some(policy), Some(e)) = (cond.evidence_policy.as_ref(), i.evidence.as_ref())
        && policy.mode != EvidenceMode::None
        && e.claimed > 0
    {
        let seen = observed(e, policy);
        let gap = gap_percent(e.claimed, seen);
        if gap > policy.max_gap_percent {
            let mode = match policy.mode {
                EvidenceMode::RequireStrong => "require_strong",
                _ => "require_observed",
            };
            return Decision {
                allowed: false,
                reason: Some("evidence_gap"),
                message: format!(
                    "{} units are claimed checked but only {seen} have observed evidence ({gap}% gap, at most {}% allowed)",
                    e.claimed, policy.max_gap_percent
                ),
                gap: Some((gap, policy.max_gap_percent, mode)),
            };
        }
    }
    Decision { allowed: true, reason: None, message: "Completion policy satisfied.".into(), gap: None }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cond(mode: CoverageMode, stop: Option<u64>) -> CompletionCondition {
        CompletionCondition {
            coverage_mode: mode,
            unit_kind: "url".into(),
            stop_metric: StopMetric::CheckedUnits,
            stop_value: stop,
            evidence_policy: Some(EvidencePolicy {
                mode: EvidenceMode::RequireObserved,
                max_gap_percent: 10.0,
                treat_unknown_as: UnknownAs::Gap,
            }),
        }
    }

    fn counts(total: u64, checked: u64) -> Counts {
        Counts {
            total_units: total,
            checked_units: checked,
            remaining_units: total - checked,
            ..Default::default()
        }
    }

    #[test]
    fn exhaustive_needs_frozen_discovery_and_nothing_left() {
        let c = cond(CoverageMode::Exhaustive, None);
        let mut i = Input { condition: Some(&c), counts: counts(3, 3), ..Default::default() };
        assert_eq!(evaluate(&i).reason, Some("discovery_not_frozen"));
        i.discovery_frozen = true;
        assert!(evaluate(&i).allowed);
        i.counts = counts(3, 2);
        assert_eq!(evaluate(&i).reason, Some("units_remaining"));
        i.counts = Counts::default();
        assert_eq!(evaluate(&i).reason, Some("no_units_discovered"));
        i.counts = Counts { total_units: 2, checked_units: 1, failed_units: 1, ..Default::default() };
        assert_eq!(evaluate(&i).reason, Some("units_blocked_or_failed"));
        i.pending_checks = vec!["legal".into()];
        assert_eq!(evaluate(&i).reason, Some("pending_mandatory_checks"));
    }

    #[test]
    fn threshold_and_exploratory_modes() {
        let t = cond(CoverageMode::Threshold, Some(5));
        let i = Input { condition: Some(&t), counts: counts(9, 4), ..Default::default() };
        assert_eq!(evaluate(&i).reason, Some("threshold_not_met"));
        let i = Input { condition: Some(&t), counts: counts(9, 5), ..Default::default() };
        assert!(evaluate(&i).allowed);
        let e = cond(CoverageMode::Exploratory, None);
        let i = Input { condition: Some(&e), counts: counts(2, 0), ..Default::default() };
        assert_eq!(evaluate(&i).reason, Some("minimum_not_met"));
        assert!(cond(CoverageMode::Threshold, None).validate().is_err());
        assert!(cond(CoverageMode::Exhaustive, Some(1)).validate().is_err());
    }

    #[test]
    fn the_evidence_gap_is_exact() {
        let c = cond(CoverageMode::Exploratory, None);
        let evidence = Evidence { claimed: 60, strong: 30, weak: 10, none: 20, unknown: 0 };
        let i = Input {
            condition: Some(&c),
            counts: counts(60, 60),
            evidence: Some(evidence),
            ..Default::default()
        };
        let d = evaluate(&i);
        assert_eq!(d.reason, Some("evidence_gap"));
        assert_eq!(d.gap, Some((33.33, 10.0, "require_observed")));
        let mut strict = c.clone();
        strict.evidence_policy = Some(EvidencePolicy {
            mode: EvidenceMode::RequireStrong,
            max_gap_percent: 60.0,
            ..Default::default()
        });
        let i = Input {
            condition: Some(&strict),
            counts: counts(60, 60),
            evidence: Some(evidence),
            ..Default::default()
        };
        assert!(evaluate(&i).allowed, "50% gap under a 60% maximum");
        let full = Evidence { claimed: 60, strong: 60, ..Default::default() };
        let i =
            Input { condition: Some(&c), counts: counts(60, 60), evidence: Some(full), ..Default::default() };
        assert!(evaluate(&i).allowed);
    }

    #[test]
    fn url_gate_and_verification_come_in_order() {
        let c = cond(CoverageMode::Exploratory, None);
        let i = Input {
            condition: Some(&c),
            counts: counts(4, 4),
            url_units_remaining: 2,
            url_gate_blocks: true,
            failed_required_steps: vec!["s1".into()],
            ..Default::default()
        };
        assert_eq!(evaluate(&i).reason, Some("url_units_remaining"));
        let i = Input { url_gate_blocks: false, ..i };
        assert_eq!(evaluate(&i).reason, Some("verification_failed"));
    }
}
