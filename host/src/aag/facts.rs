//! What the hub tells the gate pipeline: the person's settings and controls, the browser as
//! last heard, leases and task runs; and the one round trip the gates may cause, asking a page
//! whether it changed when a call looks like a loop.

use std::cell::OnceCell;
use std::time::Duration;

use nova_shared::protocol::{RevParams, RevResult, method};
use serde_json::{Map, Value};

use super::control::{Reclaim, Stop};
use super::pipeline::Preflight;
use super::pipeline::{self, Call, Facts, Ran};
use super::resume::Durable;
use super::{SessionState, SharedState, state_of};
use crate::bridge::BrowserState;
use crate::call::Session;
use crate::hub::Hub;
use crate::settings::Settings;
use crate::time::now_ms;

/// How long the page may take to say its revision; past it the gates judge on what the hub
/// last heard.
const REV_PROBE_TIMEOUT: Duration = Duration::from_millis(1_500);

/// The hub's answers, gathered for one call (store look-ups only when a gate asks).
struct HubFacts<'a> {
    hub: &'a Hub,
    /// Read from disk when a gate first asks (bookkeeping after a call often never does).
    settings: OnceCell<Settings>,
    browser: BrowserState,
    now: i64,
}

impl Facts for HubFacts<'_> {
    fn settings(&self) -> &Settings {
        self.settings.get_or_init(|| Settings::load(&self.hub.data))
    }

    fn now_ms(&self) -> i64 {
        self.now
    }

    fn stop(&self) -> Option<Stop> {
        self.hub.control.stop()
    }

    fn disk_low(&self) -> Option<(u64, u64, String)> {
        let min = self.settings().disk_space_low_mb.saturating_mul(1_048_576);
        let root = self.hub.data.root();
        let free = fs4::available_space(root).ok()?;
        (free < min).then(|| (free, min, root.display().to_string()))
    }

    fn store_trouble(&self) -> Option<crate::tob::health::Trouble> {
        self.hub.recorder.trouble()
    }

    fn browser(&self) -> &BrowserState {
        &self.browser
    }

    fn held_by(&self, agent: &str) -> Vec<String> {
        self.hub.leases.held_by(agent)
    }

    fn reclaim(&self, target: &str, agent: &str) -> Option<Reclaim> {
        self.hub.control.peek_reclaim(target, agent)
    }

    fn overlay(&self, target: &str) -> Option<(u32, Value)> {
        self.hub.control.overlay(target)
    }

    fn has_profiles(&self) -> bool {
        self.hub
            .etm
            .with(|c| {
                c.query_row("SELECT EXISTS (SELECT 1 FROM task_profiles WHERE archived = 0)", [], |r| {
                    r.get::<_, bool>(0)
                })
            })
            .unwrap_or(false)
    }

    fn semantic(&self, site: &str) -> Option<(String, String)> {
        let open = self.hub.lcj.with(|c| crate::lcj::opportunities::open_on(c, site)).ok()?;
        let rank = |s: &str| match s {
            "strict" => 2,
            "warned" => 1,
            _ => 0,
        };
        open.into_iter().max_by_key(|o| rank(&o.state)).map(|o| (o.id, o.state))
    }

    fn spa_risk(&self, site: &str, path: &str) -> Option<String> {
        let domain = self.hub.pks.with(|c| crate::pks::records::domain(c, site)).ok()??;
        crate::pks::model::spa_risk(&domain.context, path)
    }

    fn active_instance(&self, agent: &str) -> Option<String> {
        let stale = now_ms() - 3_600_000;
        self.hub
            .etm
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

fn facts(hub: &Hub) -> HubFacts<'_> {
    HubFacts { hub, settings: OnceCell::new(), browser: hub.bridge.state(), now: now_ms() }
}

/// Runs the gates before a call. A call that looks like a loop on what the hub last heard
/// of its page first asks the page for its revision now (one short round trip, only
/// then): a page that changed on its own meanwhile is progress.
pub async fn preflight(
    hub: &Hub,
    session: &Session,
    tool: &str,
    args: &Map<String, Value>,
    agent: &str,
) -> Preflight {
    let call = Call { tool, args, agent };
    let mut facts = facts(hub);
    let suspect = pipeline::looks_like_loop(&facts, &lock(&state_of(session)), &call);
    if let Some((target, frame)) = suspect {
        let params = RevParams { target, frame_id: (frame != 0).then_some(frame) };
        match hub.bridge.call::<RevResult>(method::REV, params, REV_PROBE_TIMEOUT).await {
            // The reply's stamp reached the bridge before the reply.
            Ok(_) => facts.browser = hub.bridge.state(),
            Err(e) => {
                tracing::debug!(error = %e, "no revision from the page; judging on the last one heard")
            }
        }
    }
    let out = pipeline::preflight(&facts, &mut lock(&state_of(session)), &call);
    if let Some(target) = &out.reclaim_delivered {
        hub.control.take_reclaim(target, agent);
    }
    out
}

/// Updates the session after a call ran.
pub fn after_call(
    hub: &Hub,
    session: &Session,
    args: &Map<String, Value>,
    obs: &crate::observation::Observation,
) {
    let facts = facts(hub);
    let ran = Ran {
        call: Call { tool: &obs.tool, args, agent: &obs.agent_id },
        target: obs.target_id.as_deref(),
        ok: obs.ok,
        nav_epoch_before: obs.nav_epoch_before,
    };
    let shared = state_of(session);
    let mut state = lock(&shared);
    pipeline::after_call(&mut state, &facts, &ran);
    if let Some(key) = state.resume_key.clone() {
        let url_of =
            |t: &str| facts.browser.tabs.iter().find(|tab| tab.target_id == t).map(|tab| tab.url.clone());
        let durable = Durable::of(&state, url_of);
        if state.saved.as_ref() != Some(&durable) {
            hub.resumes.save(&key, &durable);
            state.saved = Some(durable);
        }
    }
}

/// Names a session after the one `nova mcp` keeps across hub restarts, and gives it back
/// what the gates knew of it before a restart.
pub async fn resume_session(hub: &Hub, session: &Session, key: &str) {
    lock(&state_of(session)).resume_key = Some(key.to_owned());
    let Some(durable) = hub.resumes.load(key) else { return };
    // A hub just started by the browser may not have heard the tab list yet.
    if hub.bridge.wait_hello(Duration::from_secs(5)).await && hub.bridge.state().tabs.is_empty() {
        hub.bridge.refresh_tabs(Duration::from_secs(2)).await;
    }
    let browser = hub.bridge.state();
    tracing::info!(session = key, "gate state of a returning session restored");
    durable.restore(&mut lock(&state_of(session)), |t| {
        browser.tabs.iter().find(|tab| tab.target_id == t).map(|tab| (tab.nav_epoch, tab.url.clone()))
    });
}

fn lock(state: &SharedState) -> std::sync::MutexGuard<'_, SessionState> {
    state.lock().unwrap_or_else(|p| p.into_inner())
}
