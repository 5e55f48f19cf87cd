//! Setup tools of the bootstrap gate: `nova.tools_bundle` and `nova.get_instructions`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::block::BUNDLES;
use crate::call::{CallError, CallRecord, ToolReply};
use crate::registry::{self, ToolDef};

/// What the setup tools reach.
pub struct Setup<'h> {
    /// The extension connection.
    pub bridge: &'h crate::bridge::Bridge,
    /// Task memory (whether an exhaustive task is running).
    pub etm: &'h crate::etm::Etm,
    /// The tabs and their claims (Learn Mode's tasks).
    pub tabs: crate::tabs::Tabs<'h>,
    /// The learning journal (Learn Mode's progress).
    pub lcj: &'h crate::lcj::Journal,
}

impl<'h> From<&'h crate::hub::Hub> for Setup<'h> {
    fn from(hub: &'h crate::hub::Hub) -> Self {
        Self { bridge: &hub.bridge, etm: &hub.etm, tabs: hub.tabs(), lcj: &hub.lcj }
    }
}

pub use crate::registry::Bundle;

crate::tool_args! {
    /// `nova.tools_bundle`.
    #[derive(Debug, Clone, Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields, rename_all = "camelCase")]
    pub struct BundleArgs [agent] {
        /// The bundle to load.
        pub bundle: Bundle,
    }
}

/// `nova.get_instructions` modes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum InstructionsMode {
    /// How to work with Nova.
    #[default]
    Quickstart,
    /// Task runs, evidence and URL coverage.
    Task,
    /// Learning (arrives with PKS / LCJ).
    Learn,
}

crate::tool_args! {
    /// `nova.get_instructions`.
    #[derive(Debug, Clone, Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields, rename_all = "camelCase")]
    pub struct InstructionsArgs [agent] {
        /// quickstart (default), task or learn.
        #[serde(default)]
        pub mode: InstructionsMode,
        /// Learn Mode: the tab `targetId` names (`target`, default) or every tab the agent holds
        /// (`allOwnerClaims`).
        #[serde(default)]
        pub scope: crate::alp::learn_mode::LearnScope,
        /// Learn Mode: the tab (default: the active one).
        #[serde(default)]
        pub target_id: Option<String>,
        /// full (default) or compact.
        #[serde(default)]
        pub detail: crate::alp::learn_mode::Detail,
        /// Learn Mode: the platform's site (default: the tab's). `scopeDomain` and `domainScope`
        /// are the same; all given must agree.
        #[serde(default)]
        pub domain: Option<String>,
        /// Same as `domain`.
        #[serde(default)]
        pub scope_domain: Option<String>,
        /// Same as `domain`.
        #[serde(default)]
        pub domain_scope: Option<String>,
        /// Learn Mode: what the exploration is about (at most 20, each 1 to 100 characters).
        #[serde(default)]
        pub task_keywords: Vec<String>,
    }
}

const QUICKSTART: &str = "Nova drives the person's own browser and proves what your actions did.
1. Load a bundle: nova.tools_bundle {bundle: browser_automation} (task work: task_memory).
2. Look before acting: nova.perceive lists the page's elements with refs (e12) usable as selectors.
   After every navigation or tab change, perceive again: clicks and typing on a page you have not
   perceived are blocked (safety.perceive_first).
3. Act with nova.click_selector / nova.type_selector. State-changing actions (send, submit, login,
   pay, delete) need a transitionContract or a guarded_* tool; the result says verified_success,
   verified_fail or indeterminate with retry advice. Never repeat a non-idempotent action blindly.
4. Sign-in, payment and identity overlays are the person's (perceive: identityOverlayWarning);
   ask them, then perceive again: until then clicks and typing are blocked (safety.identity_overlay).
   Native dialogs and autofill popups are outside the page: perceive and action results say so.
5. The person can press STOP at any time (safety.emergency_stop): wait until they release it.
6. Do not send the same call again and again to a page that did not change (loop.detected): a
   change of the page, or other arguments, is progress.
7. Blocks come with _meta[\"io.nova/aag\"]: gateId, reasonCode, details.clearWith (calls that
   clear it) and retryAfterMs (when waiting frees it).";

const TASK: &str =
    "Task runs: nova.task_search / task_match first; nova.task_instance_create starts a run (the tab's calls
become its evidence); report units with nova.task_instance_progress (expectedInstanceRev + a new
clientEventId each time); nova.task_instance_complete is judged against what Nova observed: a
claim without visits is refused with reason=evidence_gap and names the units to revisit.";

const COVERAGE_CONTRACT: &str =
    "Coverage Scan Contract: this exhaustive task checks a URL unit only on a trusted registered scan.
On each page: nova.coverage_scan {scanId} (nova_i18n_spellcheck_v1 for text and spelling reviews,
nova_full_page_text_v1 otherwise, nova_structured_dom_v1 for route inventories). Untrusted results
(coverageEvidence.trust.trusted=false) do not count; exclude unreachable URLs with a reason.";

crate::tool! {
    /// `nova.get_instructions` in the tool registry.
    pub static GET_INSTRUCTIONS = ToolDef::new(
        "nova.get_instructions",
        "How to work with Nova: the tool contract, gates and recovery (mode quickstart | task | learn).",
        registry::schema::<InstructionsArgs>,
        crate::handler!(Setup::get_instructions),
    )
    .bundles(&[Bundle::SystemTools])
    .read_only()
    .setup();
}

crate::tool! {
    /// `nova.tools_bundle` in the tool registry.
    pub static TOOLS_BUNDLE = ToolDef::new(
        "nova.tools_bundle",
        "Load a capability bundle (browser_automation, task_memory, page_read_debug, pks_learning, \
         system_tools). Work calls are blocked until a bundle is loaded (setup.bootstrap_required).",
        registry::schema::<BundleArgs>,
        crate::handler!(Setup::tools_bundle),
    )
    .bundles(&[Bundle::SystemTools])
    .setup();
}

crate::tool_args! {
    /// `nova.version`.
    #[derive(Debug, Clone, Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields, rename_all = "camelCase")]
    pub struct VersionArgs [agent] {
    }
}

crate::tool! {
    /// `nova.version` in the tool registry.
    pub static VERSION = ToolDef::new(
        "nova.version",
        "The host's version and build, the evidence store's schema version, and the connected extension.",
        registry::schema::<VersionArgs>,
        crate::handler!(Setup::version),
    )
    .bundles(&[Bundle::SystemTools])
    .read_only();
}

/// Every tool name the instructions mention (checked against the registry).
pub fn mentioned_tools() -> Vec<&'static str> {
    let mut out = Vec::new();
    for text in [QUICKSTART, TASK, COVERAGE_CONTRACT] {
        for (i, _) in text.match_indices("nova.") {
            let rest = &text[i..];
            let end = rest
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '.'))
                .unwrap_or(rest.len());
            out.push(rest[..end].trim_end_matches('.'));
        }
    }
    out
}

impl Setup<'_> {
    /// `nova.version`.
    pub async fn version(&self, rec: &mut CallRecord, _a: VersionArgs) -> Result<ToolReply, CallError> {
        rec.executed();
        let hello = self.bridge.state().hello;
        Ok(ToolReply::ok(json!({
            "ok": true, "status": "ok",
            "version": env!("CARGO_PKG_VERSION"),
            "build": {
                "profile": if cfg!(debug_assertions) { "debug" } else { "release" },
                "os": std::env::consts::OS, "arch": std::env::consts::ARCH,
            },
            "storeSchemaVersion": crate::store::SCHEMA_VERSION,
            "extension": hello.map(|h| json!({"version": h.extension_version, "browser": h.browser})),
        })))
    }

    /// `nova.tools_bundle`.
    pub async fn tools_bundle(&self, rec: &mut CallRecord, a: BundleArgs) -> Result<ToolReply, CallError> {
        rec.executed();
        let loaded: Vec<String> = {
            let state = crate::aag::state_of(&rec.session);
            let mut s = state.lock().unwrap_or_else(|p| p.into_inner());
            s.bundles.insert(a.bundle.as_str().to_owned());
            s.bundles.iter().cloned().collect()
        };
        let tools = a.bundle.tools();
        let note = if tools.is_empty() {
            Some("This bundle's tools arrive with the learning features.")
        } else {
            None
        };
        Ok(ToolReply::ok(json!({
            "ok": true, "status": "ok", "bundle": a.bundle.as_str(), "loadedBundles": loaded,
            "tools": tools, "knownBundles": BUNDLES, "note": note,
        })))
    }

    /// `nova.get_instructions`.
    pub async fn get_instructions(
        &self,
        rec: &mut CallRecord,
        a: InstructionsArgs,
    ) -> Result<ToolReply, CallError> {
        rec.executed();
        let agent = rec.obs.agent_id.clone();
        let mut text = match a.mode {
            InstructionsMode::Quickstart => QUICKSTART.to_owned(),
            InstructionsMode::Task => format!("{QUICKSTART}\n\n{TASK}"),
            InstructionsMode::Learn => {
                format!("{QUICKSTART}\n\n{}", crate::alp::learn_mode::guidance(a.detail))
            }
        };
        let learn = match a.mode {
            InstructionsMode::Learn => Some(self.learn_mode(&agent, &a).await?),
            _ => None,
        };
        let exhaustive = self
            .etm
            .with(|c| {
                c.query_row(
                    "SELECT EXISTS (SELECT 1 FROM task_instances WHERE agent_id = ?1 AND status IN ('pending', 'active')
                       AND coverage_schema_version >= 2 AND json_extract(effective_context_json, '$.completionCondition.coverageMode') = 'exhaustive')",
                    [&agent],
                    |r| r.get::<_, bool>(0),
                )
            })
            .unwrap_or(false);
        if exhaustive {
            text.push_str("\n\n");
            text.push_str(COVERAGE_CONTRACT);
        }
        let mut body = json!({
            "ok": true, "status": "ok", "mode": a.mode, "instructions": text, "knownBundles": BUNDLES,
            "coverageScanContract": exhaustive,
        });
        if let Some(learn) = learn {
            body["deliverable"] = json!(crate::alp::learn_mode::DELIVERABLE);
            body["learnMode"] = learn;
        }
        Ok(ToolReply::ok(body).with_text(text))
    }

    /// Learn Mode: the tabs it covers, each a learn task, and their progress.
    async fn learn_mode(&self, agent: &str, a: &InstructionsArgs) -> Result<serde_json::Value, CallError> {
        use crate::alp::learn_mode::LearnScope;
        let mut domain = None;
        for (name, v) in
            [("domain", &a.domain), ("scopeDomain", &a.scope_domain), ("domainScope", &a.domain_scope)]
        {
            let Some(v) = v else { continue };
            let site = crate::pks::scope::normalize(v).map_err(|_| {
                CallError::invalid(name, format!("`{name}` must name a site (example.org), got {v:?}"))
            })?;
            if domain.as_ref().is_some_and(|d| *d != site) {
                return Err(CallError::invalid(
                    name,
                    format!("`{name}` disagrees with the other domain argument"),
                ));
            }
            domain = Some(site);
        }
        if a.task_keywords.len() > 20 {
            return Err(CallError::invalid(
                "taskKeywords",
                format!("`taskKeywords` holds at most 20, got {}", a.task_keywords.len()),
            ));
        }
        if let Some(i) = a.task_keywords.iter().position(|k| k.trim().is_empty() || k.chars().count() > 100) {
            return Err(CallError::invalid(
                &format!("taskKeywords[{i}]"),
                format!("`taskKeywords[{i}]` must be 1 to 100 characters"),
            ));
        }
        let ids: Vec<String> = match a.scope {
            LearnScope::Target => vec![a.target_id.clone().unwrap_or_else(|| "active".to_owned())],
            LearnScope::AllOwnerClaims => self.tabs.leases.held_by(agent),
        };
        let mut tabs = Vec::new();
        for id in ids {
            // A tab that is gone is skipped: its progress cannot grow.
            if let Ok(tab) = self.tabs.resolve(&id).await {
                let site = domain
                    .clone()
                    .or_else(|| crate::pks::scope::normalize(&tab.url).ok())
                    .unwrap_or_default();
                tabs.push((tab.target_id, site));
            }
        }
        crate::alp::learn_mode::start(self.lcj, agent, &tabs, &a.task_keywords).await
    }
}
