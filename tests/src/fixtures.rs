//! The fixture web server: serves `tests/fixtures/` on 127.0.0.1:0.
//!
//! Files ending in `.csp.html` are sent with `Content-Security-Policy: script-src 'self'`
//! (the header form of a strict CSP; the meta-tag form lives in the page itself).

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use axum::extract::{Path as UrlPath, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

/// The CSP header sent with `*.csp.html` fixtures.
pub const STRICT_CSP: &str = "script-src 'self'";

/// A running fixture server.
pub struct FixtureServer {
    addr: SocketAddr,
    task: tokio::task::JoinHandle<()>,
}

impl FixtureServer {
    /// Serves `root` on a free loopback port.
    pub async fn start(root: &Path) -> anyhow::Result<Self> {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0)).await?;
        let addr = listener.local_addr()?;
        let app = axum::Router::new()
            .route(
                "/",
                axum::routing::get(|| async { axum::response::Redirect::to("/index.html") }),
            )
            .route("/{*path}", axum::routing::get(serve))
            .with_state(root.to_path_buf());
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Ok(Self { addr, task })
    }

    /// The URL of `path` (with or without a leading slash).
    pub fn url(&self, path: &str) -> String {
        format!("http://{}/{}", self.addr, path.trim_start_matches('/'))
    }
}

impl Drop for FixtureServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn serve(State(root): State<PathBuf>, UrlPath(path): UrlPath<String>) -> Response {
    if path.split('/').any(|seg| seg == "..") {
        return StatusCode::BAD_REQUEST.into_response();
    }
    let file = root.join(&path);
    let Ok(body) = tokio::fs::read(&file).await else {
        return (StatusCode::NOT_FOUND, format!("no fixture {path}")).into_response();
    };
    let mime = match file.extension().and_then(|e| e.to_str()) {
        Some("html") => "text/html; charset=utf-8",
        Some("js") => "text/javascript",
        Some("css") => "text/css",
        Some("json") => "application/json",
        Some("png") => "image/png",
        _ => "application/octet-stream",
    };
    let mut response = (StatusCode::OK, body).into_response();
    response
        .headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(mime));
    if path.ends_with(".csp.html") {
        response.headers_mut().insert(
            header::CONTENT_SECURITY_POLICY,
            HeaderValue::from_static(STRICT_CSP),
        );
    }
    response
}
