//! The streamable HTTP endpoint: loopback only, bearer token, Origin and Host checks.

mod common;

use common::Hub;

const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;

fn endpoint(hub: &Hub) -> (String, u16, String) {
    let record = hub.record();
    let url = record["httpUrl"].as_str().expect("url").to_owned();
    let port =
        url.split(':').nth(2).and_then(|p| p.split('/').next()).and_then(|p| p.parse().ok()).expect("port");
    let token = std::fs::read_to_string(hub.data_path().join("mcp-token")).expect("token");
    (url, port, token.trim().to_owned())
}

async fn post(url: &str, headers: &[(&str, String)]) -> reqwest::Response {
    let mut req = reqwest::Client::new()
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(INIT);
    for (k, v) in headers {
        req = req.header(*k, v);
    }
    req.send().await.expect("request")
}

#[tokio::test]
async fn endpoint_is_loopback_with_owner_only_token() {
    let hub = Hub::start();
    let (url, _, token) = endpoint(&hub);
    assert!(url.starts_with("http://127.0.0.1:"), "{url}");
    assert_eq!(token.len(), 64);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(hub.data_path().join("mcp-token")).expect("meta").permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }
}

#[tokio::test]
async fn missing_or_wrong_token_is_401() {
    let hub = Hub::start();
    let (url, _, _) = endpoint(&hub);
    let none = post(&url, &[]).await;
    assert_eq!(none.status(), 401);
    assert_eq!(none.headers().get("www-authenticate").and_then(|v| v.to_str().ok()), Some("Bearer"));
    let wrong = post(&url, &[("authorization", "Bearer nope".into())]).await;
    assert_eq!(wrong.status(), 401);
}

#[tokio::test]
async fn foreign_origin_or_host_is_403_even_with_the_token() {
    let hub = Hub::start();
    let (url, port, token) = endpoint(&hub);
    let auth = ("authorization", format!("Bearer {token}"));
    let origin = post(&url, &[auth.clone(), ("origin", "https://evil.example".into())]).await;
    assert_eq!(origin.status(), 403);
    let host = post(&url, &[auth.clone(), ("host", format!("evil.example:{port}"))]).await;
    assert_eq!(host.status(), 403);
    let ok = post(&url, &[auth, ("origin", format!("http://127.0.0.1:{port}"))]).await;
    assert_eq!(ok.status(), 200);
    let body = ok.text().await.expect("body");
    assert!(body.contains("\"serverInfo\"") && body.contains("nova"), "{body}");
}

#[tokio::test]
async fn a_refusal_says_it_ends_its_connection_and_an_answer_keeps_it() {
    let hub = Hub::start();
    let (url, port, token) = endpoint(&hub);
    let close = |r: &reqwest::Response| {
        r.headers().get("connection").and_then(|v| v.to_str().ok()).map(str::to_owned)
    };
    let unauthorized = post(&url, &[]).await;
    assert_eq!((unauthorized.status().as_u16(), close(&unauthorized)), (401, Some("close".into())));
    let auth = ("authorization", format!("Bearer {token}"));
    let foreign = post(&url, &[auth.clone(), ("host", format!("evil.example:{port}"))]).await;
    assert_eq!((foreign.status().as_u16(), close(&foreign)), (403, Some("close".into())));
    let ok = post(&url, &[auth]).await;
    assert_eq!((ok.status().as_u16(), close(&ok)), (200, None));
}
