//! AAG, agent awareness gates (docs/gates.md): a pipeline that runs before every tool call. Each gate
//! has an id, a default mode (off / warn / shadow_block / block, overridable per gate in
//! `settings.json` `gateModes`) and a clear condition. A block is not executed: the reply carries
//! `_meta["io.nova/aag"]` (gateId, gateMode, status, stage, retryable, retryAfterMs, reasonCode,
//! details, forceBypassAvailable, knownBundles, preferredBundle) and the call is recorded as
//! `blocked_preflight`. Warnings ride along in `_aagGates`.
//!
//! - [`pipeline`]: the gates, one function each in table order, and the session bookkeeping;
//!   [`block`]: how a block reads.
//! - [`loops`]: `loop.detected`, the same call on an unchanged page.
//! - [`facts`]: what the hub tells the pipeline (browser, store, settings) and the page probe.
//! - [`session`]: a session's gate state; [`resume`]: its durable part kept across hub restarts.
//! - [`control`]: the person's STOP, handover notes, overlays; [`prompt`]: permission prompts
//!   waiting for the person, [`permission`]: the tool that asks; [`presence`]: who is connected
//!   and the activity feed; [`ui`]: the popup and options requests; [`screenshot`]: the
//!   screenshot budget; [`tools`]: `nova.tools_bundle`, `nova.get_instructions`, `nova.version`.

pub mod block;
pub mod control;
pub mod facts;
pub mod loops;
pub mod permission;
pub mod pipeline;
pub mod presence;
pub mod prompt;
pub mod resume;
pub mod screenshot;
pub mod session;
pub mod tools;
pub mod ui;

use serde_json::{Map, Value};

use crate::settings::{GateMode, Settings};

pub use session::{SessionState, SharedState, state_of};

/// Gate ids (docs/gates.md, the gate table).
pub mod gate {
    /// Load a tool bundle before work.
    pub const BOOTSTRAP: &str = "setup.bootstrap_required";
    /// Perceive before interacting after a navigation or target change.
    pub const PERCEIVE_FIRST: &str = "safety.perceive_first";
    /// The person pressed STOP.
    pub const EMERGENCY_STOP: &str = "safety.emergency_stop";
    /// Little free disk.
    pub const DISK_SPACE_LOW: &str = "safety.disk_space_low";
    /// The evidence store refuses writes (disk full, read-only, I/O error).
    pub const STORE_UNWRITABLE: &str = "safety.store_unwritable";
    /// Screenshot size budget.
    pub const SCREENSHOT_BUDGET: &str = "aag.screenshot_budget";
    /// Look for a matching task before starting work.
    pub const TASK_DISCOVERY: &str = "etm.task_discovery_recommended";
    /// An active task run is being ignored.
    pub const ACTIVE_INSTANCE: &str = "etm.active_instance_context";
    /// The active tab changed since the agent last looked.
    pub const TAB_AWARENESS: &str = "safety.tab_awareness";
    /// Another agent took the tab and left a message.
    pub const RECLAIM: &str = "claim.reclaim_notification";
    /// The domain or action group is blocked by the person's policy.
    pub const DOMAIN_POLICY: &str = "domain.policy.blocked";
    /// Opening new tabs is disabled.
    pub const NEW_TABS: &str = "agent.new_tabs_disabled";
    /// Moving work to another tab is disabled.
    pub const CROSS_TAB: &str = "agent.cross_tab_navigation_disabled";
    /// The same call repeats.
    pub const LOOP: &str = "loop.detected";
    /// An identity, SSO, payment or consent overlay is showing.
    pub const IDENTITY_OVERLAY: &str = "safety.identity_overlay";
    /// A semantic learning opportunity on the site stays unresolved.
    pub const SEMANTIC_LEARNING: &str = "pks.semantic_learning";
    /// A hard navigation would lose a fragile single-page app's state known from PKS.
    pub const SPA_NAVIGATION: &str = "pks.spa_navigation_block";
}

/// One row of the gate table: id, default mode, whether a force bypass exists, threshold and
/// clear condition (also rendered into docs/gates.md).
pub struct GateSpec {
    /// Id.
    pub id: &'static str,
    /// Default mode.
    pub default: GateMode,
    /// Whether `_meta.forceBypass` can pass it.
    pub bypass: bool,
    /// What triggers it.
    pub trigger: &'static str,
    /// How to clear it.
    pub clear: &'static str,
}

/// Every gate, in the order the pipeline runs them ([`pipeline::PIPELINE`]; the screenshot
/// budget, judged once a capture is taken, comes last).
pub const GATES: &[GateSpec] = &[
    GateSpec {
        id: gate::EMERGENCY_STOP,
        default: GateMode::Block,
        bypass: false,
        trigger: "the person pressed STOP (popup) or ran `nova stop`",
        clear: "the person releases it (popup or `nova resume`)",
    },
    GateSpec {
        id: gate::DISK_SPACE_LOW,
        default: GateMode::Block,
        bypass: false,
        trigger: "less than 500 MB free at the data dir (`diskSpaceLowMb`; 0 turns it off)",
        clear: "free space above the threshold",
    },
    GateSpec {
        id: gate::STORE_UNWRITABLE,
        default: GateMode::Block,
        bypass: false,
        trigger: "the evidence store refused a write (disk full, read-only, I/O error)",
        clear: "the store takes writes again: Nova writes the kept rows every second by itself",
    },
    GateSpec {
        id: gate::BOOTSTRAP,
        default: GateMode::Block,
        bypass: true,
        trigger: "first work call of a session before any `nova.tools_bundle`",
        clear: "call `nova.tools_bundle` (`nova.get_instructions` explains which bundle)",
    },
    GateSpec {
        id: gate::DOMAIN_POLICY,
        default: GateMode::Block,
        bypass: false,
        trigger: "the page's domain is blocked for the call's action group (`domainPolicy`)",
        clear: "the person changes the policy",
    },
    GateSpec {
        id: gate::NEW_TABS,
        default: GateMode::Block,
        bypass: false,
        trigger: "`newTab: true` while `agentNewTabsDisabled`",
        clear: "navigate in the current tab, or the person allows new tabs",
    },
    GateSpec {
        id: gate::CROSS_TAB,
        default: GateMode::Block,
        bypass: false,
        trigger: "navigating a tab other than the one the agent holds while `agentCrossTabNavigationDisabled`",
        clear: "work in the claimed tab",
    },
    GateSpec {
        id: gate::RECLAIM,
        default: GateMode::Block,
        bypass: false,
        trigger: "the next call on a tab another agent reclaimed from this one",
        clear: "consumed by the block itself (once)",
    },
    GateSpec {
        id: gate::PERCEIVE_FIRST,
        default: GateMode::Block,
        bypass: true,
        trigger: "click / type / upload / guarded action on a tab not perceived since its last navigation",
        clear: "`nova.perceive`, `nova.read_text` or `nova.coverage_scan` on that tab",
    },
    GateSpec {
        id: gate::IDENTITY_OVERLAY,
        default: GateMode::Block,
        bypass: true,
        trigger: "click / type / upload / guarded action while the last perceive of the tab saw a sign-in (SSO), payment or modal sign-in overlay",
        clear: "a perceive that no longer sees it (the person completed or closed it), a new navigation, or the person approving `nova.permission_prompt`",
    },
    GateSpec {
        id: gate::LOOP,
        default: GateMode::Block,
        bypass: true,
        trigger: "the same tool with the same arguments 5 times within 60 s on an unchanged page (same tab, URL, navigation and document revision) or, off a page, with no write in between",
        clear: "a change of the page (navigation, content, form values), other arguments, or waiting `retryAfterMs` until the oldest repeat leaves the window",
    },
    GateSpec {
        id: gate::TASK_DISCOVERY,
        default: GateMode::Warn,
        bypass: true,
        trigger: "first work call while task profiles exist and no task lookup happened",
        clear: "`nova.task_search`, `task_match`, `task_instance_create` or `task_instance_get`",
    },
    GateSpec {
        id: gate::ACTIVE_INSTANCE,
        default: GateMode::Warn,
        bypass: true,
        trigger: "12 work calls without touching the agent's active task run",
        clear: "any `nova.task_instance_*` call",
    },
    GateSpec {
        id: gate::TAB_AWARENESS,
        default: GateMode::Warn,
        bypass: true,
        trigger: "`targetId: active` while the active tab changed since the agent last looked",
        clear: "`nova.perceive`, or an explicit `targetId`",
    },
    GateSpec {
        id: gate::SEMANTIC_LEARNING,
        default: GateMode::Warn,
        bypass: true,
        trigger: "a page call on a site whose semantic learning opportunity (`pksSemanticLearning`) stayed unresolved for 3 calls (`warned`; `strict` after 6)",
        clear: "`nova.learn_resolve_opportunity` with a verdict, or a matching `nova.pks_upsert`",
    },
    GateSpec {
        id: gate::SPA_NAVIGATION,
        default: GateMode::Block,
        bypass: true,
        trigger: "`nova.navigate` in the same tab away from a route PKS knows as a fragile single-page app (`context.domainCapabilities.spaNavigation`)",
        clear: "`nova.route` (in-app navigation keeps the app's state), `nova.navigate` with `newTab: true`, or the explicit override `_meta.forceBypass: true`",
    },
    GateSpec {
        id: gate::SCREENSHOT_BUDGET,
        default: GateMode::Block,
        bypass: true,
        trigger: "inline capture above 200 KB (warning); above 1 MB, 16 MP or 10,000 px on a side (over budget: blocked when inline was asked for); above 50 MB or 50 MP (absolute, in every mode)",
        clear: "`responseMode: auto` / `reference` / `thumbnail+reference`, or `allowLarge` below the absolute limits",
    },
];

/// The mode of a gate after `gateModes` in settings.
pub fn mode_of(settings: &Settings, id: &str) -> GateMode {
    settings
        .gate_modes
        .get(id)
        .copied()
        .or_else(|| GATES.iter().find(|g| g.id == id).map(|g| g.default))
        .unwrap_or(GateMode::Warn)
}

/// Whether the call's arguments ask to pass bypassable gates (`"_meta": {"forceBypass": true}`).
pub fn force_bypass(args: &Map<String, Value>) -> bool {
    args.get("_meta").and_then(|m| m.get("forceBypass")).and_then(Value::as_bool).unwrap_or(false)
}

/// The `_aagGates` key of a gate's warning.
pub(crate) fn warning_key(id: &str) -> &'static str {
    match id {
        gate::BOOTSTRAP => "bootstrap",
        gate::PERCEIVE_FIRST => "perceiveFirst",
        gate::TASK_DISCOVERY => "taskDiscoveryRecommended",
        gate::ACTIVE_INSTANCE => "activeInstanceContext",
        gate::TAB_AWARENESS => "tabAwareness",
        gate::IDENTITY_OVERLAY => "identityOverlay",
        gate::SCREENSHOT_BUDGET => "screenshotBudget",
        gate::LOOP => "loopDetected",
        gate::DOMAIN_POLICY => "domainPolicy",
        gate::RECLAIM => "reclaimNotification",
        gate::NEW_TABS => "newTabsDisabled",
        gate::CROSS_TAB => "crossTabNavigationDisabled",
        gate::DISK_SPACE_LOW => "diskSpaceLow",
        gate::STORE_UNWRITABLE => "storeUnwritable",
        gate::SEMANTIC_LEARNING => "semanticLearning",
        gate::SPA_NAVIGATION => "spaNavigationBlock",
        _ => "emergencyStop",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_gate_table_in_the_docs_lists_every_gate() {
        let doc = include_str!("../../docs/gates.md");
        for g in GATES {
            assert!(doc.contains(&format!("| `{}` |", g.id)), "docs/gates.md misses {}", g.id);
        }
    }

    #[test]
    fn modes_come_from_settings_then_the_table() {
        let mut s = Settings::default();
        assert_eq!(mode_of(&s, gate::BOOTSTRAP), GateMode::Block);
        assert_eq!(mode_of(&s, gate::TAB_AWARENESS), GateMode::Warn);
        assert_eq!(mode_of(&s, gate::IDENTITY_OVERLAY), GateMode::Block, "the person's overlays block");
        s.gate_modes.insert(gate::BOOTSTRAP.into(), GateMode::Off);
        assert_eq!(mode_of(&s, gate::BOOTSTRAP), GateMode::Off);
    }

    #[test]
    fn the_pipeline_runs_the_gates_in_table_order() {
        let table: Vec<&str> =
            GATES.iter().map(|g| g.id).filter(|id| *id != gate::SCREENSHOT_BUDGET).collect();
        let pipeline: Vec<&str> = pipeline::PIPELINE.iter().map(|(id, _)| *id).collect();
        assert_eq!(pipeline, table);
        assert_eq!(GATES.last().map(|g| g.id), Some(gate::SCREENSHOT_BUDGET), "judged after the capture");
    }

    #[test]
    fn the_docs_list_the_gates_in_pipeline_order() {
        let doc = include_str!("../../docs/gates.md");
        let at: Vec<usize> = GATES
            .iter()
            .map(|g| {
                doc.find(&format!("| `{}` |", g.id))
                    .unwrap_or_else(|| panic!("docs/gates.md misses {}", g.id))
            })
            .collect();
        assert!(at.windows(2).all(|w| w[0] < w[1]), "docs/gates.md lists the gates in another order: {at:?}");
    }
}
