//! `nova.learn_resolve_opportunity` (docs/learning.md, "Semantic learning"): the agent's verdict
//! on a semantic learning opportunity. `defer` leaves it quiet for a day; the others close it.
//! Unknown fields are refused, as for every tool.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use crate::call::{CallError, CallRecord, ToolReply};
use crate::lcj::{self, opportunities};
use crate::observation::ActionKind;
use crate::registry::{self, Bundle, PageUse, ToolDef};

/// Longest reason, characters.
pub const MAX_REASON: usize = 500;

/// A verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// The agent stored (or will store) the entry.
    Upsert,
    /// The situation is not what the prompt thought.
    NotApplicable,
    /// Storing it would be unsafe.
    Unsafe,
    /// Nova already knows it.
    AlreadyKnown,
    /// Later (asked again after a day).
    Defer,
}

impl Verdict {
    fn as_str(self) -> &'static str {
        match self {
            Self::Upsert => "upsert",
            Self::NotApplicable => "not_applicable",
            Self::Unsafe => "unsafe",
            Self::AlreadyKnown => "already_known",
            Self::Defer => "defer",
        }
    }
}

/// Arguments of `nova.learn_resolve_opportunity`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ResolveArgs {
    /// The opportunity (`opportunityId` of a `pksSemanticLearning` prompt).
    pub opportunity_id: String,
    /// `upsert`, `not_applicable`, `unsafe`, `already_known`, `defer`.
    pub verdict: Verdict,
    /// Why (at most 500 characters).
    #[serde(default)]
    pub reason: Option<String>,
    /// Calling agent.
    #[serde(default)]
    pub agent_id: Option<String>,
}

/// What the tool reaches.
pub struct Resolver<'h> {
    /// The journal.
    pub lcj: &'h lcj::Journal,
}

impl<'h> From<&'h crate::hub::Hub> for Resolver<'h> {
    fn from(hub: &'h crate::hub::Hub) -> Self {
        Self { lcj: &hub.lcj }
    }
}

crate::tool! {
    /// `nova.learn_resolve_opportunity` in the tool registry.
    pub static LEARN_RESOLVE_OPPORTUNITY = ToolDef::new(
        "nova.learn_resolve_opportunity",
        "Close a semantic learning prompt (pksSemanticLearning) with a verdict: upsert, \
         not_applicable, unsafe, already_known, or defer (asked again after a day).",
        registry::schema::<ResolveArgs>,
        crate::handler!(Resolver::learn_resolve_opportunity),
    )
    .bundles(&[Bundle::PksLearning])
    .tob(ActionKind::Write, "knowledge", 0)
    .page(PageUse::None);
}

impl Resolver<'_> {
    /// `nova.learn_resolve_opportunity`.
    pub async fn learn_resolve_opportunity(
        &self,
        rec: &mut CallRecord,
        a: ResolveArgs,
    ) -> Result<ToolReply, CallError> {
        let id = a.opportunity_id.trim().to_owned();
        if id.is_empty() {
            return Err(CallError::invalid(
                "opportunityId",
                "`opportunityId` must name an opportunity (sem:...)",
            ));
        }
        let reason = a.reason.as_deref().map(str::trim).filter(|r| !r.is_empty());
        if let Some(n) = reason.map(|r| r.chars().count()).filter(|n| *n > MAX_REASON) {
            return Err(CallError::invalid(
                "reason",
                format!("`reason` is {n} characters; at most {MAX_REASON}"),
            ));
        }
        let now = crate::clock::now_ms();
        let verdict = a.verdict.as_str();
        let before = self.lcj.with(|c| {
            let tx = crate::store::write_tx(c)?;
            let before = opportunities::resolve(&tx, &id, verdict, reason, "learn_resolve_opportunity", now)?;
            tx.commit()?;
            Ok(before)
        })?;
        rec.executed();
        let Some(before) = before else {
            return Ok(ToolReply::failure(
                "lcj.opportunity_not_found",
                format!(
                    "no learning opportunity `{id}`: use the opportunityId of a pksSemanticLearning prompt"
                ),
                false,
            ));
        };
        Ok(ToolReply::ok(json!({
            "ok": true, "opportunityId": id, "verdict": verdict, "reason": reason,
            "priorState": before.state, "resolvedState": if verdict == "defer" { "deferred" } else { "resolved" },
            "resolvedAtUtc": crate::time::iso(now),
            // Autonomous (FR-1) candidates of the site held back by it: none are written yet.
            "fr1CandidatesSuperseded": 0,
        })))
    }
}
