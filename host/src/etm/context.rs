//! The narrow context of the task tools (profiles, instances, guidance).

/// What the task tools reach.
pub struct Tasks<'h> {
    /// The tab a call names.
    pub tabs: crate::tabs::Tabs<'h>,
    /// The extension connection (fetching a site's URLs).
    pub bridge: &'h crate::bridge::Bridge,
    /// Task memory.
    pub etm: &'h crate::etm::Etm,
    /// TOB scopes.
    pub scopes: &'h crate::tob::scope::Scopes,
    /// The data dir.
    pub data: &'h crate::paths::DataDir,
    /// The observation recorder.
    pub recorder: &'h crate::tob::Recorder,
    /// Tab leases.
    pub leases: &'h crate::lease::Leases,
    /// Guarded transitions.
    pub cls: &'h crate::cls::Cls,
    /// The learning journal (a Learn Mode task ends with the run on its tab).
    pub lcj: &'h crate::lcj::Journal,
}

impl<'h> From<&'h crate::hub::Hub> for Tasks<'h> {
    fn from(hub: &'h crate::hub::Hub) -> Self {
        Self {
            tabs: hub.tabs(),
            bridge: &hub.bridge,
            etm: &hub.etm,
            scopes: &hub.scopes,
            data: &hub.data,
            recorder: &hub.recorder,
            leases: &hub.leases,
            cls: &hub.cls,
            lcj: &hub.lcj,
        }
    }
}
