//! The local store: one SQLite database (`nova.db`) in WAL mode, versioned by
//! `PRAGMA user_version` with numbered SQL migrations in `host/migrations/`, checked for integrity
//! every time it is opened. Subsystems own their tables and queries (`tob` owns `observations`);
//! this module only opens connections and migrates.

use std::path::Path;

use rusqlite::{Connection, Transaction, TransactionBehavior};

/// Migrations in order; index + 1 is the schema version they produce.
const MIGRATIONS: &[(&str, &str)] = &[
    ("0001_observations", include_str!("../migrations/0001_observations.sql")),
    ("0002_transitions", include_str!("../migrations/0002_transitions.sql")),
    ("0003_goals", include_str!("../migrations/0003_goals.sql")),
    ("0004_tasks", include_str!("../migrations/0004_tasks.sql")),
    ("0005_control", include_str!("../migrations/0005_control.sql")),
    ("0006_approvals", include_str!("../migrations/0006_approvals.sql")),
    ("0007_gate_decisions", include_str!("../migrations/0007_gate_decisions.sql")),
    ("0008_gate_resume", include_str!("../migrations/0008_gate_resume.sql")),
    ("0009_ok", include_str!("../migrations/0009_ok.sql")),
    ("0010_pks", include_str!("../migrations/0010_pks.sql")),
    ("0011_pks_hints", include_str!("../migrations/0011_pks_hints.sql")),
    ("0012_pks_inherited", include_str!("../migrations/0012_pks_inherited.sql")),
    ("0013_lcj", include_str!("../migrations/0013_lcj.sql")),
    ("0014_lcj_semantic", include_str!("../migrations/0014_lcj_semantic.sql")),
    ("0015_learn_mode", include_str!("../migrations/0015_learn_mode.sql")),
    ("0016_lcj_rollups", include_str!("../migrations/0016_lcj_rollups.sql")),
    ("0017_support", include_str!("../migrations/0017_support.sql")),
    ("0018_transition_caveat", include_str!("../migrations/0018_transition_caveat.sql")),
    ("0019_transition_proof", include_str!("../migrations/0019_transition_proof.sql")),
];

/// The schema version this build writes.
pub const SCHEMA_VERSION: u32 = MIGRATIONS.len() as u32;

/// Why the store could not be opened or used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// SQLite failed.
    #[error("sqlite: {0}")]
    Sqlite(#[from] rusqlite::Error),
    /// The integrity check found damage.
    #[error("store integrity check failed: {0}")]
    Corrupt(String),
    /// The database was written by a newer Nova.
    #[error("store schema version {found} is newer than this build's {supported}; upgrade Nova")]
    TooNew {
        /// Version found on disk.
        found: u32,
        /// Version this build knows.
        supported: u32,
    },
}

/// Opens (creating if needed) the store at `path`, migrates it and checks its integrity.
pub fn open(path: &Path) -> Result<Connection, StoreError> {
    let conn = Connection::open(path)?;
    conn.busy_timeout(std::time::Duration::from_secs(5))?;
    conn.pragma_update(None, "journal_mode", "WAL")?;
    conn.pragma_update(None, "synchronous", "NORMAL")?;
    conn.pragma_update(None, "foreign_keys", "ON")?;
    check_integrity(&conn)?;
    migrate(&conn)?;
    Ok(conn)
}

/// Opens the store read-only (for `nova doctor` and support tooling).
pub fn open_read_only(path: &Path) -> Result<Connection, StoreError> {
    let conn = Connection::open_with_flags(path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)?;
    conn.busy_timeout(std::time::Duration::from_secs(5))?;
    Ok(conn)
}

/// Opens an existing store read-only for the support commands; no store is an error that says
/// how to point at one.
pub fn open_existing(path: &Path) -> anyhow::Result<Connection> {
    anyhow::ensure!(
        path.is_file(),
        "no store at {}: Nova has not run with this data dir (pass --data-dir or set NOVA_HOME)",
        path.display()
    );
    let conn = open_read_only(path)?;
    read_as_current(&conn)?;
    Ok(conn)
}

/// Columns a migration added to a table that already had rows, with the version that added them.
const ADDED_COLUMNS: &[(u32, &str, &str)] =
    &[(18, "transitions", "caveat"), (19, "transitions", "held_assertions")];

/// A store an older Nova wrote, read by the support commands before a hub migrated it: each table
/// that lacks a column [`ADDED_COLUMNS`] names is shadowed by a temporary view (this connection
/// only) that reads it as NULL, so the same queries serve both. The file is not touched.
fn read_as_current(conn: &Connection) -> Result<(), StoreError> {
    let version = schema_version(conn)?;
    let mut missing: Vec<(&str, Vec<&str>)> = Vec::new();
    for (added_in, table, column) in ADDED_COLUMNS.iter().filter(|(v, ..)| *v > version) {
        match missing.iter_mut().find(|(t, _)| t == table) {
            Some((_, columns)) => columns.push(column),
            None => missing.push((table, vec![column])),
        }
        tracing::debug!(table, column, added_in, version, "reading an older store");
    }
    for (table, columns) in missing {
        let nulls: String = columns.iter().map(|c| format!(", NULL AS {c}")).collect();
        conn.execute_batch(&format!("CREATE TEMP VIEW {table} AS SELECT *{nulls} FROM main.{table}"))?;
    }
    Ok(())
}

/// `PRAGMA quick_check`: cheap enough for every open, catches torn pages and broken indexes.
pub fn check_integrity(conn: &Connection) -> Result<(), StoreError> {
    let verdict: String = conn.query_row("PRAGMA quick_check", [], |r| r.get(0))?;
    if verdict == "ok" { Ok(()) } else { Err(StoreError::Corrupt(verdict)) }
}

/// The schema version on disk.
pub fn schema_version(conn: &Connection) -> Result<u32, StoreError> {
    Ok(conn.query_row("PRAGMA user_version", [], |r| r.get(0))?)
}

/// Starts a write transaction that takes the write lock at once (`BEGIN IMMEDIATE`).
///
/// The store is shared by several connections (evidence writer, tasks, goals, controls). A
/// deferred transaction that reads first and writes later cannot wait for the lock: if another
/// connection committed in between, SQLite answers "database is locked" at once, without the busy
/// timeout. Taking the lock up front makes every writer wait its turn instead.
pub fn write_tx(conn: &mut Connection) -> rusqlite::Result<Transaction<'_>> {
    conn.transaction_with_behavior(TransactionBehavior::Immediate)
}

/// [`write_tx`] for a connection borrowed shared (the caller guarantees no nested transaction).
pub fn write_tx_shared(conn: &Connection) -> rusqlite::Result<Transaction<'_>> {
    Transaction::new_unchecked(conn, TransactionBehavior::Immediate)
}

fn migrate(conn: &Connection) -> Result<(), StoreError> {
    loop {
        // The version is read again under the write lock: another connection of the same hub
        // (or a second process) may have migrated while this one waited.
        let tx = write_tx_shared(conn)?;
        let current = schema_version(&tx)?;
        if current > SCHEMA_VERSION {
            return Err(StoreError::TooNew { found: current, supported: SCHEMA_VERSION });
        }
        let Some((name, sql)) = MIGRATIONS.get(current as usize) else { return Ok(()) };
        let version = current + 1;
        tracing::info!(migration = name, version, "migrating store");
        tx.execute_batch(sql)?;
        tx.pragma_update(None, "user_version", version)?;
        tx.commit()?;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn open_migrates_to_latest_and_is_idempotent() {
        let dir = tempfile::tempdir().expect("tmp");
        let path = dir.path().join("nova.db");
        let conn = open(&path).expect("open");
        assert_eq!(schema_version(&conn).expect("v"), SCHEMA_VERSION);
        let mode: String = conn.query_row("PRAGMA journal_mode", [], |r| r.get(0)).expect("m");
        assert_eq!(mode, "wal");
        drop(conn);
        let again = open(&path).expect("reopen");
        assert_eq!(schema_version(&again).expect("v"), SCHEMA_VERSION);
    }

    #[test]
    fn a_store_an_older_nova_wrote_reads_its_added_columns_as_null() {
        let dir = tempfile::tempdir().expect("tmp");
        let path = dir.path().join("nova.db");
        let conn = Connection::open(&path).expect("c");
        let before = ADDED_COLUMNS.iter().map(|(v, ..)| *v).min().expect("a column") - 1;
        for (version, (_, sql)) in (1..=before).zip(MIGRATIONS) {
            conn.execute_batch(sql).expect("migration");
            conn.pragma_update(None, "user_version", version).expect("v");
        }
        conn.execute_batch(
            "INSERT INTO transitions (transition_id, call_id, tool, agent_id, mcp_session, target_id, \
               action_kind, retry_policy, contract_json, state, hub_pid, started_at_ms) \
             VALUES ('t', 'c', 'nova.click', 'a', 's', '1', 'click', 'idempotent', '{}', 'completed', 1, 0)",
        )
        .expect("row");
        drop(conn);
        let old = open_existing(&path).expect("open");
        assert_eq!(schema_version(&old).expect("v"), before, "the file stays as it was");
        let read: (String, Option<String>, Option<String>) = old
            .query_row("SELECT t.transition_id, t.caveat, t.held_assertions FROM transitions t", [], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?))
            })
            .expect("the added columns read");
        assert_eq!(read, ("t".to_owned(), None, None));
        drop(old);
        let current = open(&path).expect("migrate");
        drop(current);
        let now = open_existing(&path).expect("open");
        let added: (Option<String>, Option<String>) = now
            .query_row("SELECT caveat, held_assertions FROM transitions", [], |r| Ok((r.get(0)?, r.get(1)?)))
            .expect("the columns themselves");
        assert_eq!(added, (None, None));
    }

    #[test]
    fn newer_schema_is_refused() {
        let dir = tempfile::tempdir().expect("tmp");
        let path = dir.path().join("nova.db");
        Connection::open(&path).expect("c").pragma_update(None, "user_version", 999).expect("v");
        assert!(matches!(open(&path), Err(StoreError::TooNew { found: 999, .. })));
    }

    #[test]
    fn damaged_file_is_refused() {
        let dir = tempfile::tempdir().expect("tmp");
        let path = dir.path().join("nova.db");
        std::fs::write(&path, b"this is not a database, just bytes long enough ........").expect("w");
        assert!(open(&path).is_err());
    }
}
