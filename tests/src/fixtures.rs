//! The fixture web server: serves `tests/fixtures/` on 127.0.0.1:0.
//!
//! `/submit?key=K` counts submissions per key (the counting fixture for crash tests).
//! `/postback` is a form that posts back to its own address, as server-rendered forms do.
//! Files ending in `.csp.html` are sent with `Content-Security-Policy: script-src 'self'`
//! (the header form of a strict CSP; the meta-tag form lives in the page itself).
//! `/site/` is the generated multi-page site of [`crate::site`].
//! `/private` asks for an HTTP sign-in (Basic, realm "Nova fixture"): 401 until the request
//! carries [`PRIVATE_USER`] and [`PRIVATE_PASSWORD`], and then takes 1.5 s to answer.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use axum::extract::{Path as UrlPath, Query, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

/// Server-side submission counters of the counting fixture, by key.
type Counters = Arc<Mutex<HashMap<String, u32>>>;

/// A running fixture server.
pub struct FixtureServer {
    addr: SocketAddr,
    task: tokio::task::JoinHandle<()>,
    counters: Counters,
}

#[derive(Clone)]
struct AppState {
    root: PathBuf,
    counters: Counters,
}

impl FixtureServer {
    /// Serves `root` on a free loopback port.
    pub async fn start(root: &Path) -> anyhow::Result<Self> {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0)).await?;
        let addr = listener.local_addr()?;
        let counters = Counters::default();
        let state = AppState { root: root.to_path_buf(), counters: counters.clone() };
        let origin = format!("http://{addr}");
        let (o1, o2, o3) = (origin.clone(), origin.clone(), origin);
        let app = axum::Router::new()
            .route(
                "/sitemap.xml",
                axum::routing::get(move || async move { crate::site::serve("sitemap.xml", &o3) }),
            )
            .route("/site/", axum::routing::get(move || async move { crate::site::serve("", &o1) }))
            .route(
                "/site/{*path}",
                axum::routing::get(
                    move |UrlPath(p): UrlPath<String>| async move { crate::site::serve(&p, &o2) },
                ),
            )
            .route("/", axum::routing::get(|| async { axum::response::Redirect::to("/index.html") }))
            .route("/submit", axum::routing::get(submit).post(submit))
            .route("/go", axum::routing::get(go))
            .route("/postback", axum::routing::get(|| async { post_back(None) }).post(posted_back))
            .route("/private", axum::routing::get(private))
            .route("/slow", axum::routing::get(slow))
            .route("/{*path}", axum::routing::get(serve))
            .with_state(state);
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Ok(Self { addr, task, counters })
    }

    /// How many times `/submit?key=KEY` was reached.
    pub fn count(&self, key: &str) -> u32 {
        self.counters.lock().map(|c| c.get(key).copied().unwrap_or(0)).unwrap_or(0)
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

/// The counting endpoint: every request counts one submission for its `key`.
async fn submit(State(app): State<AppState>, Query(q): Query<HashMap<String, String>>) -> Response {
    let key = q.get("key").cloned().unwrap_or_default();
    let n = {
        let mut c = app.counters.lock().unwrap_or_else(|p| p.into_inner());
        let n = c.entry(key.clone()).or_insert(0);
        *n += 1;
        *n
    };
    let body = format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>Submitted</title></head>\
         <body><h1 id=\"submitted\">Submission {n} for {key}</h1></body></html>"
    );
    axum::response::Html(body).into_response()
}

/// `/postback`: a form that posts back to its own address. Sent the name `taken`, the page
/// comes back holding it under an error in no framework's markup; any other name comes back
/// saved, under a Bootstrap success alert, with the form emptied.
fn post_back(name: Option<&str>) -> Response {
    let (note, value) = match name {
        None => (String::new(), String::new()),
        Some("taken") => ("<p class=\"oops\">That name is taken.</p>".to_owned(), "taken".to_owned()),
        Some(n) => (format!("<div class=\"alert-success\">Saved {n}.</div>"), String::new()),
    };
    let body = format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>Rename</title></head>\
         <body><h1>Rename</h1>{note}<form method=\"post\"><label>Name <input id=\"name\" name=\"name\" \
         value=\"{value}\"></label> <button>Save</button></form></body></html>"
    );
    axum::response::Html(body).into_response()
}

async fn posted_back(axum::Form(form): axum::Form<HashMap<String, String>>) -> Response {
    post_back(Some(form.get("name").map_or("", String::as_str)))
}

/// The user name `/private` lets in.
pub const PRIVATE_USER: &str = "ada";
/// Its password (a throwaway, known only to the fixture server).
pub const PRIVATE_PASSWORD: &str = "fixture-key-77";

/// How long `/private` takes to answer a request that is signed in.
const SIGNED_IN_PAGE_DELAY: std::time::Duration = std::time::Duration::from_millis(1500);

/// `/private`: a page behind an HTTP sign-in, as an intranet page or a router's is.
async fn private(headers: axum::http::HeaderMap) -> Response {
    use base64::Engine;
    let expected =
        base64::engine::general_purpose::STANDARD.encode(format!("{PRIVATE_USER}:{PRIVATE_PASSWORD}"));
    let signed_in = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.strip_prefix("Basic ") == Some(expected.as_str()));
    let page = |title: &str| {
        format!(
            "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>{title}</title></head>\
             <body><h1>{title}</h1></body></html>"
        )
    };
    if signed_in {
        // It takes its time once signed in, as a slow intranet page does: a navigation must
        // wait for it, not take the site's first ask for a dialog that waits.
        tokio::time::sleep(SIGNED_IN_PAGE_DELAY).await;
        return axum::response::Html(page("Private")).into_response();
    }
    let mut r = (StatusCode::UNAUTHORIZED, axum::response::Html(page("Sign-in needed"))).into_response();
    r.headers_mut()
        .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Basic realm=\"Nova fixture\""));
    r
}

/// The longest `/slow` answers after.
const SLOW_MAX_MS: u64 = 10_000;

/// `/slow?ms=N`: a page that answers after `N` ms (at most [`SLOW_MAX_MS`]), as a busy server
/// does: a load that is still under way when something else happens in the tab.
async fn slow(Query(q): Query<HashMap<String, String>>) -> Response {
    match q.get("ms").and_then(|ms| ms.parse::<u64>().ok()).filter(|ms| *ms <= SLOW_MAX_MS) {
        Some(ms) => {
            tokio::time::sleep(std::time::Duration::from_millis(ms)).await;
            axum::response::Html(
                "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>Slow</title></head>\
                 <body><h1>Slow at last</h1></body></html>",
            )
            .into_response()
        }
        None => (StatusCode::BAD_REQUEST, format!("`ms` must be a number of milliseconds ≤ {SLOW_MAX_MS}"))
            .into_response(),
    }
}

/// `/go?to=/PATH`: a 303 redirect to a path of this server (where an action lands after a
/// redirect).
async fn go(Query(q): Query<HashMap<String, String>>) -> Response {
    match q.get("to").filter(|to| to.starts_with('/') && !to.starts_with("//")) {
        Some(to) => axum::response::Redirect::to(to).into_response(),
        None => (StatusCode::BAD_REQUEST, "`to` must be a path of this server").into_response(),
    }
}

async fn serve(State(app): State<AppState>, UrlPath(path): UrlPath<String>) -> Response {
    let root = app.root;
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
    response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static(mime));
    if path.ends_with(".csp.html") {
        response
            .headers_mut()
            .insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static(crate::site::STRICT_CSP));
    }
    response
}

/// The contract of a send on `chat.html`: success when the assistant answers, forbidden when the
/// error banner shows.
pub fn send_contract(window_ms: u32, hold_ms: u32) -> serde_json::Value {
    serde_json::json!({
        "actionKind": "send_message",
        "postconditions": {
            "success": {"all": [{"factKey": "dom.exists(.msg.assistant)", "operator": "eq", "expected": true}]},
            "forbidden": {"any": [{"factKey": "dom.visible(.error-banner)", "operator": "eq", "expected": true}]}
        },
        "stabilityWindowMs": window_ms,
        "stabilityMs": hold_ms
    })
}
