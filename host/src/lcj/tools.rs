//! `nova.memory_add_candidate` (docs/learning.md, "Journal"): an agent's own claim about a site,
//! as a semantic candidate (eligible for promotion, unlike the diagnostic ones failures raise).
//! The tab must already be claimed, by the caller.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use super::{Journal, keys, rows};
use crate::call::{CallError, CallRecord, ToolReply};
use crate::observation::ActionKind;
use crate::registry::{self, Bundle, PageUse, ToolDef};

/// Default confidence of a semantic candidate.
pub const DEFAULT_CONFIDENCE: f64 = 0.65;

/// A candidate's status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Not yet confirmed (default).
    #[default]
    Unverified,
    /// Confirmed.
    Verified,
    /// Shown to be wrong: closes it.
    Disproven,
}

impl Status {
    fn as_str(self) -> &'static str {
        match self {
            Self::Unverified => "unverified",
            Self::Verified => "verified",
            Self::Disproven => "disproven",
        }
    }
}

/// Arguments of `nova.memory_add_candidate`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct AddArgs {
    /// The tab (a target id, `active` or `activeBrowserTab`); it must be claimed by the caller.
    pub target_id: String,
    /// Calling agent (default `default`); must hold the tab's claim.
    #[serde(default)]
    pub agent_id: Option<String>,
    /// What the claim is about (a page part, a control, a flow; at most 256 characters).
    pub component: String,
    /// The claim (at most 280 characters).
    pub claim: String,
    /// `unverified` (default), `verified`, `disproven`.
    #[serde(default)]
    pub status: Status,
    /// 0 to 1 (default 0.65).
    #[serde(default)]
    pub confidence: Option<f64>,
}

/// What the tool reaches.
pub struct JournalTools<'h> {
    /// The journal.
    pub lcj: &'h Journal,
    /// The tabs and their claims.
    pub tabs: crate::tabs::Tabs<'h>,
    /// Task runs bound to tabs.
    pub scopes: &'h crate::tob::scope::Scopes,
}

impl<'h> From<&'h crate::hub::Hub> for JournalTools<'h> {
    fn from(hub: &'h crate::hub::Hub) -> Self {
        Self { lcj: &hub.lcj, tabs: hub.tabs(), scopes: &hub.scopes }
    }
}

crate::tool! {
    /// `nova.memory_add_candidate` in the tool registry.
    pub static MEMORY_ADD_CANDIDATE = ToolDef::new(
        "nova.memory_add_candidate",
        "Record a claim about the site in a tab you have claimed (component, claim, status, \
         confidence) as a learning candidate; a later claim with the same component and text merges \
         into it.",
        registry::schema::<AddArgs>,
        crate::handler!(JournalTools::memory_add_candidate),
    )
    .bundles(&[Bundle::PksLearning])
    .tob(ActionKind::Write, "knowledge", 0)
    .page(PageUse::None);
}

fn text(field: &str, value: &str, max: usize) -> Result<String, CallError> {
    let t = value.trim();
    let n = t.chars().count();
    if n == 0 || n > max {
        return Err(CallError::invalid(field, format!("`{field}` must be 1 to {max} characters, got {n}")));
    }
    Ok(t.to_owned())
}

impl JournalTools<'_> {
    /// `nova.memory_add_candidate`.
    pub async fn memory_add_candidate(
        &self,
        rec: &mut CallRecord,
        a: AddArgs,
    ) -> Result<ToolReply, CallError> {
        let component = text("component", &a.component, rows::MAX_COMPONENT)?;
        let claim = text("claim", &a.claim, rows::MAX_CLAIM)?;
        let confidence = a.confidence.unwrap_or(DEFAULT_CONFIDENCE);
        if !(0.0..=1.0).contains(&confidence) || confidence.is_nan() {
            return Err(CallError::invalid(
                "confidence",
                format!("`confidence` must be 0 to 1, got {confidence}"),
            ));
        }
        if let Some(why) = crate::ok::secret::why("candidate.claim", &json!(claim), Some(&component)) {
            return Err(CallError::invalid(
                "claim",
                format!(
                    "`claim` looks like a secret ({why}); Nova never stores passwords, tokens or cookies"
                ),
            ));
        }
        let target = if a.target_id == "activeBrowserTab" { "active" } else { a.target_id.as_str() };
        let tab = match self.tabs.resolve(target).await {
            Ok(tab) => tab,
            Err(reply) => return Ok(reply),
        };
        rec.obs.target_id = Some(tab.target_id.clone());
        rec.obs.url_before = Some(tab.url.clone());
        let agent = rec.obs.agent_id.clone();
        let Some(lease) = self.tabs.leases.get(&tab.target_id) else {
            return Ok(ToolReply::failure(
                "lcj.tab_not_claimed",
                format!(
                    "tab {} is not claimed: claim it with nova.tab_claim first (a candidate belongs to \
                     the agent working in the tab)",
                    tab.target_id
                ),
                false,
            ));
        };
        self.tabs.leases.check(&tab.target_id, &agent).map_err(CallError::Owner)?;
        let host = crate::pks::scope::normalize(&tab.url).unwrap_or_default();
        let task = self.scopes.on_target(&tab.target_id).and_then(|s| s.instance_id);
        let key = keys::candidate_key(&["semantic", &host, &component.to_lowercase(), &claim.to_lowercase()]);
        let now = crate::clock::now_ms();
        let (cand, created) = self.lcj.with(|c| {
            rows::merge_candidate(
                c,
                &rows::NewCandidate {
                    owner_id: &agent,
                    context_host: &host,
                    tab_id: Some(&tab.target_id),
                    task_id: task.as_deref(),
                    component: &component,
                    claim: &claim,
                    status: a.status.as_str(),
                    confidence,
                    origin: "semantic",
                    candidate_key: &key,
                    source_event_id: None,
                    at: now,
                },
            )
        })?;
        rec.executed();
        Ok(ToolReply::ok(json!({
            "ok": true, "targetId": tab.target_id, "taskId": task, "ownerAgentId": lease.owner,
            "candidateId": cand.id, "created": created, "status": cand.status, "confidence": cand.confidence,
            "stableId": cand.stable_id, "candidateKey": key, "contextHost": host,
            "updatedAtUtc": crate::time::iso(cand.updated_at),
        })))
    }
}
