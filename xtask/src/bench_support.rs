//! Support tooling on a large store: one million calls over 30 days (with a guarded transition
//! every 50 calls), then `nova log` and `nova report` for one day, by the real binary, timed end
//! to end (process start to exit). The aim is under a second each.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

use rusqlite::params;
use serde_json::{Value, json};

use crate::measure::summary;

/// Calls in the store.
const CALLS: i64 = 1_000_000;
/// Days they spread over.
const DAYS: i64 = 30;
const DAY_MS: i64 = 86_400_000;
const START_MS: i64 = 1_790_000_000_000;

/// Fills a store at `db` (through the real migrations) with [`CALLS`] calls.
fn fill(db: &Path) -> anyhow::Result<()> {
    let mut conn = nova_host::store::open(db)?;
    conn.pragma_update(None, "synchronous", "OFF")?;
    let tx = conn.transaction()?;
    {
        let mut obs = tx.prepare(
            "INSERT INTO observations (seq, call_id, request_id_short, tool, agent_id, mcp_session, target_id, \
             url_before, url_effective, action_kind, surface, signal_flags, ok, executed, outcome_kind, reason_code, \
             error_code, args_json, started_at_ms, duration_ms) \
             VALUES (?1, ?2, substr(?2, 1, 8), ?3, ?4, ?5, ?6, ?7, ?7, ?8, 'webpage', 0, ?9, 1, ?10, ?11, ?12, ?13, ?14, 12)",
        )?;
        let mut tr = tx.prepare(
            "INSERT INTO transitions (transition_id, call_id, tool, agent_id, mcp_session, target_id, url_before, \
             action_kind, retry_policy, contract_json, state, verification_status, hub_pid, started_at_ms) \
             VALUES (?1, ?2, 'nova.click_selector', ?3, 's', ?4, ?5, 'submit', 'non_idempotent', '{}', 'completed', ?6, 1, ?7)",
        )?;
        let tools =
            ["nova.perceive", "nova.read_text", "nova.click_selector", "nova.type_selector", "nova.navigate"];
        let step = DAYS * DAY_MS / CALLS;
        for i in 0..CALLS {
            let id = format!("{i:08x}-0000-4000-8000-{:012x}", i * 7919);
            let tool = tools[(i % 5) as usize];
            let agent = format!("agent-{}", i % 8);
            let tab = (i % 8 + 1).to_string();
            let url = format!("https://shop.test/item/{}?page={}", i % 5000, i % 7);
            let at = START_MS + i * step;
            let blocked = i % 97 == 0;
            let (kind, ok, reason, error) = if blocked {
                (
                    "blocked_preflight",
                    false,
                    Some("perceive_first"),
                    Some("aag_blocked:safety.perceive_first"),
                )
            } else if i % 31 == 0 {
                ("failed", false, Some("element_not_found"), None)
            } else {
                ("success", true, None, None)
            };
            let action = if tool.contains("click") || tool.contains("type") { "interact" } else { "read" };
            obs.execute(params![
                i,
                id,
                tool,
                agent,
                format!("session-{}", i % 8),
                tab,
                url,
                action,
                ok,
                kind,
                reason,
                error,
                "{\"selector\":\"#buy\"}",
                at
            ])?;
            if tool == "nova.click_selector" && i % 50 == 2 {
                let verdict = if i % 300 == 2 { "verified_fail" } else { "verified_success" };
                tr.execute(params![format!("t{i}"), id, agent, tab, url, verdict, at])?;
            }
        }
    }
    tx.commit()?;
    conn.execute_batch("ANALYZE")?;
    Ok(())
}

/// Runs `nova` with `args` against `data` `runs` times; milliseconds per run, and the last stdout.
fn time_runs(host: &Path, data: &Path, args: &[&str], runs: usize) -> anyhow::Result<(Value, String)> {
    let mut samples = Vec::new();
    let mut last = String::new();
    for _ in 0..runs {
        let start = Instant::now();
        let out =
            Command::new(host).arg("--data-dir").arg(data).args(args).stderr(Stdio::inherit()).output()?;
        samples.push(start.elapsed().as_secs_f64() * 1000.0);
        anyhow::ensure!(out.status.success(), "nova {args:?} failed");
        last = String::from_utf8_lossy(&out.stdout).into_owned();
    }
    Ok((summary(samples), last))
}

/// The figures: store build time, then log and report for one day in the middle.
pub fn large_store(host: &Path, runs: usize) -> anyhow::Result<Value> {
    let dir = tempfile::tempdir()?;
    let db = dir.path().join("nova.db");
    let start = Instant::now();
    fill(&db)?;
    let fill_s = start.elapsed().as_secs_f64();
    let day_start = START_MS + 15 * DAY_MS;
    let (since, until) = (day_start.to_string(), (day_start + DAY_MS).to_string());
    let day = ["--since", since.as_str(), "--until", until.as_str()];
    let mut log_args = vec!["log", "-n", "0", "--format", "jsonl"];
    log_args.extend_from_slice(&day);
    let (log_ms, out) = time_runs(host, dir.path(), &log_args, runs)?;
    let day_calls = out.lines().count();
    let mut filtered = vec!["log", "-n", "0", "--outcome", "verified_fail", "--agent", "agent-2"];
    filtered.extend_from_slice(&day);
    let (filtered_ms, _) = time_runs(host, dir.path(), &filtered, runs)?;
    let (tail_ms, _) = time_runs(host, dir.path(), &["log"], runs)?;
    let report = dir.path().join("report.html");
    let mut report_args = vec!["report", "--out", report.to_str().unwrap_or("report.html")];
    report_args.extend_from_slice(&day);
    let (report_ms, _) = time_runs(host, dir.path(), &report_args, runs)?;
    let report_bytes = std::fs::metadata(&report)?.len();
    Ok(json!({
        "calls": CALLS, "days": DAYS, "fillSeconds": (fill_s * 10.0).round() / 10.0,
        "storeBytes": std::fs::metadata(&db)?.len(),
        "dayCalls": day_calls,
        "logDayMs": log_ms, "logDayFilteredMs": filtered_ms, "logTailMs": tail_ms,
        "reportDayMs": report_ms, "reportBytes": report_bytes,
    }))
}

/// The lines `cargo xtask bench` prints.
pub fn render(r: &Value) -> String {
    if r.is_null() {
        return String::new();
    }
    let line = |name: &str, v: &Value| {
        format!("{name:<42} p50 {:>9} ms   p95 {:>9} ms   aim <= 1000 ms\n", v["p50"], v["p95"])
    };
    let mut s = format!(
        "support tooling on {} calls over {} days ({} MB store, {} calls in the day):\n",
        r["calls"],
        r["days"],
        r["storeBytes"].as_u64().unwrap_or(0) / 1_000_000,
        r["dayCalls"]
    );
    s += &line("  nova log, one day, JSON lines", &r["logDayMs"]);
    s += &line("  nova log, one day, --outcome --agent", &r["logDayFilteredMs"]);
    s += &line("  nova log (the last 200)", &r["logTailMs"]);
    s += &line("  nova report, one day", &r["reportDayMs"]);
    s
}
