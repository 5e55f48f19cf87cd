//! `nova.telemetry_report`: an outcome of a phenomenon's playbook, which keeps its health (30-day
//! success rate, failures in a row; too many retire it). The learning journal takes it as
//! evidence too (`crate::lcj`). docs/pks.md, "Health".

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::records::{self, Outcome};
use super::{Pks, scope};
use crate::call::{CallError, CallRecord, ToolReply, check_chars};
use crate::observation::ActionKind;
use crate::registry::{self, Bundle, PageUse, ToolDef};

/// Longest elapsed time reported, ms.
pub const MAX_ELAPSED_MS: u32 = 3_600_000;
/// Most signals or selectors in one list of `features`.
pub const MAX_FEATURE_ITEMS: usize = 256;

/// How using a phenomenon went.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Reported {
    /// The playbook did what it should.
    Success,
    /// It did not.
    Failure,
    /// The situation was not there (counts neither way).
    NotApplicable,
}

impl Reported {
    fn as_str(self) -> &'static str {
        match self {
            Self::Success => "success",
            Self::Failure => "failure",
            Self::NotApplicable => "not_applicable",
        }
    }
}

/// What was seen when it was used.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema, serde::Serialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Features {
    /// Fingerprint signals that were there (at most 256).
    #[serde(default)]
    pub present_signals: Vec<Value>,
    /// Fingerprint signals that were not (at most 256).
    #[serde(default)]
    pub absent_signals: Vec<Value>,
    /// Selectors that matched (at most 256).
    #[serde(default)]
    pub matched_selectors: Vec<String>,
    /// How well the fingerprint matched, 0 to 1.
    #[serde(default)]
    pub match_confidence: Option<f64>,
    /// Free notes (at most 2,000 characters).
    #[serde(default)]
    pub notes: Option<String>,
}

/// Arguments of `nova.telemetry_report`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct TelemetryArgs {
    /// The site.
    pub scope: String,
    /// The phenomenon.
    pub phenomenon_id: String,
    /// `success`, `failure`, `not_applicable`.
    pub outcome: Reported,
    /// The tab it happened in.
    #[serde(default)]
    pub target_id: Option<String>,
    /// How long it took, ms (0 to 3600000).
    #[serde(default)]
    pub elapsed_ms: Option<u32>,
    /// The same, by its older name; must agree with `elapsedMs` when both are given.
    #[serde(default, rename = "elapsed_ms")]
    pub elapsed_ms_legacy: Option<u32>,
    /// What was seen.
    #[serde(default)]
    pub features: Option<Features>,
    /// Calling agent.
    #[serde(default)]
    pub agent_id: Option<String>,
}

/// What the runtime tools reach.
pub struct PksRuntime<'h> {
    /// The PKS tables.
    pub pks: &'h Pks,
}

impl<'h> From<&'h crate::hub::Hub> for PksRuntime<'h> {
    fn from(hub: &'h crate::hub::Hub) -> Self {
        Self { pks: &hub.pks }
    }
}

crate::tool! {
    /// `nova.telemetry_report` in the tool registry.
    pub static TELEMETRY_REPORT = ToolDef::new(
        "nova.telemetry_report",
        "Report how using a site's stored phenomenon went (success, failure, not_applicable): it \
         keeps the entry's health, and failures in a row retire it.",
        registry::schema::<TelemetryArgs>,
        crate::handler!(PksRuntime::telemetry_report),
    )
    .bundles(&[Bundle::PksLearning])
    .tob(ActionKind::Write, "knowledge", 0)
    .page(PageUse::None);
}

fn check(a: &TelemetryArgs) -> Result<Option<u32>, CallError> {
    let elapsed = match (a.elapsed_ms, a.elapsed_ms_legacy) {
        (Some(x), Some(y)) if x != y => {
            return Err(CallError::invalid(
                "elapsedMs",
                format!("`elapsedMs` ({x}) and its older name `elapsed_ms` ({y}) disagree; send one"),
            ));
        }
        (x, y) => x.or(y),
    };
    if let Some(ms) = elapsed {
        crate::call::check_range("elapsedMs", ms, (0, MAX_ELAPSED_MS, 0))?;
    }
    if let Some(f) = &a.features {
        for (name, n) in [
            ("presentSignals", f.present_signals.len()),
            ("absentSignals", f.absent_signals.len()),
            ("matchedSelectors", f.matched_selectors.len()),
        ] {
            if n > MAX_FEATURE_ITEMS {
                return Err(CallError::invalid(
                    &format!("features.{name}"),
                    format!("`features.{name}` holds at most {MAX_FEATURE_ITEMS} items, got {n}"),
                ));
            }
        }
        if f.match_confidence.is_some_and(|c| !(0.0..=1.0).contains(&c)) {
            return Err(CallError::invalid(
                "features.matchConfidence",
                "`features.matchConfidence` must be between 0 and 1",
            ));
        }
        check_chars("features.notes", f.notes.as_deref().unwrap_or_default(), 2000)?;
    }
    Ok(elapsed)
}

impl PksRuntime<'_> {
    /// `nova.telemetry_report`.
    pub async fn telemetry_report(
        &self,
        rec: &mut CallRecord,
        a: TelemetryArgs,
    ) -> Result<ToolReply, CallError> {
        let scope = scope::normalize(&a.scope)?;
        let elapsed = check(&a)?;
        let features = a.features.as_ref().map(|f| serde_json::to_value(f).unwrap_or(Value::Null));
        let outcome = Outcome {
            outcome: a.outcome.as_str(),
            elapsed_ms: elapsed.map(i64::from),
            target_id: a.target_id.as_deref(),
            session_id: Some(&rec.session.id),
            features: features.as_ref(),
        };
        let now = crate::time::now_ms();
        let (domain, done, ids, rate) = self.pks.with(|c| {
            let tx = crate::store::write_tx(c)?;
            let domain = records::domain(&tx, &scope)?;
            let done = records::report(&tx, &scope, &a.phenomenon_id, &outcome, now)?;
            let ids: Vec<String> = records::entries(&tx, &scope)?.into_iter().map(|e| e.id).collect();
            let rate = records::success_rate(&tx, &scope, &a.phenomenon_id, now)?;
            tx.commit()?;
            Ok((domain, done, ids, rate))
        })?;
        rec.executed();
        let Some((e, retired)) = done else {
            let (code, hint) = if domain.is_none() {
                ("pks.scope_not_found", format!("Nova holds no knowledge for {scope}"))
            } else {
                (
                    "pks.phenomenon_not_found",
                    format!("{scope} has no phenomenon `{}`; its ids: {}", a.phenomenon_id, ids.join(", ")),
                )
            };
            return Ok(ToolReply::ok(json!({
                "ok": false, "status": "not_found", "reasonCode": code, "retryable": false, "recorded": false,
                "found": false, "scope": scope, "phenomenonId": a.phenomenon_id,
                // The site is known but not this id: the agent may be holding an old one.
                "agentDriftSuspect": domain.is_some(), "hint": hint,
            })));
        };
        Ok(ToolReply::ok(json!({
            "ok": true, "status": "ok", "recorded": true, "scope": scope, "phenomenonId": e.id,
            "outcome": a.outcome.as_str(), "elapsedMs": elapsed, "hasFeatures": features.is_some(),
            "autoDeprecated": retired,
            "health": {
                "totalAttempts": e.attempts.0, "successCount": e.attempts.1, "failureCount": e.attempts.2,
                "successRate30d": rate.0, "attempts30d": rate.1, "consecutiveFailures": e.attempts.3,
                "lastOutcome": e.last.0, "lastAttempt": e.last.1.map(crate::time::iso),
                "learningLevel": e.level, "deprecated": e.deprecated.is_some(),
            },
        })))
    }
}
