//! `nova bundle`: a support archive (`.tar.gz`) a person can send: the activity report, the store
//! as redacted JSON lines, settings, `nova doctor` and `nova store check` output, versions and
//! the recent hub logs. Everything passes the [`Redactor`], which also knows the MCP token by
//! value. Never included: the store file itself, the token file, screenshots (unless asked for).

use std::io::Write;
use std::path::{Path, PathBuf};

use flate2::Compression;
use flate2::write::GzEncoder;
use serde_json::json;

use super::calls::Filter;
use super::redact::Redactor;
use crate::paths::DataDir;

/// The tail of each hub log that goes in.
pub const LOG_TAIL_BYTES: u64 = 2 * 1024 * 1024;

/// What to put in.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// The report's window (the JSONL export is always the whole store).
    pub filter: Filter,
    /// Inline screenshots into the report.
    pub with_screenshots: bool,
}

/// One file in the archive and what it is.
#[derive(Debug, Clone)]
pub struct Entry {
    /// Path inside the archive.
    pub name: String,
    /// Its size.
    pub bytes: usize,
    /// What it holds.
    pub about: String,
}

/// Writes the archive to `out`; returns what went in.
pub fn write(data: &DataDir, opts: &Options, out: &Path) -> anyhow::Result<Vec<Entry>> {
    let redactor = Redactor::for_data_dir(data);
    let mut files: Vec<(String, Vec<u8>, String)> = Vec::new();
    let store = data.db();
    // A damaged store is when a bundle matters most: what cannot be read is said, the rest goes in.
    let conn = store.is_file().then(|| crate::store::open_read_only(&store));
    let mut unreadable: Vec<String> = Vec::new();
    match &conn {
        Some(Ok(conn)) => {
            match super::report::of_store(data, &opts.filter, opts.with_screenshots) {
                Ok((html, calls)) => files.push((
                    "report.html".into(),
                    html.into_bytes(),
                    format!(
                        "the activity report ({calls} calls{})",
                        if opts.with_screenshots { ", screenshots inline" } else { ", no screenshots" }
                    ),
                )),
                Err(e) => unreadable.push(format!("report.html: the report could not be made: {e}")),
            }
            let mut jsonl = Vec::new();
            match super::export::write_jsonl(conn, &redactor, &mut jsonl) {
                Ok(counts) => {
                    let rows: u64 = counts.iter().map(|(_, n)| n).sum();
                    files.push((
                        "store.jsonl".into(),
                        jsonl,
                        format!("the store, redacted: {rows} rows of {} tables", counts.len()),
                    ));
                }
                Err(e) => {
                    let rows = jsonl.iter().filter(|b| **b == b'\n').count();
                    files.push((
                        "store.jsonl".into(),
                        jsonl,
                        format!("the store, redacted, cut short after {rows} rows (see unreadable.txt)"),
                    ));
                    unreadable.push(format!("store.jsonl: the export stopped: {e}"));
                }
            }
        }
        Some(Err(e)) => unreadable.push(format!("the store could not be opened: {e}")),
        None => unreadable.push(format!("no store at {}", store.display())),
    }
    if !unreadable.is_empty() {
        let text = unreadable.join("\n") + "\n";
        files.push((
            "unreadable.txt".into(),
            redactor.text(&text).into_owned().into_bytes(),
            "what could not be read".into(),
        ));
    }
    let mut check = Vec::new();
    match super::check::check(&store) {
        Ok(h) => super::check::print(&h, &mut check)?,
        Err(e) => writeln!(check, "{e}")?,
    }
    files.push(("store-check.txt".into(), check, "`nova store check`".into()));

    let mut doctor = Vec::new();
    crate::doctor::report(&crate::doctor::run_checks(data), &mut doctor)?;
    files.push((
        "doctor.txt".into(),
        redactor.text(&String::from_utf8_lossy(&doctor)).into_owned().into_bytes(),
        "`nova doctor`".into(),
    ));

    let settings_path = data.root().join("settings.json");
    let settings = match std::fs::read_to_string(&settings_path) {
        Ok(text) => match serde_json::from_str::<serde_json::Value>(&text) {
            Ok(v) => serde_json::to_string_pretty(&redactor.json(&v))?,
            Err(e) => format!(
                "settings.json is not valid JSON ({e}); its text, redacted:\n{}",
                redactor.text(&text)
            ),
        },
        Err(_) => "no settings.json: every setting has its default".into(),
    };
    files.push(("settings.json".into(), settings.into_bytes(), "the person's settings".into()));

    let hubs: Vec<serde_json::Value> = crate::ipc::HubRecord::all(data)
        .iter()
        .map(|h| json!({"browser": h.browser, "pid": h.pid, "httpUrl": h.http_url, "startedAt": crate::time::iso(h.started_at_ms), "caller": h.caller}))
        .collect();
    let versions = json!({
        "nova": env!("CARGO_PKG_VERSION"),
        "schemaVersion": crate::store::SCHEMA_VERSION,
        "storeSchemaVersion": conn.as_ref().and_then(|c| c.as_ref().ok()).and_then(|c| crate::store::schema_version(c).ok()),
        "os": std::env::consts::OS, "arch": std::env::consts::ARCH,
        "hubs": hubs,
        "bundledAt": crate::time::iso(crate::time::now_ms()),
    });
    files.push((
        "versions.json".into(),
        serde_json::to_string_pretty(&versions)?.into_bytes(),
        "versions and hubs".into(),
    ));

    for log in logs(data) {
        let Some(name) = log.file_name().and_then(|n| n.to_str()).map(str::to_owned) else { continue };
        let text = tail(&log, LOG_TAIL_BYTES)?;
        let redacted = redactor.text(&text).into_owned();
        files.push((
            format!("logs/{name}"),
            redacted.into_bytes(),
            "hub log (the last 2 MB), redacted".into(),
        ));
    }

    let entries: Vec<Entry> =
        files.iter().map(|(n, b, a)| Entry { name: n.clone(), bytes: b.len(), about: a.clone() }).collect();
    let mut manifest = String::from(
        "Nova support bundle. Redacted: typed text and passwords (never stored), the MCP token, cookies, Authorization headers, credential-like URL parameters.\n\n",
    );
    for e in &entries {
        manifest.push_str(&format!("{:<24} {:>10} bytes  {}\n", e.name, e.bytes, e.about));
    }
    files.insert(0, ("README.txt".into(), manifest.into_bytes(), "what is in here".into()));

    let partial = out.with_extension("partial");
    let file = std::fs::File::create(&partial)?;
    crate::paths::set_mode(&partial, 0o600)?;
    let mut tar = tar::Builder::new(GzEncoder::new(file, Compression::default()));
    let now = u64::try_from(crate::time::now_ms() / 1000).unwrap_or(0);
    for (name, bytes, _) in &files {
        let mut header = tar::Header::new_gnu();
        header.set_size(bytes.len() as u64);
        header.set_mode(0o600);
        header.set_mtime(now);
        header.set_cksum();
        tar.append_data(&mut header, format!("nova-bundle/{name}"), bytes.as_slice())?;
    }
    tar.into_inner()?.finish()?.sync_all()?;
    std::fs::rename(&partial, out)?;
    Ok(entries)
}

fn logs(data: &DataDir) -> Vec<PathBuf> {
    let mut logs: Vec<PathBuf> = std::fs::read_dir(data.logs())
        .map(|d| d.filter_map(Result::ok).map(|e| e.path()).filter(|p| p.is_file()).collect())
        .unwrap_or_default();
    logs.sort();
    logs
}

/// The last `max` bytes of a file, from the first whole line.
fn tail(path: &Path, max: u64) -> std::io::Result<String> {
    use std::io::{Read, Seek, SeekFrom};
    let mut f = std::fs::File::open(path)?;
    let len = f.metadata()?.len();
    let start = len.saturating_sub(max);
    f.seek(SeekFrom::Start(start))?;
    let mut buf = Vec::new();
    f.read_to_end(&mut buf)?;
    let text = String::from_utf8_lossy(&buf).into_owned();
    Ok(if start > 0 { text.split_once('\n').map_or(text.clone(), |(_, rest)| rest.to_owned()) } else { text })
}

/// The default archive name: `nova-bundle-<UTC time>.tar.gz` in the current directory.
pub fn default_name() -> PathBuf {
    let stamp: String = crate::time::iso(crate::time::now_ms())
        .chars()
        .take(19)
        .map(|c| if c == ':' { '-' } else { c })
        .collect();
    PathBuf::from(format!("nova-bundle-{stamp}.tar.gz"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_damaged_store_still_gives_a_bundle_that_says_what_could_not_be_read() {
        let dir = tempfile::tempdir().expect("tmp");
        let data = DataDir::at(dir.path());
        data.ensure().expect("dirs");
        let conn = crate::store::open(&data.db()).expect("store");
        for i in 0..300 {
            conn.execute(
                "INSERT INTO approvals (prompt_id, agent_id, question, decision, asked_at_ms) VALUES (?1, 'a', ?2, 'pending', 1)",
                rusqlite::params![format!("p{i}"), "x".repeat(300)],
            )
            .expect("row");
        }
        let root: i64 = conn
            .query_row("SELECT rootpage FROM sqlite_master WHERE name = 'approvals'", [], |r| r.get(0))
            .expect("root");
        conn.pragma_update(None, "wal_checkpoint", "TRUNCATE").expect("checkpoint");
        drop(conn);
        let mut bytes = std::fs::read(data.db()).expect("read");
        let at = usize::try_from((root - 1) * 4096).expect("offset");
        bytes[at + 8..at + 4096].fill(0x5a);
        std::fs::write(data.db(), &bytes).expect("write");

        let out = dir.path().join("b.tar.gz");
        let entries = write(&data, &Options::default(), &out).expect("a bundle all the same");
        let names: Vec<&str> = entries.iter().map(|e| e.name.as_str()).collect();
        for n in ["store-check.txt", "doctor.txt", "versions.json", "unreadable.txt"] {
            assert!(names.contains(&n), "{n} missing from {names:?}");
        }
        assert!(out.is_file());
    }
}
