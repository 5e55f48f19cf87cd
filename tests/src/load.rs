//! Load with the real browser, extension and hub at the product's default gates: eight compliant
//! agents, half over `nova mcp` (stdio) and half over the HTTP endpoint, each on its own tab,
//! walking the journey pages at once (navigate, perceive, read, type, a guarded save). Any error
//! but the designed lease conflict, any call missing from the store and any sign of a busy store
//! fail the run. `tests/tests/test_load.rs` runs it with a reduced count and checks the hub's
//! memory; `cargo xtask bench --only load` runs 500 calls per agent and prints p50 / p99 per tool.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::agent::Agent;
use crate::journey::Journey;
use crate::{BrowserKind, Client, Nova};

/// The agents' names: even ones speak stdio, odd ones HTTP.
pub const AGENTS: [&str; 8] =
    ["load-0", "load-1", "load-2", "load-3", "load-4", "load-5", "load-6", "load-7"];

/// Calls a journey page costs: navigate, perceive, read, type, save.
const CALLS_PER_PAGE: usize = 5;

/// What a run measured.
#[derive(Debug)]
pub struct Report {
    /// Calls each agent made.
    pub calls_per_agent: usize,
    /// Wall time of the concurrent part.
    pub elapsed: Duration,
    /// The hub's resident memory after the warm-up and after the run, KiB.
    pub rss_kib: (u64, u64),
    /// Per tool: calls, p50 and p99, ms.
    pub per_tool: BTreeMap<String, (usize, f64, f64)>,
}

impl Report {
    /// As JSON, for the bench report.
    pub fn to_json(&self) -> Value {
        let tools: serde_json::Map<String, Value> = self
            .per_tool
            .iter()
            .map(|(t, (n, p50, p99))| {
                (t.clone(), json!({"calls": n, "p50": round(*p50), "p99": round(*p99)}))
            })
            .collect();
        json!({
            "agents": AGENTS.len(), "callsPerAgent": self.calls_per_agent,
            "seconds": round(self.elapsed.as_secs_f64()),
            "hubRssKib": {"afterWarmUp": self.rss_kib.0, "afterRun": self.rss_kib.1},
            "perTool": tools,
        })
    }
}

fn round(v: f64) -> f64 {
    (v * 10.0).round() / 10.0
}

/// The hub's resident memory, KiB.
pub fn rss_kib(pid: u32) -> anyhow::Result<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .ok_or_else(|| anyhow::anyhow!("no VmRSS for pid {pid}"))
}

fn percentile_ms(sorted: &[Duration], p: f64) -> f64 {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted.get(i).copied().unwrap_or_default().as_secs_f64() * 1000.0
}

/// One agent's walk: `pages` journey pages after the one it is on.
async fn walk(nova: &Nova, agent: &mut Agent, base: u32, pages: u32) -> anyhow::Result<()> {
    for n in base + 1..=base + pages {
        agent.open(nova, n, false).await?;
        agent.work(n).await?;
    }
    Ok(())
}

/// Runs eight agents at about `calls_per_agent` calls each in `kind`.
pub async fn run(kind: BrowserKind, calls_per_agent: usize) -> anyhow::Result<Report> {
    let nova = Nova::start_with_default_gates_in(kind).await?;
    let hub = crate::wait_for_hub(&nova.data, Duration::from_secs(10))?;
    let mut agents = Vec::new();
    for (i, name) in AGENTS.iter().enumerate() {
        let client = if i % 2 == 0 {
            Client::stdio(&nova.dist.host, &nova.data).await?
        } else {
            Client::http(&hub.http_url, &nova.data).await?
        };
        agents.push(Agent::with_client(client, name));
    }
    // Warm-up: each agent loads its bundle, opens its first page in a tab of its own, claims
    // that tab and works the page.
    for (i, a) in agents.iter_mut().enumerate() {
        let base = 1000 * (i as u32 + 1);
        a.ready().await?;
        a.open(&nova, base, i > 0).await?;
        // Long enough for the longest run (500 calls each).
        a.step("nova.tab_claim", json!({"ttlMs": 1_800_000})).await?;
        a.work(base).await?;
    }
    let tabs: Vec<String> = agents.iter().filter_map(|a| a.tab.clone()).collect();
    let distinct: std::collections::HashSet<&String> = tabs.iter().collect();
    anyhow::ensure!(distinct.len() == AGENTS.len(), "eight tabs, one per agent: {tabs:?}");
    let before = rss_kib(hub.pid)?;

    let pages = (calls_per_agent / CALLS_PER_PAGE).max(1) as u32;
    let started = Instant::now();
    let runs = agents.iter_mut().enumerate().map(|(i, a)| {
        let nova = &nova;
        async move { walk(nova, a, 1000 * (i as u32 + 1), pages).await }
    });
    for r in futures::future::join_all(runs).await {
        r?;
    }
    let elapsed = started.elapsed();

    // The designed conflict: a tab another agent holds cannot be claimed without a reclaim (the
    // 30-minute claims outlast the run: use never shortens them).
    for (i, a) in agents.iter().enumerate() {
        let other = &tabs[(i + 1) % tabs.len()];
        let e = a.client.call_err("nova.tab_claim", json!({"agentId": a.name, "targetId": other})).await?;
        anyhow::ensure!(e.code.0 == -32040, "{}: claiming {other} held by another agent: {e:?}", a.name);
    }

    // Every call is in the store (the claims aside: the conflicts are JSON-RPC errors), and none
    // met a busy store.
    let made: usize = agents.iter().map(|a| a.calls).sum();
    let claims: usize = agents.iter().map(|a| a.calls_of("nova.tab_claim")).sum();
    let names = AGENTS.iter().map(|n| format!("'{n}'")).collect::<Vec<_>>().join(",");
    let want = (made - claims) as i64;
    let rows = nova.count_until(
        &format!(
            "SELECT count(*) FROM observations WHERE agent_id IN ({names}) AND tool != 'nova.tab_claim'"
        ),
        want,
    )?;
    anyhow::ensure!(
        rows == want,
        "{rows} rows of the agents' calls in the store, {want} made (claims aside)"
    );
    let busy = nova.count_until(
        "SELECT count(*) FROM observations WHERE lower(coalesce(reason_code, '') || ' ' || \
         coalesce(error_code, '')) GLOB '*busy*' OR lower(coalesce(reason_code, '') || ' ' || \
         coalesce(error_code, '')) GLOB '*locked*'",
        0,
    )?;
    anyhow::ensure!(busy == 0, "{busy} calls met a busy store");
    let log = std::fs::read_to_string(nova.data.join("logs").join(format!("hub-{}.log", kind.name())))
        .unwrap_or_default();
    for bad in ["database is locked", "SQLITE_BUSY", "cannot write observations", "refuses writes"] {
        anyhow::ensure!(!log.contains(bad), "the hub log says `{bad}`");
    }

    tokio::time::sleep(Duration::from_millis(500)).await;
    let after = rss_kib(hub.pid)?;
    let mut all: BTreeMap<String, Vec<Duration>> = BTreeMap::new();
    for a in &agents {
        for (tool, d) in &a.durations {
            all.entry(tool.clone()).or_default().extend(d);
        }
    }
    let per_tool = all
        .into_iter()
        .map(|(tool, mut d)| {
            d.sort();
            let row = (d.len(), percentile_ms(&d, 0.5), percentile_ms(&d, 0.99));
            (tool, row)
        })
        .collect();
    Ok(Report { calls_per_agent: made / AGENTS.len(), elapsed, rss_kib: (before, after), per_tool })
}

/// The lines a person reads.
pub fn render(r: &Value, label: &str) -> String {
    if r.is_null() {
        return String::new();
    }
    let mut s = format!(
        "load{label}: {} agents x {} calls (half stdio, half HTTP) in {} s; hub RSS {} KiB after warm-up, {} KiB after\n",
        r["agents"],
        r["callsPerAgent"],
        r["seconds"],
        r["hubRssKib"]["afterWarmUp"],
        r["hubRssKib"]["afterRun"]
    );
    s += &format!("  {:<24} {:>6} {:>9} {:>9}\n", "tool", "calls", "p50 ms", "p99 ms");
    for (tool, v) in r["perTool"].as_object().into_iter().flatten() {
        let cell = |k: &str| v[k].to_string();
        s += &format!("  {tool:<24} {:>6} {:>9} {:>9}\n", cell("calls"), cell("p50"), cell("p99"));
    }
    s
}
