//! AAG gates with the product's default modes, in real Chromium: each gate blocks or warns with
//! the shape docs/gates.md shows and clears as documented; blocked calls are recorded and never
//! executed.

use nova_e2e::{Client, Nova};
use rmcp::model::CallToolResult;
use serde_json::{Value, json};

/// The capability bundles, in the order of `knownBundles` (docs/gates.md, "Gates (AAG)").
const BUNDLES: [&str; 5] =
    ["browser_automation", "task_memory", "page_read_debug", "pks_learning", "system_tools"];

fn aag(r: &CallToolResult) -> Value {
    r.meta.as_ref().and_then(|m| m.0.get("io.nova/aag").cloned()).unwrap_or(Value::Null)
}

async fn ready(c: &Client) -> anyhow::Result<()> {
    let b = c.structured("nova.tools_bundle", json!({"bundle": "browser_automation"})).await?;
    anyhow::ensure!(b["ok"] == json!(true), "{b}");
    Ok(())
}

fn nova_cli(nova: &Nova, arg: &str) -> anyhow::Result<String> {
    let out = nova.cli().arg(arg).output()?;
    anyhow::ensure!(out.status.success(), "nova {arg}: {}", String::from_utf8_lossy(&out.stderr));
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

#[tokio::test(flavor = "multi_thread")]
async fn bootstrap_then_perceive_first_block_with_the_seed_shape_and_clear() -> anyhow::Result<()> {
    let nova = Nova::start_with_default_gates().await?;
    let c = nova.client().await?;
    let first = c.call("nova.navigate", json!({"url": nova.url("basic.html")})).await?;
    assert_eq!(first.is_error, Some(true));
    let a = aag(&first);
    for key in [
        "gateId",
        "gateMode",
        "status",
        "stage",
        "retryable",
        "retryAfterMs",
        "reasonCode",
        "details",
        "forceBypassAvailable",
        "knownBundles",
        "preferredBundle",
    ] {
        assert!(a.get(key).is_some(), "`{key}` missing from {a}");
    }
    assert_eq!(
        (a["gateId"].clone(), a["gateMode"].clone(), a["status"].clone(), a["stage"].clone()),
        (json!("setup.bootstrap_required"), json!("block"), json!("blocked"), json!("aag_preflight"))
    );
    assert_eq!(
        (a["preferredBundle"].clone(), a["knownBundles"].clone()),
        (json!("browser_automation"), json!(BUNDLES)),
        "bundles named as in docs/gates.md"
    );
    let meta = first.meta.clone().unwrap_or_default();
    assert!(meta.0.contains_key("io.nova/onboarding"), "onboarding advisory on the first call");
    let s = first.structured_content.clone().unwrap_or_default();
    assert_eq!(s["_aagGates"]["bootstrapWarning"]["resolution"]["tool"], "nova.tools_bundle", "{s}");
    let row = &nova.tool_rows("nova.navigate", 1)?[0];
    assert_eq!(
        (
            row["outcome_kind"].clone(),
            row["executed"].clone(),
            row["error_code"].clone(),
            row["block_stage"].clone()
        ),
        (
            json!("blocked_preflight"),
            json!(0),
            json!("aag_blocked:setup.bootstrap_required"),
            json!("aag_preflight")
        )
    );

    // Setup tools pass the bootstrap gate: the instructions say how to clear it.
    let again = c.call("nova.get_instructions", json!({})).await?;
    assert!(
        again.meta.as_ref().is_none_or(|m| !m.0.contains_key("io.nova/onboarding")),
        "onboarding once per session"
    );
    let quick = again.structured_content.clone().unwrap_or_default();
    assert_eq!((quick["ok"].clone(), quick["mode"].clone()), (json!(true), json!("quickstart")), "{quick}");
    let text = quick["instructions"].as_str().unwrap_or_default();
    assert!(text.contains("nova.tools_bundle") && text.contains("safety.perceive_first"), "{text}");
    let task = c.structured("nova.get_instructions", json!({"mode": "task"})).await?;
    let text = task["instructions"].as_str().unwrap_or_default();
    assert_eq!(task["mode"], "task", "{task}");
    assert!(text.contains("nova.task_instance_create") && text.contains("evidence_gap"), "{text}");
    let still = c.call("nova.read_text", json!({})).await?;
    assert_eq!(aag(&still)["gateId"], "setup.bootstrap_required", "instructions alone do not load a bundle");
    ready(&c).await?;
    let nav = c.structured("nova.navigate", json!({"url": nova.url("basic.html")})).await?;
    assert_eq!(nav["ok"], true, "{nav}");

    // Clicking a page not perceived since it loaded is blocked; perceiving clears it.
    let click = c.call("nova.click_selector", json!({"selector": "#plain"})).await?;
    let a = aag(&click);
    assert_eq!(
        (a["gateId"].clone(), a["forceBypassAvailable"].clone()),
        (json!("safety.perceive_first"), json!(true)),
        "{a}"
    );
    assert_eq!(a["details"]["clearWith"][0], "nova.perceive");
    c.structured("nova.perceive", json!({"maxElements": 5})).await?;
    let typed = c.structured("nova.type_selector", json!({"selector": "#plain", "text": "hi"})).await?;
    assert_eq!(typed["actionDispatched"], true, "{typed}");
    // A new navigation makes the perception stale again; read_text clears it too.
    c.structured("nova.navigate", json!({"url": nova.url("page2.html")})).await?;
    let stale = c.call("nova.type_selector", json!({"selector": "input", "text": "x"})).await?;
    assert_eq!(aag(&stale)["gateId"], "safety.perceive_first");
    // Bypassable: an explicit force passes and is reported as bypassed.
    let forced =
        c.structured("nova.click_selector", json!({"selector": "a", "_meta": {"forceBypass": true}})).await?;
    assert_eq!(forced["_aagGates"]["perceiveFirst"]["status"], "bypassed", "{forced}");
    assert_eq!(forced["actionDispatched"], true, "{forced}");
    let rows = nova.tool_rows("nova.type_selector", 2)?;
    assert_eq!(rows.iter().filter(|r| r["outcome_kind"] == "blocked_preflight").count(), 1);

    // read_text is a way of looking too: it clears the gate like perceive does.
    c.structured("nova.navigate", json!({"url": nova.url("basic.html")})).await?;
    let stale = c.call("nova.type_selector", json!({"selector": "#plain", "text": "x"})).await?;
    assert_eq!(aag(&stale)["gateId"], "safety.perceive_first");
    c.structured("nova.read_text", json!({"maxChars": 50})).await?;
    let typed = c.structured("nova.type_selector", json!({"selector": "#plain", "text": "x"})).await?;
    assert_eq!(typed["actionDispatched"], true, "read_text cleared it: {typed}");
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn the_emergency_stop_blocks_everything_survives_a_restart_and_only_the_person_releases_it()
-> anyhow::Result<()> {
    let nova = Nova::start_with_default_gates().await?;
    let c = nova.client().await?;
    ready(&c).await?;
    c.structured("nova.navigate", json!({"url": nova.url("basic.html")})).await?;
    assert!(nova_cli(&nova, "stop")?.contains("engaged"));
    let blocked = c.call("nova.perceive", json!({"_meta": {"forceBypass": true}})).await?;
    let a = aag(&blocked);
    assert_eq!(
        (a["gateId"].clone(), a["forceBypassAvailable"].clone(), a["details"]["by"].clone()),
        (json!("safety.emergency_stop"), json!(false), json!("cli")),
        "{a}"
    );
    assert_eq!(a["retryAfterMs"], 30000);

    nova.restart_hub().await?;
    // The same agent session, through its relay: the bundle it loaded is replayed to the new hub.
    let still = c.call("nova.read_text", json!({})).await?;
    assert_eq!(aag(&still)["gateId"], "safety.emergency_stop", "the stop survived the hub restart");
    assert!(nova_cli(&nova, "resume")?.contains("released"));
    let read = c.structured("nova.read_text", json!({})).await?;
    assert_eq!(read["ok"], true, "released, and no bootstrap block after the restart: {read}");
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn settings_gates_disk_domain_policy_and_new_tabs_block_without_bypass() -> anyhow::Result<()> {
    let nova = Nova::start_with_default_gates().await?;
    let c = nova.client().await?;
    ready(&c).await?;
    let settings = |extra: &str| std::fs::write(nova.data.join("settings.json"), extra);
    // A threshold above any real free space simulates a full disk.
    settings(r#"{"diskSpaceLowMb": 1000000000}"#)?;
    let disk = c
        .call("nova.navigate", json!({"url": nova.url("basic.html"), "_meta": {"forceBypass": true}}))
        .await?;
    let a = aag(&disk);
    assert_eq!(
        (a["gateId"].clone(), a["forceBypassAvailable"].clone()),
        (json!("safety.disk_space_low"), json!(false)),
        "{a}"
    );
    assert!(a["details"]["freeBytes"].as_u64().is_some());
    assert_eq!(a["details"]["thresholdBytes"], 1_000_000_000u64 * 1_048_576, "{a}");

    // Free space above the threshold clears it.
    settings(r#"{"domainPolicy": {"127.0.0.1": {"interact": "block"}}, "agentNewTabsDisabled": true}"#)?;
    let nav = c.structured("nova.navigate", json!({"url": nova.url("basic.html")})).await?;
    assert_eq!(nav["ok"], true, "{nav}");
    c.structured("nova.perceive", json!({"maxElements": 3})).await?;
    let click = c.call("nova.click_selector", json!({"selector": "#plain"})).await?;
    let a = aag(&click);
    assert_eq!(
        (a["gateId"].clone(), a["details"]["actionGroup"].clone()),
        (json!("domain.policy.blocked"), json!("interact")),
        "{a}"
    );
    let tab = c.call("nova.navigate", json!({"url": nova.url("page2.html"), "newTab": true})).await?;
    assert_eq!(aag(&tab)["gateId"], "agent.new_tabs_disabled");
    // Navigating in the current tab is what the person allows.
    let here = c.structured("nova.navigate", json!({"url": nova.url("page2.html")})).await?;
    assert_eq!((here["ok"].clone(), here["title"].clone()), (json!(true), json!("Second page")), "{here}");
    c.structured("nova.navigate", json!({"url": nova.url("basic.html")})).await?;
    c.structured("nova.perceive", json!({"maxElements": 3})).await?;
    settings("{}")?;
    let click = c.structured("nova.click_selector", json!({"selector": "#plain"})).await?;
    assert_eq!(click["ok"], true, "policy lifted: {click}");
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn loops_reclaims_and_awareness_warnings() -> anyhow::Result<()> {
    let nova = Nova::start_with_default_gates().await?;
    let alice = nova.client().await?;
    ready(&alice).await?;
    alice.structured("nova.navigate", json!({"url": nova.url("basic.html"), "agentId": "alice"})).await?;
    // The fifth identical call within a minute is a loop.
    for _ in 0..4 {
        alice.structured("nova.read_text", json!({"agentId": "alice", "maxChars": 10})).await?;
    }
    let looped = alice.call("nova.read_text", json!({"agentId": "alice", "maxChars": 10})).await?;
    let a = aag(&looped);
    assert_eq!(
        (a["gateId"].clone(), a["details"]["repeats"].clone(), a["details"]["scene"]["pageUrl"].clone()),
        (json!("loop.detected"), json!(5), json!(nova.url("basic.html"))),
        "{a}"
    );
    // The block says when waiting frees the call: when the first of the four earlier reads
    // leaves the minute.
    let wait = a["retryAfterMs"].as_u64().unwrap_or_default();
    assert!((1..=60_001).contains(&wait) && a["details"]["retryAfterMs"] == wait, "{a}");
    assert!(a["message"].as_str().unwrap_or_default().contains("What counts as a change"), "{a}");
    let again = alice.call("nova.read_text", json!({"agentId": "alice", "maxChars": 10})).await?;
    assert_eq!(aag(&again)["gateId"], "loop.detected", "the page is still unchanged");
    let other = alice.structured("nova.read_text", json!({"agentId": "alice", "maxChars": 11})).await?;
    assert_eq!(other["ok"], true, "a changed call is a new approach: {other}");
    // A change of the page is progress: the same read again, after a click changed its text.
    let click =
        alice.structured("nova.click_selector", json!({"agentId": "alice", "selector": "#counter"})).await?;
    assert_eq!(click["ok"], true, "{click}");
    let read = alice.structured("nova.read_text", json!({"agentId": "alice", "maxChars": 10})).await?;
    assert_eq!(read["ok"], true, "the page changed since the last identical read: {read}");

    // Bob takes the tab with a reason; Alice's next call there gets the handover once.
    let bob = nova.client().await?;
    ready(&bob).await?;
    bob.structured(
        "nova.tab_claim",
        json!({"targetId": "active", "agentId": "bob", "reclaimReason": "urgent fix"}),
    )
    .await?;
    let note = alice.call("nova.perceive", json!({"agentId": "alice"})).await?;
    let a = aag(&note);
    assert_eq!(
        (a["gateId"].clone(), a["details"]["reclaimedBy"].clone(), a["details"]["reason"].clone()),
        (json!("claim.reclaim_notification"), json!("bob"), json!("urgent fix")),
        "{a}"
    );
    let next = alice.call_err("nova.perceive", json!({"agentId": "alice"})).await?;
    assert_eq!(next.code.0, -32040, "delivered once; then the lease answers");

    // Task profiles exist and this session never looked: a warning, once; task_search clears it.
    bob.structured(
        "nova.task_profile_upsert",
        json!({"taskType": "t", "displayName": "Fixture check", "goal": "g"}),
    )
    .await?;
    let carol = nova.client().await?;
    ready(&carol).await?;
    let warned = carol.structured("nova.tab_claim", json!({"targetId": "active", "agentId": "bob"})).await?;
    assert_eq!(
        warned["_aagGates"]["taskDiscoveryRecommended"]["gateId"], "etm.task_discovery_recommended",
        "{warned}"
    );
    let quiet = carol.structured("nova.read_text", json!({"agentId": "bob", "maxChars": 5})).await?;
    assert!(quiet["_aagGates"].get("taskDiscoveryRecommended").is_none(), "{quiet}");
    // A session that looks for a matching task first is never reminded.
    let dave = nova.client().await?;
    ready(&dave).await?;
    let found = dave.structured("nova.task_search", json!({"query": "fixture"})).await?;
    assert_eq!(found["ok"], true, "{found}");
    let work = dave.structured("nova.tab_claim", json!({"targetId": "active", "agentId": "bob"})).await?;
    assert!(work["_aagGates"].get("taskDiscoveryRecommended").is_none(), "task_search cleared it: {work}");

    // Bob's active task run is ignored for 12 work calls: a reminder.
    let run = bob
        .structured("nova.task_instance_create", json!({"agentId": "bob", "adHocContext": {"taskType": "t", "displayName": "d", "goal": "g",
            "completionCondition": {"coverageMode": "exploratory", "unitKind": "item", "stopMetric": "checked_units"}}}))
        .await?;
    let mut reminders = Vec::new();
    for i in 1..=12 {
        let r = bob.structured("nova.read_text", json!({"agentId": "bob", "maxChars": 20 + i})).await?;
        if let Some(w) = r["_aagGates"].get("activeInstanceContext") {
            reminders.push((i, w.clone()));
        }
    }
    let (at, reminded) = reminders.first().cloned().unwrap_or_default();
    assert_eq!(
        (at, reminded["details"]["instanceId"].clone(), reminded["status"].clone()),
        (12, run["instanceId"].clone(), json!("warned")),
        "the reminder comes with the 12th work call: {reminders:?}"
    );
    // Touching the run clears it.
    bob.structured("nova.task_instance_get", json!({"agentId": "bob", "instanceId": run["instanceId"]}))
        .await?;
    let after = bob.structured("nova.read_text", json!({"agentId": "bob", "maxChars": 99})).await?;
    assert!(after["_aagGates"].get("activeInstanceContext").is_none(), "{after}");
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn work_stays_in_the_agents_tab_and_a_changed_active_tab_is_pointed_out() -> anyhow::Result<()> {
    let nova = Nova::start_with_default_gates().await?;
    std::fs::write(nova.data.join("settings.json"), r#"{"agentCrossTabNavigationDisabled": true}"#)?;
    let alice = nova.client().await?;
    ready(&alice).await?;
    let a =
        alice.structured("nova.navigate", json!({"url": nova.url("basic.html"), "agentId": "alice"})).await?;
    let tab_a = a["targetId"].clone();
    alice.structured("nova.perceive", json!({"agentId": "alice", "maxElements": 1})).await?;

    // Bob opens a second tab (it becomes the active one), then lets it go.
    let bob = nova.client().await?;
    ready(&bob).await?;
    let b = bob
        .structured("nova.navigate", json!({"url": nova.url("page2.html"), "newTab": true, "agentId": "bob"}))
        .await?;
    let tab_b = b["targetId"].clone();
    assert_ne!(tab_a, tab_b);
    bob.structured("nova.tab_release", json!({"targetId": tab_b, "agentId": "bob"})).await?;

    // A tab she never perceived is a target change: clicking there needs a perceive first.
    let click = alice
        .call("nova.click_selector", json!({"agentId": "alice", "targetId": tab_b, "selector": "a"}))
        .await?;
    assert_eq!(aag(&click)["gateId"], "safety.perceive_first", "{:?}", click.structured_content);
    // Alice still thinks of tab A as the active one: a warning, not a block.
    let read = alice.structured("nova.read_text", json!({"agentId": "alice", "maxChars": 10})).await?;
    let w = &read["_aagGates"]["tabAwareness"];
    assert_eq!(
        (w["details"]["lastSeenActive"].clone(), w["details"]["activeNow"].clone()),
        (tab_a.clone(), tab_b.clone()),
        "{read}"
    );
    // Moving her work to the other tab is refused while she holds tab A.
    let moved = alice
        .call("nova.navigate", json!({"url": nova.url("page2.html"), "targetId": tab_b, "agentId": "alice"}))
        .await?;
    let g = aag(&moved);
    assert_eq!(
        (g["gateId"].clone(), g["details"]["heldTabs"][0].clone()),
        (json!("agent.cross_tab_navigation_disabled"), tab_a.clone()),
        "{g}"
    );
    // Naming the tab removes the ambiguity; the warning stays for `active` until she looks.
    let named = alice
        .structured("nova.read_text", json!({"agentId": "alice", "targetId": tab_b, "maxChars": 12}))
        .await?;
    assert!(named["_aagGates"].get("tabAwareness").is_none(), "{named}");
    let again = alice.structured("nova.read_text", json!({"agentId": "alice", "maxChars": 13})).await?;
    assert!(again["_aagGates"].get("tabAwareness").is_some(), "{again}");
    alice.structured("nova.perceive", json!({"agentId": "alice", "maxElements": 1})).await?;
    let fresh = alice.structured("nova.read_text", json!({"agentId": "alice", "maxChars": 14})).await?;
    assert!(fresh["_aagGates"].get("tabAwareness").is_none(), "perceive cleared it: {fresh}");
    // Her own tab is hers to navigate.
    let own = alice
        .structured(
            "nova.navigate",
            json!({"url": nova.url("page2.html"), "targetId": tab_a, "agentId": "alice"}),
        )
        .await?;
    assert_eq!(own["ok"], true, "{own}");
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn screenshots_stay_within_the_inline_budget() -> anyhow::Result<()> {
    let nova = Nova::start_with_default_gates().await?;
    let c = nova.client().await?;
    ready(&c).await?;
    c.structured("nova.navigate", json!({"url": nova.url("basic.html")})).await?;
    let small = c.call("nova.capture_screenshot", json!({})).await?;
    let s = small.structured_content.clone().unwrap_or_default();
    assert_eq!(s["responseMode"], "inline", "{s}");
    assert!(small.content.iter().any(|b| b.as_image().is_some()), "a small capture comes inline");

    c.structured("nova.navigate", json!({"url": nova.url("noise.html")})).await?;
    let auto = c.call("nova.capture_screenshot", json!({})).await?;
    let s = auto.structured_content.clone().unwrap_or_default();
    assert!(s["bytes"].as_u64().is_some_and(|b| b > 1024 * 1024), "the noise page is over 1 MB: {s}");
    assert_eq!(s["responseMode"], "reference", "{s}");
    assert_eq!(s["_aagGates"]["screenshotBudget"]["reasonCode"], "screenshot.over_budget");
    assert!(auto.content.iter().all(|b| b.as_image().is_none()), "over budget: no image inline");
    let path = s["screenshotFilePath"].as_str().unwrap_or_default().to_owned();
    assert_eq!(
        std::fs::metadata(&path)?.len(),
        s["bytes"].as_u64().unwrap_or(0),
        "the file holds the capture"
    );

    let inline = c.call("nova.capture_screenshot", json!({"responseMode": "inline"})).await?;
    let a = aag(&inline);
    assert_eq!(
        (
            a["gateId"].clone(),
            a["gateMode"].clone(),
            a["reasonCode"].clone(),
            a["forceBypassAvailable"].clone()
        ),
        (json!("aag.screenshot_budget"), json!("block"), json!("screenshot.over_budget"), json!(true)),
        "{a}"
    );
    assert_eq!(
        (a["stage"].clone(), a["details"]["width"].as_u64().is_some()),
        (json!("aag_postcapture"), true)
    );
    assert!(inline.content.iter().all(|b| b.as_image().is_none()), "refused: no image");
    let refused = nova.count_until(
        "SELECT COUNT(*) FROM observations WHERE tool = 'nova.capture_screenshot' AND ok = 0
           AND block_stage = 'aag_postcapture' AND error_code = 'aag_blocked:aag.screenshot_budget'",
        1,
    )?;
    assert_eq!(refused, 1, "the refusal is recorded");
    // Bypassable: a forced call comes inline, reported as bypassed.
    let forced = c
        .call("nova.capture_screenshot", json!({"responseMode": "inline", "_meta": {"forceBypass": true}}))
        .await?;
    let s = forced.structured_content.clone().unwrap_or_default();
    assert_eq!(s["_aagGates"]["screenshotBudget"]["status"], "bypassed", "{s}");
    assert!(forced.content.iter().any(|b| b.as_image().is_some()), "forced inline");
    // JPEG captures are measured too.
    let jpeg = c
        .structured("nova.capture_screenshot", json!({"format": "jpeg", "responseMode": "reference"}))
        .await?;
    assert!(jpeg["width"].as_u64().is_some_and(|w| w > 0) && jpeg["height"].as_u64().is_some(), "{jpeg}");
    let thumb = c.call("nova.capture_screenshot", json!({"responseMode": "thumbnail+reference"})).await?;
    let image = thumb.content.iter().find_map(|b| b.as_image().cloned()).expect("a thumbnail");
    assert_eq!(image.mime_type, "image/jpeg");
    assert!(image.data.len() < 400_000, "the thumbnail is small: {} base64 bytes", image.data.len());
    let forced =
        c.call("nova.capture_screenshot", json!({"responseMode": "inline", "allowLarge": true})).await?;
    assert!(forced.content.iter().any(|b| b.as_image().is_some()), "allowLarge returns it inline");
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn configured_modes_switch_a_gate_off_or_let_it_warn_or_shadow_block() -> anyhow::Result<()> {
    let nova = Nova::start_with_default_gates().await?;
    let modes =
        |m: Value| std::fs::write(nova.data.join("settings.json"), json!({"gateModes": m}).to_string());
    modes(json!({
        "setup.bootstrap_required": "off", "safety.perceive_first": "shadow_block",
        "loop.detected": "warn", "aag.screenshot_budget": "warn",
    }))?;
    let c = nova.client().await?;
    // off: no bundle, no block and no bootstrap warning.
    let nav = c.structured("nova.navigate", json!({"url": nova.url("basic.html")})).await?;
    assert_eq!(nav["ok"], true, "{nav}");
    assert!(nav["_aagGates"].get("bootstrapWarning").is_none(), "{nav}");

    // shadow_block: the click runs, reported (and recorded) as what block would have stopped.
    let click = c.structured("nova.click_selector", json!({"selector": "#plain"})).await?;
    let g = &click["_aagGates"]["perceiveFirst"];
    assert_eq!(
        (click["actionDispatched"].clone(), g["status"].clone(), g["gateMode"].clone()),
        (json!(true), json!("would_block"), json!("shadow_block")),
        "{click}"
    );
    let row = nova.tool_rows("nova.click_selector", 1)?[0].clone();
    assert_eq!(
        (row["outcome_kind"].clone(), row["executed"].clone(), row["aag_gates"].clone()),
        (json!("success"), json!(1), json!(r#"{"safety.perceive_first":"would_block"}"#)),
        "{row}"
    );

    // warn: the fifth identical call runs with a warning.
    let mut last = Value::Null;
    for _ in 0..5 {
        last = c.structured("nova.read_text", json!({"maxChars": 7})).await?;
    }
    let g = &last["_aagGates"]["loopDetected"];
    assert_eq!(
        (last["ok"].clone(), g["status"].clone(), g["details"]["repeats"].clone()),
        (json!(true), json!("warned"), json!(5)),
        "{last}"
    );

    // The screenshot budget in warn mode sends an over-budget inline capture, with a warning.
    c.structured("nova.navigate", json!({"url": nova.url("noise.html")})).await?;
    let shot = c.call("nova.capture_screenshot", json!({"responseMode": "inline"})).await?;
    let s = shot.structured_content.clone().unwrap_or_default();
    let g = &s["_aagGates"]["screenshotBudget"];
    assert_eq!(
        (g["status"].clone(), g["gateMode"].clone(), g["reasonCode"].clone()),
        (json!("warned"), json!("warn"), json!("screenshot.over_budget")),
        "{s}"
    );
    assert!(shot.content.iter().any(|b| b.as_image().is_some()), "sent inline");
    // ... and in shadow_block mode reports what block would do.
    modes(json!({"setup.bootstrap_required": "off", "aag.screenshot_budget": "shadow_block"}))?;
    let shot = c.structured("nova.capture_screenshot", json!({"responseMode": "inline"})).await?;
    assert_eq!(shot["_aagGates"]["screenshotBudget"]["status"], "would_block", "{shot}");
    let rows = nova.tool_rows("nova.capture_screenshot", 2)?;
    assert_eq!(
        rows.iter().map(|r| r["aag_gates"].clone()).collect::<Vec<_>>(),
        [json!(r#"{"aag.screenshot_budget":"warned"}"#), json!(r#"{"aag.screenshot_budget":"would_block"}"#)]
    );
    Ok(())
}
