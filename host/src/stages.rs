//! Where the time of one call goes, when the caller asks (`_meta["io.nova/timing"]` on a
//! `tools/call`; docs/performance.md): the hub's stages (gates, the tool, evidence, the work
//! after the call) and, for each request to the browser, its round trip with the extension's
//! own stages (the background worker, the message to the tab, the page's work). `cargo xtask
//! bench` prints them. A call that did not ask pays nothing: outside [`collect`], [`note`] and
//! [`browser`] do nothing.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::future::Future;
use std::time::Instant;

use serde_json::{Value, json};

/// The `_meta` key a call asks with and its answer comes back under.
pub const META_KEY: &str = "io.nova/timing";

#[derive(Default)]
struct Stages {
    /// Hub stages in the order they ended: (name, ms).
    hub: Vec<(&'static str, f64)>,
    /// Requests to the browser, in order.
    browser: Vec<Value>,
    /// The hub stage running now ([`within`]), which each request to the browser is noted in.
    open: Option<&'static str>,
}

tokio::task_local! {
    static STAGES: RefCell<Stages>;
}

/// Runs `f` collecting the stages noted while it runs; returns its output and the stages as
/// `{hubMs, stages: {name: ms}, browser: [{method, during, roundTripMs, hubDecodeMs, ...}]}`
/// (`during`: the hub stage the request was made in).
pub async fn collect<F: Future>(f: F) -> (F::Output, Value) {
    let started = Instant::now();
    let (out, stages) = STAGES
        .scope(RefCell::new(Stages::default()), async {
            let out = f.await;
            (out, STAGES.with(|s| std::mem::take(&mut *s.borrow_mut())))
        })
        .await;
    let mut hub = serde_json::Map::new();
    for (name, ms) in stages.hub {
        let total = hub.get(name).and_then(Value::as_f64).unwrap_or(0.0) + ms;
        hub.insert(name.to_owned(), json!(total));
    }
    (out, json!({"hubMs": ms_since(started), "stages": hub, "browser": stages.browser}))
}

/// Milliseconds since `t`.
pub fn ms_since(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1000.0
}

/// Notes that the hub stage `name` took the time since `since` (added up when noted twice).
pub fn note(name: &'static str, since: Instant) {
    let _ = STAGES.try_with(|s| s.borrow_mut().hub.push((name, ms_since(since))));
}

/// Runs the hub stage `name`: notes its time, and the requests to the browser made in it.
pub async fn within<F: Future>(name: &'static str, f: F) -> F::Output {
    let started = Instant::now();
    let outer = STAGES.try_with(|s| s.borrow_mut().open.replace(name)).ok().flatten();
    let out = f.await;
    let _ = STAGES.try_with(|s| {
        let mut s = s.borrow_mut();
        s.open = outer;
        s.hub.push((name, ms_since(started)));
    });
    out
}

/// Notes one request to the browser: its round trip as the hub saw it, the time the hub took to
/// decode the answer, and the extension's own stages (`Envelope::timing`).
pub fn browser(method: &str, round_trip_ms: f64, decode_ms: f64, extension: Option<&BTreeMap<String, f64>>) {
    let _ = STAGES.try_with(|s| {
        let mut s = s.borrow_mut();
        let mut row = json!({
            "method": method, "during": s.open, "roundTripMs": round_trip_ms, "hubDecodeMs": decode_ms,
        });
        for (k, v) in extension.into_iter().flatten() {
            row[k] = json!(v);
        }
        s.browser.push(row);
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn stages_are_collected_only_inside_collect() {
        note("outside", Instant::now());
        let ((), v) = collect(async {
            let t = Instant::now();
            note("tool", t);
            note("tool", t);
            within("gates", async {
                let ext = BTreeMap::from([("pageMs".to_owned(), 2.5)]);
                browser("page.perceive", 4.0, 0.5, Some(&ext));
            })
            .await;
        })
        .await;
        assert_eq!(v["browser"][0]["during"], "gates");
        assert!(v["stages"]["gates"].as_f64().is_some(), "{v}");
        assert!(v["stages"].get("outside").is_none(), "{v}");
        assert!(v["stages"]["tool"].as_f64().is_some_and(|ms| ms >= 0.0), "{v}");
        assert_eq!(v["browser"][0]["method"], "page.perceive");
        assert_eq!(v["browser"][0]["pageMs"], 2.5);
        assert!(v["hubMs"].as_f64().is_some_and(|ms| ms >= 0.0));
        browser("page.perceive", 1.0, 0.0, None);
    }
}
