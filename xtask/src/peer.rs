//! The peer comparison of `cargo xtask bench --peer`: Playwright MCP (npm `@playwright/mcp`,
//! pointed at the same Chromium, no browser download) on the same pages as Nova.

use std::path::PathBuf;
use std::process::Command;
use std::time::Instant;

use anyhow::{Context as _, bail};
use rmcp::ServiceExt as _;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::TokioChildProcess;
use serde_json::{Value, json};

use crate::cmd::{root, step, target_dir};

/// The pinned peer version.
const PEER: &str = "@playwright/mcp@0.0.83";

fn ensure_peer() -> anyhow::Result<PathBuf> {
    let dir = target_dir().join("tools");
    let cli = dir.join("node_modules/@playwright/mcp/cli.js");
    if cli.exists() {
        return Ok(cli);
    }
    step(&format!("installing {PEER} from npm (no browser download)"));
    let status = Command::new("npm")
        .args(["install", "--no-audit", "--no-fund", "--prefix"])
        .arg(&dir)
        .arg(PEER)
        .env("PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD", "1")
        .current_dir(root())
        .status()?;
    if !status.success() {
        bail!("npm install {PEER} failed");
    }
    Ok(cli)
}

fn text_of(result: &rmcp::model::CallToolResult) -> String {
    serde_json::to_value(&result.content)
        .ok()
        .and_then(|v| v.as_array().cloned())
        .unwrap_or_default()
        .iter()
        .filter_map(|c| c["text"].as_str().map(str::to_owned))
        .collect::<Vec<_>>()
        .join("\n")
}

fn p50(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
}

/// Runs the same navigate / read / click sequence through Playwright MCP and Nova.
pub async fn compare(iterations: usize) -> anyhow::Result<Value> {
    let cli = ensure_peer()?;
    let nova = nova_e2e::Nova::start().await?;
    let chromium = nova_e2e::chromium::find_binary()?;
    let url = nova.url("bench.html");
    let tmp = tempfile::tempdir()?;
    let mut cmd = tokio::process::Command::new("node");
    cmd.arg(&cli)
        .args(["--headless", "--isolated", "--no-sandbox", "--executable-path"])
        .arg(&chromium)
        .arg("--output-dir")
        .arg(tmp.path());
    let peer = ().serve(TokioChildProcess::new(cmd)?).await.context("starting Playwright MCP")?;
    let call = |name: &'static str, args: Value| {
        let peer = peer.peer().clone();
        async move {
            let Value::Object(map) = args else { bail!("args must be an object") };
            let start = Instant::now();
            let r = peer.call_tool(CallToolRequestParams::new(name).with_arguments(map)).await?;
            Ok::<_, anyhow::Error>((start.elapsed().as_secs_f64() * 1000.0, r))
        }
    };
    let (mut nav, mut read, mut click) = (Vec::new(), Vec::new(), Vec::new());
    let mut snapshot = String::new();
    for _ in 0..iterations.min(10) {
        nav.push(call("browser_navigate", json!({"url": url})).await?.0);
    }
    for _ in 0..iterations {
        let (t, r) = call("browser_snapshot", json!({})).await?;
        read.push(t);
        snapshot = text_of(&r);
    }
    // Clicked by selector, as Nova's click is: Playwright MCP's snapshot refs for this page
    // (`f2e8`) fail to resolve in its click tool, while selectors are accepted as targets.
    for _ in 0..iterations {
        let args = json!({"element": "Bench click button", "target": "#bench-btn"});
        let (t, r) = call("browser_click", args).await?;
        if r.is_error == Some(true) {
            bail!("Playwright MCP click failed: {}", text_of(&r));
        }
        click.push(t);
    }
    let _ = peer.cancel().await;

    let c = nova.client().await?;
    let (mut n_nav, mut n_read, mut n_click) = (Vec::new(), Vec::new(), Vec::new());
    let mut nova_text = String::new();
    for _ in 0..iterations.min(10) {
        let start = Instant::now();
        c.structured("nova.navigate", json!({"url": url})).await?;
        n_nav.push(start.elapsed().as_secs_f64() * 1000.0);
    }
    for _ in 0..iterations {
        let start = Instant::now();
        let r = c.call("nova.perceive", json!({"maxElements": 5000})).await?;
        n_read.push(start.elapsed().as_secs_f64() * 1000.0);
        nova_text = text_of(&r);
    }
    for _ in 0..iterations {
        let start = Instant::now();
        c.structured("nova.click_selector", json!({"selector": "#bench-btn"})).await?;
        n_click.push(start.elapsed().as_secs_f64() * 1000.0);
    }
    let peer_elements = snapshot.matches("[ref=").count();
    let nova_elements = nova_text.lines().filter(|l| l.starts_with('e') && l.contains(' ')).count();
    Ok(json!({
        "peer": PEER,
        "readBytes": {"nova": nova_text.len(), "peer": snapshot.len(),
                      "ratio": nova_text.len() as f64 / snapshot.len().max(1) as f64},
        "readTokensApprox": {"nova": nova_text.len() / 4, "peer": snapshot.len() / 4},
        "addressableElements": {"nova": nova_elements, "peer": peer_elements},
        "navigateMsP50": {"nova": p50(n_nav), "peer": p50(nav)},
        "readMsP50": {"nova": p50(n_read), "peer": p50(read)},
        "clickMsP50": {"nova": p50(n_click), "peer": p50(click)},
    }))
}

/// The side-by-side table.
pub fn render(p: &Value) -> String {
    let row = |name: &str, v: &Value| {
        let (n, q) = (v["nova"].as_f64().unwrap_or(f64::NAN), v["peer"].as_f64().unwrap_or(f64::NAN));
        format!("{name:<28} nova {n:>10.1}   peer {q:>10.1}   nova/peer {:>6.2}\n", n / q)
    };
    let mut s = format!("\nNova vs {} (same Chromium, same page)\n", p["peer"].as_str().unwrap_or(""));
    s += &row("page read, bytes", &p["readBytes"]);
    s += &row("page read, ~tokens", &p["readTokensApprox"]);
    s += &row("addressable elements", &p["addressableElements"]);
    s += &row("navigate p50, ms", &p["navigateMsP50"]);
    s += &row("page read p50, ms", &p["readMsP50"]);
    s += &row("click p50, ms", &p["clickMsP50"]);
    s
}
