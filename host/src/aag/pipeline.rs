//! The gate pipeline: one function per gate, run in the order of the gate table
//! ([`super::GATES`], `docs/gates.md`) before every tool call, and the session bookkeeping
//! after it ([`after_call`]).
//!
//! It decides from the session's [`SessionState`] and the [`Facts`] the hub gathers, and does
//! no I/O of its own, so the same code runs in the hub and in the property test that drives it
//! through random sessions (`tests/gate_properties.rs`).
//!
//! No deadlock between gates: a gate never refuses a call that clears a block standing on the
//! same tab from a gate earlier in the table (the agent meets that earlier block first, and
//! must be able to follow its `clearWith`). Such a call passes with the later gate's warning
//! (`status: "warned"`, `details.exemptBecause`). Where the person's own policy refuses the way
//! out, the block says so in `details.wayOut` instead of naming calls that cannot pass.

use nova_shared::protocol::{FrameId, TabInfo};
use serde_json::{Map, Value, json};

use super::block::{BUNDLES, preferred_bundle};
use super::control::{Reclaim, Stop};
use super::loops::{Scene, call_key};
use super::{GATES, SessionState, gate, mode_of, warning_key};
use crate::bridge::BrowserState;
use crate::call::ToolReply;
use crate::registry::{PageUse, ToolDef};
use crate::settings::{GateMode, Settings};

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
    /// The tab whose handover note the pipeline delivered (the hub then consumes it).
    pub reclaim_delivered: Option<String>,
}

/// The action group of a tool for the domain policy: read, navigate, interact.
pub fn action_group(tool: &str) -> Option<&'static str> {
    crate::registry::find(tool).and_then(|t| t.action_group())
}

/// Work calls without task interaction before the reminder (`etm.active_instance_context`).
pub const ACTIVE_INSTANCE_CALLS: u32 = 12;

/// Whether `tool` touches the page and needs fresh perception first (registry:
/// `PageUse::Acts { needs_perception: true }`).
pub fn needs_perception(tool: &str) -> bool {
    crate::registry::find(tool).is_some_and(|t| t.page == PageUse::Acts { needs_perception: true })
}

/// Whether `tool` refreshes the agent's perception of a tab (it clears `safety.perceive_first`).
pub fn perceives(tool: &str) -> bool {
    crate::registry::find(tool).is_some_and(|t| t.page == PageUse::Reads { perceives: true })
}

/// The tools that refresh perception, in registry order.
pub fn perceiving_tools() -> Vec<&'static str> {
    crate::registry::all().iter().filter(|t| perceives(t.name)).map(|t| t.name).collect()
}

/// Tools that clear `safety.identity_overlay` (a perceive once the overlay is gone, or the
/// person's approval).
pub const OVERLAY_CLEARING: &[&str] = &["nova.perceive", "nova.permission_prompt"];

/// What the gates may ask about the world beyond the session: the hub answers from the
/// browser, the store and the settings; the property test answers from a model.
pub trait Facts {
    /// The person's settings (gate modes, policy).
    fn settings(&self) -> &Settings;
    /// Now, in ms since the epoch.
    fn now_ms(&self) -> i64;
    /// The person's STOP, when engaged.
    fn stop(&self) -> Option<Stop>;
    /// (free bytes, threshold bytes, the data dir) when free space there is below the
    /// threshold.
    fn disk_low(&self) -> Option<(u64, u64, String)>;
    /// Why the evidence store refuses writes, while it does.
    fn store_trouble(&self) -> Option<crate::tob::health::Trouble>;
    /// Tabs and the documents' stamps, as the hub last heard them.
    fn browser(&self) -> &BrowserState;
    /// Tabs `agent` holds a live lease on.
    fn held_by(&self, agent: &str) -> Vec<String>;
    /// The handover note for `agent` on `target`, without consuming it.
    fn reclaim(&self, target: &str, agent: &str) -> Option<Reclaim>;
    /// The identity overlay the last perceive of `target` saw, with the navigation epoch of
    /// the document it saw it on.
    fn overlay(&self, target: &str) -> Option<(u32, Value)>;
    /// Whether any task profile exists.
    fn has_profiles(&self) -> bool;
    /// `agent`'s active task run (activity within the last hour).
    fn active_instance(&self, agent: &str) -> Option<String>;
    /// The most escalated open semantic learning opportunity on `site` (id, state).
    fn semantic(&self, site: &str) -> Option<(String, String)>;
    /// Why a hard navigation away from `path` on `site` would lose a fragile single-page app's
    /// state, when PKS knows it would.
    fn spa_risk(&self, site: &str, path: &str) -> Option<String>;
}

/// One tool call as the gates see it.
#[derive(Debug, Clone, Copy)]
pub struct Call<'a> {
    /// The tool.
    pub tool: &'a str,
    /// Its arguments (with `_meta`).
    pub args: &'a Map<String, Value>,
    /// The calling agent.
    pub agent: &'a str,
}

impl Call<'_> {
    /// `targetId` as given (`active` when absent).
    pub fn target_arg(&self) -> &str {
        self.args.get("targetId").and_then(Value::as_str).unwrap_or("active")
    }

    /// The frame the call names (0: the top frame).
    pub fn frame(&self) -> FrameId {
        self.args.get("frameId").and_then(Value::as_i64).unwrap_or(0)
    }

    /// Whether the tool acts on a tab (task tools have none).
    pub fn on_tab(&self) -> bool {
        crate::registry::find(self.tool).is_some_and(ToolDef::on_tab)
    }

    /// Whether the tool is setup (passes every gate).
    pub fn setup(&self) -> bool {
        crate::registry::find(self.tool).is_some_and(|t| t.setup)
    }

    /// The tab the call names, from what the hub last heard.
    pub fn tab(&self, browser: &BrowserState) -> Option<TabInfo> {
        if self.on_tab() { browser.tab(self.target_arg()).cloned() } else { None }
    }
}

/// The scene a call meets (or leaves behind): its tab's document, or the session's writes.
pub fn scene(browser: &BrowserState, state: &SessionState, call: &Call<'_>, target: Option<&str>) -> Scene {
    let tab = match target {
        Some(t) => browser.tabs.iter().find(|tab| tab.target_id == t).cloned(),
        None => call.tab(browser),
    };
    match tab {
        Some(t) => Scene::Page {
            rev: browser.doc_rev(&t.target_id, call.frame()),
            frame: call.frame(),
            epoch: t.nav_epoch,
            url: t.url,
            target: t.target_id,
        },
        None => Scene::Session { writes: state.writes },
    }
}

/// Whether the call would be judged a loop on what the hub last heard of its page: then the
/// hub asks the page for its revision now ([`nova_shared::protocol::method::REV`]) before the
/// gates run, since the page may have changed on its own.
pub fn looks_like_loop(
    facts: &dyn Facts,
    state: &SessionState,
    call: &Call<'_>,
) -> Option<(String, FrameId)> {
    // With the loop gate off the page's revision would not be looked at: no probe.
    if call.setup() || mode_of(facts.settings(), gate::LOOP) == GateMode::Off {
        return None;
    }
    let scene = scene(facts.browser(), state, call, None);
    let Scene::Page { target, frame, .. } = &scene else { return None };
    state
        .loops
        .judge(call.tool, &call_key(call.args), &scene, facts.now_ms())
        .map(|_| (target.clone(), *frame))
}

/// One gate: returns whether it blocked the call (the pipeline stops there).
type Gate = fn(&mut Run<'_>) -> bool;

/// The gates in the order of the gate table (`aag.screenshot_budget` judges after the capture,
/// in the screenshot tool).
pub const PIPELINE: &[(&str, Gate)] = &[
    (gate::EMERGENCY_STOP, emergency_stop),
    (gate::DISK_SPACE_LOW, disk_space_low),
    (gate::STORE_UNWRITABLE, store_unwritable),
    (gate::BOOTSTRAP, bootstrap),
    (gate::DOMAIN_POLICY, domain_policy),
    (gate::NEW_TABS, new_tabs),
    (gate::CROSS_TAB, cross_tab),
    (gate::RECLAIM, reclaim_notification),
    (gate::PERCEIVE_FIRST, perceive_first),
    (gate::IDENTITY_OVERLAY, identity_overlay),
    (gate::LOOP, loop_detected),
    (gate::TASK_DISCOVERY, task_discovery),
    (gate::ACTIVE_INSTANCE, active_instance),
    (gate::TAB_AWARENESS, tab_awareness),
    (gate::SEMANTIC_LEARNING, semantic_learning),
    (gate::SPA_NAVIGATION, spa_navigation),
];

/// Every tool name a block may name in `clearWith` (checked against the registry).
pub fn named_in_blocks() -> Vec<&'static str> {
    let mut names = perceiving_tools();
    names.extend(OVERLAY_CLEARING);
    names.extend(BOOTSTRAP_CLEARS);
    names.extend(TASK_DISCOVERY_CLEARS);
    names.extend(ACTIVE_INSTANCE_CLEARS);
    names.extend(SEMANTIC_LEARNING_CLEARS);
    names.extend(SPA_NAVIGATION_CLEARS);
    names
}

/// What clears `setup.bootstrap_required`.
const BOOTSTRAP_CLEARS: &[&str] = &["nova.tools_bundle"];
/// What clears `etm.task_discovery_recommended`.
const TASK_DISCOVERY_CLEARS: &[&str] =
    &["nova.task_search", "nova.task_match", "nova.task_instance_create", "nova.task_instance_get"];
/// What clears `etm.active_instance_context`.
const ACTIVE_INSTANCE_CLEARS: &[&str] = &["nova.task_instance_progress", "nova.task_instance_get"];
/// What clears `pks.semantic_learning`.
const SEMANTIC_LEARNING_CLEARS: &[&str] = &["nova.learn_resolve_opportunity", "nova.pks_upsert"];
/// What clears `pks.spa_navigation_block` (besides `newTab: true` and the explicit override).
const SPA_NAVIGATION_CLEARS: &[&str] = &["nova.route"];

/// Runs the gates before a call.
pub fn preflight(facts: &dyn Facts, state: &mut SessionState, call: &Call<'_>) -> Preflight {
    let mut run = Run {
        tab: call.tab(facts.browser()),
        facts,
        call,
        state,
        out: Preflight::default(),
        force: super::force_bypass(call.args),
        gate_index: 0,
    };
    if !run.state.onboarding_sent {
        run.state.onboarding_sent = true;
        run.out.meta.insert(
            "io.nova/onboarding".into(),
            json!({
                "message": "Read nova.get_instructions, load a bundle with nova.tools_bundle, then perceive before acting.",
                "instructionsTool": "nova.get_instructions", "bundleTool": "nova.tools_bundle",
                "knownBundles": BUNDLES,
            }),
        );
    }
    if call.setup() {
        return run.out;
    }
    for (i, (_, gate)) in PIPELINE.iter().enumerate() {
        run.gate_index = i;
        if gate(&mut run) {
            break;
        }
    }
    run.out
}

/// One pipeline run.
pub struct Run<'a> {
    facts: &'a dyn Facts,
    call: &'a Call<'a>,
    state: &'a mut SessionState,
    out: Preflight,
    force: bool,
    tab: Option<TabInfo>,
    gate_index: usize,
}

impl Run<'_> {
    fn mode(&self, id: &str) -> GateMode {
        mode_of(self.facts.settings(), id)
    }

    /// The gate earlier in the table whose standing block on this tab the call clears.
    fn clears_earlier_block(&self) -> Option<&'static str> {
        // Resolved from `targetId` even for tools that act on no tab (a permission prompt).
        let tab = self.facts.browser().tab(self.call.target_arg())?;
        let before = |id: &str| PIPELINE[..self.gate_index].iter().any(|(g, _)| *g == id);
        if before(gate::PERCEIVE_FIRST)
            && perceives(self.call.tool)
            && self.state.perceived.get(&tab.target_id) != Some(&tab.nav_epoch)
            && self.mode(gate::PERCEIVE_FIRST) == GateMode::Block
        {
            return Some(gate::PERCEIVE_FIRST);
        }
        if before(gate::IDENTITY_OVERLAY)
            && OVERLAY_CLEARING.contains(&self.call.tool)
            && current_overlay(self.facts, tab).is_some()
            && self.mode(gate::IDENTITY_OVERLAY) == GateMode::Block
        {
            return Some(gate::IDENTITY_OVERLAY);
        }
        None
    }

    /// Applies a fired gate's mode: a warning, a shadow record, a bypass, or the block.
    /// Returns whether the call is blocked.
    fn fire(
        &mut self,
        id: &'static str,
        reason: &str,
        message: String,
        retry: Option<u64>,
        mut details: Value,
    ) -> bool {
        let mode = self.mode(id);
        let bypassable = GATES.iter().find(|g| g.id == id).is_some_and(|g| g.bypass);
        let exempt = if mode == GateMode::Block && bypassable { self.clears_earlier_block() } else { None };
        if let Some(cleared) = exempt {
            details["exemptBecause"] =
                json!(format!("this call clears `{cleared}`, which stands on this tab; it is never refused"));
        }
        let mut pass = |status: &'static str| {
            self.out.warnings.insert(
                warning_key(id).into(),
                json!({"gateId": id, "gateMode": mode.as_str(), "status": status, "reasonCode": reason,
                       "message": message, "details": details, "retryAfterMs": retry}),
            );
            self.out.decisions.push((id, status));
            false
        };
        match mode {
            GateMode::Off => false,
            GateMode::Warn => pass("warned"),
            GateMode::ShadowBlock => {
                tracing::info!(gate = id, tool = self.call.tool, reason, "shadow block");
                pass("would_block")
            }
            GateMode::Block if exempt.is_some() => pass("warned"),
            GateMode::Block if self.force && bypassable => pass("bypassed"),
            GateMode::Block => {
                self.out.block = Some(super::block::block_reply(
                    id,
                    mode,
                    reason,
                    message,
                    retry,
                    details,
                    self.call.tool,
                ));
                self.out.blocked_by = Some(id);
                true
            }
        }
    }
}

/// The person's STOP, before anything else; nothing bypasses it.
fn emergency_stop(r: &mut Run<'_>) -> bool {
    let Some(stop) = r.facts.stop() else { return false };
    r.fire(
        gate::EMERGENCY_STOP,
        "safety.emergency_stop",
        "The person stopped agent work. Wait until they release it; do not retry in a loop.".into(),
        Some(30_000),
        json!({"engagedAt": stop.at_ms, "by": stop.by, "releasedBy": "the person: popup or `nova resume`"}),
    )
}

/// Free space at the data dir; no bypass.
fn disk_space_low(r: &mut Run<'_>) -> bool {
    let Some((free, min, path)) = r.facts.disk_low() else { return false };
    r.fire(
        gate::DISK_SPACE_LOW,
        "safety.disk_space_low",
        format!(
            "Only {} MB free at the Nova data dir; at least {} MB are needed. Retry once space is freed.",
            free / 1_048_576,
            min / 1_048_576
        ),
        None,
        json!({"freeBytes": free, "thresholdBytes": min, "path": path}),
    )
}

/// The evidence store refuses writes: nothing is done that could not be proved afterwards; no
/// bypass.
fn store_unwritable(r: &mut Run<'_>) -> bool {
    let Some(t) = r.facts.store_trouble() else { return false };
    r.fire(
        gate::STORE_UNWRITABLE,
        "safety.store_unwritable",
        format!(
            "Nova cannot write its evidence store ({}); nothing is done meanwhile. The person frees \
             space at the Nova data dir (or makes it writable); Nova notices by itself within a second. \
             Retry then.",
            t.error
        ),
        Some(2_000),
        json!({"sinceMs": t.since_ms, "error": t.error, "rowsWaiting": t.waiting, "rowsDropped": t.dropped}),
    )
}

/// A bundle before work.
fn bootstrap(r: &mut Run<'_>) -> bool {
    if !r.state.bundles.is_empty() || r.mode(gate::BOOTSTRAP) == GateMode::Off {
        return false;
    }
    let bundle = preferred_bundle(r.call.tool);
    let message = format!(
        "Load a tool bundle first: nova.tools_bundle with bundle `{bundle}` (nova.get_instructions explains the contract)."
    );
    r.out.warnings.insert(
        "bootstrapWarning".into(),
        json!({
            "message": message, "loadedBundles": r.state.bundles,
            "resolution": {"tool": "nova.tools_bundle", "arguments": {"bundle": bundle}},
        }),
    );
    let details = json!({"loadedBundles": r.state.bundles, "clearWith": BOOTSTRAP_CLEARS});
    r.fire(gate::BOOTSTRAP, "setup.bootstrap_required", message, None, details)
}

/// The host a call works on, and the one a navigation goes to.
fn hosts(r: &Run<'_>) -> Vec<String> {
    let here = r.tab.as_ref().and_then(|t| crate::url::parts(&t.url)).map(|p| p.host);
    let there = (r.call.tool == "nova.navigate")
        .then(|| r.call.args.get("url").and_then(Value::as_str))
        .flatten()
        .and_then(crate::url::parts)
        .map(|p| p.host);
    [here, there].into_iter().flatten().collect()
}

/// The person's domain policy.
fn domain_policy(r: &mut Run<'_>) -> bool {
    let Some(group) = action_group(r.call.tool) else { return false };
    for h in hosts(r) {
        if r.facts.settings().domain_blocked(&h, group) {
            return r.fire(
                gate::DOMAIN_POLICY,
                "domain.policy.blocked",
                format!("The person's policy blocks `{group}` on {h}."),
                None,
                json!({"domain": h, "actionGroup": group}),
            );
        }
    }
    false
}

/// `newTab: true` while the person disabled new tabs.
fn new_tabs(r: &mut Run<'_>) -> bool {
    if r.call.tool != "nova.navigate"
        || r.call.args.get("newTab").and_then(Value::as_bool) != Some(true)
        || !r.facts.settings().agent_new_tabs_disabled
    {
        return false;
    }
    r.fire(
        gate::NEW_TABS,
        "agent.new_tabs_disabled",
        "Opening new tabs is disabled by the person; navigate in the current tab.".into(),
        None,
        json!({}),
    )
}

/// Navigating a tab the agent does not hold while the person disabled it.
fn cross_tab(r: &mut Run<'_>) -> bool {
    if !matches!(r.call.tool, "nova.navigate" | "nova.route")
        || !r.facts.settings().agent_cross_tab_navigation_disabled
    {
        return false;
    }
    let Some(t) = r.tab.clone() else { return false };
    let held = r.facts.held_by(r.call.agent);
    if held.is_empty() || held.contains(&t.target_id) {
        return false;
    }
    r.fire(
        gate::CROSS_TAB,
        "agent.cross_tab_navigation_disabled",
        format!("You hold tab {}; moving work to tab {} is disabled.", held.join(", "), t.target_id),
        None,
        json!({"heldTabs": held, "targetId": t.target_id}),
    )
}

/// A handover note for this agent on this tab, delivered once (the hub consumes it).
fn reclaim_notification(r: &mut Run<'_>) -> bool {
    let Some(t) = r.tab.clone() else { return false };
    let Some(note) = r.facts.reclaim(&t.target_id, r.call.agent) else { return false };
    r.out.reclaim_delivered = Some(t.target_id.clone());
    r.fire(
        gate::RECLAIM,
        "claim.reclaim_notification",
        format!("Agent `{}` took tab {} from you: {}", note.by, t.target_id, note.reason),
        None,
        json!({"targetId": t.target_id, "reclaimedBy": note.by, "reason": note.reason, "at": note.at_ms}),
    )
}

/// Fresh perception before touching a page that changed document since the agent looked.
fn perceive_first(r: &mut Run<'_>) -> bool {
    if !needs_perception(r.call.tool) {
        return false;
    }
    let Some(t) = r.tab.clone() else { return false };
    if r.state.perceived.get(&t.target_id) == Some(&t.nav_epoch) {
        return false;
    }
    let clear = passable(r, &t, &perceiving_tools());
    let mut details = json!({"targetId": t.target_id, "pageUrl": t.url, "clearWith": clear});
    let mut message = format!(
        "Perceive tab {} before interacting: it shows a new document (navigation or target change) since you last looked.",
        t.target_id
    );
    // The way out must pass the person's policy; when reading is blocked there is none for
    // the agent.
    if clear.is_empty() {
        let way_out = "The person's policy blocks reading on this site, so the tab cannot be perceived: ask the person to allow reading there (options page), or work in another tab.";
        details["wayOut"] = json!(way_out);
        message = format!("{message} {way_out}");
    }
    r.fire(gate::PERCEIVE_FIRST, "safety.perceive_first", message, None, details)
}

/// A sign-in, payment or identity overlay is the person's to complete.
fn identity_overlay(r: &mut Run<'_>) -> bool {
    if !needs_perception(r.call.tool) {
        return false;
    }
    let Some(t) = r.tab.clone() else { return false };
    let Some(overlay) = current_overlay(r.facts, &t) else { return false };
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
        "clearWith": passable(r, &t, OVERLAY_CLEARING),
        "clearHow": "ask the person (nova.permission_prompt), or nova.perceive once they completed or closed the overlay",
    });
    r.fire(
        gate::IDENTITY_OVERLAY,
        "safety.identity_overlay",
        format!(
            "A sign-in, payment or identity overlay is showing on tab {} ({}): it is the person's to complete. Ask them (nova.permission_prompt), then perceive again once it is gone.",
            t.target_id,
            providers.join(", ")
        ),
        None,
        details,
    )
}

/// The calls of `tools` the person's domain policy lets run on `tab`: a block names only ways
/// out that pass.
fn passable(r: &Run<'_>, tab: &TabInfo, tools: &[&'static str]) -> Vec<&'static str> {
    let host = crate::url::parts(&tab.url).map(|p| p.host);
    tools
        .iter()
        .copied()
        .filter(|tool| match (action_group(tool), &host) {
            (Some(group), Some(h)) => !r.facts.settings().domain_blocked(h, group),
            _ => true,
        })
        .collect()
}

/// The overlay seen on the document the tab shows now (one seen on an earlier document is gone
/// with it; a perceive sees it again if it is still there).
fn current_overlay(facts: &dyn Facts, tab: &TabInfo) -> Option<Value> {
    facts.overlay(&tab.target_id).filter(|(epoch, _)| *epoch == tab.nav_epoch).map(|(_, o)| o)
}

/// The same call on an unchanged scene.
fn loop_detected(r: &mut Run<'_>) -> bool {
    let scene = scene(r.facts.browser(), r.state, r.call, None);
    let Some(hit) = r.state.loops.judge(r.call.tool, &call_key(r.call.args), &scene, r.facts.now_ms()) else {
        return false;
    };
    let tool = r.call.tool;
    let on_page = matches!(scene, Scene::Page { .. });
    let change = if on_page {
        "a navigation, a change of the page's content or form values, or other arguments"
    } else {
        "a successful write of this session (task progress, an action), or other arguments"
    };
    r.fire(
        gate::LOOP,
        "loop.detected",
        format!(
            "`{tool}` ran {} times with the same arguments on an unchanged {} within a minute, so it is making no progress. What counts as a change: {change}. Change the approach or ask the person; unchanged, the call is free again in {} ms.",
            hit.repeats,
            if on_page { "page" } else { "session" },
            hit.retry_after_ms
        ),
        Some(hit.retry_after_ms),
        json!({
            "repeats": hit.repeats, "windowMs": super::loops::LOOP_WINDOW_MS,
            "retryAfterMs": hit.retry_after_ms, "scene": scene.to_json(), "changesThatCount": change,
        }),
    )
}

/// Task profiles exist but the session never looked for a matching task (warns once).
fn task_discovery(r: &mut Run<'_>) -> bool {
    if r.call.tool.starts_with("nova.task_")
        || r.state.task_discovery
        || r.state.discovery_warned
        || !r.facts.has_profiles()
    {
        return false;
    }
    r.state.discovery_warned = true;
    r.fire(
        gate::TASK_DISCOVERY,
        "etm.task_discovery_recommended",
        "Task profiles exist: check nova.task_search / nova.task_match before starting.".into(),
        None,
        json!({"clearWith": TASK_DISCOVERY_CLEARS}),
    )
}

/// The agent's active task run is being ignored.
fn active_instance(r: &mut Run<'_>) -> bool {
    if r.call.tool.starts_with("nova.task_") {
        return false;
    }
    r.state.calls_since_task += 1;
    if r.state.calls_since_task < ACTIVE_INSTANCE_CALLS {
        return false;
    }
    let Some(id) = r.facts.active_instance(r.call.agent) else { return false };
    let calls = r.state.calls_since_task;
    r.fire(
        gate::ACTIVE_INSTANCE,
        "etm.active_instance_context",
        format!("Task run {id} is active; report progress with nova.task_instance_progress."),
        None,
        json!({"instanceId": id, "callsSinceTaskInteraction": calls, "clearWith": ACTIVE_INSTANCE_CLEARS}),
    )
}

/// `targetId: active` while the active tab changed since the agent last looked.
fn tab_awareness(r: &mut Run<'_>) -> bool {
    if r.call.target_arg() != "active" || !r.call.on_tab() {
        return false;
    }
    let active = r.facts.browser().tabs.iter().find(|t| t.active).map(|t| t.target_id.clone());
    let (Some(seen), Some(now_active)) = (r.state.last_active.clone(), active) else { return false };
    if seen == now_active {
        return false;
    }
    r.fire(
        gate::TAB_AWARENESS,
        "safety.tab_awareness",
        format!("The active tab is now {now_active}, not {seen} as when you last looked; perceive it or pass targetId."),
        None,
        json!({"lastSeenActive": seen, "activeNow": now_active, "clearWith": ["nova.perceive"]}),
    )
}

/// A page call on a site whose semantic learning opportunity stayed unresolved (`warned` or
/// `strict`); the tools that resolve it take no tab, so this gate never stands in their way.
fn semantic_learning(r: &mut Run<'_>) -> bool {
    let Some(tab) = r.call.tab(r.facts.browser()) else { return false };
    let Ok(site) = crate::pks::scope::normalize(&tab.url) else { return false };
    let Some((id, state)) = r.facts.semantic(&site) else { return false };
    if state == "prompted" {
        return false;
    }
    r.fire(
        gate::SEMANTIC_LEARNING,
        "pks.semantic_learning",
        format!(
            "A learning opportunity on {site} ({id}) is still open: store the situation with nova.pks_upsert, or \
             resolve it with nova.learn_resolve_opportunity (upsert, not_applicable, unsafe, already_known, defer)."
        ),
        None,
        json!({"opportunityId": id, "escalation": state, "site": site, "clearWith": SEMANTIC_LEARNING_CLEARS}),
    )
}

/// A same-tab `nova.navigate` away from a route PKS knows as a fragile single-page app.
fn spa_navigation(r: &mut Run<'_>) -> bool {
    if r.call.tool != "nova.navigate" || r.call.args.get("newTab").and_then(Value::as_bool) == Some(true) {
        return false;
    }
    let Some(tab) = r.call.tab(r.facts.browser()) else { return false };
    let Ok(site) = crate::pks::scope::normalize(&tab.url) else { return false };
    let path = crate::url::parts(&tab.url).map_or_else(|| "/".to_owned(), |p| p.path);
    let Some(why) = r.facts.spa_risk(&site, &path) else { return false };
    r.fire(
        gate::SPA_NAVIGATION,
        "pks.spa_navigation_block",
        format!(
            "Leaving {path} on {site} with a full navigation would lose the app's state ({why}): move inside the app \
             with nova.route, open the address in a new tab (newTab: true), or override with _meta.forceBypass."
        ),
        None,
        json!({"site": site, "route": path, "why": why, "clearWith": SPA_NAVIGATION_CLEARS,
               "alternatives": ["nova.navigate with newTab: true", "_meta.forceBypass: true"]}),
    )
}

/// What a call that ran did to the session: bundles and task lookups, perception, the loop
/// memory, the active tab the agent saw.
pub struct Ran<'a> {
    /// The call.
    pub call: Call<'a>,
    /// The tab it resolved to, when it touched one.
    pub target: Option<&'a str>,
    /// Whether it succeeded.
    pub ok: bool,
    /// The tab's navigation epoch when it started, when known.
    pub nav_epoch_before: Option<u32>,
}

/// Updates the session after a call ran (blocked calls do not come here).
pub fn after_call(state: &mut SessionState, facts: &dyn Facts, ran: &Ran<'_>) {
    let tool = ran.call.tool;
    if tool.starts_with("nova.task_") {
        state.task_discovery = true;
        if tool.starts_with("nova.task_instance_") {
            state.calls_since_task = 0;
        }
    }
    let kind = crate::registry::classify(tool).0;
    if ran.ok && !matches!(kind, crate::observation::ActionKind::Read | crate::observation::ActionKind::Meta)
    {
        state.writes += 1;
    }
    let browser = facts.browser();
    if !ran.call.setup() {
        let left = scene(browser, state, &ran.call, ran.target);
        state.loops.record(tool, call_key(ran.call.args), left, facts.now_ms());
    }
    let Some(target) = ran.target else { return };
    if ran.ok && perceives(tool) {
        let epoch = browser.tabs.iter().find(|t| t.target_id == target).map(|t| t.nav_epoch);
        if let Some(e) = epoch.or(ran.nav_epoch_before) {
            state.perceived.insert(target.to_owned(), e);
        }
    }
    if matches!(tool, "nova.navigate" | "nova.route") {
        state.perceived.remove(target);
    }
    // The active tab as the agent knows it: what it last looked at, or made active itself (a
    // capture activates its tab; so does a navigation in a new tab). The tab list may not
    // have caught up with the agent's own change yet.
    let made_active = tool == "nova.capture_screenshot"
        || (tool == "nova.navigate" && ran.call.args.get("newTab").and_then(Value::as_bool) == Some(true));
    if ran.ok && made_active {
        state.last_active = Some(target.to_owned());
    } else if ran.ok && matches!(tool, "nova.perceive" | "nova.navigate") {
        state.last_active = browser.tabs.iter().find(|t| t.active).map(|t| t.target_id.clone());
    }
}
