//! The store as JSON lines, redacted: one line per row, `{"table": ..., "row": {...}}`, every
//! table in name order (for `nova bundle`). Rows stream out; a large store is never held whole.

use std::io::Write;

use rusqlite::Connection;
use rusqlite::types::ValueRef;
use serde_json::{Map, Value, json};

use super::redact::Redactor;

/// Writes every row of every table; returns the rows written per table.
pub fn write_jsonl(
    conn: &Connection,
    redactor: &Redactor,
    out: &mut impl Write,
) -> anyhow::Result<Vec<(String, u64)>> {
    let tables: Vec<String> = conn
        .prepare(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name",
        )?
        .query_map([], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    let mut written = Vec::new();
    for table in tables {
        let mut stmt = conn.prepare(&format!("SELECT * FROM \"{table}\""))?;
        let names: Vec<String> = stmt.column_names().into_iter().map(str::to_owned).collect();
        let mut rows = stmt.query([])?;
        let mut n = 0u64;
        while let Some(r) = rows.next()? {
            let mut row = Map::new();
            for (i, name) in names.iter().enumerate() {
                row.insert(name.clone(), cell(r.get_ref(i)?, redactor));
            }
            let line = json!({"table": table, "row": row});
            writeln!(out, "{line}")?;
            n += 1;
        }
        written.push((table, n));
    }
    Ok(written)
}

fn cell(v: ValueRef<'_>, redactor: &Redactor) -> Value {
    match v {
        ValueRef::Null => Value::Null,
        ValueRef::Integer(i) => json!(i),
        ValueRef::Real(f) => json!(f),
        // JSON kept in text columns stays text: the export is the store as it is, redacted.
        ValueRef::Text(t) => Value::String(redactor.cell(&String::from_utf8_lossy(t))),
        ValueRef::Blob(b) => json!({"blobBytes": b.len()}),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_row_round_trips_as_one_json_line_and_secrets_go() {
        let dir = tempfile::tempdir().expect("tmp");
        let conn = crate::store::open(&dir.path().join("nova.db")).expect("open");
        conn.execute(
            "INSERT INTO approvals (prompt_id, agent_id, question, decision, asked_at_ms) \
             VALUES ('p1', 'a', 'open https://x.test/?token=SEKRIT1 ?', 'pending', 7)",
            [],
        )
        .expect("row");
        let mut out = Vec::new();
        let counts = write_jsonl(&conn, &Redactor::default(), &mut out).expect("export");
        assert!(counts.contains(&("approvals".to_owned(), 1)));
        let text = String::from_utf8(out).expect("utf8");
        assert!(!text.contains("SEKRIT1"));
        let lines: Vec<Value> = text.lines().map(|l| serde_json::from_str(l).expect("json line")).collect();
        let row = lines.iter().find(|l| l["table"] == "approvals").expect("approval");
        assert_eq!(row["row"]["asked_at_ms"], 7);
        assert_eq!(row["row"]["question"], "open https://x.test/?token=[redacted] ?");
    }
}
