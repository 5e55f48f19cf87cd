//! `nova mcp`: the stdio command agents configure. It relays JSON-RPC lines between the agent and
//! the hub (a Unix socket, a named pipe on Windows: [`crate::ipc`]), reading every line with a size
//! bound.
//!
//! Without a hub it stays up and answers by itself: `initialize`, `ping` and `tools/list` work
//! (the catalog is compiled in), and every tool call gets a structured, retryable
//! `browser_not_connected` result saying what to do. Each call also tries to reach a hub again;
//! once one is up, the relay replays the agent's `initialize` to it and from then on relays.
//! If the hub goes away mid-session, requests in flight are answered by the relay: reads with the
//! same retryable error, a call that may have acted with `hub_lost_in_flight` (in doubt, not
//! retryable: it must not be repeated blindly).

use std::collections::HashMap;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;

use super::MAX_LINE_BYTES;
use super::listing::Listing;
use crate::bridge::NOT_CONNECTED_HELP;
use crate::ipc::HubRecord;
use crate::observation::{ActionKind, Observation};
use crate::paths::DataDir;
use crate::tob::Recorder;

/// The reason code of a call the hub died running (docs: README, "Page refusals").
pub const HUB_LOST_IN_FLIGHT: &str = "hub_lost_in_flight";

/// What an agent is told about a call the hub died running.
const IN_FLIGHT_HELP: &str = "The Nova hub stopped while this call was running, so it may have acted. \
     Do not repeat it blindly: once Nova is back (the browser restarts it), perceive the page and check \
     whether it took effect (a guarded action is listed in `inDoubtTransitions`).";

/// Id of the `initialize` the relay replays to a hub found mid-session.
const REPLAY_ID: &str = "nova-relay-initialize";

/// One line read with a bound.
#[derive(Debug, PartialEq, Eq)]
pub enum Line {
    /// A complete line (without the newline).
    Text(Vec<u8>),
    /// A line longer than the bound; it was consumed and dropped.
    Oversized,
    /// End of input.
    Eof,
}

/// Reads one `\n`-terminated line without ever buffering more than `max` bytes of it.
pub async fn read_line_bounded<R: AsyncBufRead + Unpin>(r: &mut R, max: usize) -> std::io::Result<Line> {
    let mut buf = Vec::new();
    let mut oversized = false;
    loop {
        let chunk = r.fill_buf().await?;
        if chunk.is_empty() {
            return Ok(if oversized {
                Line::Oversized
            } else if buf.is_empty() {
                Line::Eof
            } else {
                Line::Text(buf)
            });
        }
        let (take, done) = match chunk.iter().position(|&b| b == b'\n') {
            Some(i) => (i, true),
            None => (chunk.len(), false),
        };
        if !oversized {
            if buf.len() + take > max {
                oversized = true;
                buf = Vec::new();
            } else {
                buf.extend_from_slice(&chunk[..take]);
            }
        }
        r.consume(if done { take + 1 } else { take });
        if done {
            return Ok(if oversized { Line::Oversized } else { Line::Text(buf) });
        }
    }
}

/// Bytes read from the hub at a time.
const HUB_READ_BUFFER: usize = 256 * 1024;

struct HubLink {
    writer: crate::ipc::Writer,
    lines: mpsc::Receiver<Option<Vec<u8>>>,
}

/// The relay state.
struct Relay {
    data: DataDir,
    browser: Option<String>,
    init: Option<Value>,
    hub: Option<HubLink>,
    inflight: HashMap<String, Value>,
    recorder: Option<Recorder>,
    session: String,
    /// `nova.tools_bundle` calls of this session, replayed to a new hub with `initialize` so
    /// that a hub restart does not send the agent back through the bootstrap gate.
    bundles: Vec<Value>,
    /// `--tools`: what `tools/list` shows, passed to every hub at `initialize`.
    tools: Option<Listing>,
    /// The listing in force (`--tools`, else what the agent asked at `initialize`).
    listing: Listing,
}

/// Runs the relay on stdin/stdout until stdin closes.
pub async fn run(
    data: DataDir,
    browser: Option<String>,
    wait: Duration,
    tools: Option<Listing>,
) -> anyhow::Result<()> {
    let mut relay = Relay {
        data,
        browser,
        init: None,
        bundles: Vec::new(),
        listing: tools.clone().unwrap_or_default(),
        tools,
        hub: None,
        inflight: HashMap::new(),
        recorder: None,
        session: uuid::Uuid::new_v4().simple().to_string(),
    };
    let deadline = tokio::time::Instant::now() + wait;
    while relay.hub.is_none() {
        relay.hub = connect(&relay.data, relay.browser.as_deref()).await;
        if relay.hub.is_some() || tokio::time::Instant::now() >= deadline {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    if relay.hub.is_none() {
        tracing::info!("no hub running; answering locally until a browser connects");
    }
    let mut stdin = BufReader::new(tokio::io::stdin());
    let mut stdout = tokio::io::stdout();
    loop {
        let hub_line = async {
            match relay.hub.as_mut() {
                Some(link) => link.lines.recv().await.flatten(),
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            line = read_line_bounded(&mut stdin, MAX_LINE_BYTES) => {
                let out = match line? {
                    Line::Eof => break,
                    Line::Oversized => vec![error_response(
                        Value::Null,
                        -32600,
                        &format!("request line exceeds {MAX_LINE_BYTES} bytes"),
                    )],
                    Line::Text(bytes) if bytes.iter().all(u8::is_ascii_whitespace) => vec![],
                    Line::Text(bytes) => match serde_json::from_slice::<Value>(&bytes) {
                        Ok(msg) => relay.on_agent_message(msg).await,
                        Err(e) => vec![error_response(Value::Null, -32700, &format!("parse error: {e}"))],
                    },
                };
                write_lines(&mut stdout, &out).await?;
            }
            line = hub_line => match line {
                // The hub's line goes out as it came: an answer of a few hundred KB is not
                // parsed into a tree and written again.
                Some(bytes) => {
                    if let Some(raw) = relay.on_hub_line(bytes) {
                        stdout.write_all(&raw).await?;
                        stdout.write_all(b"\n").await?;
                        stdout.flush().await?;
                    }
                }
                None => {
                    let out = relay.hub_lost();
                    write_lines(&mut stdout, &out).await?;
                }
            }
        }
    }
    if let Some(r) = &relay.recorder {
        r.flush().await;
    }
    Ok(())
}

/// What the relay reads of a line from the hub (the rest is checked to be JSON and skipped).
#[derive(serde::Deserialize)]
struct Head {
    #[serde(default)]
    id: Option<Value>,
    #[serde(default)]
    method: Option<serde::de::IgnoredAny>,
}

async fn write_lines(out: &mut tokio::io::Stdout, lines: &[Value]) -> std::io::Result<()> {
    for line in lines {
        let mut text = line.to_string();
        text.push('\n');
        out.write_all(text.as_bytes()).await?;
    }
    out.flush().await
}

async fn connect(data: &DataDir, browser: Option<&str>) -> Option<HubLink> {
    for record in HubRecord::all(data) {
        if browser.is_some_and(|b| b != record.browser) {
            continue;
        }
        let Ok((r, writer)) = crate::ipc::connect(&record.socket).await else {
            continue;
        };
        tracing::info!(browser = %record.browser, pid = record.pid, "connected to hub");
        let (tx, lines) = mpsc::channel(64);
        tokio::spawn(async move {
            // A read of a large page is a line of a few hundred KB: read it in few system calls.
            let mut r = BufReader::with_capacity(HUB_READ_BUFFER, r);
            loop {
                match read_line_bounded(&mut r, usize::MAX).await {
                    Ok(Line::Text(b)) => {
                        if tx.send(Some(b)).await.is_err() {
                            return;
                        }
                    }
                    Ok(Line::Oversized) => {}
                    Ok(Line::Eof) | Err(_) => {
                        let _ = tx.send(None).await;
                        return;
                    }
                }
            }
        });
        return Some(HubLink { writer, lines });
    }
    None
}

fn id_key(id: &Value) -> String {
    id.to_string()
}

impl Relay {
    async fn on_agent_message(&mut self, msg: Value) -> Vec<Value> {
        let method = msg.get("method").and_then(Value::as_str).map(str::to_owned);
        let id = msg.get("id").cloned();
        let mut msg = msg;
        if method.as_deref() == Some("initialize") {
            // Names the session to every hub, so that one started after a restart gives the
            // agent back what the gates knew of it (crate::aag::resume).
            if let Some(params) = msg.get_mut("params").and_then(Value::as_object_mut) {
                let caps = params.entry("capabilities").or_insert_with(|| json!({}));
                if let Some(caps) = caps.as_object_mut() {
                    let experimental = caps.entry("experimental").or_insert_with(|| json!({}));
                    if let Some(e) = experimental.as_object_mut() {
                        e.insert(
                            crate::aag::resume::RELAY_CAPABILITY.into(),
                            json!({"session": self.session}),
                        );
                        if let Some(tools) = &self.tools {
                            e.insert(super::listing::CAPABILITY.into(), tools.capability());
                        }
                        if let Some(asked) = Listing::from_capability(
                            e.get(super::listing::CAPABILITY).and_then(Value::as_object),
                        ) {
                            self.listing = asked;
                        }
                    }
                }
            }
            self.init = Some(msg.clone());
        }
        if method.as_deref() == Some("tools/call")
            && msg.pointer("/params/name").and_then(Value::as_str) == Some("nova.tools_bundle")
            && !self
                .bundles
                .iter()
                .any(|b| b.pointer("/params/arguments") == msg.pointer("/params/arguments"))
        {
            self.bundles.push(msg.clone());
        }
        if self.hub.is_none() && method.as_deref() != Some("initialize") && id.is_some() {
            self.hub = connect(&self.data, self.browser.as_deref()).await;
            if self.hub.is_some() && !self.replay_initialize().await {
                self.hub = None;
            }
        }
        if self.hub.is_some() {
            if let (Some(id), Some(_)) = (&id, &method) {
                self.inflight.insert(id_key(id), msg.clone());
            }
            if self.send_to_hub(&msg).await {
                return vec![];
            }
            self.hub = None;
            if let Some(id) = &id {
                self.inflight.remove(&id_key(id));
            }
        }
        match (method, id) {
            (Some(m), Some(id)) => vec![self.answer_locally(&m, id, &msg)],
            _ => vec![],
        }
    }

    async fn send_to_hub(&mut self, msg: &Value) -> bool {
        let Some(link) = self.hub.as_mut() else {
            return false;
        };
        let mut text = msg.to_string();
        text.push('\n');
        link.writer.write_all(text.as_bytes()).await.is_ok()
    }

    /// Sends the agent's `initialize` (and `initialized`) to a hub found mid-session and waits
    /// for its answer, which the agent already got from the relay and must not see twice.
    async fn replay_initialize(&mut self) -> bool {
        let Some(mut init) = self.init.clone() else {
            return true;
        };
        init["id"] = json!(REPLAY_ID);
        if !self.send_to_hub(&init).await {
            return false;
        }
        let Some(link) = self.hub.as_mut() else {
            return false;
        };
        let answer = tokio::time::timeout(Duration::from_secs(5), link.lines.recv()).await;
        if !matches!(answer, Ok(Some(Some(_)))) {
            return false;
        }
        if !self.send_to_hub(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await {
            return false;
        }
        for (i, bundle) in self.bundles.clone().into_iter().enumerate() {
            let mut call = bundle;
            let id = format!("{REPLAY_ID}-bundle-{i}");
            call["id"] = json!(id);
            if !self.send_to_hub(&call).await {
                return false;
            }
            let Some(link) = self.hub.as_mut() else { return false };
            // Up to its answer. The new hub announces the bundle's tools on the way
            // (`tools/list_changed`); the agent already lists them, so that is dropped too.
            let _ = tokio::time::timeout(Duration::from_secs(5), async {
                while let Some(Some(line)) = link.lines.recv().await {
                    if serde_json::from_slice::<Value>(&line).is_ok_and(|m| m["id"] == json!(id)) {
                        break;
                    }
                }
            })
            .await;
        }
        true
    }

    /// A line from the hub: the line to pass on to the agent, if any (answers to the relay's
    /// own replayed requests are not).
    fn on_hub_line(&mut self, bytes: Vec<u8>) -> Option<Vec<u8>> {
        let Ok(head) = serde_json::from_slice::<Head>(&bytes) else {
            tracing::warn!("unparseable line from hub dropped");
            return None;
        };
        if let Some(id) = &head.id {
            if id.as_str().is_some_and(|i| i.starts_with(REPLAY_ID)) {
                return None;
            }
            if head.method.is_none() {
                self.inflight.remove(&id_key(id));
            }
        }
        Some(bytes)
    }

    fn hub_lost(&mut self) -> Vec<Value> {
        tracing::info!("hub went away; answering locally");
        self.hub = None;
        let pending: Vec<Value> = self.inflight.drain().map(|(_, m)| m).collect();
        pending
            .into_iter()
            .filter_map(|m| {
                let method = m.get("method")?.as_str()?.to_owned();
                let id = m.get("id")?.clone();
                if method == "tools/call" {
                    return Some(self.answer_lost_in_flight(id, &m));
                }
                Some(self.answer_locally(&method, id, &m))
            })
            .collect()
    }

    /// The answer to a tool call the hub was running when it went away. A read (or tool discovery,
    /// a lease) can simply be asked again; anything else may have acted before the hub died, so it
    /// is in doubt and must not be repeated blindly (a guarded one shows as `inDoubtTransitions` on
    /// the next perceive).
    fn answer_lost_in_flight(&mut self, id: Value, msg: &Value) -> Value {
        let tool = msg.pointer("/params/name").and_then(Value::as_str).unwrap_or("");
        if matches!(crate::registry::classify(tool).0, ActionKind::Read | ActionKind::Meta) {
            return self.answer_locally("tools/call", id, msg);
        }
        self.record_refused(tool, msg.pointer("/params/arguments"), HUB_LOST_IN_FLIGHT);
        let structured = json!({
            "ok": false, "status": "in_doubt", "reasonCode": HUB_LOST_IN_FLIGHT,
            "retryable": false, "retryAdvice": "check_postcondition_first",
            "message": IN_FLIGHT_HELP,
        });
        tool_error(id, structured)
    }

    fn answer_locally(&mut self, method: &str, id: Value, msg: &Value) -> Value {
        match method {
            "initialize" => {
                let mut info = serde_json::to_value(super::server::server_info()).unwrap_or_default();
                if let Some(v) = msg.pointer("/params/protocolVersion") {
                    info["protocolVersion"] = v.clone();
                }
                json!({"jsonrpc": "2.0", "id": id, "result": info})
            }
            "ping" => json!({"jsonrpc": "2.0", "id": id, "result": {}}),
            "tools/list" => {
                let loaded: Vec<&str> = self
                    .bundles
                    .iter()
                    .filter_map(|b| b.pointer("/params/arguments/bundle")?.as_str())
                    .collect();
                json!({"jsonrpc": "2.0", "id": id, "result": {"tools": self.listing.tools(loaded)}})
            }
            "tools/call" => {
                // A hub cannot start on an unwritable data dir or a damaged store: say so and
                // how to fix it, not "connect the browser".
                if let Err(r) = crate::preflight::check(&self.data) {
                    let structured = json!({
                        "ok": false, "status": "failed", "reasonCode": r.code, "retryable": false,
                        "message": r.message,
                    });
                    return tool_error(id, structured);
                }
                let tool = msg.pointer("/params/name").and_then(Value::as_str).unwrap_or("");
                self.record_refused(tool, msg.pointer("/params/arguments"), "browser_not_connected");
                let structured = json!({
                    "ok": false, "status": "failed", "reasonCode": "browser_not_connected",
                    "retryable": true, "retryAfterMs": 2000, "message": NOT_CONNECTED_HELP,
                });
                tool_error(id, structured)
            }
            other => {
                error_response(id, -32601, &format!("method `{other}` is not available without a browser"))
            }
        }
    }

    /// Records the call the relay answered itself (`reason`: no browser was connected, or the
    /// hub went away while running it), so that support staff see the agent tried.
    fn record_refused(&mut self, tool: &str, args: Option<&Value>, reason: &str) {
        if self.recorder.is_none() && self.data.ensure().is_ok() {
            self.recorder = Recorder::start(&self.data.db()).ok();
        }
        let Some(recorder) = &self.recorder else {
            return;
        };
        let agent_id = args
            .and_then(|a| a.get("agentId"))
            .and_then(Value::as_str)
            .unwrap_or(crate::lease::DEFAULT_AGENT);
        let class = crate::registry::classify(tool);
        recorder.record(Observation::refused_by_relay(
            recorder.next_seq(),
            tool,
            class,
            agent_id,
            &self.session,
            reason,
        ));
    }
}

/// A tool call's failed result, answered by the relay itself.
fn tool_error(id: Value, structured: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": {
        "content": [{"type": "text", "text": structured.to_string()}],
        "structuredContent": structured, "isError": true,
    }})
}

fn error_response(id: Value, code: i32, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn bounded_reader_drops_long_lines_and_keeps_going() {
        let input = b"short\nthis line is far too long\nok\nlast".to_vec();
        let mut r = BufReader::with_capacity(4, input.as_slice());
        assert_eq!(read_line_bounded(&mut r, 10).await.expect("1"), Line::Text(b"short".to_vec()));
        assert_eq!(read_line_bounded(&mut r, 10).await.expect("2"), Line::Oversized);
        assert_eq!(read_line_bounded(&mut r, 10).await.expect("3"), Line::Text(b"ok".to_vec()));
        assert_eq!(read_line_bounded(&mut r, 10).await.expect("4"), Line::Text(b"last".to_vec()));
        assert_eq!(read_line_bounded(&mut r, 10).await.expect("5"), Line::Eof);
    }

    fn relay_without_hub(dir: &std::path::Path) -> Relay {
        Relay {
            data: DataDir::at(dir),
            browser: None,
            init: None,
            hub: None,
            inflight: HashMap::new(),
            recorder: None,
            session: "s".into(),
            bundles: Vec::new(),
            tools: None,
            listing: Listing::Core,
        }
    }

    #[tokio::test]
    async fn without_hub_tool_calls_get_a_structured_retryable_error() {
        let tmp = tempfile::tempdir().expect("tmp");
        let mut relay = relay_without_hub(tmp.path());
        let out = relay
            .on_agent_message(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                               "params": {"name": "nova.perceive", "arguments": {}}}))
            .await;
        let result = &out[0]["result"];
        assert_eq!(result["isError"], true);
        assert_eq!(result["structuredContent"]["reasonCode"], "browser_not_connected");
        assert_eq!(result["structuredContent"]["retryable"], true);
        let listed = relay.on_agent_message(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})).await;
        assert!(listed[0]["result"]["tools"].as_array().is_some_and(|t| !t.is_empty()));
        relay.recorder.as_ref().expect("recorder").flush().await;
        let conn = crate::store::open(&DataDir::at(tmp.path()).db()).expect("db");
        let reason: String =
            conn.query_row("SELECT reason_code FROM observations", [], |r| r.get(0)).expect("row recorded");
        assert_eq!(reason, "browser_not_connected");
    }

    #[tokio::test]
    async fn without_hub_a_damaged_store_is_named_with_its_fix_and_left_alone() {
        let tmp = tempfile::tempdir().expect("tmp");
        let db = DataDir::at(tmp.path()).db();
        let mut bytes = b"SQLite format 3\0".to_vec();
        bytes.extend(std::iter::repeat_n(7u8, 4096));
        std::fs::write(&db, &bytes).expect("write");
        let mut relay = relay_without_hub(tmp.path());
        let out = relay
            .on_agent_message(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                               "params": {"name": "nova.click", "arguments": {"ref": "e1"}}}))
            .await;
        let s = &out[0]["result"]["structuredContent"];
        assert_eq!(
            (s["reasonCode"].clone(), s["retryable"].clone()),
            (json!("store_damaged"), json!(false)),
            "{s}"
        );
        assert!(s["message"].as_str().is_some_and(|m| m.contains("move it aside")), "{s}");
        assert_eq!(std::fs::read(&db).expect("read"), bytes, "the store file is left as it was");
    }

    #[tokio::test]
    async fn a_call_that_may_have_acted_when_the_hub_died_is_in_doubt_and_not_retryable() {
        let tmp = tempfile::tempdir().expect("tmp");
        let mut relay = relay_without_hub(tmp.path());
        let call = |id: i64, tool: &str| json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": tool, "arguments": {}}});
        relay.inflight.insert(id_key(&json!(1)), call(1, "nova.click_selector"));
        relay.inflight.insert(id_key(&json!(2)), call(2, "nova.read_text"));
        let mut out = relay.hub_lost();
        out.sort_by_key(|m| m["id"].as_i64());
        let click = &out[0]["result"]["structuredContent"];
        assert_eq!(
            (click["reasonCode"].clone(), click["retryable"].clone()),
            (json!(HUB_LOST_IN_FLIGHT), json!(false))
        );
        assert_eq!(click["retryAdvice"], "check_postcondition_first");
        let read = &out[1]["result"]["structuredContent"];
        assert_eq!(
            (read["reasonCode"].clone(), read["retryable"].clone()),
            (json!("browser_not_connected"), json!(true))
        );
        assert!(relay.inflight.is_empty());
    }
}
