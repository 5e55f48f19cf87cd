//! A small Chrome DevTools Protocol client for tests that drive the extension's own pages (popup,
//! options, permission prompt), which content scripts cannot reach, over the port Chromium writes
//! to `DevToolsActivePort`.

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context as _, bail};
use serde_json::{Value, json};
use tokio::sync::Mutex;

use crate::ws::WebSocket;

/// A browser-level DevTools connection.
pub struct Cdp {
    ws: Mutex<WebSocket>,
    next: AtomicU64,
}

impl Cdp {
    /// Connects to the browser launched with `devtools: true` on profile `profile`.
    pub async fn connect(profile: &Path, timeout: Duration) -> anyhow::Result<Self> {
        let file = profile.join("DevToolsActivePort");
        let deadline = Instant::now() + timeout;
        let text = loop {
            match std::fs::read_to_string(&file) {
                Ok(t) if t.lines().count() >= 2 => break t,
                _ if Instant::now() > deadline => bail!("{} did not appear", file.display()),
                _ => tokio::time::sleep(Duration::from_millis(100)).await,
            }
        };
        let mut lines = text.lines();
        let port: u16 = lines.next().unwrap_or_default().trim().parse().context("DevToolsActivePort port")?;
        let path = lines.next().unwrap_or_default().trim().to_owned();
        let ws = WebSocket::connect(port, &path).await?;
        Ok(Self { ws: Mutex::new(ws), next: AtomicU64::new(1) })
    }

    /// Calls `method` (in `session` when given) and returns its result.
    pub async fn call(&self, session: Option<&str>, method: &str, params: Value) -> anyhow::Result<Value> {
        Ok(self.call_with_events(session, method, params).await?.0)
    }

    /// Calls `method` and returns its result with the events the browser sent before it (those
    /// a domain's `enable` reports about what already exists, for one).
    pub async fn call_with_events(
        &self,
        session: Option<&str>,
        method: &str,
        params: Value,
    ) -> anyhow::Result<(Value, Vec<Value>)> {
        let mut events = Vec::new();
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let mut msg = json!({"id": id, "method": method, "params": params});
        if let Some(s) = session {
            msg["sessionId"] = json!(s);
        }
        let mut ws = self.ws.lock().await;
        ws.send(&msg.to_string()).await?;
        // A page that goes away never answers: fail loudly instead of waiting for ever.
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let Ok(text) = tokio::time::timeout(left, ws.recv()).await else {
                bail!("{method}: no answer from the browser within 60 s");
            };
            let text = text?;
            let reply: Value = serde_json::from_str(&text)?;
            if reply.get("id").and_then(Value::as_u64) != Some(id) {
                if reply.get("method").is_some() {
                    events.push(reply);
                }
                continue;
            }
            if let Some(e) = reply.get("error") {
                bail!("{method} failed: {e}");
            }
            return Ok((reply.get("result").cloned().unwrap_or(Value::Null), events));
        }
    }

    /// Opens `url` in a new window and attaches to it.
    pub async fn open(&self, url: &str) -> anyhow::Result<Page<'_>> {
        let created = self.call(None, "Target.createTarget", json!({"url": url, "newWindow": true})).await?;
        let target = created["targetId"].as_str().context("targetId")?.to_owned();
        self.attach(&target).await
    }

    /// Attaches to an existing target.
    pub async fn attach(&self, target: &str) -> anyhow::Result<Page<'_>> {
        let attached =
            self.call(None, "Target.attachToTarget", json!({"targetId": target, "flatten": true})).await?;
        let session = attached["sessionId"].as_str().context("sessionId")?.to_owned();
        Ok(Page { cdp: self, session, target: target.to_owned(), nova_world: std::sync::Mutex::default() })
    }

    /// Waits for a page target whose URL contains `part` (a window opened by the extension).
    pub async fn wait_target(&self, part: &str, timeout: Duration) -> anyhow::Result<String> {
        let deadline = Instant::now() + timeout;
        loop {
            let targets = self.call(None, "Target.getTargets", json!({})).await?;
            let found = targets["targetInfos"]
                .as_array()
                .into_iter()
                .flatten()
                .find(|t| t["type"] == "page" && t["url"].as_str().is_some_and(|u| u.contains(part)));
            if let Some(t) = found {
                return Ok(t["targetId"].as_str().unwrap_or_default().to_owned());
            }
            if Instant::now() > deadline {
                bail!("no page with `{part}` in its URL appeared within {timeout:?}");
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Whether a page target whose URL contains `part` exists.
    pub async fn has_target(&self, part: &str) -> anyhow::Result<bool> {
        let targets = self.call(None, "Target.getTargets", json!({})).await?;
        Ok(targets["targetInfos"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|t| t["url"].as_str().is_some_and(|u| u.contains(part))))
    }
}

/// One attached page.
pub struct Page<'a> {
    cdp: &'a Cdp,
    session: String,
    target: String,
    /// The last world [`Page::nova_world`] found (checked again before it is reused).
    nova_world: std::sync::Mutex<Option<i64>>,
}

impl Page<'_> {
    /// Calls a DevTools method on this page (`Profiler.start`, ...) and returns its result.
    pub async fn call(&self, method: &str, params: Value) -> anyhow::Result<Value> {
        self.cdp.call(Some(&self.session), method, params).await
    }

    /// Evaluates `expression` (awaiting promises) and returns its value.
    pub async fn eval(&self, expression: &str) -> anyhow::Result<Value> {
        self.evaluate(expression, None).await
    }

    async fn evaluate(&self, expression: &str, context: Option<i64>) -> anyhow::Result<Value> {
        let mut params = json!({"expression": expression, "awaitPromise": true, "returnByValue": true});
        if let Some(id) = context {
            params["contextId"] = json!(id);
        }
        let r = self.cdp.call(Some(&self.session), "Runtime.evaluate", params).await?;
        if let Some(e) = r.get("exceptionDetails") {
            bail!("`{expression}` threw: {e}");
        }
        Ok(r["result"].get("value").cloned().unwrap_or(Value::Null))
    }

    /// The isolated JavaScript worlds in this page, where extensions' content scripts run, as
    /// `Runtime.executionContextCreated` descriptions (`id`, `origin`, `name`, `auxData`).
    pub async fn isolated_worlds(&self) -> anyhow::Result<Vec<Value>> {
        let (_, events) = self.cdp.call_with_events(Some(&self.session), "Runtime.enable", json!({})).await?;
        Ok(events
            .into_iter()
            .filter(|e| {
                e["method"] == "Runtime.executionContextCreated" && e["sessionId"] == self.session.as_str()
            })
            .map(|e| e["params"]["context"].clone())
            .filter(|c| c["auxData"]["type"] == "isolated")
            .collect())
    }

    /// Evaluates `expression` (awaiting promises) in the execution context `context` (a world
    /// from [`Page::isolated_worlds`]) and returns its value.
    pub async fn eval_in(&self, context: i64, expression: &str) -> anyhow::Result<Value> {
        self.evaluate(expression, Some(context)).await
    }

    /// The execution context of Nova's own content script in this page: the isolated world whose
    /// `chrome.runtime.id` is Nova's extension id.
    pub async fn nova_world(&self) -> anyhow::Result<i64> {
        const RUNTIME_ID: &str = "(globalThis.chrome && chrome.runtime && chrome.runtime.id) || ''";
        let nova = json!(nova_shared::CHROMIUM_EXTENSION_ID);
        let last = *self.nova_world.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(id) = last
            && self.eval_in(id, RUNTIME_ID).await.ok().as_ref() == Some(&nova)
        {
            return Ok(id);
        }
        let worlds = self.isolated_worlds().await?;
        for w in &worlds {
            let id = w["id"].as_i64().unwrap_or_default();
            if self.eval_in(id, RUNTIME_ID).await? == nova {
                *self.nova_world.lock().unwrap_or_else(|p| p.into_inner()) = Some(id);
                return Ok(id);
            }
        }
        bail!("no Nova content-script world in {worlds:?}")
    }

    /// The page's JavaScript heap after a garbage collection (`Runtime.getHeapUsage`: `usedSize`,
    /// `totalSize`, and `backingStorageSize`, where WebAssembly memories live), content scripts'
    /// worlds included.
    pub async fn heap_usage(&self) -> anyhow::Result<Value> {
        self.cdp.call(Some(&self.session), "HeapProfiler.collectGarbage", json!({})).await?;
        self.cdp.call(Some(&self.session), "Runtime.getHeapUsage", json!({})).await
    }

    /// Sets the size the page is laid out and captured at.
    pub async fn viewport(&self, width: u32, height: u32) -> anyhow::Result<()> {
        self.cdp
            .call(
                Some(&self.session),
                "Emulation.setDeviceMetricsOverride",
                json!({"width": width, "height": height, "deviceScaleFactor": 1, "mobile": false}),
            )
            .await
            .map(drop)
    }

    /// Saves a PNG of the whole page to `path`.
    pub async fn screenshot(&self, path: &Path) -> anyhow::Result<()> {
        use base64::Engine as _;
        let r = self
            .cdp
            .call(
                Some(&self.session),
                "Page.captureScreenshot",
                json!({"format": "png", "captureBeyondViewport": true}),
            )
            .await?;
        let bytes = base64::engine::general_purpose::STANDARD.decode(r["data"].as_str().context("data")?)?;
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        std::fs::write(path, bytes)?;
        Ok(())
    }

    /// Reloads the page.
    pub async fn reload(&self) -> anyhow::Result<()> {
        self.cdp.call(Some(&self.session), "Page.reload", json!({})).await.map(drop)
    }

    /// Starts watching for the page's native dialogs: DevTools sees them only with the Page
    /// domain enabled, and a page blocked by one answers nothing else, so this comes first.
    pub async fn watch_dialogs(&self) -> anyhow::Result<()> {
        self.cdp.call(Some(&self.session), "Page.enable", json!({})).await.map(drop)
    }

    /// Accepts the page's native dialog (`confirm`, `alert`, `beforeunload`), as the person
    /// would; false when none is showing (or dialogs are not watched).
    pub async fn accept_dialog(&self) -> bool {
        let accept =
            self.cdp.call(Some(&self.session), "Page.handleJavaScriptDialog", json!({"accept": true}));
        matches!(tokio::time::timeout(std::time::Duration::from_secs(5), accept).await, Ok(Ok(_)))
    }

    /// Closes the page.
    pub async fn close(self) -> anyhow::Result<()> {
        self.cdp.call(None, "Target.closeTarget", json!({"targetId": self.target})).await.map(drop)
    }
}
