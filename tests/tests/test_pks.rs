//! Per-site knowledge (docs/pks.md) in the real browser, at the product's default gates: a
//! phenomenon is stored only for a site open in a tab, poisoned playbooks are refused naming the
//! rule, and what is stored reads back, retires and survives a hub restart.

use nova_e2e::Nova;
use nova_e2e::agent::Agent;
use serde_json::{Value, json};

fn phenomenon(action: Value) -> Value {
    json!({
        "id": "cookie_banner",
        "type": "consent_cmp",
        "fingerprint": {"signals": [{"kind": "dom", "match": "#cookie-banner"}], "minConfidence": 0.6},
        "playbook": {"policy": "reject_preferred", "actions": [action],
                     "verify": [{"type": "absent", "selector": "#cookie-banner", "timeoutMs": 3000}]},
        "context": {"routes": ["*"]}
    })
}

fn decline() -> Value {
    json!({"type": "click", "selector": "#cookie-reject", "declaredPolarity": "reject",
           "targetVisibleText": "Reject all", "maxScope": "scoped_to_cmp_surface"})
}

#[tokio::test(flavor = "multi_thread")]
async fn knowledge_is_written_only_for_an_open_site_refuses_poison_and_outlives_the_hub() -> anyhow::Result<()>
{
    let nova = Nova::start_with_default_gates().await?;
    let mut a = Agent::new(&nova, "pks-agent").await?;
    a.ready().await?;
    a.step("nova.tools_bundle", json!({"bundle": "pks_learning"})).await?;
    let site = nova.url("blockers.html");
    let scope = site.split('/').nth(2).unwrap_or_default().to_owned();

    // Not open in any tab yet: refused softly, nothing written.
    let r = a.step("nova.pks_upsert", json!({"scope": site, "phenomenon": phenomenon(decline())})).await?;
    assert_eq!(
        (r["ok"].clone(), r["reasonCode"].clone()),
        (json!(false), json!("pks.scope_not_open")),
        "{r}"
    );

    a.visit(&site).await?;
    let r = a
        .step(
            "nova.pks_upsert",
            json!({"scope": site, "trust": "medium", "phenomenon": phenomenon(decline())}),
        )
        .await?;
    assert_eq!((r["action"].clone(), r["scope"].clone()), (json!("created"), json!(scope)), "{r}");

    // Every poisoning rule is refused with -32602 naming it.
    for (action, rule) in [
        (json!({"type": "click", "selector": "#cookie-reject"}), "pks.poison.missing_polarity"),
        (
            json!({"type": "click", "selector": "[class*=reject]", "declaredPolarity": "reject"}),
            "pks.poison.broad_selector",
        ),
        (
            json!({"type": "click", "selector": "[role=dialog]", "declaredPolarity": "reject"}),
            "pks.poison.broad_selector",
        ),
        (
            json!({"type": "click", "selector": "#cookie-accept", "declaredPolarity": "reject", "targetVisibleText": "Accept all"}),
            "pks.poison.text_polarity",
        ),
        (
            json!({"type": "click", "selector": "#cookie-reject", "declaredPolarity": "reject", "vendorApiCall": "OneTrust.AllowAll"}),
            "pks.poison.vendor_api",
        ),
    ] {
        let args = json!({"scope": site, "phenomenon": phenomenon(action), "agentId": "pks-agent"});
        let e = a.client.call_err("nova.pks_upsert", args).await?;
        assert_eq!(e.code.0, -32602, "{rule}: {e:?}");
        assert!(e.message.contains(rule), "{rule}: {}", e.message);
    }

    // Stored entries start in shadow: counted, not itemised as active.
    let got = a.step("nova.pks_get", json!({"scope": scope})).await?;
    assert_eq!((got["found"].clone(), got["trust"].clone()), (json!(true), json!("medium")), "{got}");
    assert_eq!(
        (got["totalPhenomenaCount"].clone(), got["activePhenomenonCount"].clone()),
        (json!(1), json!(0))
    );
    let one = a.step("nova.pks_get", json!({"scope": scope, "phenomenonId": "COOKIE_BANNER"})).await?;
    assert_eq!(one["phenomenon"]["learningLevel"], "L1", "{one}");
    assert_eq!(one["phenomenon"]["playbook"]["actions"][0]["declaredPolarity"], "reject");
    let none = a.step("nova.pks_get", json!({"scope": scope, "phenomenonId": "nope"})).await?;
    assert_eq!(
        (none["phenomenonFound"].clone(), none["availableIds"].clone()),
        (json!(false), json!(["cookie_banner"]))
    );
    let list = a.step("nova.pks_list", json!({})).await?;
    assert_eq!(list["domains"][0]["scope"], json!(scope), "{list}");

    // Retired, then everything outlives a hub restart.
    let r = a
        .step(
            "nova.pks_deprecate",
            json!({"scope": scope, "phenomenonId": "cookie_banner", "reason": "the banner changed"}),
        )
        .await?;
    assert_eq!(r["deprecated"], true, "{r}");
    nova.restart_hub().await?;
    let one = a.step("nova.pks_get", json!({"scope": scope, "phenomenonId": "cookie_banner"})).await?;
    assert_eq!(one["phenomenon"]["deprecatedReason"], "the banner changed", "{one}");
    let r = a.step("nova.pks_upsert", json!({"scope": scope, "phenomenon": phenomenon(decline())})).await?;
    assert_eq!(r["action"], "reactivated", "{r}");

    // Health: outcomes counted (not_applicable is no attempt); three failures in a row retire a
    // shadow entry.
    let report = |outcome: &str| json!({"scope": scope, "phenomenonId": "cookie_banner", "outcome": outcome, "elapsedMs": 90});
    let r = a.step("nova.telemetry_report", report("success")).await?;
    assert_eq!((r["recorded"].clone(), r["health"]["successCount"].clone()), (json!(true), json!(1)), "{r}");
    let r = a.step("nova.telemetry_report", report("not_applicable")).await?;
    assert_eq!(r["health"]["totalAttempts"], 1, "{r}");
    for _ in 0..2 {
        assert_eq!(a.step("nova.telemetry_report", report("failure")).await?["autoDeprecated"], false);
    }
    let r = a.step("nova.telemetry_report", report("failure")).await?;
    assert_eq!(
        (r["autoDeprecated"].clone(), r["health"]["deprecated"].clone()),
        (json!(true), json!(true)),
        "{r}"
    );
    assert_eq!(r["health"]["successRate30d"], 0.25, "{r}");
    let e = a
        .client
        .call_err(
            "nova.telemetry_report",
            json!({"scope": scope, "phenomenonId": "cookie_banner", "outcome": "success", "elapsedMs": 5, "elapsed_ms": 6}),
        )
        .await?;
    assert!(e.message.contains("elapsedMs") && e.message.contains("disagree"), "{}", e.message);
    let r = a
        .step(
            "nova.telemetry_report",
            json!({"scope": scope, "phenomenonId": "old_banner", "outcome": "success"}),
        )
        .await?;
    assert_eq!(
        (r["reasonCode"].clone(), r["agentDriftSuspect"].clone()),
        (json!("pks.phenomenon_not_found"), json!(true)),
        "{r}"
    );
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn entries_are_promoted_on_evidence_from_two_sessions_and_then_matched() -> anyhow::Result<()> {
    let nova = Nova::start_with_default_gates().await?;
    let (mut a, mut b) = (Agent::new(&nova, "pks-a").await?, Agent::new(&nova, "pks-b").await?);
    for agent in [&mut a, &mut b] {
        agent.ready().await?;
        agent.step("nova.tools_bundle", json!({"bundle": "pks_learning"})).await?;
    }
    let site = nova.url("blockers.html");
    let scope = site.split('/').nth(2).unwrap_or_default().to_owned();
    a.visit(&site).await?;
    let mut p = phenomenon(decline());
    p["fingerprint"]["signals"] = json!([{"kind": "dom", "match": "#cookie-banner"},
                                         {"kind": "text", "match": "We use cookies", "locale": "en"}]);
    p["context"] = json!({"routes": ["*"], "locale": "en"});
    a.step("nova.pks_upsert", json!({"scope": scope, "trust": "high", "phenomenon": p})).await?;
    let seen = json!({"signals": [{"kind": "dom", "match": "#cookie-banner"}, {"kind": "text", "match": "We use cookies"}]});

    // In shadow: never matched.
    let m = a.step("nova.pks_match", json!({"scope": scope, "observation": seen})).await?;
    assert_eq!((m["matched"].clone(), m["bestMatch"].clone()), (json!(false), Value::Null), "{m}");
    let promote = |dry: bool| json!({"scope": scope, "transition": "l1_to_l2", "dryRun": dry});
    let r = a.step("nova.learn_promote", promote(true)).await?;
    assert_eq!((r["approved"].clone(), r["applied"].clone()), (json!(0), json!(0)), "{r}");
    assert!(
        r["decisions"][0]["rejectionReason"].as_str().unwrap_or_default().contains("5 are needed"),
        "a consent platform needs five successes: {r}"
    );

    // Five successes in one sitting are one activity session's evidence; two more sessions (one
    // after 31 idle minutes, one of another agent) make three. Reports 31 s apart pass the
    // journal's throttle.
    let report = |outcome: &str| json!({"scope": scope, "phenomenonId": "cookie_banner", "outcome": outcome});
    for _ in 0..5 {
        nova.advance_clock(31_000)?;
        a.step("nova.telemetry_report", report("success")).await?;
    }
    let r = a.step("nova.learn_promote", promote(true)).await?;
    assert!(r["decisions"][0]["rejectionReason"].as_str().unwrap_or_default().contains("session"), "{r}");
    nova.advance_clock(31 * 60_000)?;
    a.step("nova.telemetry_report", report("success")).await?;
    nova.advance_clock(31_000)?;
    b.step("nova.telemetry_report", report("success")).await?;
    let r = a.step("nova.learn_promote", promote(false)).await?;
    assert_eq!((r["applied"].clone(), r["decisions"][0]["toLevel"].clone()), (json!(1), json!(2)), "{r}");

    // Active: matched when enough of the fingerprint is on the page, in the right context.
    let m = a
        .step("nova.pks_match", json!({"scope": scope, "observation": seen, "context": {"locale": "en-GB"}}))
        .await?;
    assert_eq!(m["bestMatch"]["phenomenonId"], "cookie_banner", "{m}");
    assert_eq!(m["bestMatch"]["playbook"]["actions"][0]["selector"], "#cookie-reject");
    assert_eq!(m["matches"][0]["matchedSignals"], 2);
    let part = json!({"signals": [{"kind": "dom", "match": "#cookie-banner"}]});
    let m = a.step("nova.pks_match", json!({"scope": scope, "observation": part})).await?;
    assert_eq!(m["matched"], false, "1.00 of 1.70 weight is below 0.6: {m}");
    assert_eq!(m["nearMisses"][0]["missingSignals"][0]["match"], "We use cookies");
    let m = a
        .step("nova.pks_match", json!({"scope": scope, "observation": seen, "context": {"locale": "de"}}))
        .await?;
    assert!(m["nearMisses"][0]["why"].as_str().unwrap_or_default().contains("locale is en, not de"), "{m}");
    let e =
        a.client.call_err("nova.pks_match", json!({"scope": scope, "observation": seen, "topK": 11})).await?;
    assert!(e.message.contains("topK") && e.message.contains("10"), "{}", e.message);

    // Two failures in a row demote it to shadow.
    let r = a.step("nova.learn_promote", json!({"scope": scope, "transition": "demotion"})).await?;
    assert_eq!(r["approved"], 0, "{r}");
    b.step("nova.telemetry_report", report("failure")).await?;
    b.step("nova.telemetry_report", report("failure")).await?;
    let r = a.step("nova.learn_promote", json!({"scope": scope, "transition": "demotion"})).await?;
    assert_eq!((r["applied"].clone(), r["decisions"][0]["toLevel"].clone()), (json!(1), json!(1)), "{r}");
    let m = a.step("nova.pks_match", json!({"scope": scope, "observation": seen})).await?;
    assert_eq!(m["matched"], false, "{m}");
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn entries_are_explained_patched_under_the_same_rules_and_sites_keep_hints() -> anyhow::Result<()> {
    let nova = Nova::start_with_default_gates().await?;
    let mut a = Agent::new(&nova, "pks-edit").await?;
    a.ready().await?;
    a.step("nova.tools_bundle", json!({"bundle": "pks_learning"})).await?;
    let site = nova.url("blockers.html");
    let scope = site.split('/').nth(2).unwrap_or_default().to_owned();
    a.visit(&site).await?;
    a.step("nova.pks_upsert", json!({"scope": scope, "phenomenon": phenomenon(decline())})).await?;

    // Why it is in shadow, what would move it on, and how it matches a page.
    let x = a
        .step(
            "nova.explain",
            json!({"scope": scope, "stableId": "cookie_banner",
                                     "observedSignals": ["dom:#cookie-banner", "Subscribe"]}),
        )
        .await?;
    assert_eq!(
        (x["learningLevel"].clone(), x["nextTransition"].clone(), x["approved"].clone()),
        (json!("L1"), json!("l1_to_l2"), json!(false)),
        "{x}"
    );
    let successes =
        x["gates"].as_array().into_iter().flatten().find(|g| g["gate"] == "successes_30d").cloned();
    assert_eq!(
        successes,
        Some(json!({"gate": "successes_30d", "required": ">= 5", "observed": "0", "pass": false})),
        "{x}"
    );
    assert!(
        x["remediation"].as_array().is_some_and(|r| r.iter().any(|g| g["gate"] == "success_sessions_30d")),
        "{x}"
    );
    assert_eq!(
        (x["match"]["confidence"].clone(), x["match"]["signals"][0]["seen"].clone()),
        (json!(1.0), json!(true)),
        "{x}"
    );
    let x = a.step("nova.explain", json!({"scope": scope, "stable_id": "cookie_banner"})).await?;
    assert_eq!((x["found"].clone(), x["match"].clone()), (json!(true), Value::Null), "{x}");
    let e = a
        .client
        .call_err("nova.explain", json!({"scope": scope, "stableId": "cookie_banner", "stable_id": "other"}))
        .await?;
    assert!(e.message.contains("stableId") && e.message.contains("stable_id"), "{}", e.message);
    let x = a.step("nova.explain", json!({"scope": scope, "stableId": "nope"})).await?;
    assert_eq!(
        (x["found"].clone(), x["availableIds"].clone()),
        (json!(false), json!(["cookie_banner"])),
        "{x}"
    );

    // A patch changes what it names, keeps the level, and meets the upsert rules.
    let r = a
        .step(
            "nova.pks_patch",
            json!({"scope": scope, "phenomenonId": "cookie_banner",
                                       "patch": {"playbook": {"verify": [{"type": "scroll_unlocked"}]}}}),
        )
        .await?;
    assert_eq!(
        (r["action"].clone(), r["changed"].clone(), r["learningLevel"].clone()),
        (json!("patched"), json!(["playbook"]), json!("L1")),
        "{r}"
    );
    let g = a.step("nova.pks_get", json!({"scope": scope, "phenomenonId": "cookie_banner"})).await?;
    assert_eq!(g["phenomenon"]["playbook"]["verify"], json!([{"type": "scroll_unlocked"}]), "{g}");
    assert_eq!(g["phenomenon"]["playbook"]["actions"][0]["selector"], "#cookie-reject", "{g}");
    for (patch, named) in [
        (json!({"id": "renamed"}), "patch.id"),
        (json!({"type": "banner"}), "patch.type"),
        (
            json!({"playbook": {"actions": [{"type": "click", "selector": "#accept", "declaredPolarity": "reject",
                                          "targetVisibleText": "Accept all"}]}}),
            "pks.poison.text_polarity",
        ),
    ] {
        let e = a
            .client
            .call_err(
                "nova.pks_patch",
                json!({"scope": scope, "phenomenonId": "cookie_banner", "patch": patch}),
            )
            .await?;
        assert!(e.message.contains(named), "{named}: {}", e.message);
    }

    // Hints: kept per site, rewritten by key, never a secret.
    let hint = json!({"kind": "navigation", "text": "Sign-in lives at /account/login"});
    let r = a.step("nova.pks_upsert_hint", json!({"scope": scope, "hint": hint})).await?;
    assert_eq!((r["action"].clone(), r["domainHintCount"].clone()), (json!("created"), json!(1)), "{r}");
    let r = a.step("nova.pks_upsert_hint", json!({"scope": scope, "hint": hint})).await?;
    assert_eq!((r["action"].clone(), r["domainHintCount"].clone()), (json!("updated"), json!(1)), "{r}");
    let e = a
        .client
        .call_err(
            "nova.pks_upsert_hint",
            json!({"scope": scope, "hint": {"kind": "auth", "text": "log in with password=hunter2"}}),
        )
        .await?;
    assert!(e.message.contains("hint.text"), "{}", e.message);
    let g = a.step("nova.pks_get", json!({"scope": scope})).await?;
    assert_eq!(
        (g["domainHintCount"].clone(), g["hints"][0]["text"].clone()),
        (json!(1), json!("Sign-in lives at /account/login")),
        "{g}"
    );

    // A site holds at most 200 phenomena, at every level together.
    for n in 1..200 {
        let mut p = phenomenon(decline());
        p["id"] = json!(format!("banner_{n:03}"));
        a.step("nova.pks_upsert", json!({"scope": scope, "phenomenon": p})).await?;
    }
    let mut p = phenomenon(decline());
    p["id"] = json!("one_too_many");
    let e = a.client.call_err("nova.pks_upsert", json!({"scope": scope, "phenomenon": p})).await?;
    assert!(e.message.contains("pks.domain_full") && e.message.contains("200"), "{}", e.message);
    nova.restart_hub().await?;
    let g = a.step("nova.pks_get", json!({"scope": scope, "outputDetail": "summary"})).await?;
    assert_eq!(
        (g["totalPhenomenaCount"].clone(), g["domainHintCount"].clone()),
        (json!(200), json!(1)),
        "a hub restart keeps them: {g}"
    );
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn a_fragile_single_page_app_is_not_left_by_a_full_navigation() -> anyhow::Result<()> {
    let nova = Nova::start_with_default_gates().await?;
    let mut a = Agent::new(&nova, "pks-spa").await?;
    a.ready().await?;
    a.step("nova.tools_bundle", json!({"bundle": "pks_learning"})).await?;
    let app = nova.url("spa.html");
    let scope = app.split('/').nth(2).unwrap_or_default().to_owned();
    a.visit(&app).await?;
    let context = json!({"domainCapabilities": {"spaNavigation": {"fragile": true, "routes": ["/spa.html"],
                         "why": "the draft lives in the page"}}});
    a.step(
        "nova.pks_upsert",
        json!({"scope": scope, "context": context,
                                     "phenomenon": phenomenon(decline())}),
    )
    .await?;

    // A full navigation away would lose the app's state: blocked, with the ways out.
    let tab = a.tab.clone().unwrap_or_default();
    let r = a
        .client
        .call("nova.navigate", json!({"agentId": "pks-spa", "targetId": tab, "url": nova.url("page2.html")}))
        .await?;
    let block = r.meta.as_ref().and_then(|m| m.0.get("io.nova/aag").cloned()).unwrap_or(Value::Null);
    assert_eq!(
        (block["gateId"].clone(), block["reasonCode"].clone(), block["details"]["clearWith"].clone()),
        (json!("pks.spa_navigation_block"), json!("pks.spa_navigation_block"), json!(["nova.route"])),
        "{r:?}"
    );
    assert_eq!(block["details"]["why"], "the draft lives in the page", "{block}");

    // The ways out pass: a new tab, and the explicit override.
    let r = a.step("nova.navigate", json!({"url": nova.url("page2.html"), "newTab": true})).await?;
    let other = r["targetId"].clone();
    assert_ne!(other, json!(tab), "{r}");
    let r = a
        .client
        .call(
            "nova.navigate",
            json!({"agentId": "pks-spa", "targetId": tab, "url": nova.url("page2.html"),
                                      "_meta": {"forceBypass": true}}),
        )
        .await?;
    let s = r.structured_content.clone().unwrap_or_default();
    assert_eq!(s["_aagGates"]["spaNavigationBlock"]["status"], "bypassed", "{s}");
    // Off the fragile route nothing stands in the way.
    a.step("nova.perceive", json!({"targetId": tab})).await?;
    a.step("nova.navigate", json!({"targetId": tab, "url": nova.url("basic.html")})).await?;
    Ok(())
}
