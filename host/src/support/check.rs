//! `nova store check` and `nova store backup`: a full integrity and foreign-key check, the schema
//! version against this build's migrations, row counts, size and free pages, a plain verdict and
//! the fix; and a sound copy of the store made with `VACUUM INTO`.

use std::io::Write;
use std::path::{Path, PathBuf};

use rusqlite::{Connection, OpenFlags};

use crate::store::SCHEMA_VERSION;

/// What `nova store check` found.
#[derive(Debug, Clone, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Health {
    /// The store file.
    pub path: PathBuf,
    /// File size in bytes (the WAL file included).
    pub bytes: u64,
    /// Pages on SQLite's free list.
    pub free_pages: i64,
    /// Page size.
    pub page_size: i64,
    /// `PRAGMA user_version`.
    pub schema_version: u32,
    /// Rows per table.
    pub rows: Vec<(String, i64)>,
    /// Problems found; empty when sound.
    pub problems: Vec<String>,
}

impl Health {
    /// Whether the store is sound.
    pub fn sound(&self) -> bool {
        self.problems.is_empty()
    }
}

/// Checks the store at `path` without changing it.
pub fn check(path: &Path) -> Result<Health, String> {
    if !path.is_file() {
        return Err(format!(
            "no store at {}: Nova has not run with this data dir (pass --data-dir or set NOVA_HOME)",
            path.display()
        ));
    }
    let bytes = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0)
        + std::fs::metadata(path.with_extension("db-wal")).map(|m| m.len()).unwrap_or(0);
    let mut health = Health {
        path: path.to_owned(),
        bytes,
        free_pages: 0,
        page_size: 0,
        schema_version: 0,
        rows: Vec::new(),
        problems: Vec::new(),
    };
    let conn = match Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_ONLY) {
        Ok(c) => c,
        Err(e) => {
            health.problems.push(format!("the file cannot be opened as a database: {e}"));
            return Ok(health);
        }
    };
    let _ = conn.busy_timeout(std::time::Duration::from_secs(5));
    match integrity(&conn) {
        Ok(msgs) => health.problems.extend(msgs.into_iter().map(|m| format!("integrity_check: {m}"))),
        Err(e) => {
            health.problems.push(format!("integrity_check could not run: {e}"));
            return Ok(health);
        }
    }
    match foreign_keys(&conn) {
        Ok(msgs) => health.problems.extend(msgs),
        Err(e) => health.problems.push(format!("foreign_key_check could not run: {e}")),
    }
    health.schema_version = conn.query_row("PRAGMA user_version", [], |r| r.get(0)).unwrap_or(0);
    if health.schema_version > SCHEMA_VERSION {
        health.problems.push(format!(
            "schema version {} is newer than this build's {SCHEMA_VERSION}: a newer Nova wrote it; upgrade Nova",
            health.schema_version
        ));
    }
    health.page_size = conn.query_row("PRAGMA page_size", [], |r| r.get(0)).unwrap_or(0);
    health.free_pages = conn.query_row("PRAGMA freelist_count", [], |r| r.get(0)).unwrap_or(0);
    health.rows = row_counts(&conn).unwrap_or_default();
    Ok(health)
}

fn integrity(conn: &Connection) -> rusqlite::Result<Vec<String>> {
    let mut stmt = conn.prepare("PRAGMA integrity_check")?;
    let lines: Vec<String> = stmt.query_map([], |r| r.get(0))?.collect::<rusqlite::Result<_>>()?;
    Ok(lines.into_iter().filter(|l| l != "ok").collect())
}

fn foreign_keys(conn: &Connection) -> rusqlite::Result<Vec<String>> {
    let mut stmt = conn.prepare("PRAGMA foreign_key_check")?;
    stmt.query_map([], |r| {
        Ok(format!(
            "foreign_key_check: {} row {} points at a missing {} row",
            r.get::<_, String>(0)?,
            r.get::<_, Option<i64>>(1)?.map_or("?".into(), |n| n.to_string()),
            r.get::<_, String>(2)?
        ))
    })?
    .collect()
}

/// Rows per table, in name order.
pub fn row_counts(conn: &Connection) -> rusqlite::Result<Vec<(String, i64)>> {
    let tables: Vec<String> = conn
        .prepare(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name",
        )?
        .query_map([], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    tables
        .into_iter()
        .map(|t| {
            let n = conn.query_row(&format!("SELECT COUNT(*) FROM \"{t}\""), [], |r| r.get(0))?;
            Ok((t, n))
        })
        .collect()
}

/// Prints the check for people; the fix comes with every problem.
pub fn print(h: &Health, out: &mut impl Write) -> std::io::Result<()> {
    writeln!(out, "store: {}", h.path.display())?;
    writeln!(
        out,
        "size: {:.1} MB, {} free pages of {} bytes",
        h.bytes as f64 / 1e6,
        h.free_pages,
        h.page_size
    )?;
    writeln!(out, "schema version: {} (this build writes {SCHEMA_VERSION})", h.schema_version)?;
    if !h.rows.is_empty() {
        writeln!(out, "rows:")?;
        for (t, n) in &h.rows {
            writeln!(out, "  {t:<24} {n}")?;
        }
    }
    if h.sound() {
        if h.schema_version < SCHEMA_VERSION {
            writeln!(
                out,
                "note: the hub migrates this store to version {SCHEMA_VERSION} when it next starts"
            )?;
        }
        writeln!(out, "verdict: SOUND")?;
        return Ok(());
    }
    writeln!(out, "verdict: DAMAGED ({} problems)", h.problems.len())?;
    for p in h.problems.iter().take(20) {
        writeln!(out, "  - {p}")?;
    }
    if h.problems.len() > 20 {
        writeln!(out, "  - ... and {} more", h.problems.len() - 20)?;
    }
    let dir = h.path.parent().unwrap_or(Path::new("."));
    writeln!(
        out,
        "fix:\n  1. close the browser (the hub stops with it)\n  \
         2. `nova store backup --out {}` copies what can still be read into a new, sound file\n  \
         3. to start fresh and keep the old file: `mv {} {}`; the next hub creates an empty store\n     \
         (or put the backup in its place: `mv {} {}`)",
        dir.join("nova-backup.db").display(),
        h.path.display(),
        dir.join("nova.db.damaged").display(),
        dir.join("nova-backup.db").display(),
        h.path.display(),
    )?;
    Ok(())
}

/// Copies the store at `from` into the new file `to` with `VACUUM INTO` (a consistent, compacted
/// copy, taken while the hub runs); the copy is checked before this returns.
pub fn backup(from: &Path, to: &Path) -> Result<Health, String> {
    if !from.is_file() {
        return Err(format!("no store at {}", from.display()));
    }
    if to.exists() {
        return Err(format!("{} already exists; name a new file with --out", to.display()));
    }
    let conn = Connection::open_with_flags(from, OpenFlags::SQLITE_OPEN_READ_ONLY)
        .map_err(|e| format!("cannot open {}: {e}", from.display()))?;
    let _ = conn.busy_timeout(std::time::Duration::from_secs(10));
    let target = to.to_str().ok_or_else(|| format!("{} is not valid UTF-8", to.display()))?;
    conn.execute("VACUUM INTO ?1", [target]).map_err(|e| {
        format!(
            "VACUUM INTO failed ({e}); the store may be too damaged to copy whole: \
             `sqlite3 {} .recover | sqlite3 {}` recovers what it can",
            from.display(),
            to.display()
        )
    })?;
    crate::paths::set_mode(to, 0o600).map_err(|e| format!("cannot restrict {}: {e}", to.display()))?;
    check(to)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sound_store_passes_and_a_damaged_one_fails_with_the_fix() {
        let dir = tempfile::tempdir().expect("tmp");
        let db = dir.path().join("nova.db");
        drop(crate::store::open(&db).expect("create"));
        let h = check(&db).expect("check");
        assert!(h.sound(), "{:?}", h.problems);
        assert_eq!(h.schema_version, SCHEMA_VERSION);
        assert!(h.rows.iter().any(|(t, _)| t == "observations"));

        let copy = dir.path().join("copy.db");
        assert!(backup(&db, &copy).expect("backup").sound());
        assert!(backup(&db, &copy).expect_err("exists").contains("already exists"));

        // Damage a page in the middle of the file.
        let conn = crate::store::open(&db).expect("open");
        for i in 0..400 {
            conn.execute(
                "INSERT INTO approvals (prompt_id, agent_id, question, decision, asked_at_ms) VALUES (?1, 'a', ?2, 'pending', 1)",
                rusqlite::params![format!("p{i}"), "x".repeat(200)],
            )
            .expect("row");
        }
        conn.pragma_update(None, "wal_checkpoint", "TRUNCATE").ok();
        drop(conn);
        let mut bytes = std::fs::read(&db).expect("read");
        let mid = bytes.len() / 2;
        bytes[mid..mid + 4096].fill(0x5a);
        std::fs::write(&db, &bytes).expect("write");
        let h = check(&db).expect("check");
        assert!(!h.sound());
        let mut out = Vec::new();
        print(&h, &mut out).expect("print");
        let text = String::from_utf8(out).expect("utf8");
        assert!(
            text.contains("DAMAGED")
                && text.contains("nova store backup")
                && text.contains("nova.db.damaged"),
            "{text}"
        );
    }
}
