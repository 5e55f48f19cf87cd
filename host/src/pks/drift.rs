//! Drift (docs/pks.md, "Drift"): how far a site has moved from a phenomenon as first stored.
//! Each use with an observation measures the Jaccard distance between the frozen baseline and
//! what was seen, over (kind, match, locale), and blends it into the entry's debt as an
//! exponential moving average; at 0.40 the gate refuses to apply it (`pks.drift_blocked`).

use std::collections::BTreeSet;

use serde_json::{Value, json};

use super::model::Signal;
use crate::settings::GateMode;

/// Weight of the newest distance in the debt.
pub const ALPHA: f64 = 0.3;
/// Debt at which the gate refuses.
pub const THRESHOLD: f64 = 0.40;
/// Most observed signals taken into one measure.
pub const MAX_OBSERVED: usize = 256;

/// Jaccard distance between two signal sets over (kind, match, locale): 0 the same, 1 nothing
/// shared. Only the first [`MAX_OBSERVED`] observed signals count.
pub fn distance(baseline: &[Signal], observed: &[Signal]) -> f64 {
    let key = |s: &Signal| (s.kind, s.matches.trim().to_lowercase(), s.locale.clone());
    let a: BTreeSet<_> = baseline.iter().map(key).collect();
    let b: BTreeSet<_> = observed.iter().take(MAX_OBSERVED).map(key).collect();
    let union = a.union(&b).count();
    if union == 0 {
        return 0.0;
    }
    1.0 - a.intersection(&b).count() as f64 / union as f64
}

/// The debt after one more measure.
pub fn blend(debt: f64, distance: f64) -> f64 {
    (ALPHA * distance + (1.0 - ALPHA) * debt).clamp(0.0, 1.0)
}

/// What the gate made of a debt.
#[derive(Debug, Clone, PartialEq)]
pub struct Gate {
    /// The person's mode (`pksDriftGateMode`).
    pub mode: GateMode,
    /// The debt after this measure.
    pub debt: f64,
    /// Whether the debt reached the threshold.
    pub over: bool,
}

impl Gate {
    /// Judges `debt` under `mode`.
    pub fn judge(mode: GateMode, debt: f64) -> Self {
        Self { mode, debt, over: mode != GateMode::Off && debt >= THRESHOLD }
    }

    /// Whether the apply is refused.
    pub fn blocks(&self) -> bool {
        self.over && self.mode == GateMode::Block
    }

    /// The reply's `driftGate`.
    pub fn to_json(&self) -> Value {
        json!({
            "mode": self.mode.as_str(), "driftDebt": (self.debt * 1000.0).round() / 1000.0,
            "threshold": THRESHOLD, "overThreshold": self.over, "blocked": self.blocks(),
            "warning": self.over.then(|| format!(
                "the page has drifted from this phenomenon as stored (debt {:.2} >= {THRESHOLD}); \
                 check it with nova.revalidate", self.debt)),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pks::model::SignalKind;

    fn s(kind: SignalKind, m: &str) -> Signal {
        Signal { kind, matches: m.into(), locale: None }
    }

    #[test]
    fn distance_is_jaccard_over_kind_match_and_locale() {
        let base = [s(SignalKind::Dom, "#banner"), s(SignalKind::Text, "cookies")];
        assert_eq!(distance(&base, &base), 0.0);
        assert_eq!(distance(&base, &[]), 1.0);
        assert!((distance(&base, &[s(SignalKind::Dom, "#banner")]) - 0.5).abs() < 1e-9);
        // Same match, other kind: not the same signal.
        assert_eq!(distance(&[s(SignalKind::Dom, "x")], &[s(SignalKind::Text, "x")]), 1.0);
        let mut de = s(SignalKind::Text, "cookies");
        de.locale = Some("de".into());
        assert!((distance(&base, &[s(SignalKind::Dom, "#banner"), de]) - 2.0 / 3.0).abs() < 1e-9);
        // Beyond the cap nothing counts.
        let mut many: Vec<Signal> =
            (0..MAX_OBSERVED).map(|i| s(SignalKind::Dom, &format!("#n{i}"))).collect();
        many.push(s(SignalKind::Dom, "#banner"));
        assert_eq!(distance(&[s(SignalKind::Dom, "#banner")], &many), 1.0);
    }

    #[test]
    fn debt_is_an_average_with_alpha_and_blocks_at_the_threshold() {
        let mut debt = 0.0;
        debt = blend(debt, 1.0);
        assert!((debt - 0.3).abs() < 1e-9);
        assert!(!Gate::judge(GateMode::Block, debt).blocks());
        debt = blend(debt, 1.0);
        assert!((debt - 0.51).abs() < 1e-9);
        assert!(Gate::judge(GateMode::Block, debt).blocks());
        assert!(!Gate::judge(GateMode::Warn, debt).blocks());
        assert!(Gate::judge(GateMode::Warn, debt).over);
        assert!(!Gate::judge(GateMode::Off, debt).over);
        // A clean measure pays it back.
        assert!(!Gate::judge(GateMode::Block, blend(debt, 0.0)).blocks());
        assert!(Gate::judge(GateMode::Block, THRESHOLD).blocks());
    }
}
