//! PKS, per-site knowledge: how to operate a site, not what is on it (docs/pks.md). A
//! phenomenon is a recurring situation on a site (a consent banner, a sign-in wall, a modal),
//! recognised by a fingerprint, resolved by a playbook, and kept honest by its health.
//!
//! - [`model`]: fingerprints, playbooks, contexts; [`scope`]: which site a URL or name is;
//!   [`poison`]: what an upsert refuses; [`fragile`]: selectors that break on a rebuild;
//!   [`matching`]: how well a phenomenon fits the page, and its rank. Learning levels are
//!   stored here and moved by `crate::alp` on the journal's evidence.
//! - [`drift`]: how far a site moved from an entry as first stored, and the gate on it;
//!   [`probes`]: what of a fingerprint the page can be asked about; [`platforms`]: the consent
//!   platforms Nova knows.
//! - [`edits`]: `nova.pks_patch`, `nova.pks_upsert_hint`;
//! - [`apply`]: `nova.phenomenon_apply`; [`seeding`]: `nova.pks_platform_seed`,
//!   `nova.pks_platform_get`, `nova.pks_platform_list`; [`revalidate`]: `nova.revalidate`.
//! - [`siblings`]: sites of one registrable domain sharing entries.
//! - [`summary`]: how an entry is shown; [`delivery`]: what `nova.perceive` and `nova.navigate`
//!   carry of a site's knowledge.
//! - [`records`]: the tables; [`tools`]: `nova.pks_upsert`, `nova.pks_get`, `nova.pks_list`,
//!   `nova.pks_deprecate`, `nova.pks_match`; [`runtime`]: `nova.telemetry_report`.

pub mod apply;
pub mod delivery;
pub mod drift;
pub mod edits;
pub mod fragile;
pub mod matching;
pub mod model;
pub mod platforms;
pub mod poison;
pub mod probes;
pub mod records;
pub mod revalidate;
pub mod runtime;
pub mod scope;
pub mod seeding;
pub mod siblings;
pub mod summary;
pub mod tools;

use std::collections::HashMap;
use std::path::Path;
use std::sync::Mutex;

use rusqlite::Connection;

use crate::call::CallError;
use crate::store::{self, StoreError};

/// Phenomena one site may hold, at every learning level.
pub const MAX_PER_DOMAIN: usize = 200;

/// PKS state of a hub: its own connection to the store.
pub struct Pks {
    conn: Mutex<Connection>,
    /// `nova.revalidate`'s checks per site this hour.
    pub budget: Budget,
}

/// Revalidation checks one site may have per hour.
pub const BUDGET_PER_HOUR: u32 = 30;

/// Checks spent per site in the current hour.
#[derive(Default)]
pub struct Budget {
    spent: Mutex<HashMap<String, (i64, u32)>>,
}

impl Budget {
    /// Takes up to `want` checks for `scope` at `now`; returns how many were granted and how many
    /// remain.
    pub fn take(&self, scope: &str, want: u32, now: i64) -> (u32, u32) {
        let mut spent = self.spent.lock().unwrap_or_else(|p| p.into_inner());
        let hour = now / 3_600_000;
        let slot = spent.entry(scope.to_owned()).or_insert((hour, 0));
        if slot.0 != hour {
            *slot = (hour, 0);
        }
        let granted = want.min(BUDGET_PER_HOUR - slot.1);
        slot.1 += granted;
        (granted, BUDGET_PER_HOUR - slot.1)
    }
}

impl Pks {
    /// Opens the PKS tables.
    pub fn open(db: &Path) -> Result<Self, StoreError> {
        Ok(Self { conn: Mutex::new(store::open(db)?), budget: Budget::default() })
    }

    /// Runs `f` on the connection.
    pub fn with<T>(&self, f: impl FnOnce(&mut Connection) -> rusqlite::Result<T>) -> Result<T, CallError> {
        let mut c = self.conn.lock().unwrap_or_else(|p| p.into_inner());
        f(&mut c).map_err(|e| CallError::Store(e.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_revalidation_budget_is_per_site_and_hour() {
        let b = Budget::default();
        assert_eq!(b.take("a", 5, 0), (5, BUDGET_PER_HOUR - 5));
        assert_eq!(b.take("a", BUDGET_PER_HOUR, 10), (BUDGET_PER_HOUR - 5, 0));
        assert_eq!(b.take("b", 1, 10), (1, BUDGET_PER_HOUR - 1));
        assert_eq!(b.take("a", 1, 3_600_000), (1, BUDGET_PER_HOUR - 1), "a new hour");
    }
}
