//! The person's controls, kept in the store so that they survive browser and hub restarts: the
//! emergency stop (engaged from the popup or `nova stop`, released only by the person), handover
//! notes of reclaimed tabs and approvals. Overlays seen on tabs are kept in memory only: after a
//! hub restart every agent must perceive again (`safety.perceive_first`), which sees them anew.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Mutex;

use rusqlite::{Connection, OptionalExtension as _, params};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use nova_shared::ui::Prompt;

use crate::store::{self, StoreError};
use crate::time::now_ms;

/// The engaged stop.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Stop {
    /// When.
    pub at_ms: i64,
    /// Who: `popup`, `cli`.
    pub by: String,
}

/// A handover note for the agent that lost a tab.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reclaim {
    /// The agent that took the tab.
    pub by: String,
    /// Its reason.
    pub reason: String,
    /// When.
    pub at_ms: i64,
}

/// The controls.
pub struct Control {
    conn: Mutex<Connection>,
    /// Tab -> (navigation epoch of the document it was seen on, the overlay).
    overlays: Mutex<HashMap<String, (u32, Value)>>,
}

impl Control {
    /// Opens the control tables.
    pub fn open(db: &Path) -> Result<Self, StoreError> {
        let conn = store::open(db)?;
        // Prompts of a hub that ended cannot be answered any more.
        conn.execute(
            "UPDATE approvals SET decision = 'timed_out', decided_at_ms = ?1 WHERE decision = 'pending'",
            [now_ms()],
        )?;
        conn.execute("DELETE FROM tab_overlays WHERE seen_at_ms < ?1", [now_ms() - 86_400_000])?;
        let overlays = {
            let mut stmt = conn.prepare("SELECT target_id, nav_epoch, overlay_json FROM tab_overlays")?;
            let rows = stmt.query_map([], |r| {
                Ok((r.get::<_, String>(0)?, r.get::<_, u32>(1)?, r.get::<_, String>(2)?))
            })?;
            rows.filter_map(Result::ok)
                .filter_map(|(t, e, j)| Some((t, (e, serde_json::from_str(&j).ok()?))))
                .collect::<HashMap<_, _>>()
        };
        Ok(Self { conn: Mutex::new(conn), overlays: Mutex::new(overlays) })
    }

    /// Stores a new (pending) prompt.
    pub fn record_prompt(&self, p: &Prompt) -> rusqlite::Result<()> {
        self.db(|c| {
            c.execute(
                "INSERT INTO approvals (prompt_id, agent_id, target_id, question, title, decision, asked_at_ms, expires_at_ms)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                params![p.prompt_id, p.agent_id, p.target_id, p.message, p.title, p.decision, p.asked_at_ms, p.expires_at_ms],
            )
            .map(drop)
        })
    }

    /// Stores a prompt's decision.
    pub fn decide(&self, p: &Prompt) -> rusqlite::Result<()> {
        self.db(|c| {
            c.execute(
                "UPDATE approvals SET decision = ?2, decided_at_ms = ?3 WHERE prompt_id = ?1",
                params![p.prompt_id, p.decision, p.decided_at_ms],
            )
            .map(drop)
        })
    }

    /// The latest `limit` prompts, newest first.
    pub fn approvals(&self, limit: u32) -> rusqlite::Result<Vec<Prompt>> {
        self.db(|c| {
            let mut stmt = c.prepare(
                "SELECT prompt_id, agent_id, target_id, title, question, decision, asked_at_ms, expires_at_ms, decided_at_ms
                 FROM approvals ORDER BY asked_at_ms DESC LIMIT ?1",
            )?;
            let rows = stmt.query_map([limit], |r| {
                Ok(Prompt {
                    prompt_id: r.get(0)?,
                    agent_id: r.get(1)?,
                    target_id: r.get(2)?,
                    page_url: None,
                    title: r.get(3)?,
                    message: r.get(4)?,
                    decision: r.get(5)?,
                    asked_at_ms: r.get(6)?,
                    expires_at_ms: r.get(7)?,
                    decided_at_ms: r.get(8)?,
                })
            })?;
            rows.collect()
        })
    }

    fn db<T>(&self, f: impl FnOnce(&Connection) -> rusqlite::Result<T>) -> rusqlite::Result<T> {
        f(&self.conn.lock().unwrap_or_else(|p| p.into_inner()))
    }

    /// The engaged stop, if any. Read from the store on every call: `nova stop` in a terminal
    /// takes effect on the next tool call.
    pub fn stop(&self) -> Option<Stop> {
        read_stop(&self.conn.lock().unwrap_or_else(|p| p.into_inner()))
    }

    /// Engages the stop.
    pub fn engage(&self, by: &str) -> rusqlite::Result<Stop> {
        self.db(|c| engage(c, by))
    }

    /// Releases the stop (the person's action only).
    pub fn release(&self, by: &str) -> rusqlite::Result<bool> {
        self.db(|c| release(c, by))
    }

    /// Leaves a note for `agent`, who just lost `target` to `by`.
    pub fn note_reclaim(&self, target: &str, agent: &str, by: &str, reason: &str) {
        let r = self.db(|c| {
            c.execute(
                "INSERT OR REPLACE INTO reclaim_notes (target_id, agent_id, by_agent, reason, at_ms) VALUES (?1, ?2, ?3, ?4, ?5)",
                params![target, agent, by, reason, now_ms()],
            )
        });
        if let Err(e) = r {
            tracing::error!(error = %e, "cannot store the reclaim note");
        }
    }

    /// The note for `agent` on `target`, left in place.
    pub fn peek_reclaim(&self, target: &str, agent: &str) -> Option<Reclaim> {
        self.db(|c| {
            c.query_row(
                "SELECT by_agent, reason, at_ms FROM reclaim_notes WHERE target_id = ?1 AND agent_id = ?2",
                params![target, agent],
                |r| Ok(Reclaim { by: r.get(0)?, reason: r.get(1)?, at_ms: r.get(2)? }),
            )
            .optional()
        })
        .ok()
        .flatten()
    }

    /// Takes (consumes) the note for `agent` on `target`.
    pub fn take_reclaim(&self, target: &str, agent: &str) -> Option<Reclaim> {
        let note = self.peek_reclaim(target, agent)?;
        let deleted = self.db(|c| {
            c.execute(
                "DELETE FROM reclaim_notes WHERE target_id = ?1 AND agent_id = ?2",
                params![target, agent],
            )
        });
        if let Err(e) = deleted {
            tracing::error!(error = %e, "cannot consume the reclaim note");
        }
        Some(note)
    }

    /// Records the identity overlay a perceive saw on the document at `epoch` of a tab (None:
    /// it saw none, or the person's approval lifted it). It binds that document only: the
    /// gate ignores it once the tab shows another one. Kept in the store too, so that a hub
    /// restart does not lift it.
    pub fn set_overlay(&self, target: &str, epoch: u32, overlay: Option<Value>) {
        let mut o = self.overlays.lock().unwrap_or_else(|p| p.into_inner());
        let stored = match overlay {
            Some(v) => {
                let json = v.to_string();
                o.insert(target.to_owned(), (epoch, v));
                self.db(|c| {
                    c.execute(
                        "INSERT OR REPLACE INTO tab_overlays (target_id, nav_epoch, overlay_json, seen_at_ms) VALUES (?1, ?2, ?3, ?4)",
                        params![target, epoch, json, now_ms()],
                    )
                })
            }
            // Most perceives see no overlay: the store is only written when one goes away.
            None if o.remove(target).is_some() => {
                self.db(|c| c.execute("DELETE FROM tab_overlays WHERE target_id = ?1", [target]))
            }
            None => Ok(0),
        };
        if let Err(e) = stored {
            tracing::error!(error = %e, "cannot store the identity overlay");
        }
    }

    /// The overlay seen on a tab, with the navigation epoch of the document it was seen on.
    pub fn overlay(&self, target: &str) -> Option<(u32, Value)> {
        self.overlays.lock().unwrap_or_else(|p| p.into_inner()).get(target).cloned()
    }
}

/// Reads the stop from a connection (also used by `nova stop` / `nova resume`).
pub fn read_stop(c: &Connection) -> Option<Stop> {
    c.query_row("SELECT value FROM user_control WHERE key = 'emergency_stop'", [], |r| r.get::<_, String>(0))
        .optional()
        .ok()
        .flatten()
        .and_then(|v| serde_json::from_str(&v).ok())
}

/// Engages the stop in the store at `c`.
pub fn engage(c: &Connection, by: &str) -> rusqlite::Result<Stop> {
    if let Some(s) = read_stop(c) {
        return Ok(s);
    }
    let stop = Stop { at_ms: now_ms(), by: by.to_owned() };
    let tx = crate::store::write_tx_shared(c)?;
    tx.execute(
        "INSERT OR REPLACE INTO user_control (key, value, updated_at_ms) VALUES ('emergency_stop', ?1, ?2)",
        params![json!(stop).to_string(), stop.at_ms],
    )?;
    tx.execute(
        "INSERT INTO control_events (kind, by_whom, at_ms) VALUES ('stop', ?1, ?2)",
        params![stop.by, stop.at_ms],
    )?;
    tx.commit()?;
    Ok(stop)
}

/// Releases the stop in the store at `c` (`by`: popup or cli); whether one was engaged.
pub fn release(c: &Connection, by: &str) -> rusqlite::Result<bool> {
    let tx = crate::store::write_tx_shared(c)?;
    let released = tx.execute("DELETE FROM user_control WHERE key = 'emergency_stop'", [])? > 0;
    if released {
        tx.execute(
            "INSERT INTO control_events (kind, by_whom, at_ms) VALUES ('resume', ?1, ?2)",
            params![by, now_ms()],
        )?;
    }
    tx.commit()?;
    Ok(released)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stop_survives_reopening_and_notes_are_delivered_once() {
        let dir = tempfile::tempdir().expect("tmp");
        let db = dir.path().join("nova.db");
        let c = Control::open(&db).expect("open");
        assert_eq!(c.stop(), None);
        let s = c.engage("popup").expect("engage");
        assert_eq!(c.engage("cli").expect("again"), s, "engaging twice keeps the first");
        drop(c);
        let c = Control::open(&db).expect("reopen");
        assert_eq!(c.stop().map(|s| s.by), Some("popup".into()));
        assert!(c.release("popup").expect("release"));
        assert_eq!(c.stop(), None);
        c.note_reclaim("7", "alice", "bob", "urgent fix");
        assert_eq!(c.take_reclaim("7", "alice").map(|r| r.by), Some("bob".into()));
        assert_eq!(c.take_reclaim("7", "alice"), None);
    }
}
