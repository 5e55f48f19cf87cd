//! AAG, agent awareness gates (AAG seed): a pipeline that runs before every tool call. Each gate
//! has an id, a default mode (off / warn / shadow_block / block, overridable per gate in
//! `settings.json` `gateModes`) and a clear condition. A block is not executed: the reply carries
//! `_meta["io.nova/aag"]` (gateId, gateMode, status, stage, retryable, retryAfterMs, reasonCode,
//! details, forceBypassAvailable, knownBundles, preferredBundle) and the call is recorded as
//! `blocked_preflight`. Warnings ride along in `_aagGates`.

pub mod control;
pub mod prompt;
pub mod screenshot;
pub mod tools;
pub mod ui;

use std::collections::{BTreeSet, HashMap, VecDeque};
use std::sync::Mutex;

use serde_json::{Map, Value, json};

use crate::dispatch::{Hub, ToolReply};
use crate::paths::now_ms;
use crate::settings::{GateMode, Settings};

/// Gate ids (AAG seed, "Warning and block rules" and the reason list).
pub mod gate {
    /// Load a tool bundle before work.
    pub const BOOTSTRAP: &str = "setup.bootstrap_required";
    /// Perceive before interacting after a navigation or target change.
    pub const PERCEIVE_FIRST: &str = "safety.perceive_first";
    /// The person pressed STOP.
    pub const EMERGENCY_STOP: &str = "safety.emergency_stop";
    /// Little free disk.
    pub const DISK_SPACE_LOW: &str = "safety.disk_space_low";
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

/// Every gate.
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
        trigger: "500 MB or less free at the data dir (`diskSpaceLowMb`)",
        clear: "free space above the threshold",
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
        clear: "`nova.perceive` or `nova.read_text` on that tab",
    },
    GateSpec {
        id: gate::LOOP,
        default: GateMode::Block,
        bypass: true,
        trigger: "the same tool with the same arguments 5 times within 60 s",
        clear: "change the approach; the window slides",
    },
    GateSpec {
        id: gate::IDENTITY_OVERLAY,
        default: GateMode::Block,
        bypass: true,
        trigger: "click / type / upload / guarded action while the last perceive of the tab saw a sign-in (SSO), payment or modal sign-in overlay",
        clear: "a perceive that no longer sees it (the person completed or closed it), a new navigation, or the person approving `nova.permission_prompt`",
    },
    GateSpec {
        id: gate::SCREENSHOT_BUDGET,
        default: GateMode::Block,
        bypass: true,
        trigger: "inline capture above 200 KB (warning); above 1 MB, 16 MP or 10,000 px on a side (over budget: blocked when inline was asked for); above 50 MB or 50 MP (absolute, in every mode)",
        clear: "`responseMode: auto` / `reference` / `thumbnail+reference`, or `allowLarge` below the absolute limits",
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
];

/// Bundles (contracts.md §1.3).
pub const BUNDLES: &[&str] =
    &["browser_automation", "task_memory", "page_read_debug", "pks_learning", "system_tools"];

/// Tools that are setup, never work.
const SETUP_TOOLS: &[&str] = &["nova.tools_bundle", "nova.get_instructions"];
/// Tools that touch the page and need fresh perception.
const MUTATING: &[&str] = &[
    "nova.click_selector",
    "nova.type_selector",
    "nova.file_upload",
    "nova.guarded_send_message",
    "nova.guarded_login",
    "nova.guarded_submit_form",
    "nova.guarded_switch_model",
    "nova.guarded_switch_sandbox",
];
/// Tools that refresh perception of a tab.
const PERCEIVING: &[&str] = &["nova.perceive", "nova.read_text", "nova.coverage_scan"];
/// Calls in the loop window that make a loop.
pub const LOOP_REPEATS: usize = 5;
/// The loop window.
pub const LOOP_WINDOW_MS: i64 = 60_000;
/// Work calls without task interaction before the reminder.
pub const ACTIVE_INSTANCE_CALLS: u32 = 12;

/// Per-session gate state.
#[derive(Debug, Default)]
pub struct SessionState {
    /// Bundles loaded in this session.
    pub bundles: BTreeSet<String>,
    /// Whether `_meta["io.nova/onboarding"]` went out.
    pub onboarding_sent: bool,
    /// Tab -> navigation epoch at the last perception.
    pub perceived: HashMap<String, u32>,
    /// Whether a task lookup happened.
    pub task_discovery: bool,
    /// Whether the discovery warning went out.
    pub discovery_warned: bool,
    /// Work calls since the last task-run interaction.
    pub calls_since_task: u32,
    /// The active tab when the agent last looked.
    pub last_active: Option<String>,
    /// Recent (tool, arguments, time) for loop detection.
    pub recent: VecDeque<(String, String, i64)>,
}

/// The outcome of the preflight.
#[derive(Debug, Default)]
pub struct Preflight {
    /// The block, when a gate in block mode fired.
    pub block: Option<ToolReply>,
    /// Warnings for `_aagGates`.
    pub warnings: Map<String, Value>,
    /// `_meta` to add to the reply.
    pub meta: Map<String, Value>,
    /// The gate that blocked (for the observation row).
    pub blocked_by: Option<&'static str>,
    /// Gates that let the call run but spoke: (gate id, `warned` / `would_block` / `bypassed`),
    /// for the observation row's `aag_gates`.
    pub decisions: Vec<(&'static str, &'static str)>,
}

/// The mode of a gate after `gateModes` in settings.
pub fn mode_of(settings: &Settings, id: &str) -> GateMode {
    settings
        .gate_modes
        .get(id)
        .copied()
        .or_else(|| GATES.iter().find(|g| g.id == id).map(|g| g.default))
        .unwrap_or(GateMode::Warn)
}

fn preferred_bundle(tool: &str) -> &'static str {
    if tool.starts_with("nova.task_") || tool == "nova.coverage_scan" || tool == "nova.goal_register" {
        "task_memory"
    } else {
        "browser_automation"
    }
}

/// A structured block (`_meta["io.nova/aag"]`), also mirrored into `structuredContent`.
pub fn block_reply(
    id: &'static str,
    mode: GateMode,
    reason: &str,
    message: String,
    retry_after_ms: Option<u64>,
    details: Value,
    tool: &str,
) -> ToolReply {
    let bypass = GATES.iter().find(|g| g.id == id).is_some_and(|g| g.bypass);
    let aag = json!({
        "gateId": id, "gateMode": mode.as_str(), "status": "blocked", "stage": "aag_preflight",
        "retryable": true, "retryAfterMs": retry_after_ms, "reasonCode": reason, "details": details,
        "forceBypassAvailable": bypass, "knownBundles": BUNDLES, "preferredBundle": preferred_bundle(tool),
        "message": message,
    });
    let mut structured = aag.clone();
    structured["ok"] = json!(false);
    structured["actionDispatched"] = json!(false);
    let mut reply = ToolReply::ok(structured);
    reply.is_error = true;
    reply.meta.insert("io.nova/aag".into(), aag);
    reply
}

/// Whether the call's arguments ask to pass bypassable gates (`"_meta": {"forceBypass": true}`).
pub fn force_bypass(args: &Map<String, Value>) -> bool {
    args.get("_meta").and_then(|m| m.get("forceBypass")).and_then(Value::as_bool).unwrap_or(false)
}

/// Calls remembered for loop detection (the window rarely holds more).
const LOOP_MEMORY: usize = 64;

/// Remembers a call at `now` and returns how many calls with the same tool and arguments the
/// last [`LOOP_WINDOW_MS`] hold, this one included (older calls slide out of the window).
fn note_call(recent: &mut VecDeque<(String, String, i64)>, tool: &str, key: String, now: i64) -> usize {
    recent.retain(|(_, _, at)| now - at <= LOOP_WINDOW_MS);
    let repeats = recent.iter().filter(|(t, k, _)| t == tool && *k == key).count() + 1;
    recent.push_back((tool.to_owned(), key, now));
    if recent.len() > LOOP_MEMORY {
        recent.pop_front();
    }
    repeats
}

/// Arguments without volatile fields, for loop detection.
fn call_key(args: &Map<String, Value>) -> String {
    let mut a = args.clone();
    a.remove("_meta");
    Value::Object(a).to_string()
}

impl Hub {
    /// Runs the gates before a call. `target` is the tab the call names, resolved from the
    /// cached tab list (no browser round trip), with its navigation epoch.
    pub fn preflight(
        &self,
        session: &crate::dispatch::Session,
        tool: &str,
        args: &Map<String, Value>,
        agent: &str,
    ) -> Preflight {
        let settings = Settings::load(&self.data);
        let mut out = Preflight::default();
        let force = force_bypass(args);
        let setup = SETUP_TOOLS.contains(&tool);
        let target_arg = args.get("targetId").and_then(Value::as_str).unwrap_or("active");
        let tabs = self.bridge.state().tabs;
        let active = tabs.iter().find(|t| t.active).map(|t| t.target_id.clone());
        // Only tools that act on a tab are judged against one (task tools have no target).
        let on_tab =
            crate::tob::classify(tool).1 != "none" || matches!(tool, "nova.tab_claim" | "nova.tab_release");
        let tab = tabs
            .iter()
            .filter(|_| on_tab)
            .find(|t| if target_arg == "active" { t.active } else { t.target_id == target_arg })
            .cloned();
        let mut state = session.state.lock().unwrap_or_else(|p| p.into_inner());

        // Onboarding advisory, once per session.
        if !state.onboarding_sent {
            state.onboarding_sent = true;
            out.meta.insert(
                "io.nova/onboarding".into(),
                json!({
                    "message": "Read nova.get_instructions, load a bundle with nova.tools_bundle, then perceive before acting.",
                    "instructionsTool": "nova.get_instructions", "bundleTool": "nova.tools_bundle",
                    "knownBundles": BUNDLES,
                }),
            );
        }

        let ctx = Ctx { settings: &settings, force, tool };
        // 1. The person's STOP, before anything else; nothing bypasses it.
        if !setup
            && let Some(stop) = self.control.stop()
            && fire(
                &ctx,
                &mut out,
                gate::EMERGENCY_STOP,
                "safety.emergency_stop",
                "The person stopped agent work. Wait until they release it; do not retry in a loop.".into(),
                Some(30_000),
                json!({"engagedAt": stop.at_ms, "by": stop.by, "releasedBy": "the person: popup or `nova resume`"}),
                false,
            )
        {
            return out;
        }
        // 2. Disk space: no bypass.
        if !setup
            && let Some((free, min)) = self.disk_low(&settings)
            && fire(
                &ctx,
                &mut out,
                gate::DISK_SPACE_LOW,
                "safety.disk_space_low",
                format!(
                    "Only {} MB free at the Nova data dir; at least {} MB are needed.",
                    free / 1_048_576,
                    min / 1_048_576
                ),
                None,
                json!({"freeBytes": free, "thresholdBytes": min, "path": self.data.root()}),
                false,
            )
        {
            return out;
        }
        // 3. Bootstrap.
        if !setup && state.bundles.is_empty() && mode_of(&settings, gate::BOOTSTRAP) != GateMode::Off {
            let message = format!(
                "Load a tool bundle first: nova.tools_bundle with bundle `{}` (nova.get_instructions explains the contract).",
                preferred_bundle(tool)
            );
            out.warnings.insert("bootstrapWarning".into(), json!({
                "message": message, "loadedBundles": state.bundles,
                "resolution": {"tool": "nova.tools_bundle", "arguments": {"bundle": preferred_bundle(tool)}},
            }));
            if fire(
                &ctx,
                &mut out,
                gate::BOOTSTRAP,
                "setup.bootstrap_required",
                message,
                None,
                json!({"loadedBundles": state.bundles}),
                true,
            ) {
                return out;
            }
        }
        // 4. The person's domain policy and tab rules.
        let host = tab.as_ref().and_then(|t| crate::tuc::normalize::parts(&t.url)).map(|p| p.host);
        let nav_url = (tool == "nova.navigate").then(|| args.get("url").and_then(Value::as_str)).flatten();
        let group = action_group(tool);
        for h in [host.clone(), nav_url.and_then(crate::tuc::normalize::parts).map(|p| p.host)]
            .into_iter()
            .flatten()
        {
            if let Some(group) = group
                && settings.domain_blocked(&h, group)
                && fire(
                    &ctx,
                    &mut out,
                    gate::DOMAIN_POLICY,
                    "domain.policy.blocked",
                    format!("The person's policy blocks `{group}` on {h}."),
                    None,
                    json!({"domain": h, "actionGroup": group}),
                    false,
                )
            {
                return out;
            }
        }
        if tool == "nova.navigate"
            && args.get("newTab").and_then(Value::as_bool) == Some(true)
            && settings.agent_new_tabs_disabled
            && fire(
                &ctx,
                &mut out,
                gate::NEW_TABS,
                "agent.new_tabs_disabled",
                "Opening new tabs is disabled by the person; navigate in the current tab.".into(),
                None,
                json!({}),
                false,
            )
        {
            return out;
        }
        if matches!(tool, "nova.navigate" | "nova.route")
            && settings.agent_cross_tab_navigation_disabled
            && let Some(t) = &tab
        {
            let held = self.leases.held_by(agent);
            if !held.is_empty()
                && !held.contains(&t.target_id)
                && fire(
                    &ctx,
                    &mut out,
                    gate::CROSS_TAB,
                    "agent.cross_tab_navigation_disabled",
                    format!(
                        "You hold tab {}; moving work to tab {} is disabled.",
                        held.join(", "),
                        t.target_id
                    ),
                    None,
                    json!({"heldTabs": held, "targetId": t.target_id}),
                    false,
                )
            {
                return out;
            }
        }
        // 5. A reclaim message for this agent on this tab, delivered once.
        if let Some(t) = &tab
            && let Some(note) = self.control.take_reclaim(&t.target_id, agent)
            && fire(
                &ctx,
                &mut out,
                gate::RECLAIM,
                "claim.reclaim_notification",
                format!("Agent `{}` took tab {} from you: {}", note.by, t.target_id, note.reason),
                None,
                json!({"targetId": t.target_id, "reclaimedBy": note.by, "reason": note.reason, "at": note.at_ms}),
                false,
            )
        {
            return out;
        }
        // 6. Perceive first.
        if MUTATING.contains(&tool)
            && let Some(t) = &tab
            && state.perceived.get(&t.target_id) != Some(&t.nav_epoch)
            && fire(
                &ctx,
                &mut out,
                gate::PERCEIVE_FIRST,
                "safety.perceive_first",
                format!(
                    "Perceive tab {} before interacting: it changed (navigation or target change) since you last looked.",
                    t.target_id
                ),
                None,
                json!({"targetId": t.target_id, "pageUrl": t.url, "clearWith": ["nova.perceive", "nova.read_text"]}),
                true,
            )
        {
            return out;
        }
        // 6b. A sign-in, payment or identity overlay is the person's to complete.
        if MUTATING.contains(&tool)
            && let Some(t) = &tab
            && let Some(overlay) = self.control.overlay(&t.target_id)
        {
            let providers: Vec<String> = overlay["items"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|i| i["kind"] != "consent")
                .map(|i| {
                    format!(
                        "{} {}",
                        i["kind"].as_str().unwrap_or_default(),
                        i["provider"].as_str().unwrap_or_default()
                    )
                })
                .collect();
            let details = json!({
                "targetId": t.target_id, "pageUrl": t.url,
                "items": overlay["items"], "recommendedAction": overlay["recommendedAction"],
                "clearWith": ["nova.perceive once the overlay is gone", "nova.permission_prompt"],
            });
            if fire(
                &ctx,
                &mut out,
                gate::IDENTITY_OVERLAY,
                "safety.identity_overlay",
                format!(
                    "A sign-in, payment or identity overlay is showing on tab {} ({}): it is the person's to complete. Ask them (nova.permission_prompt), then perceive again once it is gone.",
                    t.target_id,
                    providers.join(", ")
                ),
                None,
                details,
                true,
            ) {
                return out;
            }
        }
        // 7. Loops.
        if !setup {
            let repeats = note_call(&mut state.recent, tool, call_key(args), now_ms());
            if repeats >= LOOP_REPEATS
                && fire(
                    &ctx,
                    &mut out,
                    gate::LOOP,
                    "loop.detected",
                    format!(
                        "`{tool}` ran {repeats} times with the same arguments within a minute; change the approach or ask the person."
                    ),
                    Some(5_000),
                    json!({"repeats": repeats, "windowMs": LOOP_WINDOW_MS}),
                    true,
                )
            {
                return out;
            }
        }
        // Warnings only from here.
        if !setup
            && !tool.starts_with("nova.task_")
            && !state.task_discovery
            && !state.discovery_warned
            && self.has_profiles()
        {
            state.discovery_warned = true;
            fire(
                &ctx,
                &mut out,
                gate::TASK_DISCOVERY,
                "etm.task_discovery_recommended",
                "Task profiles exist: check nova.task_search / nova.task_match before starting.".into(),
                None,
                json!({}),
                true,
            );
        }
        if !setup && !tool.starts_with("nova.task_") {
            state.calls_since_task += 1;
            if state.calls_since_task >= ACTIVE_INSTANCE_CALLS
                && let Some(id) = self.active_instance(agent)
            {
                fire(
                    &ctx,
                    &mut out,
                    gate::ACTIVE_INSTANCE,
                    "etm.active_instance_context",
                    format!("Task run {id} is active; report progress with nova.task_instance_progress."),
                    None,
                    json!({"instanceId": id, "callsSinceTaskInteraction": state.calls_since_task}),
                    true,
                );
            }
        }
        if target_arg == "active"
            && on_tab
            && !setup
            && let (Some(seen), Some(now_active)) = (&state.last_active, &active)
            && seen != now_active
        {
            fire(
                &ctx,
                &mut out,
                gate::TAB_AWARENESS,
                "safety.tab_awareness",
                format!(
                    "The active tab is now {now_active}, not {seen} as when you last looked; perceive it or pass targetId."
                ),
                None,
                json!({"lastSeenActive": seen, "activeNow": now_active}),
                true,
            );
        }
        out
    }

    /// Updates the session after a call ran.
    pub fn after_call(
        &self,
        session: &crate::dispatch::Session,
        tool: &str,
        obs: &crate::tob::Observation,
        ok: bool,
    ) {
        let mut state = session.state.lock().unwrap_or_else(|p| p.into_inner());
        if tool.starts_with("nova.task_") {
            state.task_discovery = true;
            if tool.starts_with("nova.task_instance_") {
                state.calls_since_task = 0;
            }
        }
        let Some(target) = obs.target_id.clone() else { return };
        if ok && PERCEIVING.contains(&tool) {
            let epoch = self.bridge.state().tabs.iter().find(|t| t.target_id == target).map(|t| t.nav_epoch);
            if let Some(e) = epoch.or(obs.nav_epoch_before) {
                state.perceived.insert(target.clone(), e);
            }
        }
        if matches!(tool, "nova.navigate" | "nova.route") {
            state.perceived.remove(&target);
        }
        // A new document: the overlay seen on the old one is gone (a perceive sees it again if not).
        if ok && tool == "nova.navigate" {
            self.control.set_overlay(&target, None);
        }
        if ok && matches!(tool, "nova.perceive" | "nova.navigate") {
            state.last_active =
                self.bridge.state().tabs.iter().find(|t| t.active).map(|t| t.target_id.clone());
        }
    }

    fn disk_low(&self, settings: &Settings) -> Option<(u64, u64)> {
        let min = settings.disk_space_low_mb.saturating_mul(1_048_576);
        let free = fs4::available_space(self.data.root()).ok()?;
        (free <= min).then_some((free, min))
    }

    fn has_profiles(&self) -> bool {
        self.etm
            .with(|c| {
                c.query_row("SELECT EXISTS (SELECT 1 FROM task_profiles WHERE archived = 0)", [], |r| {
                    r.get::<_, bool>(0)
                })
            })
            .unwrap_or(false)
    }

    fn active_instance(&self, agent: &str) -> Option<String> {
        let stale = now_ms() - 3_600_000;
        self.etm
            .with(|c| {
                use rusqlite::OptionalExtension as _;
                c.query_row(
                    "SELECT instance_id FROM task_instances WHERE agent_id = ?1 AND status IN ('pending', 'active')
                       AND last_activity_at_ms > ?2 ORDER BY last_activity_at_ms DESC LIMIT 1",
                    rusqlite::params![agent, stale],
                    |r| r.get(0),
                )
                .optional()
            })
            .ok()
            .flatten()
    }
}

struct Ctx<'a> {
    settings: &'a Settings,
    force: bool,
    tool: &'a str,
}

/// Applies a fired gate's mode: a warning, a shadow record, a bypass, or the block. Returns
/// whether the call is blocked.
#[allow(clippy::too_many_arguments)]
fn fire(
    ctx: &Ctx<'_>,
    out: &mut Preflight,
    id: &'static str,
    reason: &str,
    message: String,
    retry: Option<u64>,
    details: Value,
    bypassable: bool,
) -> bool {
    let mode = mode_of(ctx.settings, id);
    let mut pass = |status: &'static str| {
        out.warnings.insert(
            warning_key(id).into(),
            json!({"gateId": id, "gateMode": mode.as_str(), "status": status, "reasonCode": reason, "message": message, "details": details}),
        );
        out.decisions.push((id, status));
        false
    };
    match mode {
        GateMode::Off => false,
        GateMode::Warn => pass("warned"),
        GateMode::ShadowBlock => {
            tracing::info!(gate = id, tool = ctx.tool, reason, "shadow block");
            pass("would_block")
        }
        GateMode::Block if ctx.force && bypassable => pass("bypassed"),
        GateMode::Block => {
            out.block = Some(block_reply(id, mode, reason, message, retry, details, ctx.tool));
            out.blocked_by = Some(id);
            true
        }
    }
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
        _ => "emergencyStop",
    }
}

/// The action group of a tool for the domain policy: read, navigate, interact, write.
pub fn action_group(tool: &str) -> Option<&'static str> {
    match crate::tob::classify(tool).0 {
        crate::tob::ActionKind::Read => Some("read"),
        crate::tob::ActionKind::Navigate => Some("navigate"),
        crate::tob::ActionKind::Interact => Some("interact"),
        _ => None,
    }
}

/// A mutex-wrapped state for sessions (re-exported for `Session`).
pub type SharedState = std::sync::Arc<Mutex<SessionState>>;

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
    fn the_loop_window_slides() {
        let mut recent = VecDeque::new();
        let call = |recent: &mut VecDeque<_>, key: &str, at: i64| {
            note_call(recent, "nova.read_text", key.into(), at)
        };
        let counts: Vec<usize> = (0..5).map(|i| call(&mut recent, "a", i * 1_000)).collect();
        assert_eq!(counts, [1, 2, 3, 4, LOOP_REPEATS], "the fifth within a minute is a loop");
        assert_eq!(call(&mut recent, "b", 5_000), 1, "other arguments are another call");
        assert_eq!(
            call(&mut recent, "a", LOOP_WINDOW_MS + 2_500),
            LOOP_REPEATS - 2,
            "the calls at 0, 1 and 2 s slid out of the window"
        );
        assert_eq!(call(&mut recent, "a", 10 * LOOP_WINDOW_MS), 1, "a minute of quiet clears it");
    }

    #[test]
    fn blocks_carry_the_seed_shape() {
        let r = block_reply(
            gate::LOOP,
            GateMode::Block,
            "loop.detected",
            "m".into(),
            Some(5000),
            json!({}),
            "nova.task_get",
        );
        let a = &r.meta["io.nova/aag"];
        assert_eq!(
            (a["status"].clone(), a["preferredBundle"].clone()),
            (json!("blocked"), json!("task_memory"))
        );
        assert!(r.is_error);
    }
}
