//! Driving the extension's own pages (popup, options, permission prompt) in either browser:
//! Chrome DevTools in Chromium ([`crate::cdp`]), WebDriver BiDi in Firefox ([`crate::bidi`]).
//! One test body works in both.

use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context as _, bail};
use serde_json::{Value, json};

use crate::{bidi, cdp};

/// A connection that opens and finds pages.
pub enum Ui {
    /// Chromium.
    Cdp(cdp::Cdp),
    /// Firefox.
    Bidi(Arc<bidi::Bidi>),
}

/// One page.
pub enum Page<'a> {
    /// Chromium.
    Cdp(cdp::Page<'a>),
    /// Firefox.
    Bidi(bidi::Page<'a>),
}

impl Ui {
    /// Opens `url` (one of the extension's pages) in a new window.
    ///
    /// Firefox's BiDi refuses to navigate to `moz-extension:` URLs, so there the page is opened
    /// by the extension itself: from its settings page (open since install), `tabs.create`.
    pub async fn open(&self, url: &str) -> anyhow::Result<Page<'_>> {
        Ok(match self {
            Self::Cdp(c) => Page::Cdp(c.open(url).await?),
            Self::Bidi(b) => {
                static OPENED: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
                let n = OPENED.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let unique = format!("{url}#ui{n}");
                let origin = url.split('/').take(3).collect::<Vec<_>>().join("/");
                let home = b
                    .wait_context(&format!("{origin}/options.html#welcome"), Duration::from_secs(30))
                    .await?;
                let target = serde_json::to_string(&unique)?;
                // The page may still be loading (its extension APIs not there yet).
                let deadline = Instant::now() + Duration::from_secs(15);
                while home.eval("typeof chrome === 'object' && !!chrome.tabs").await.ok() != Some(json!(true))
                {
                    if Instant::now() > deadline {
                        bail!("the extension's settings page never got its APIs");
                    }
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
                home.eval(&format!("chrome.tabs.create({{url: {target}}}).then(() => true)")).await?;
                Page::Bidi(b.wait_context(&unique, Duration::from_secs(15)).await?)
            }
        })
    }

    /// Opens an ordinary URL (`file:`, `http:`) in a new window, straight through the driver.
    pub async fn open_url(&self, url: &str) -> anyhow::Result<Page<'_>> {
        Ok(match self {
            Self::Cdp(c) => Page::Cdp(c.open(url).await?),
            Self::Bidi(b) => Page::Bidi(b.open(url).await?),
        })
    }

    /// Waits for a window the extension opened whose URL contains `part`.
    pub async fn wait_window(&self, part: &str, timeout: Duration) -> anyhow::Result<Page<'_>> {
        Ok(match self {
            Self::Cdp(c) => {
                let target = c.wait_target(part, timeout).await?;
                Page::Cdp(c.attach(&target).await?)
            }
            Self::Bidi(b) => Page::Bidi(b.wait_context(part, timeout).await?),
        })
    }

    /// Whether a window whose URL contains `part` is open.
    pub async fn has_window(&self, part: &str) -> anyhow::Result<bool> {
        match self {
            Self::Cdp(c) => c.has_target(part).await,
            Self::Bidi(b) => Ok(b.contexts().await?.iter().any(|(_, u)| u.contains(part))),
        }
    }
}

impl Page<'_> {
    /// Evaluates `expression` (promises awaited) and returns its JSON value.
    pub async fn eval(&self, expression: &str) -> anyhow::Result<Value> {
        match self {
            Self::Cdp(p) => p.eval(expression).await,
            Self::Bidi(p) => p.eval(expression).await,
        }
    }

    /// Evaluates `expression` as an extension's content script would: in Nova's content-script
    /// world in Chromium, in a sandbox realm (the same Xray wrappers) in Firefox.
    pub async fn eval_as_content_script(&self, expression: &str) -> anyhow::Result<Value> {
        match self {
            Self::Cdp(p) => p.eval_in(p.nova_world().await?, expression).await,
            Self::Bidi(p) => p.eval_in_sandbox(expression).await,
        }
    }

    /// Starts watching for the page's native dialogs (before one shows), for [`Page::accept_dialog`].
    pub async fn watch_dialogs(&self) -> anyhow::Result<()> {
        match self {
            Self::Cdp(p) => p.watch_dialogs().await,
            Self::Bidi(_) => Ok(()),
        }
    }

    /// Accepts the page's native dialog, as the person would; false when none is showing.
    pub async fn accept_dialog(&self) -> bool {
        match self {
            Self::Cdp(p) => p.accept_dialog().await,
            Self::Bidi(p) => p.accept_dialog().await,
        }
    }

    /// Waits until `expression` is truthy; its last value on timeout is in the error.
    pub async fn wait_for(&self, expression: &str, timeout: Duration) -> anyhow::Result<Value> {
        let deadline = Instant::now() + timeout;
        loop {
            let v = self.eval(expression).await.unwrap_or(Value::Null);
            let truthy = !matches!(&v, Value::Null | Value::Bool(false))
                && v.as_str() != Some("")
                && v.as_f64() != Some(0.0);
            if truthy {
                return Ok(v);
            }
            if Instant::now() > deadline {
                bail!("`{expression}` still not true after {timeout:?} (last value {v})");
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Clicks the element matching `selector` (a click event through the DOM).
    pub async fn click(&self, selector: &str) -> anyhow::Result<()> {
        let sel = serde_json::to_string(selector)?;
        let ok = self
            .eval(&format!(
                // The click runs after the answer: a click that closes the page (approving a
                // prompt closes its window) would otherwise take the answer with it.
                "(() => {{ const e = document.querySelector({sel}); if (!e) return false; setTimeout(() => e.click(), 0); return true; }})()"
            ))
            .await?;
        if ok != json!(true) {
            bail!("nothing matches `{selector}`");
        }
        Ok(())
    }

    /// Sets the size the page is laid out and captured at.
    pub async fn viewport(&self, width: u32, height: u32) -> anyhow::Result<()> {
        match self {
            Self::Cdp(p) => p.viewport(width, height).await,
            Self::Bidi(p) => p.viewport(width, height).await,
        }
    }

    /// Saves a PNG of the page, and checks it is one worth keeping: a PNG of at least
    /// 300 x 200 pixels that is not blank.
    pub async fn screenshot(&self, path: &std::path::Path) -> anyhow::Result<()> {
        match self {
            Self::Cdp(p) => p.screenshot(path).await?,
            Self::Bidi(p) => p.screenshot(path).await?,
        }
        check_capture(&std::fs::read(path)?).with_context(|| format!("artifact {}", path.display()))
    }

    /// Reloads.
    pub async fn reload(&self) -> anyhow::Result<()> {
        match self {
            Self::Cdp(p) => p.reload().await,
            Self::Bidi(p) => p.reload().await,
        }
    }
}

/// Smallest artifact that can hold a rendered page: a blank or single-colour page of the popup's
/// size compresses to 1-2 KB; the emptiest real state (the popup without a host) is ~17 KB.
const MIN_CAPTURE_BYTES: usize = 8 * 1024;

/// A PNG (signature and IHDR), at least 300 x 200 pixels, and not blank (by its compressed size).
fn check_capture(png: &[u8]) -> anyhow::Result<()> {
    anyhow::ensure!(png.len() >= 24 && png.starts_with(b"\x89PNG\r\n\x1a\n"), "not a PNG");
    let w = u32::from_be_bytes([png[16], png[17], png[18], png[19]]);
    let h = u32::from_be_bytes([png[20], png[21], png[22], png[23]]);
    anyhow::ensure!(w >= 300 && h >= 200, "only {w} x {h} pixels");
    anyhow::ensure!(png.len() >= MIN_CAPTURE_BYTES, "{} bytes: the page looks blank", png.len());
    Ok(())
}
