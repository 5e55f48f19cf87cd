//! The MCP server in-process over `tokio::io::duplex`, with a bridge whose browser is gone:
//! tool listing, argument validation and the not-connected answer.

use std::sync::Arc;

use nova_host::bridge::Bridge;
use nova_host::dispatch::Hub;
use nova_host::mcp::server::NovaServer;
use nova_host::paths::DataDir;
use rmcp::ServiceExt as _;
use rmcp::model::CallToolRequestParams;
use serde_json::{Value, json};

async fn setup() -> (rmcp::service::RunningService<rmcp::RoleClient, ()>, tempfile::TempDir) {
    let tmp = tempfile::tempdir().expect("tmp");
    let data = DataDir::at(tmp.path());
    data.ensure().expect("dirs");
    let (host_side, browser_side) = tokio::io::duplex(1024);
    drop(browser_side);
    let (r, w) = tokio::io::split(host_side);
    let (bridge, done) = Bridge::start(r, w);
    done.await.expect("bridge sees the closed browser");
    let hub = Arc::new(Hub::open(data, bridge).expect("hub"));
    let (server_io, client_io) = tokio::io::duplex(1 << 20);
    tokio::spawn(async move {
        let running = NovaServer::new(hub).serve(server_io).await.expect("serve");
        let _ = running.waiting().await;
    });
    let client = ().serve(client_io).await.expect("client");
    // An agent loads its bundle first (setup.bootstrap_required).
    let loaded = client
        .peer()
        .call_tool(
            CallToolRequestParams::new("nova.tools_bundle")
                .with_arguments(args(json!({"bundle": "browser_automation"}))),
        )
        .await
        .expect("bundle");
    assert_eq!(loaded.is_error, Some(false));
    (client, tmp)
}

fn args(v: Value) -> serde_json::Map<String, Value> {
    v.as_object().cloned().unwrap_or_default()
}

#[tokio::test]
async fn tools_are_listed_with_strict_schemas() {
    let (client, _tmp) = setup().await;
    let tools = client.peer().list_all_tools().await.expect("list");
    let names: Vec<_> = tools.iter().map(|t| t.name.to_string()).collect();
    for expected in [
        "nova.perceive",
        "nova.read_text",
        "nova.navigate",
        "nova.click_selector",
        "nova.type_selector",
        "nova.capture_screenshot",
        "nova.tab_claim",
        "nova.tab_release",
    ] {
        assert!(names.iter().any(|n| n == expected), "{expected} missing from {names:?}");
    }
    assert!(tools.iter().all(|t| t.input_schema.get("additionalProperties") == Some(&json!(false))));
}

#[tokio::test]
async fn invalid_arguments_are_json_rpc_errors_naming_the_field() {
    let (client, _tmp) = setup().await;
    let call = |name: &'static str, a: Value| {
        client.peer().call_tool(CallToolRequestParams::new(name).with_arguments(args(a)))
    };
    let err = call("nova.type_selector", json!({"selector": "#a"})).await.expect_err("missing text");
    assert!(err.to_string().contains("text"), "{err}");
    let err = call("nova.capture_screenshot", json!({"quality": 101})).await.expect_err("range");
    assert!(err.to_string().contains("quality") && err.to_string().contains("100"), "{err}");
    let err = call("nova.capture_screenshot", json!({"format": "gif"})).await.expect_err("enum");
    assert!(err.to_string().contains("gif"), "{err}");
    let err = call("nova.no_such_tool", json!({})).await.expect_err("unknown tool");
    assert!(err.to_string().contains("nova.no_such_tool"), "{err}");
}

#[tokio::test]
async fn a_gone_browser_gives_a_structured_retryable_failure() {
    let (client, _tmp) = setup().await;
    let result = client
        .peer()
        .call_tool(CallToolRequestParams::new("nova.perceive").with_arguments(args(json!({}))))
        .await
        .expect("a tool result, not a protocol error");
    assert_eq!(result.is_error, Some(true));
    let s = result.structured_content.expect("structured");
    assert_eq!((s["ok"].clone(), s["status"].clone()), (json!(false), json!("failed")));
    assert_eq!(s["reasonCode"], "browser_not_connected");
    assert_eq!(s["retryable"], true);
}
