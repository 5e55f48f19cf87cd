//! Evidence benchmarks (issue 4): observation ingestion through the real recorder, evidence
//! correlation of 10,000 units against 100,000 observations in a real store, and registered
//! coverage scans on a 2,000-word page in Chromium.

use std::time::Instant;

use nova_e2e::Nova;
use nova_host::observation::{Observation, Outcome, flags};
use nova_host::tob::Recorder;
use rusqlite::params;
use serde_json::{Value, json};

use crate::measure::{round, summary};

/// Rows per ingestion run.
const INGEST_ROWS: usize = 100_000;

fn row(rec: &Recorder, i: usize) -> Observation {
    Observation {
        call_id: format!("{:032x}", i),
        seq: rec.next_seq(),
        tool: if i.is_multiple_of(2) { "nova.read_text" } else { "nova.navigate" }.into(),
        agent_id: "bench".into(),
        mcp_session: "s".into(),
        target_id: Some("1".into()),
        url_before: Some(format!("https://bench.test/page/{}", i % 1000)),
        signal_flags: flags::CONTENT_EXPOSED | flags::TARGET_RESOLVED,
        ok: true,
        executed: true,
        outcome: Some(Outcome::Success),
        args_json: Some("{\"maxChars\":2000}".into()),
        started_at_ms: 1_700_000_000_000 + i as i64,
        duration_ms: 12,
        ..Default::default()
    }
}

/// Observation rows per second through `Recorder` (queue + batched inserts + flush).
pub async fn ingestion(runs: usize) -> anyhow::Result<Value> {
    let mut rates = Vec::new();
    for _ in 0..runs {
        let dir = tempfile::tempdir()?;
        let rec = Recorder::start(&dir.path().join("nova.db"))?;
        let start = Instant::now();
        for i in 0..INGEST_ROWS {
            rec.record(row(&rec, i));
        }
        rec.flush().await;
        rates.push(INGEST_ROWS as f64 / start.elapsed().as_secs_f64());
    }
    let best = rates.iter().copied().fold(0.0, f64::max);
    Ok(json!({"rows": INGEST_ROWS, "rowsPerSecond": summary(rates), "bestRowsPerSecond": round(best)}))
}

/// Grading 10,000 checked units against 100,000 scoped observations, loaded from the store.
pub fn correlation(runs: usize) -> anyhow::Result<Value> {
    const UNITS: usize = 10_000;
    const OBS: usize = 100_000;
    let dir = tempfile::tempdir()?;
    let db = dir.path().join("nova.db");
    let mut c = nova_host::store::open(&db)?;
    let tx = c.transaction()?;
    tx.execute(
        "INSERT INTO task_instances (instance_id, instance_rev, effective_context_hash, effective_context_json, status,
            discovery_state, agent_id, effective_task_kind, evidence_scope_id, started_at_ms, last_activity_at_ms)
         VALUES ('bench', 1, 'h', '{}', 'active', 'frozen', 'bench', 'exploratory', 'scope_bench', 0, 0)",
        [],
    )?;
    {
        let mut unit = tx.prepare(
            "INSERT INTO task_units (instance_id, unit_key, unit_kind, status, url, position, updated_at_ms)
             VALUES ('bench', ?1, 'url', 'checked', ?2, ?3, 0)",
        )?;
        for i in 0..UNITS {
            unit.execute(params![format!("u{i}"), format!("https://bench.test/page/{i}"), i as i64])?;
        }
        let mut obs = tx.prepare(
            "INSERT INTO observations (seq, call_id, request_id_short, tool, agent_id, mcp_session, url_effective,
                action_kind, surface, signal_flags, ok, executed, outcome_kind, started_at_ms, duration_ms, workflow_scope_id)
             VALUES (?1, ?2, 'x', ?3, 'bench', 's', ?4, 'read', 'webpage', ?5, 1, 1, 'success', ?6, 20, 'scope_bench')",
        )?;
        // 100,000 calls over the first 8,000 pages: visits with reads, some sustained.
        for i in 0..OBS {
            let page = (i / 12) % 8_000;
            let read = !i.is_multiple_of(3);
            obs.execute(params![
                i as i64 + 1,
                format!("c{i}"),
                if read { "nova.read_text" } else { "nova.navigate" },
                format!("https://bench.test/page/{page}"),
                if read { flags::CONTENT_EXPOSED | flags::DOM_EXPOSED } else { flags::NAVIGATION_INTENT },
                (i as i64) * 100,
            ])?;
        }
    }
    tx.commit()?;
    let mut times = Vec::new();
    let mut counts = Value::Null;
    for _ in 0..runs {
        let start = Instant::now();
        let g = nova_host::etm::grading::correlate(&c, "bench")?;
        times.push(start.elapsed().as_secs_f64() * 1e3);
        counts = json!(g);
    }
    // The store read alone, to show where the time goes.
    let mut load = Vec::new();
    for _ in 0..runs {
        let start = Instant::now();
        let mut stmt = c.prepare_cached(
            "SELECT seq, url_effective, signal_flags, selector, started_at_ms, duration_ms FROM observations
             WHERE workflow_scope_id = 'scope_bench' AND executed = 1 ORDER BY seq",
        )?;
        let n = stmt
            .query_map([], |r| {
                Ok((r.get::<_, i64>(0)?, r.get::<_, Option<String>>(1)?, r.get::<_, i64>(2)?))
            })?
            .count();
        anyhow::ensure!(n == OBS, "read {n} rows");
        load.push(start.elapsed().as_secs_f64() * 1e3);
    }
    Ok(
        json!({"units": UNITS, "observations": OBS, "ms": summary(times), "storeReadMs": summary(load), "grades": counts}),
    )
}

/// `nova.coverage_scan` on a 2,000-word page, per registered scan, in `kind`.
pub async fn coverage(kind: nova_e2e::BrowserKind, iterations: usize) -> anyhow::Result<Value> {
    let nova = Nova::start_in(kind).await?;
    std::fs::write(nova.data.join("settings.json"), crate::measure::BENCH_SETTINGS)?;
    let c = nova.client().await?;
    c.structured("nova.navigate", json!({"url": nova.url("site/special/words-2000.html")})).await?;
    let mut out = json!({});
    for scan in ["nova_full_page_text_v1", "nova_structured_dom_v1", "nova_i18n_spellcheck_v1"] {
        let mut times = Vec::new();
        for _ in 0..iterations.clamp(3, 20) {
            let start = Instant::now();
            let r = c
                .structured(
                    "nova.coverage_scan",
                    json!({"scanId": scan, "scopeOptions": {"waitForHydration": false}}),
                )
                .await?;
            times.push(start.elapsed().as_secs_f64() * 1e3);
            anyhow::ensure!(r["coverageEvidence"]["trust"]["trusted"] == json!(true), "{scan}: {r}");
        }
        out[scan] = summary(times);
    }
    Ok(out)
}
