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
    // The relay lists by itself what a hub would: the setup tools, or everything when asked.
    let all = nova_e2e::Client::stdio_with(&nova.dist.host, &nova.data, &["--tools", "all"]).await?;
    let tools = all.tool_names().await?;
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
    let c = nova.client().await?;
    let core = c.tool_names().await?;
    assert!(
        core.iter().any(|n| n == "nova.tools_bundle") && !core.iter().any(|n| n == "nova.perceive"),
        "{core:?}"
    );
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

/// The `notifications/tools/list_changed` count once it reaches `n` (or after 10 s).
async fn list_changes(c: &nova_e2e::Client, n: usize) -> usize {
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while c.tool_list_changes() < n && std::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    c.tool_list_changes()
}

/// `tools/list` starts with the setup tools and grows with each bundle loaded, announced with
/// `notifications/tools/list_changed`; `--tools`, `?tools=` choose more from the start; a
/// tool not listed is still callable by name; a bad choice is refused naming it.
#[tokio::test(flavor = "multi_thread")]
async fn the_tool_list_starts_lean_and_grows_with_each_bundle_loaded() -> anyhow::Result<()> {
    let nova = Nova::start_with_default_gates().await?;
    let everything = nova_host::mcp::listing::Listing::All.tools([]).len();
    let c = nova.client().await?;
    let names = |v: Vec<String>| v.into_iter().collect::<std::collections::BTreeSet<_>>();
    let core = names(c.tool_names().await?);
    assert!(core.contains("nova.tools_bundle") && core.contains("nova.get_instructions"), "{core:?}");
    assert!(!core.contains("nova.perceive") && core.len() < 10, "{core:?}");

    let loaded = c.structured("nova.tools_bundle", json!({"bundle": "browser_automation"})).await?;
    assert!(loaded["tools"].as_array().is_some_and(|t| t.contains(&json!("nova.perceive"))), "{loaded}");
    assert_eq!(list_changes(&c, 1).await, 1, "loading a bundle announces the new list");
    let browsing = names(c.tool_names().await?);
    assert!(browsing.contains("nova.perceive") && browsing.contains("nova.click_selector"), "{browsing:?}");
    assert!(core.is_subset(&browsing) && !browsing.contains("nova.task_profile_upsert"), "{browsing:?}");
    // The same bundle again changes nothing; another one grows the list again.
    c.structured("nova.tools_bundle", json!({"bundle": "browser_automation"})).await?;
    c.structured("nova.tools_bundle", json!({"bundle": "task_memory"})).await?;
    list_changes(&c, 2).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(c.tool_list_changes(), 2, "one announcement per bundle that added tools");
    assert!(names(c.tool_names().await?).contains("nova.task_profile_upsert"));

    // Not listed, still callable: a pks_learning tool by name in this session.
    assert!(!names(c.tool_names().await?).contains("nova.pks_list"));
    let listed_not = c.structured("nova.pks_list", json!({})).await?;
    assert_eq!(listed_not["ok"], true, "{listed_not}");

    // More from the start: every tool over stdio, bundles over HTTP.
    let all = nova_e2e::Client::stdio_with(&nova.dist.host, &nova.data, &["--tools", "all"]).await?;
    assert_eq!(all.tool_names().await?.len(), everything);
    let hub = nova_e2e::wait_for_hub(&nova.data, Duration::from_secs(5))?;
    let http = nova_e2e::Client::http(&format!("{}?tools=task_memory", hub.http_url), &nova.data).await?;
    let listed = names(http.tool_names().await?);
    assert!(
        listed.contains("nova.task_profile_upsert") && listed.contains("nova.tools_bundle"),
        "{listed:?}"
    );
    assert!(!listed.contains("nova.perceive"), "{listed:?}");
    let bad = nova_e2e::Client::http(&format!("{}?tools=everything", hub.http_url), &nova.data).await;
    let err = format!("{:#}", bad.err().ok_or_else(|| anyhow::anyhow!("?tools=everything was accepted"))?);
    assert!(err.contains("everything") && err.contains("browser_automation"), "{err}");
    let refused = std::process::Command::new(&nova.dist.host)
        .args(["mcp", "--tools", "everything", "--data-dir"])
        .arg(&nova.data)
        .output()?;
    assert_eq!(refused.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains("`everything` is not `core`, `all` or a bundle")
    );
    Ok(())
}
