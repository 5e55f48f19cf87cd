//! `cargo xtask bench`: prints and writes (`target/bench/nova-bench.json`) the figures of the
//! foundation: native round trip, perceive on a 5,000-node page, click round trip, host cold start
//! and WASM sizes. `--peer` also runs Playwright MCP and chrome-devtools-mcp on the same pages and
//! Chromium and prints them side by side (`bench_peer`). Benchmarks print numbers; nothing here
//! asserts a time.

use std::io::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context as _, bail};
use nova_e2e::{BrowserKind, Nova};
use serde_json::{Value, json};

use crate::build;
use crate::cmd::step;
use crate::measure::{BENCH_SETTINGS, summary};

/// Flags of `cargo xtask bench`.
#[derive(clap::Args)]
pub struct BenchArgs {
    /// Also run Playwright MCP and chrome-devtools-mcp (npm) on the same pages and compare.
    #[arg(long)]
    peer: bool,
    /// Iterations per browser measurement.
    #[arg(long, default_value_t = 30)]
    iterations: usize,
    /// Run only these groups (host, tools, browser, stages, profile, reads, memory, guarded, evidence,
    /// coverage, realapps, support, injection, load); all by default.
    #[arg(long, value_delimiter = ',')]
    only: Vec<String>,
    /// The page `profile` reads: list (5,000 nodes), article or app.
    #[arg(long, default_value = "list", value_parser = ["list", "article", "app"])]
    profile_page: String,
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// Runs the benchmarks.
pub fn bench(args: BenchArgs) -> anyhow::Result<()> {
    let run = |group: &str| args.only.is_empty() || args.only.iter().any(|g| g == group);
    if [
        "tools",
        "browser",
        "stages",
        "profile",
        "reads",
        "memory",
        "guarded",
        "coverage",
        "realapps",
        "injection",
        "load",
    ]
    .into_iter()
    .any(run)
        || args.peer
    {
        crate::ensure::ensure_chromium()?;
        crate::ensure::ensure_firefox()?;
    }
    let built = build::build()?;
    let mut report = json!({});
    let runtime = tokio::runtime::Runtime::new()?;
    if run("host") {
        step("host: native-messaging round trip and cold start");
        report["nativeRoundTripMs"] = native_round_trip(&built.host, 2000)?;
        report["hostColdStartMs"] = cold_start(&built.host, 10)?;
        report["wasm"] = sizes(&built.extension)?;
    }
    if run("tools") {
        step("tools: tools/list per listing, in tokens of a real tokenizer");
        report["tools"] = crate::bench_tools::listings(&built.host)?;
        report["tools"]["peers"] = runtime.block_on(crate::bench_tools::peer_listings())?;
    }
    // The browser groups run in Chromium (`browser`, `guarded`, `coverageScanMs`) and again in
    // Firefox (`firefox.browser`, `firefox.guarded`, `firefox.coverageScanMs`), on the same pages.
    if run("browser") {
        step("browser: perceive on 5,000 nodes, click round trip, navigate (Chromium)");
        report["browser"] = runtime.block_on(browser(BrowserKind::Chromium, args.iterations))?;
        step("browser: the same in Firefox");
        report["firefox"]["browser"] = runtime.block_on(browser(BrowserKind::Firefox, args.iterations))?;
    }
    if run("stages") {
        step("stages: where the time of a page read and a click goes (Chromium)");
        report["stages"] =
            runtime.block_on(crate::bench_stages::stages(BrowserKind::Chromium, args.iterations))?;
        step("stages: the same in Firefox");
        report["firefox"]["stages"] =
            runtime.block_on(crate::bench_stages::stages(BrowserKind::Firefox, args.iterations))?;
    }
    if run("profile") {
        step(&format!(
            "profile: on what the page spends a read of the {} page (Chromium)",
            args.profile_page
        ));
        report["profile"] =
            runtime.block_on(crate::bench_profile::profile(&args.profile_page, args.iterations))?;
    }
    if run("reads") {
        step("reads: tokens of full and incremental reads over a 20-step flow (Chromium)");
        report["reads"] = runtime.block_on(crate::bench_reads::tokens(BrowserKind::Chromium))?;
        step("reads: the same in Firefox");
        report["firefox"]["reads"] = runtime.block_on(crate::bench_reads::tokens(BrowserKind::Firefox))?;
    }
    if run("memory") {
        step("memory: hub RSS idle and after 10,000 calls, Nova's cost per tab (Chromium)");
        report["memory"] = runtime.block_on(crate::bench_memory::figures(BrowserKind::Chromium))?;
        step("memory: the hub in Firefox");
        report["firefox"]["memory"] = runtime.block_on(crate::bench_memory::figures(BrowserKind::Firefox))?;
    }
    if run("guarded") {
        step("browser: guarded click overhead and verdict latency (Chromium)");
        report["guarded"] = runtime.block_on(guarded(BrowserKind::Chromium, args.iterations))?;
        step("browser: the same in Firefox");
        report["firefox"]["guarded"] = runtime.block_on(guarded(BrowserKind::Firefox, args.iterations))?;
    }
    if run("evidence") {
        step("evidence: observation ingestion, correlation of 10,000 units x 100,000 observations");
        report["ingestion"] = runtime.block_on(crate::bench_tasks::ingestion(3))?;
        report["correlation"] = crate::bench_tasks::correlation(5)?;
    }
    if run("coverage") {
        step("browser: registered coverage scans on a 2,000-word page (Chromium)");
        report["coverageScanMs"] =
            runtime.block_on(crate::bench_tasks::coverage(BrowserKind::Chromium, args.iterations))?;
        step("browser: the same in Firefox");
        report["firefox"]["coverageScanMs"] =
            runtime.block_on(crate::bench_tasks::coverage(BrowserKind::Firefox, args.iterations))?;
    }
    if run("realapps") {
        step("real applications: verdict latency per step, Django admin and MediaWiki (Chromium)");
        report["realapps"] = runtime.block_on(crate::bench_realapps::verdicts(BrowserKind::Chromium, 5))?;
        step("real applications: the same in Firefox");
        report["firefox"]["realapps"] =
            runtime.block_on(crate::bench_realapps::verdicts(BrowserKind::Firefox, 5))?;
    }
    if run("injection") {
        step("injection: promptInjectionWarning on 30 attack and 30 ordinary pages (Chromium)");
        report["injection"] = runtime.block_on(crate::bench_injection::detection(BrowserKind::Chromium))?;
        step("injection: the same in Firefox");
        report["firefox"]["injection"] =
            runtime.block_on(crate::bench_injection::detection(BrowserKind::Firefox))?;
    }
    if run("load") {
        step("load: 8 agents (4 stdio, 4 HTTP) x 500 calls on 8 tabs (Chromium)");
        report["load"] = runtime.block_on(nova_e2e::load::run(BrowserKind::Chromium, 500))?.to_json();
        step("load: the same in Firefox");
        report["firefox"]["load"] =
            runtime.block_on(nova_e2e::load::run(BrowserKind::Firefox, 500))?.to_json();
    }
    if run("support") {
        step("support: nova log and nova report for one day of a store of 1,000,000 calls");
        report["support"] = crate::bench_support::large_store(&built.host, 5)?;
    }
    if args.peer {
        step("peer: Nova, Playwright MCP and chrome-devtools-mcp on the same pages (Chromium)");
        report["peer"] = runtime.block_on(crate::bench_peer::compare(args.iterations))?;
    }
    let out = crate::cmd::target_dir().join("bench");
    std::fs::create_dir_all(&out)?;
    let text = serde_json::to_string_pretty(&report)?;
    std::fs::write(out.join("nova-bench.json"), &text)?;
    let mut stdout = std::io::stdout();
    writeln!(stdout, "{}", render(&report))?;
    writeln!(stdout, "JSON: {}", out.join("nova-bench.json").display())?;
    Ok(())
}

fn render(r: &Value) -> String {
    let line = |name: &str, v: &Value, aim: &str| {
        if v.is_null() {
            return String::new();
        }
        format!("{name:<42} p50 {:>9} ms   p95 {:>9} ms   {aim}\n", v["p50"], v["p95"])
    };
    let mut s = String::from("\nNova benchmarks\n");
    s += &line("native round trip (host, piped)", &r["nativeRoundTripMs"], "aim p50 <= 1 ms");
    s += &line("host cold start (to ready)", &r["hostColdStartMs"], "aim <= 30 ms");
    for (label, b) in [("", r), (" [firefox]", &r["firefox"])] {
        let name = |n: &str| format!("{n}{label}");
        s += &line(&name("nova.perceive, 5,000 nodes"), &b["browser"]["perceive5000Ms"], "aim p50 <= 30 ms");
        s += &line(&name("nova.click_selector round trip"), &b["browser"]["clickMs"], "");
        s += &line(&name("nova.navigate"), &b["browser"]["navigateMs"], "");
        s += &line(&name("raw click (bench-cls)"), &b["guarded"]["rawClickMs"], "");
        s += &line(&name("guarded click, signal at once"), &b["guarded"]["guardedClickMs"], "");
        s += &line(&name("guarded overhead over raw"), &b["guarded"]["guardedOverheadMs"], "");
        s += &line(
            &name("verdict latency after hold"),
            &b["guarded"]["verdictLatencyAfterHoldMs"],
            "aim <= 25 ms",
        );
    }
    for (label, b) in [("", r), (" [firefox]", &r["firefox"])] {
        s += &crate::bench_realapps::render(&b["realapps"], label);
    }
    if r.get("ingestion").is_some() {
        s += &format!(
            "{:<34} p50 {:>9} rows/s best {:>9} rows/s   aim >= 50,000 rows/s\n",
            "observation ingestion (100k rows)",
            r["ingestion"]["rowsPerSecond"]["p50"],
            r["ingestion"]["bestRowsPerSecond"]
        );
    }
    s += &line("correlation 10k units x 100k obs", &r["correlation"]["ms"], "aim <= 200 ms");
    s += &crate::bench_support::render(&r["support"]);
    for (label, b) in [("", r), (" [firefox]", &r["firefox"])] {
        s += &crate::bench_injection::render(&b["injection"], label);
    }
    for (label, b) in [("", r), (" [firefox]", &r["firefox"])] {
        s += &nova_e2e::load::render(&b["load"], label);
    }
    for (label, b) in [("", r), (" [firefox]", &r["firefox"])] {
        for (scan, v) in b["coverageScanMs"].as_object().into_iter().flatten() {
            let scan = scan.trim_start_matches("nova_").trim_end_matches("_v1");
            s += &line(&format!("coverage_scan 2,000 words ({scan}){label}"), v, "");
        }
    }
    if r.get("browser").is_some() {
        s += &format!(
            "{:<34} {} bytes (~{} tokens) for {} elements\n",
            "perceive size, 5,000 nodes",
            r["browser"]["perceiveBytes"],
            r["browser"]["perceiveTokens"],
            r["browser"]["perceiveElements"]
        );
    }
    s += &crate::bench_tools::render(&r["tools"]);
    for (label, b) in [("", r), (" [firefox]", &r["firefox"])] {
        if !b["stages"].is_null() {
            s += &crate::bench_stages::render(&b["stages"], label);
        }
        s += &crate::bench_reads::render(&b["reads"], label);
        s += &crate::bench_memory::render(&b["memory"], label);
    }
    s += &crate::bench_profile::render(&r["profile"]);
    for (k, v) in r["wasm"].as_object().into_iter().flatten() {
        s += &format!("{k:<34} {} bytes, {} gzipped\n", v["bytes"], v["gzip"]);
    }
    if let Some(peer) = r.get("peer") {
        s += &crate::bench_peer::render(peer);
    }
    s
}

fn frame(payload: &str) -> Vec<u8> {
    let mut v = u32::try_from(payload.len()).unwrap_or(u32::MAX).to_ne_bytes().to_vec();
    v.extend_from_slice(payload.as_bytes());
    v
}

fn read_frame(r: &mut impl std::io::Read) -> anyhow::Result<Vec<u8>> {
    let mut len = [0u8; 4];
    r.read_exact(&mut len)?;
    let mut body = vec![0u8; u32::from_ne_bytes(len) as usize];
    r.read_exact(&mut body)?;
    Ok(body)
}

fn spawn_hub(host: &Path, data: &Path) -> anyhow::Result<std::process::Child> {
    Ok(Command::new(host)
        .arg(format!("chrome-extension://{}/", nova_shared::CHROMIUM_EXTENSION_ID))
        .env("NOVA_HOME", data)
        .env("NOVA_HTTP_PORT", "0")
        .env("NOVA_LOG", "warn")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()?)
}

fn native_round_trip(host: &Path, n: usize) -> anyhow::Result<Value> {
    let data = tempfile::tempdir()?;
    let mut hub = spawn_hub(host, data.path())?;
    let mut stdin = hub.stdin.take().context("stdin")?;
    let mut stdout = hub.stdout.take().context("stdout")?;
    let mut samples = Vec::with_capacity(n);
    for i in 0..n + 50 {
        let req = json!({"v": 1, "id": i, "kind": "req", "method": "ping", "params": {"i": i}}).to_string();
        let start = Instant::now();
        stdin.write_all(&frame(&req))?;
        stdin.flush()?;
        read_frame(&mut stdout)?;
        if i >= 50 {
            samples.push(ms(start.elapsed()));
        }
    }
    drop(stdin);
    let _ = hub.wait();
    Ok(summary(samples))
}

fn cold_start(host: &Path, runs: usize) -> anyhow::Result<Value> {
    let mut samples = Vec::new();
    for _ in 0..runs {
        let data = tempfile::tempdir()?;
        let start = Instant::now();
        let mut hub = spawn_hub(host, data.path())?;
        let file = data.path().join("hubs/chromium.json");
        while !file.exists() {
            if start.elapsed() > Duration::from_secs(10) {
                bail!("hub did not become ready");
            }
            std::thread::sleep(Duration::from_micros(200));
        }
        samples.push(ms(start.elapsed()));
        drop(hub.stdin.take());
        let _ = hub.wait();
    }
    Ok(summary(samples))
}

fn gzip_len(bytes: &[u8]) -> anyhow::Result<usize> {
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    enc.write_all(bytes)?;
    Ok(enc.finish()?.len())
}

fn sizes(extension: &Path) -> anyhow::Result<Value> {
    let mut out = json!({});
    for file in ["pkg/nova_extension_bg.wasm", "pkg-js/nova_extension_bg.wasm.js"] {
        let bytes = std::fs::read(extension.join(file))?;
        out[file] = json!({"bytes": bytes.len(), "gzip": gzip_len(&bytes)?});
    }
    Ok(out)
}

async fn timed<F, T>(f: F) -> anyhow::Result<(f64, T)>
where
    F: std::future::Future<Output = anyhow::Result<T>>,
{
    let start = Instant::now();
    let v = f.await?;
    Ok((ms(start.elapsed()), v))
}

/// Fails unless the call ran: a gate block or an error would be measured as a fast call.
fn ran(tool: &str, r: &Value) -> anyhow::Result<()> {
    let blocked = r.pointer("/_meta/io.nova~1aag").is_some() || r["isError"] == true || r["ok"] == false;
    anyhow::ensure!(!blocked, "{tool} did not run, so it cannot be measured: {r}");
    Ok(())
}

async fn browser(kind: BrowserKind, iterations: usize) -> anyhow::Result<Value> {
    let nova = Nova::start_in(kind).await?;
    std::fs::write(nova.data.join("settings.json"), BENCH_SETTINGS)?;
    let c = nova.client().await?;
    let mut navigate = Vec::new();
    for _ in 0..iterations.min(10) {
        navigate.push(timed(c.structured("nova.navigate", json!({"url": nova.url("bench.html")}))).await?.0);
    }
    let mut perceive = Vec::new();
    let mut last = Value::Null;
    for _ in 0..iterations {
        let (t, page) = timed(c.call("nova.perceive", crate::measure::whole_page())).await?;
        perceive.push(t);
        last = serde_json::to_value(&page)?;
        ran("nova.perceive", &last)?;
    }
    let text_len: usize = last["content"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| c["text"].as_str())
        .map(str::len)
        .sum();
    let mut click = Vec::new();
    for _ in 0..iterations {
        let (t, r) = timed(c.structured("nova.click_selector", json!({"selector": "#bench-btn"}))).await?;
        ran("nova.click_selector", &r)?;
        click.push(t);
    }
    Ok(json!({
        "perceive5000Ms": summary(perceive),
        "clickMs": summary(click),
        "navigateMs": summary(navigate),
        "perceiveBytes": text_len,
        "perceiveTokens": text_len / 4,
        "perceiveElements": last["structuredContent"]["truncated"]["elementsTotal"],
    }))
}

fn unix_ms() -> f64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0.0, |d| d.as_secs_f64() * 1e3)
}

/// The contract of the `n`-th press on bench-cls.html: success is `#ok-n` appearing.
fn press_contract(n: usize, hold_ms: u32) -> Value {
    json!({
        "actionKind": "custom",
        "retryPolicy": "idempotent",
        "postconditions": {"success": {"all": [
            {"factKey": format!("dom.exists(#ok-{n})"), "operator": "eq", "expected": true}
        ]}},
        "stabilityWindowMs": 5000,
        "stabilityMs": hold_ms
    })
}

/// A guarded click against a raw one on the same control, and the time from the success
/// signal appearing in the page to the verdict reaching the agent, minus the hold (CLS aim:
/// at most stabilityMs + 25 ms, so this figure should stay under 25).
async fn guarded(kind: BrowserKind, iterations: usize) -> anyhow::Result<Value> {
    const HOLD_MS: u32 = 100;
    let nova = Nova::start_in(kind).await?;
    std::fs::write(nova.data.join("settings.json"), BENCH_SETTINGS)?;
    let c = nova.client().await?;
    c.structured("nova.navigate", json!({"url": nova.url("bench-cls.html")})).await?;
    let mut presses = 0;
    let mut raw = Vec::new();
    let mut guarded = Vec::new();
    for _ in 0..iterations {
        presses += 1;
        let (t, r) = timed(c.structured("nova.click_selector", json!({"selector": "#go"}))).await?;
        ran("nova.click_selector", &r)?;
        raw.push(t);
        presses += 1;
        let args = json!({"selector": "#go", "transitionContract": press_contract(presses, 0)});
        let (t, r) = timed(c.structured("nova.click_selector", args)).await?;
        anyhow::ensure!(r["guardedCommit"]["verificationStatus"] == "verified_success", "guarded click: {r}");
        guarded.push(t);
    }
    let overhead: Vec<f64> = guarded.iter().zip(&raw).map(|(g, r)| g - r).collect();

    c.structured("nova.navigate", json!({"url": nova.url("bench-cls.html?delay=30")})).await?;
    let mut latency = Vec::new();
    for n in 1..=iterations {
        let args = json!({"selector": "#go", "transitionContract": press_contract(n, HOLD_MS)});
        let r = c.structured("nova.click_selector", args).await?;
        let verdict_at = unix_ms();
        anyhow::ensure!(r["guardedCommit"]["verificationStatus"] == "verified_success", "guarded click: {r}");
        let shown = c.structured("nova.read_text", json!({"selector": format!("#ok-{n}")})).await?;
        let signal_at: f64 = shown["text"].as_str().unwrap_or_default().trim().parse()?;
        latency.push(verdict_at - signal_at - f64::from(HOLD_MS));
    }
    Ok(json!({
        "rawClickMs": summary(raw),
        "guardedClickMs": summary(guarded),
        "guardedOverheadMs": summary(overhead),
        "holdMs": HOLD_MS,
        "verdictLatencyAfterHoldMs": summary(latency),
    }))
}
