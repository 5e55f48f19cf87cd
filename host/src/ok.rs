//! OK, operational knowledge: what Nova believes is true right now in each tab and service
//! (signed in, which model, which plan, which kind of page), how sure it is, and when it must
//! look again (docs/ok.md).
//!
//! Agents report what they see with `nova.ok_observe`; Nova reads the same signals itself after
//! every `nova.perceive` (system observations). Each observation is kept (append-only); the
//! rules turn them into current facts with history. `okHints` on `nova.perceive` and
//! `nova.navigate` say when a fact is missing, old or tied to another URL. A fact orients, it
//! never authorises: the guarded macros confirm the page itself.
//!
//! - [`signals`]: the signal vocabulary and key grammar; [`rules`]: confidence and
//!   supersedence; [`service`]: which service a URL belongs to; [`secret`]: claims refused as
//!   secrets (freshness is judged by `crate::clock`).
//! - [`facts`]: the tables (observations, facts, scopes); [`observe`]: a batch of claims applied
//!   to them; [`hints`]: `okHints`; [`page`]: what each perceive and navigation feeds in and
//!   gets back; [`stats`]: OK's counts in `nova.memory_stats`.
//! - `nova.ok_observe` is in [`tools`]; `nova.ok_signal_schema`, the keys it takes, in
//!   [`schema`].

pub mod facts;
pub mod hints;
pub mod observe;
pub mod page;
pub mod rules;
pub mod schema;
pub mod secret;
pub mod service;
pub mod signals;
pub mod stats;
pub mod tools;

use std::path::Path;
use std::sync::Mutex;

use rusqlite::Connection;

use crate::call::CallError;
use crate::store::{self, StoreError};

/// OK state of a hub: its own connection to the store.
pub struct Knowledge {
    conn: Mutex<Connection>,
}

impl Knowledge {
    /// Opens the OK tables.
    pub fn open(db: &Path) -> Result<Self, StoreError> {
        Ok(Self { conn: Mutex::new(store::open(db)?) })
    }

    /// Runs `f` on the connection.
    pub fn with<T>(&self, f: impl FnOnce(&mut Connection) -> rusqlite::Result<T>) -> Result<T, CallError> {
        let mut c = self.conn.lock().unwrap_or_else(|p| p.into_inner());
        f(&mut c).map_err(|e| CallError::Store(e.to_string()))
    }
}

/// Where an observation is made: the tab, the URL it shows and the service that URL belongs to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Place {
    /// The tab.
    pub target: String,
    /// The URL it shows.
    pub url: String,
    /// Its service (`None` off the web).
    pub service: Option<String>,
}

impl Place {
    /// The scope of what this tab shows of its service: `binding:{tab}@{service}`, or
    /// `target:{tab}` off the web.
    pub fn binding(&self) -> String {
        match &self.service {
            Some(s) => format!("binding:{}@{s}", self.target),
            None => format!("target:{}", self.target),
        }
    }

    /// The scope of what holds for the service in every tab: `service:{key}`, or the tab's own
    /// scope off the web.
    pub fn service_scope(&self) -> String {
        match &self.service {
            Some(s) => format!("service:{s}"),
            None => format!("target:{}", self.target),
        }
    }
}

/// The freshness window (ms), from the person's settings (`okFreshnessWindowMs`).
pub fn window_ms(data: &crate::paths::DataDir) -> i64 {
    i64::try_from(crate::settings::Settings::load(data).ok_freshness_window_ms).unwrap_or(i64::MAX)
}

/// The kind of a scope reference (`binding`, `service`, `account`, `target`).
pub fn scope_kind(scope_ref: &str) -> &str {
    scope_ref.split(':').next().unwrap_or_default()
}
