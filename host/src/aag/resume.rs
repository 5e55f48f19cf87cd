//! What the gates know of an agent session, kept across hub restarts.
//!
//! `nova mcp` keeps the agent's MCP session when the hub it relays to restarts (a crash, the
//! browser restarting its native host) and names that session to every hub it connects to
//! (`capabilities.experimental["io.nova/relay"].session` of `initialize`). The hub stores the
//! durable part of the session's gate state under that name whenever it changes (bundles
//! loaded, documents perceived, the active tab seen, task lookups) and restores it when the
//! session comes back, so a compliant agent is not sent back through the bootstrap and
//! perceive-first gates for a restart it did not cause. The loop memory and the reminder
//! counts start afresh. Perception restored for a tab counts only while the tab still shows
//! the same document (same navigation epoch and URL).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::Mutex;

use rusqlite::{Connection, OptionalExtension as _, params};
use serde::{Deserialize, Serialize};

use super::SessionState;
use crate::store::{self, StoreError};
use crate::time::now_ms;

/// The experimental capability through which `nova mcp` names its session.
pub const RELAY_CAPABILITY: &str = "io.nova/relay";

/// Sessions unused this long are forgotten.
const KEEP_MS: i64 = 86_400_000;

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

/// The stored sessions.
pub struct Resumes {
    conn: Mutex<Connection>,
}

impl Resumes {
    /// Opens the table and forgets sessions unused for a day.
    pub fn open(db: &Path) -> Result<Self, StoreError> {
        let conn = store::open(db)?;
        conn.execute("DELETE FROM gate_sessions WHERE updated_at_ms < ?1", [now_ms() - KEEP_MS])?;
        Ok(Self { conn: Mutex::new(conn) })
    }

    /// The stored state of session `key`.
    pub fn load(&self, key: &str) -> Option<Durable> {
        let conn = self.conn.lock().unwrap_or_else(|p| p.into_inner());
        let json: Option<String> = conn
            .query_row("SELECT state_json FROM gate_sessions WHERE session_key = ?1", [key], |r| r.get(0))
            .optional()
            .ok()
            .flatten();
        json.and_then(|j| serde_json::from_str(&j).ok())
    }

    /// Stores the state of session `key`.
    pub fn save(&self, key: &str, durable: &Durable) {
        let conn = self.conn.lock().unwrap_or_else(|p| p.into_inner());
        let json = serde_json::to_string(durable).unwrap_or_default();
        let r = conn.execute(
            "INSERT OR REPLACE INTO gate_sessions (session_key, state_json, updated_at_ms) VALUES (?1, ?2, ?3)",
            params![key, json, now_ms()],
        );
        if let Err(e) = r {
            tracing::error!(error = %e, "cannot store the session's gate state");
        }
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

    #[test]
    fn a_saved_session_loads_again() {
        let dir = tempfile::tempdir().expect("tmp");
        let db = dir.path().join("nova.db");
        let r = Resumes::open(&db).expect("open");
        let mut s = SessionState::default();
        s.bundles.insert("task_memory".into());
        let d = Durable::of(&s, |_| None);
        r.save("k", &d);
        assert_eq!(r.load("k"), Some(d));
        assert_eq!(r.load("other"), None);
    }
}
