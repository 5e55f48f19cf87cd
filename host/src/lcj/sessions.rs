//! Activity sessions (docs/learning.md, "Journal"): a cursor per owner and site; a new 16-hex
//! session starts after more than 30 minutes without a call. The promotion gates count distinct
//! sessions, so successes in one sitting are one session's evidence.

use std::collections::HashMap;

use rusqlite::Connection;

/// Idle time after which the next call starts a new session, ms.
pub const IDLE_MS: i64 = 30 * 60_000;

/// The current session and last call of each owner on each site.
#[derive(Default)]
pub struct Sessions {
    cursors: HashMap<(String, String), (String, i64)>,
}

impl Sessions {
    /// The cursors as the journal left them (the newest event of each owner and site).
    pub fn load(c: &Connection) -> rusqlite::Result<Self> {
        let mut stmt = c.prepare(
            "SELECT e.owner_id, e.context_host, e.activity_session_id, e.created_at FROM lcj_tool_events e
             JOIN (SELECT owner_id, context_host, MAX(event_id) id FROM lcj_tool_events
                   GROUP BY owner_id, context_host) m ON m.id = e.event_id",
        )?;
        let cursors = stmt
            .query_map([], |r| Ok(((r.get(0)?, r.get(1)?), (r.get(2)?, r.get(3)?))))?
            .collect::<rusqlite::Result<_>>()?;
        Ok(Self { cursors })
    }

    /// The session a call of `owner` on `host` at `now` belongs to.
    pub fn at(&mut self, owner: &str, host: &str, now: i64) -> String {
        let slot = self.cursors.entry((owner.to_owned(), host.to_owned())).or_insert_with(|| (fresh(), now));
        if now - slot.1 > IDLE_MS {
            slot.0 = fresh();
        }
        slot.1 = slot.1.max(now);
        slot.0.clone()
    }
}

fn fresh() -> String {
    uuid::Uuid::new_v4().simple().to_string()[..16].to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_session_after_thirty_idle_minutes() {
        let mut s = Sessions::default();
        let a = s.at("ada", "a.org", 0);
        assert_eq!(a.len(), 16);
        assert_eq!(s.at("ada", "a.org", IDLE_MS), a, "exactly 30 minutes is the same sitting");
        assert_eq!(s.at("ada", "a.org", 2 * IDLE_MS), a, "calls keep it alive");
        assert_ne!(s.at("ada", "a.org", 3 * IDLE_MS + 1), a);
        assert_ne!(s.at("bob", "a.org", 0), s.at("ada", "b.org", 0), "per owner and site");
    }
}
