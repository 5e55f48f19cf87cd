//! The end-to-end harness: real Chromium with the built extension, the real `nova` host, a
//! fixture HTTP server on 127.0.0.1:0, and an MCP client speaking to `nova mcp`.
//!
//! # Layout
//! - [`Dist`]: where `cargo xtask build` put the extension and the host.
//! - [`chromium`], [`firefox`]: finding and launching each browser in its own process group.
//! - [`cdp`] (Chrome DevTools), [`bidi`] (WebDriver BiDi) over [`ws`] (a minimal WebSocket
//!   client); [`ui`] drives pages through whichever the browser speaks.
//! - [`fixtures`]: the fixture web server (`tests/fixtures/`); [`site`]: its generated
//!   multi-page site.
//! - [`agent`]: a scripted compliant agent that fails the test on any gate block; [`journey`]:
//!   the journey pages as such an agent works them; [`load`]: eight such agents at once, over
//!   stdio and HTTP.
//! - [`realapps`]: real web applications from the package registries (the Django admin,
//!   MediaWiki, Jingo), for judging verdicts against their own databases.
//! - [`sight`]: what a person sees of a page, by the browser's own measures, to hold Nova's reads
//!   against; [`pixels`]: whether a text's lines show any ink in a screenshot, the measure of
//!   last resort for what hides text without the layout APIs knowing (pseudo-elements).
//! - [`store`]: reading the evidence store (SQLite) the way support staff would.
//! - [`crash`]: what the crash tests share (a seeded generator, waiting for the next hub).
//! - [`Nova`]: one isolated test world (data dir, profile, browser, fixtures) and its MCP
//!   clients.
//!
//! `cargo xtask run` uses the same launcher, so what the tests drive is what people run.

pub mod agent;
pub mod bidi;
pub mod cdp;
pub mod chromium;
pub mod crash;
pub mod firefox;
pub mod fixtures;
pub mod journey;
pub mod load;
pub mod pixels;
pub mod realapps;
pub mod sight;
pub mod site;
pub mod store;
pub mod ui;
pub mod ws;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::{Context as _, bail};
use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::RunningService;
use rmcp::transport::TokioChildProcess;
use rmcp::{RoleClient, ServiceExt as _};
use serde_json::Value;

/// The workspace root.
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().map(Path::to_path_buf).unwrap_or_default()
}

/// The built artifacts.
#[derive(Debug, Clone)]
pub struct Dist {
    /// The unpacked extension.
    pub extension: PathBuf,
    /// The `nova` binary.
    pub host: PathBuf,
}

impl Dist {
    /// Finds `dist/` (or `NOVA_DIST`) and checks it holds a build.
    pub fn locate() -> anyhow::Result<Self> {
        let root =
            std::env::var_os("NOVA_DIST").map(PathBuf::from).unwrap_or_else(|| workspace_root().join("dist"));
        let dist = Self { extension: root.join("extension"), host: root.join("bin").join("nova") };
        for needed in [
            dist.extension.join("manifest.json"),
            dist.extension.join("pkg/nova_extension_bg.wasm"),
            dist.host.clone(),
        ] {
            if !needed.exists() {
                bail!(
                    "{} is missing: run `cargo xtask build` first (or `cargo xtask test`)",
                    needed.display()
                );
            }
        }
        Ok(dist)
    }

    /// Registers the native host for `kind`: inside the Chromium profile, or in the home
    /// directory Firefox is given ([`firefox::home_of`]).
    pub fn register_host(&self, profile: &Path, kind: BrowserKind) -> anyhow::Result<()> {
        let mut cmd = Command::new(&self.host);
        match kind {
            BrowserKind::Chromium => cmd.args(["install", "--chromium-profile"]).arg(profile),
            BrowserKind::Firefox => {
                let home = firefox::home_of(profile);
                std::fs::create_dir_all(&home)?;
                cmd.args(["install", "--browser", "firefox"]).env("HOME", home)
            }
        };
        let out = cmd.arg("--host-path").arg(&self.host).output().context("running nova install")?;
        if !out.status.success() {
            bail!("nova install failed: {}", String::from_utf8_lossy(&out.stderr));
        }
        Ok(())
    }
}

/// Where [`Dist::register_host`] puts the host manifest for `kind`.
pub fn host_manifest_dir(profile: &Path, kind: BrowserKind) -> PathBuf {
    match kind {
        BrowserKind::Chromium => profile.join("NativeMessagingHosts"),
        BrowserKind::Firefox => firefox::home_of(profile).join(".mozilla/native-messaging-hosts"),
    }
}

pub use nova_host::ipc::HubRecord;

/// The browser the end-to-end tests drive: `NOVA_BROWSER=chromium` (default) or `firefox`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BrowserKind {
    /// Chromium.
    Chromium,
    /// Firefox.
    Firefox,
}

impl BrowserKind {
    /// From `NOVA_BROWSER`.
    pub fn from_env() -> Self {
        match std::env::var("NOVA_BROWSER").ok().as_deref() {
            Some("firefox") => Self::Firefox,
            _ => Self::Chromium,
        }
    }

    /// Lower-case name, as the hub records it.
    pub fn name(self) -> &'static str {
        match self {
            Self::Chromium => "chromium",
            Self::Firefox => "firefox",
        }
    }
}

/// Reads the newest hub registration in `data` whose socket accepts connections, waiting up
/// to `timeout` for one to appear.
pub fn wait_for_hub(data: &Path, timeout: Duration) -> anyhow::Result<HubRecord> {
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(record) = hub_records(data).into_iter().next()
            && std::os::unix::net::UnixStream::connect(&record.socket).is_ok()
        {
            return Ok(record);
        }
        if Instant::now() > deadline {
            bail!(
                "no hub registered in {} after {timeout:?}; {}",
                data.display(),
                log_tails(&data.join("logs"))
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// How long a browser may take to start the hub. Generous on purpose: the first cold start of
/// a browser on a busy two-core CI machine once took more than 30 s.
pub const HUB_START: Duration = Duration::from_secs(90);

/// The last lines of every log in `dir`, for a failure message (the temporary directory is gone
/// by the time anyone reads it).
fn log_tails(dir: &Path) -> String {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return format!("no logs in {}", dir.display());
    };
    let mut out = String::new();
    for entry in entries.flatten() {
        let text = std::fs::read_to_string(entry.path()).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        let tail = lines[lines.len().saturating_sub(15)..].join("\n");
        out.push_str(&format!("\n--- {} (last lines)\n{tail}", entry.path().display()));
    }
    if out.is_empty() { format!("{} is empty", dir.display()) } else { out }
}

/// All hub registrations, newest first.
pub fn hub_records(data: &Path) -> Vec<HubRecord> {
    HubRecord::all(&nova_host::paths::DataDir::at(data))
}

/// The tools that take a `targetId`, listed or not (a session lists only the bundles it
/// loaded), from the catalog the host is built with.
pub fn tools_taking_a_tab() -> &'static std::collections::HashSet<String> {
    static TOOLS: std::sync::OnceLock<std::collections::HashSet<String>> = std::sync::OnceLock::new();
    TOOLS.get_or_init(|| {
        nova_host::mcp::catalog::tools()
            .iter()
            .filter(|t| t.input_schema.get("properties").and_then(|p| p.get("targetId")).is_some())
            .map(|t| t.name.to_string())
            .collect()
    })
}

/// An MCP client connected through `nova mcp`.
pub struct Client {
    service: RunningService<RoleClient, Watcher>,
    watcher: Watcher,
}

/// The client side of a session: counts the server's `notifications/tools/list_changed`.
#[derive(Clone, Default)]
pub struct Watcher {
    list_changes: std::sync::Arc<std::sync::atomic::AtomicUsize>,
}

impl rmcp::ClientHandler for Watcher {
    async fn on_tool_list_changed(&self, _context: rmcp::service::NotificationContext<RoleClient>) {
        self.list_changes.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    }
}

impl Client {
    /// Starts `nova mcp --data-dir <data>` and completes the MCP handshake.
    pub async fn stdio(host: &Path, data: &Path) -> anyhow::Result<Self> {
        Self::stdio_with(host, data, &[]).await
    }

    /// [`Client::stdio`] with more arguments for `nova mcp` (`--tools all`).
    pub async fn stdio_with(host: &Path, data: &Path, args: &[&str]) -> anyhow::Result<Self> {
        let mut cmd = tokio::process::Command::new(host);
        cmd.arg("mcp").arg("--data-dir").arg(data).args(args).env("NOVA_LOG", "warn");
        let watcher = Watcher::default();
        let service = watcher
            .clone()
            .serve(TokioChildProcess::new(cmd)?)
            .await
            .context("MCP handshake with nova mcp")?;
        Ok(Self { service, watcher })
    }

    /// How many `notifications/tools/list_changed` the server has sent this session.
    pub fn tool_list_changes(&self) -> usize {
        self.watcher.list_changes.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// Connects to the hub's HTTP endpoint (`url` from its registration) with the bearer token
    /// of the data dir, as an agent configured for HTTP does.
    pub async fn http(url: &str, data: &Path) -> anyhow::Result<Self> {
        use rmcp::transport::StreamableHttpClientTransport;
        use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
        let token = std::fs::read_to_string(data.join("mcp-token")).context("reading the MCP token")?;
        let config = StreamableHttpClientTransportConfig::with_uri(url).auth_header(token.trim());
        let watcher = Watcher::default();
        let service = watcher
            .clone()
            .serve(StreamableHttpClientTransport::from_config(config))
            .await
            .context("MCP handshake over HTTP")?;
        Ok(Self { service, watcher })
    }

    /// Calls a tool; protocol errors come back as `Err` with the JSON-RPC message.
    pub async fn call(&self, tool: &str, args: Value) -> anyhow::Result<CallToolResult> {
        let Value::Object(map) = args else { bail!("tool arguments must be an object") };
        let params = CallToolRequestParams::new(tool.to_owned()).with_arguments(map);
        Ok(self.service.peer().call_tool(params).await?)
    }

    /// Calls a tool asking for its stage timings (`_meta["io.nova/timing"]`, docs/performance.md);
    /// returns the result and the timings, with the whole call's time as the client saw it
    /// (`clientMs`).
    pub async fn call_timed(&self, tool: &str, args: Value) -> anyhow::Result<(CallToolResult, Value)> {
        let Value::Object(map) = args else { bail!("tool arguments must be an object") };
        let mut meta = rmcp::model::MetaObject::default();
        meta.0.insert("io.nova/timing".into(), Value::Bool(true));
        let mut params = CallToolRequestParams::new(tool.to_owned()).with_arguments(map);
        params.meta = Some(rmcp::model::RequestMetaObject(meta));
        let started = std::time::Instant::now();
        let r = self.service.peer().call_tool(params).await?;
        let client_ms = started.elapsed().as_secs_f64() * 1000.0;
        let mut timing = r.meta.as_ref().and_then(|m| m.0.get("io.nova/timing")).cloned().unwrap_or_default();
        if !timing.is_object() {
            bail!("{tool} answered without stage timings");
        }
        timing["clientMs"] = client_ms.into();
        Ok((r, timing))
    }

    /// Calls a tool and returns its structured content, failing on protocol errors.
    pub async fn structured(&self, tool: &str, args: Value) -> anyhow::Result<Value> {
        let result = self.call(tool, args).await?;
        result.structured_content.context("result has no structuredContent")
    }

    /// Calls a tool expecting a JSON-RPC error; returns it.
    pub async fn call_err(&self, tool: &str, args: Value) -> anyhow::Result<rmcp::model::ErrorData> {
        match self.call(tool, args).await {
            Ok(r) => bail!("expected a JSON-RPC error from {tool}, got {:?}", r.structured_content),
            Err(e) => match e.downcast::<rmcp::ServiceError>()? {
                rmcp::ServiceError::McpError(data) => Ok(data),
                other => bail!("expected a JSON-RPC error, got {other}"),
            },
        }
    }

    /// The tool names the server lists.
    pub async fn tool_names(&self) -> anyhow::Result<Vec<String>> {
        Ok(self.service.peer().list_all_tools().await?.into_iter().map(|t| t.name.to_string()).collect())
    }

    /// Closes the session.
    pub async fn close(self) -> anyhow::Result<()> {
        self.service.cancel().await?;
        Ok(())
    }
}

/// One isolated world: temp data dir and profile, fixture server, Chromium with the extension.
pub struct Nova {
    /// Built artifacts.
    pub dist: Dist,
    /// The data dir (NOVA_HOME of the browser and its hub).
    pub data: PathBuf,
    /// The Chromium profile.
    pub profile: PathBuf,
    /// The fixture server.
    pub fixtures: fixtures::FixtureServer,
    /// The browser, when running.
    pub browser: Option<chromium::BrowserProcess>,
    /// Launch the browser with the DevTools protocol open (UI tests).
    pub devtools: bool,
    /// Which browser (default: `NOVA_BROWSER`).
    pub kind: BrowserKind,
    /// Whether [`Nova::client`] loads a bundle on connect (feature tests: a compliant agent).
    pub bundle_on_connect: bool,
    _tmp: tempfile::TempDir,
}

/// Gate modes of feature tests: every gate at its product default except
/// `safety.perceive_first`, which stands in the way of what most feature tests check (a perceive
/// before every first click would add rows and calls to what they assert on). Their clients load
/// a bundle on connect, as a compliant agent does ([`Nova::client`]). The journeys
/// (`test_journeys.rs`) and the gate tests (`test_gates.rs`) run with every gate at its default,
/// through [`Nova::start_with_default_gates`].
pub const FEATURE_TEST_SETTINGS: &str = r#"{"gateModes": {"safety.perceive_first": "off"}}"#;

/// Gate modes of the tests of the observation bus itself (`test_protocol.rs`), which assert on
/// exact sequences of observation rows: the bootstrap gate's bundle call would be one more row.
pub const ROW_TEST_SETTINGS: &str = r#"{"gateModes": {
    "setup.bootstrap_required": "off", "safety.perceive_first": "off"
}}"#;

impl Nova {
    /// Starts everything (with [`FEATURE_TEST_SETTINGS`]) and waits for the hub to come up.
    pub async fn start() -> anyhow::Result<Self> {
        Self::start_in(BrowserKind::from_env()).await
    }

    /// [`Nova::start`] in a given browser (benchmarks run both).
    pub async fn start_in(kind: BrowserKind) -> anyhow::Result<Self> {
        let mut nova = Self::without_browser_in(kind).await?;
        std::fs::write(nova.data.join("settings.json"), FEATURE_TEST_SETTINGS)?;
        nova.bundle_on_connect = true;
        nova.launch_browser().await?;
        Ok(nova)
    }

    /// Starts everything with `settings` (a `settings.json`) and clients that load no bundle.
    pub async fn start_with_settings(settings: &str) -> anyhow::Result<Self> {
        let mut nova = Self::without_browser().await?;
        std::fs::write(nova.data.join("settings.json"), settings)?;
        nova.launch_browser().await?;
        Ok(nova)
    }

    /// Starts everything with the product's default gate modes.
    pub async fn start_with_default_gates() -> anyhow::Result<Self> {
        Self::start_with_default_gates_in(BrowserKind::from_env()).await
    }

    /// [`Nova::start_with_default_gates`] in a given browser (benchmarks run both).
    pub async fn start_with_default_gates_in(kind: BrowserKind) -> anyhow::Result<Self> {
        let mut nova = Self::without_browser_in(kind).await?;
        nova.launch_browser().await?;
        Ok(nova)
    }

    /// Everything with the product's default gates and the DevTools protocol open, for tests
    /// that drive the extension's popup, options and prompt pages ([`Nova::devtools`]).
    pub async fn start_with_ui() -> anyhow::Result<Self> {
        Self::start_with_ui_in(BrowserKind::from_env()).await
    }

    /// [`Nova::start_with_ui`] in a given browser (benchmarks run both).
    pub async fn start_with_ui_in(kind: BrowserKind) -> anyhow::Result<Self> {
        let mut nova = Self::without_browser_in(kind).await?;
        nova.devtools = true;
        nova.launch_browser().await?;
        Ok(nova)
    }

    /// A driver for the extension's pages (started by [`Nova::start_with_ui`]): DevTools in
    /// Chromium, the browser's BiDi session in Firefox.
    pub async fn ui(&self) -> anyhow::Result<ui::Ui> {
        match self.kind {
            BrowserKind::Chromium => {
                anyhow::ensure!(self.devtools, "start with Nova::start_with_ui to use DevTools");
                Ok(ui::Ui::Cdp(cdp::Cdp::connect(&self.profile, Duration::from_secs(30)).await?))
            }
            BrowserKind::Firefox => {
                let bidi = self.browser.as_ref().context("Firefox is not running")?.bidi().await?;
                Ok(ui::Ui::Bidi(bidi))
            }
        }
    }

    /// The URL of one of the extension's pages: `chrome-extension://<id>/<page>` or
    /// `moz-extension://<pinned uuid>/<page>`.
    pub fn extension_page(&self, page: &str) -> String {
        match self.kind {
            BrowserKind::Chromium => {
                format!("chrome-extension://{}/{page}", nova_shared::CHROMIUM_EXTENSION_ID)
            }
            BrowserKind::Firefox => format!("moz-extension://{}/{page}", firefox::EXTENSION_UUID),
        }
    }

    /// Where UI screenshots go: `target/artifacts/ui/<browser>/<name>.png` (kept after the run).
    pub fn artifact(&self, name: &str) -> PathBuf {
        workspace_root().join("target/artifacts/ui").join(self.kind.name()).join(format!("{name}.png"))
    }

    /// Everything but the browser (for tests of `nova mcp` with no browser).
    pub async fn without_browser() -> anyhow::Result<Self> {
        Self::without_browser_in(BrowserKind::from_env()).await
    }

    /// [`Nova::without_browser`] for a given browser.
    pub async fn without_browser_in(kind: BrowserKind) -> anyhow::Result<Self> {
        let dist = Dist::locate()?;
        let tmp = tempfile::Builder::new().prefix("nova-e2e-").tempdir()?;
        let data = tmp.path().join("data");
        let profile = tmp.path().join("profile");
        std::fs::create_dir_all(&data)?;
        dist.register_host(&profile, kind)?;
        let fixtures = fixtures::FixtureServer::start(&workspace_root().join("tests/fixtures")).await?;
        Ok(Self {
            dist,
            data,
            profile,
            fixtures,
            browser: None,
            devtools: false,
            kind,
            bundle_on_connect: false,
            _tmp: tmp,
        })
    }

    /// Launches the browser on about:blank and waits for the hub.
    pub async fn launch_browser(&mut self) -> anyhow::Result<()> {
        self.spawn_browser().await?;
        wait_for_hub(&self.data, HUB_START)?;
        Ok(())
    }

    /// Stops the browser (and with it the hub) and starts it again on the same profile and data
    /// dir, waiting for the new hub.
    pub async fn restart_browser(&mut self) -> anyhow::Result<()> {
        let old = self.hub_pid();
        if let Some(mut b) = self.browser.take() {
            b.stop();
        }
        self.spawn_browser().await?;
        let deadline = Instant::now() + HUB_START;
        loop {
            if let Ok(hub) = wait_for_hub(&self.data, Duration::from_secs(1))
                && i32::try_from(hub.pid).ok() != old
            {
                return Ok(());
            }
            anyhow::ensure!(
                Instant::now() < deadline,
                "no new hub within {HUB_START:?} of the browser restart"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Launches the browser on about:blank without waiting for the hub.
    pub async fn spawn_browser(&mut self) -> anyhow::Result<()> {
        let kind = self.kind;
        let opts = chromium::LaunchOptions {
            binary: match kind {
                BrowserKind::Chromium => chromium::find_binary()?,
                BrowserKind::Firefox => firefox::find_binary()?,
            },
            profile: self.profile.clone(),
            data_dir: self.data.clone(),
            extension: self.dist.extension.clone(),
            headless: true,
            url: "about:blank".into(),
            http_port: Some(0),
            devtools: self.devtools,
        };
        self.browser = Some(match kind {
            BrowserKind::Chromium => chromium::launch(&opts)?,
            BrowserKind::Firefox => firefox::launch(&opts)?,
        });
        Ok(())
    }

    /// A new MCP client through `nova mcp`; for feature tests it has loaded the
    /// `browser_automation` bundle, as a compliant agent does first.
    pub async fn client(&self) -> anyhow::Result<Client> {
        let client = Client::stdio(&self.dist.host, &self.data).await?;
        if self.bundle_on_connect {
            let r = client
                .structured("nova.tools_bundle", serde_json::json!({"bundle": "browser_automation"}))
                .await?;
            anyhow::ensure!(r["ok"] == true, "loading the bundle: {r}");
        }
        Ok(client)
    }

    /// The URL of a fixture page.
    pub fn url(&self, path: &str) -> String {
        self.fixtures.url(path)
    }

    /// Sets how far the host's memory clock (OK freshness, learning evidence) runs ahead of the
    /// system clock, ms: facts and evidence age without waiting.
    pub fn shift_clock(&self, ms: i64) -> anyhow::Result<()> {
        Ok(std::fs::write(chromium::clock_shift_file(&self.data), ms.to_string())?)
    }

    /// Moves the host's memory clock `ms` further ahead (30 s apart: past the journal's throttle;
    /// 31 minutes: a new activity session).
    pub fn advance_clock(&self, ms: i64) -> anyhow::Result<()> {
        let file = chromium::clock_shift_file(&self.data);
        let now: i64 = std::fs::read_to_string(&file).ok().and_then(|t| t.trim().parse().ok()).unwrap_or(0);
        self.shift_clock(now + ms)
    }

    /// The hub's process id.
    pub fn hub_pid(&self) -> Option<i32> {
        hub_records(&self.data).first().and_then(|r| i32::try_from(r.pid).ok())
    }

    /// `nova --data-dir <data>`: the host's command line on this world's data dir, as support
    /// staff run it (add the subcommand).
    pub fn cli(&self) -> Command {
        let mut cmd = Command::new(&self.dist.host);
        cmd.arg("--data-dir").arg(&self.data);
        cmd
    }

    /// `nova log --format jsonl` with `args`, as support staff run it: every line parses into a
    /// call and serialises back to the same line.
    pub fn log_rows(&self, args: &[&str]) -> anyhow::Result<Vec<nova_host::support::calls::CallRow>> {
        let out = self.cli().args(["log", "--format", "jsonl"]).args(args).output()?;
        anyhow::ensure!(
            out.status.success(),
            "nova log {args:?} failed: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout)?
            .lines()
            .map(|line| {
                let row: nova_host::support::calls::CallRow = serde_json::from_str(line)?;
                anyhow::ensure!(serde_json::to_string(&row)? == line, "does not round-trip: {line}");
                Ok(row)
            })
            .collect()
    }

    /// The store file.
    pub fn store_path(&self) -> PathBuf {
        self.data.join("nova.db")
    }

    /// Whether a file of the data directory or a folder in it (the store, its journal,
    /// settings, logs, screenshots) holds `secret` anywhere in its bytes.
    pub fn data_holds(&self, secret: &str) -> anyhow::Result<bool> {
        let mut found = false;
        let mut folders = vec![self.data.clone()];
        while let Some(folder) = folders.pop() {
            for entry in std::fs::read_dir(&folder)?.flatten() {
                let path = entry.path();
                if path.is_dir() {
                    folders.push(path);
                } else if path.is_file() {
                    let bytes = std::fs::read(&path)?;
                    found |= bytes.windows(secret.len()).any(|w| w == secret.as_bytes());
                }
            }
        }
        Ok(found)
    }

    /// What operational knowledge holds now for `key`: `(value, source)` of each current fact
    /// (one per scope), the value as JSON.
    pub fn ok_facts(&self, key: &str) -> anyhow::Result<Vec<(Value, String)>> {
        let c = rusqlite::Connection::open(self.store_path())?;
        let sql = "SELECT value_json, source_kind FROM ok_facts WHERE fact_key = ?1 AND valid_to IS NULL";
        let mut query = c.prepare(sql)?;
        let rows = query.query_map([key], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))?;
        rows.map(|r| {
            let (value, source) = r?;
            Ok((serde_json::from_str(&value)?, source))
        })
        .collect()
    }

    /// The observation rows of `tool`, waiting (up to 10 s) until there are at least `n`
    /// (rows are written off the hot path).
    pub fn tool_rows(&self, tool: &str, n: usize) -> anyhow::Result<Vec<Value>> {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let rows: Vec<Value> = store::observations(&self.store_path())
                .unwrap_or_default()
                .into_iter()
                .filter(|o| o["tool"] == tool)
                .collect();
            if rows.len() >= n {
                return Ok(rows);
            }
            if Instant::now() > deadline {
                bail!("expected {n} `{tool}` observations, store has {}", rows.len());
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// A count from a read-only query on the store, polled (up to 10 s) until it equals `want`
    /// (rows are written off the hot path); returns the last count seen.
    pub fn count_until(&self, sql: &str, want: i64) -> anyhow::Result<i64> {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let n = store::query_i64(&self.store_path(), sql)?;
            if n == want || Instant::now() > deadline {
                return Ok(n);
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Waits until the store holds at least `n` observation rows (writes are batched off the
    /// hot path) and returns them as JSON objects in sequence order.
    pub fn observations(&self, n: usize) -> anyhow::Result<Vec<Value>> {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let rows = store::observations(&self.store_path()).unwrap_or_default();
            if rows.len() >= n {
                return Ok(rows);
            }
            if Instant::now() > deadline {
                bail!("expected {n} observations, store has {}", rows.len());
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Kills the hub (SIGKILL) and waits up to 30 s until the extension has started a new one.
    pub async fn restart_hub(&self) -> anyhow::Result<()> {
        let old = self.kill_hub()?;
        let deadline = Instant::now() + Duration::from_secs(30);
        while self.hub_pid().is_none_or(|p| p == old)
            || wait_for_hub(&self.data, Duration::from_secs(1)).is_err()
        {
            if Instant::now() > deadline {
                bail!("no new hub within 30 s after killing {old}");
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        Ok(())
    }

    /// Kills the hub process (SIGKILL), as a crash would.
    pub fn kill_hub(&self) -> anyhow::Result<i32> {
        let pid = self.hub_pid().context("no hub registered")?;
        nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), nix::sys::signal::Signal::SIGKILL)?;
        Ok(pid)
    }
}
