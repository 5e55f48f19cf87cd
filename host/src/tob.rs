//! TOB, the Tool Observation Bus: every tool call becomes one observation row, failed and
//! blocked calls included (docs/tasks.md, "Evidence (TOB)" and "Signal flags").
//!
//! Rows are written off the hot path: [`Recorder::record`] hands the row to a writer thread that
//! batches inserts into one transaction; [`Recorder::flush`] is the barrier that waits until
//! everything recorded before it is committed (used before any decision that reads evidence).
//! A batch the disk refuses (full, read-only, I/O error) is kept and written again every second;
//! meanwhile [`health`] says so and the `safety.store_unwritable` gate refuses work.
//!
//! - Evidence grades of a call are in [`evidence`]; row expiry in [`retention`]; scopes (the
//!   flush barriers of a task) in [`scope`]; the write health in [`health`].

pub mod evidence;
pub mod health;
pub mod retention;
pub mod scope;

use std::path::Path;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, mpsc};

use rusqlite::{Connection, params};
use tokio::sync::oneshot;

use crate::observation::{Observation, Outcome};
use crate::store::{self, StoreError};
use health::Health;

/// Longest wait of a flush barrier before correlation (docs/tasks.md, "Completion").
pub const FLUSH_MAX: std::time::Duration = std::time::Duration::from_millis(5000);

/// Most rows inserted in one transaction.
const MAX_BATCH: usize = 1024;

/// Most rows kept in memory while the store cannot be written; older ones are given up (and
/// counted) beyond it.
pub const MAX_KEPT: usize = 20_000;

/// How often kept rows are tried again while the store cannot be written.
const RETRY_EVERY: std::time::Duration = std::time::Duration::from_secs(1);

enum Msg {
    Row(Box<Observation>),
    Flush(oneshot::Sender<bool>),
}

/// Records observations through a background writer thread.
pub struct Recorder {
    tx: mpsc::Sender<Msg>,
    seq: AtomicI64,
    health: Arc<Health>,
}

impl Recorder {
    /// Starts the writer on the store at `db`.
    pub fn start(db: &Path) -> Result<Self, StoreError> {
        let conn = store::open(db)?;
        let last: i64 = conn.query_row("SELECT COALESCE(MAX(seq), 0) FROM observations", [], |r| r.get(0))?;
        let (tx, rx) = mpsc::channel();
        let health = Arc::new(Health::default());
        let shared = health.clone();
        std::thread::Builder::new()
            .name("tob-writer".into())
            .spawn(move || writer(conn, rx, &shared))
            .map_err(|e| StoreError::Corrupt(format!("cannot start the writer thread: {e}")))?;
        Ok(Self { tx, seq: AtomicI64::new(last), health })
    }

    /// Whether the store takes writes: the trouble while it does not.
    pub fn trouble(&self) -> Option<health::Trouble> {
        self.health.trouble()
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
        tokio::time::timeout(max, self.flush()).await.unwrap_or(false)
    }

    /// Waits until the writer has tried every row recorded before this call; returns whether
    /// all of them are committed (false while the store cannot be written).
    pub async fn flush(&self) -> bool {
        let (tx, rx) = oneshot::channel();
        if self.tx.send(Msg::Flush(tx)).is_ok() { rx.await.unwrap_or(false) } else { false }
    }
}

fn writer(mut conn: Connection, rx: mpsc::Receiver<Msg>, health: &Health) {
    // Rows the disk refused, oldest first, written before any newer row.
    let mut kept: std::collections::VecDeque<Box<Observation>> = std::collections::VecDeque::new();
    let mut dropped = 0u64;
    loop {
        let first = if kept.is_empty() {
            match rx.recv() {
                Ok(m) => Some(m),
                Err(_) => return,
            }
        } else {
            match rx.recv_timeout(RETRY_EVERY) {
                Ok(m) => Some(m),
                Err(mpsc::RecvTimeoutError::Timeout) => None,
                Err(mpsc::RecvTimeoutError::Disconnected) => {
                    write_kept(&mut conn, &mut kept, &mut dropped, health);
                    return;
                }
            }
        };
        let mut waiters = Vec::new();
        let mut next = first;
        let mut fresh = 0;
        while let Some(msg) = next.take() {
            match msg {
                Msg::Row(r) => {
                    kept.push_back(r);
                    fresh += 1;
                }
                Msg::Flush(w) => waiters.push(w),
            }
            if fresh < MAX_BATCH {
                next = rx.try_recv().ok();
            }
        }
        let committed = write_kept(&mut conn, &mut kept, &mut dropped, health);
        for w in waiters {
            let _ = w.send(committed);
        }
    }
}

/// Writes the kept rows in batches; returns whether none is left. Rows the disk refuses stay
/// (bounded by [`MAX_KEPT`]) and mark the store unwritable; rows refused for their own sake are
/// logged and given up.
fn write_kept(
    conn: &mut Connection,
    kept: &mut std::collections::VecDeque<Box<Observation>>,
    dropped: &mut u64,
    health: &Health,
) -> bool {
    while !kept.is_empty() {
        let n = kept.len().min(MAX_BATCH);
        let batch: Vec<Box<Observation>> = kept.drain(..n).collect();
        match insert_batch(conn, &batch) {
            Ok(()) => {}
            Err(e) if health::disk_fault(&e) => {
                for row in batch.into_iter().rev() {
                    kept.push_front(row);
                }
                while kept.len() > MAX_KEPT {
                    kept.pop_front();
                    *dropped += 1;
                }
                if health.trouble().is_none() {
                    tracing::error!(error = %e, waiting = kept.len(), "the store refuses writes; rows kept");
                }
                health.failed(e.to_string(), kept.len(), *dropped, crate::time::now_ms());
                return false;
            }
            Err(e) => tracing::error!(error = %e, rows = batch.len(), "cannot write observations"),
        }
    }
    if let Some(t) = health.recovered() {
        tracing::info!(
            since_ms = t.since_ms,
            dropped = t.dropped,
            "the store takes writes again; kept rows written"
        );
        *dropped = 0;
    }
    true
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
    use crate::observation::ActionKind;

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
