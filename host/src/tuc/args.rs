//! Arguments of the TUC tools and of the URL-unit source a task run is created with
//! (docs/tasks.md, "Arguments"). Every type rejects unknown fields.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

fn yes() -> bool {
    true
}

/// `unitSource.kind`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum UnitSourceKind {
    /// The site's sitemap and the links of its start page.
    SiteUrls,
    /// A breadth-first crawl of the site.
    Crawler,
    /// `explicitUrls`.
    Explicit,
}

/// `unitSource`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct UnitSource {
    /// site_urls | crawler | explicit.
    pub kind: UnitSourceKind,
    /// Required for site_urls and crawler (host, host:port or an origin URL).
    #[serde(default)]
    pub scope_domain: Option<String>,
    /// Required for explicit.
    #[serde(default)]
    pub explicit_urls: Option<Vec<String>>,
    /// Freeze discovery once the units are written.
    #[serde(default)]
    pub freeze_after_populate: bool,
}

crate::tool_args! {
    /// `nova.task_instance_reconcile_coverage`.
    #[derive(Debug, Clone, Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields, rename_all = "camelCase")]
    pub struct ReconcileArgs [agent] {
        /// The instance.
        pub instance_id: String,
        /// Propose only (default true); false applies (needs the user's setting).
        #[serde(default = "yes")]
        pub dry_run: bool,
        /// Observations after this (ISO 8601 or epoch ms) are ignored; default now.
        #[serde(default)]
        pub observation_cutoff: Option<Value>,
    }
}
