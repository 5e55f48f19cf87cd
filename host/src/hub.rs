//! The hub's state: what every tool call can reach (the browser connection, the store's
//! subsystems, the leases, the person's controls). One `Hub` lives as long as the hub process;
//! handlers reach it through narrow contexts built from it (`From<&Hub>`), and `Hub` has methods
//! only here (docs/architecture.md, "Imports point one way").

use std::sync::Arc;

use crate::bridge::Bridge;
use crate::lease::Leases;
use crate::paths::DataDir;
use crate::time::now_ms;
use crate::tob::Recorder;

/// Everything a tool call needs: the browser, the store, the leases.
pub struct Hub {
    /// The data dir.
    pub data: DataDir,
    /// The extension connection.
    pub bridge: Arc<Bridge>,
    /// The observation recorder.
    pub recorder: Recorder,
    /// Tab leases.
    pub leases: Leases,
    /// Guarded transitions.
    pub cls: crate::cls::Cls,
    /// Task memory (ETM / TUC).
    pub etm: crate::etm::Etm,
    /// Operational knowledge: observations and current facts of tabs and services.
    pub ok: crate::ok::Knowledge,
    /// Per-site knowledge: phenomena, playbooks, health.
    pub pks: crate::pks::Pks,
    /// The learning journal: tool events, candidates, observations, level transitions.
    pub lcj: crate::lcj::Journal,
    /// TOB scopes.
    pub scopes: crate::tob::scope::Scopes,
    /// The person's controls (STOP, handover notes).
    pub control: crate::aag::control::Control,
    /// Connected sessions and the activity feed (the popup).
    pub presence: crate::aag::presence::Presence,
    /// Permission prompts waiting for the person.
    pub prompts: crate::aag::prompt::Prompts,
    /// Sessions' gate state kept across hub restarts.
    pub resumes: crate::aag::resume::Resumes,
    /// Pages waiting to be fetched once over HTTP (the activity report).
    pub pages: crate::pages::OneTimePages,
}

impl Hub {
    /// Opens everything a hub keeps in the data dir around a bridge.
    pub fn open(data: DataDir, bridge: Arc<Bridge>) -> Result<Self, crate::store::StoreError> {
        let db = data.db();
        match crate::tob::retention::prune(&crate::store::open(&db)?, now_ms()) {
            Ok(0) => {}
            Ok(n) => tracing::info!(rows = n, "expired observation rows pruned"),
            Err(e) => tracing::warn!(error = %e, "observation retention failed"),
        }
        Ok(Self {
            recorder: Recorder::start(&db)?,
            leases: Leases::open(&db)?,
            cls: crate::cls::Cls::open(&db)?,
            etm: crate::etm::Etm::open(&db)?,
            ok: crate::ok::Knowledge::open(&db)?,
            pks: crate::pks::Pks::open(&db)?,
            lcj: crate::lcj::Journal::open(&db)?,
            scopes: crate::tob::scope::Scopes::open(&db)?,
            control: crate::aag::control::Control::open(&db)?,
            presence: crate::aag::presence::Presence::default(),
            prompts: crate::aag::prompt::Prompts::default(),
            resumes: crate::aag::resume::Resumes::open(&db)?,
            pages: crate::pages::OneTimePages::default(),
            data,
            bridge,
        })
    }
}

impl Hub {
    /// The tab resolver over this hub's browser and leases.
    pub fn tabs(&self) -> crate::tabs::Tabs<'_> {
        crate::tabs::Tabs { bridge: &self.bridge, leases: &self.leases }
    }
}
