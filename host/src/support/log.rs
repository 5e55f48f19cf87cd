//! `nova log`: the calls as a table (newest last), JSON or JSON lines, once or live
//! (`--follow`), and `nova log show` for one call (docs/support.md).

use std::io::Write;
use std::time::Duration;

use rusqlite::Connection;
use serde_json::Value;

use super::calls::{self, CallRow, Filter};

/// How `nova log` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Aligned columns for people.
    Table,
    /// One JSON array.
    Json,
    /// One JSON object per line.
    Jsonl,
}

/// How often `--follow` looks for new calls.
pub const FOLLOW_POLL: Duration = Duration::from_millis(400);

/// Prints the last `limit` matching calls (all when `None`); returns the last sequence number
/// printed (for `--follow`).
pub fn print(
    conn: &Connection,
    filter: &Filter,
    limit: Option<usize>,
    format: Format,
    out: &mut impl Write,
) -> anyhow::Result<Option<i64>> {
    let rows = calls::query(conn, filter, limit)?;
    let last = rows.iter().filter_map(|r| r.seq).max();
    match format {
        Format::Json => writeln!(out, "{}", serde_json::to_string_pretty(&rows)?)?,
        Format::Jsonl => jsonl(&rows, out)?,
        Format::Table => {
            table(&rows, true, out)?;
            let total = calls::count(conn, filter)?;
            let shown = i64::try_from(rows.len()).unwrap_or(i64::MAX);
            if total > shown {
                writeln!(
                    out,
                    "-- the last {shown} of {total} matching calls; -n 0 shows all, --since narrows --"
                )?;
            } else if total == 0 {
                writeln!(out, "-- no calls match --")?;
            }
        }
    }
    Ok(last)
}

/// How far back (in sequence numbers) `--follow` looks again: a call's number is taken when it
/// starts and its row is written when it ends, so a slow call lands after quicker later ones.
const FOLLOW_LOOKBACK: i64 = 2000;

/// Prints calls as they are recorded, after `last` (the newest already printed), until killed.
pub fn follow(
    conn: &Connection,
    filter: &Filter,
    last: Option<i64>,
    format: Format,
    out: &mut impl Write,
) -> anyhow::Result<()> {
    let mut newest = match last {
        Some(n) => n,
        None => conn.query_row("SELECT COALESCE(MAX(seq), 0) FROM observations", [], |r| r.get(0))?,
    };
    // Sequence numbers printed (or already there at the start) within the lookback.
    let mut printed: std::collections::BTreeSet<i64> = std::collections::BTreeSet::new();
    let start = Filter { after_seq: Some(newest - FOLLOW_LOOKBACK), ..Filter::default() };
    printed.extend(calls::query(conn, &start, None)?.iter().filter_map(|r| r.seq));
    loop {
        out.flush()?;
        std::thread::sleep(FOLLOW_POLL);
        let f = Filter { after_seq: Some(newest - FOLLOW_LOOKBACK), ..filter.clone() };
        let rows: Vec<CallRow> = calls::query(conn, &f, None)?
            .into_iter()
            .filter(|r| r.seq.is_some_and(|s| !printed.contains(&s)))
            .collect();
        printed.extend(rows.iter().filter_map(|r| r.seq));
        newest = newest.max(printed.last().copied().unwrap_or(newest));
        printed = printed.split_off(&(newest - FOLLOW_LOOKBACK));
        match format {
            Format::Table => table(&rows, false, out)?,
            Format::Json | Format::Jsonl => jsonl(&rows, out)?,
        }
    }
}

fn jsonl(rows: &[CallRow], out: &mut impl Write) -> anyhow::Result<()> {
    for r in rows {
        writeln!(out, "{}", serde_json::to_string(r)?)?;
    }
    Ok(())
}

const HEADER: [&str; 8] = ["TIME (UTC)", "CALL", "AGENT", "TAB", "TOOL", "OUTCOME", "REASON", "URL"];

/// Fixed widths for live output (rows arrive one by one), so that columns stay aligned.
const FOLLOW_WIDTHS: [usize; 7] = [23, 8, 12, 4, 22, 16, 28];

fn cells(r: &CallRow) -> [String; 8] {
    [
        r.at.replace('T', " ").trim_end_matches('Z').to_owned(),
        r.call_id.chars().take(8).collect(),
        r.agent.clone(),
        r.tab.clone().unwrap_or_else(|| "-".into()),
        r.tool.strip_prefix("nova.").unwrap_or(&r.tool).to_owned(),
        r.outcome.clone(),
        r.reason.clone().unwrap_or_else(|| "-".into()),
        r.url.clone().unwrap_or_else(|| "-".into()),
    ]
}

fn table(rows: &[CallRow], header: bool, out: &mut impl Write) -> anyhow::Result<()> {
    let cells: Vec<[String; 8]> = rows.iter().map(cells).collect();
    let widths: [usize; 7] = if header {
        std::array::from_fn(|i| {
            cells.iter().map(|c| c[i].chars().count()).max().unwrap_or(0).max(HEADER[i].len())
        })
    } else {
        FOLLOW_WIDTHS
    };
    let line = |c: [&str; 8]| -> String {
        let mut s = String::new();
        for (i, w) in widths.iter().enumerate() {
            s.push_str(&format!("{:<w$}  ", c[i]));
        }
        s.push_str(c[7]);
        s
    };
    if header && !cells.is_empty() {
        writeln!(out, "{}", line(HEADER))?;
    }
    for c in &cells {
        writeln!(out, "{}", line(std::array::from_fn(|i| c[i].as_str())))?;
    }
    Ok(())
}

/// Prints `nova log show`'s record for people: a section per part, values as compact JSON.
pub fn print_record(record: &Value, out: &mut impl Write) -> anyhow::Result<()> {
    let Some(map) = record.as_object() else { return Ok(()) };
    for (section, value) in map {
        match value {
            Value::Object(fields) => {
                writeln!(out, "{section}:")?;
                for (k, v) in fields {
                    if !v.is_null() && v != &Value::Array(Vec::new()) {
                        writeln!(out, "  {k}: {}", plain(v))?;
                    }
                }
            }
            Value::Array(items) => {
                writeln!(out, "{section}:{}", if items.is_empty() { " none" } else { "" })?;
                for i in items {
                    writeln!(out, "  - {}", plain(i))?;
                }
            }
            Value::Null => writeln!(out, "{section}: none")?,
            other => writeln!(out, "{section}: {}", plain(other))?,
        }
    }
    Ok(())
}

fn plain(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}
