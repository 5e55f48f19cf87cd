//! `cargo xtask bench --only profile`: on what the page spends its time in a read of the 5,000-node
//! list (or the article or app, `--profile-page`), by function (Chromium). DevTools samples the
//! page's main thread every 100 µs over a run of reads; each sample is charged to the function it
//! was in (self time): the browser's own calls (`getBoundingClientRect`, `checkVisibility`,
//! `querySelectorAll`, ...), the module's Rust functions (named by the WebAssembly name section)
//! and the glue between them. For the browser's costliest calls it also says which of the module's
//! functions made them. `--only stages` says how long the page worked; this says on what
//! (docs/performance.md).

use std::collections::HashMap;
use std::time::Duration;

use anyhow::bail;
use serde_json::{Value, json};

use nova_e2e::{BrowserKind, Nova, ui};

use crate::measure::{BENCH_SETTINGS, whole_page};

/// The sampling interval asked of DevTools, in microseconds.
const INTERVAL_US: u64 = 100;
/// How many functions and callers the JSON keeps (the long tail, for a closer look).
const TOP: usize = 120;
/// How many of them are printed.
const PRINTED: usize = 20;

/// Profiles `reads` whole-page reads of the page called `kind` ([`crate::bench_peer::PAGES`]).
pub async fn profile(kind: &str, reads: usize) -> anyhow::Result<Value> {
    let Some((_, file)) = crate::bench_peer::PAGES.into_iter().find(|(k, _)| *k == kind) else {
        bail!("--profile-page {kind}: not one of list, article, app")
    };
    let nova = Nova::start_with_ui_in(BrowserKind::Chromium).await?;
    std::fs::write(nova.data.join("settings.json"), BENCH_SETTINGS)?;
    let c = nova.client().await?;
    c.structured("nova.navigate", json!({"url": nova.url(file)})).await?;
    let ui = nova.ui().await?;
    let page = ui.wait_window(file, Duration::from_secs(10)).await?;
    let ui::Page::Cdp(page) = &page else { bail!("the profile is taken through DevTools, in Chromium") };
    let args = whole_page();
    // The first read loads the page module: not what a read costs afterwards.
    c.structured("nova.perceive", args.clone()).await?;
    page.call("Profiler.enable", json!({})).await?;
    page.call("Profiler.setSamplingInterval", json!({"interval": INTERVAL_US})).await?;
    page.call("Profiler.start", json!({})).await?;
    for _ in 0..reads {
        let (r, _) = c.call_timed("nova.perceive", args.clone()).await?;
        anyhow::ensure!(r.is_error != Some(true), "nova.perceive failed on {file}");
    }
    let stopped = page.call("Profiler.stop", json!({})).await?;
    let mut summary = summarise(&stopped["profile"], reads)?;
    summary["page"] = json!(kind);
    Ok(summary)
}

/// What a function is: the browser's, the module's, the glue's, or the engine's own state.
fn kind(name: &str, url: &str) -> &'static str {
    if name.starts_with('(') {
        "engine"
    } else if url.ends_with(".wasm") {
        "module"
    } else if url.contains("/pkg") {
        "glue"
    } else if url.is_empty() {
        "browser"
    } else {
        "script"
    }
}

/// A function's name without the build's hashes (`::h0123...`, `[0123...]`, `_0123...`).
fn tidy(name: &str) -> String {
    let hex16 = |s: &str| s.len() == 16 && s.bytes().all(|b| b.is_ascii_hexdigit());
    let mut out = String::with_capacity(name.len());
    let mut rest = name;
    while let Some(i) = rest.find('[') {
        let hash = rest[i + 1..].split(']').next().unwrap_or_default();
        out.push_str(&rest[..i]);
        rest = &rest[i + 1..];
        if hex16(hash) {
            rest = &rest[hash.len() + 1..];
        } else {
            out.push('[');
        }
    }
    out.push_str(rest);
    if let Some((head, tail)) = out.rsplit_once("::h")
        && hex16(tail)
    {
        out.truncate(head.len());
    }
    if let Some((head, tail)) = out.rsplit_once('_')
        && hex16(tail)
    {
        out.truncate(head.len());
    }
    out.strip_prefix("__wbg_").map(|g| format!("glue: {g}")).unwrap_or(out)
}

/// Whether a module function is the extension's own code (not a binding's shim).
fn ours(name: &str) -> bool {
    name.starts_with("nova_extension::") && !name.contains(" shim")
}

/// Self time per function and the module's callers of the browser's calls, from a DevTools
/// `Profiler.Profile`, in ms per read.
pub fn summarise(profile: &Value, reads: usize) -> anyhow::Result<Value> {
    let Some(nodes) = profile["nodes"].as_array() else { bail!("the profile has no nodes") };
    let samples: Vec<i64> =
        profile["samples"].as_array().into_iter().flatten().filter_map(Value::as_i64).collect();
    let (start, end) =
        (profile["startTime"].as_f64().unwrap_or(0.0), profile["endTime"].as_f64().unwrap_or(0.0));
    if samples.is_empty() || reads == 0 || end <= start {
        bail!("the profile holds no samples");
    }
    // Each sample stands for the run's duration divided evenly (µs -> ms, per read).
    let per_sample = (end - start) / 1000.0 / samples.len() as f64 / reads as f64;
    let mut node: HashMap<i64, (String, &'static str)> = HashMap::new();
    let mut parent: HashMap<i64, i64> = HashMap::new();
    for n in nodes {
        let Some(id) = n["id"].as_i64() else { continue };
        let frame = &n["callFrame"];
        let raw = frame["functionName"].as_str().unwrap_or_default();
        let name = if raw.is_empty() { "(anonymous)".to_owned() } else { tidy(raw) };
        node.insert(id, (name, kind(raw, frame["url"].as_str().unwrap_or_default())));
        for child in n["children"].as_array().into_iter().flatten().filter_map(Value::as_i64) {
            parent.insert(child, id);
        }
    }
    let mut own: HashMap<(String, &'static str), f64> = HashMap::new();
    let mut callers: HashMap<(String, String), f64> = HashMap::new();
    let (mut idle, mut busy) = (0.0, 0.0);
    for id in &samples {
        let Some((name, k)) = node.get(id) else { continue };
        if name == "(idle)" {
            idle += per_sample;
            continue;
        }
        busy += per_sample;
        *own.entry((name.clone(), k)).or_default() += per_sample;
        if *k == "browser" {
            // The nearest of the module's own functions (not a binding's shim or the standard
            // library's), else the nearest module function at all.
            let (mut up, mut any) = (parent.get(id), None);
            let from = loop {
                match up.and_then(|p| node.get(p).map(|n| (p, n))) {
                    Some((_, (caller, "module"))) if ours(caller) => break caller.clone(),
                    Some((p, (caller, k))) => {
                        if *k == "module" && any.is_none() {
                            any = Some(caller.clone());
                        }
                        up = parent.get(p);
                    }
                    None => break any.unwrap_or_else(|| "(no module function)".to_owned()),
                }
            };
            *callers.entry((name.clone(), from)).or_default() += per_sample;
        }
    }
    let mut own: Vec<_> = own.into_iter().collect();
    own.sort_by(|a, b| b.1.total_cmp(&a.1));
    let mut callers: Vec<_> = callers.into_iter().collect();
    callers.sort_by(|a, b| b.1.total_cmp(&a.1));
    let share = |ms: f64| if busy > 0.0 { ms / busy } else { 0.0 };
    let by_kind = |want: &str| own.iter().filter(|((_, k), _)| *k == want).map(|(_, ms)| ms).sum::<f64>();
    Ok(json!({
        "reads": reads,
        "busyMsPerRead": busy,
        "idleMsPerRead": idle,
        "byKind": {
            "browser": by_kind("browser"), "module": by_kind("module"), "glue": by_kind("glue"),
            "engine": by_kind("engine"), "script": by_kind("script"),
        },
        "functions": own.iter().take(TOP).map(|((name, k), ms)| json!({
            "name": name, "kind": k, "msPerRead": ms, "share": share(*ms),
        })).collect::<Vec<_>>(),
        "callers": callers.iter().take(TOP).map(|((call, from), ms)| json!({
            "call": call, "from": from, "msPerRead": ms,
        })).collect::<Vec<_>>(),
    }))
}

/// The tables `cargo xtask bench` prints.
pub fn render(r: &Value) -> String {
    if r.is_null() {
        return String::new();
    }
    let f = |v: &Value| v.as_f64().unwrap_or(0.0);
    let mut s = format!(
        "on what the page spends a read of the {}, ms per read (Chromium, {} reads, sampled every {INTERVAL_US} µs): {:.1} busy\n",
        match r["page"].as_str() {
            Some("list") | None => "5,000-node list",
            Some(other) => other,
        },
        r["reads"],
        f(&r["busyMsPerRead"]),
    );
    let k = &r["byKind"];
    s += &format!(
        "  by kind: the browser's calls {:.1}, the module (Rust) {:.1}, glue {:.1}, engine (GC, compiling) {:.1}\n",
        f(&k["browser"]),
        f(&k["module"]),
        f(&k["glue"]),
        f(&k["engine"]),
    );
    for e in r["functions"].as_array().into_iter().flatten().take(PRINTED) {
        s += &format!(
            "  {:>7.2} {:>5.1} %  {:<8} {}\n",
            f(&e["msPerRead"]),
            f(&e["share"]) * 100.0,
            e["kind"].as_str().unwrap_or_default(),
            e["name"].as_str().unwrap_or_default(),
        );
    }
    s += "  the browser's calls by the module's function that made them:\n";
    for e in r["callers"].as_array().into_iter().flatten().take(PRINTED) {
        s += &format!(
            "  {:>7.2}  {} <- {}\n",
            f(&e["msPerRead"]),
            e["call"].as_str().unwrap_or_default(),
            e["from"].as_str().unwrap_or_default(),
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_lose_their_build_hashes() {
        assert_eq!(
            tidy("nova_extension::perceive::Walk::element::he1f816c878bf17a7"),
            "nova_extension::perceive::Walk::element"
        );
        assert_eq!(tidy("__wbg_nextSibling_91136dc7a8ec9b09"), "glue: nextSibling");
        assert_eq!(tidy("<dlmalloc[e24a27700634d609]::Dlmalloc>::malloc"), "<dlmalloc::Dlmalloc>::malloc");
        assert_eq!(tidy("getBoundingClientRect"), "getBoundingClientRect");
        assert_eq!(tidy("a[b]::hxyz"), "a[b]::hxyz");
    }

    #[test]
    fn self_time_and_callers_come_from_the_samples() {
        // root -> Walk::element (module) -> a binding's shim (module) -> glue ->
        // getBoundingClientRect (browser); idle beside.
        let profile = json!({
            "startTime": 0.0, "endTime": 8000.0,
            "nodes": [
                {"id": 1, "callFrame": {"functionName": "(root)", "url": ""}, "children": [2, 5]},
                {"id": 2, "callFrame": {"functionName": "nova_extension::perceive::Walk::element::he1f816c878bf17a7", "url": "chrome-extension://x/pkg/nova_extension_bg.wasm"}, "children": [6]},
                {"id": 6, "callFrame": {"functionName": "web_sys::Element::get_bounding_client_rect externref shim", "url": "chrome-extension://x/pkg/nova_extension_bg.wasm"}, "children": [3]},
                {"id": 3, "callFrame": {"functionName": "__wbg_getBoundingClientRect_0123456789abcdef", "url": "chrome-extension://x/pkg/nova_extension.js"}, "children": [4]},
                {"id": 4, "callFrame": {"functionName": "getBoundingClientRect", "url": ""}},
                {"id": 5, "callFrame": {"functionName": "(idle)", "url": ""}},
            ],
            "samples": [4, 4, 4, 2, 3, 5, 5, 5],
        });
        let s = summarise(&profile, 2).expect("summary");
        // 8 samples over 8 ms and 2 reads: 0.5 ms per sample per read.
        assert_eq!(s["busyMsPerRead"], 2.5);
        assert_eq!(s["idleMsPerRead"], 1.5);
        assert_eq!(s["functions"][0]["name"], "getBoundingClientRect");
        assert_eq!(s["functions"][0]["kind"], "browser");
        assert_eq!(s["functions"][0]["msPerRead"], 1.5);
        assert_eq!(s["byKind"]["module"], 0.5);
        assert_eq!(s["byKind"]["glue"], 0.5);
        assert_eq!(s["callers"][0]["from"], "nova_extension::perceive::Walk::element");
        assert!(summarise(&json!({"nodes": [], "samples": []}), 1).is_err());
    }
}
