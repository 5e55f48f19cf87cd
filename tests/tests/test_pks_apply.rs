//! Applying stored site knowledge (docs/pks.md, "Applying", "Drift", "Revalidation") in the real
//! browser at the product's default gates: an active playbook declines a consent wall through
//! the checked click path and proves the page is free; the page records which control was
//! clicked. A page without the phenomenon is a precondition failure, not an action failure; an
//! action outside its surface is refused; drift blocks at its threshold and clears on a clean
//! look; revalidation tells healthy from drift from gone.

use nova_e2e::Nova;
use nova_e2e::agent::Agent;
use serde_json::{Value, json};

fn wall(id: &str, click: &str, text: &str) -> Value {
    json!({
        "id": id,
        "type": "consent_cmp",
        "fingerprint": {"signals": [{"kind": "dom", "match": "#consent-banner"},
                                    {"kind": "text", "match": "We use cookies"},
                                    {"kind": "layout", "match": "scroll_locked"}],
                        "minConfidence": 0.6},
        "playbook": {"policy": "reject_preferred",
                     "actions": [{"type": "click", "selector": click, "declaredPolarity": "reject",
                                  "targetVisibleText": text, "maxScope": "scoped_to_cmp_surface"}],
                     "verify": [{"type": "absent", "selector": "#consent-banner", "timeoutMs": 2000},
                                {"type": "obstruction_cleared", "threshold": 0.05, "timeoutMs": 2000},
                                {"type": "scroll_unlocked", "timeoutMs": 2000},
                                {"type": "topmost_clickability_restored", "timeoutMs": 2000}]},
        "context": {"routes": ["*"]}
    })
}

/// An agent ready to work with per-site knowledge.
async fn learner(nova: &Nova, name: &'static str) -> anyhow::Result<Agent> {
    let mut a = Agent::new(nova, name).await?;
    a.ready().await?;
    a.step("nova.tools_bundle", json!({"bundle": "pks_learning"})).await?;
    Ok(a)
}

/// Makes an entry active the way evidence does: verified successes from separate activity
/// sessions (31 idle minutes apart on the memory clock, and another agent), then promotion.
async fn activate(nova: &Nova, a: &mut Agent, b: &mut Agent, scope: &str, id: &str) -> anyhow::Result<()> {
    let report = json!({"scope": scope, "phenomenonId": id, "outcome": "success"});
    for _ in 0..4 {
        nova.advance_clock(31 * 60_000)?;
        a.step("nova.telemetry_report", report.clone()).await?;
    }
    nova.advance_clock(31_000)?;
    b.step("nova.telemetry_report", report).await?;
    let r = a
        .step("nova.learn_promote", json!({"scope": scope, "stableIds": [id], "transition": "l1_to_l2"}))
        .await?;
    anyhow::ensure!(r["applied"] == 1, "{id} was not promoted: {r}");
    Ok(())
}

async fn page_text(a: &mut Agent) -> anyhow::Result<String> {
    let r = a.step("nova.read_text", json!({})).await?;
    Ok(r["text"].as_str().unwrap_or_default().to_owned())
}

async fn apply(a: &mut Agent, scope: &str, id: &str, extra: Value) -> anyhow::Result<Value> {
    let mut args = json!({"scope": scope, "phenomenonId": id});
    if let (Some(args), Some(extra)) = (args.as_object_mut(), extra.as_object()) {
        args.extend(extra.clone());
    }
    a.step("nova.phenomenon_apply", args).await
}

#[tokio::test(flavor = "multi_thread")]
async fn an_active_playbook_declines_through_the_checked_path_and_proves_the_page_free() -> anyhow::Result<()>
{
    let nova = Nova::start_with_default_gates().await?;
    let (mut a, mut b) = (learner(&nova, "apply-a").await?, learner(&nova, "apply-b").await?);
    let site = nova.url("pks/banner.html");
    let scope = site.split('/').nth(2).unwrap_or_default().to_owned();
    a.visit(&site).await?;
    for (id, click, text) in [
        ("consent_wall", "#consent-reject", "Reject all"),
        ("wrong_button", "#outside-reject", "Reject all"),
        ("close_only", "#consent-close", "Close"),
    ] {
        let r =
            a.step("nova.pks_upsert", json!({"scope": scope, "phenomenon": wall(id, click, text)})).await?;
        assert_eq!(r["action"], "created", "{r}");
    }

    // In shadow it is not applied, and nothing is touched.
    let r = apply(&mut a, &scope, "consent_wall", json!({})).await?;
    assert_eq!(
        (r["status"].clone(), r["reasonCode"].clone()),
        (json!("rejected"), json!("pks.not_active")),
        "{r}"
    );
    assert!(page_text(&mut a).await?.contains("clicked: nothing"));

    for id in ["consent_wall", "wrong_button", "close_only"] {
        activate(&nova, &mut a, &mut b, &scope, id).await?;
    }

    // Page reads carry what is known of the site, once in full, then only that it is unchanged.
    let p = a.step("nova.perceive", json!({"maxElements": 300})).await?;
    let ids: Vec<&str> =
        p["pks"]["phenomena"].as_array().into_iter().flatten().filter_map(|e| e["id"].as_str()).collect();
    assert_eq!(
        (ids, p["pksDedup"]["state"].clone()),
        (vec!["close_only", "consent_wall", "wrong_button"], json!("auto_refresh")),
        "{p}"
    );
    assert!(
        p["pksAdvice"].as_array().into_iter().flatten().any(|x| x["kind"] == "existing_pks_reuse"),
        "{p}"
    );
    let p = a.step("nova.perceive", json!({"maxElements": 301})).await?;
    assert_eq!(
        (p["pks"]["unchanged"].clone(), p["pksDedup"]["state"].clone()),
        (json!(true), json!("summary_unchanged")),
        "{p}"
    );
    assert_eq!(p["pksOnboarding"], Value::Null, "{p}");
    // A newcomer to the site is told what is known and what is expected of it, once.
    let mut c = Agent::new(&nova, "apply-c").await?;
    c.ready().await?;
    let n = c.step("nova.navigate", json!({"url": site, "newTab": true})).await?;
    assert_eq!(
        (n["pksOnboarding"]["activeEntries"].clone(), n["pksOnboarding"]["entryTypes"].clone()),
        (json!(3), json!(["consent_cmp"])),
        "{n}"
    );
    let p = c.step("nova.perceive", json!({"pksInclude": "full"})).await?;
    assert_eq!(p["pksOnboarding"], Value::Null, "{p}");
    assert_eq!(p["pksDedup"]["state"], "auto_unchanged", "{p}");
    let r = apply(&mut a, &scope, "consent_wall", json!({})).await?;
    assert_eq!((r["ok"].clone(), r["status"].clone()), (json!(true), json!("ok")), "{r}");
    assert_eq!(r["stepResults"][0]["selector"], "#consent-reject", "{r}");
    assert_eq!(r["verifyResults"].as_array().map(Vec::len), Some(4), "{r}");
    assert!(r["verifyResults"].as_array().into_iter().flatten().all(|v| v["ok"] == true), "{r}");
    assert_eq!(
        (r["telemetryReported"].clone(), r["matchConfidence"].clone()),
        (json!(true), json!(1.0)),
        "{r}"
    );
    assert_eq!(r["driftGate"]["blocked"], false, "{r}");
    let text = page_text(&mut a).await?;
    assert!(text.contains("consent: rejected") && text.contains("clicked: reject"), "{text}");
    assert!(!text.contains("accept"), "the accept control was never clicked: {text}");

    // Gone from the page: a precondition failure, reported not_applicable, no failure counted.
    a.visit(&format!("{site}?absent")).await?;
    let r = apply(&mut a, &scope, "consent_wall", json!({})).await?;
    assert_eq!(
        (r["status"].clone(), r["reasonCode"].clone(), r["preconditionFailed"].clone()),
        (json!("error"), json!("pks.phenomenon_absent"), json!(true)),
        "{r}"
    );
    assert_eq!(r["stepsExecuted"], 0, "{r}");
    let g = a.step("nova.pks_get", json!({"scope": scope, "phenomenonId": "consent_wall"})).await?;
    let health = &g["phenomenon"]["health"];
    assert_eq!(
        (health["consecutiveFailures"].clone(), health["lastOutcome"].clone()),
        (json!(0), json!("not_applicable")),
        "{g}"
    );

    // An action outside the banner is refused before anything is clicked.
    a.visit(&site).await?;
    let r = apply(&mut a, &scope, "wrong_button", json!({})).await?;
    assert_eq!(
        (r["status"].clone(), r["reasonCode"].clone()),
        (json!("error"), json!("pks.outside_scope")),
        "{r}"
    );
    assert_eq!(r["failedStepIndex"], 0, "{r}");
    assert!(page_text(&mut a).await?.contains("clicked: nothing"));

    // A playbook that runs but leaves the wall: the verify steps say so, and it counts as a failure.
    let r = apply(&mut a, &scope, "close_only", json!({"timeoutMs": 5000})).await?;
    assert_eq!(r["stepResults"][0]["ok"], true, "{r}");
    assert_eq!(
        (r["status"].clone(), r["reasonCode"].clone()),
        (json!("error"), json!("pks.verify_failed")),
        "{r}"
    );
    assert_eq!(r["verifyResults"][0]["ok"], false, "{r}");
    assert_eq!(r["health"]["consecutiveFailures"], 1, "{r}");
    assert!(page_text(&mut a).await?.contains("clicked: close"));

    // Bounds are named.
    let e = a
        .client
        .call_err("nova.phenomenon_apply", json!({"scope": scope, "phenomenonId": "x", "maxSteps": 21}))
        .await?;
    assert!(e.message.contains("maxSteps") && e.message.contains("20"), "{}", e.message);
    let e = a
        .client
        .call_err("nova.phenomenon_apply", json!({"scope": scope, "phenomenonId": "x", "timeoutMs": 999}))
        .await?;
    assert!(e.message.contains("timeoutMs") && e.message.contains("1000"), "{}", e.message);
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn drift_blocks_at_its_threshold_clears_on_a_clean_look_and_revalidation_tells_what_changed()
-> anyhow::Result<()> {
    let nova = Nova::start_with_default_gates().await?;
    let (mut a, mut b) = (learner(&nova, "drift-a").await?, learner(&nova, "drift-b").await?);
    let site = nova.url("pks/banner.html");
    let scope = site.split('/').nth(2).unwrap_or_default().to_owned();
    a.visit(&site).await?;
    a.step(
        "nova.pks_upsert",
        json!({"scope": scope, "phenomenon": wall("consent_wall", "#consent-reject", "Reject all")}),
    )
    .await?;
    activate(&nova, &mut a, &mut b, &scope, "consent_wall").await?;

    // The agent sees another banner each time: 1 of 5 signals shared, distance 0.8 per look,
    // debt 0.24 then 0.408.
    let elsewhere = json!({"observation": {"signals": [{"kind": "dom", "match": "#cookie-notice"},
                                                       {"kind": "dom", "match": "#cookie-notice .actions"},
                                                       {"kind": "text", "match": "We use cookies"}]}});
    let r = apply(&mut a, &scope, "consent_wall", elsewhere.clone()).await?;
    assert_eq!(r["status"], "ok", "{r}");
    assert_eq!(
        (r["driftGate"]["driftDebt"].clone(), r["driftGate"]["blocked"].clone()),
        (json!(0.24), json!(false)),
        "{r}"
    );
    a.visit(&site).await?;
    let r = apply(&mut a, &scope, "consent_wall", elsewhere).await?;
    assert_eq!(
        (r["status"].clone(), r["reasonCode"].clone()),
        (json!("blocked"), json!("pks.drift_blocked")),
        "{r}"
    );
    assert_eq!(r["driftGate"]["driftDebt"], 0.408, "{r}");
    assert!(page_text(&mut a).await?.contains("clicked: nothing"), "nothing was clicked");

    // Nova's own look finds the banner as stored: the debt comes down and it applies again.
    let r = apply(&mut a, &scope, "consent_wall", json!({})).await?;
    assert_eq!(
        (r["status"].clone(), r["driftGate"]["driftDebt"].clone()),
        (json!("ok"), json!(0.286)),
        "{r}"
    );

    // Revalidation never runs a playbook: healthy on the stored look, drift on a renamed banner,
    // gone where there is none.
    // A renamed banner gets a repair proposed (the box that now holds its text), never applied.
    for (query, verdict, exists, repair) in [
        ("", "healthy", true, Value::Null),
        ("?id=cookie-notice", "drift", false, json!("#cookie-notice")),
        ("?absent", "gone", false, Value::Null),
    ] {
        a.visit(&format!("{site}{query}")).await?;
        let r = a.step("nova.revalidate", json!({"scope": scope, "limit": 1})).await?;
        let one = &r["results"][0];
        assert_eq!(
            (one["stableId"].clone(), one["verdict"].clone()),
            (json!("consent_wall"), json!(verdict)),
            "{query}: {r}"
        );
        assert_eq!(one["selectorExists"], exists, "{query}: {r}");
        assert_eq!(one["repairCandidateSelector"], repair, "{query}: {r}");
        assert_eq!(
            (one["autoRepairSafe"].clone(), r["telemetryRecorded"].clone()),
            (json!(false), json!(1)),
            "{r}"
        );
        let text = page_text(&mut a).await?;
        assert!(text.contains("clicked: nothing"), "revalidation clicked something: {text}");
    }
    let e = a
        .client
        .call_err("nova.revalidate", json!({"scope": scope, "limit": 6, "targetId": "active"}))
        .await?;
    assert!(e.message.contains("limit") && e.message.contains('5'), "{}", e.message);
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn a_sibling_site_uses_an_entry_after_a_live_check_and_suppresses_it_after_three_failures()
-> anyhow::Result<()> {
    let nova = Nova::start_with_default_gates().await?;
    let (mut a, mut b) = (learner(&nova, "sib-a").await?, learner(&nova, "sib-b").await?);
    let page = nova.url("pks/banner.html");
    let (www, shop) =
        (page.replace("127.0.0.1", "www.site.localhost"), page.replace("127.0.0.1", "shop.site.localhost"));
    let scope_of = |u: &str| u.split('/').nth(2).unwrap_or_default().to_owned();
    // `www.` is the site itself: its scope is the registrable domain.
    let (source, target) = (scope_of(&page.replace("127.0.0.1", "site.localhost")), scope_of(&shop));
    a.visit(&www).await?;
    for (id, click, text) in
        [("consent_wall", "#consent-reject", "Reject all"), ("close_only", "#consent-close", "Close")]
    {
        a.step("nova.pks_upsert", json!({"scope": source, "phenomenon": wall(id, click, text)})).await?;
        activate(&nova, &mut a, &mut b, &source, id).await?;
    }

    // The sibling sees them, not verified here yet, and may not shadow them with an entry of its own.
    a.visit(&shop).await?;
    let g = a.step("nova.pks_get", json!({"scope": target})).await?;
    let first = g["inherited"]
        .as_array()
        .and_then(|l| l.iter().find(|i| i["phenomenonId"] == "consent_wall"))
        .cloned();
    assert_eq!(
        first.map(|i| (i["from"].clone(), i["verified"].clone())),
        Some((json!(source), json!(false))),
        "{g}"
    );
    let r = a
        .step(
            "nova.pks_upsert",
            json!({"scope": target, "phenomenon": wall("consent_wall", "#consent-reject", "Reject all")}),
        )
        .await?;
    assert_eq!(
        (r["reasonCode"].clone(), r["inheritedFrom"].clone()),
        (json!("pks.inherited_scope"), json!(source)),
        "{r}"
    );
    let seen = json!({"signals": [{"kind": "dom", "match": "#consent-banner"}, {"kind": "text", "match": "We use cookies"},
                                  {"kind": "layout", "match": "scroll_locked"}]});
    let m = a.step("nova.pks_match", json!({"scope": target, "observation": seen})).await?;
    assert_eq!(m["bestMatch"]["inheritedFrom"], json!(source), "{m}");

    // The first use is the session's live check; it verifies the entry here.
    let r = apply(&mut a, &target, "consent_wall", json!({})).await?;
    assert_eq!((r["status"].clone(), r["inheritedFrom"].clone()), (json!("ok"), json!(source)), "{r}");
    assert_eq!(r["inheritance"]["verified"], true, "{r}");
    assert!(page_text(&mut a).await?.contains("clicked: reject"));
    // Another unverified entry of the same family waits for another session.
    a.visit(&shop).await?;
    let r = apply(&mut a, &target, "close_only", json!({})).await?;
    assert_eq!(
        (r["status"].clone(), r["reasonCode"].clone()),
        (json!("rejected"), json!("pks.sibling_check_spent")),
        "{r}"
    );

    // Three failures in a row here suppress it here; the source keeps its health.
    let mut c = learner(&nova, "sib-c").await?;
    c.step("nova.navigate", json!({"url": shop, "newTab": true})).await?;
    for n in 1..=3 {
        c.visit(&shop).await?;
        let r = apply(&mut c, &target, "close_only", json!({"timeoutMs": 4000})).await?;
        assert_eq!(r["reasonCode"], "pks.verify_failed", "{r}");
        assert_eq!(
            (r["inheritance"]["failuresHere"].clone(), r["inheritance"]["suppressed"].clone()),
            (json!(n), json!(n == 3)),
            "{r}"
        );
    }
    c.visit(&shop).await?;
    let r = apply(&mut c, &target, "close_only", json!({})).await?;
    assert_eq!(r["reasonCode"], "pks.sibling_suppressed", "{r}");
    let g = c.step("nova.pks_get", json!({"scope": source, "phenomenonId": "close_only"})).await?;
    assert_eq!(
        (g["phenomenon"]["health"]["consecutiveFailures"].clone(), g["phenomenon"]["learningLevel"].clone()),
        (json!(0), json!("L2")),
        "the source is untouched: {g}"
    );
    let m = c.step("nova.pks_match", json!({"scope": target, "observation": seen, "topK": 5})).await?;
    assert!(m["matches"].as_array().into_iter().flatten().all(|x| x["phenomenonId"] != "close_only"), "{m}");

    // What the inheriting site learned outlives a hub restart, and so does the source's drift.
    nova.restart_hub().await?;
    let g = c.step("nova.pks_get", json!({"scope": target})).await?;
    let close =
        g["inherited"].as_array().and_then(|l| l.iter().find(|i| i["phenomenonId"] == "close_only")).cloned();
    assert_eq!(
        close.map(|i| (i["suppressed"].clone(), i["failuresHere"].clone())),
        Some((json!(true), json!(3))),
        "{g}"
    );
    let wall = g["inherited"]
        .as_array()
        .and_then(|l| l.iter().find(|i| i["phenomenonId"] == "consent_wall"))
        .cloned();
    assert_eq!(wall.map(|i| i["verified"].clone()), Some(json!(true)), "{g}");
    Ok(())
}
