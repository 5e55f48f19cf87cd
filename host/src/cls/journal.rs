//! The transition journal (table `transitions`). The intent row is committed with
//! `synchronous=FULL` before anything is dispatched, so a crash can never hide a dispatch.

use std::path::Path;
use std::sync::Mutex;

use rusqlite::{Connection, OptionalExtension as _, params};
use serde_json::{Value, json};

use crate::store::{self, StoreError};
use crate::time::now_ms;

/// What the journal needs to know at intent time.
#[derive(Debug, Clone)]
pub struct Intent<'a> {
    /// Transition id.
    pub transition_id: &'a str,
    /// The tool call's id.
    pub call_id: &'a str,
    /// Tool name.
    pub tool: &'a str,
    /// Agent.
    pub agent_id: &'a str,
    /// MCP session.
    pub mcp_session: &'a str,
    /// Target tab.
    pub target_id: &'a str,
    /// URL before.
    pub url_before: &'a str,
    /// `actionKind`.
    pub action_kind: &'a str,
    /// `retryPolicy`.
    pub retry_policy: &'a str,
    /// The contract as JSON.
    pub contract_json: String,
    /// Precondition verdict, if preconditions were checked.
    pub precondition_verdict: Option<&'a str>,
}

/// The verdict written at the end.
#[derive(Debug, Clone, Default)]
pub struct Verdict {
    /// `dispatchStatus`.
    pub dispatch_status: Option<String>,
    /// `verificationStatus`.
    pub verification_status: Option<String>,
    /// `indeterminateReason`.
    pub indeterminate_reason: Option<String>,
    /// `retryAdvice`.
    pub retry_advice: Option<String>,
    /// `outcomeVerdict`.
    pub outcome_verdict: Option<String>,
    /// `failedAssertions` as JSON.
    pub failed_assertions: Value,
    /// `heldAssertions` as JSON: what proved a success.
    pub held_assertions: Value,
}

/// What weakens or explains a verdict, kept after it is written (docs/cls.md, "Caveats").
pub mod caveat {
    /// A form posted back to its own address and no success message shows: the new page alone
    /// verified it (`verifyState: likely`).
    pub const POST_BACK_UNCONFIRMED: &str = "post_back_unconfirmed";
    /// A form sent from a signed-in page came back asking to sign in: in doubt (the session
    /// ended before the server took it, or the form signs out).
    pub const SIGN_IN_ASKED: &str = "sign_in_asked";
    /// A sign-in whose password field went away on a page with no sign-out control, shown or
    /// hidden: the password was taken, the sign-in may still wait for an approval elsewhere
    /// (`verifyState: likely`).
    pub const SIGN_IN_UNCONFIRMED: &str = "sign_in_unconfirmed";
}

/// The journal: its own connection, durable writes.
pub struct Journal {
    conn: Mutex<Connection>,
}

impl Journal {
    /// Opens the journal on the store.
    pub fn open(db: &Path) -> Result<Self, StoreError> {
        let conn = store::open(db)?;
        conn.pragma_update(None, "synchronous", "FULL")?;
        Ok(Self { conn: Mutex::new(conn) })
    }

    fn with<T>(&self, f: impl FnOnce(&Connection) -> rusqlite::Result<T>) -> rusqlite::Result<T> {
        let conn = self.conn.lock().unwrap_or_else(|p| p.into_inner());
        f(&conn)
    }

    /// Writes the intent row (durable on return).
    pub fn intent(&self, i: &Intent<'_>) -> rusqlite::Result<()> {
        self.with(|c| {
            c.execute(
                "INSERT INTO transitions (transition_id, call_id, tool, agent_id, mcp_session, target_id,
                   url_before, action_kind, retry_policy, contract_json, state, precondition_verdict,
                   hub_pid, started_at_ms)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, 'intent', ?11, ?12, ?13)",
                params![
                    i.transition_id,
                    i.call_id,
                    i.tool,
                    i.agent_id,
                    i.mcp_session,
                    i.target_id,
                    i.url_before,
                    i.action_kind,
                    i.retry_policy,
                    i.contract_json,
                    i.precondition_verdict,
                    std::process::id(),
                    now_ms()
                ],
            )
            .map(|_| ())
        })
    }

    /// Marks the transition dispatched.
    pub fn dispatched(&self, transition_id: &str) -> rusqlite::Result<()> {
        self.with(|c| {
            c.execute(
                "UPDATE transitions SET state = 'dispatched', dispatch_status = 'dispatched', dispatched_at_ms = ?2
                 WHERE transition_id = ?1",
                params![transition_id, now_ms()],
            )
            .map(|_| ())
        })
    }

    /// Writes the verdict; `state` is `completed` or `blocked`.
    pub fn complete(&self, transition_id: &str, state: &str, v: &Verdict) -> rusqlite::Result<()> {
        self.with(|c| {
            c.execute(
                "UPDATE transitions SET state = ?2, dispatch_status = COALESCE(?3, dispatch_status),
                   verification_status = ?4, indeterminate_reason = ?5, retry_advice = ?6,
                   outcome_verdict = ?7, failed_assertions = ?8, completed_at_ms = ?9,
                   held_assertions = ?10
                 WHERE transition_id = ?1",
                params![
                    transition_id,
                    state,
                    v.dispatch_status,
                    v.verification_status,
                    v.indeterminate_reason,
                    v.retry_advice,
                    v.outcome_verdict,
                    v.failed_assertions.to_string(),
                    now_ms(),
                    v.held_assertions.to_string()
                ],
            )
            .map(|_| ())
        })
    }

    /// Records what weakens or explains the verdict already written (column `caveat`, one of
    /// [`caveat`]).
    pub fn caveat(&self, transition_id: &str, code: &str) -> rusqlite::Result<()> {
        self.with(|c| {
            c.execute(
                "UPDATE transitions SET caveat = ?2 WHERE transition_id = ?1",
                params![transition_id, code],
            )
            .map(|_| ())
        })
    }

    /// At hub start: transitions another hub left between intent and verdict become
    /// `in_doubt` (indeterminate, check the postcondition first). They are never re-dispatched.
    pub fn recover(&self) -> rusqlite::Result<usize> {
        self.with(|c| {
            c.execute(
                "UPDATE transitions SET state = 'in_doubt', verification_status = 'indeterminate',
                   indeterminate_reason = COALESCE(indeterminate_reason, 'timeout'),
                   retry_advice = 'check_postcondition_first', completed_at_ms = ?2
                 WHERE state IN ('intent', 'dispatched') AND hub_pid != ?1",
                params![std::process::id(), now_ms()],
            )
        })
    }

    /// In-doubt transitions on a target, newest first, as agents see them.
    pub fn in_doubt(&self, target_id: &str) -> Vec<Value> {
        self.with(|c| {
            let mut stmt = c.prepare(
                "SELECT transition_id, tool, action_kind, dispatch_status, started_at_ms, url_before
                 FROM transitions WHERE state = 'in_doubt' AND target_id = ?1 ORDER BY started_at_ms DESC LIMIT 20",
            )?;
            let rows = stmt.query_map([target_id], |r| {
                Ok(json!({
                    "transitionId": r.get::<_, String>(0)?,
                    "tool": r.get::<_, String>(1)?,
                    "actionKind": r.get::<_, String>(2)?,
                    "actionDispatched": r.get::<_, Option<String>>(3)?.map(|s| s == "dispatched"),
                    "startedAt": r.get::<_, i64>(4)?,
                    "urlBefore": r.get::<_, Option<String>>(5)?,
                    "verificationStatus": "indeterminate",
                    "retryAdvice": "check_postcondition_first",
                }))
            })?;
            rows.collect()
        })
        .unwrap_or_default()
    }

    /// One transition's state (for tests and support tooling).
    pub fn state(&self, transition_id: &str) -> Option<String> {
        self.with(|c| {
            c.query_row("SELECT state FROM transitions WHERE transition_id = ?1", [transition_id], |r| {
                r.get(0)
            })
            .optional()
        })
        .ok()
        .flatten()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn intent<'a>(id: &'a str) -> Intent<'a> {
        Intent {
            transition_id: id,
            call_id: "c",
            tool: "nova.click_selector",
            agent_id: "a",
            mcp_session: "s",
            target_id: "7",
            url_before: "http://x/",
            action_kind: "submit_form",
            retry_policy: "non_idempotent",
            contract_json: "{}".into(),
            precondition_verdict: None,
        }
    }

    #[test]
    fn intent_then_verdict_and_recovery_of_foreign_rows() {
        let dir = tempfile::tempdir().expect("tmp");
        let j = Journal::open(&dir.path().join("nova.db")).expect("open");
        j.intent(&intent("t1")).expect("intent");
        j.dispatched("t1").expect("dispatched");
        assert_eq!(j.state("t1").as_deref(), Some("dispatched"));
        // Rows of this process are not recovered; rows of a dead hub are.
        assert_eq!(j.recover().expect("recover"), 0);
        j.with(|c| c.execute("UPDATE transitions SET hub_pid = 1 WHERE transition_id = 't1'", []))
            .expect("pretend another hub");
        assert_eq!(j.recover().expect("recover"), 1);
        assert_eq!(j.state("t1").as_deref(), Some("in_doubt"));
        let doubt = j.in_doubt("7");
        assert_eq!(doubt[0]["retryAdvice"], "check_postcondition_first");
        assert_eq!(doubt[0]["actionDispatched"], true);
        j.intent(&intent("t2")).expect("intent");
        j.complete(
            "t2",
            "completed",
            &Verdict { verification_status: Some("verified_success".into()), ..Default::default() },
        )
        .expect("complete");
        assert_eq!(j.state("t2").as_deref(), Some("completed"));
    }
}
