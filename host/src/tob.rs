//! TOB, the Tool Observation Bus: every tool call becomes one observation row, failed and
//! blocked calls included (docs/tasks.md, "Evidence (TOB)" and "Signal flags").
//!
//! Rows are written off the hot path: [`Recorder::record`] hands the row to a writer thread that
//! batches inserts into one transaction; [`Recorder::flush`] is the barrier that waits until
//! everything recorded before it is committed (used before any decision that reads evidence).

pub mod evidence;
pub mod retention;
pub mod scope;

use std::path::Path;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::mpsc;

use rusqlite::{Connection, params};
use serde::Serialize;
use tokio::sync::oneshot;

use crate::store::{self, StoreError};

/// Longest wait of a flush barrier before correlation (docs/tasks.md, "Completion").
pub const FLUSH_MAX: std::time::Duration = std::time::Duration::from_millis(5000);

/// Most rows inserted in one transaction.
const MAX_BATCH: usize = 1024;

/// Signal flags, a 64-bit mask (docs/tasks.md, "Signal flags").
pub mod flags {
    /// Page content reached the agent.
    pub const CONTENT_EXPOSED: i64 = 1 << 0;
    /// Pixels reached the agent.
    pub const VISUAL_EXPOSED: i64 = 1 << 1;
    /// DOM structure reached the agent.
    pub const DOM_EXPOSED: i64 = 1 << 2;
    /// A selector was resolved against the page.
    pub const SELECTOR_TOUCHED: i64 = 1 << 3;
    /// A navigation was requested.
    pub const NAVIGATION_INTENT: i64 = 1 << 4;
    /// A navigation committed.
    pub const NAVIGATION_COMMITTED: i64 = 1 << 5;
    /// The call tried to change the page.
    pub const MUTATION_ATTEMPTED: i64 = 1 << 6;
    /// The page was changed (events dispatched).
    pub const MUTATION_COMMITTED: i64 = 1 << 7;
    /// The agent supplied input text.
    pub const INPUT_SUPPLIED: i64 = 1 << 8;
    /// A search ran.
    pub const SEARCH_EXECUTED: i64 = 1 << 9;
    /// Console output reached the agent.
    pub const CONSOLE_EXPOSED: i64 = 1 << 10;
    /// A file reached the agent.
    pub const FILE_EXPOSED: i64 = 1 << 11;
    /// Only the viewport was covered.
    pub const VIEWPORT_ONLY: i64 = 1 << 12;
    /// The whole document was covered.
    pub const FULL_DOCUMENT: i64 = 1 << 13;
    /// The target tab was resolved.
    pub const TARGET_RESOLVED: i64 = 1 << 14;
}

/// Action kind of a call (docs/tasks.md, "Evidence (TOB)").
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ActionKind {
    /// Reads page content.
    Read,
    /// Opens or changes the page.
    Navigate,
    /// Touches elements.
    Interact,
    /// Writes Nova state (tasks, claims, knowledge).
    Write,
    /// Everything else (tool discovery, leases).
    #[default]
    Meta,
}

impl ActionKind {
    fn as_str(self) -> &'static str {
        match self {
            Self::Read => "read",
            Self::Navigate => "navigate",
            Self::Interact => "interact",
            Self::Write => "write",
            Self::Meta => "meta",
        }
    }
}

/// How a call ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// The call did what was asked.
    Success,
    /// The call ran and failed.
    Failed,
    /// A gate or lease stopped the call before it ran.
    BlockedPreflight,
    /// The arguments were rejected before anything ran.
    InvalidParams,
}

impl Outcome {
    fn as_str(self) -> &'static str {
        match self {
            Self::Success => "success",
            Self::Failed => "failed",
            Self::BlockedPreflight => "blocked_preflight",
            Self::InvalidParams => "invalid_params",
        }
    }
}

/// One observation row.
#[derive(Debug, Clone, Default)]
pub struct Observation {
    /// dispatch_call_id.
    pub call_id: String,
    /// dispatch_seq.
    pub seq: i64,
    /// Tool name.
    pub tool: String,
    /// What the tool does (its declaration's action kind).
    pub action_kind: ActionKind,
    /// What the tool acts on (its declaration's entity; the `surface` column).
    pub surface: &'static str,
    /// Agent id (argument, else MCP client name, else `default`).
    pub agent_id: String,
    /// MCP session id.
    pub mcp_session: String,
    /// Resolved target.
    pub target_id: Option<String>,
    /// URL before the call.
    pub url_before: Option<String>,
    /// URL after the call.
    pub url_after: Option<String>,
    /// Navigation epoch before.
    pub nav_epoch_before: Option<u32>,
    /// Navigation epoch after.
    pub nav_epoch_after: Option<u32>,
    /// Signal flags.
    pub signal_flags: i64,
    /// Logical success.
    pub ok: bool,
    /// Whether the call reached the browser.
    pub executed: bool,
    /// Outcome.
    pub outcome: Option<Outcome>,
    /// Reason code on failure.
    pub reason_code: Option<String>,
    /// Error code (`aag_blocked:<gate>` for gate blocks).
    pub error_code: Option<String>,
    /// Stage that blocked the call.
    pub block_stage: Option<String>,
    /// Selector used.
    pub selector: Option<String>,
    /// Redacted arguments.
    pub args_json: Option<String>,
    /// Start time.
    pub started_at_ms: i64,
    /// Duration.
    pub duration_ms: i64,
    /// The TOB scope the call is bound to.
    pub workflow_scope_id: Option<String>,
    /// live | prelude_backfill | epilogue_grace.
    pub binding_mode: Option<String>,
    /// Coverage evidence of a registered scan (JSON).
    pub evidence_json: Option<String>,
    /// Gates that warned, would have blocked or were bypassed on this call (JSON object of
    /// gate id -> status).
    pub aag_gates: Option<String>,
}

/// What a tool's declaration says for its rows: action kind, surface and the signal flags it
/// always carries (`registry::classify`).
pub type Class = (ActionKind, &'static str, i64);

impl Observation {
    /// The row of a call starting now: a new call id, the recorder's next sequence number, and
    /// the tool's class.
    pub fn start(recorder: &Recorder, tool: &str, class: Class, agent_id: &str, session: &str) -> Self {
        let (action_kind, surface, signal_flags) = class;
        Self {
            call_id: uuid::Uuid::new_v4().to_string(),
            seq: recorder.next_seq(),
            tool: tool.to_owned(),
            action_kind,
            surface,
            agent_id: agent_id.to_owned(),
            mcp_session: session.to_owned(),
            signal_flags,
            started_at_ms: crate::time::now_ms(),
            ..Default::default()
        }
    }

    /// The row of a call `nova mcp` refused itself because no browser (no hub) was connected,
    /// so that support staff see the agent tried.
    pub fn refused_without_browser(
        recorder: &Recorder,
        tool: &str,
        class: Class,
        agent_id: &str,
        session: &str,
    ) -> Self {
        Self {
            outcome: Some(Outcome::Failed),
            reason_code: Some("browser_not_connected".into()),
            block_stage: Some("relay".into()),
            ..Self::start(recorder, tool, class, agent_id, session)
        }
    }

    /// Adds gate decisions (gate id, `warned` / `would_block` / `bypassed`) to `aag_gates`.
    pub fn note_gates<'a>(&mut self, decisions: impl IntoIterator<Item = (&'a str, &'a str)>) {
        let mut decisions = decisions.into_iter().peekable();
        if decisions.peek().is_none() {
            return;
        }
        let mut all: serde_json::Map<String, serde_json::Value> =
            self.aag_gates.as_deref().and_then(|j| serde_json::from_str(j).ok()).unwrap_or_default();
        all.extend(decisions.map(|(gate, status)| (gate.to_owned(), status.into())));
        self.aag_gates = Some(serde_json::Value::Object(all).to_string());
    }
}

enum Msg {
    Row(Box<Observation>),
    Flush(oneshot::Sender<()>),
}

/// Records observations through a background writer thread.
pub struct Recorder {
    tx: mpsc::Sender<Msg>,
    seq: AtomicI64,
}

impl Recorder {
    /// Starts the writer on the store at `db`.
    pub fn start(db: &Path) -> Result<Self, StoreError> {
        let conn = store::open(db)?;
        let last: i64 = conn.query_row("SELECT COALESCE(MAX(seq), 0) FROM observations", [], |r| r.get(0))?;
        let (tx, rx) = mpsc::channel();
        std::thread::Builder::new()
            .name("tob-writer".into())
            .spawn(move || writer(conn, rx))
            .map_err(|e| StoreError::Corrupt(format!("cannot start the writer thread: {e}")))?;
        Ok(Self { tx, seq: AtomicI64::new(last) })
    }

    /// The next dispatch sequence number.
    pub fn next_seq(&self) -> i64 {
        self.seq.fetch_add(1, Ordering::SeqCst) + 1
    }

    /// The last dispatch sequence number handed out (the flush barrier of a scope).
    pub fn last_seq(&self) -> i64 {
        self.seq.load(Ordering::SeqCst)
    }

    /// Queues a row; never blocks the caller on disk.
    pub fn record(&self, obs: Observation) {
        if self.tx.send(Msg::Row(Box::new(obs))).is_err() {
            tracing::error!("observation writer is gone; row dropped");
        }
    }

    /// [`Recorder::flush`] bounded by `max` (TOB flushes wait at most 5 s); returns whether
    /// everything recorded before the call is committed (`ingestionComplete`).
    pub async fn flush_within(&self, max: std::time::Duration) -> bool {
        tokio::time::timeout(max, self.flush()).await.is_ok()
    }

    /// Waits until every row recorded before this call is committed.
    pub async fn flush(&self) {
        let (tx, rx) = oneshot::channel();
        if self.tx.send(Msg::Flush(tx)).is_ok() {
            let _ = rx.await;
        }
    }
}

fn writer(mut conn: Connection, rx: mpsc::Receiver<Msg>) {
    while let Ok(first) = rx.recv() {
        let mut rows = Vec::new();
        let mut waiters = Vec::new();
        let mut next = Some(first);
        while let Some(msg) = next.take() {
            match msg {
                Msg::Row(r) => rows.push(r),
                Msg::Flush(w) => waiters.push(w),
            }
            if rows.len() < MAX_BATCH {
                next = rx.try_recv().ok();
            }
        }
        if !rows.is_empty()
            && let Err(e) = insert_batch(&mut conn, &rows)
        {
            tracing::error!(error = %e, rows = rows.len(), "cannot write observations");
        }
        for w in waiters {
            let _ = w.send(());
        }
    }
}

fn insert_batch(conn: &mut Connection, rows: &[Box<Observation>]) -> rusqlite::Result<()> {
    let tx = crate::store::write_tx(conn)?;
    {
        let mut stmt = tx.prepare_cached(
            "INSERT INTO observations (seq, call_id, request_id_short, tool, agent_id, mcp_session,
               target_id, url_before, url_after, url_effective, nav_epoch_before, nav_epoch_after,
               action_kind, surface, signal_flags, ok, executed, outcome_kind, reason_code,
               error_code, block_stage, selector, args_json, started_at_ms, duration_ms,
               workflow_scope_id, binding_mode, evidence_json, aag_gates)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17,
               ?18, ?19, ?20, ?21, ?22, ?23, ?24, ?25, ?26, ?27, ?28, ?29)",
        )?;
        for o in rows {
            let (kind, surface) = (o.action_kind, if o.surface.is_empty() { "none" } else { o.surface });
            let effective = o.url_after.clone().or_else(|| o.url_before.clone());
            // A relay without a hub may have taken a sequence number meanwhile; on a clash the
            // row keeps its data and SQLite assigns the next free number.
            let mut insert = |seq: Option<i64>| {
                stmt.execute(params![
                    seq,
                    o.call_id,
                    o.call_id.get(..8).unwrap_or(&o.call_id),
                    o.tool,
                    o.agent_id,
                    o.mcp_session,
                    o.target_id,
                    o.url_before,
                    o.url_after,
                    effective,
                    o.nav_epoch_before,
                    o.nav_epoch_after,
                    kind.as_str(),
                    surface,
                    o.signal_flags,
                    o.ok,
                    o.executed,
                    o.outcome.unwrap_or(Outcome::Failed).as_str(),
                    o.reason_code,
                    o.error_code,
                    o.block_stage,
                    o.selector,
                    o.args_json,
                    o.started_at_ms,
                    o.duration_ms,
                    o.workflow_scope_id,
                    o.binding_mode,
                    o.evidence_json,
                    o.aag_gates,
                ])
            };
            match insert(Some(o.seq)) {
                Err(rusqlite::Error::SqliteFailure(e, _))
                    if e.code == rusqlite::ErrorCode::ConstraintViolation =>
                {
                    insert(None)?;
                }
                other => {
                    other?;
                }
            }
        }
    }
    tx.commit()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(seq: i64, tool: &str) -> Observation {
        Observation {
            call_id: uuid::Uuid::new_v4().to_string(),
            seq,
            tool: tool.into(),
            action_kind: ActionKind::Read,
            surface: "page",
            agent_id: "a".into(),
            mcp_session: "s".into(),
            outcome: Some(Outcome::Success),
            ok: true,
            ..Default::default()
        }
    }

    #[tokio::test]
    async fn flush_makes_recorded_rows_visible_and_seq_survives_restart() {
        let dir = tempfile::tempdir().expect("tmp");
        let db = dir.path().join("nova.db");
        let rec = Recorder::start(&db).expect("start");
        for _ in 0..50 {
            let seq = rec.next_seq();
            rec.record(row(seq, "nova.perceive"));
        }
        rec.flush().await;
        let conn = store::open(&db).expect("open");
        let (n, kinds): (i64, String) = conn
            .query_row("SELECT COUNT(*), GROUP_CONCAT(DISTINCT action_kind) FROM observations", [], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })
            .expect("count");
        assert_eq!((n, kinds.as_str()), (50, "read"));
        drop(rec);
        let again = Recorder::start(&db).expect("restart");
        assert_eq!(again.next_seq(), 51);
    }
}
