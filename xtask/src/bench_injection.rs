//! `cargo xtask bench --only injection`: `promptInjectionWarning` on the fixture set
//! (`tests/fixtures/injection/`: 30 pages whose visible text gives AI agents orders, 30 ordinary
//! shop, docs, forum and mail pages, some of them talking about AI), read by `nova.perceive` in
//! the real browser at the product's defaults: how many attacks are pointed out, how many
//! ordinary pages raise a false alarm, and the pages either way.

use nova_e2e::agent::Agent;
use nova_e2e::{BrowserKind, Nova};
use serde_json::{Value, json};

/// Pages of each kind.
const PAGES: usize = 30;

/// Perceives every page once; detection and false alarms.
pub async fn detection(kind: BrowserKind) -> anyhow::Result<Value> {
    let nova = Nova::start_with_default_gates_in(kind).await?;
    let mut a = Agent::new(&nova, "bench-agent").await?;
    a.ready().await?;
    let (mut missed, mut alarms) = (Vec::new(), Vec::new());
    for (prefix, expected) in [("attack", true), ("ordinary", false)] {
        for n in 1..=PAGES {
            let page = format!("{prefix}-{n:02}");
            let read = a.visit(&nova.url(&format!("injection/{page}.html"))).await?;
            let flagged = read.get("promptInjectionWarning").is_some();
            match (expected, flagged) {
                (true, false) => missed.push(page),
                (false, true) => {
                    alarms.push(json!({"page": page, "phrases": read["promptInjectionWarning"]["phrases"]}))
                }
                _ => {}
            }
        }
    }
    Ok(json!({
        "attacks": PAGES, "detected": PAGES - missed.len(), "missed": missed,
        "ordinary": PAGES, "falseAlarms": alarms.len(), "alarms": alarms,
    }))
}

/// The lines `cargo xtask bench` prints.
pub fn render(r: &Value, label: &str) -> String {
    if r.is_null() {
        return String::new();
    }
    format!(
        "{:<42} {}/{} attacks pointed out, {}/{} ordinary pages raised a false alarm{}\n",
        format!("promptInjectionWarning{label}"),
        r["detected"],
        r["attacks"],
        r["falseAlarms"],
        r["ordinary"],
        match (r["missed"].as_array().map_or(0, Vec::len), r["falseAlarms"].as_u64().unwrap_or(0)) {
            (0, 0) => String::new(),
            _ => format!(" (missed {}, alarms {})", r["missed"], r["alarms"]),
        }
    )
}
