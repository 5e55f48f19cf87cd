//! `nova native`: the hub the browser spawns. It owns the browser connection (stdin/stdout),
//! opens the store, serves MCP on a unix socket (for `nova mcp` relays) and on 127.0.0.1 HTTP,
//! and registers itself in `hubs/<browser>.json` so relays and `nova doctor` can find it.
//!
//! The browser may start a hub at any time (a restarted service worker reconnects and spawns a
//! new process): the newest hub takes the socket and the registration over, and an older hub
//! exits as soon as its browser stream closes.

use std::sync::Arc;

use crate::bridge::Bridge;
use crate::hub::Hub;
use crate::ipc::HubRecord;
use crate::mcp;
use crate::paths::DataDir;
use crate::time::now_ms;

/// Environment variable with the preferred HTTP port; `0` picks a free one.
pub const HTTP_PORT_ENV: &str = "NOVA_HTTP_PORT";
/// Port tried first when `NOVA_HTTP_PORT` is unset; a free port is used when it is taken.
pub const DEFAULT_HTTP_PORT: u16 = 47_821;

/// Browser family from the argument the browser passes to its native host: Chromium passes
/// the extension origin `chrome-extension://<id>/`, Firefox the manifest path and the add-on id.
pub fn browser_from_caller(caller: &str) -> &'static str {
    if caller.starts_with("chrome-extension://") { "chromium" } else { "firefox" }
}

/// Runs the hub until the browser disconnects or a termination signal arrives.
pub async fn run(data: DataDir, caller: String) -> anyhow::Result<()> {
    // A data dir that cannot be written or a damaged store: refuse with the fix, touch nothing.
    if let Err(refusal) = crate::preflight::check(&data) {
        tracing::error!(code = refusal.code, "{}", refusal.message);
        anyhow::bail!("{refusal}");
    }
    data.ensure()?;
    let browser = browser_from_caller(&caller).to_owned();
    let (bridge, browser_done) = Bridge::start(tokio::io::stdin(), tokio::io::stdout());
    let hub = Arc::new(Hub::open(data.clone(), bridge)?);
    crate::aag::ui::Service::attach(&hub);

    let socket = data.hub_socket(&browser);
    let listener = crate::ipc::Listener::bind(&socket)?;
    tokio::spawn(accept_relays(hub.clone(), listener));

    let token = mcp::http::ensure_token(&data)?;
    let tcp = bind_http().await?;
    let http_url = format!("http://{}{}", tcp.local_addr()?, mcp::http::MCP_PATH);
    tokio::spawn({
        let hub = hub.clone();
        async move {
            if let Err(e) = mcp::http::serve(hub, tcp, token).await {
                tracing::error!(error = %e, "HTTP endpoint stopped");
            }
        }
    });

    let record = HubRecord {
        browser: browser.clone(),
        pid: std::process::id(),
        socket: socket.clone(),
        http_url: http_url.clone(),
        started_at_ms: now_ms(),
        caller,
    };
    record.write(&data)?;
    tracing::info!(%http_url, socket = %socket.display(), "hub ready");

    tokio::select! {
        _ = browser_done => tracing::info!("browser closed the connection; hub stopping"),
        _ = terminated() => tracing::info!("termination signal; hub stopping"),
    }
    hub.recorder.flush().await;
    // Only remove what is still ours: a newer hub may have taken over.
    record.remove_if_ours(&data);
    Ok(())
}

async fn bind_http() -> std::io::Result<tokio::net::TcpListener> {
    let preferred =
        std::env::var(HTTP_PORT_ENV).ok().and_then(|v| v.parse::<u16>().ok()).unwrap_or(DEFAULT_HTTP_PORT);
    match tokio::net::TcpListener::bind(("127.0.0.1", preferred)).await {
        Ok(l) => Ok(l),
        Err(e) if preferred != 0 => {
            tracing::warn!(port = preferred, error = %e, "preferred HTTP port busy; using a free one");
            tokio::net::TcpListener::bind(("127.0.0.1", 0)).await
        }
        Err(e) => Err(e),
    }
}

async fn accept_relays(hub: Arc<Hub>, mut listener: crate::ipc::Listener) {
    use rmcp::ServiceExt as _;
    loop {
        let (r, w) = match listener.accept().await {
            Ok(halves) => halves,
            Err(e) => {
                tracing::warn!(error = %e, "relay accept failed");
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                continue;
            }
        };
        let server = mcp::server::NovaServer::new(hub.clone());
        tokio::spawn(async move {
            let transport = rmcp::transport::async_rw::AsyncRwTransport::new_server(r, w)
                .with_max_line_length(mcp::MAX_LINE_BYTES);
            match server.serve(transport).await {
                Ok(running) => {
                    let _ = running.waiting().await;
                }
                Err(e) => tracing::warn!(error = %e, "MCP session failed to start"),
            }
        });
    }
}

async fn terminated() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        if let Ok(mut term) = signal(SignalKind::terminate()) {
            tokio::select! {
                _ = term.recv() => {}
                _ = tokio::signal::ctrl_c() => {}
            }
            return;
        }
    }
    let _ = tokio::signal::ctrl_c().await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn caller_names_the_browser() {
        assert_eq!(browser_from_caller("chrome-extension://abc/"), "chromium");
        assert_eq!(
            browser_from_caller("/home/u/.mozilla/native-messaging-hosts/io.nova.host.json"),
            "firefox"
        );
    }
}
