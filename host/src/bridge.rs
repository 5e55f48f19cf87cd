//! The bridge to the extension over native messaging: request/response correlation with
//! timeouts, the browser's hello and tab list, and chunking of large host-to-browser frames.
//!
//! One hub process serves exactly one browser connection (its stdin/stdout). When that stream
//! ends the browser is gone: every pending request fails with [`BridgeError::Disconnected`].

pub mod codec;

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use nova_shared::protocol::{self, Envelope, Hello, Kind, PageStamp, TabInfo, method};
use serde_json::Value;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::{mpsc, oneshot};

use codec::{BROWSER_TO_HOST_MAX_FRAME, FrameError, HOST_TO_BROWSER_MAX_FRAME};

/// What a tool call without a browser says to do.
pub const NOT_CONNECTED_HELP: &str = "No browser is connected to Nova. Start one with \
`cargo xtask run` (or open your browser with the Nova extension installed), check with \
`nova doctor`, then retry the call.";

/// Default time a request may take before it fails with `timeout`.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(15);

/// Why a bridge request failed.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum BridgeError {
    /// No browser is connected to this hub.
    #[error("the browser extension is not connected")]
    Disconnected,
    /// The extension did not answer in time.
    #[error("the browser did not answer `{method}` within {ms} ms")]
    Timeout {
        /// Method that timed out.
        method: String,
        /// Timeout that elapsed.
        ms: u64,
    },
    /// The extension answered with an error.
    #[error("{message}")]
    Remote {
        /// Reason code from the extension.
        code: String,
        /// Its explanation.
        message: String,
    },
}

impl BridgeError {
    /// The reason code for tool results.
    pub fn reason_code(&self) -> &str {
        match self {
            Self::Disconnected => "browser_not_connected",
            Self::Timeout { .. } => nova_shared::reason::TIMEOUT,
            Self::Remote { code, .. } => code,
        }
    }

    /// Whether retrying the same call later may succeed.
    pub fn retryable(&self) -> bool {
        matches!(self, Self::Disconnected | Self::Timeout { .. })
    }
}

/// A response as the read loop hands it to its request: the result, the extension's stage
/// timings and how long decoding the frame took (for [`crate::stages`]).
struct Response {
    result: Result<Value, BridgeError>,
    timing: Option<std::collections::BTreeMap<String, f64>>,
    decode_ms: f64,
}

type Pending = oneshot::Sender<Response>;

/// A boxed future answering one browser request.
pub type Answer =
    std::pin::Pin<Box<dyn std::future::Future<Output = Result<Value, protocol::WireError>> + Send>>;

/// Serves the requests the browser sends to the hub (the extension's pages: `ui.*`).
pub trait BrowserRequests: Send + Sync {
    /// Answers `method` with `params`.
    fn answer(&self, method: &str, params: Value) -> Answer;
}

/// What the hub knows about the browser on the other end.
#[derive(Debug, Default, Clone)]
pub struct BrowserState {
    /// The extension's hello, once received.
    pub hello: Option<Hello>,
    /// Last tab list the extension reported, each tab's `nav_epoch` raised to the newest one
    /// a page reply was stamped with (the list is event-fed and may trail a navigation).
    pub tabs: Vec<TabInfo>,
    /// The newest [`PageStamp`] per (tab, frame): which document last answered, and its
    /// revision then.
    pub stamps: HashMap<(String, protocol::FrameId), PageStamp>,
}

impl BrowserState {
    /// The tab a call names (`active` or a target id).
    pub fn tab(&self, target: &str) -> Option<&TabInfo> {
        self.tabs.iter().find(|t| if target == "active" { t.active } else { t.target_id == target })
    }

    /// The revision of the document now showing in `target`'s `frame`, when that document
    /// answered a request (a stamp from an older document does not count).
    pub fn doc_rev(&self, target: &str, frame: protocol::FrameId) -> Option<u32> {
        let tab = self.tabs.iter().find(|t| t.target_id == target)?;
        let stamp = self.stamps.get(&(target.to_owned(), frame))?;
        (stamp.nav_epoch == tab.nav_epoch).then_some(stamp.doc_rev)
    }

    /// Takes a reported tab list. A list may trail what a call already learnt (the extension
    /// sends it from an event, the navigation's reply may come first): where a tab's known
    /// document is newer than the list's, the newer URL and epoch stay.
    fn take_tabs(&mut self, mut tabs: Vec<TabInfo>) {
        for tab in &mut tabs {
            if let Some(known) = self.tabs.iter().find(|t| t.target_id == tab.target_id)
                && known.nav_epoch > tab.nav_epoch
            {
                tab.url.clone_from(&known.url);
                tab.nav_epoch = known.nav_epoch;
            }
        }
        self.tabs = tabs;
        self.raise_epochs();
    }

    fn raise_epochs(&mut self) {
        for tab in &mut self.tabs {
            if let Some(s) = self.stamps.get(&(tab.target_id.clone(), 0)) {
                tab.nav_epoch = tab.nav_epoch.max(s.nav_epoch);
            }
        }
    }
}

/// The id of a bridge's first request: random (1 to 2^30), so that the ids of a hub started
/// after another one died are not the ones the dead hub used. An answer the browser still sends
/// for a dead hub's request then matches nothing here, instead of answering a new request that
/// happens to carry the same id (a perceive once got the answer of the click the dead hub sent).
fn first_request_id() -> u32 {
    rand::random::<u32>() % (1 << 30) + 1
}

/// The hub's end of the native-messaging channel.
pub struct Bridge {
    out: mpsc::UnboundedSender<String>,
    pending: Mutex<HashMap<u32, Pending>>,
    next_id: AtomicU32,
    connected: AtomicBool,
    state: Mutex<BrowserState>,
    hello_tx: tokio::sync::watch::Sender<bool>,
    handler: std::sync::OnceLock<Arc<dyn BrowserRequests>>,
    me: std::sync::Weak<Bridge>,
}

impl Bridge {
    /// Starts the bridge over a byte stream pair (the hub's stdin/stdout). Returns the bridge
    /// and a future that completes when the browser side closes.
    pub fn start<R, W>(reader: R, writer: W) -> (Arc<Self>, tokio::task::JoinHandle<()>)
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let (out, rx) = mpsc::unbounded_channel();
        let (hello_tx, _) = tokio::sync::watch::channel(false);
        let bridge = Arc::new_cyclic(|me| Self {
            me: me.clone(),
            handler: std::sync::OnceLock::new(),
            out,
            pending: Mutex::new(HashMap::new()),
            next_id: AtomicU32::new(first_request_id()),
            connected: AtomicBool::new(true),
            state: Mutex::new(BrowserState::default()),
            hello_tx,
        });
        tokio::spawn(write_loop(writer, rx));
        let reader_bridge = bridge.clone();
        let done = tokio::spawn(async move { reader_bridge.read_loop(reader).await });
        (bridge, done)
    }

    /// Sets who answers the browser's own requests (once; later calls are ignored).
    pub fn serve(&self, handler: Arc<dyn BrowserRequests>) {
        let _ = self.handler.set(handler);
    }

    /// Sends a one-way event to the browser (dropped when it is not connected).
    pub fn notify(&self, method: &str, params: Value) {
        if self.is_connected() {
            self.send(&Envelope::event(method, params), 0);
        }
    }

    /// Whether the browser connection is still open.
    pub fn is_connected(&self) -> bool {
        self.connected.load(Ordering::SeqCst)
    }

    /// A call saw tab `target` commit the document at `url` with navigation epoch `nav_epoch`
    /// (a navigation's reply): the tab list keeps it until a newer list says more.
    pub fn landed(&self, target: &str, url: &str, nav_epoch: u32) {
        if let Ok(mut s) = self.state.lock()
            && let Some(tab) = s.tabs.iter_mut().find(|t| t.target_id == target)
            && tab.nav_epoch <= nav_epoch
        {
            tab.url = url.to_owned();
            tab.nav_epoch = nav_epoch;
        }
    }

    /// The navigation epoch of the document that last answered from `target`'s `frame`, without
    /// copying the whole state (every perceive asks).
    pub fn nav_epoch(&self, target: &str, frame: protocol::FrameId) -> Option<u32> {
        let state = self.state.lock().ok()?;
        state.stamps.get(&(target.to_owned(), frame)).map(|s| s.nav_epoch)
    }

    /// A copy of what is known about the browser.
    pub fn state(&self) -> BrowserState {
        self.state.lock().map(|s| s.clone()).unwrap_or_default()
    }

    /// Waits until the extension said hello (or `timeout` passes). Returns whether it did.
    pub async fn wait_hello(&self, timeout: Duration) -> bool {
        let mut rx = self.hello_tx.subscribe();
        tokio::time::timeout(timeout, rx.wait_for(|h| *h)).await.is_ok_and(|r| r.is_ok())
    }

    /// Asks the extension for its tabs (when the list it sends on connect has not arrived
    /// yet) and keeps the answer.
    pub async fn refresh_tabs(&self, timeout: Duration) {
        match self.call::<Vec<TabInfo>>(method::TABS_LIST, serde_json::json!({}), timeout).await {
            Ok(tabs) => {
                if let Ok(mut s) = self.state.lock()
                    && s.tabs.is_empty()
                {
                    s.tabs = tabs;
                    s.raise_epochs();
                }
            }
            Err(e) => tracing::debug!(error = %e, "no tab list"),
        }
    }

    /// Sends a request and waits for its response.
    pub async fn request(
        &self,
        method: &str,
        params: Value,
        timeout: Duration,
    ) -> Result<Value, BridgeError> {
        if !self.is_connected() {
            return Err(BridgeError::Disconnected);
        }
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        if let Ok(mut p) = self.pending.lock() {
            p.insert(id, tx);
        }
        let sent = std::time::Instant::now();
        self.send(&Envelope::request(id, method, params), id);
        let outcome = tokio::time::timeout(timeout, rx).await;
        if let Ok(mut p) = self.pending.lock() {
            p.remove(&id);
        }
        match outcome {
            Ok(Ok(answer)) => {
                let round_trip = crate::stages::ms_since(sent);
                crate::stages::browser(method, round_trip, answer.decode_ms, answer.timing.as_ref());
                answer.result
            }
            Ok(Err(_)) => Err(BridgeError::Disconnected),
            Err(_) => Err(BridgeError::Timeout {
                method: method.to_owned(),
                ms: u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX),
            }),
        }
    }

    /// Sends a request whose result is deserialised into `T`.
    pub async fn call<T: serde::de::DeserializeOwned>(
        &self,
        method: &str,
        params: impl serde::Serialize,
        timeout: Duration,
    ) -> Result<T, BridgeError> {
        let params = serde_json::to_value(params).map_err(|e| internal(e.to_string()))?;
        let value = self.request(method, params, timeout).await?;
        serde_json::from_value(value)
            .map_err(|e| internal(format!("unexpected `{method}` reply from the extension: {e}")))
    }

    fn send(&self, env: &Envelope, id: u32) {
        match serde_json::to_string(env) {
            Ok(json) => {
                for frame in protocol::chunk_frames(id, &json) {
                    let _ = self.out.send(frame);
                }
            }
            Err(e) => tracing::error!(error = %e, "cannot serialise envelope"),
        }
    }

    async fn read_loop<R: AsyncRead + Unpin>(self: Arc<Self>, mut reader: R) {
        loop {
            match codec::read_frame(&mut reader, BROWSER_TO_HOST_MAX_FRAME).await {
                Ok(Some(text)) => self.handle_frame(&text),
                Ok(None) => break,
                Err(e) if e.is_recoverable() => {
                    tracing::warn!(error = %e, "rejected a frame from the browser");
                }
                Err(FrameError::Truncated) => {
                    tracing::warn!("browser stream ended inside a frame");
                    break;
                }
                Err(e) => {
                    tracing::warn!(error = %e, "browser stream failed");
                    break;
                }
            }
        }
        self.connected.store(false, Ordering::SeqCst);
        if let Ok(mut p) = self.pending.lock() {
            for (_, tx) in p.drain() {
                let _ = tx.send(Response {
                    result: Err(BridgeError::Disconnected),
                    timing: None,
                    decode_ms: 0.0,
                });
            }
        }
        tracing::info!("browser disconnected");
    }

    fn handle_frame(&self, text: &str) {
        let decoding = std::time::Instant::now();
        let mut env: Envelope = match serde_json::from_str(text) {
            Ok(env) => env,
            Err(e) => {
                tracing::warn!(error = %e, bytes = text.len(), "rejected a malformed frame");
                return;
            }
        };
        // A tab opened at an address with a sign-in in it reports that address: nothing past
        // this point keeps its password.
        for v in [&mut env.result, &mut env.params].into_iter().flatten() {
            crate::url_passwords::drop_passwords(v);
        }
        if let Some(e) = &mut env.error {
            e.message = crate::url_passwords::without_passwords(&e.message).into_owned();
        }
        match env.kind {
            Kind::Res => {
                let waiter = self.pending.lock().ok().and_then(|mut p| p.remove(&env.id));
                let Some(tx) = waiter else {
                    tracing::debug!(id = env.id, "late or unknown response dropped");
                    return;
                };
                let result = match env.error {
                    Some(e) => Err(BridgeError::Remote { code: e.code, message: e.message }),
                    None => Ok(env.result.unwrap_or(Value::Null)),
                };
                let decode_ms = crate::stages::ms_since(decoding);
                let _ = tx.send(Response { result, timing: env.timing, decode_ms });
            }
            Kind::Evt => self.handle_event(env.method.as_deref().unwrap_or(""), env.params),
            Kind::Req => self.handle_request(env),
            Kind::Chunk => tracing::warn!("chunk frames are only sent host to browser; dropped"),
        }
    }

    fn handle_event(&self, name: &str, params: Option<Value>) {
        let params = params.unwrap_or(Value::Null);
        match name {
            method::HELLO => match serde_json::from_value::<Hello>(params) {
                Ok(hello) => {
                    tracing::info!(browser = %hello.browser, version = %hello.extension_version, "extension connected");
                    if let Ok(mut s) = self.state.lock() {
                        s.hello = Some(hello);
                    }
                    self.hello_tx.send_replace(true);
                }
                Err(e) => tracing::warn!(error = %e, "malformed hello"),
            },
            method::TABS_CHANGED => match serde_json::from_value::<Vec<TabInfo>>(params) {
                Ok(tabs) => {
                    if let Ok(mut s) = self.state.lock() {
                        s.stamps.retain(|(t, _), _| tabs.iter().any(|tab| tab.target_id == *t));
                        s.take_tabs(tabs);
                    }
                }
                Err(e) => tracing::warn!(error = %e, "malformed tab list"),
            },
            method::PAGE_STAMP => match serde_json::from_value::<PageStamp>(params) {
                Ok(stamp) => {
                    if let Ok(mut s) = self.state.lock() {
                        s.stamps.insert((stamp.target_id.clone(), stamp.frame_id), stamp);
                        s.raise_epochs();
                    }
                }
                Err(e) => tracing::warn!(error = %e, "malformed page stamp"),
            },
            other => tracing::debug!(event = other, "unhandled event"),
        }
    }

    fn handle_request(&self, env: Envelope) {
        let name = env.method.clone().unwrap_or_default();
        if name.starts_with("ui.")
            && let Some(me) = self.me.upgrade()
        {
            let id = env.id;
            tokio::spawn(async move {
                // The browser may ask before the hub has finished opening (a STOP queued while
                // the host was away is sent at once on connect).
                let mut handler = me.handler.get().cloned();
                for _ in 0..100 {
                    if handler.is_some() {
                        break;
                    }
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    handler = me.handler.get().cloned();
                }
                let Some(handler) = handler else {
                    me.send(&Envelope::err(id, nova_shared::reason::INTERNAL, "the hub is not ready"), id);
                    return;
                };
                let reply = match handler.answer(&name, env.params.unwrap_or(Value::Null)).await {
                    Ok(v) => Envelope::ok(id, v),
                    Err(e) => Envelope::err(id, &e.code, e.message),
                };
                me.send(&reply, id);
            });
            return;
        }
        let reply = match env.method.as_deref() {
            Some(method::PING) => Envelope::ok(env.id, env.params.unwrap_or(Value::Null)),
            other => Envelope::err(
                env.id,
                nova_shared::reason::UNKNOWN_METHOD,
                format!("the host has no method `{}`", other.unwrap_or("")),
            ),
        };
        self.send(&reply, env.id);
    }
}

fn internal(message: String) -> BridgeError {
    BridgeError::Remote { code: nova_shared::reason::INTERNAL.to_owned(), message }
}

async fn write_loop<W: AsyncWrite + Unpin>(mut writer: W, mut rx: mpsc::UnboundedReceiver<String>) {
    while let Some(frame) = rx.recv().await {
        if let Err(e) = codec::write_frame(&mut writer, &frame, HOST_TO_BROWSER_MAX_FRAME).await {
            tracing::warn!(error = %e, "cannot write to the browser");
            if !e.is_recoverable() {
                break;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    async fn read_env(r: &mut (impl AsyncRead + Unpin)) -> Envelope {
        let text = codec::read_frame(r, usize::MAX).await.expect("frame").expect("some");
        serde_json::from_str(&text).expect("envelope")
    }

    async fn write_env(w: &mut (impl AsyncWrite + Unpin), env: &Envelope) {
        let text = serde_json::to_string(env).expect("json");
        codec::write_frame(w, &text, usize::MAX).await.expect("write");
    }

    #[tokio::test]
    async fn request_is_answered_by_matching_response() {
        let (host_side, mut browser) = tokio::io::duplex(1 << 20);
        let (r, w) = tokio::io::split(host_side);
        let (bridge, _done) = Bridge::start(r, w);
        let call = tokio::spawn({
            let b = bridge.clone();
            async move { b.request("tabs.list", json!({}), Duration::from_secs(5)).await }
        });
        let req = read_env(&mut browser).await;
        assert_eq!(req.method.as_deref(), Some("tabs.list"));
        write_env(&mut browser, &Envelope::ok(req.id, json!([1, 2]))).await;
        assert_eq!(call.await.expect("join").expect("ok"), json!([1, 2]));
    }

    #[tokio::test]
    async fn missing_reply_times_out_with_reason() {
        let (host_side, _browser) = tokio::io::duplex(1 << 20);
        let (r, w) = tokio::io::split(host_side);
        let (bridge, _done) = Bridge::start(r, w);
        let err = bridge.request("page.perceive", json!({}), Duration::from_millis(50)).await;
        let err = err.expect_err("timeout");
        assert_eq!(err.reason_code(), "timeout");
        assert!(err.to_string().contains("page.perceive"));
    }

    #[tokio::test]
    async fn disconnect_fails_pending_requests() {
        let (host_side, browser) = tokio::io::duplex(1 << 20);
        let (r, w) = tokio::io::split(host_side);
        let (bridge, done) = Bridge::start(r, w);
        let call = tokio::spawn({
            let b = bridge.clone();
            async move { b.request("x", json!({}), Duration::from_secs(30)).await }
        });
        tokio::time::sleep(Duration::from_millis(20)).await;
        drop(browser);
        done.await.expect("reader ends");
        let err = call.await.expect("join").expect_err("disconnected");
        assert!(matches!(err, BridgeError::Disconnected));
        assert!(!bridge.is_connected());
    }

    #[tokio::test]
    async fn bad_frames_do_not_stop_the_bridge() {
        let (host_side, mut browser) = tokio::io::duplex(1 << 20);
        let (r, w) = tokio::io::split(host_side);
        let (_bridge, _done) = Bridge::start(r, w);
        codec::write_frame(&mut browser, "not json", usize::MAX).await.expect("w");
        browser.write_all(&2u32.to_ne_bytes()).await.expect("w");
        browser.write_all(&[0xff, 0xff]).await.expect("w");
        write_env(&mut browser, &Envelope::request(5, "ping", json!({"n": 1}))).await;
        let reply = read_env(&mut browser).await;
        assert_eq!((reply.id, reply.result), (5, Some(json!({"n": 1}))));
        let mut rest = [0u8; 1];
        let pending = tokio::time::timeout(Duration::from_millis(50), browser.read(&mut rest));
        assert!(pending.await.is_err(), "no further output expected");
    }
}
