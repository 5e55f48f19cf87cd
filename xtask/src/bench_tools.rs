//! `cargo xtask bench --only tools`: what `tools/list` costs an agent's context, for each
//! listing (`nova mcp --tools core|BUNDLE|all`), in bytes and in tokens of a real tokenizer:
//! o200k_base from npm `gpt-tokenizer` (pinned; it ships its encodings, so nothing is fetched
//! at run time). The listings come from the built host's `nova mcp` answering by itself, which
//! lists with the same code as a hub. The peers' whole lists ([`crate::peer`]) are counted the
//! same way.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{Context as _, bail};
use serde_json::{Value, json};

use crate::cmd::target_dir;
use crate::peer::{PEERS, Session};

/// The pinned tokenizer.
const TOKENIZER: &str = "gpt-tokenizer@4.0.0";

/// The listings measured, smallest first.
const LISTINGS: [&str; 6] =
    ["core", "browser_automation", "task_memory", "page_read_debug", "pks_learning", "all"];

/// Installs the tokenizer under `target/tools/tokenizer` once; returns its o200k_base module.
fn ensure_tokenizer() -> anyhow::Result<PathBuf> {
    let dir = target_dir().join("tools/tokenizer");
    let module = dir.join("node_modules/gpt-tokenizer/cjs/encoding/o200k_base.js");
    let marker = dir.join("installed.txt");
    if module.exists() && std::fs::read_to_string(&marker).is_ok_and(|m| m == TOKENIZER) {
        return Ok(module);
    }
    crate::ensure::npm_install(&dir, &[TOKENIZER], "to count tokens")?;
    if !module.exists() {
        bail!("npm install {TOKENIZER} did not bring {}", module.display());
    }
    std::fs::write(marker, TOKENIZER)?;
    Ok(module)
}

/// Tokens (o200k_base) of each text, in order.
pub fn count_tokens(texts: &[String]) -> anyhow::Result<Vec<u64>> {
    let module = ensure_tokenizer()?;
    let script = format!(
        "const {{ encode }} = require({}); let input = ''; process.stdin.on('data', d => input += d); \
         process.stdin.on('end', () => console.log(JSON.stringify(JSON.parse(input).map(t => encode(t).length))));",
        serde_json::to_string(&module.display().to_string())?
    );
    let mut node = Command::new("node")
        .args(["-e", &script])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .context("node is needed to count tokens")?;
    node.stdin.take().context("node stdin")?.write_all(serde_json::to_string(texts)?.as_bytes())?;
    let out = node.wait_with_output()?;
    if !out.status.success() {
        bail!("counting tokens failed: {}", String::from_utf8_lossy(&out.stderr));
    }
    serde_json::from_slice(&out.stdout).context("the tokenizer's answer")
}

/// The `result` of `tools/list` as `nova mcp --tools <listing>` answers it.
fn list(host: &Path, data: &Path, listing: &str) -> anyhow::Result<Value> {
    let requests = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
    ];
    let mut relay = Command::new(host)
        .args(["mcp", "--wait-ms", "0", "--tools", listing, "--data-dir"])
        .arg(data)
        .env("NOVA_LOG", "warn")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .with_context(|| format!("starting {}", host.display()))?;
    let mut stdin = relay.stdin.take().context("relay stdin")?;
    for r in requests {
        writeln!(stdin, "{r}")?;
    }
    drop(stdin);
    let out = relay.wait_with_output()?;
    let text = String::from_utf8_lossy(&out.stdout);
    text.lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|v| v["id"] == 2)
        .map(|v| v["result"].clone())
        .with_context(|| format!("no tools/list answer from nova mcp --tools {listing}"))
}

/// Tools, bytes and tokens of every listing.
pub fn listings(host: &Path) -> anyhow::Result<Value> {
    let data = tempfile::tempdir()?;
    let mut texts = Vec::new();
    let mut counts = Vec::new();
    for listing in LISTINGS {
        let result = list(host, data.path(), listing)?;
        counts.push(result["tools"].as_array().map_or(0, Vec::len));
        texts.push(serde_json::to_string(&result)?);
    }
    let tokens = count_tokens(&texts)?;
    let mut out = serde_json::Map::new();
    for (i, listing) in LISTINGS.iter().enumerate() {
        out.insert(
            (*listing).to_owned(),
            json!({"tools": counts[i], "bytes": texts[i].len(), "tokens": tokens[i]}),
        );
    }
    Ok(json!({"tokenizer": format!("o200k_base ({TOKENIZER})"), "listings": out}))
}

/// Tools, bytes and tokens of each peer's whole `tools/list` ([`crate::peer`]; they list every
/// tool at once).
pub async fn peer_listings() -> anyhow::Result<Value> {
    let chromium = nova_e2e::chromium::find_binary()?;
    let (mut texts, mut counts) = (Vec::new(), Vec::new());
    for peer in &PEERS {
        let s = Session::start(peer, &chromium).await?;
        let text = s.tools_list().await?;
        s.stop().await;
        counts.push(serde_json::from_str::<Value>(&text)?["tools"].as_array().map_or(0, Vec::len));
        texts.push(text);
    }
    let tokens = count_tokens(&texts)?;
    let mut out = serde_json::Map::new();
    for (i, peer) in PEERS.iter().enumerate() {
        out.insert(
            peer.name.to_owned(),
            json!({"package": peer.package, "tools": counts[i], "bytes": texts[i].len(), "tokens": tokens[i]}),
        );
    }
    Ok(Value::Object(out))
}

/// The lines `cargo xtask bench` prints.
pub fn render(r: &Value) -> String {
    let Some(listings) = r["listings"].as_object() else { return String::new() };
    let mut s = format!("tools/list per listing, tokens in {}:\n", r["tokenizer"].as_str().unwrap_or("?"));
    for name in LISTINGS {
        let v = &listings.get(name).cloned().unwrap_or_default();
        let what = if name == "core" || name == "all" { name.to_owned() } else { format!("core + {name}") };
        s += &format!(
            "  {what:<30} {:>3} tools {:>8} bytes {:>7} tokens{}\n",
            v["tools"].as_u64().unwrap_or_default(),
            v["bytes"].as_u64().unwrap_or_default(),
            v["tokens"].as_u64().unwrap_or_default(),
            if name == "core" { "   aim < 10,000 (a session's start)" } else { "" }
        );
    }
    for (name, v) in r["peers"].as_object().into_iter().flatten() {
        s += &format!(
            "  {:<30} {:>3} tools {:>8} bytes {:>7} tokens  (every tool)\n",
            name,
            v["tools"].as_u64().unwrap_or_default(),
            v["bytes"].as_u64().unwrap_or_default(),
            v["tokens"].as_u64().unwrap_or_default(),
        );
    }
    s
}
