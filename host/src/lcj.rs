//! LCJ, the learning candidate journal (docs/learning.md, "Journal"): every tool call becomes a
//! tool event; failures, fixes and knowledge writes become candidate claims; actions,
//! dismissals and telemetry become observations attributed to a site and, by selector, to one of
//! its phenomena. The promotion gates (`crate::alp`) read only this evidence, so one lucky run
//! cannot promote anything.
//!
//! Calls are journaled off the hot path: [`Journal::ingest`] hands the call to a writer thread
//! that derives and writes its rows in batches; [`Journal::flush_within`] is the barrier (5 s at
//! most, `ingestionComplete`) every reader of the evidence waits on first.
//!
//! - [`keys`]: candidate keys, stable ids, fingerprint hashes, selectors as compared;
//!   [`throttle`]: the first observation per key in 30 s; [`sessions`]: activity sessions;
//!   [`attribution`]: which phenomenon an action's selector belongs to.
//! - [`rows`]: the tables; [`ingest`]: from a call to its rows; [`evidence`]: what the gates
//!   count for one phenomenon; [`opportunities`]: semantic learning opportunities as stored;
//!   [`learn`]: Learn Mode tasks and their coverage; [`retention`]: what the journal keeps, and
//!   for how long;
//!   [`stats`]: `nova.memory_stats`.
//! - `nova.memory_add_candidate` is in [`tools`].

pub mod attribution;
pub mod evidence;
pub mod ingest;
pub mod keys;
pub mod learn;
pub mod opportunities;
pub mod retention;
pub mod rows;
pub mod sessions;
pub mod stats;
pub mod throttle;
pub mod tools;

use std::path::Path;
use std::sync::{Mutex, mpsc};
use std::time::Duration;

use rusqlite::Connection;
use tokio::sync::oneshot;

use crate::call::CallError;
use crate::store::{self, StoreError};

pub use ingest::Call;

/// Longest wait of the flush barrier.
pub const FLUSH_MAX: Duration = Duration::from_secs(5);

/// Most calls written in one transaction.
const MAX_BATCH: usize = 256;

enum Msg {
    Call(Box<Call>),
    Flush(oneshot::Sender<()>),
}

/// The journal of a hub: its writer thread, and a connection for the tools that read it.
pub struct Journal {
    tx: mpsc::Sender<Msg>,
    conn: Mutex<Connection>,
}

impl Journal {
    /// Opens the journal and starts its writer.
    pub fn open(db: &Path) -> Result<Self, StoreError> {
        let mut writer_conn = store::open(db)?;
        let now = crate::clock::now_ms();
        match retention::curated_keys(&writer_conn)
            .and_then(|keep| retention::prune(&mut writer_conn, now, &keep))
        {
            Ok(0) => {}
            Ok(n) => tracing::info!(rows = n, "expired learning journal rows pruned"),
            Err(e) => tracing::warn!(error = %e, "learning journal retention failed"),
        }
        let state = ingest::State { sessions: sessions::Sessions::load(&writer_conn)?, ..Default::default() };
        let (tx, rx) = mpsc::channel();
        std::thread::Builder::new()
            .name("lcj-writer".into())
            .spawn(move || writer(writer_conn, state, rx))
            .map_err(|e| StoreError::Corrupt(format!("cannot start the journal's writer thread: {e}")))?;
        Ok(Self { tx, conn: Mutex::new(store::open(db)?) })
    }

    /// Queues a finished call; never blocks the caller on disk.
    pub fn ingest(&self, call: Call) {
        if self.tx.send(Msg::Call(Box::new(call))).is_err() {
            tracing::error!("the journal's writer is gone; a call was not journaled");
        }
    }

    /// Waits (at most `max`) until every call queued before is written; returns whether it was
    /// (`ingestionComplete`).
    pub async fn flush_within(&self, max: Duration) -> bool {
        let (tx, rx) = oneshot::channel();
        if self.tx.send(Msg::Flush(tx)).is_err() {
            return false;
        }
        matches!(tokio::time::timeout(max, rx).await, Ok(Ok(())))
    }

    /// Runs `f` on the journal's connection.
    pub fn with<T>(&self, f: impl FnOnce(&mut Connection) -> rusqlite::Result<T>) -> Result<T, CallError> {
        let mut c = self.conn.lock().unwrap_or_else(|p| p.into_inner());
        f(&mut c).map_err(|e| CallError::Store(e.to_string()))
    }
}

fn writer(mut conn: Connection, mut state: ingest::State, rx: mpsc::Receiver<Msg>) {
    while let Ok(first) = rx.recv() {
        let mut calls = Vec::new();
        let mut waiters = Vec::new();
        let mut next = Some(first);
        while let Some(msg) = next.take() {
            match msg {
                Msg::Call(c) => calls.push(c),
                Msg::Flush(w) => waiters.push(w),
            }
            if calls.len() < MAX_BATCH {
                next = rx.try_recv().ok();
            }
        }
        if !calls.is_empty()
            && let Err(e) = write_batch(&mut conn, &mut state, &calls)
        {
            tracing::error!(error = %e, calls = calls.len(), "cannot write to the learning journal");
        }
        for w in waiters {
            let _ = w.send(());
        }
    }
}

fn write_batch(
    conn: &mut Connection,
    state: &mut ingest::State,
    calls: &[Box<Call>],
) -> rusqlite::Result<()> {
    let tx = store::write_tx(conn)?;
    for call in calls {
        ingest::ingest(&tx, state, call)?;
    }
    tx.commit()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn calls_are_journaled_behind_the_barrier_and_sessions_survive_a_restart() {
        let dir = tempfile::tempdir().expect("tmp");
        let db = dir.path().join("nova.db");
        let j = Journal::open(&db).expect("open");
        let call = |n: i64, tool: &str, ok: bool| Call {
            call: (format!("c{n}"), n),
            tool: tool.into(),
            owner: "ada".into(),
            tab: Some("t1".into()),
            success: ok,
            failed: !ok,
            url: Some("https://shop.example/".into()),
            selector: Some("#go".into()),
            error_text: (!ok).then(|| "element_not_found".to_owned()),
            at: crate::clock::now_ms() + n,
            ..Call::default()
        };
        j.ingest(call(1, "nova.click_selector", false));
        j.ingest(call(2, "nova.click_selector", true));
        assert!(j.flush_within(FLUSH_MAX).await);
        let (events, cand, obs): (i64, (String, f64, String), i64) = j
            .with(|c| {
                Ok((
                    c.query_row("SELECT COUNT(*) FROM lcj_tool_events", [], |r| r.get(0))?,
                    c.query_row("SELECT status, confidence, origin FROM lcj_candidates", [], |r| {
                        Ok((r.get(0)?, r.get(1)?, r.get(2)?))
                    })?,
                    c.query_row("SELECT COUNT(*) FROM lcj_observations", [], |r| r.get(0))?,
                ))
            })
            .expect("read");
        assert_eq!(events, 2);
        assert_eq!(cand, ("verified".to_owned(), 0.75, "diagnostic".to_owned()), "the fix verified it");
        assert_eq!(obs, 2, "a failure and a success are different keys");
        let session: String = j
            .with(|c| {
                c.query_row("SELECT activity_session_id FROM lcj_tool_events LIMIT 1", [], |r| r.get(0))
            })
            .expect("s");
        drop(j);
        let j = Journal::open(&db).expect("reopen");
        j.ingest(call(3, "nova.perceive", true));
        assert!(j.flush_within(FLUSH_MAX).await);
        let again: String = j
            .with(|c| {
                c.query_row("SELECT activity_session_id FROM lcj_tool_events WHERE call_id = 'c3'", [], |r| {
                    r.get(0)
                })
            })
            .expect("s");
        assert_eq!(again, session, "the same sitting after a restart");
    }
}
