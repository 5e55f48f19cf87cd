//! The real gate pipeline driven through random sessions against a model browser.
//!
//! 1. No deadlock: whenever a bypassable gate blocks a call, every call its `clearWith` names
//!    passes the gates in that same state (or the block says the real way out in `wayOut`),
//!    and a loop block frees the call after `retryAfterMs` or once the page changed.
//! 2. A compliant agent at the product's default settings never meets a block, whatever the
//!    page and the person do meanwhile (pages changing on their own, tabs switched, time).

use std::collections::{BTreeMap, HashMap};

use nova_host::aag::SessionState;
use nova_host::aag::control::{Reclaim, Stop};
use nova_host::aag::pipeline::{self, Call, Facts, Ran};
use nova_host::bridge::BrowserState;
use nova_host::settings::Settings;
use nova_shared::protocol::{PageStamp, TabInfo};
use proptest::prelude::*;
use serde_json::{Map, Value, json};

const TABS: usize = 3;
const URLS: [&str; 5] = [
    "https://shop.test/",
    "https://shop.test/cart",
    "https://docs.test/a",
    "https://blocked.test/",
    "https://broken.test/",
];
/// A page the content script cannot run in: every page call on it fails.
const BROKEN: &str = "https://broken.test/";

/// One document in one tab: the truth the model browser holds.
#[derive(Debug, Clone)]
struct Page {
    epoch: u32,
    url: String,
    rev: u32,
    overlay: bool,
    /// Field values (typing the same text again is no change).
    fields: HashMap<u8, u8>,
}

/// The model world: pages, what the hub heard of them, the person's controls, the clock.
#[derive(Debug, Clone)]
struct World {
    pages: Vec<Page>,
    active: usize,
    now: i64,
    settings: Settings,
    browser: BrowserState,
    /// The hub's record of overlays: (epoch of the document a perceive saw it on, overlay).
    overlays: HashMap<String, (u32, Value)>,
    stop: bool,
}

impl World {
    fn new(settings: Settings) -> Self {
        let pages = (0..TABS)
            .map(|i| Page {
                epoch: 1,
                url: URLS[i % URLS.len()].into(),
                rev: 0,
                overlay: false,
                fields: HashMap::new(),
            })
            .collect();
        let mut w = Self {
            pages,
            active: 0,
            now: 1_000_000,
            settings,
            browser: BrowserState::default(),
            overlays: HashMap::new(),
            stop: false,
        };
        w.tab_list();
        w
    }

    fn id(i: usize) -> String {
        (i + 1).to_string()
    }

    fn index(&self, target: &str) -> Option<usize> {
        if target == "active" {
            Some(self.active)
        } else {
            target.parse::<usize>().ok()?.checked_sub(1).filter(|i| *i < TABS)
        }
    }

    /// The extension's tab list event.
    fn tab_list(&mut self) {
        self.browser.tabs = self
            .pages
            .iter()
            .enumerate()
            .map(|(i, p)| TabInfo {
                target_id: Self::id(i),
                window_id: 1,
                url: p.url.clone(),
                title: String::new(),
                active: i == self.active,
                nav_epoch: p.epoch,
            })
            .collect();
    }

    /// A document answered: its stamp reaches the hub before the reply.
    fn stamp(&mut self, i: usize) {
        let p = &self.pages[i];
        let stamp = PageStamp { target_id: Self::id(i), frame_id: 0, nav_epoch: p.epoch, doc_rev: p.rev };
        self.browser.stamps.insert((Self::id(i), 0), stamp);
    }

    fn navigate(&mut self, i: usize, url: &str) {
        let p = &mut self.pages[i];
        p.epoch += 1;
        p.url = url.into();
        p.rev = 0;
        p.overlay = false;
        p.fields.clear();
        // The hub's overlay record is left as it is: the gate must see it belongs to the old
        // document.
        self.tab_list();
    }
}

impl Facts for World {
    fn settings(&self) -> &Settings {
        &self.settings
    }
    fn now_ms(&self) -> i64 {
        self.now
    }
    fn stop(&self) -> Option<Stop> {
        self.stop.then(|| Stop { at_ms: 0, by: "popup".into() })
    }
    fn disk_low(&self) -> Option<(u64, u64, String)> {
        None
    }
    fn store_trouble(&self) -> Option<nova_host::tob::health::Trouble> {
        None
    }
    fn browser(&self) -> &BrowserState {
        &self.browser
    }
    fn held_by(&self, _agent: &str) -> Vec<String> {
        Vec::new()
    }
    fn reclaim(&self, _target: &str, _agent: &str) -> Option<Reclaim> {
        None
    }
    fn overlay(&self, target: &str) -> Option<(u32, Value)> {
        self.overlays.get(target).cloned()
    }
    fn has_profiles(&self) -> bool {
        false
    }
    fn semantic(&self, _site: &str) -> Option<(String, String)> {
        // The world has no learning opportunities: the gate only warns by default, and the
        // tools that clear it take no tab (tests/tests/test_learning.rs drives it).
        None
    }

    fn spa_risk(&self, _site: &str, _path: &str) -> Option<String> {
        // No site of the world is known as a fragile app (tests/tests/test_pks.rs drives it).
        None
    }

    fn active_instance(&self, _agent: &str) -> Option<String> {
        None
    }
}

/// What an agent can ask.
#[derive(Debug, Clone)]
enum Ask {
    Bundle,
    Perceive,
    ReadText(u8),
    Click(u8),
    Type(u8, u8),
    Navigate(u8),
    Screenshot,
    Prompt,
    TaskGet,
}

/// One step of a session: an agent call (on a tab, or `active`), or something the page or
/// the person does.
#[derive(Debug, Clone)]
enum Op {
    Agent(Ask, Option<u8>),
    PageChanges(u8),
    PageNavigates(u8, u8),
    PersonSwitches(u8),
    OverlayAppears(u8),
    OverlayGoes(u8),
    Wait(u32),
}

fn ask() -> impl Strategy<Value = Ask> {
    prop_oneof![
        1 => Just(Ask::Bundle),
        6 => Just(Ask::Perceive),
        3 => (0u8..3).prop_map(Ask::ReadText),
        5 => (0u8..6).prop_map(Ask::Click),
        3 => ((0u8..3), (0u8..3)).prop_map(|(f, t)| Ask::Type(f, t)),
        3 => (0u8..5).prop_map(Ask::Navigate),
        1 => Just(Ask::Screenshot),
        1 => Just(Ask::Prompt),
        1 => Just(Ask::TaskGet),
    ]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        12 => (ask(), proptest::option::weighted(0.8, 0u8..TABS as u8)).prop_map(|(a, t)| Op::Agent(a, t)),
        3 => (0u8..TABS as u8).prop_map(Op::PageChanges),
        1 => ((0u8..TABS as u8), (0u8..5)).prop_map(|(t, u)| Op::PageNavigates(t, u)),
        1 => (0u8..TABS as u8).prop_map(Op::PersonSwitches),
        1 => (0u8..TABS as u8).prop_map(Op::OverlayAppears),
        1 => (0u8..TABS as u8).prop_map(Op::OverlayGoes),
        2 => (0u32..40_000).prop_map(Op::Wait),
    ]
}

fn call_of(ask: &Ask, target: &str) -> (&'static str, Map<String, Value>) {
    let (tool, args) = match ask {
        Ask::Bundle => ("nova.tools_bundle", json!({"bundle": "browser_automation"})),
        Ask::Perceive => ("nova.perceive", json!({})),
        Ask::ReadText(n) => ("nova.read_text", json!({"maxChars": 100 + u32::from(*n)})),
        Ask::Click(s) => ("nova.click_selector", json!({"selector": format!("#b{s}")})),
        Ask::Type(f, t) => {
            ("nova.type_selector", json!({"selector": format!("#f{f}"), "text": format!("t{t}")}))
        }
        Ask::Navigate(u) => ("nova.navigate", json!({"url": URLS[usize::from(*u)]})),
        Ask::Screenshot => ("nova.capture_screenshot", json!({})),
        Ask::Prompt => ("nova.permission_prompt", json!({"message": "may I?"})),
        Ask::TaskGet => ("nova.task_instance_get", json!({"instanceId": "i1"})),
    };
    let Value::Object(mut args) = args else { unreachable!() };
    if target != "active" {
        args.insert("targetId".into(), json!(target));
    }
    (tool, args)
}

/// A session: the world, the real session state, and what was blocked.
struct Sim {
    world: World,
    state: SessionState,
    blocks: Vec<(String, Value)>,
}

impl Sim {
    fn new(settings: Settings) -> Self {
        Self { world: World::new(settings), state: SessionState::default(), blocks: Vec::new() }
    }

    /// The hub's probe: a call that looks like a loop asks the page for its revision.
    fn probe(&mut self, call: &Call<'_>) {
        if let Some((target, _)) = pipeline::looks_like_loop(&self.world, &self.state, call)
            && let Some(i) = self.world.index(&target)
        {
            self.world.stamp(i);
        }
    }

    /// Runs one call through the gates and, when it passes, through the model browser.
    /// Returns the block, if any.
    fn call(&mut self, ask: &Ask, target: &str) -> Option<Value> {
        let (tool, args) = call_of(ask, target);
        let call = Call { tool, args: &args, agent: "default" };
        self.probe(&call);
        let out = pipeline::preflight(&self.world, &mut self.state, &call);
        if let Some(block) = out.block {
            let aag = block.meta.get("io.nova/aag").cloned().unwrap_or_default();
            check_way_out(&self.world, &self.state, &call, &aag);
            self.blocks.push((tool.to_owned(), aag.clone()));
            return Some(aag);
        }
        let index =
            if call.on_tab() || tool == "nova.permission_prompt" { self.world.index(target) } else { None };
        let before = index.map(|i| self.world.pages[i].epoch);
        let mut resolved = index.filter(|_| call.on_tab());
        let broken = index.is_some_and(|i| self.world.pages[i].url == BROKEN);
        let page_call = matches!(ask, Ask::Perceive | Ask::ReadText(_) | Ask::Click(_) | Ask::Type(..));
        if broken && page_call {
            let target_id = resolved.map(World::id);
            let ran = Ran { call, target: target_id.as_deref(), ok: false, nav_epoch_before: before };
            pipeline::after_call(&mut self.state, &self.world, &ran);
            self.world.now += 150;
            return None;
        }
        match (ask, index) {
            (Ask::Bundle, _) => {
                self.state.bundles.insert("browser_automation".into());
            }
            (Ask::Perceive, Some(i)) => {
                self.world.stamp(i);
                let id = World::id(i);
                if self.world.pages[i].overlay {
                    let epoch = self.world.pages[i].epoch;
                    self.world
                        .overlays
                        .insert(id, (epoch, json!({"items": [{"kind": "sso", "provider": "idp"}]})));
                } else {
                    self.world.overlays.remove(&id);
                }
            }
            (Ask::ReadText(_), Some(i)) => self.world.stamp(i),
            (Ask::Click(s), Some(i)) => match s % 3 {
                0 => {
                    // The click followed a link: the old document answered, then the tab moved on.
                    self.world.stamp(i);
                    let url = URLS[usize::from(*s) % URLS.len()];
                    self.world.navigate(i, url);
                }
                1 => {
                    self.world.pages[i].rev += 1;
                    self.world.stamp(i);
                }
                _ => self.world.stamp(i),
            },
            (Ask::Type(f, t), Some(i)) => {
                let page = &mut self.world.pages[i];
                if page.fields.insert(*f, *t) != Some(*t) {
                    page.rev += 1;
                }
                self.world.stamp(i);
            }
            (Ask::Navigate(u), Some(i)) => self.world.navigate(i, URLS[usize::from(*u)]),
            (Ask::Screenshot, Some(i)) => {
                // A capture shows its tab first; the tab list hears of it a moment later.
                self.world.active = i;
            }
            (Ask::Prompt, Some(i)) => {
                // The person approves: the overlay is theirs to lift.
                self.world.overlays.remove(&World::id(i));
            }
            (Ask::Prompt, None) => {}
            _ => resolved = None,
        }
        let target_id = resolved.map(World::id);
        let ran = Ran { call, target: target_id.as_deref(), ok: true, nav_epoch_before: before };
        pipeline::after_call(&mut self.state, &self.world, &ran);
        self.world.now += 150;
        None
    }

    fn happen(&mut self, op: &Op) {
        let t = |i: &u8| usize::from(*i) % TABS;
        match op {
            Op::Agent(..) => {}
            Op::PageChanges(i) => self.world.pages[t(i)].rev += 1,
            Op::PageNavigates(i, u) => self.world.navigate(t(i), URLS[usize::from(*u)]),
            Op::PersonSwitches(i) => {
                self.world.active = t(i);
                self.world.tab_list();
            }
            Op::OverlayAppears(i) => self.world.pages[t(i)].overlay = true,
            Op::OverlayGoes(i) => self.world.pages[t(i)].overlay = false,
            Op::Wait(ms) => self.world.now += i64::from(*ms),
        }
    }
}

/// The no-deadlock rule for one block.
fn check_way_out(world: &World, state: &SessionState, call: &Call<'_>, aag: &Value) {
    if aag["forceBypassAvailable"] != true {
        return; // the person's own controls: theirs to lift
    }
    let gate = aag["gateId"].as_str().unwrap_or_default();
    let target = aag["details"]["targetId"]
        .as_str()
        .map(str::to_owned)
        .unwrap_or_else(|| call.target_arg().to_owned());
    let passes = |world: &World, tool: &str, args: &Map<String, Value>| {
        let mut s = state.clone();
        let c = Call { tool, args, agent: call.agent };
        pipeline::preflight(world, &mut s, &c).block.map(|b| b.meta["io.nova/aag"].clone())
    };
    if gate == "loop.detected" {
        let wait = aag["retryAfterMs"].as_u64().expect("a loop block says when the call is free");
        let mut later = world.clone();
        later.now += i64::try_from(wait).unwrap_or(i64::MAX);
        assert_eq!(passes(&later, call.tool, call.args), None, "free after retryAfterMs={wait}: {aag}");
        return;
    }
    let clear = aag["details"]["clearWith"].as_array().cloned().unwrap_or_default();
    if clear.is_empty() {
        assert!(
            aag["details"]["wayOut"].is_string(),
            "a block with no clearWith must say the way out: {aag}"
        );
        return;
    }
    for tool in clear {
        let tool = tool.as_str().expect("clearWith names tools");
        let mut args = Map::new();
        args.insert("targetId".into(), json!(target));
        assert_eq!(
            passes(world, tool, &args),
            None,
            "`{tool}` must clear `{gate}` and pass every gate: {aag}"
        );
    }
}

#[test]
fn the_agents_own_capture_does_not_count_as_a_tab_change() {
    let mut sim = Sim::new(Settings::default());
    sim.call(&Ask::Bundle, "active");
    sim.call(&Ask::Perceive, "active");
    // The agent captures tab 2, which makes it the active tab; then it works on `active`.
    sim.call(&Ask::Screenshot, "2");
    sim.world.tab_list();
    let (tool, args) = call_of(&Ask::Perceive, "active");
    let out = pipeline::preflight(&sim.world, &mut sim.state, &Call { tool, args: &args, agent: "default" });
    assert!(out.warnings.get("tabAwareness").is_none(), "{:?}", out.warnings);
    // The person switching tabs is still pointed out.
    sim.call(&Ask::Perceive, "active");
    sim.happen(&Op::PersonSwitches(2));
    let out = pipeline::preflight(&sim.world, &mut sim.state, &Call { tool, args: &args, agent: "default" });
    assert!(out.warnings.get("tabAwareness").is_some(), "{:?}", out.warnings);
}

fn policy_settings() -> Settings {
    serde_json::from_value(json!({"domainPolicy": {"blocked.test": {"read": "block"}}})).expect("settings")
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    /// Any agent, any world: every block of a bypassable gate has a way out that passes.
    #[test]
    fn every_block_has_a_way_out_that_passes(ops in proptest::collection::vec(op(), 1..120), policy in any::<bool>()) {
        let mut sim = Sim::new(if policy { policy_settings() } else { Settings::default() });
        for op in &ops {
            match op {
                Op::Agent(ask, tab) => {
                    let target = tab.map_or_else(|| "active".to_owned(), |t| World::id(usize::from(t)));
                    sim.call(ask, &target);
                }
                other => sim.happen(other),
            }
        }
    }

    /// A compliant agent at the product defaults never meets a block.
    #[test]
    fn a_compliant_agent_never_meets_a_block(ops in proptest::collection::vec(op(), 1..150)) {
        let mut sim = Sim::new(Settings::default());
        let mut agent = Compliant::default();
        for op in &ops {
            match op {
                Op::Agent(ask, tab) => agent.act(&mut sim, ask, tab.map_or(0, usize::from)),
                // A compliant agent is not told of a navigation the page makes on its own; that
                // one is the subject of the no-deadlock property.
                Op::PageNavigates(..) => {}
                other => sim.happen(other),
            }
        }
        prop_assert!(sim.blocks.is_empty(), "a compliant agent was blocked: {:?}", sim.blocks);
    }
}

/// What an agent saw a call leave behind: the page's epoch, revision and URL.
type Seen = (u32, u32, String);

/// An agent that follows the quickstart: a bundle first; an explicit `targetId`; perceive after
/// every navigation it caused or saw before touching the page; ask the person about an
/// identity overlay; never repeat a call more than four times a minute on a page it saw
/// unchanged (it waits instead).
#[derive(Default)]
struct Compliant {
    /// Tab -> the epoch it last perceived.
    perceived: HashMap<usize, u32>,
    /// (tool, args) -> when it ran and the page it left: (epoch, revision, URL).
    history: BTreeMap<String, Vec<(i64, Seen)>>,
}

impl Compliant {
    fn act(&mut self, sim: &mut Sim, ask: &Ask, tab: usize) {
        if sim.state.bundles.is_empty() {
            self.send(sim, &Ask::Bundle, tab);
        }
        let mutating = matches!(ask, Ask::Click(_) | Ask::Type(..));
        if mutating && self.perceived.get(&tab) != Some(&sim.world.pages[tab].epoch) {
            self.send(sim, &Ask::Perceive, tab);
            if self.perceived.get(&tab) != Some(&sim.world.pages[tab].epoch) {
                return; // the page could not be read: it does not act blind
            }
        }
        let seen_overlay =
            sim.world.overlays.get(&World::id(tab)).is_some_and(|(e, _)| *e == sim.world.pages[tab].epoch);
        if mutating && seen_overlay {
            self.send(sim, &Ask::Prompt, tab);
        }
        self.send(sim, ask, tab);
    }

    fn send(&mut self, sim: &mut Sim, ask: &Ask, tab: usize) {
        let (tool, args) = call_of(ask, &World::id(tab));
        let key = format!("{tool} {}", Value::Object(args));
        let page = &sim.world.pages[tab];
        let state = (page.epoch, page.rev, page.url.clone());
        let now = sim.world.now;
        // Identical calls within the minute that left the page as it is now.
        let times = self.history.entry(key.clone()).or_default();
        times.retain(|(t, _)| now - t <= 60_000);
        if times.iter().filter(|(_, after)| *after == state).count() >= 4 {
            sim.world.now += 61_000; // nothing changed: wait rather than repeat
        }
        let epoch_before = sim.world.pages[tab].epoch;
        let blocked = sim.call(ask, &World::id(tab)).is_some(); // recorded in sim.blocks
        let page = &sim.world.pages[tab];
        let after = (page.epoch, page.rev, page.url.clone());
        let now = sim.world.now;
        self.history.entry(key).or_default().push((now, after));
        if blocked {
            return;
        }
        let failed = sim.world.pages[tab].url == BROKEN;
        if matches!(ask, Ask::Perceive | Ask::ReadText(_)) && !failed {
            self.perceived.insert(tab, sim.world.pages[tab].epoch);
        }
        // The agent sees from the result that its action navigated.
        if sim.world.pages[tab].epoch != epoch_before {
            self.perceived.remove(&tab);
        }
    }
}
