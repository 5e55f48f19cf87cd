//! The peers of `cargo xtask bench --peer`: Playwright MCP and chrome-devtools-mcp (npm, pinned,
//! installed under `target/peers`, no browser download), each driving the same headless Chromium
//! binary as Nova, over stdio MCP as an agent would. [`Session`] is one running peer with the
//! four things the benchmarks ask of it: navigate, read the page (its snapshot), click and fill.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Instant;

use anyhow::{Context as _, bail};
use rmcp::ServiceExt as _;
use rmcp::model::CallToolRequestParams;
use rmcp::service::RunningService;
use rmcp::transport::TokioChildProcess;
use serde_json::{Value, json};

use crate::cmd::target_dir;

/// A peer MCP server and how an agent drives it.
pub struct Peer {
    /// Its name in tables.
    pub name: &'static str,
    /// The pinned npm package.
    pub package: &'static str,
    /// Its entry point under `node_modules`.
    cli: &'static str,
    /// Its flags for a headless, isolated run of `chromium`, writing files under `out`.
    flags: fn(chromium: &Path, out: &Path) -> Vec<String>,
    navigate: &'static str,
    snapshot: &'static str,
    /// Whether actions name their element by the uid of the last snapshot (chrome-devtools-mcp)
    /// rather than by a selector (Playwright MCP).
    by_uid: bool,
}

/// The peers, in table order.
pub const PEERS: [Peer; 2] = [
    Peer {
        name: "Playwright MCP",
        package: "@playwright/mcp@0.0.83",
        cli: "@playwright/mcp/cli.js",
        flags: |chromium, out| {
            let mut f: Vec<String> =
                ["--headless", "--isolated", "--no-sandbox", "--executable-path"].map(Into::into).into();
            f.push(chromium.display().to_string());
            f.extend(["--output-dir".into(), out.display().to_string()]);
            f
        },
        navigate: "browser_navigate",
        snapshot: "browser_snapshot",
        by_uid: false,
    },
    Peer {
        name: "chrome-devtools-mcp",
        package: "chrome-devtools-mcp@1.11.0",
        cli: "chrome-devtools-mcp/build/src/bin/chrome-devtools-mcp.js",
        flags: |chromium, _| {
            let mut f: Vec<String> = ["--headless", "--isolated", "--executablePath"].map(Into::into).into();
            f.push(chromium.display().to_string());
            // No usage statistics or CrUX lookups leave the machine; one page, so no page ids;
            // the machine runs as root, where Chromium needs --no-sandbox.
            f.extend(
                [
                    "--no-usage-statistics",
                    "--no-performance-crux",
                    "--no-page-id-routing",
                    "--chromeArg=--no-sandbox",
                ]
                .map(Into::into),
            );
            f
        },
        navigate: "navigate_page",
        snapshot: "take_snapshot",
        by_uid: true,
    },
];

/// Installs the pinned peers once (both, so the marker names the exact versions).
fn ensure_peers() -> anyhow::Result<PathBuf> {
    let dir = target_dir().join("peers");
    let marker = dir.join("installed.txt");
    let wanted: Vec<&str> = PEERS.iter().map(|p| p.package).collect();
    if std::fs::read_to_string(&marker).is_ok_and(|m| m == wanted.join(" ")) {
        return Ok(dir.join("node_modules"));
    }
    // No browser download: the peers drive the Chromium the project installs.
    let skip = [("PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD", "1")];
    crate::ensure::npm_install_with(&dir, &wanted, "for the peer comparison", &skip)?;
    std::fs::write(marker, wanted.join(" "))?;
    Ok(dir.join("node_modules"))
}

/// What an action acts on: a selector for the peers that take one, and the role and the start
/// of the accessible name by which the element is found in a snapshot for the others.
#[derive(Clone, Copy)]
pub struct Target<'a> {
    pub selector: &'a str,
    pub role: &'a str,
    pub name: &'a str,
}

/// One running peer.
pub struct Session {
    peer: &'static Peer,
    service: RunningService<rmcp::RoleClient, ()>,
    last_snapshot: String,
    _out: tempfile::TempDir,
}

/// The text an agent reads from a tool result.
pub fn text_of(result: &rmcp::model::CallToolResult) -> String {
    serde_json::to_value(&result.content)
        .ok()
        .and_then(|v| v.as_array().cloned())
        .unwrap_or_default()
        .iter()
        .filter_map(|c| c["text"].as_str().map(str::to_owned))
        .collect::<Vec<_>>()
        .join("\n")
}

impl Session {
    /// Starts `peer` on `chromium`.
    pub async fn start(peer: &'static Peer, chromium: &Path) -> anyhow::Result<Self> {
        let modules = ensure_peers()?;
        let out = tempfile::tempdir()?;
        let mut cmd = tokio::process::Command::new("node");
        cmd.arg(modules.join(peer.cli)).args((peer.flags)(chromium, out.path()));
        let (transport, _) = TokioChildProcess::builder(cmd).stderr(Stdio::null()).spawn()?;
        let service = ().serve(transport).await.with_context(|| format!("starting {}", peer.name))?;
        Ok(Self { peer, service, last_snapshot: String::new(), _out: out })
    }

    /// Calls `tool`; its time in ms and text. A tool error fails: it would be measured as fast.
    pub async fn call(&self, tool: &str, args: Value) -> anyhow::Result<(f64, String)> {
        let Value::Object(map) = args else { bail!("args must be an object") };
        let start = Instant::now();
        let r = self
            .service
            .peer()
            .call_tool(CallToolRequestParams::new(tool.to_owned()).with_arguments(map))
            .await?;
        let ms = start.elapsed().as_secs_f64() * 1000.0;
        let text = text_of(&r);
        if r.is_error == Some(true) {
            bail!("{} {tool} failed: {text}", self.peer.name);
        }
        Ok((ms, text))
    }

    /// Navigates the page to `url`.
    pub async fn navigate(&self, url: &str) -> anyhow::Result<f64> {
        let args = if self.peer.by_uid { json!({"type": "url", "url": url}) } else { json!({"url": url}) };
        Ok(self.call(self.peer.navigate, args).await?.0)
    }

    /// Reads the page as an agent does: the peer's snapshot.
    pub async fn snapshot(&mut self) -> anyhow::Result<(f64, String)> {
        let (ms, text) = self.call(self.peer.snapshot, json!({})).await?;
        self.last_snapshot.clone_from(&text);
        Ok((ms, text))
    }

    /// The uid of `target` in the last snapshot (taking one when there is none).
    async fn uid(&mut self, target: Target<'_>) -> anyhow::Result<String> {
        if self.last_snapshot.is_empty() {
            self.snapshot().await?;
        }
        let wanted = format!("{} \"{}", target.role, target.name);
        self.last_snapshot
            .lines()
            .map(str::trim_start)
            .find(|l| l.contains(&wanted))
            .and_then(|l| l.strip_prefix("uid=")?.split(' ').next().map(str::to_owned))
            .with_context(|| format!("no {wanted}…\" in {}'s snapshot", self.peer.name))
    }

    /// Clicks `target`.
    pub async fn click(&mut self, target: Target<'_>) -> anyhow::Result<f64> {
        if self.peer.by_uid {
            let uid = self.uid(target).await?;
            return Ok(self.call("click", json!({"uid": uid})).await?.0);
        }
        let args = json!({"element": target.name, "target": target.selector});
        Ok(self.call("browser_click", args).await?.0)
    }

    /// Replaces the value of the text field `target` with `text`.
    pub async fn fill(&mut self, target: Target<'_>, text: &str) -> anyhow::Result<f64> {
        if self.peer.by_uid {
            let uid = self.uid(target).await?;
            return Ok(self.call("fill", json!({"uid": uid, "value": text})).await?.0);
        }
        let args = json!({"element": target.name, "target": target.selector, "text": text});
        Ok(self.call("browser_type", args).await?.0)
    }

    /// The `result` of its `tools/list`, as JSON text.
    pub async fn tools_list(&self) -> anyhow::Result<String> {
        let tools = self.service.peer().list_all_tools().await?;
        Ok(serde_json::to_string(&json!({"tools": tools}))?)
    }

    /// Stops the peer and its browser.
    pub async fn stop(self) {
        let _ = self.service.cancel().await;
    }
}
