//! `nova.explain` (docs/learning.md, "Explaining"): why a phenomenon is at its learning level,
//! the gates of its next transition (required against what the journal observed) with what would
//! meet them, and, given the signals on a page, how well its fingerprint matches them, signal by
//! signal.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::gates::{self, Transition};
use crate::call::{CallError, CallRecord, ToolReply};
use crate::lcj::{self, evidence};
use crate::observation::ActionKind;
use crate::pks::model::{Fingerprint, Signal, SignalKind};
use crate::pks::{Pks, matching, records, scope};
use crate::registry::{self, Bundle, PageUse, ToolDef};

/// Most observed signals.
pub const MAX_OBSERVED: usize = 256;
/// Longest observed signal, characters.
pub const MAX_SIGNAL_CHARS: usize = 512;

/// `nova.explain` arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ExplainArgs {
    /// The site.
    pub scope: String,
    /// The phenomenon (`stable_id` is accepted too; both must agree).
    #[serde(default)]
    pub stable_id: Option<String>,
    /// Older spelling of `stableId`.
    #[serde(default, rename = "stable_id")]
    pub stable_id_legacy: Option<String>,
    /// Signals on the page now, as `kind:match` (`dom:#banner`, `text:We use cookies`) or a bare
    /// match of any kind (at most 256, each at most 512 characters).
    #[serde(default)]
    pub observed_signals: Option<Vec<String>>,
    /// Older spelling of `observedSignals`; both must agree.
    #[serde(default, rename = "observed_signals")]
    pub observed_signals_legacy: Option<Vec<String>>,
    /// Calling agent.
    #[serde(default)]
    pub agent_id: Option<String>,
}

/// What `nova.explain` reaches.
pub struct Explainer<'h> {
    /// The PKS tables.
    pub pks: &'h Pks,
    /// The journal (its barrier is waited on before the evidence is read).
    pub lcj: &'h lcj::Journal,
}

impl<'h> From<&'h crate::hub::Hub> for Explainer<'h> {
    fn from(hub: &'h crate::hub::Hub) -> Self {
        Self { pks: &hub.pks, lcj: &hub.lcj }
    }
}

crate::tool! {
    /// `nova.explain` in the tool registry.
    pub static EXPLAIN = ToolDef::new(
        "nova.explain",
        "Why a site's phenomenon is at its learning level: the gates of its next transition, \
         required against what the learning journal observed, and what would meet them; with \
         observedSignals, how well its fingerprint matches the page, signal by signal.",
        registry::schema::<ExplainArgs>,
        crate::handler!(Explainer::explain),
    )
    .bundles(&[Bundle::PksLearning])
    .tob(ActionKind::Read, "knowledge", 0)
    .page(PageUse::None)
    .read_only();
}

/// One of two spellings of an argument; both given must agree.
fn alias<T: PartialEq>(name: &str, old: &str, a: Option<T>, b: Option<T>) -> Result<Option<T>, CallError> {
    match (a, b) {
        (Some(x), Some(y)) if x != y => Err(CallError::invalid(
            name,
            format!("`{name}` and its older spelling `{old}` disagree; send one"),
        )),
        (x, y) => Ok(x.or(y)),
    }
}

/// A `kind:match` string as the signals it may be: of that kind, or of any kind when bare.
fn parse_signal(s: &str) -> Vec<Signal> {
    let kinds = [
        ("dom", SignalKind::Dom),
        ("vendor", SignalKind::Vendor),
        ("text", SignalKind::Text),
        ("interaction", SignalKind::Interaction),
        ("layout", SignalKind::Layout),
    ];
    let one = |kind, m: &str| Signal { kind, matches: m.trim().to_owned(), locale: None };
    if let Some((k, m)) = s.split_once(':')
        && let Some((_, kind)) = kinds.iter().find(|(name, _)| name.eq_ignore_ascii_case(k.trim()))
    {
        return vec![one(*kind, m)];
    }
    kinds.iter().map(|(_, kind)| one(*kind, s)).collect()
}

/// What would meet a gate that fails.
fn remedy(gate: &str) -> &'static str {
    match gate {
        "level" => "it is not at the level this transition starts from",
        "candidate" => {
            "a learning candidate must back it: nova.learn_generate, a knowledge write (nova.pks_upsert), or \
             nova.memory_add_candidate; a disproven or diagnostic one never promotes"
        }
        "confidence" => "a verified candidate (0.75 or more) or a confident claim",
        "support_14d" | "successes_14d" | "score" => {
            "use it again on a later visit: clicks on its selectors, nova.dismiss_blockers, nova.telemetry_report"
        }
        "successes_30d" => {
            "apply it (nova.phenomenon_apply, or its selectors with nova.click_selector) and report verified \
             successes with nova.telemetry_report"
        }
        "success_sessions_30d" => {
            "successes must come from separate activity sessions (30 minutes apart, or other agents)"
        }
        "failures_30d" => "fewer failures over 30 days; repair or retire a failing playbook",
        "drift_7d" => "no drift for 7 days: nova.revalidate, then repair the fingerprint",
        "successes_since_retired" | "sessions_since_retired" => {
            "fresh successes after it was retired, from two activity sessions, bring it back to shadow"
        }
        "failures_in_a_row" | "hard_drift_24h_or_failures_in_a_row" | "retired" => {
            "nothing to do: the entry's own record decides this"
        }
        _ => "it holds",
    }
}

impl Explainer<'_> {
    /// `nova.explain`.
    pub async fn explain(&self, rec: &mut CallRecord, a: ExplainArgs) -> Result<ToolReply, CallError> {
        let site = scope::normalize(&a.scope)?;
        let id = alias("stableId", "stable_id", a.stable_id, a.stable_id_legacy)?.ok_or_else(|| {
            CallError::invalid("stableId", "`stableId` is required: the phenomenon to explain")
        })?;
        let observed =
            alias("observedSignals", "observed_signals", a.observed_signals, a.observed_signals_legacy)?;
        if let Some(o) = &observed {
            if o.len() > MAX_OBSERVED {
                return Err(CallError::invalid(
                    "observedSignals",
                    format!("`observedSignals` holds at most {MAX_OBSERVED} signals, got {}", o.len()),
                ));
            }
            if let Some(i) =
                o.iter().position(|s| s.trim().is_empty() || s.chars().count() > MAX_SIGNAL_CHARS)
            {
                return Err(CallError::invalid(
                    &format!("observedSignals[{i}]"),
                    format!("`observedSignals[{i}]` must be 1 to {MAX_SIGNAL_CHARS} characters"),
                ));
            }
        }
        let complete = self.lcj.flush_within(lcj::FLUSH_MAX).await;
        let now = crate::clock::now_ms();
        let found = self.pks.with(|c| {
            let Some(e) = records::entry(c, &site, &id)? else {
                let ids: Vec<String> = records::entries(c, &site)?.into_iter().map(|e| e.id).collect();
                return Ok(Err(ids));
            };
            let ev = evidence::of_entry(c, &site, &e, now)?;
            Ok(Ok((e, ev)))
        })?;
        rec.executed();
        let (e, ev) = match found {
            Ok(x) => x,
            Err(ids) => {
                return Ok(ToolReply::ok(json!({
                    "ok": true, "found": false, "scope": site, "stableId": id, "availableIds": ids,
                })));
            }
        };
        let next = gates::next(&e);
        let (gates, to) = gates::gates(next, &e, &ev);
        let approved = gates.iter().all(|g| g.pass);
        let remediation: Vec<Value> = gates
            .iter()
            .filter(|g| !g.pass)
            .map(|g| json!({"gate": g.gate, "why": g.why, "remedy": remedy(g.gate)}))
            .collect();
        let summary = match (next, approved) {
            (Transition::Demotion, false) => format!("{} is active and holds: nothing demotes it", e.id),
            (Transition::Demotion, true) => {
                format!("{} is active but failing or drifting: demotion is approved", e.id)
            }
            (t, true) => format!("{} may move on: {} to {to} is approved", e.id, t.name()),
            (t, false) => {
                format!("{} stays at {}: {} to {to} is not approved yet", e.id, gates::shown(&e), t.name())
            }
        };
        let mut body = json!({
            "ok": true, "found": true, "scope": site, "stableId": e.id, "type": e.kind,
            "learningLevel": e.level, "active": e.active(), "deprecated": e.deprecated.is_some(),
            "deprecatedReason": e.deprecated, "driftDebt": e.drift_debt,
            "nextTransition": next.name(), "toLevel": to, "approved": approved, "summary": summary,
            "gates": gates, "remediation": remediation,
            "evidence": super::promote::evidence_json(&ev), "ingestionComplete": complete,
        });
        if let Some(observed) = observed {
            let fp: Fingerprint = serde_json::from_value(e.fingerprint.clone())
                .map_err(|err| CallError::Store(format!("stored fingerprint of {}: {err}", e.id)))?;
            let seen: Vec<Signal> = observed.iter().flat_map(|s| parse_signal(s)).collect();
            let (confidence, matched, _) = matching::confidence(&fp, &seen);
            let signals: Vec<Value> = fp
                .signals
                .iter()
                .map(|s| {
                    json!({"kind": s.kind, "match": s.matches, "locale": s.locale, "weight": s.kind.weight(),
                           "seen": matched.contains(&s)})
                })
                .collect();
            body["match"] = json!({
                "confidence": (confidence * 1000.0).round() / 1000.0, "minConfidence": fp.min_confidence,
                "matched": confidence + 1e-9 >= fp.min_confidence, "matchedSignals": matched.len(),
                "totalSignals": fp.signals.len(), "signals": signals,
            });
        }
        Ok(ToolReply::ok(body))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn observed_signals_parse_with_or_without_their_kind() {
        assert_eq!(
            parse_signal("dom:#banner"),
            vec![Signal { kind: SignalKind::Dom, matches: "#banner".into(), locale: None }]
        );
        assert_eq!(parse_signal("We use cookies").len(), 5);
        // A colon that names no kind is part of the match.
        assert_eq!(parse_signal("a:hover")[0].matches, "a:hover");
        assert!(alias("stableId", "stable_id", Some(1), Some(2)).is_err());
        assert_eq!(alias("stableId", "stable_id", None, Some(2)).ok(), Some(Some(2)));
    }
}
