//! Journeys of scripted compliant agents with every gate at the product's default mode (no
//! settings file at all), in the real browser: a compliant agent meeting any block fails the
//! test, and the block is printed.
//!
//! A compliant agent loads a bundle, passes an explicit `targetId` once it knows its tab,
//! perceives after every navigation before touching the page, and acts with a transition
//! contract when an action changes state.

use nova_e2e::Nova;
use nova_e2e::agent::Agent;
use nova_e2e::journey::Journey;
use serde_json::json;

async fn ready(agent: &mut Agent) -> anyhow::Result<()> {
    agent.ready().await
}

/// No row of the store says a gate blocked anything.
fn no_blocks_recorded(nova: &Nova) -> anyhow::Result<()> {
    let blocked =
        nova.count_until("SELECT COUNT(*) FROM observations WHERE outcome_kind = 'blocked_preflight'", 0)?;
    anyhow::ensure!(blocked == 0, "{blocked} calls were recorded as blocked");
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn a_hundred_page_walk_meets_no_block() -> anyhow::Result<()> {
    let nova = Nova::start_with_default_gates().await?;
    let mut a = Agent::new(&nova, "walker").await?;
    ready(&mut a).await?;
    for n in 1..=100 {
        if n % 10 == 1 && n > 1 {
            // Every tenth page is reached by following the page's own link; the agent knows a
            // link click navigates, and perceives before touching the new page.
            a.step("nova.click_selector", json!({"selector": "#next"})).await?;
            let mut landed = false;
            for _ in 0..20 {
                tokio::time::sleep(std::time::Duration::from_millis(250)).await;
                let r = a.step("nova.read_text", json!({"maxChars": 60})).await?;
                if r["url"].as_str().is_some_and(|u| u.ends_with(&format!("journey.html?n={n}"))) {
                    landed = true;
                    break;
                }
            }
            anyhow::ensure!(landed, "the link to page {n} did not load");
        } else {
            a.open(&nova, n, false).await?;
        }
        a.work(n).await?;
    }
    assert!(a.calls >= 500, "{} calls", a.calls);
    no_blocks_recorded(&nova)?;
    let saves = nova.count_until(
        "SELECT COUNT(*) FROM observations WHERE tool = 'nova.click_selector' AND outcome_kind = 'success' AND args_json LIKE '%#save%'",
        100,
    )?;
    assert_eq!(saves, 100, "every save ran and succeeded once");
    Ok(())
}

/// Ten pages from `base` in the agent's own tab (it is on page `base` already).
async fn walk(nova: &Nova, agent: &mut Agent, base: u32) -> anyhow::Result<()> {
    agent.work(base).await?;
    for n in base + 1..base + 10 {
        agent.open(nova, n, false).await?;
        agent.work(n).await?;
    }
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn two_agents_on_two_tabs_meet_no_block() -> anyhow::Result<()> {
    let nova = Nova::start_with_default_gates().await?;
    let mut alice = Agent::new(&nova, "alice").await?;
    let mut bob = Agent::new(&nova, "bob").await?;
    ready(&mut alice).await?;
    ready(&mut bob).await?;
    alice.open(&nova, 200, false).await?;
    bob.open(&nova, 300, true).await?;
    anyhow::ensure!(alice.tab != bob.tab, "two tabs: {:?} {:?}", alice.tab, bob.tab);
    let (a, b) = tokio::join!(walk(&nova, &mut alice, 200), walk(&nova, &mut bob, 300));
    a?;
    b?;
    no_blocks_recorded(&nova)
}

#[tokio::test(flavor = "multi_thread")]
async fn an_agent_resumes_after_a_hub_restart_without_a_block() -> anyhow::Result<()> {
    let nova = Nova::start_with_default_gates().await?;
    let mut a = Agent::new(&nova, "steady").await?;
    ready(&mut a).await?;
    for n in 1..=3 {
        a.open(&nova, n, false).await?;
        a.work(n).await?;
    }
    // The agent perceived page 3 and typed a new note; then the hub crashes and the browser
    // starts another. The agent goes on where it was: nothing about the page changed.
    a.step("nova.type_selector", json!({"selector": "#note", "text": "second note 3"})).await?;
    nova.restart_hub().await?;
    let mut resumed = None;
    for _ in 0..100 {
        // Until the relay finds the new hub, a call answers browser_not_connected (retryable).
        // The agent renews its lease: a call that does not perceive the page again.
        let r = a.client.call("nova.tab_claim", json!({"agentId": "steady", "targetId": a.tab})).await?;
        let s = r.structured_content.clone().unwrap_or_default();
        if r.meta.as_ref().is_some_and(|m| m.0.contains_key("io.nova/aag")) {
            anyhow::bail!("blocked after the restart: {s}");
        }
        if s["ok"] == true {
            resumed = Some(s);
            break;
        }
        anyhow::ensure!(s["reasonCode"] == "browser_not_connected", "{s}");
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    anyhow::ensure!(resumed.is_some(), "the agent never reached the new hub");
    // The note was typed before the restart; saving it needs no new perceive and no new bundle.
    let saved = a.save("second note 3").await?;
    anyhow::ensure!(saved["guardedCommit"]["verificationStatus"] == "verified_success", "{saved}");
    for n in 4..=6 {
        a.open(&nova, n, false).await?;
        a.work(n).await?;
    }
    no_blocks_recorded(&nova)
}

#[tokio::test(flavor = "multi_thread")]
async fn the_quickstart_followed_literally_meets_no_block() -> anyhow::Result<()> {
    let nova = Nova::start_with_default_gates().await?;
    let mut a = Agent::new(&nova, "reader").await?;
    let guide = a.step("nova.get_instructions", json!({})).await?;
    let text = guide["instructions"].as_str().unwrap_or_default().to_owned();
    // 1. "Load a bundle: nova.tools_bundle {bundle: browser_automation}".
    let bundle = text
        .split("nova.tools_bundle {bundle: ")
        .nth(1)
        .and_then(|rest| rest.split('}').next())
        .map(str::to_owned)
        .ok_or_else(|| anyhow::anyhow!("the quickstart names no bundle: {text}"))?;
    a.step("nova.tools_bundle", json!({"bundle": bundle})).await?;
    a.open(&nova, 1, false).await?;
    // 2. "Look before acting: nova.perceive lists the page's elements with refs (e12) usable
    //    as selectors."
    anyhow::ensure!(text.contains("nova.perceive") && text.contains("refs"), "{text}");
    let page = a.step("nova.perceive", json!({})).await?;
    let elements: Vec<String> = page["elements"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|l| l.as_str().map(str::to_owned))
        .collect();
    let ref_of = |needle: &str| {
        elements
            .iter()
            .find(|l| l.contains(needle))
            .and_then(|l| l.split(' ').next())
            .map(str::to_owned)
            .ok_or_else(|| anyhow::anyhow!("no element {needle} in {elements:?}"))
    };
    let (note, save) = (ref_of("\"Note\"")?, ref_of("\"Save\"")?);
    // 3. "Act with nova.click_selector / nova.type_selector. State-changing actions need a
    //    transitionContract."
    a.step("nova.type_selector", json!({"selector": note, "text": "note 1"})).await?;
    let contract = json!({"actionKind": "custom", "postconditions": {"success": {"all": [
        {"factKey": "dom.text(#status)", "operator": "contains", "expected": "Saved: note 1"}]}}});
    let saved =
        a.step("nova.click_selector", json!({"selector": save, "transitionContract": contract})).await?;
    anyhow::ensure!(saved["guardedCommit"]["verificationStatus"] == "verified_success", "{saved}");
    // "After every navigation or tab change, perceive again."
    a.open(&nova, 2, false).await?;
    a.work(2).await?;
    no_blocks_recorded(&nova)
}
