//! The eight consent platforms Nova knows (docs/pks.md, "Platform templates"), each on a fixture
//! page built from the vendor's own markup (ids, classes, shadow root, iframe), in the real
//! browser at default gates. Each is detected and seeded as a candidate; agents decline it by
//! the template's playbook and report it; once promoted on that evidence Nova applies it itself
//! and verifies the page is free. The pages record every click: accept is never one of them.

use nova_e2e::Nova;
use nova_e2e::agent::Agent;
use serde_json::{Value, json};

const PLATFORMS: &[&str] = &[
    "onetrust",
    "cookiebot",
    "quantcast",
    "didomi",
    "usercentrics",
    "usercentrics_v3",
    "iubenda",
    "sourcepoint",
];

async fn clicks(a: &mut Agent) -> anyhow::Result<String> {
    let r = a.step("nova.read_text", json!({"selector": "#clicks"})).await?;
    Ok(r["text"].as_str().unwrap_or_default().to_owned())
}

/// The page's record once a choice made in Sourcepoint's message frame has reached it: the frame
/// posts the choice to the page, which (in Firefox, from another process) hears it a moment
/// after the click has answered, so the agent reads a few times before it concludes.
async fn clicks_from_frame(a: &mut Agent) -> anyhow::Result<String> {
    let mut got = clicks(a).await?;
    for _ in 0..10 {
        if got != "clicked: nothing" {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        got = clicks(a).await?;
    }
    Ok(got)
}

#[tokio::test(flavor = "multi_thread")]
async fn each_platform_is_detected_declined_by_its_template_and_then_applied_and_verified()
-> anyhow::Result<()> {
    let nova = Nova::start_with_default_gates().await?;
    let (mut a, mut b) = (Agent::new(&nova, "cmp-a").await?, Agent::new(&nova, "cmp-b").await?);
    for agent in [&mut a, &mut b] {
        agent.ready().await?;
        agent.step("nova.tools_bundle", json!({"bundle": "pks_learning"})).await?;
    }
    let listed = a.step("nova.pks_platform_list", json!({})).await?;
    let keys: Vec<&str> =
        listed["platforms"].as_array().into_iter().flatten().filter_map(|p| p["key"].as_str()).collect();
    assert_eq!(keys, PLATFORMS, "{listed}");

    // A page with a banner of its own: no platform is claimed. The second agent works in a tab
    // of its own.
    a.visit(&nova.url("pks/banner.html")).await?;
    b.step("nova.navigate", json!({"url": nova.url("pks/banner.html"), "newTab": true})).await?;
    let r = a.step("nova.pks_platform_seed", json!({})).await?;
    assert_eq!((r["detected"].clone(), r["seeded"].clone()), (json!([]), json!(0)), "{r}");

    for key in PLATFORMS {
        let page = nova.url(&format!("pks/cmp/{key}.html"));
        let scope = page.split('/').nth(2).unwrap_or_default().to_owned();
        let id = format!("platform_{key}");
        let seen = a.visit(&page).await?;
        if *key == "onetrust" {
            // Nothing is stored for the site yet, and a consent banner is showing.
            assert!(
                seen["pksAdvice"].as_array().into_iter().flatten().any(|x| x["kind"] == "pks_gap"),
                "{seen}"
            );
        }
        let r = a.step("nova.pks_platform_seed", json!({})).await?;
        let found: Vec<&str> =
            r["detected"].as_array().into_iter().flatten().filter_map(|d| d["platform"].as_str()).collect();
        assert_eq!(found, [*key], "{key}: exactly its own platform: {r}");
        let d = &r["detected"][0];
        assert_eq!(
            (d["seeded"].clone(), d["learningLevel"].clone(), d["bannerShowing"].clone()),
            (json!(true), json!("L0"), json!(true)),
            "{key}: {r}"
        );

        // Nothing active yet: a match falls back to the template, whose playbook declines.
        let t = a.step("nova.pks_platform_get", json!({"platform": key})).await?;
        let template = t["template"].clone();
        let banner = template["fingerprint"]["signals"][0]["match"].as_str().unwrap_or_default().to_owned();
        let decline = template["playbook"]["actions"][0]["selector"].as_str().unwrap_or_default().to_owned();
        assert_eq!(template["playbook"]["actions"][0]["declaredPolarity"], "reject", "{t}");
        let seen = json!({"signals": [{"kind": "dom", "match": banner}, {"kind": "vendor", "match": key}]});
        let m = a.step("nova.pks_match", json!({"scope": scope, "observation": seen})).await?;
        assert_eq!(m["matched"], false, "{m}");
        assert_eq!(m["templateMatches"][0]["phenomenonId"], id, "{key}: {m}");

        // A seeded template is a candidate: nothing backs it yet.
        let r = a
            .step("nova.learn_promote", json!({"scope": scope, "stableIds": [id], "transition": "l0_to_l1"}))
            .await?;
        assert_eq!(r["applied"], 0, "{r}");
        // Agents follow it on five visits in separate activity sessions (31 idle minutes apart,
        // and another agent), and say how it went.
        for n in 0..5 {
            nova.advance_clock(31 * 60_000)?;
            let agent = if n < 4 { &mut a } else { &mut b };
            let seen = agent.visit(&page).await?;
            match decline.split_once(">>>").filter(|_| *key == "sourcepoint") {
                // Another origin's frame: the agent works in it by its frame id.
                // A frame that is still loading may be listed under an id its document replaces
                // (Firefox lists the initial about:blank first): a compliant agent told
                // "has no frame" looks again and uses the id listed now. The message frame
                // removes itself on the click: if it goes before answering, Nova says the click
                // may have acted (never sent twice) and the agent reads the page.
                Some((_, inner)) => {
                    let mut seen = seen;
                    let mut tries = 0;
                    loop {
                        let frame = seen["frames"]
                            .as_array()
                            .into_iter()
                            .flatten()
                            .filter_map(Value::as_str)
                            .find(|f| f.contains("sourcepoint-message"))
                            .and_then(|f| f.split_whitespace().nth(1))
                            .map(str::to_owned);
                        let Some(frame) = frame else {
                            anyhow::ensure!(tries < 4, "no message frame in {seen}");
                            tries += 1;
                            tokio::time::sleep(std::time::Duration::from_millis(300)).await;
                            seen = agent.step("nova.perceive", json!({"maxElements": 20})).await?;
                            continue;
                        };
                        let (r, failed) = agent
                            .call("nova.click_selector", json!({"selector": inner.trim(), "frameId": frame}))
                            .await?;
                        if !failed {
                            break;
                        }
                        if r["reasonCode"] == "page_gone_after_dispatch" {
                            assert_eq!(
                                (r["actionDispatched"].clone(), r["retryAdvice"].clone()),
                                (Value::Null, json!("check_postcondition_first")),
                                "{r}"
                            );
                            // It checks the postcondition first: the choice reached the page,
                            // or the frame was replaced before the click got there and it
                            // looks again.
                            if clicks_from_frame(agent).await? != "clicked: nothing" {
                                break;
                            }
                            anyhow::ensure!(tries < 3, "{key}: the frame went, nothing was chosen: {r}");
                            tries += 1;
                            seen = agent.step("nova.perceive", json!({"maxElements": 20})).await?;
                            continue;
                        }
                        let stale = r["reasonCode"] == "target_not_found"
                            && r["message"].as_str().unwrap_or_default().contains("has no frame");
                        anyhow::ensure!(
                            stale && tries < 3,
                            "{key}: the click in the message frame failed: {r}"
                        );
                        tries += 1;
                        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
                        seen = agent.step("nova.perceive", json!({"maxElements": 20})).await?;
                    }
                }
                None => {
                    agent.step("nova.click_selector", json!({"selector": decline})).await?;
                }
            }
            let got =
                if *key == "sourcepoint" { clicks_from_frame(agent).await? } else { clicks(agent).await? };
            assert_eq!(got, "clicked: reject", "{key}: {got}");
            agent
                .step(
                    "nova.telemetry_report",
                    json!({"scope": scope, "phenomenonId": id, "outcome": "success"}),
                )
                .await?;
        }
        for (transition, to) in [("l0_to_l1", 1), ("l1_to_l2", 2)] {
            let r = a
                .step(
                    "nova.learn_promote",
                    json!({"scope": scope, "stableIds": [id], "transition": transition}),
                )
                .await?;
            assert_eq!(r["decisions"][0]["toLevel"], to, "{key}: {r}");
        }

        // Active: Nova declines it itself, held to the banner, and proves the page is free.
        a.visit(&page).await?;
        let r = a.step("nova.phenomenon_apply", json!({"scope": scope, "phenomenonId": id})).await?;
        assert_eq!((r["status"].clone(), r["reasonCode"].clone()), (json!("ok"), Value::Null), "{key}: {r}");
        let verify = r["verifyResults"].as_array().cloned().unwrap_or_default();
        assert!(verify.len() >= 2 && verify.iter().all(|v| v["ok"] == true), "{key}: {r}");
        let got = clicks(&mut a).await?;
        assert_eq!(got, "clicked: reject", "{key}: the accept control was never clicked: {got}");

        // Closing blockers uses what is known of the site first.
        a.visit(&page).await?;
        let r = a.step("nova.dismiss_blockers", json!({})).await?;
        assert_eq!(
            (r["pksUsed"][0]["phenomenonId"].clone(), r["pksUsed"][0]["verified"].clone()),
            (json!(id), json!(true)),
            "{key}: {r}"
        );
        let got = clicks(&mut a).await?;
        assert_eq!(got, "clicked: reject", "{key}: {got}");

        // Seeding again changes nothing.
        let r = a.step("nova.pks_platform_seed", json!({"platforms": [key]})).await?;
        assert_eq!(
            (r["seeded"].clone(), r["detected"][0]["alreadyKnown"].clone()),
            (json!(0), json!(true)),
            "{r}"
        );
    }
    let e = a
        .client
        .call_err("nova.pks_platform_seed", json!({"platforms": ["acme"], "targetId": "active"}))
        .await?;
    assert!(e.message.contains("platforms[0]") && e.message.contains("onetrust"), "{}", e.message);
    Ok(())
}
