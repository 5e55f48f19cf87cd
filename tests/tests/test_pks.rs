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
