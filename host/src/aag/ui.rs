//! The person's side of the hub: who is connected (presence), the live activity feed, and the
//! `ui.*` requests of the extension's popup and options page (STOP, settings, approvals).

use std::collections::BTreeMap;
use std::sync::{Arc, Weak};

use nova_shared::protocol::WireError;
use nova_shared::ui::{
    self, Agent, Answer, GateView, HeldTab, SettingsUpdate, SettingsView, Status, StopState, method,
};
use serde_json::{Value, json};

use crate::bridge::{self, BrowserRequests};
use crate::hub::Hub;
use crate::settings::{GateMode, Rule, Settings};

/// Leaves the presence list when the last clone of a session's handler is dropped.
pub struct Leave {
    hub: Arc<Hub>,
    session: String,
}

impl Leave {
    /// Joins `session` now; leaves on drop.
    pub fn join(hub: Arc<Hub>, session: &str) -> Self {
        hub.presence.join(session);
        Self { hub, session: session.to_owned() }
    }
}

impl Drop for Leave {
    fn drop(&mut self) {
        self.hub.presence.leave(&self.session);
    }
}

/// Answers the extension's `ui.*` requests for a hub.
pub struct Service {
    hub: Weak<Hub>,
}

impl Service {
    /// Serves `hub`'s browser.
    pub fn attach(hub: &Arc<Hub>) {
        hub.bridge.serve(Arc::new(Self { hub: Arc::downgrade(hub) }));
    }
}

impl BrowserRequests for Service {
    fn answer(&self, name: &str, params: Value) -> bridge::Answer {
        let hub = self.hub.upgrade();
        let name = name.to_owned();
        Box::pin(async move {
            let hub = hub.ok_or_else(|| wire("hub_stopping", "the hub is stopping"))?;
            ui_answer(&hub, &name, params).await
        })
    }
}

fn wire(code: &str, message: impl Into<String>) -> WireError {
    WireError { code: code.to_owned(), message: message.into() }
}

fn bad(message: impl Into<String>) -> WireError {
    wire(nova_shared::reason::BAD_PARAMS, message)
}

fn store_err(e: impl std::fmt::Display) -> WireError {
    wire(nova_shared::reason::INTERNAL, format!("the store failed: {e}"))
}

fn to_value<T: serde::Serialize>(v: &T) -> Result<Value, WireError> {
    serde_json::to_value(v).map_err(|e| wire(nova_shared::reason::INTERNAL, e.to_string()))
}

/// The settings page's "Open activity report": a report of the last `days` (default 7), offered
/// once at a loopback URL the browser opens.
async fn report(hub: &Hub, params: Value) -> Result<Value, WireError> {
    #[derive(serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Params {
        days: Option<i64>,
    }
    let p: Params = serde_json::from_value(params).map_err(|e| bad(format!("report: {e}")))?;
    let days = p.days.unwrap_or(7);
    if !(1..=90).contains(&days) {
        return Err(bad(format!("`days` must be 1 to 90, not {days}")));
    }
    let now = crate::time::now_ms();
    let filter =
        crate::support::calls::Filter { since_ms: Some(now - days * 86_400_000), ..Default::default() };
    let data = hub.data.clone();
    let made = tokio::task::spawn_blocking(move || crate::support::report::of_store(&data, &filter, false))
        .await
        .map_err(|e| wire(nova_shared::reason::INTERNAL, e.to_string()))?;
    let (html, calls) =
        made.map_err(|e| wire(nova_shared::reason::INTERNAL, format!("the report failed: {e}")))?;
    let url = hub.pages.offer(html, now).ok_or_else(|| {
        wire(nova_shared::reason::INTERNAL, "the hub's HTTP endpoint is not up yet; try again")
    })?;
    Ok(json!({"url": url, "calls": calls}))
}

async fn ui_answer(hub: &Hub, name: &str, params: Value) -> Result<Value, WireError> {
    match name {
        method::STATUS => to_value(&ui_status(hub)),
        method::STOP => {
            hub.control.engage("popup").map_err(store_err)?;
            tracing::warn!("emergency stop engaged from the browser");
            stop_changed(hub)
        }
        method::RESUME => {
            hub.control.release("popup").map_err(store_err)?;
            tracing::info!("emergency stop released from the browser");
            stop_changed(hub)
        }
        method::SETTINGS => to_value(&settings_view(&hub.data)),
        method::SETTINGS_SET => {
            let update: SettingsUpdate =
                serde_json::from_value(params).map_err(|e| bad(format!("settings update: {e}")))?;
            let mut s = Settings::try_load(&hub.data)
                .map_err(|e| bad(format!("settings.json is not valid ({e}); fix or delete it first")))?;
            apply(&mut s, update)?;
            s.save(&hub.data).map_err(|e| wire(nova_shared::reason::INTERNAL, e.to_string()))?;
            tracing::info!("settings changed from the options page");
            to_value(&settings_view(&hub.data))
        }
        method::APPROVALS => to_value(&hub.control.approvals(200).map_err(store_err)?),
        method::REPORT => report(hub, params).await,
        method::ANSWER => {
            let a: Answer = serde_json::from_value(params).map_err(|e| bad(format!("answer: {e}")))?;
            if !matches!(a.decision.as_str(), "approved" | "denied") {
                return Err(bad(format!("`decision` must be approved or denied, not `{}`", a.decision)));
            }
            let p = hub.prompts.answer(&hub.control, &a.prompt_id, &a.decision).ok_or_else(|| {
                wire("prompt_not_pending", format!("prompt `{}` is not waiting for an answer", a.prompt_id))
            })?;
            to_value(&p)
        }
        other => Err(wire(nova_shared::reason::UNKNOWN_METHOD, format!("the host has no method `{other}`"))),
    }
}

fn stop_changed(hub: &Hub) -> Result<Value, WireError> {
    let state = stop_state(hub.control.stop());
    let v = to_value(&state)?;
    hub.bridge.notify(method::STOP_CHANGED, v.clone());
    Ok(v)
}

/// Everything the popup shows.
pub fn ui_status(hub: &Hub) -> Status {
    let tabs = hub.bridge.state().tabs;
    let held = |target: &str, agent: &str| {
        let t = tabs.iter().find(|t| t.target_id == target);
        HeldTab {
            target_id: target.to_owned(),
            agent_id: agent.to_owned(),
            title: t.map(|t| t.title.clone()).unwrap_or_default(),
            url: t.map(|t| t.url.clone()).unwrap_or_default(),
        }
    };
    let leases = hub.leases.all();
    let agents: Vec<Agent> = hub
        .presence
        .agents()
        .into_iter()
        .filter(|(_, s)| !s.client.is_empty() || s.calls > 0)
        .map(|(id, s)| Agent {
            session_id: id,
            client: s.client,
            tabs: leases.iter().filter(|(_, o)| s.agents.contains(o)).map(|(t, o)| held(t, o)).collect(),
            agent_ids: s.agents.into_iter().collect(),
            calls: s.calls,
            last_call_at_ms: s.last_call_at_ms,
        })
        .collect();
    let idle_tabs = leases
        .iter()
        .filter(|(_, o)| !agents.iter().any(|a| a.agent_ids.contains(o)))
        .map(|(t, o)| held(t, o))
        .collect();
    Status {
        host_version: env!("CARGO_PKG_VERSION").to_owned(),
        hub_pid: std::process::id(),
        stop: stop_state(hub.control.stop()),
        agents,
        idle_tabs,
        activity: hub.presence.feed(),
        prompts: hub.prompts.pending(),
    }
}

fn stop_state(stop: Option<super::control::Stop>) -> StopState {
    match stop {
        Some(s) => StopState { engaged: true, by: Some(s.by), at_ms: Some(s.at_ms) },
        None => StopState::default(),
    }
}

/// The options page's view of the settings.
pub fn settings_view(data: &crate::paths::DataDir) -> SettingsView {
    let (s, file_error) = match Settings::try_load(data) {
        Ok(s) => (s, None),
        Err(e) => (Settings::default(), Some(e)),
    };
    SettingsView {
        domain_policy: serde_json::to_value(&s.domain_policy).unwrap_or_else(|_| json!({})),
        gates: super::GATES
            .iter()
            .map(|g| GateView {
                id: g.id.to_owned(),
                mode: super::mode_of(&s, g.id).as_str().to_owned(),
                default_mode: g.default.as_str().to_owned(),
                bypass: g.bypass,
                trigger: g.trigger.to_owned(),
                clear: g.clear.to_owned(),
            })
            .collect(),
        agent_new_tabs_disabled: s.agent_new_tabs_disabled,
        agent_cross_tab_navigation_disabled: s.agent_cross_tab_navigation_disabled,
        file_error,
    }
}

/// Applies an update after checking all of it (nothing changes when any part is wrong).
fn apply(s: &mut Settings, u: SettingsUpdate) -> Result<(), WireError> {
    let mut modes = s.gate_modes.clone();
    for (id, mode) in u.gate_modes.unwrap_or_default() {
        if !super::GATES.iter().any(|g| g.id == id) {
            return Err(bad(format!("`gateModes`: unknown gate `{id}`")));
        }
        if mode == "default" {
            modes.remove(&id);
            continue;
        }
        let m: GateMode = serde_json::from_value(json!(mode)).map_err(|_| {
            bad(format!("`gateModes.{id}` must be off, warn, shadow_block, block or default, not `{mode}`"))
        })?;
        modes.insert(id, m);
    }
    let policy = match u.domain_policy {
        Some(p) => domain_policy(&p)?,
        None => s.domain_policy.clone(),
    };
    s.gate_modes = modes;
    s.domain_policy = policy;
    if let Some(v) = u.agent_new_tabs_disabled {
        s.agent_new_tabs_disabled = v;
    }
    if let Some(v) = u.agent_cross_tab_navigation_disabled {
        s.agent_cross_tab_navigation_disabled = v;
    }
    Ok(())
}

/// Checks a domain policy: domain -> action group -> allow | block.
fn domain_policy(p: &Value) -> Result<BTreeMap<String, BTreeMap<String, Rule>>, WireError> {
    let map = p.as_object().ok_or_else(|| bad("`domainPolicy` must be an object of domains"))?;
    let mut out = BTreeMap::new();
    for (domain, rules) in map {
        let d = domain.trim().to_ascii_lowercase();
        let valid = !d.is_empty()
            && d.len() <= 253
            && d.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_'));
        if !valid {
            return Err(bad(format!(
                "`domainPolicy`: `{domain}` is not a domain name (letters, digits, dots and dashes, at most 253)"
            )));
        }
        let rules = rules.as_object().ok_or_else(|| bad(format!("`domainPolicy.{d}` must be an object")))?;
        let mut checked = BTreeMap::new();
        for (group, rule) in rules {
            if !ui::ACTION_GROUPS.contains(&group.as_str()) {
                return Err(bad(format!(
                    "`domainPolicy.{d}`: unknown action group `{group}` (one of {})",
                    ui::ACTION_GROUPS.join(", ")
                )));
            }
            let r: Rule = serde_json::from_value(rule.clone())
                .map_err(|_| bad(format!("`domainPolicy.{d}.{group}` must be allow or block")))?;
            checked.insert(group.clone(), r);
        }
        out.insert(d, checked);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn updates_are_checked_whole_and_name_the_field() {
        let mut s = Settings::default();
        let bad_gate = SettingsUpdate {
            gate_modes: Some([("no.such_gate".to_owned(), "off".to_owned())].into()),
            ..Default::default()
        };
        assert!(apply(&mut s, bad_gate).expect_err("unknown gate").message.contains("no.such_gate"));
        let bad_mode = SettingsUpdate {
            gate_modes: Some([(super::super::gate::LOOP.to_owned(), "sometimes".to_owned())].into()),
            domain_policy: Some(json!({"example.com": {"interact": "block"}})),
            ..Default::default()
        };
        let e = apply(&mut s, bad_mode).expect_err("bad mode");
        assert!(e.message.contains("gateModes.loop.detected"), "{}", e.message);
        assert!(s.domain_policy.is_empty(), "nothing changes when part of an update is wrong");
        let e = apply(
            &mut s,
            SettingsUpdate {
                domain_policy: Some(json!({"example.com": {"write": "block"}})),
                ..Default::default()
            },
        )
        .expect_err("bad group");
        assert!(e.message.contains("write"), "{}", e.message);
        let e = apply(
            &mut s,
            SettingsUpdate {
                domain_policy: Some(json!({"exa mple.com": {"read": "block"}})),
                ..Default::default()
            },
        )
        .expect_err("bad domain");
        assert!(e.message.contains("exa mple.com"), "{}", e.message);
        let ok = SettingsUpdate {
            gate_modes: Some([(super::super::gate::LOOP.to_owned(), "off".to_owned())].into()),
            domain_policy: Some(json!({"Example.com": {"interact": "block", "default": "allow"}})),
            agent_new_tabs_disabled: Some(true),
            ..Default::default()
        };
        apply(&mut s, ok).expect("valid");
        assert!(s.domain_blocked("www.example.com", "interact"));
        assert!(!s.domain_blocked("www.example.com", "read"));
        assert_eq!(super::super::mode_of(&s, super::super::gate::LOOP), GateMode::Off);
        assert!(s.agent_new_tabs_disabled);
        let reset = SettingsUpdate {
            gate_modes: Some([(super::super::gate::LOOP.to_owned(), "default".to_owned())].into()),
            ..Default::default()
        };
        apply(&mut s, reset).expect("reset");
        assert_eq!(super::super::mode_of(&s, super::super::gate::LOOP), GateMode::Block);
    }
}
