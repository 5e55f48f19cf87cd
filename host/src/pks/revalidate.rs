//! `nova.revalidate` (docs/pks.md, "Revalidation"): checks a site's stored phenomena against a
//! tab's page without running any playbook. Each is `healthy` (enough of its fingerprint is
//! there), `drift` (some of it), or `gone` (none of it); the measure is written back as drift
//! and as a `not_applicable` outcome (it proves nothing either way about the playbook). A
//! repair is only ever proposed (`autoRepairSafe: false`). Checks are budgeted per site.

use nova_shared::protocol::method;
use nova_shared::protocol::pks::{Probe, ProbeParams, ProbeResult};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use super::model::{Fingerprint, SignalKind};
use super::records::{self, Entry, Outcome};
use super::{Pks, drift, probes, scope};
use crate::bridge::DEFAULT_TIMEOUT;
use crate::call::{CallError, CallRecord, ToolReply, check_range};
use crate::observation::ActionKind;
use crate::registry::{self, Bundle, PageUse, ToolDef};

/// `limit` bounds and default.
pub const LIMIT: (u32, u32, u32) = (1, 5, 3);
/// An entry checked or used within this long is not stale (7 days).
pub const FRESH_MS: i64 = 7 * 86_400_000;

/// `nova.revalidate` arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RevalidateArgs {
    /// The tab whose page is checked (required).
    pub target_id: String,
    /// The site (default: the tab's); the tab must show it.
    #[serde(default)]
    pub scope: Option<String>,
    /// Most phenomena checked (1-5, default 3), stalest first.
    #[serde(default = "three")]
    pub limit: u32,
    /// Calling agent.
    #[serde(default)]
    pub agent_id: Option<String>,
}

fn three() -> u32 {
    LIMIT.2
}

/// What `nova.revalidate` reaches.
pub struct PksRevalidate<'h> {
    /// The PKS tables and the budget.
    pub pks: &'h Pks,
    /// The tab a call names.
    pub tabs: crate::tabs::Tabs<'h>,
    /// The extension connection.
    pub bridge: &'h crate::bridge::Bridge,
}

impl<'h> From<&'h crate::hub::Hub> for PksRevalidate<'h> {
    fn from(hub: &'h crate::hub::Hub) -> Self {
        Self { pks: &hub.pks, tabs: hub.tabs(), bridge: &hub.bridge }
    }
}

crate::tool! {
    /// `nova.revalidate` in the tool registry.
    pub static REVALIDATE = ToolDef::new(
        "nova.revalidate",
        "Check a site's stored phenomena against a tab's page without running them: healthy, \
         drift or gone for each, stalest first (limit 1-5). Writes the measure back as drift; a \
         repair is only proposed, never applied.",
        registry::schema::<RevalidateArgs>,
        crate::handler!(PksRevalidate::revalidate),
    )
    .bundles(&[Bundle::PksLearning])
    .tob(ActionKind::Read, "knowledge", 0)
    .page(PageUse::Reads { perceives: false });
}

/// How stale an entry is: never checked first, then the longest unchecked, drifting ones before
/// clean ones.
fn staleness(e: &Entry, now: i64) -> (bool, i64) {
    let last = e.last.1.unwrap_or(0);
    (now - last < FRESH_MS && e.drift_debt == 0.0, last)
}

/// The verdict of a measure: `healthy`, `drift` or `gone`.
pub fn verdict(ratio: f64, min_confidence: f64) -> &'static str {
    if ratio <= 0.0 {
        "gone"
    } else if ratio >= min_confidence {
        "healthy"
    } else {
        "drift"
    }
}

impl PksRevalidate<'_> {
    /// `nova.revalidate`.
    pub async fn revalidate(&self, rec: &mut CallRecord, a: RevalidateArgs) -> Result<ToolReply, CallError> {
        check_range("limit", a.limit, LIMIT)?;
        let given = a.scope.as_deref().map(scope::normalize).transpose()?;
        let tab = match self.tabs.enter(rec, &a.target_id, false).await? {
            Ok(tab) => tab,
            Err(reply) => return Ok(reply),
        };
        let site = match scope::of_tab(given.as_deref(), &tab.url) {
            Ok(site) => site,
            Err(reply) => return Ok(*reply),
        };
        let now = crate::time::now_ms();
        let mut entries = self.pks.with(|c| records::entries(c, &site))?;
        entries.retain(|e| e.deprecated.is_none());
        entries.sort_by_key(|e| staleness(e, now));
        let mut denied = Vec::new();
        let mut picked: Vec<(Entry, Fingerprint)> = Vec::new();
        for e in entries {
            if picked.len() as u32 >= a.limit {
                break;
            }
            let Ok(fp) = serde_json::from_value::<Fingerprint>(e.fingerprint.clone()) else { continue };
            if probes::checkable(&fp).is_empty() {
                denied.push(format!("{}: its fingerprint has no signal the page can be asked about", e.id));
                continue;
            }
            picked.push((e, fp));
        }
        let (granted, remaining) = self.pks.budget.take(&site, picked.len() as u32, now);
        for (e, _) in picked.drain(granted as usize..) {
            denied.push(format!(
                "{}: the hourly budget of {} checks for {site} is spent",
                e.id,
                super::BUDGET_PER_HOUR
            ));
        }
        let mut results = Vec::new();
        let (mut recorded, mut failed) = (0, 0);
        for (e, fp) in &picked {
            let checkable = probes::checkable(fp);
            let surface = probes::surface(fp).map(str::to_owned);
            let mut asks: Vec<Probe> = checkable.iter().map(|(_, p)| p.clone()).collect();
            let at_surface = asks.len();
            if let Some(s) = &surface {
                asks.push(Probe::Present { selectors: vec![s.clone()] });
            }
            // Where the banner's text is now, for a repair proposal.
            let text = fp.signals.iter().find(|s| s.kind == SignalKind::Text).map(|s| s.matches.clone());
            let at_text = asks.len();
            if let Some(text) = &text {
                asks.push(Probe::Holder { text: text.clone() });
            }
            let p = ProbeParams {
                target: tab.target_id.clone(),
                probes: asks,
                surface: None,
                checks: Vec::new(),
            };
            let seen = match self.bridge.call::<ProbeResult>(method::PKS_PROBE, p, DEFAULT_TIMEOUT).await {
                Ok(r) => r,
                Err(err) => {
                    results.push(
                        json!({"scope": site, "stableId": e.id, "verdict": null, "error": err.to_string()}),
                    );
                    continue;
                }
            };
            let (live, ratio, missing) = probes::measure(fp, &seen.present);
            let selector_exists = surface.as_ref().map(|_| seen.present.get(at_surface) == Some(&true));
            // The surface is gone but its text is in a box that can be named: proposed, never
            // applied (nova.pks_patch is the agent's decision).
            let repair = text
                .and_then(|_| seen.proposals.get(at_text).cloned().flatten())
                .filter(|p| selector_exists == Some(false) && surface.as_deref() != Some(p.as_str()))
                .filter(|p| super::poison::broad(p).is_none());
            let verdict = verdict(ratio, fp.min_confidence);
            let written = self.pks.with(|c| {
                let baseline = records::baseline(c, &site, &e.id)?;
                let debt = drift::blend(e.drift_debt, drift::distance(&baseline, &live));
                records::set_drift(c, &site, &e.id, debt)?;
                let features = json!({"presentSignals": live, "absentSignals": missing, "matchConfidence": ratio,
                                      "notes": format!("nova.revalidate: {verdict}")});
                let o = Outcome {
                    outcome: "not_applicable",
                    elapsed_ms: None,
                    target_id: Some(&tab.target_id),
                    session_id: Some(&rec.session.id),
                    features: Some(&features),
                };
                records::report(c, &site, &e.id, &o, now)?;
                Ok(debt)
            });
            let debt = match written {
                Ok(d) => {
                    recorded += 1;
                    Some(d)
                }
                Err(_) => {
                    failed += 1;
                    None
                }
            };
            results.push(json!({
                "scope": site, "stableId": e.id, "verdict": verdict, "selectorExists": selector_exists,
                "fingerprintMatchRatio": (ratio * 1000.0).round() / 1000.0,
                "signalsChecked": checkable.len(), "signalsMatched": live.len(),
                "missingSignals": missing, "driftDebt": debt, "error": null,
                "telemetryRecorded": debt.is_some(),
                "repairCandidateSelector": repair, "autoRepairSafe": false,
            }));
        }
        rec.executed();
        let ok = failed == 0 && (denied.is_empty() || !results.is_empty());
        Ok(ToolReply::ok(json!({
            "ok": ok, "status": if ok { "ok" } else { "error" }, "scope": site, "targetId": tab.target_id,
            "checked": results.len(), "results": results, "telemetryRecorded": recorded,
            "telemetryFailed": failed, "budgetRemaining": remaining, "denied": denied,
        })))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdicts_follow_the_share_seen() {
        assert_eq!(verdict(0.0, 0.6), "gone");
        assert_eq!(verdict(0.4, 0.6), "drift");
        assert_eq!(verdict(0.6, 0.6), "healthy");
    }
}
