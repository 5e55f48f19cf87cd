//! TOB scopes (docs/tasks.md, "Scopes"): the work boundary that binds observations to a task
//! instance or a tab lease. At most one open scope per target. A new scope backfills the target's
//! unbound calls of the last 30 s (`prelude_backfill`); calls that finish within 750 ms after a
//! scope starts closing still bind (`epilogue_grace`); nothing binds once it is flushing. Scopes
//! live in `tob_scopes`; after a crash, open / active / closing / flushing scopes come back active.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Mutex;

use rusqlite::{Connection, params};

use crate::store::{self, StoreError};
use crate::time::now_ms;

/// Prelude backfill window.
pub const PRELUDE_MS: i64 = 30_000;
/// Most calls a prelude backfills per target.
pub const PRELUDE_MAX_CALLS: i64 = 512;
/// Epilogue grace after closing begins.
pub const EPILOGUE_MS: i64 = 750;

/// Scope state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    /// Binding calls.
    Active,
    /// In the epilogue.
    Closing,
    /// Barrier set, waiting for ingestion.
    Flushing,
}

/// A live scope.
#[derive(Debug, Clone)]
pub struct Scope {
    /// Id (`scope_` + 32 hex).
    pub scope_id: String,
    /// `instance` or `lease`.
    pub kind: &'static str,
    /// The instance it belongs to.
    pub instance_id: Option<String>,
    /// The target it binds.
    pub target_id: String,
    /// The agent whose calls it binds.
    pub agent_id: String,
    /// State.
    pub state: State,
    /// When closing began.
    pub closing_at_ms: Option<i64>,
}

/// Another instance already tracks the target.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TargetBusy {
    /// The scope holding it.
    pub scope_id: String,
    /// Its instance.
    pub instance_id: Option<String>,
}

/// The scopes of a hub.
pub struct Scopes {
    conn: Mutex<Connection>,
    live: Mutex<HashMap<String, Scope>>,
}

fn state_str(s: State) -> &'static str {
    match s {
        State::Active => "active",
        State::Closing => "closing",
        State::Flushing => "flushing",
    }
}

impl Scopes {
    /// Opens the scope table and restores unfinished scopes as active.
    pub fn open(db: &Path) -> Result<Self, StoreError> {
        let conn = store::open(db)?;
        conn.execute(
            "UPDATE tob_scopes SET state = 'active', closing_at_ms = NULL, barrier_seq = NULL
             WHERE state IN ('open', 'active', 'closing', 'flushing')",
            [],
        )?;
        let mut live = HashMap::new();
        {
            let mut stmt =
                conn.prepare("SELECT scope_id, kind, instance_id, target_id, agent_id FROM tob_scopes WHERE state = 'active'")?;
            let rows = stmt.query_map([], |r| {
                Ok(Scope {
                    scope_id: r.get(0)?,
                    kind: if r.get::<_, String>(1)? == "instance" { "instance" } else { "lease" },
                    instance_id: r.get(2)?,
                    target_id: r.get(3)?,
                    agent_id: r.get(4)?,
                    state: State::Active,
                    closing_at_ms: None,
                })
            })?;
            for s in rows.flatten() {
                live.insert(s.target_id.clone(), s);
            }
        }
        Ok(Self { conn: Mutex::new(conn), live: Mutex::new(live) })
    }

    fn db<T>(&self, f: impl FnOnce(&Connection) -> rusqlite::Result<T>) -> rusqlite::Result<T> {
        f(&self.conn.lock().unwrap_or_else(|p| p.into_inner()))
    }

    fn set_state(&self, scope_id: &str, state: &str, extra: Option<(&str, i64)>) {
        let r = self.db(|c| match extra {
            Some((col, v)) => c.execute(
                &format!("UPDATE tob_scopes SET state = ?1, {col} = ?2 WHERE scope_id = ?3"),
                params![state, v, scope_id],
            ),
            None => {
                c.execute("UPDATE tob_scopes SET state = ?1 WHERE scope_id = ?2", params![state, scope_id])
            }
        });
        if let Err(e) = r {
            tracing::error!(error = %e, scope_id, "cannot update scope state");
        }
    }

    /// The scope a call by `agent` on `target` binds to, and how.
    pub fn bind(&self, target: &str, agent: &str) -> Option<(String, &'static str)> {
        let now = now_ms();
        let live = self.live.lock().unwrap_or_else(|p| p.into_inner());
        let s = live.get(target).filter(|s| s.agent_id == agent)?;
        match s.state {
            State::Active => Some((s.scope_id.clone(), "live")),
            State::Closing if s.closing_at_ms.is_some_and(|t| now - t <= EPILOGUE_MS) => {
                Some((s.scope_id.clone(), "epilogue_grace"))
            }
            _ => None,
        }
    }

    /// The live scope on `target`.
    pub fn on_target(&self, target: &str) -> Option<Scope> {
        self.live.lock().unwrap_or_else(|p| p.into_inner()).get(target).cloned()
    }

    /// Opens a scope for an instance on `target`. An open lease scope of the same agent is
    /// adopted (its evidence counts for the instance); another instance's scope makes the
    /// target busy. Returns the scope id and whether it is new (new scopes need a backfill).
    pub fn open_instance(
        &self,
        target: &str,
        agent: &str,
        instance: &str,
    ) -> Result<(String, bool), TargetBusy> {
        let mut live = self.live.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(s) = live.get_mut(target) {
            if s.kind == "lease" && s.agent_id == agent && s.state == State::Active {
                s.kind = "instance";
                s.instance_id = Some(instance.to_owned());
                let id = s.scope_id.clone();
                drop(live);
                let r = self.db(|c| {
                    c.execute(
                        "UPDATE tob_scopes SET kind = 'instance', instance_id = ?1 WHERE scope_id = ?2",
                        params![instance, id],
                    )
                });
                if let Err(e) = r {
                    tracing::error!(error = %e, "cannot adopt lease scope");
                }
                return Ok((id, false));
            }
            if s.state != State::Closing {
                return Err(TargetBusy { scope_id: s.scope_id.clone(), instance_id: s.instance_id.clone() });
            }
        }
        let scope = self.insert(&mut live, "instance", target, agent, Some(instance));
        Ok((scope, true))
    }

    /// Opens a lease scope for `agent` on `target` unless a scope is already open there.
    pub fn open_lease(&self, target: &str, agent: &str) -> Option<String> {
        let mut live = self.live.lock().unwrap_or_else(|p| p.into_inner());
        if live.get(target).is_some_and(|s| s.state != State::Closing) {
            return None;
        }
        Some(self.insert(&mut live, "lease", target, agent, None))
    }

    fn insert(
        &self,
        live: &mut HashMap<String, Scope>,
        kind: &'static str,
        target: &str,
        agent: &str,
        instance: Option<&str>,
    ) -> String {
        let scope_id = format!("scope_{}", uuid::Uuid::new_v4().simple());
        let r = self.db(|c| {
            c.execute(
                "INSERT INTO tob_scopes (scope_id, kind, instance_id, target_id, agent_id, state, opened_at_ms)
                 VALUES (?1, ?2, ?3, ?4, ?5, 'active', ?6)",
                params![scope_id, kind, instance, target, agent, now_ms()],
            )
        });
        if let Err(e) = r {
            tracing::error!(error = %e, "cannot record scope");
        }
        live.insert(
            target.to_owned(),
            Scope {
                scope_id: scope_id.clone(),
                kind,
                instance_id: instance.map(str::to_owned),
                target_id: target.to_owned(),
                agent_id: agent.to_owned(),
                state: State::Active,
                closing_at_ms: None,
            },
        );
        scope_id
    }

    /// Binds the target's unbound calls of the last 30 s (at most 512) to a new scope. Call
    /// after a recorder flush so that those rows are in the table.
    pub fn backfill(&self, scope_id: &str, target: &str, agent: &str) -> usize {
        let since = now_ms() - PRELUDE_MS;
        self.db(|c| {
            c.execute(
                "UPDATE observations SET workflow_scope_id = ?1, binding_mode = 'prelude_backfill'
                 WHERE seq IN (SELECT seq FROM observations
                               WHERE target_id = ?2 AND agent_id = ?3 AND workflow_scope_id IS NULL
                                 AND started_at_ms >= ?4
                               ORDER BY seq DESC LIMIT ?5)",
                params![scope_id, target, agent, since, PRELUDE_MAX_CALLS],
            )
        })
        .unwrap_or_else(|e| {
            tracing::error!(error = %e, "prelude backfill failed");
            0
        })
    }

    /// Freezes binding for correlation: the scope is flushing at `barrier`.
    pub fn flushing(&self, scope_id: &str, barrier: i64) {
        self.with_scope(scope_id, |s| s.state = State::Flushing);
        self.set_state(scope_id, "flushing", Some(("barrier_seq", barrier)));
    }

    /// Back to active after a rejected completion (evidence gap): the agent works on.
    pub fn reactivate(&self, scope_id: &str) {
        self.with_scope(scope_id, |s| {
            s.state = State::Active;
            s.closing_at_ms = None;
        });
        self.set_state(scope_id, "active", None);
    }

    /// Starts the epilogue; the scope closes for good [`EPILOGUE_MS`] later.
    pub fn begin_closing(&self, scope_id: &str, ingestion_complete: bool) {
        let now = now_ms();
        self.with_scope(scope_id, |s| {
            s.state = State::Closing;
            s.closing_at_ms = Some(now);
        });
        self.set_state(scope_id, "closing", Some(("closing_at_ms", now)));
        let r = self.db(|c| {
            c.execute(
                "UPDATE tob_scopes SET ingestion_complete = ?1 WHERE scope_id = ?2",
                params![ingestion_complete, scope_id],
            )
        });
        if let Err(e) = r {
            tracing::error!(error = %e, "cannot record scope ingestion");
        }
    }

    /// Ends closing scopes whose epilogue is over.
    pub fn sweep(&self) {
        let now = now_ms();
        let done: Vec<String> = {
            let mut live = self.live.lock().unwrap_or_else(|p| p.into_inner());
            let ids: Vec<(String, String)> = live
                .values()
                .filter(|s| {
                    s.state == State::Closing && s.closing_at_ms.is_some_and(|t| now - t > EPILOGUE_MS)
                })
                .map(|s| (s.target_id.clone(), s.scope_id.clone()))
                .collect();
            for (t, _) in &ids {
                live.remove(t);
            }
            ids.into_iter().map(|(_, id)| id).collect()
        };
        for id in done {
            self.set_state(&id, "closed", Some(("closed_at_ms", now)));
        }
    }

    /// Closes a lease scope at once (release).
    pub fn close_lease(&self, target: &str, agent: &str) {
        let id = {
            let mut live = self.live.lock().unwrap_or_else(|p| p.into_inner());
            match live.get(target) {
                Some(s) if s.kind == "lease" && s.agent_id == agent => {
                    live.remove(target).map(|s| s.scope_id)
                }
                _ => None,
            }
        };
        if let Some(id) = id {
            self.set_state(&id, "closed", Some(("closed_at_ms", now_ms())));
        }
    }

    /// State of a scope, if live.
    pub fn state(&self, scope_id: &str) -> Option<&'static str> {
        let live = self.live.lock().unwrap_or_else(|p| p.into_inner());
        live.values().find(|s| s.scope_id == scope_id).map(|s| state_str(s.state))
    }

    fn with_scope(&self, scope_id: &str, f: impl FnOnce(&mut Scope)) {
        let mut live = self.live.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(s) = live.values_mut().find(|s| s.scope_id == scope_id) {
            f(s);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_scope_per_target_leases_are_adopted_and_scopes_survive_a_restart() {
        let dir = tempfile::tempdir().expect("tmp");
        let db = dir.path().join("nova.db");
        let scopes = Scopes::open(&db).expect("open");
        let lease = scopes.open_lease("7", "alice").expect("lease scope");
        let (adopted, new) = scopes.open_instance("7", "alice", "i1").expect("adopt");
        assert_eq!((adopted.as_str(), new), (lease.as_str(), false));
        assert_eq!(
            scopes.open_instance("7", "bob", "i2"),
            Err(TargetBusy { scope_id: lease.clone(), instance_id: Some("i1".into()) })
        );
        assert_eq!(scopes.bind("7", "alice"), Some((lease.clone(), "live")));
        assert_eq!(scopes.bind("7", "bob"), None, "other agents' calls do not bind");
        scopes.flushing(&lease, 10);
        assert_eq!(scopes.bind("7", "alice"), None, "nothing binds while flushing");
        drop(scopes);
        let again = Scopes::open(&db).expect("reopen");
        assert_eq!(again.bind("7", "alice"), Some((lease.clone(), "live")), "crash recovery: active");
        again.begin_closing(&lease, true);
        assert_eq!(again.bind("7", "alice"), Some((lease.clone(), "epilogue_grace")));
    }
}
