//! `nova.explain`, its PKS half (docs/pks.md, "Explaining"): why a phenomenon is at its learning
//! level, the conditions of its next transition (required against observed) with what would
//! meet them, and, given the signals on a page, how well its fingerprint matches them, signal by
//! signal.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::levels::{self, Transition};
use super::model::{Fingerprint, Signal, SignalKind};
use super::{Pks, matching, records, scope};
use crate::call::{CallError, CallRecord, ToolReply};
use crate::observation::ActionKind;
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
pub struct PksExplain<'h> {
    /// The PKS tables.
    pub pks: &'h Pks,
}

impl<'h> From<&'h crate::hub::Hub> for PksExplain<'h> {
    fn from(hub: &'h crate::hub::Hub) -> Self {
        Self { pks: &hub.pks }
    }
}

crate::tool! {
    /// `nova.explain` in the tool registry.
    pub static EXPLAIN = ToolDef::new(
        "nova.explain",
        "Why a site's phenomenon is at its learning level: the conditions of its next transition, \
         required against observed, and what would meet them; with observedSignals, how well its \
         fingerprint matches the page, signal by signal.",
        registry::schema::<ExplainArgs>,
        crate::handler!(PksExplain::explain),
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

/// What would meet a condition that fails.
fn remedy(gate: &str) -> &'static str {
    match gate {
        "level" => "it is not at the level this transition starts from",
        "successes_30d" => {
            "apply it with nova.phenomenon_apply, or report verified successes with nova.telemetry_report"
        }
        "success_sessions_30d" => "successes must come from at least two agent sessions",
        "success_rate_30d" => "more successes than failures over 30 days; fix or retire a failing playbook",
        "failures_in_a_row" => "a success must follow the last failure",
        "last_outcome" => "a verified success (nova.telemetry_report) brings a retired entry back to shadow",
        "retired" => "nothing: the entry's state decides this",
        _ => "it holds: the entry is healthy",
    }
}

impl PksExplain<'_> {
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
        let now = crate::time::now_ms();
        let found = self.pks.with(|c| {
            let Some(e) = records::entry(c, &site, &id)? else {
                let ids: Vec<String> = records::entries(c, &site)?.into_iter().map(|e| e.id).collect();
                return Ok(Err(ids));
            };
            let record = records::recent(c, &site, &e.id, now)?;
            Ok(Ok((e, record)))
        })?;
        rec.executed();
        let (e, record) = match found {
            Ok(x) => x,
            Err(ids) => {
                return Ok(ToolReply::ok(json!({
                    "ok": true, "found": false, "scope": site, "stableId": id, "availableIds": ids,
                })));
            }
        };
        let next = levels::next(&e);
        let (gates, to) = levels::gates(next, &e, &record);
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
            (t, true) => format!("{} may move on: {} to {to} is approved", e.id, transition_name(t)),
            (t, false) => {
                format!("{} stays at {}: {} to {to} is not approved yet", e.id, e.level, transition_name(t))
            }
        };
        let mut body = json!({
            "ok": true, "found": true, "scope": site, "stableId": e.id, "type": e.kind,
            "learningLevel": e.level, "active": e.active(), "deprecated": e.deprecated.is_some(),
            "deprecatedReason": e.deprecated, "driftDebt": e.drift_debt,
            "nextTransition": transition_name(next), "toLevel": to, "approved": approved, "summary": summary,
            "gates": gates, "remediation": remediation,
            "record": {"successes30d": record.successes_30d, "successSessions30d": record.sessions_30d,
                       "successRate30d": record.rate_30d, "consecutiveFailures": e.attempts.3},
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

fn transition_name(t: Transition) -> String {
    serde_json::to_value(t).ok().and_then(|v| v.as_str().map(str::to_owned)).unwrap_or_default()
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
