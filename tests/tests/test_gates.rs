//! AAG gates with the product's default modes, in real Chromium: each gate blocks or warns with
//! the seed's shape and clears as documented; blocked calls are recorded and never executed.

use nova_e2e::{Client, Nova};
use rmcp::model::CallToolResult;
use serde_json::{Value, json};

fn aag(r: &CallToolResult) -> Value {
    r.meta.as_ref().and_then(|m| m.0.get("io.nova/aag").cloned()).unwrap_or(Value::Null)
}

async fn ready(c: &Client) -> anyhow::Result<()> {
    let b = c.structured("nova.tools_bundle", json!({"bundle": "browser_automation"})).await?;
    anyhow::ensure!(b["ok"] == json!(true), "{b}");
    Ok(())
}

fn nova_cli(nova: &Nova, arg: &str) -> anyhow::Result<String> {
    let out =
        std::process::Command::new(&nova.dist.host).arg("--data-dir").arg(&nova.data).arg(arg).output()?;
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
        (a["preferredBundle"].clone(), a["knownBundles"].as_array().map(Vec::len)),
        (json!("browser_automation"), Some(5))
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

    let again = c.call("nova.get_instructions", json!({})).await?;
    assert!(
        again.meta.as_ref().is_none_or(|m| !m.0.contains_key("io.nova/onboarding")),
        "onboarding once per session"
    );
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

    settings(r#"{"domainPolicy": {"127.0.0.1": {"interact": "block"}}, "agentNewTabsDisabled": true}"#)?;
    c.structured("nova.navigate", json!({"url": nova.url("basic.html")})).await?;
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
        (a["gateId"].clone(), a["retryAfterMs"].clone()),
        (json!("loop.detected"), json!(5000)),
        "{a}"
    );

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

    // Bob's active task run is ignored for 12 work calls: a reminder.
    let run = bob
        .structured("nova.task_instance_create", json!({"agentId": "bob", "adHocContext": {"taskType": "t", "displayName": "d", "goal": "g",
            "completionCondition": {"coverageMode": "exploratory", "unitKind": "item", "stopMetric": "checked_units"}}}))
        .await?;
    let mut reminded = Value::Null;
    for i in 0..12 {
        let r = bob.structured("nova.read_text", json!({"agentId": "bob", "maxChars": 20 + i})).await?;
        if let Some(w) = r["_aagGates"].get("activeInstanceContext") {
            reminded = w.clone();
            break;
        }
    }
    assert_eq!(reminded["details"]["instanceId"], run["instanceId"], "{reminded}");
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
        (json!("agent.cross_tab_navigation_disabled"), tab_a),
        "{g}"
    );
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
        (a["gateId"].clone(), a["reasonCode"].clone(), a["forceBypassAvailable"].clone()),
        (json!("aag.screenshot_budget"), json!("screenshot.over_budget"), json!(true)),
        "{a}"
    );
    let thumb = c.call("nova.capture_screenshot", json!({"responseMode": "thumbnail+reference"})).await?;
    let image = thumb.content.iter().find_map(|b| b.as_image().cloned()).expect("a thumbnail");
    assert_eq!(image.mime_type, "image/jpeg");
    assert!(image.data.len() < 400_000, "the thumbnail is small: {} base64 bytes", image.data.len());
    let forced =
        c.call("nova.capture_screenshot", json!({"responseMode": "inline", "allowLarge": true})).await?;
    assert!(forced.content.iter().any(|b| b.as_image().is_some()), "allowLarge returns it inline");
    Ok(())
}
