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

use std::path::Path;
use std::sync::Mutex;

use rusqlite::{Connection, OptionalExtension as _, params};

pub use super::session::Durable;
use crate::store::{self, StoreError};
use crate::time::now_ms;

/// The experimental capability through which `nova mcp` names its session.
pub const RELAY_CAPABILITY: &str = "io.nova/relay";

/// Sessions unused this long are forgotten.
const KEEP_MS: i64 = 86_400_000;

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
    use crate::aag::session::SessionState;

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
