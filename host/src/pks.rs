//! PKS, per-site knowledge: how to operate a site, not what is on it (docs/pks.md). A
//! phenomenon is a recurring situation on a site (a consent banner, a sign-in wall, a modal),
//! recognised by a fingerprint, resolved by a playbook, and kept honest by its health.
//!
//! - [`model`]: fingerprints, playbooks, contexts; [`scope`]: which site a URL or name is;
//!   [`poison`]: what an upsert refuses; [`fragile`]: selectors that break on a rebuild;
//!   [`matching`]: how well a phenomenon fits the page, and its rank; [`levels`]: the rules of
//!   moving between learning levels.
//! - [`records`]: the tables; [`tools`]: `nova.pks_upsert`, `nova.pks_get`, `nova.pks_list`,
//!   `nova.pks_deprecate`, `nova.pks_match`; [`runtime`]: `nova.telemetry_report`,
//!   `nova.learn_promote`.

pub mod fragile;
pub mod levels;
pub mod matching;
pub mod model;
pub mod poison;
pub mod records;
pub mod runtime;
pub mod scope;
pub mod tools;

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
}

impl Pks {
    /// Opens the PKS tables.
    pub fn open(db: &Path) -> Result<Self, StoreError> {
        Ok(Self { conn: Mutex::new(store::open(db)?) })
    }

    /// Runs `f` on the connection.
    pub fn with<T>(&self, f: impl FnOnce(&mut Connection) -> rusqlite::Result<T>) -> Result<T, CallError> {
        let mut c = self.conn.lock().unwrap_or_else(|p| p.into_inner());
        f(&mut c).map_err(|e| CallError::Store(e.to_string()))
    }
}
