//! Streamable HTTP on 127.0.0.1 only. Every request must carry `Authorization: Bearer <token>`
//! (the token lives in the data dir, mode 0600) and a `Host` naming this loopback endpoint;
//! a present `Origin` must be this endpoint too. Foreign Host or Origin: 403 (DNS rebinding,
//! drive-by pages). Missing or wrong token: 401. One exception: `/page/<ticket>`, a page the
//! person's browser opens once ([`crate::pages`]), where the ticket stands for the token.

use std::io::Write as _;
use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use rand::RngCore as _;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};

use super::server::NovaServer;
use crate::hub::Hub;
use crate::paths::DataDir;

/// Path of the MCP endpoint.
pub const MCP_PATH: &str = "/mcp";

/// Reads the bearer token, creating it (32 random bytes, hex, mode 0600) on first use.
pub fn ensure_token(data: &DataDir) -> std::io::Result<String> {
    let path = data.token_file();
    if let Ok(existing) = std::fs::read_to_string(&path) {
        let token = existing.trim().to_owned();
        if token.len() >= 32 {
            return Ok(token);
        }
    }
    let mut bytes = [0u8; 32];
    rand::rng().fill_bytes(&mut bytes);
    let token: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options.open(&path)?;
    file.write_all(token.as_bytes())?;
    crate::paths::set_mode(&path, 0o600)?;
    Ok(token)
}

struct Guard {
    token: String,
    hosts: Vec<String>,
    origins: Vec<String>,
}

/// Serves MCP over HTTP on `listener` (bound to 127.0.0.1 by the caller) until the task ends.
pub async fn serve(hub: Arc<Hub>, listener: tokio::net::TcpListener, token: String) -> std::io::Result<()> {
    let port = listener.local_addr()?.port();
    let hosts = vec![format!("127.0.0.1:{port}"), format!("localhost:{port}")];
    let origins = hosts.iter().map(|h| format!("http://{h}")).collect();
    let mut config = StreamableHttpServerConfig::default();
    config.allowed_hosts = hosts.clone();
    // Counted while the body streams in (a lying or missing Content-Length changes nothing): a
    // larger body gets 413 and is never held whole.
    config.max_request_body_bytes = super::MAX_BODY_BYTES;
    let for_sessions = hub.clone();
    let service = StreamableHttpService::new(
        move || Ok(NovaServer::new(for_sessions.clone())),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    hub.pages.set_base(format!("http://127.0.0.1:{port}"));
    let guard = Arc::new(Guard { token, hosts, origins });
    // One-time pages (the activity report) are opened by the person's browser, which cannot send
    // the token: their ticket stands for it; Host and Origin are checked all the same.
    let pages = axum::Router::new()
        .route(&format!("{}{{ticket}}", crate::pages::PATH), axum::routing::get(page))
        .with_state(hub.clone())
        .layer(axum::middleware::from_fn_with_state(guard.clone(), check_host));
    let app = axum::Router::new()
        .nest_service(MCP_PATH, service)
        .layer(axum::middleware::from_fn_with_state(guard, check))
        .merge(pages)
        .layer(axum::middleware::map_response(close_on_refusal));
    axum::serve(listener, app).await
}

/// A refusal ends its connection and says so. The hub refuses before reading the whole body (a
/// bad token, a foreign Host, 413 part-way through an oversized body), and the HTTP server then
/// drops the connection; without `Connection: close` a client that pools connections would send
/// its next request down that dead connection and break mid-write.
async fn close_on_refusal(mut response: Response) -> Response {
    if response.status().is_client_error() || response.status().is_server_error() {
        response.headers_mut().insert(header::CONNECTION, header::HeaderValue::from_static("close"));
    }
    response
}

async fn check_host(State(g): State<Arc<Guard>>, request: Request, next: Next) -> Response {
    match admit_host(&g, request.headers()) {
        Ok(()) => next.run(request).await,
        Err((status, code, message)) => refuse(status, code, message),
    }
}

/// A one-time page: served once, never cached, under the report's own policy (no requests).
async fn page(
    State(hub): State<Arc<Hub>>,
    axum::extract::Path(ticket): axum::extract::Path<String>,
) -> Response {
    match hub.pages.take(&ticket, crate::time::now_ms()) {
        Some(html) => (
            [
                (header::CONTENT_TYPE, "text/html; charset=utf-8"),
                (header::CACHE_CONTROL, "no-store"),
                (header::REFERRER_POLICY, "no-referrer"),
                (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
                (
                    header::CONTENT_SECURITY_POLICY,
                    "default-src 'none'; img-src data:; style-src 'unsafe-inline'; script-src 'unsafe-inline'",
                ),
            ],
            html,
        )
            .into_response(),
        None => refuse(
            StatusCode::NOT_FOUND,
            "page_gone",
            "this link was used or is over a minute old; open the activity report again from Nova's settings",
        ),
    }
}

async fn check(State(g): State<Arc<Guard>>, request: Request, next: Next) -> Response {
    if let Err((status, code, message)) = admit(&g, request.headers()) {
        let mut r = refuse(status, code, message);
        if status == StatusCode::UNAUTHORIZED {
            r.headers_mut().insert(header::WWW_AUTHENTICATE, header::HeaderValue::from_static("Bearer"));
        }
        return r;
    }
    next.run(request).await
}

/// Why a request is refused: status, error code, message.
type Refusal = (StatusCode, &'static str, &'static str);

fn admit_host(g: &Guard, headers: &HeaderMap) -> Result<(), Refusal> {
    let header_str = |name| headers.get(name).and_then(|v: &header::HeaderValue| v.to_str().ok());
    let host = header_str(header::HOST).unwrap_or("");
    if !g.hosts.iter().any(|h| h.eq_ignore_ascii_case(host)) {
        return Err((StatusCode::FORBIDDEN, "forbidden_host", "Host must name this loopback endpoint"));
    }
    if let Some(origin) = header_str(header::ORIGIN)
        && !g.origins.iter().any(|o| o.eq_ignore_ascii_case(origin))
    {
        return Err((StatusCode::FORBIDDEN, "forbidden_origin", "cross-origin requests are refused"));
    }
    Ok(())
}

fn admit(g: &Guard, headers: &HeaderMap) -> Result<(), Refusal> {
    admit_host(g, headers)?;
    let header_str = |name| headers.get(name).and_then(|v: &header::HeaderValue| v.to_str().ok());
    let presented = header_str(header::AUTHORIZATION).and_then(|v| v.strip_prefix("Bearer ")).unwrap_or("");
    if !constant_time_eq(presented.trim().as_bytes(), g.token.as_bytes()) {
        return Err((
            StatusCode::UNAUTHORIZED,
            "unauthorized",
            "send Authorization: Bearer <token>; the token is in the mcp-token file of the Nova data dir",
        ));
    }
    Ok(())
}

fn refuse(status: StatusCode, code: &str, message: &str) -> Response {
    (status, axum::Json(serde_json::json!({"error": code, "message": message}))).into_response()
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn guard() -> Guard {
        Guard {
            token: "t".repeat(64),
            hosts: vec!["127.0.0.1:9".into(), "localhost:9".into()],
            origins: vec!["http://127.0.0.1:9".into(), "http://localhost:9".into()],
        }
    }

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(*k, v.parse().expect("header"));
        }
        h
    }

    #[test]
    fn statuses_follow_the_security_rules() {
        let g = guard();
        let bearer = format!("Bearer {}", "t".repeat(64));
        let status = |h: HeaderMap| admit(&g, &h).err().map(|r| r.0.as_u16());
        assert_eq!(status(headers(&[("host", "127.0.0.1:9"), ("authorization", &bearer)])), None);
        assert_eq!(status(headers(&[("host", "evil.com"), ("authorization", &bearer)])), Some(403));
        assert_eq!(
            status(headers(&[
                ("host", "localhost:9"),
                ("origin", "https://evil.com"),
                ("authorization", &bearer)
            ])),
            Some(403)
        );
        assert_eq!(status(headers(&[("host", "localhost:9")])), Some(401));
        assert_eq!(status(headers(&[("host", "localhost:9"), ("authorization", "Bearer nope")])), Some(401));
    }

    #[test]
    fn token_is_created_once_with_owner_only_mode() {
        let tmp = tempfile::tempdir().expect("tmp");
        let data = DataDir::at(tmp.path());
        data.ensure().expect("ensure");
        let a = ensure_token(&data).expect("create");
        let b = ensure_token(&data).expect("read");
        assert_eq!(a, b);
        assert_eq!(a.len(), 64);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(data.token_file()).expect("meta").permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
    }
}
