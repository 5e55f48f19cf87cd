//! The MCP server in-process over `tokio::io::duplex`, with a bridge whose browser is gone, and
//! a client that has loaded `bundle` (as agents do before work).

use std::sync::Arc;

use nova_host::bridge::Bridge;
use nova_host::hub::Hub;
use nova_host::mcp::server::NovaServer;
use nova_host::paths::DataDir;
use rmcp::ServiceExt as _;
use rmcp::model::CallToolRequestParams;
use serde_json::json;

/// An MCP client of an in-process hub.
pub type Client = rmcp::service::RunningService<rmcp::RoleClient, ()>;

/// Starts the hub and a client; `bundle` is loaded unless `None`.
pub async fn client(bundle: Option<&str>) -> (Client, tempfile::TempDir) {
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
    let client: Client = ().serve(client_io).await.expect("client");
    if let Some(b) = bundle {
        let Some(args) = json!({"bundle": b}).as_object().cloned() else { unreachable!() };
        let loaded = client
            .peer()
            .call_tool(CallToolRequestParams::new("nova.tools_bundle").with_arguments(args))
            .await
            .expect("bundle");
        assert_eq!(loaded.is_error, Some(false), "bundle {b} loads");
    }
    (client, tmp)
}
