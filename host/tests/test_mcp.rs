//! The MCP server in-process over `tokio::io::duplex`, with a bridge whose browser is gone:
//! tool listing, argument validation and the not-connected answer.

mod common;

use rmcp::model::CallToolRequestParams;
use serde_json::{Value, json};

async fn setup() -> (common::mcp::Client, tempfile::TempDir) {
    common::mcp::client(Some("browser_automation")).await
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

#[tokio::test]
async fn work_before_a_bundle_is_blocked_with_the_gate_in_meta() {
    let (client, tmp) = common::mcp::client(None).await;
    let r = client
        .peer()
        .call_tool(CallToolRequestParams::new("nova.perceive").with_arguments(args(json!({}))))
        .await
        .expect("a tool result");
    assert_eq!(r.is_error, Some(true));
    let meta = r.meta.expect("meta").0;
    assert_eq!(meta["io.nova/aag"]["gateId"], "setup.bootstrap_required");
    assert_eq!(meta["io.nova/aag"]["preferredBundle"], "browser_automation");
    assert!(meta.contains_key("io.nova/onboarding"));
    let _ = tmp;
}

#[tokio::test]
async fn the_version_tool_names_the_host_and_the_store_schema() {
    let (client, _tmp) = setup().await;
    let result = client
        .peer()
        .call_tool(CallToolRequestParams::new("nova.version").with_arguments(args(json!({}))))
        .await
        .expect("a tool result");
    let s = result.structured_content.expect("structured");
    assert_eq!(s["version"], env!("CARGO_PKG_VERSION"), "{s}");
    assert_eq!(s["storeSchemaVersion"], nova_host::store::SCHEMA_VERSION, "{s}");
    assert!(s["build"]["os"].is_string() && s["extension"].is_null(), "no browser here: {s}");
    let unknown = client
        .peer()
        .call_tool(CallToolRequestParams::new("nova.version").with_arguments(args(json!({"verbose": true}))))
        .await;
    assert!(unknown.is_err(), "unknown fields are refused");
}
