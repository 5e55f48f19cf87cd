//! The person's controls in real Chromium: the popup (connection, agents, tabs, activity with
//! verdict badges, STOP), the permission prompt, and the options page (domain policy, gate modes,
//! approvals), driven through the DevTools protocol like a person would click them. Screenshots
//! of each state are saved to `target/artifacts/ui/`.

use std::sync::Arc;
use std::time::Duration;

use nova_e2e::{Client, Nova, store};
use rmcp::model::CallToolResult;
use serde_json::{Value, json};

const WAIT: Duration = Duration::from_secs(15);

fn aag(r: &CallToolResult) -> Value {
    r.meta.as_ref().and_then(|m| m.0.get("io.nova/aag").cloned()).unwrap_or(Value::Null)
}

async fn ready(c: &Client) -> anyhow::Result<()> {
    let b = c.structured("nova.tools_bundle", json!({"bundle": "browser_automation"})).await?;
    anyhow::ensure!(b["ok"] == json!(true), "{b}");
    Ok(())
}

fn text_of(selector: &str) -> String {
    format!(
        "((document.querySelector({}) || {{}}).textContent || '')",
        serde_json::to_string(selector).unwrap_or_default()
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn stop_in_the_popup_blocks_survives_hub_and_browser_restarts_and_releases_only_on_resume()
-> anyhow::Result<()> {
    let mut nova = Nova::start_with_ui().await?;
    let c = nova.client().await?;
    ready(&c).await?;
    c.structured("nova.navigate", json!({"url": nova.url("chat.html?mode=works")})).await?;
    c.structured("nova.perceive", json!({})).await?;
    let claim = c.structured("nova.tab_claim", json!({"targetId": "active", "debugLabel": "chat"})).await?;
    let tab = claim["targetId"].as_str().unwrap_or_default().to_owned();
    let sent = c
        .structured(
            "nova.guarded_send_message",
            json!({"text": "hello", "transitionContract": {"stabilityWindowMs": 1500, "stabilityMs": 200}}),
        )
        .await?;
    assert_eq!(sent["guardedCommit"]["verificationStatus"], "verified_success", "{sent}");

    let ui = nova.ui().await?;
    let popup = ui.open(&nova.extension_page("popup.html")).await?;
    popup.viewport(380, 640).await?;
    popup.wait_for("document.body.dataset.connected === 'true'", WAIT).await?;
    // The agent, the tab it holds, and the feed with the verified send.
    let agents = popup.wait_for(&format!("{}.includes('tab {tab}')", text_of("#agents")), WAIT).await;
    assert!(agents.is_ok(), "popup lists the held tab: {}", popup.eval(&text_of("#agents")).await?);
    let feed = popup.eval(&text_of("#activity")).await?;
    let feed = feed.as_str().unwrap_or_default();
    assert!(feed.contains("guarded_send_message") && feed.contains("perceive"), "{feed}");
    assert_eq!(popup.eval("document.querySelectorAll('#activity .badge-verified').length").await?, json!(1));
    assert!(popup.eval(&text_of("#agents")).await?.as_str().unwrap_or_default().contains("default"));
    popup.screenshot(&nova.artifact("popup-running")).await?;

    // STOP: the next call is blocked before it runs.
    popup.click("#stop").await?;
    popup.wait_for("document.body.dataset.stopped === 'true'", WAIT).await?;
    let blocked = c.call("nova.perceive", json!({})).await?;
    let a = aag(&blocked);
    assert_eq!(
        (blocked.is_error, a["gateId"].clone(), a["forceBypassAvailable"].clone()),
        (Some(true), json!("safety.emergency_stop"), json!(false)),
        "{a}"
    );
    let rows = nova.count_until(
        "SELECT COUNT(*) FROM observations WHERE tool = 'nova.perceive' AND executed = 0
           AND outcome_kind = 'blocked_preflight' AND error_code = 'aag_blocked:safety.emergency_stop'",
        1,
    )?;
    assert_eq!(rows, 1, "the blocked call is recorded as blocked before dispatch");
    popup.wait_for("document.querySelectorAll('#activity .badge-blocked').length >= 1", WAIT).await?;
    popup.screenshot(&nova.artifact("popup-stopped")).await?;

    // A new hub (as after a browser or host restart) reads the stop from the store.
    nova.restart_hub().await?;
    let still = c.call("nova.perceive", json!({})).await?;
    assert_eq!(aag(&still)["gateId"], "safety.emergency_stop", "the stop survived the hub restart");
    popup.reload().await?;
    popup
        .wait_for(
            "document.body.dataset.connected === 'true' && document.body.dataset.stopped === 'true'",
            WAIT,
        )
        .await?;
    assert!(popup.eval(&text_of("#stopped-text")).await?.as_str().unwrap_or_default().contains("by you"));
    drop(popup);
    drop(ui);

    // And after the browser itself restarts (same profile and data dir).
    nova.restart_browser().await?;
    let after_browser = c.call("nova.perceive", json!({})).await?;
    assert_eq!(
        aag(&after_browser)["gateId"],
        "safety.emergency_stop",
        "the stop survived the browser restart"
    );
    let ui = nova.ui().await?;
    let popup = ui.open(&nova.extension_page("popup.html")).await?;
    popup.viewport(380, 640).await?;
    popup
        .wait_for(
            "document.body.dataset.connected === 'true' && document.body.dataset.stopped === 'true'",
            WAIT,
        )
        .await?;
    popup.screenshot(&nova.artifact("popup-stopped-after-restarts")).await?;

    // Only the person releases it.
    popup.click("#resume").await?;
    popup.wait_for("document.body.dataset.stopped === 'false'", WAIT).await?;
    let ok = c.call("nova.navigate", json!({"url": nova.url("basic.html")})).await?;
    assert_eq!(ok.is_error, Some(false), "released: {:?}", ok.structured_content);
    popup.screenshot(&nova.artifact("popup-resumed")).await?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn permission_prompts_are_approved_and_denied_in_the_ui_and_time_out() -> anyhow::Result<()> {
    let nova = Nova::start_with_ui().await?;
    let c = Arc::new(nova.client().await?);
    ready(&c).await?;
    let nav = c.structured("nova.navigate", json!({"url": nova.url("aware/sso.html")})).await?;
    let tab = nav["targetId"].as_str().unwrap_or_default().to_owned();
    // A sign-in overlay holds clicks until the person is asked.
    c.structured("nova.perceive", json!({})).await?;
    let held = c.call("nova.click_selector", json!({"selector": "#behind"})).await?;
    assert_eq!(aag(&held)["gateId"], "safety.identity_overlay", "{:?}", held.structured_content);

    // Bad arguments are refused by name, and nobody is asked.
    let e = c.call_err("nova.permission_prompt", json!({"message": " "})).await?;
    assert!(e.message.contains("message"), "{}", e.message);
    let e = c.call_err("nova.permission_prompt", json!({"message": "ok?", "timeoutMs": 1000})).await?;
    assert!(e.message.contains("timeoutMs") && e.message.contains("5000"), "{}", e.message);

    // 1. Approved in the prompt window the extension opens.
    let ask = {
        let c = c.clone();
        let tab = tab.clone();
        tokio::spawn(async move {
            c.structured(
                "nova.permission_prompt",
                json!({"title": "Submit the order", "message": "May I continue past the sign-in dialog and submit the order form?",
                       "targetId": tab, "timeoutMs": 60000}),
            )
            .await
        })
    };
    let ui = nova.ui().await?;
    let prompt = ui.wait_window("prompt.html", WAIT).await?;
    prompt.wait_for(&format!("{}.includes('Submit the order')", text_of(".prompt-title")), WAIT).await?;
    assert!(
        prompt.eval(&text_of(".prompt-message")).await?.as_str().unwrap_or_default().contains("order form")
    );
    prompt.screenshot(&nova.artifact("prompt-window")).await?;
    prompt.click("button.approve").await?;
    let r = ask.await??;
    assert_eq!((r["decision"].clone(), r["approved"].clone()), (json!("approved"), json!(true)), "{r}");
    let id = r["promptId"].as_str().unwrap_or_default().to_owned();
    let stored = store::query_i64(
        &nova.store_path(),
        &format!(
            "SELECT COUNT(*) FROM approvals WHERE prompt_id = '{id}' AND decision = 'approved' AND decided_at_ms IS NOT NULL"
        ),
    )?;
    assert_eq!(stored, 1, "the decision is stored");
    // The person said yes: the agent may now act on the tab (here: close the overlay).
    let after = c.structured("nova.click_selector", json!({"selector": "#close"})).await?;
    assert_eq!(after["actionDispatched"], true, "the approval cleared the overlay gate: {after}");

    // 2. Denied from the popup's list of waiting prompts.
    let ask = {
        let c = c.clone();
        tokio::spawn(async move {
            c.structured(
                "nova.permission_prompt",
                json!({"title": "Delete the account", "message": "May I delete it?"}),
            )
            .await
        })
    };
    let popup = ui.open(&nova.extension_page("popup.html")).await?;
    popup.viewport(380, 640).await?;
    popup.wait_for("document.querySelectorAll('#prompts .prompt').length === 1", WAIT).await?;
    popup.screenshot(&nova.artifact("popup-prompt")).await?;
    popup.click("#prompts button.deny").await?;
    let r = ask.await??;
    assert_eq!((r["decision"].clone(), r["approved"].clone()), (json!("denied"), json!(false)), "{r}");
    let denied_id = r["promptId"].as_str().unwrap_or_default().to_owned();
    // Its prompt window is closed by the extension once answered elsewhere.
    let deadline = std::time::Instant::now() + WAIT;
    while ui.has_window(&denied_id).await? {
        anyhow::ensure!(std::time::Instant::now() < deadline, "the answered prompt's window stayed open");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    // 3. Nobody answers: timed out, stored as such.
    let r = c
        .structured("nova.permission_prompt", json!({"message": "Anyone there?", "timeoutMs": 5000}))
        .await?;
    assert_eq!(r["decision"], "timed_out", "{r}");

    // The options page lists all three decisions.
    let options = ui.open(&nova.extension_page("options.html")).await?;
    options.viewport(1000, 900).await?;
    options.wait_for("document.querySelectorAll('#approvals tr').length === 3", WAIT).await?;
    let decisions = options
        .eval("[...document.querySelectorAll('#approvals .decision')].map(e => e.textContent).join(',')")
        .await?;
    assert_eq!(decisions, json!("timed out,denied,approved"));
    options.screenshot(&nova.artifact("options-approvals")).await?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn the_options_page_sets_domain_policy_and_gate_modes_checked_by_the_host() -> anyhow::Result<()> {
    let nova = Nova::start_with_ui().await?;
    let c = nova.client().await?;
    ready(&c).await?;
    c.structured("nova.navigate", json!({"url": nova.url("basic.html")})).await?;
    c.structured("nova.perceive", json!({})).await?;

    let ui = nova.ui().await?;
    let options = ui.open(&nova.extension_page("options.html")).await?;
    options.viewport(1000, 1100).await?;
    options.wait_for("document.body.dataset.loaded === 'true'", WAIT).await?;
    // Every gate is listed with its mode.
    let gates = options.eval("document.querySelectorAll('#gates select').length").await?;
    assert!(gates.as_u64().unwrap_or(0) >= 14, "{gates}");

    // A rule typed like a person would: block interaction on the fixture host.
    let fill = |sel: &str, v: &str| {
        format!(
            "(() => {{ const e = document.querySelector('{sel}'); e.value = '{v}'; e.dispatchEvent(new Event('input')); return true; }})()"
        )
    };
    options.eval(&fill("#p-domain", "127.0.0.1")).await?;
    options.eval(&fill("#p-group", "interact")).await?;
    options.eval(&fill("#p-rule", "block")).await?;
    options.click("#p-add").await?;
    options.wait_for(&format!("{} === 'Saved.'", text_of("#saved")), WAIT).await?;
    let settings: Value = serde_json::from_str(&std::fs::read_to_string(nova.data.join("settings.json"))?)?;
    assert_eq!(settings["domainPolicy"]["127.0.0.1"]["interact"], "block", "{settings}");
    let blocked = c.call("nova.click_selector", json!({"selector": "#counter"})).await?;
    assert_eq!(aag(&blocked)["gateId"], "domain.policy.blocked", "{:?}", blocked.structured_content);
    let read = c.call("nova.read_text", json!({})).await?;
    assert_eq!(read.is_error, Some(false), "reading is another action group");

    // A gate mode through its select.
    options
        .eval(
            "(() => { const s = document.querySelector('select[data-gate=\"loop.detected\"]'); s.value = 'off'; \
             s.dispatchEvent(new Event('change', {bubbles: true})); return true; })()",
        )
        .await?;
    options.wait_for(&format!("{} === 'Saved.'", text_of("#saved")), WAIT).await?;
    let settings: Value = serde_json::from_str(&std::fs::read_to_string(nova.data.join("settings.json"))?)?;
    assert_eq!(settings["gateModes"]["loop.detected"], "off", "{settings}");
    // ... and it takes effect: the same read five times is no loop any more.
    for _ in 0..5 {
        let r = c.call("nova.read_text", json!({"maxChars": 9})).await?;
        assert_eq!(r.is_error, Some(false), "loop.detected is off: {:?}", r.structured_content);
    }

    // A tab rule through its checkbox.
    options.click("#new-tabs").await?;
    let deadline = std::time::Instant::now() + WAIT;
    let settings = loop {
        let s: Value = serde_json::from_str(&std::fs::read_to_string(nova.data.join("settings.json"))?)?;
        if s["agentNewTabsDisabled"] == json!(true) || std::time::Instant::now() > deadline {
            break s;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    };
    assert_eq!(settings["agentNewTabsDisabled"], true, "{settings}");
    let tab = c.call("nova.navigate", json!({"url": nova.url("page2.html"), "newTab": true})).await?;
    assert_eq!(aag(&tab)["gateId"], "agent.new_tabs_disabled", "{:?}", tab.structured_content);
    options.screenshot(&nova.artifact("options-policy")).await?;

    // The host refuses a bad domain, names it, and changes nothing.
    options.eval(&fill("#p-domain", "not a domain")).await?;
    options.click("#p-add").await?;
    let note = options.wait_for(&format!("{}.startsWith('Not saved')", text_of("#saved")), WAIT).await;
    assert!(note.is_ok(), "{}", options.eval(&text_of("#saved")).await?);
    let said = options.eval(&text_of("#saved")).await?;
    assert!(said.as_str().unwrap_or_default().contains("not a domain"), "{said}");
    let after: Value = serde_json::from_str(&std::fs::read_to_string(nova.data.join("settings.json"))?)?;
    assert_eq!(after, settings, "a refused update changes nothing");

    // Removing the rule lets the agent act again.
    options.click("#policy button[data-action=remove]").await?;
    options.wait_for("!document.querySelector('#policy button[data-action=remove]')", WAIT).await?;
    let clicked = c.structured("nova.click_selector", json!({"selector": "#counter"})).await?;
    assert_eq!(clicked["actionDispatched"], true, "the rule is gone: {clicked}");
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn the_popup_says_why_the_host_is_not_connected() -> anyhow::Result<()> {
    let mut nova = Nova::without_browser().await?;
    // No host manifest in this profile: the browser cannot start the host.
    std::fs::remove_dir_all(nova_e2e::host_manifest_dir(&nova.profile, nova.kind))?;
    nova.devtools = true;
    nova.spawn_browser().await?;
    let ui = nova.ui().await?;
    let popup = ui.open(&nova.extension_page("popup.html")).await?;
    popup.viewport(380, 400).await?;
    popup.wait_for("document.body.dataset.connected === 'false'", WAIT).await?;
    let why = popup.wait_for(&format!("{}.includes('nova install')", text_of("#conn-why")), WAIT).await;
    assert!(why.is_ok(), "{}", popup.eval(&text_of("#conn-why")).await?);
    popup.screenshot(&nova.artifact("popup-no-host")).await?;

    // STOP still works: kept and shown until the host is back.
    popup.click("#stop").await?;
    popup.wait_for("document.body.dataset.stopped === 'true'", WAIT).await?;
    assert!(popup.eval(&text_of("#stopped-text")).await?.as_str().unwrap_or_default().contains("as soon as"));

    // Once the host is installed, the extension's next reconnect starts it and delivers the
    // STOP before any agent can act.
    nova.dist.register_host(&nova.profile, nova.kind)?;
    nova_e2e::wait_for_hub(&nova.data, nova_e2e::HUB_START)?;
    popup
        .wait_for(
            "document.body.dataset.connected === 'true' && document.body.dataset.stopped === 'true'",
            WAIT,
        )
        .await?;
    let c = nova.client().await?;
    let r = c.call("nova.perceive", json!({})).await?;
    assert_eq!(aag(&r)["gateId"], "safety.emergency_stop", "{:?}", r.structured_content);
    assert_eq!(aag(&r)["details"]["by"], "popup", "{}", aag(&r));
    Ok(())
}

/// The person's controls answer the extension's own pages only. A content script runs next to
/// web pages (a compromised or buggy one is the threat): from Nova's own content-script world in
/// a page, resume, settings changes and permission answers are refused, STOP stays engaged and
/// `settings.json` keeps its bytes; the same resume from the popup releases the stop.
///
/// Chromium only: DevTools reaches an extension's isolated world in a page; Firefox's BiDi has
/// no way into content-script sandboxes (SECURITY.md says so), and the check is the same
/// `background.js` in both browsers.
#[tokio::test(flavor = "multi_thread")]
async fn a_content_script_cannot_release_stop_or_change_settings() -> anyhow::Result<()> {
    if nova_e2e::BrowserKind::from_env() == nova_e2e::BrowserKind::Firefox {
        return Ok(());
    }
    let nova = Nova::start_with_ui().await?;
    let c = nova.client().await?;
    ready(&c).await?;
    let page_url = nova.url("basic.html?world=content-script");
    c.structured("nova.navigate", json!({"url": page_url})).await?;
    c.structured("nova.perceive", json!({})).await?; // Nova's content script is now in the page
    let stop = nova.cli().arg("stop").output()?;
    assert!(stop.status.success(), "nova stop: {}", String::from_utf8_lossy(&stop.stderr));
    let settings = nova.data.join("settings.json");
    let before = std::fs::read(&settings).ok();

    let ui = nova.ui().await?;
    let nova_e2e::ui::Ui::Cdp(cdp) = &ui else { anyhow::bail!("Chromium drives DevTools") };
    let tab = cdp.attach(&cdp.wait_target("world=content-script", WAIT).await?).await?;
    let world = tab.nova_world().await?;
    let forged = tab
        .eval_in(
            world,
            r#"(async () => {
                const out = {};
                const tries = [
                  ['resume', {}],
                  ['settingsSet', {agentNewTabsDisabled: true}],
                  ['settingsSet', {gateModes: {'safety.emergency_stop': 'off'}}],
                  ['answer', {id: 1, approve: true}],
                ];
                for (const [i, [op, params]] of tries.entries()) {
                  try {
                    out[i + ':' + op] = await chrome.runtime.sendMessage({novaUi: 1, op, params}) ?? null;
                  } catch (e) {
                    out[i + ':' + op] = 'refused: ' + e.message;
                  }
                }
                return out;
            })()"#,
        )
        .await?;
    let answers = forged.as_object().map(|o| o.len()).unwrap_or_default();
    assert_eq!(answers, 4, "every forged request was sent: {forged}");
    for (op, answer) in forged.as_object().into_iter().flatten() {
        assert!(answer.get("ok").is_none(), "{op} got an answer from the background: {answer}");
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    let blocked = c.call("nova.perceive", json!({})).await?;
    assert_eq!(
        aag(&blocked)["gateId"],
        "safety.emergency_stop",
        "STOP stays: {:?}",
        blocked.structured_content
    );
    assert_eq!(std::fs::read(&settings).ok(), before, "settings.json is untouched");

    // The same request from the extension's own page is obeyed.
    let popup = ui.open(&nova.extension_page("popup.html")).await?;
    popup.wait_for("document.body.dataset.stopped === 'true'", WAIT).await?;
    let resumed = popup.eval("chrome.runtime.sendMessage({novaUi: 1, op: 'resume', params: {}})").await?;
    assert_eq!(resumed["ok"], true, "{resumed}");
    let released = c.call("nova.perceive", json!({})).await?;
    assert_eq!(released.is_error, Some(false), "released from the popup: {:?}", released.structured_content);
    Ok(())
}
