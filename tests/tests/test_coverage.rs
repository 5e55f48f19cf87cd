//! TUC in real Chromium: URL units from the site's sitemap and links, registered coverage scans
//! whose trust checks fail for real on pages made for it, spell checking with real
//! dictionaries, units advanced only by trusted scans, the Block-mode completion gate, and
//! reconcile from stored observations.

use nova_e2e::{Client, Nova, site};
use serde_json::{Value, json};

fn exhaustive() -> Value {
    json!({
        "taskType": "content_audit",
        "displayName": "Spelling review",
        "goal": "Find spelling mistakes on every page",
        "completionCondition": {"coverageMode": "exhaustive", "unitKind": "url", "stopMetric": "all_units_processed"}
    })
}

async fn scan(c: &Client, id: &str, extra: Value) -> anyhow::Result<Value> {
    let mut args = json!({"scanId": id});
    for (k, v) in extra.as_object().cloned().unwrap_or_default() {
        args[k] = v;
    }
    c.structured("nova.coverage_scan", args).await
}

fn trust(r: &Value) -> (Value, Value) {
    let t = &r["coverageEvidence"]["trust"];
    (t["trusted"].clone(), t["reason"].clone())
}

#[tokio::test(flavor = "multi_thread")]
async fn every_trust_failure_comes_from_a_real_scan() -> anyhow::Result<()> {
    let nova = Nova::start().await?;
    let c = nova.client().await?;

    c.structured("nova.navigate", json!({"url": nova.url("site/en/page-03.html")})).await?;
    let good = scan(&c, "nova_full_page_text_v1", json!({})).await?;
    assert_eq!(trust(&good), (json!(true), json!("server_registered_scan")), "{good}");
    let ev = &good["coverageEvidence"];
    assert_eq!(ev["registeredScanId"], "nova_full_page_text_v1");
    assert!(ev["scanHash"].as_str().is_some_and(|h| h.starts_with("sha256:") && h.len() == 71));
    assert!(ev["extraction"]["textCoverageRatio"].as_f64().is_some_and(|r| r >= 0.85), "{ev}");
    assert!(ev["document"]["visibleTextCharsMeasured"].as_u64().is_some_and(|n| n > 100));
    assert_eq!(ev["eligibility"]["eligible"], true, "{ev}");
    assert!(good["raw"]["text"].as_str().is_some_and(|t| t.contains("English part of the site")));

    // A strict-CSP page scans the same (the JS build of the page module).
    c.structured("nova.navigate", json!({"url": nova.url("site/en/page-05.html")})).await?;
    let strict = scan(&c, "nova_structured_dom_v1", json!({})).await?;
    assert_eq!(trust(&strict), (json!(true), json!("server_registered_scan")), "{strict}");
    let skeleton = &strict["coverageEvidence"]["extraction"]["domSkeleton"];
    assert_eq!(skeleton["tagSequence"], json!(["header", "nav", "main", "footer"]), "{strict}");
    assert_eq!(skeleton["counts"]["links"], 2);

    for (page, reason) in [
        ("site/special/empty.html", "scan_returned_null_or_empty"),
        ("site/special/spa.html", "effective_url_mismatch"),
        ("site/special/shadow.html", "claimed_text_exceeds_measured"),
        ("site/special/huge.html", "scan_result_not_json"),
    ] {
        c.structured("nova.navigate", json!({"url": nova.url(page)})).await?;
        let r =
            scan(&c, "nova_full_page_text_v1", json!({"scopeOptions": {"hydrationTimeoutMs": 8000}})).await?;
        assert_eq!(trust(&r), (json!(false), json!(reason)), "{page}: {}", r["coverageEvidence"]);
        assert_eq!(r["coverageEvidence"]["eligibility"]["eligible"], false);
    }

    let unknown = c.call_err("nova.coverage_scan", json!({"scanId": "nova_everything_v9"})).await?;
    assert_eq!(unknown.code.0, -32602);
    let data = unknown.data.unwrap_or_default();
    assert_eq!(data["knownScanIds"].as_array().map(Vec::len), Some(3), "{data}");
    let extra =
        c.call_err("nova.coverage_scan", json!({"scanId": "nova_full_page_text_v1", "depth": 3})).await?;
    assert!(extra.message.contains("depth"), "{}", extra.message);
    let bound = c
        .call_err(
            "nova.coverage_scan",
            json!({"scanId": "nova_full_page_text_v1", "scopeOptions": {"hydrationTimeoutMs": 30001}}),
        )
        .await?;
    assert!(
        bound.message.contains("hydrationTimeoutMs") && bound.message.contains("30000"),
        "{}",
        bound.message
    );
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn spell_check_finds_the_planted_misspellings_in_each_language() -> anyhow::Result<()> {
    let nova = Nova::start().await?;
    let c = nova.client().await?;
    c.structured("nova.navigate", json!({"url": nova.url("site/de/seite-03.html")})).await?;
    let de = scan(&c, "nova_i18n_spellcheck_v1", json!({})).await?;
    assert_eq!(trust(&de).0, json!(true), "{de}");
    let langs = de["spellcheck"]["languages"].as_array().cloned().unwrap_or_default();
    let german = langs.iter().find(|l| l["lang"] == "de").cloned().unwrap_or_default();
    let words: Vec<&str> =
        german["misspellings"].as_array().into_iter().flatten().filter_map(|m| m["word"].as_str()).collect();
    assert_eq!(words, [site::german_typo(3)], "{german}");

    // An English page with a German paragraph and a hidden French container.
    c.structured("nova.navigate", json!({"url": nova.url("site/en/page-07.html")})).await?;
    let en = scan(&c, "nova_i18n_spellcheck_v1", json!({})).await?;
    let langs: Vec<&str> = en["spellcheck"]["languages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|l| l["lang"].as_str())
        .collect();
    assert_eq!(langs, ["de", "en"], "{en}");
    assert_eq!(en["spellcheck"]["misspellingsTotal"], 0, "correct text passes: {en}");
    let hidden = &en["raw"]["hiddenLanguageContainers"];
    assert_eq!(hidden[0]["lang"], "fr", "{en}");

    // A language without a dictionary says so.
    c.structured("nova.navigate", json!({"url": nova.url("site/fr/page-01.html")})).await?;
    let fr = scan(&c, "nova_i18n_spellcheck_v1", json!({})).await?;
    assert_eq!(fr["spellcheck"]["languages"][0]["dictionary"], false, "{fr}");
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn trusted_scans_check_url_units_the_gate_blocks_and_reconcile_upgrades_from_the_store()
-> anyhow::Result<()> {
    let nova = Nova::start().await?;
    std::fs::write(
        nova.data.join("settings.json"),
        r#"{"taskUrlCoverageGateMode": "block", "taskUrlCoverageAllowAgentReconcileApply": true,
            "gateModes": {"safety.perceive_first": "off"}}"#,
    )?;
    let c = nova.client().await?;
    // Scans made before the task exists are stored as observations only.
    for n in [1, 2] {
        c.structured("nova.navigate", json!({"url": nova.url(&format!("site/en/page-{n:02}.html"))})).await?;
        let r = scan(&c, "nova_full_page_text_v1", json!({})).await?;
        assert_eq!(r["attribution"]["skipReason"], "no_active_instances", "{r}");
    }

    c.structured("nova.navigate", json!({"url": nova.url("site/")})).await?;
    let host = nova.url("").trim_end_matches('/').trim_start_matches("http://").to_owned();
    let created = c
        .structured(
            "nova.task_instance_create",
            json!({"adHocContext": exhaustive(), "targetUrl": nova.url("site/"),
                   "unitSource": {"kind": "site_urls", "scopeDomain": host, "freezeAfterPopulate": true}}),
        )
        .await?;
    let id = created["instanceId"].as_str().unwrap_or_default().to_owned();
    // 60 pages from the sitemap and the index's links, plus the index itself.
    assert_eq!(created["urlCoverage"]["unitsWritten"], 61, "{created}");
    assert_eq!(created["effectiveTaskKind"], "content_audit");

    // A light read does not check a URL unit; a trusted scan does.
    c.structured("nova.navigate", json!({"url": nova.url("site/en/page-03.html")})).await?;
    c.structured("nova.read_text", json!({})).await?;
    let r = scan(&c, "nova_full_page_text_v1", json!({})).await?;
    assert_eq!(r["attribution"]["unitAdvanced"], true, "{r}");
    c.structured("nova.navigate", json!({"url": nova.url("site/special/shadow.html")})).await?;
    let extra = scan(&c, "nova_full_page_text_v1", json!({})).await?;
    assert_eq!(extra["attribution"]["eligibilityReason"], "extra_scope_url", "{extra}");

    let snapshot = c.structured("nova.task_instance_get", json!({"instanceId": id})).await?;
    let cov = &snapshot["urlCoverage"];
    assert_eq!(
        (cov["urlUnitsTotal"].clone(), cov["urlUnitsChecked"].clone()),
        (json!(61), json!(1)),
        "{snapshot}"
    );
    assert!(cov["trustedObservationsTotal"].as_u64().is_some_and(|n| n >= 1));

    // Block mode: open URL units refuse completion with the gate payload.
    let rev = snapshot["instanceRev"].clone();
    let refused = c
        .structured(
            "nova.task_instance_complete",
            json!({"instanceId": id, "expectedInstanceRev": rev, "clientEventId": "x1"}),
        )
        .await?;
    assert_eq!(refused["reason"], "url_units_remaining", "{refused}");
    let gate = &refused["_aagGates"]["taskUrlCoverage"];
    assert_eq!(
        (gate["status"].clone(), gate["urlUnits"]["remaining"].clone()),
        (json!("blocked"), json!(60)),
        "{refused}"
    );
    assert_eq!(gate["resolution"]["recommendedTool"], "nova.coverage_scan");

    // Reconcile finds the two scans made before the task and proposes them; applying checks them.
    let dry = c.structured("nova.task_instance_reconcile_coverage", json!({"instanceId": id})).await?;
    assert_eq!((dry["dryRun"].clone(), dry["result"].clone()), (json!(true), json!("ok")), "{dry}");
    let proposed = dry["proposedUpgrades"].as_array().cloned().unwrap_or_default();
    assert_eq!(proposed.len(), 2, "{dry}");
    assert!(proposed.iter().all(|p| p["evidenceKind"] == "registered_scan" && p["newStatus"] == "checked"));
    let unchanged = c.structured("nova.task_instance_get", json!({"instanceId": id})).await?;
    assert_eq!(unchanged["urlCoverage"]["urlUnitsChecked"], 1, "a dry run changes nothing");
    let again = c.structured("nova.task_instance_reconcile_coverage", json!({"instanceId": id})).await?;
    assert_eq!(again["result"], "no_new_evidence", "{again}");
    let applied = c
        .structured("nova.task_instance_reconcile_coverage", json!({"instanceId": id, "dryRun": false}))
        .await?;
    assert_eq!(applied["proposedUpgrades"].as_array().map(Vec::len), Some(2), "{applied}");
    let after = c.structured("nova.task_instance_get", json!({"instanceId": id})).await?;
    assert_eq!(after["urlCoverage"]["urlUnitsChecked"], 3, "{after}");

    // Excluding the rest with a reason closes the gate.
    let rest: Vec<Value> = site::page_paths()
        .iter()
        .skip(3)
        .map(
            |p| json!({"unitKey": nova.url(p), "status": "excluded", "reason": "out of scope for this test"}),
        )
        .chain(std::iter::once(
            json!({"unitKey": nova.url("site/"), "status": "excluded", "reason": "index"}),
        ))
        .collect();
    let rev = after["instanceRev"].clone();
    let p = c
        .structured(
            "nova.task_instance_progress",
            json!({"instanceId": id, "expectedInstanceRev": rev, "clientEventId": "exclude", "unitUpdates": rest}),
        )
        .await?;
    assert_eq!(p["applied"], true, "{p}");
    let done = c
        .structured(
            "nova.task_instance_complete",
            json!({"instanceId": id, "expectedInstanceRev": p["instanceRev"], "clientEventId": "x2"}),
        )
        .await?;
    assert_eq!(done["completed"], true, "{done}");
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn the_crawler_finds_the_site_by_following_links() -> anyhow::Result<()> {
    let nova = Nova::start().await?;
    let c = nova.client().await?;
    c.structured("nova.navigate", json!({"url": nova.url("site/fr/page-01.html")})).await?;
    let host = nova.url("").trim_end_matches('/').trim_start_matches("http://").to_owned();
    let created = c
        .structured(
            "nova.task_instance_create",
            json!({"adHocContext": exhaustive(), "targetUrl": nova.url("site/fr/page-01.html"),
                   "unitSource": {"kind": "crawler", "scopeDomain": host}}),
        )
        .await?;
    assert_eq!(created["urlCoverage"]["unitsWritten"], 61, "{created}");
    assert_eq!(created["discoveryState"], "partial");
    let indexed = nova_e2e::store::query_i64(
        &nova.store_path(),
        "SELECT COUNT(*) FROM site_urls WHERE source = 'crawler'",
    )?;
    assert_eq!(indexed, 61);
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn applying_a_reconcile_needs_the_users_setting() -> anyhow::Result<()> {
    let nova = Nova::start().await?;
    let c = nova.client().await?;
    c.structured("nova.navigate", json!({"url": nova.url("site/")})).await?;
    let created = c
        .structured(
            "nova.task_instance_create",
            json!({"adHocContext": exhaustive(), "unitSource": {"kind": "explicit", "explicitUrls": [nova.url("site/en/page-01.html")]}}),
        )
        .await?;
    let id = created["instanceId"].clone();
    let err = c
        .call_err("nova.task_instance_reconcile_coverage", json!({"instanceId": id, "dryRun": false}))
        .await?;
    assert_eq!(err.code.0, -32002, "{}", err.message);
    assert!(err.message.contains("taskUrlCoverageAllowAgentReconcileApply"));
    let unknown =
        c.call_err("nova.task_instance_reconcile_coverage", json!({"instanceId": id, "apply": true})).await?;
    assert_eq!(unknown.code.0, -32602);
    Ok(())
}
