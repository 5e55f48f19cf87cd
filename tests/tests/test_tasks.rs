//! ETM task runs judged by TOB evidence, in real Chromium on the 60-page fixture site: a claim
//! without visits is refused with evidence_gap and exact counts; after reading the rest the run
//! completes; replays and stale revisions write nothing; a killed hub keeps every task.

use std::time::Duration;

use nova_e2e::{Client, Nova, site};
use serde_json::{Value, json};

fn ad_hoc(policy: &str, max_gap: f64) -> Value {
    json!({
        "taskType": "site_review",
        "displayName": "Review every page of the fixture site",
        "goal": "Read each page and confirm it renders its text",
        "completionCondition": {
            "coverageMode": "exhaustive", "unitKind": "url", "stopMetric": "all_units_processed",
            "evidencePolicy": {"mode": policy, "maxGapPercent": max_gap}
        }
    })
}

async fn visit(c: &Client, url: &str) -> anyhow::Result<()> {
    c.structured("nova.navigate", json!({"url": url})).await?;
    let read = c.structured("nova.read_text", json!({"maxChars": 2000})).await?;
    anyhow::ensure!(read["ok"] == json!(true), "read_text failed on {url}: {read}");
    Ok(())
}

/// Opens `url` and reads nothing: weak evidence however long the machine takes (a quick
/// visit with a read would turn strong on a machine slow enough to spend a second on it).
async fn glance(c: &Client, url: &str) -> anyhow::Result<()> {
    let nav = c.structured("nova.navigate", json!({"url": url})).await?;
    anyhow::ensure!(nav["ok"] == json!(true), "navigate failed on {url}: {nav}");
    Ok(())
}

async fn progress(c: &Client, id: &str, rev: &Value, event: &str, extra: Value) -> anyhow::Result<Value> {
    let mut args = json!({"instanceId": id, "expectedInstanceRev": rev, "clientEventId": event});
    for (k, v) in extra.as_object().cloned().unwrap_or_default() {
        args[k] = v;
    }
    c.structured("nova.task_instance_progress", args).await
}

async fn get(c: &Client, id: &str) -> anyhow::Result<Value> {
    c.structured("nova.task_instance_get", json!({"instanceId": id, "includeRecentEvents": true})).await
}

#[tokio::test(flavor = "multi_thread")]
async fn claimed_units_without_visits_are_refused_with_an_exact_evidence_gap() -> anyhow::Result<()> {
    let nova = Nova::start().await?;
    let c = nova.client().await?;
    let urls: Vec<String> = site::page_paths().iter().map(|p| nova.url(p)).collect();
    assert_eq!(urls.len(), 60);
    c.structured("nova.navigate", json!({"url": nova.url("site/")})).await?;
    let created = c
        .structured(
            "nova.task_instance_create",
            json!({
                "adHocContext": ad_hoc("require_observed", 0.0),
                "unitSource": {"kind": "explicit", "explicitUrls": urls, "freezeAfterPopulate": true},
                "declaredTaskKind": "exploratory"
            }),
        )
        .await?;
    let id = created["instanceId"].as_str().unwrap_or_default().to_owned();
    assert_eq!(created["status"], "pending", "{created}");
    assert_eq!(created["urlCoverage"]["unitsWritten"], 60, "{created}");
    assert_eq!(created["discoveryState"], "frozen");
    assert!(created["evidenceScope"].is_null(), "tracking started: {created}");

    // The first page is read with a sustained visit (strong); 39 more are only opened (weak).
    visit(&c, &urls[0]).await?;
    tokio::time::sleep(Duration::from_millis(1100)).await;
    c.structured("nova.perceive", json!({"maxElements": 5})).await?;
    for url in &urls[1..40] {
        glance(&c, url).await?;
    }
    // The agent claims all 60.
    let updates: Vec<Value> = urls.iter().map(|u| json!({"unitKey": u, "status": "checked"})).collect();
    let p = progress(&c, &id, &json!(0), "claim-all", json!({"unitUpdates": updates})).await?;
    assert_eq!((p["applied"].clone(), p["instanceRev"].clone()), (json!(true), json!(1)), "{p}");
    assert_eq!(p["progress"]["checkedUnits"], 60);

    let snapshot = get(&c, &id).await?;
    let s = &snapshot["evidenceSummary"];
    assert_eq!(
        (s["claimedCheckedUnits"].clone(), s["observedCheckedUnits"].clone(), s["none"].clone()),
        (json!(60), json!(40), json!(20)),
        "{snapshot}"
    );
    assert_eq!((s["strong"].clone(), s["weak"].clone()), (json!(1), json!(39)), "{s}");
    assert_eq!(s["ingestionComplete"], true);
    assert_eq!(snapshot["taskAwareness"]["completionAllowed"], false, "{snapshot}");

    let refused = c
        .structured(
            "nova.task_instance_complete",
            json!({"instanceId": id, "expectedInstanceRev": 1, "clientEventId": "done-1", "note": "all 60 checked"}),
        )
        .await?;
    assert_eq!(
        (refused["completed"].clone(), refused["reason"].clone(), refused["retryable"].clone()),
        (json!(false), json!("evidence_gap"), json!(true)),
        "{refused}"
    );
    let e = &refused["evidenceSummary"];
    assert_eq!(
        (e["claimedCheckedUnits"].clone(), e["observedCheckedUnits"].clone(), e["gapPercent"].clone()),
        (json!(60), json!(40), json!(33.33)),
        "{refused}"
    );
    assert_eq!(
        (e["maxGapPercent"].clone(), e["policyMode"].clone()),
        (json!(0.0), json!("require_observed"))
    );
    let missing: Vec<&str> = refused["perUnitExceptions"]["items"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|i| i["evidenceGrade"] == "none")
        .filter_map(|i| i["unitKey"].as_str())
        .collect();
    assert_eq!(missing.len(), 20, "every unread unit is named: {refused}");

    // The rejection reopened the scope: reading the rest makes the claim true.
    for url in &urls[40..] {
        visit(&c, url).await?;
    }
    let done = c
        .structured(
            "nova.task_instance_complete",
            json!({"instanceId": id, "expectedInstanceRev": 1, "clientEventId": "done-2"}),
        )
        .await?;
    assert_eq!(done["completed"], true, "{done}");
    assert_eq!(done["evidenceSummary"]["observedCheckedUnits"], 60, "{done}");
    assert_eq!(done["instanceRev"], 2);
    let after = get(&c, &id).await?;
    assert_eq!(after["status"], "completed");

    // Observations in the store carry the scope binding.
    let bound = |tool: &str| {
        nova_e2e::store::query_i64(
            &nova.store_path(),
            &format!(
                "SELECT COUNT(*) FROM observations WHERE workflow_scope_id IS NOT NULL AND tool = '{tool}'"
            ),
        )
    };
    let (navigations, reads) = (bound("nova.navigate")?, bound("nova.read_text")?);
    assert!(navigations >= 60 && reads >= 21, "{navigations} navigations, {reads} reads bound to the scope");
    let prelude = nova_e2e::store::query_i64(
        &nova.store_path(),
        "SELECT COUNT(*) FROM observations WHERE binding_mode = 'prelude_backfill' AND tool = 'nova.navigate'",
    )?;
    assert_eq!(prelude, 1, "the navigation just before the task was backfilled into its scope");
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn replays_and_stale_revisions_write_nothing_and_a_killed_hub_keeps_every_task() -> anyhow::Result<()> {
    let nova = Nova::start().await?;
    let c = nova.client().await?;
    c.structured("nova.navigate", json!({"url": nova.url("site/")})).await?;
    let profile = c
        .structured(
            "nova.task_profile_upsert",
            json!({"taskType": "site_review", "displayName": "Fixture site review", "goal": "Read pages",
                   "completionCondition": {"coverageMode": "threshold", "unitKind": "page", "stopMetric": "checked_units",
                                           "stopValue": 2},
                   "mandatoryChecks": [{"checkId": "imprint", "description": "The imprint exists"}]}),
        )
        .await?;
    assert_eq!(profile["action"], "created", "{profile}");
    let pid = profile["profileId"].clone();
    let stale = c
        .structured(
            "nova.task_profile_upsert",
            json!({"profileId": pid, "expectedContentRev": 7, "taskType": "x", "displayName": "x", "goal": "x"}),
        )
        .await?;
    assert_eq!((stale["ok"].clone(), stale["reason"].clone()), (json!(false), json!("content_rev_conflict")));

    let created =
        c.structured("nova.task_instance_create", json!({"profileId": pid, "agentId": "alice"})).await?;
    let id = created["instanceId"].as_str().unwrap_or_default().to_owned();
    let add = json!({"discoveredUnits": [{"unitKey": "/site/en/page-01.html"}, {"unitKey": "/site/en/page-02.html"}]});
    let first = progress(&c, &id, &json!(0), "e1", add.clone()).await?;
    assert_eq!((first["applied"].clone(), first["instanceRev"].clone()), (json!(true), json!(1)), "{first}");
    // The same clientEventId again: the stored result, duplicate:true, nothing written.
    let replay = progress(&c, &id, &json!(0), "e1", add.clone()).await?;
    assert_eq!(
        (replay["duplicate"].clone(), replay["instanceRev"].clone()),
        (json!(true), json!(1)),
        "{replay}"
    );
    // A stale revision with a new event id: rev_conflict, nothing written.
    let conflict = progress(&c, &id, &json!(0), "e2", json!({"findings": [{"findingKey": "x"}]})).await?;
    assert_eq!(
        (conflict["applied"].clone(), conflict["reason"].clone()),
        (json!(false), json!("rev_conflict"))
    );
    let snapshot = get(&c, &id).await?;
    assert_eq!(
        (snapshot["instanceRev"].clone(), snapshot["progress"]["totalUnits"].clone()),
        (json!(1), json!(2))
    );
    assert_eq!(snapshot["progress"]["distinctFindings"], 0, "the refused findings were not written");
    assert_eq!(
        snapshot["recentEvents"].as_array().map(|e| e.iter().filter(|x| x["kind"] == "progress").count()),
        Some(1),
        "{snapshot}"
    );
    // Illegal moves and unfreezing are refused whole.
    let checked = progress(&c, &id, &json!(1), "e3", json!({
        "unitUpdates": [{"unitKey": "/site/en/page-01.html", "status": "checked"}], "setDiscoveryState": "frozen"
    }))
    .await?;
    assert_eq!(checked["instanceRev"], 2, "{checked}");
    let back = progress(
        &c,
        &id,
        &json!(2),
        "e4",
        json!({
            "unitUpdates": [{"unitKey": "/site/en/page-01.html", "status": "failed"}]
        }),
    )
    .await?;
    assert_eq!(back["reason"], "invalid_unit_updates", "{back}");
    let unfreeze = progress(&c, &id, &json!(2), "e5", json!({"setDiscoveryState": "partial"})).await?;
    assert_eq!(unfreeze["reason"], "illegal_discovery_transition", "{unfreeze}");
    let early = c
        .structured(
            "nova.task_instance_complete",
            json!({"instanceId": id, "expectedInstanceRev": 2, "clientEventId": "c1"}),
        )
        .await?;
    assert_eq!(early["reason"], "pending_mandatory_checks", "{early}");

    // Alice holds the tab; the lease outlives the hub.
    c.structured("nova.tab_claim", json!({"targetId": "active", "agentId": "alice", "ttlMs": 600000, "reclaimReason": "alice takes over"}))
        .await?;
    // The hub dies; the next one knows the profile, the instance, its units and its events.
    nova.restart_hub().await?;
    let c2 = nova.client().await?;
    let taken = c2.call_err("nova.navigate", json!({"url": nova.url("site/"), "agentId": "mallory"})).await?;
    assert_eq!(taken.code.0, -32040, "the lease survived the restart: {}", taken.message);
    let again = get(&c2, &id).await?;
    assert_eq!(
        (
            again["instanceRev"].clone(),
            again["discoveryState"].clone(),
            again["progress"]["checkedUnits"].clone()
        ),
        (json!(2), json!("frozen"), json!(1)),
        "{again}"
    );
    assert_eq!(again["agentId"], "alice");
    // Another agent resumes it: progress with the stored revision works.
    let resumed = progress(
        &c2,
        &id,
        &json!(2),
        "bob-1",
        json!({
            "agentId": "bob",
            "unitUpdates": [{"unitKey": "/site/en/page-02.html", "status": "checked"}],
            "mandatoryCheckUpdates": [{"checkId": "imprint", "state": "satisfied"}]
        }),
    )
    .await?;
    assert_eq!(resumed["instanceRev"], 3, "{resumed}");
    let found = c2.structured("nova.task_search", json!({"query": "fixture site review"})).await?;
    assert_eq!(found["candidates"][0]["profileId"], pid, "{found}");
    let done = c2
        .structured(
            "nova.task_instance_complete",
            json!({"instanceId": id, "expectedInstanceRev": 3, "clientEventId": "c2"}),
        )
        .await?;
    assert_eq!(done["completed"], true, "{done}");
    let twice = c2
        .structured(
            "nova.task_instance_complete",
            json!({"instanceId": id, "expectedInstanceRev": 3, "clientEventId": "c2"}),
        )
        .await?;
    assert_eq!(
        (twice["completed"].clone(), twice["duplicate"].clone()),
        (json!(true), json!(true)),
        "{twice}"
    );
    Ok(())
}
