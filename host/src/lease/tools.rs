//! The lease tools: `nova.tab_claim` and `nova.tab_release`.

use serde_json::json;

use super::{ClaimArgs, MAX_TTL_MS, MIN_TTL_MS, ReleaseArgs};
use crate::call::check_range;
use crate::call::{CallError, CallRecord, ToolReply};
use crate::registry::{self, Bundle, PageUse, ToolDef};

/// What the lease tools reach.
pub struct LeaseTools<'h> {
    /// The tab a call names.
    pub tabs: crate::tabs::Tabs<'h>,
    /// TOB scopes.
    pub scopes: &'h crate::tob::scope::Scopes,
    /// Tab leases.
    pub leases: &'h crate::lease::Leases,
    /// The observation recorder.
    pub recorder: &'h crate::tob::Recorder,
    /// The person's controls.
    pub control: &'h crate::aag::control::Control,
    /// The learning journal (Learn Mode's coverage floors).
    pub lcj: &'h crate::lcj::Journal,
}

impl<'h> From<&'h crate::hub::Hub> for LeaseTools<'h> {
    fn from(hub: &'h crate::hub::Hub) -> Self {
        Self {
            tabs: hub.tabs(),
            scopes: &hub.scopes,
            leases: &hub.leases,
            recorder: &hub.recorder,
            control: &hub.control,
            lcj: &hub.lcj,
        }
    }
}

crate::tool! {
    /// `nova.tab_claim` in the tool registry.
    pub static TAB_CLAIM = ToolDef::new(
        "nova.tab_claim",
        "Reserve a tab for this agent; other agents' calls on it fail with \
         claim.owner_mismatch until release or expiry.",
        registry::schema::<ClaimArgs>,
        crate::handler!(LeaseTools::tab_claim),
    )
    .bundles(&[Bundle::BrowserAutomation])
    .page(PageUse::Tab);
}

crate::tool! {
    /// `nova.tab_release` in the tool registry.
    pub static TAB_RELEASE = ToolDef::new(
        "nova.tab_release",
        "Release a tab this agent claimed.",
        registry::schema::<ReleaseArgs>,
        crate::handler!(LeaseTools::tab_release),
    )
    .bundles(&[Bundle::BrowserAutomation])
    .page(PageUse::Tab);
}

impl LeaseTools<'_> {
    /// `nova.tab_claim`.
    pub async fn tab_claim(&self, rec: &mut CallRecord, a: ClaimArgs) -> Result<ToolReply, CallError> {
        check_range("ttlMs", a.ttl_ms, (MIN_TTL_MS, MAX_TTL_MS, 0))?;
        let tab = match self.tabs.resolve(&a.target_id).await {
            Ok(tab) => tab,
            Err(reply) => return Ok(reply),
        };
        rec.obs.target_id = Some(tab.target_id.clone());
        rec.obs.url_before = Some(tab.url.clone());
        let lease = self.leases.claim(
            &tab.target_id,
            &a.agent_id,
            a.agent_role,
            a.ttl_ms,
            a.debug_label.as_deref(),
            a.reclaim_reason.as_deref(),
        )?;
        for (target, loser, by, reason) in self.leases.take_reclaims() {
            self.control.note_reclaim(&target, &loser, &by, &reason);
        }
        if let Some(scope) = self.scopes.open_lease(&tab.target_id, &a.agent_id) {
            self.recorder.flush().await;
            self.scopes.backfill(&scope, &tab.target_id, &a.agent_id);
        }
        let remaining = lease.expires_at_ms - crate::time::now_ms();
        Ok(ToolReply::ok(json!({
            "ok": true, "status": "ok", "targetId": tab.target_id, "claimed": true,
            "claimOwner": lease.owner, "leaseRemainingMs": remaining,
            "expiresAtUtc": lease.expires_at_ms, "finalizationToken": lease.finalization_token,
            "debugLabel": lease.debug_label,
        })))
    }

    /// `nova.tab_release`.
    pub async fn tab_release(&self, rec: &mut CallRecord, a: ReleaseArgs) -> Result<ToolReply, CallError> {
        let tab = match self.tabs.resolve(&a.target_id).await {
            Ok(tab) => tab,
            Err(reply) => return Ok(reply),
        };
        rec.obs.target_id = Some(tab.target_id.clone());
        self.leases.check(&tab.target_id, &a.agent_id)?;
        let exhausted = (a.coverage_exhausted, a.coverage_exhausted_reason.as_deref());
        let ending = crate::alp::learn_mode::judge(self.lcj, &tab.target_id, &a.agent_id, exhausted).await?;
        let released = self.leases.release(&tab.target_id, &a.agent_id)?;
        let learned = ending.map(|e| crate::alp::learn_mode::finish(self.lcj, &e)).transpose()?;
        self.scopes.close_lease(&tab.target_id, &a.agent_id);
        Ok(ToolReply::ok(json!({
            "ok": true, "status": "ok", "targetId": tab.target_id,
            "releaseState": "released", "claimState": "unclaimed", "released": released,
            "finalized": false, "finalizeDecision": null, "finalizeReasonCode": null,
            "learnMode": learned,
        })))
    }
}
