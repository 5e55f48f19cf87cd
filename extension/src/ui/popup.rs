//! The toolbar popup: is the host connected (and if not, why), which agents are connected and
//! which tabs they hold, the live activity feed with verdict badges, prompts waiting for the
//! person, and STOP.

use serde_json::{Value, json};
use wasm_bindgen_futures::spawn_local;

use super::kit::{add, by_id, call, clear, clock, n, on, on_action, prompt_card, s, show};

/// How often the popup refreshes, ms.
const REFRESH_MS: i32 = 1_000;

pub(super) fn start() {
    on(&by_id("stop"), "click", |_| {
        spawn_local(async {
            if let Err(e) = call("stop", json!({})).await {
                error(&e);
            }
            refresh().await;
        })
    });
    on(&by_id("resume"), "click", |_| {
        spawn_local(async {
            if let Err(e) = call("resume", json!({})).await {
                error(&e);
            }
            refresh().await;
        })
    });
    on_action(&by_id("prompts"), |action, id| {
        let decision = if action == "approve" { "approved" } else { "denied" };
        spawn_local(async move {
            if let Err(e) = call("answer", json!({"promptId": id, "decision": decision})).await {
                error(&e);
            }
            refresh().await;
        })
    });
    spawn_local(refresh());
    super::kit::every(REFRESH_MS, || spawn_local(refresh()));
}

fn error(message: &str) {
    let e = by_id("error");
    e.set_text_content(Some(message));
    show(&e, !message.is_empty());
}

async fn refresh() {
    match call("status", json!({})).await {
        Ok(v) => render(&v),
        Err(e) => error(&e),
    }
}

fn render(v: &Value) {
    let body = super::kit::doc().body().map(web_sys::Element::from).unwrap_or_else(|| by_id("app"));
    let connected = v.get("connected").and_then(Value::as_bool).unwrap_or(false);
    let status = v.get("status").cloned().unwrap_or(Value::Null);
    let conn = by_id("conn");
    conn.set_text_content(Some(if connected { "Host connected" } else { "Host not connected" }));
    conn.set_class_name(if connected { "pill ok" } else { "pill bad" });
    let why = by_id("conn-why");
    why.set_text_content(Some(s(v, "reason")));
    show(&why, !connected);
    if connected {
        by_id("host").set_text_content(Some(&format!(
            "host {} · pid {}",
            s(&status, "hostVersion"),
            n(&status, "hubPid")
        )));
    }

    let stop = status.get("stop").cloned().unwrap_or(Value::Null);
    let queued = v.get("pendingStop").and_then(Value::as_bool).unwrap_or(false);
    let stopped = stop.get("engaged").and_then(Value::as_bool).unwrap_or(false) || queued;
    show(&by_id("stop"), !stopped);
    show(&by_id("stopped"), stopped);
    let text = if queued && !connected {
        "STOP is set. It reaches the host as soon as the host is back; no agent can act meanwhile.".to_owned()
    } else {
        let who = match s(&stop, "by") {
            "cli" => "from a terminal (nova stop)".to_owned(),
            _ => "by you".to_owned(),
        };
        let when = match n(&stop, "atMs") {
            0 => "just now".to_owned(),
            at => format!("at {}", clock(at)),
        };
        format!("Agents are stopped ({who} {when}). Nothing runs until you resume.")
    };
    by_id("stopped-text").set_text_content(Some(&text));
    let _ = body.set_attribute("data-connected", if connected { "true" } else { "false" });
    let _ = body.set_attribute("data-stopped", if stopped { "true" } else { "false" });

    let now = js_sys::Date::now() as i64;
    let prompts = by_id("prompts");
    clear(&prompts);
    for p in status.get("prompts").and_then(Value::as_array).into_iter().flatten() {
        prompt_card(&prompts, p, now);
    }

    let agents = by_id("agents");
    clear(&agents);
    let list = status.get("agents").and_then(Value::as_array).cloned().unwrap_or_default();
    if list.is_empty() {
        add(&agents, "li", "muted", if connected { "No agent connected." } else { "—" });
    }
    for a in &list {
        let li = add(&agents, "li", "agent", "");
        let client = if s(a, "client").is_empty() { "MCP client" } else { s(a, "client") };
        add(&li, "strong", "", client);
        let ids: Vec<&str> = a
            .get("agentIds")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        if !ids.is_empty() {
            add(&li, "span", "muted", &format!(" as {}", ids.join(", ")));
        }
        let last = n(a, "lastCallAtMs");
        let calls = if last > 0 {
            format!("{} calls · last {}", n(a, "calls"), clock(last))
        } else {
            "connected, no calls yet".to_owned()
        };
        add(&li, "div", "muted", &calls);
        tabs(&li, a.get("tabs"));
    }
    if let Some(idle) = status.get("idleTabs").and_then(Value::as_array).filter(|t| !t.is_empty()) {
        let li = add(&agents, "li", "agent", "");
        add(&li, "strong", "", "Held by agents not connected now");
        tabs(&li, Some(&Value::Array(idle.clone())));
    }

    let feed = by_id("activity");
    clear(&feed);
    let lines = status.get("activity").and_then(Value::as_array).cloned().unwrap_or_default();
    if lines.is_empty() {
        add(&feed, "li", "muted", "No activity yet.");
    }
    for l in &lines {
        let li = add(&feed, "li", "", "");
        add(&li, "span", "time", &clock(n(l, "atMs")));
        let badge = s(l, "badge");
        add(&li, "span", &format!("badge badge-{badge}"), badge_label(badge));
        add(&li, "span", "tool", s(l, "tool").trim_start_matches("nova."));
        let mut rest = format!(" {}", s(l, "agentId"));
        if let Some(t) = l.get("targetId").and_then(Value::as_str) {
            rest.push_str(&format!(" · tab {t}"));
        }
        if let Some(r) = l.get("reasonCode").and_then(Value::as_str) {
            rest.push_str(&format!(" · {r}"));
        }
        add(&li, "span", "muted", &rest);
    }
    let _ = body.set_attribute("data-loaded", "true");
}

fn tabs(parent: &web_sys::Element, tabs: Option<&Value>) {
    let list = tabs.and_then(Value::as_array).cloned().unwrap_or_default();
    if list.is_empty() {
        return;
    }
    let ul = add(parent, "ul", "tabs", "");
    for t in &list {
        let title = if s(t, "title").is_empty() { s(t, "url") } else { s(t, "title") };
        let li = add(&ul, "li", "", &format!("tab {} · {title}", s(t, "targetId")));
        let _ = li.set_attribute("title", s(t, "url"));
    }
}

fn badge_label(badge: &str) -> &'static str {
    match badge {
        "verified" => "✓ verified",
        "failed" => "✗ failed",
        "unverified" => "? unverified",
        "pending" => "… checking",
        "blocked" => "⊘ blocked",
        "error" => "error",
        _ => "ok",
    }
}
