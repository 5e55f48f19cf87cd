//! The tab a call names: resolving `active` or a target id to a tab the extension knows, and
//! entering it under the lease rules (another agent's lease refuses; a mutating call claims an
//! unclaimed tab).

use nova_shared::protocol::{TabInfo, method};
use serde_json::json;

use crate::bridge::{Bridge, DEFAULT_TIMEOUT};
use crate::call::{CallError, CallRecord, ToolReply};
use crate::lease::Leases;
use crate::observation::flags;

/// The browser connection and the leases, which is all resolving a tab needs.
pub struct Tabs<'h> {
    /// The extension connection.
    pub bridge: &'h Bridge,
    /// Tab leases.
    pub leases: &'h Leases,
}

impl Tabs<'_> {
    /// Resolves `active` or a target id to a tab the extension knows.
    pub async fn resolve(&self, target_id: &str) -> Result<TabInfo, ToolReply> {
        let find = |tabs: &[TabInfo]| {
            tabs.iter()
                .find(|t| if target_id == "active" { t.active } else { t.target_id == target_id })
                .cloned()
        };
        if let Some(tab) = find(&self.bridge.state().tabs) {
            return Ok(tab);
        }
        let tabs: Vec<TabInfo> = self
            .bridge
            .call(method::TABS_LIST, json!({}), DEFAULT_TIMEOUT)
            .await
            .map_err(|e| ToolReply::bridge_failure(&e))?;
        find(&tabs).ok_or_else(|| {
            let known: Vec<&str> = tabs.iter().map(|t| t.target_id.as_str()).collect();
            ToolReply::failure(
                nova_shared::reason::TARGET_NOT_FOUND,
                format!("no tab `{target_id}`; open tabs: {}", known.join(", ")),
                false,
            )
        })
    }

    /// Resolves the target and enforces the lease; mutating calls auto-claim an unclaimed tab.
    pub async fn enter(
        &self,
        rec: &mut CallRecord,
        target_id: &str,
        mutating: bool,
    ) -> Result<Result<TabInfo, ToolReply>, CallError> {
        let tab = match self.resolve(target_id).await {
            Ok(tab) => tab,
            Err(reply) => return Ok(Err(reply)),
        };
        rec.obs.target_id = Some(tab.target_id.clone());
        rec.obs.url_before = Some(tab.url.clone());
        rec.obs.nav_epoch_before = Some(tab.nav_epoch);
        rec.obs.signal_flags |= flags::TARGET_RESOLVED;
        let agent = rec.obs.agent_id.clone();
        self.leases.check(&tab.target_id, &agent).map_err(CallError::Owner)?;
        if mutating {
            self.leases.auto_claim(&tab.target_id, &agent).map_err(CallError::Owner)?;
        }
        Ok(Ok(tab))
    }
}
