//! The OK tool `nova.ok_observe`: an agent reports what it sees of a service's state.
//! docs/ok.md is its reference. (`nova.memory_stats` counts OK's tables too: `crate::lcj::stats`.)

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::observe::{self, Batch, Claim, Report};
use super::rules::{Certainty, Source};
use super::signals::{self, KeyError};
use super::{Knowledge, Place, hints};
use crate::call::{CallError, CallRecord, ToolReply, check_chars};
use crate::clock;
use crate::observation::ActionKind;
use crate::registry::{self, Bundle, PageUse, ToolDef};

/// Most claims in one call.
pub const MAX_CLAIMS: usize = 50;
/// Longest claim value, in characters of JSON.
pub const MAX_VALUE_CHARS: usize = 16_384;
/// Longest `evidence` note, in characters.
pub const MAX_EVIDENCE_CHARS: usize = 2_000;
/// Longest `perceptionId`, in characters.
pub const MAX_PERCEPTION_ID_CHARS: usize = 128;

/// Arguments of `nova.ok_observe`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ObserveArgs {
    /// The tab observed: a target id, or `active` (the default; null means the default).
    #[serde(default)]
    pub target_id: Option<String>,
    /// Groups the claims of one perception (at most 128 characters).
    #[serde(default)]
    pub perception_id: Option<String>,
    /// What the page visibly shows, 1 to 50 claims.
    pub claims: Vec<ClaimArg>,
    /// Calling agent.
    #[serde(default)]
    pub agent_id: Option<String>,
}

/// One claim of `nova.ok_observe`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ClaimArg {
    /// `namespace.path`, at most 128 characters: one of the 15 `core.*` signals
    /// (core.login_state, core.page.type, core.model.active, core.plan.tier, ...) or a custom
    /// namespace (`acme.workspace.name`).
    pub signal_key: String,
    /// The observed value: any JSON, at most 16,384 characters; compact state, not page text.
    pub value: Value,
    /// `certain` (0.95), `likely` (0.75, the default; null means the default) or `tentative`
    /// (0.50, never replaces a differing fact).
    #[serde(default)]
    pub certainty: Option<Certainty>,
    /// What was visibly seen (at most 2,000 characters).
    #[serde(default)]
    pub evidence: Option<String>,
}

/// What the OK tools reach.
pub struct OkTools<'h> {
    /// The tab a call names.
    pub tabs: crate::tabs::Tabs<'h>,
    /// The OK tables.
    pub ok: &'h Knowledge,
    /// Settings (the freshness window) and site adapters (services).
    pub data: &'h crate::paths::DataDir,
}

impl<'h> From<&'h crate::hub::Hub> for OkTools<'h> {
    fn from(hub: &'h crate::hub::Hub) -> Self {
        Self { tabs: hub.tabs(), ok: &hub.ok, data: &hub.data }
    }
}

crate::tool! {
    /// `nova.ok_observe` in the tool registry.
    pub static OK_OBSERVE = ToolDef::new(
        "nova.ok_observe",
        "Report what the page visibly shows of the service's state (signed in, page type, model, \
         plan, account, language, theme, features) as 1-50 claims from one perception. OK keeps \
         them as facts with freshness and conflicts; okHints on nova.perceive says when to report, \
         nova.ok_signal_schema which keys there are. Facts orient, never authorise: confirm the \
         page before acting. Never report secrets.",
        registry::schema::<ObserveArgs>,
        crate::handler!(OkTools::ok_observe),
    )
    .bundles(&[Bundle::PageReadDebug])
    .tob(ActionKind::Write, "knowledge", 0)
    .page(PageUse::Tab)
    // Claims are kept in the OK tables, where secret-looking ones are refused; the call's row
    // keeps only their size.
    .secrets(&["claims"]);
}

/// Checks what refuses the whole call (nothing is written): the claim count, unknown core
/// signals, value, evidence and perceptionId sizes.
fn check_call(a: &ObserveArgs) -> Result<(), CallError> {
    if a.claims.is_empty() || a.claims.len() > MAX_CLAIMS {
        return Err(CallError::invalid(
            "claims",
            format!(
                "`claims` must hold 1 to {MAX_CLAIMS} claims, got {}; {}",
                a.claims.len(),
                if a.claims.is_empty() {
                    "report at least one thing the page shows"
                } else {
                    "split them into smaller batches"
                }
            ),
        ));
    }
    if let Some(p) = &a.perception_id {
        check_chars("perceptionId", p, MAX_PERCEPTION_ID_CHARS)?;
    }
    for (i, c) in a.claims.iter().enumerate() {
        if let Err(KeyError::UnknownCore(m)) = signals::parse(&c.signal_key) {
            return Err(CallError::invalid(
                &format!("claims[{i}].signalKey"),
                format!("claims[{i}].signalKey: {m}"),
            ));
        }
        let n = c.value.to_string().chars().count();
        if n > MAX_VALUE_CHARS {
            return Err(CallError::invalid(
                &format!("claims[{i}].value"),
                format!(
                    "claims[{i}].value is {n} characters of JSON; at most {MAX_VALUE_CHARS} are allowed: \
                     report a compact state value, not page content"
                ),
            ));
        }
        check_chars(
            &format!("claims[{i}].evidence"),
            c.evidence.as_deref().unwrap_or_default(),
            MAX_EVIDENCE_CHARS,
        )?;
    }
    Ok(())
}

impl OkTools<'_> {
    /// `nova.ok_observe`.
    pub async fn ok_observe(&self, rec: &mut CallRecord, a: ObserveArgs) -> Result<ToolReply, CallError> {
        check_call(&a)?;
        let target = a.target_id.as_deref().unwrap_or("active");
        let tab = match self.tabs.enter(rec, target, false).await? {
            Ok(tab) => tab,
            Err(reply) => return Ok(reply),
        };
        let place = super::service::place(self.data, &tab.target_id, &tab.url);
        let claims: Vec<Claim> = a
            .claims
            .into_iter()
            .map(|c| Claim {
                key: c.signal_key,
                value: c.value,
                certainty: c.certainty.unwrap_or_default(),
                evidence: c.evidence,
            })
            .collect();
        let (now, window_ms) = (clock::now_ms(), super::window_ms(self.data));
        let batch = Batch {
            place: &place,
            source: Source::Agent,
            agent_id: Some(&rec.obs.agent_id),
            perception_id: a.perception_id.as_deref(),
            now,
            window_ms,
        };
        let report = observe::apply(self.ok, &batch, &claims)?;
        rec.executed();
        rec.obs.url_after = Some(place.url.clone());
        let facts = hints::context(self.ok, &place)?;
        Ok(ToolReply::ok(reply(&tab.target_id, &place, &report, hints::capabilities(&facts, now, window_ms))))
    }
}

fn reply(target: &str, place: &Place, r: &Report, capabilities: Value) -> Value {
    json!({
        "ok": true, "status": "ok", "targetId": target, "serviceKey": place.service,
        "accepted": r.accepted, "rejected": r.rejected, "conflicted": r.conflicted,
        "observationOnly": r.observation_only, "superseded": r.superseded,
        "facts": r.facts,
        "warnings": if r.warnings.is_empty() { Value::Null } else { json!(r.warnings) },
        "capabilities": capabilities,
    })
}
