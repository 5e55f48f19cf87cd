//! A small WebDriver BiDi client (Firefox): drives pages (the extension's popup, options and
//! prompt pages in the UI tests). The extension itself is installed in the profile
//! ([`crate::firefox`]).

use std::time::{Duration, Instant};

use anyhow::{Context as _, bail};
use serde_json::{Value, json};
use tokio::sync::Mutex;

use crate::ws::WebSocket;

/// A BiDi session.
pub struct Bidi {
    ws: Mutex<WebSocket>,
    next: std::sync::atomic::AtomicU64,
}

impl Bidi {
    /// Connects to `ws://127.0.0.1:<port>/session` and starts a session.
    pub async fn connect(port: u16) -> anyhow::Result<Self> {
        let ws = WebSocket::connect(port, "/session").await?;
        let bidi = Self { ws: Mutex::new(ws), next: std::sync::atomic::AtomicU64::new(1) };
        // A WebDriver session dismisses a page's `confirm()` the moment it opens; in a person's
        // browser it waits for the person, and so does it here (`Page::accept_dialog`).
        let capabilities = json!({"alwaysMatch": {"unhandledPromptBehavior": {"confirm": "ignore"}}});
        bidi.call("session.new", json!({"capabilities": capabilities})).await.context("session.new")?;
        Ok(bidi)
    }

    /// Calls `method`; its result.
    pub async fn call(&self, method: &str, params: Value) -> anyhow::Result<Value> {
        let id = self.next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let mut ws = self.ws.lock().await;
        ws.send(&json!({"id": id, "method": method, "params": params}).to_string()).await?;
        loop {
            let reply: Value = serde_json::from_str(&ws.recv().await?)?;
            if reply.get("id").and_then(Value::as_u64) != Some(id) {
                continue; // an event
            }
            if reply["type"] == "error" {
                bail!("{method} failed: {} {}", reply["error"], reply["message"]);
            }
            return Ok(reply.get("result").cloned().unwrap_or(Value::Null));
        }
    }

    /// Opens `url` in a new window.
    pub async fn open(&self, url: &str) -> anyhow::Result<Page<'_>> {
        let created = self.call("browsingContext.create", json!({"type": "window"})).await?;
        let context = created["context"].as_str().context("context")?.to_owned();
        self.call("browsingContext.navigate", json!({"context": context, "url": url, "wait": "complete"}))
            .await?;
        Ok(Page { bidi: self, context })
    }

    /// The top-level browsing contexts: (context, url).
    pub async fn contexts(&self) -> anyhow::Result<Vec<(String, String)>> {
        let tree = self.call("browsingContext.getTree", json!({"maxDepth": 0})).await?;
        Ok(tree["contexts"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|c| {
                (
                    c["context"].as_str().unwrap_or_default().to_owned(),
                    c["url"].as_str().unwrap_or_default().to_owned(),
                )
            })
            .collect())
    }

    /// Waits for a top-level context whose URL contains `part`.
    pub async fn wait_context(&self, part: &str, timeout: Duration) -> anyhow::Result<Page<'_>> {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some((context, _)) = self.contexts().await?.into_iter().find(|(_, u)| u.contains(part)) {
                return Ok(Page { bidi: self, context });
            }
            if Instant::now() > deadline {
                bail!("no window with `{part}` in its URL appeared within {timeout:?}");
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

/// One browsing context.
pub struct Page<'a> {
    bidi: &'a Bidi,
    context: String,
}

impl Page<'_> {
    /// Evaluates `expression` (awaiting promises); its JSON value.
    pub async fn eval(&self, expression: &str) -> anyhow::Result<Value> {
        self.evaluate(expression, json!({"context": self.context})).await
    }

    /// Evaluates `expression` as [`Page::eval`] does, in a sandbox: a realm of its own that sees
    /// the page through the same Xray wrappers as an extension's content script.
    pub async fn eval_in_sandbox(&self, expression: &str) -> anyhow::Result<Value> {
        self.evaluate(expression, json!({"context": self.context, "sandbox": "nova-e2e"})).await
    }

    async fn evaluate(&self, expression: &str, target: Value) -> anyhow::Result<Value> {
        let wrapped = format!("(async () => JSON.stringify(await ({expression})))()");
        let r = self
            .bidi
            .call("script.evaluate", json!({"expression": wrapped, "target": target, "awaitPromise": true}))
            .await?;
        if r["type"] == "exception" {
            bail!("`{expression}` threw: {}", r["exceptionDetails"]);
        }
        match r["result"]["value"].as_str() {
            Some(text) => Ok(serde_json::from_str(text).unwrap_or(Value::Null)),
            None => Ok(Value::Null),
        }
    }

    /// Saves a PNG of the whole page (the document, not only the viewport).
    pub async fn screenshot(&self, path: &std::path::Path) -> anyhow::Result<()> {
        use base64::Engine as _;
        let r = self
            .bidi
            .call("browsingContext.captureScreenshot", json!({"context": self.context, "origin": "document"}))
            .await?;
        let bytes = base64::engine::general_purpose::STANDARD.decode(r["data"].as_str().context("data")?)?;
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        std::fs::write(path, bytes)?;
        Ok(())
    }

    /// Sets the viewport size.
    pub async fn viewport(&self, width: u32, height: u32) -> anyhow::Result<()> {
        self.bidi
            .call(
                "browsingContext.setViewport",
                json!({"context": self.context, "viewport": {"width": width, "height": height}}),
            )
            .await
            .map(drop)
    }

    /// Accepts the page's native dialog (`confirm`, `alert`, `beforeunload`), as the person
    /// would; false when none is showing.
    pub async fn accept_dialog(&self) -> bool {
        let accept = json!({"context": self.context, "accept": true});
        self.bidi.call("browsingContext.handleUserPrompt", accept).await.is_ok()
    }

    /// Reloads.
    pub async fn reload(&self) -> anyhow::Result<()> {
        self.bidi
            .call("browsingContext.reload", json!({"context": self.context, "wait": "complete"}))
            .await
            .map(drop)
    }

    /// Closes the window.
    pub async fn close(self) -> anyhow::Result<()> {
        self.bidi.call("browsingContext.close", json!({"context": self.context})).await.map(drop)
    }
}
