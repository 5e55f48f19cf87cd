//! Oversized input from agents: an HTTP body over the limit gets 413 (counted while it streams,
//! whatever Content-Length says) and a stdio line over the limit gets a JSON-RPC error; the hub
//! and the relay stay up and answer the next request.

use std::time::Duration;

use nova_e2e::Nova;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _};

#[tokio::test(flavor = "multi_thread")]
async fn an_oversized_http_body_gets_413_and_the_hub_answers_the_next_request() -> anyhow::Result<()> {
    let nova = Nova::start().await?;
    let hub = nova_e2e::hub_records(&nova.data).remove(0);
    let token = std::fs::read_to_string(nova.data.join("mcp-token"))?;
    // A pooled client, as agents' HTTP clients are: the hub answers an oversized body before
    // reading it all and drops that connection, so its 413 must say `Connection: close` or the
    // pool hands the dead connection to the next request (`Broken pipe` on the 6 MiB body below).
    let http = reqwest::Client::new();
    let post = |body: reqwest::Body| {
        http.post(&hub.http_url)
            .bearer_auth(token.trim())
            .header("Accept", "application/json, text/event-stream")
            .header("Content-Type", "application/json")
            .body(body)
    };
    // 9 MiB of one JSON string: over the 8 MiB bound.
    let big = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"initialize","params":{{"pad":"{}"}}}}"#,
        "x".repeat(9 << 20)
    );
    let r = post(big.into()).send().await?;
    assert_eq!(r.status(), 413);
    assert_eq!(r.headers().get("connection").and_then(|v| v.to_str().ok()), Some("close"));
    // The same, streamed without a Content-Length.
    let chunks: Vec<Result<Vec<u8>, std::io::Error>> = (0..10).map(|_| Ok(vec![b' '; 1 << 20])).collect();
    let r = post(reqwest::Body::wrap_stream(futures::stream::iter(chunks))).send().await?;
    assert_eq!(r.status(), 413);
    assert_eq!(r.headers().get("connection").and_then(|v| v.to_str().ok()), Some("close"));
    // Under the bound (6 MiB, more than rmcp's own default of 4), the body is read and answered.
    let under = format!(
        r#"{{"jsonrpc":"2.0","id":3,"method":"initialize","params":{{"protocolVersion":"2025-06-18","capabilities":{{}},"clientInfo":{{"name":"limits","version":"1"}},"pad":"{}"}}}}"#,
        "x".repeat(6 << 20)
    );
    let r = post(under.into()).send().await?;
    assert_ne!(r.status(), 413, "a body under the documented 8 MiB bound was refused");
    // The hub is still there.
    let init = json!({"jsonrpc": "2.0", "id": 2, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "limits", "version": "1"}}});
    let r = post(init.to_string().into()).send().await?;
    assert_eq!(r.status(), 200, "{}", r.text().await?);
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn an_oversized_stdio_line_gets_a_json_rpc_error_and_the_relay_goes_on() -> anyhow::Result<()> {
    let nova = Nova::start().await?;
    let mut child = tokio::process::Command::new(&nova.dist.host)
        .arg("mcp")
        .arg("--data-dir")
        .arg(&nova.data)
        .env("NOVA_LOG", "error")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()?;
    let mut stdin = child.stdin.take().expect("stdin");
    let mut lines = tokio::io::BufReader::new(child.stdout.take().expect("stdout")).lines();
    // 9 MiB before the newline, written in pieces.
    let piece = vec![b'x'; 1 << 20];
    for _ in 0..9 {
        stdin.write_all(&piece).await?;
    }
    stdin.write_all(b"\n").await?;
    let answer = tokio::time::timeout(Duration::from_secs(20), lines.next_line()).await??.unwrap_or_default();
    let answer: Value = serde_json::from_str(&answer)?;
    assert_eq!(answer["error"]["code"], -32600, "{answer}");
    assert!(answer["error"]["message"].as_str().is_some_and(|m| m.contains("exceeds")), "{answer}");
    // The next request is answered.
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "limits", "version": "1"}}});
    stdin.write_all(format!("{init}\n").as_bytes()).await?;
    let answer = tokio::time::timeout(Duration::from_secs(20), lines.next_line()).await??.unwrap_or_default();
    let answer: Value = serde_json::from_str(&answer)?;
    assert_eq!(answer["id"], 1, "{answer}");
    assert!(answer["result"]["serverInfo"].is_object(), "{answer}");
    child.kill().await?;
    Ok(())
}
