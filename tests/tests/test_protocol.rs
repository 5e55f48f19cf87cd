//! The MCP contract seen by agents: arguments, leases, evidence rows, reconnects.

use std::time::Duration;

use nova_e2e::Nova;
use serde_json::json;

#[tokio::test(flavor = "multi_thread")]
async fn bad_arguments_are_rejected_by_name_and_recorded() -> anyhow::Result<()> {
    let nova = Nova::start_with_settings(nova_e2e::ROW_TEST_SETTINGS).await?;
    let c = nova.client().await?;
    let unknown = c.call_err("nova.perceive", json!({"bogus": 1})).await?;
    assert_eq!(unknown.code.0, -32602);
    assert!(unknown.message.contains("bogus"), "{}", unknown.message);
    let range = c.call_err("nova.perceive", json!({"maxElements": 0})).await?;
    assert!(range.message.contains("maxElements") && range.message.contains("5000"), "{}", range.message);
    let ttl = c.call_err("nova.tab_claim", json!({"targetId": "active", "ttlMs": 10})).await?;
    assert!(ttl.message.contains("ttlMs") && ttl.message.contains("1800000"));
    let scheme = c.call_err("nova.navigate", json!({"url": "javascript:alert(1)"})).await?;
    assert!(scheme.message.contains("url"));
    let rows = nova.observations(4)?;
    assert!(rows.iter().all(|r| r["outcome_kind"] == "invalid_params" && r["ok"] == 0 && r["executed"] == 0));
    assert_eq!(rows[0]["tool"], "nova.perceive");
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn every_call_becomes_an_observation_row() -> anyhow::Result<()> {
    let nova = Nova::start_with_settings(nova_e2e::ROW_TEST_SETTINGS).await?;
    let c = nova.client().await?;
    let nav = c.structured("nova.navigate", json!({"url": nova.url("basic.html")})).await?;
    c.structured("nova.perceive", json!({})).await?;
    c.structured("nova.click_selector", json!({"selector": "#counter"})).await?;
    let _ = c.call("nova.click_selector", json!({"selector": "#disabled"})).await?;
    let rows = nova.observations(4)?;
    let kinds: Vec<_> =
        rows.iter().map(|r| r["action_kind"].as_str().unwrap_or_default().to_owned()).collect();
    assert_eq!(kinds, ["navigate", "read", "interact", "interact"]);
    let seqs: Vec<i64> = rows.iter().filter_map(|r| r["seq"].as_i64()).collect();
    assert!(seqs.windows(2).all(|w| w[1] > w[0]), "monotonic seq: {seqs:?}");
    assert_eq!(rows[0]["target_id"], nav["targetId"]);
    assert!(rows[0]["url_after"].as_str().unwrap_or_default().ends_with("/basic.html"));
    assert_eq!(rows[2]["outcome_kind"], "success");
    assert_eq!(rows[2]["selector"], "#counter");
    let flags = rows[2]["signal_flags"].as_i64().unwrap_or(0);
    assert_ne!(flags & (1 << 7), 0, "MutationCommitted on a dispatched click");
    assert_eq!(rows[3]["outcome_kind"], "failed");
    assert_eq!(rows[3]["reason_code"], "element_disabled");
    assert_eq!(rows[3]["signal_flags"].as_i64().unwrap_or(0) & (1 << 7), 0);
    assert!(rows.iter().all(|r| r["mcp_session"] == rows[0]["mcp_session"]
        && r["call_id"].as_str().is_some_and(|s| s.len() == 36)));
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn a_claimed_tab_refuses_other_agents_until_released() -> anyhow::Result<()> {
    let nova = Nova::start_with_settings(nova_e2e::ROW_TEST_SETTINGS).await?;
    let a = nova.client().await?;
    let b = nova.client().await?;
    a.structured("nova.navigate", json!({"url": nova.url("basic.html"), "agentId": "alice"})).await?;
    let claim = a
        .structured("nova.tab_claim", json!({"targetId": "active", "agentId": "alice", "ttlMs": 60000}))
        .await?;
    assert_eq!((claim["claimed"].clone(), claim["claimOwner"].clone()), (json!(true), json!("alice")));
    assert!(claim["leaseRemainingMs"].as_i64().unwrap_or(0) > 50_000);

    let refused =
        b.call_err("nova.click_selector", json!({"selector": "#counter", "agentId": "bob"})).await?;
    assert_eq!(refused.code.0, -32040);
    assert!(refused.message.contains("alice"));
    assert_eq!(refused.data.as_ref().map(|d| d["reasonCode"].clone()), Some(json!("claim.owner_mismatch")));
    let steal = b.call_err("nova.tab_claim", json!({"targetId": "active", "agentId": "bob"})).await?;
    assert_eq!(steal.code.0, -32040);
    let not_owner = b.call_err("nova.tab_release", json!({"targetId": "active", "agentId": "bob"})).await?;
    assert_eq!(not_owner.code.0, -32040);

    let release = a.structured("nova.tab_release", json!({"targetId": "active", "agentId": "alice"})).await?;
    assert_eq!(release["released"], true);
    let ok = b.structured("nova.click_selector", json!({"selector": "#counter", "agentId": "bob"})).await?;
    assert_eq!(ok["actionDispatched"], true);
    let rows = nova.observations(7)?;
    assert!(
        rows.iter()
            .any(|r| r["outcome_kind"] == "blocked_preflight" && r["reason_code"] == "claim.owner_mismatch")
    );
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn the_extension_reconnects_after_the_hub_is_killed() -> anyhow::Result<()> {
    let nova = Nova::start_with_settings(nova_e2e::ROW_TEST_SETTINGS).await?;
    let before = nova.hub_pid().expect("hub");
    nova.kill_hub()?;
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    let after = loop {
        if let Some(pid) = nova.hub_pid().filter(|p| *p != before)
            && nova_e2e::wait_for_hub(&nova.data, Duration::from_secs(5)).is_ok()
        {
            break pid;
        }
        assert!(std::time::Instant::now() < deadline, "no new hub after the kill");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_ne!(after, before);
    let c = nova.client().await?;
    let page = c.structured("nova.navigate", json!({"url": nova.url("page2.html")})).await?;
    assert_eq!(page["title"], "Second page");
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn nova_mcp_without_a_browser_answers_then_relays_once_one_starts() -> anyhow::Result<()> {
    let mut nova = Nova::without_browser().await?;
    let c = nova.client().await?;
    let tools = c.tool_names().await?;
    for t in [
        "nova.perceive",
        "nova.navigate",
        "nova.click_selector",
        "nova.type_selector",
        "nova.capture_screenshot",
        "nova.tab_claim",
    ] {
        assert!(tools.iter().any(|n| n == t), "{t} listed without a browser");
    }
    let r = c.call("nova.perceive", json!({})).await?;
    assert_eq!(r.is_error, Some(true));
    let s = r.structured_content.unwrap_or_default();
    assert_eq!(s["reasonCode"], "browser_not_connected");
    assert_eq!(s["retryable"], true);
    assert!(s["message"].as_str().unwrap_or_default().contains("cargo xtask run"));
    let rows = nova.observations(1)?;
    assert_eq!(rows[0]["reason_code"], "browser_not_connected");

    std::fs::write(nova.data.join("settings.json"), nova_e2e::ROW_TEST_SETTINGS)?;
    nova.launch_browser().await?;
    let nav = c.structured("nova.navigate", json!({"url": nova.url("basic.html")})).await?;
    assert_eq!(nav["title"], "Basic fixture", "the same session now reaches the browser");
    Ok(())
}
