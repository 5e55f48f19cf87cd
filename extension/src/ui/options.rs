//! The options page: domain policy (allow / block per domain and action group), the agents' tab
//! rules, gate modes, the history of permission prompts, and the activity report. Every change is
//! saved at once through the hub, which checks it whole (a wrong part changes nothing and is
//! shown).

use std::cell::RefCell;

use serde_json::{Map, Value, json};
use wasm_bindgen::JsCast as _;
use wasm_bindgen_futures::spawn_local;

use super::kit::{
    add, add_with_code, by_id, call, checked, clear, date_time, n, on, on_action, s, set_checked, set_value,
    show, value,
};

const MODES: &[&str] = &["off", "warn", "shadow_block", "block"];

thread_local! {
    /// The domain policy as last loaded: domain -> group -> rule.
    static POLICY: RefCell<Map<String, Value>> = RefCell::new(Map::new());
}

pub(super) fn start() {
    on(&by_id("p-add"), "click", |_| {
        let domain = value(&by_id("p-domain")).trim().to_lowercase();
        let group = value(&by_id("p-group"));
        let rule = value(&by_id("p-rule"));
        if domain.is_empty() {
            return note("Enter a domain such as example.com.", true);
        }
        let mut policy = POLICY.with(|p| p.borrow().clone());
        let entry = policy.entry(domain).or_insert_with(|| json!({}));
        entry[group] = json!(rule);
        save(json!({"domainPolicy": policy}));
        set_value(&by_id("p-domain"), "");
    });
    on_action(&by_id("policy"), |action, id| {
        if action != "remove" {
            return;
        }
        let Some((domain, group)) = id.split_once('|') else { return };
        let mut policy = POLICY.with(|p| p.borrow().clone());
        if let Some(rules) = policy.get_mut(domain).and_then(Value::as_object_mut) {
            rules.remove(group);
            if rules.is_empty() {
                policy.remove(domain);
            }
        }
        save(json!({"domainPolicy": policy}));
    });
    on(&by_id("new-tabs"), "change", |_| save(json!({"agentNewTabsDisabled": checked(&by_id("new-tabs"))})));
    on(&by_id("cross-tab"), "change", |_| {
        save(json!({"agentCrossTabNavigationDisabled": checked(&by_id("cross-tab"))}))
    });
    on(&by_id("gates"), "change", |e| {
        let Some(el) = e.target().and_then(|t| t.dyn_into::<web_sys::Element>().ok()) else { return };
        let Some(gate) = el.get_attribute("data-gate") else { return };
        save(json!({"gateModes": {gate: value(&el)}}));
    });
    on(&by_id("open-report"), "click", |_| {
        let note_el = by_id("report-note");
        note_el.set_text_content(Some("Making the report…"));
        note_el.set_class_name("note ok");
        spawn_local(async move {
            match call("report", json!({"days": 7})).await {
                Ok(r) => note_el
                    .set_text_content(Some(&format!("Opened in a new tab ({} calls).", n(&r, "calls")))),
                Err(e) => {
                    note_el.set_text_content(Some(&format!("No report: {e}")));
                    note_el.set_class_name("note bad");
                }
            }
        });
    });
    spawn_local(load());
}

fn note(text: &str, is_error: bool) {
    let el = by_id("saved");
    el.set_text_content(Some(text));
    el.set_class_name(if is_error { "note bad" } else { "note ok" });
}

fn save(update: Value) {
    note("Saving…", false);
    spawn_local(async move {
        match call("settingsSet", update).await {
            Ok(view) => {
                render(&view);
                note("Saved.", false);
            }
            Err(e) => note(&format!("Not saved: {e}"), true),
        }
    });
}

async fn load() {
    match call("settings", json!({})).await {
        Ok(view) => render(&view),
        Err(e) => note(&format!("Cannot reach the Nova host: {e}"), true),
    }
    match call("approvals", json!({})).await {
        Ok(list) => approvals(&list),
        Err(e) => note(&format!("Cannot read approvals: {e}"), true),
    }
    if let Some(b) = super::kit::doc().body() {
        let _ = b.set_attribute("data-loaded", "true");
    }
}

fn render(view: &Value) {
    let file_error = by_id("file-error");
    file_error.set_text_content(Some(&format!(
        "settings.json could not be read, defaults are in use: {}",
        s(view, "fileError")
    )));
    show(&file_error, view.get("fileError").is_some());

    let policy = view.get("domainPolicy").and_then(Value::as_object).cloned().unwrap_or_default();
    let body = by_id("policy");
    clear(&body);
    if policy.is_empty() {
        let tr = add(&body, "tr", "", "");
        let td = add(&tr, "td", "muted", "No rules: agents may work on every site.");
        let _ = td.set_attribute("colspan", "4");
    }
    for (domain, rules) in &policy {
        for (group, rule) in rules.as_object().into_iter().flatten() {
            let tr = add(&body, "tr", "", "");
            add(&tr, "td", "", domain);
            add(&tr, "td", "", group);
            let rule = rule.as_str().unwrap_or_default();
            add(&tr, "td", &format!("rule-{rule}"), rule);
            let b = add(&add(&tr, "td", "", ""), "button", "small", "Remove");
            let _ = b.set_attribute("data-action", "remove");
            let _ = b.set_attribute("data-id", &format!("{domain}|{group}"));
        }
    }
    POLICY.with(|p| *p.borrow_mut() = policy);

    set_checked(
        &by_id("new-tabs"),
        view.get("agentNewTabsDisabled").and_then(Value::as_bool).unwrap_or(false),
    );
    set_checked(
        &by_id("cross-tab"),
        view.get("agentCrossTabNavigationDisabled").and_then(Value::as_bool).unwrap_or(false),
    );

    let gates = by_id("gates");
    clear(&gates);
    for g in view.get("gates").and_then(Value::as_array).into_iter().flatten() {
        let tr = add(&gates, "tr", "", "");
        let id = add(&tr, "td", "gate-id", s(g, "id"));
        let _ = id.set_attribute("title", &format!("Clears: {}", s(g, "clear")));
        let when = add_with_code(&tr, "td", "muted", s(g, "trigger"));
        add_with_code(&when, "div", "clears", &format!("Clears: {}", s(g, "clear")));
        let select = add(&add(&tr, "td", "", ""), "select", "", "");
        let _ = select.set_attribute("data-gate", s(g, "id"));
        for m in MODES {
            let label = if *m == s(g, "defaultMode") { format!("{m} (default)") } else { (*m).to_owned() };
            let o = add(&select, "option", "", &label);
            let _ = o.set_attribute("value", m);
        }
        set_value(&select, s(g, "mode"));
        add(
            &tr,
            "td",
            "muted",
            if g.get("bypass").and_then(Value::as_bool) == Some(true) { "yes" } else { "no" },
        );
    }
}

fn approvals(list: &Value) {
    let body = by_id("approvals");
    clear(&body);
    let rows = list.as_array().cloned().unwrap_or_default();
    if rows.is_empty() {
        let tr = add(&body, "tr", "", "");
        let td = add(&tr, "td", "muted", "No agent has asked yet.");
        let _ = td.set_attribute("colspan", "4");
    }
    for p in &rows {
        let tr = add(&body, "tr", "", "");
        add(&tr, "td", "", &date_time(n(p, "askedAtMs")));
        add(&tr, "td", "", s(p, "agentId"));
        let q = add(&tr, "td", "", s(p, "title"));
        add(&q, "div", "muted", s(p, "message"));
        let d = s(p, "decision");
        add(&tr, "td", &format!("decision decision-{d}"), &d.replace('_', " "));
    }
}
