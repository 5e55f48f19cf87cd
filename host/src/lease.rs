//! Tab leases (docs/tasks.md, "Tab leases"): an agent claims a tab for a while; calls by other
//! agents on a claimed tab fail with `claim.owner_mismatch` (JSON-RPC -32040) until the lease is
//! released, expires, or is force-reclaimed with a reason. The tools are in [`tools`].

pub mod tools;

use std::collections::HashMap;
use std::sync::Mutex;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use crate::call::{OWNER_MISMATCH, OWNER_MISMATCH_CODE, OwnerMismatch};
use crate::time::now_ms;

/// `tab_claim.ttlMs` default: 120000.
pub const DEFAULT_TTL_MS: u32 = 120_000;
/// `tab_claim.ttlMs` lower bound: 5000.
pub const MIN_TTL_MS: u32 = 5_000;
/// `tab_claim.ttlMs` upper bound: 1800000.
pub const MAX_TTL_MS: u32 = 1_800_000;
/// The agent id used when a call names none.
pub const DEFAULT_AGENT: &str = "default";

fn default_agent() -> String {
    DEFAULT_AGENT.to_owned()
}

fn default_ttl() -> u32 {
    DEFAULT_TTL_MS
}

/// `nova.tab_claim` arguments.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ClaimArgs {
    /// Tab to claim: a target id or `active`.
    pub target_id: String,
    /// Claiming agent.
    #[serde(default = "default_agent")]
    pub agent_id: String,
    /// Role of the agent: actor, archivist or mcp.
    #[serde(default)]
    pub agent_role: Option<AgentRole>,
    /// Lease length in ms (5000-1800000, default 120000). A re-claim by the owner extends it.
    #[serde(default = "default_ttl")]
    #[schemars(range(min = 5000, max = 1800000))]
    pub ttl_ms: u32,
    /// Free-form label shown in the popup; a re-claim updates it only when non-empty.
    #[serde(default)]
    pub debug_label: Option<String>,
    /// Takes the tab from another agent; the displaced owner is told once.
    #[serde(default)]
    pub reclaim_reason: Option<String>,
}

/// Agent roles a claim may name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum AgentRole {
    /// Acts on pages.
    Actor,
    /// Reads and records.
    Archivist,
    /// A generic MCP client.
    Mcp,
}

/// `nova.tab_release` arguments.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ReleaseArgs {
    /// Tab to release: a target id or `active`.
    pub target_id: String,
    /// Releasing agent; must be the owner.
    #[serde(default = "default_agent")]
    pub agent_id: String,
    /// A Learn Mode tab below its coverage floors may be released only with this set and a
    /// reason: further coverage is genuinely blocked (docs/learning.md, "Learn Mode").
    #[serde(default)]
    pub coverage_exhausted: bool,
    /// Why coverage is exhausted (1 to 500 characters; required with `coverageExhausted`).
    #[serde(default)]
    pub coverage_exhausted_reason: Option<String>,
}

/// A live lease.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lease {
    /// Owner agent id.
    pub owner: String,
    /// Owner role, when given.
    pub role: Option<AgentRole>,
    /// Expiry, ms since epoch.
    pub expires_at_ms: i64,
    /// Label.
    pub debug_label: Option<String>,
    /// Token required to finalize the lease with an explicit decision.
    pub finalization_token: String,
}

/// All leases of this hub, kept in the store (`tab_leases`) so they survive a hub restart.
#[derive(Debug, Default)]
pub struct Leases {
    map: Mutex<HashMap<String, Lease>>,
    store: Option<Mutex<rusqlite::Connection>>,
    /// Reclaims not yet turned into handover notes: (tab, displaced owner, new owner, reason).
    reclaimed: Mutex<Vec<(String, String, String, String)>>,
}

impl Leases {
    /// Leases backed by the store at `db`; live leases of a previous hub are restored.
    pub fn open(db: &std::path::Path) -> Result<Self, crate::store::StoreError> {
        let conn = crate::store::open(db)?;
        let now = now_ms();
        conn.execute("DELETE FROM tab_leases WHERE expires_at_ms <= ?1", [now])?;
        let mut map = HashMap::new();
        {
            let mut stmt = conn.prepare(
                "SELECT target_id, agent_id, agent_role, debug_label, expires_at_ms FROM tab_leases",
            )?;
            let rows = stmt.query_map([], |r| {
                let role: Option<String> = r.get(2)?;
                Ok((
                    r.get::<_, String>(0)?,
                    Lease {
                        owner: r.get(1)?,
                        role: role.and_then(|r| serde_json::from_value(serde_json::json!(r)).ok()),
                        debug_label: r.get(3)?,
                        expires_at_ms: r.get(4)?,
                        finalization_token: uuid::Uuid::new_v4().simple().to_string(),
                    },
                ))
            })?;
            for (target, lease) in rows.flatten() {
                map.insert(target, lease);
            }
        }
        Ok(Self { map: Mutex::new(map), store: Some(Mutex::new(conn)), reclaimed: Mutex::new(Vec::new()) })
    }

    fn persist(&self, target_id: &str, lease: Option<&Lease>) {
        let Some(store) = &self.store else { return };
        let conn = store.lock().unwrap_or_else(|p| p.into_inner());
        let r = match lease {
            Some(l) => conn.execute(
                "INSERT INTO tab_leases (target_id, agent_id, agent_role, debug_label, claimed_at_ms, expires_at_ms)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)
                 ON CONFLICT (target_id) DO UPDATE SET agent_id = ?2, agent_role = ?3, debug_label = ?4, expires_at_ms = ?6",
                rusqlite::params![
                    target_id,
                    l.owner,
                    l.role.and_then(|r| serde_json::to_value(r).ok()).and_then(|v| v.as_str().map(str::to_owned)),
                    l.debug_label,
                    now_ms(),
                    l.expires_at_ms
                ],
            ),
            None => conn.execute("DELETE FROM tab_leases WHERE target_id = ?1", [target_id]),
        };
        if let Err(e) = r {
            tracing::error!(error = %e, target_id, "cannot persist the tab lease");
        }
    }

    /// Takes the reclaims that happened since the last call.
    pub fn take_reclaims(&self) -> Vec<(String, String, String, String)> {
        std::mem::take(&mut *self.reclaimed.lock().unwrap_or_else(|p| p.into_inner()))
    }

    /// Every live lease: (tab, holder).
    pub fn all(&self) -> Vec<(String, String)> {
        let now = now_ms();
        let map = self.map.lock().unwrap_or_else(|p| p.into_inner());
        let mut out: Vec<_> = map
            .iter()
            .filter(|(_, l)| l.expires_at_ms > now)
            .map(|(t, l)| (t.clone(), l.owner.clone()))
            .collect();
        out.sort();
        out
    }

    /// Tabs `agent` holds a live lease on.
    pub fn held_by(&self, agent: &str) -> Vec<String> {
        let now = now_ms();
        let map = self.map.lock().unwrap_or_else(|p| p.into_inner());
        map.iter()
            .filter(|(_, l)| l.owner == agent && l.expires_at_ms > now)
            .map(|(t, _)| t.clone())
            .collect()
    }

    /// Claims or extends. Another agent's live lease is an error unless `reclaim_reason` is set.
    pub fn claim(
        &self,
        target_id: &str,
        agent: &str,
        role: Option<AgentRole>,
        ttl_ms: u32,
        label: Option<&str>,
        reclaim_reason: Option<&str>,
    ) -> Result<Lease, OwnerMismatch> {
        let now = now_ms();
        let mut map = self.map.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(existing) = map.get_mut(target_id).filter(|l| l.expires_at_ms > now) {
            if existing.owner == agent {
                existing.expires_at_ms = now + i64::from(ttl_ms);
                if let Some(l) = label.filter(|l| !l.is_empty()) {
                    existing.debug_label = Some(l.to_owned());
                }
                let lease = existing.clone();
                drop(map);
                self.persist(target_id, Some(&lease));
                return Ok(lease);
            }
            if reclaim_reason.is_none_or(str::is_empty) {
                return Err(OwnerMismatch {
                    target_id: target_id.to_owned(),
                    owner: existing.owner.clone(),
                    remaining_ms: existing.expires_at_ms - now,
                });
            }
            tracing::info!(target_id, from = %existing.owner, to = agent, "tab reclaimed");
            self.reclaimed.lock().unwrap_or_else(|p| p.into_inner()).push((
                target_id.to_owned(),
                existing.owner.clone(),
                agent.to_owned(),
                reclaim_reason.unwrap_or_default().to_owned(),
            ));
        }
        let lease = Lease {
            owner: agent.to_owned(),
            role,
            expires_at_ms: now + i64::from(ttl_ms),
            debug_label: label.filter(|l| !l.is_empty()).map(str::to_owned),
            finalization_token: uuid::Uuid::new_v4().simple().to_string(),
        };
        map.insert(target_id.to_owned(), lease.clone());
        drop(map);
        self.persist(target_id, Some(&lease));
        Ok(lease)
    }

    /// Releases the owner's lease. Returns whether a lease was released.
    pub fn release(&self, target_id: &str, agent: &str) -> Result<bool, OwnerMismatch> {
        self.check(target_id, agent)?;
        let removed = self.map.lock().unwrap_or_else(|p| p.into_inner()).remove(target_id).is_some();
        self.persist(target_id, None);
        Ok(removed)
    }

    /// Fails when another agent holds a live lease on the tab.
    pub fn check(&self, target_id: &str, agent: &str) -> Result<(), OwnerMismatch> {
        let now = now_ms();
        let map = self.map.lock().unwrap_or_else(|p| p.into_inner());
        match map.get(target_id) {
            Some(l) if l.expires_at_ms > now && l.owner != agent => Err(OwnerMismatch {
                target_id: target_id.to_owned(),
                owner: l.owner.clone(),
                remaining_ms: l.expires_at_ms - now,
            }),
            _ => Ok(()),
        }
    }

    /// The first mutating call on an unclaimed tab claims it for the caller with the default TTL;
    /// later ones keep the caller's lease at least that long. Use never shortens a longer lease
    /// the agent asked for (`ttlMs` up to 30 minutes).
    pub fn auto_claim(&self, target_id: &str, agent: &str) -> Result<(), OwnerMismatch> {
        if self
            .get(target_id)
            .is_some_and(|l| l.owner == agent && l.expires_at_ms - now_ms() >= i64::from(DEFAULT_TTL_MS))
        {
            return Ok(());
        }
        self.claim(target_id, agent, None, DEFAULT_TTL_MS, None, None).map(|_| ())
    }

    /// The live lease on a tab, if any.
    pub fn get(&self, target_id: &str) -> Option<Lease> {
        let now = now_ms();
        let map = self.map.lock().unwrap_or_else(|p| p.into_inner());
        map.get(target_id).filter(|l| l.expires_at_ms > now).cloned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn use_renews_a_default_lease_and_never_shortens_a_longer_one() {
        let leases = Leases::default();
        leases.claim("1", "a", None, 1_800_000, None, None).expect("claim");
        leases.auto_claim("1", "a").expect("use");
        let left = leases.get("1").expect("held").expires_at_ms - now_ms();
        assert!(left > 1_700_000, "{left} ms left after use");
        leases.claim("2", "a", None, 5_000, None, None).expect("claim");
        leases.auto_claim("2", "a").expect("use");
        let left = leases.get("2").expect("held").expires_at_ms - now_ms();
        assert!(left > 100_000, "{left} ms left after use");
        assert!(leases.auto_claim("2", "b").is_err(), "another agent is refused");
    }

    #[test]
    fn other_agent_is_refused_until_release() {
        let leases = Leases::default();
        leases.claim("1", "a", None, 10_000, Some("x"), None).expect("claim");
        let err = leases.check("1", "b").expect_err("b refused");
        assert_eq!(err.owner, "a");
        assert!(leases.claim("1", "b", None, 10_000, None, None).is_err());
        assert!(leases.release("1", "b").is_err(), "only the owner releases");
        assert!(leases.release("1", "a").expect("release"));
        leases.check("1", "b").expect("free now");
    }

    #[test]
    fn reclaim_with_reason_takes_over_and_reclaim_by_owner_extends() {
        let leases = Leases::default();
        let first = leases.claim("1", "a", None, 5_000, Some("one"), None).expect("claim");
        let again = leases.claim("1", "a", None, 60_000, Some(""), None).expect("extend");
        assert!(again.expires_at_ms > first.expires_at_ms);
        assert_eq!(again.debug_label.as_deref(), Some("one"), "empty label keeps the old one");
        let taken = leases.claim("1", "b", None, 5_000, None, Some("stuck")).expect("reclaim");
        assert_eq!(taken.owner, "b");
    }
}
