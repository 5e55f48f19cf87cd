//! A session's gate state: what the gates remember of one agent session (bundles loaded,
//! documents perceived, recent calls), and the durable part of it that outlives a hub restart
//! ([`super::resume`] stores it).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

use super::loops;
use crate::call::Session;

/// Per-session gate state.
#[derive(Debug, Default, Clone)]
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
    /// Calls that ran recently, with the scene each left (loop detection).
    pub loops: loops::LoopMemory,
    /// Successful non-read calls of the session (the scene of calls on no page).
    pub writes: u64,
    /// The name `nova mcp` gave this session, under which its durable state is kept across
    /// hub restarts ([`super::resume`]).
    pub resume_key: Option<String>,
    /// The durable state as last stored.
    pub saved: Option<Durable>,
}

/// The gate state of one session, shared by its calls.
pub type SharedState = std::sync::Arc<Mutex<SessionState>>;

/// The gate state of `session` (kept in the session's slots, created empty on first use).
pub fn state_of(session: &Session) -> SharedState {
    session.slots.get::<Mutex<SessionState>>()
}

/// The durable part of [`SessionState`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct Durable {
    bundles: BTreeSet<String>,
    onboarding_sent: bool,
    /// Tab -> (navigation epoch, URL) of the document perceived.
    perceived: BTreeMap<String, (u32, String)>,
    task_discovery: bool,
    discovery_warned: bool,
    last_active: Option<String>,
}

impl Durable {
    /// The durable part of `state`; `url_of` gives a tab's URL now.
    pub fn of(state: &SessionState, url_of: impl Fn(&str) -> Option<String>) -> Self {
        Self {
            bundles: state.bundles.clone(),
            onboarding_sent: state.onboarding_sent,
            perceived: state
                .perceived
                .iter()
                .filter_map(|(t, e)| Some((t.clone(), (*e, url_of(t)?))))
                .collect(),
            task_discovery: state.task_discovery,
            discovery_warned: state.discovery_warned,
            last_active: state.last_active.clone(),
        }
    }

    /// Puts it back into `state`; perception only for tabs still showing the same document
    /// (`now_of` gives a tab's epoch and URL now).
    pub fn restore(self, state: &mut SessionState, now_of: impl Fn(&str) -> Option<(u32, String)>) {
        state.bundles.extend(self.bundles);
        state.onboarding_sent |= self.onboarding_sent;
        for (tab, seen) in self.perceived {
            if now_of(&tab).as_ref() == Some(&seen) {
                state.perceived.insert(tab, seen.0);
            }
        }
        state.task_discovery |= self.task_discovery;
        state.discovery_warned |= self.discovery_warned;
        state.last_active = state.last_active.take().or(self.last_active);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn perception_comes_back_only_for_the_same_document() {
        let mut before = SessionState::default();
        before.bundles.insert("browser_automation".into());
        before.perceived.insert("1".into(), 3);
        before.perceived.insert("2".into(), 5);
        let url = |t: &str| Some(format!("https://a.test/{t}"));
        let d = Durable::of(&before, url);
        let mut after = SessionState::default();
        d.restore(&mut after, |t| match t {
            "1" => Some((3, "https://a.test/1".into())),
            _ => Some((6, "https://a.test/2".into())), // tab 2 navigated meanwhile
        });
        assert!(after.bundles.contains("browser_automation"));
        assert_eq!(after.perceived.get("1"), Some(&3));
        assert_eq!(after.perceived.get("2"), None, "a new document must be perceived again");
    }
}
