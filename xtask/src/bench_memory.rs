//! `cargo xtask bench --only memory`: the hub's resident memory idle and after 10,000 calls, and
//! what Nova's page module costs a tab (Chromium: the page's JavaScript heap with its
//! content-script worlds, and its array-buffer backing stores, as `Runtime.getHeapUsage` reports
//! them after a garbage collection, with and without Nova loaded in the same page; whether
//! Chromium counts WebAssembly linear memory among those stores is its choice, so the figure is a
//! floor. Firefox's BiDi has no heap figures: only the hub is measured there).

use std::time::Duration;

use serde_json::{Value, json};

use nova_e2e::agent::Agent;
use nova_e2e::{BrowserKind, Nova};

/// Calls made between the idle and the loaded figure.
const CALLS: usize = 10_000;

fn kib(v: &Value, key: &str) -> i64 {
    v[key].as_f64().map_or(0, |b| (b / 1024.0).round() as i64)
}

/// The figures for `kind`.
pub async fn figures(kind: BrowserKind) -> anyhow::Result<Value> {
    let nova = Nova::start_with_ui_in(kind).await?;
    let hub = nova_e2e::wait_for_hub(&nova.data, Duration::from_secs(10))?;
    let mut a = Agent::new(&nova, "steady").await?;
    a.ready().await?;
    let page = nova.url("basic.html?memory=nova");
    a.visit(&page).await?;
    tokio::time::sleep(Duration::from_secs(2)).await;
    let idle = nova_e2e::load::rss_kib(hub.pid)?;
    let mut out = json!({"hubRssKib": {"idle": idle}});

    if kind == BrowserKind::Chromium {
        // The same page in a tab Nova never touched, against the agent's tab after its reads.
        let nova_e2e::ui::Ui::Cdp(cdp) = nova.ui().await? else { anyhow::bail!("Chromium drives DevTools") };
        let bare = cdp.open(&nova.url("basic.html?memory=bare")).await?;
        tokio::time::sleep(Duration::from_secs(1)).await;
        let without = bare.heap_usage().await?;
        let with = cdp
            .attach(&cdp.wait_target("memory=nova", Duration::from_secs(10)).await?)
            .await?
            .heap_usage()
            .await?;
        let used = kib(&with, "usedSize") - kib(&without, "usedSize");
        let backing = kib(&with, "backingStorageSize") - kib(&without, "backingStorageSize");
        out["tabKib"] = json!({
            "withoutNova": {"jsHeapUsed": kib(&without, "usedSize"), "backingStorage": kib(&without, "backingStorageSize")},
            "withNova": {"jsHeapUsed": kib(&with, "usedSize"), "backingStorage": kib(&with, "backingStorageSize")},
            "novaCost": used + backing,
        });
    }

    // Each call asks for a different amount (the loop gate stops a sixth identical read of an
    // unchanged page within a minute, as it would an agent).
    for n in 0..CALLS {
        if n % 10 == 0 {
            a.step("nova.perceive", json!({"maxTextChars": 1000 + n})).await?;
        } else {
            a.step("nova.read_text", json!({"maxChars": 100 + n})).await?;
        }
    }
    tokio::time::sleep(Duration::from_secs(2)).await;
    out["hubRssKib"]["after10000Calls"] = json!(nova_e2e::load::rss_kib(hub.pid)?);
    Ok(out)
}

/// The lines `cargo xtask bench` prints.
pub fn render(r: &Value, label: &str) -> String {
    if r.is_null() {
        return String::new();
    }
    let mut s = format!(
        "hub RSS{label:<10} idle {} KiB, after {CALLS} calls (1 perceive : 9 read_text) {} KiB\n",
        r["hubRssKib"]["idle"], r["hubRssKib"]["after10000Calls"]
    );
    if let Some(t) = r.get("tabKib") {
        s += &format!(
            "tab memory{label:<7} without Nova {} KiB heap + {} KiB buffers, with Nova's page module {} + {}: Nova costs {} KiB per tab\n",
            t["withoutNova"]["jsHeapUsed"],
            t["withoutNova"]["backingStorage"],
            t["withNova"]["jsHeapUsed"],
            t["withNova"]["backingStorage"],
            t["novaCost"]
        );
    }
    s
}
