//! ETM tools through the real MCP server with no browser attached: profiles, matching,
//! guidance and promotion, verification contracts, completion modes, abort and the refusals.

mod common;

use rmcp::model::CallToolRequestParams;
use serde_json::{Value, json};

use common::mcp::Client;

async fn setup() -> (Client, tempfile::TempDir) {
    common::mcp::client(Some("task_memory")).await
}

async fn call(c: &Client, name: &'static str, a: Value) -> Value {
    let Value::Object(map) = a else { panic!("arguments must be an object") };
    let r = c.peer().call_tool(CallToolRequestParams::new(name).with_arguments(map)).await.expect(name);
    r.structured_content.unwrap_or_default()
}

async fn call_err(c: &Client, name: &'static str, a: Value) -> String {
    let Value::Object(map) = a else { panic!("arguments must be an object") };
    c.peer()
        .call_tool(CallToolRequestParams::new(name).with_arguments(map))
        .await
        .expect_err("invalid params")
        .to_string()
}

fn condition(mode: &str, stop: Option<u64>) -> Value {
    let mut c = json!({"coverageMode": mode, "unitKind": "item", "stopMetric": "checked_units"});
    if let Some(s) = stop {
        c["stopValue"] = json!(s);
    }
    c
}

#[tokio::test]
async fn profiles_are_matched_and_guidance_is_promoted_into_them() {
    let (c, _tmp) = setup().await;
    let spelling = call(
        &c,
        "nova.task_profile_upsert",
        json!({
            "taskType": "language_quality_review", "displayName": "Rechtschreibprüfung der Webseite",
            "goal": "Alle Seiten auf Tippfehler prüfen", "domain": "shop.example.test",
            "completionCondition": condition("threshold", Some(3))
        }),
    )
    .await;
    let invoices = call(&c, "nova.task_profile_upsert", json!({
        "taskType": "reconciliation", "displayName": "Invoice reconciliation", "goal": "Match invoices to payments"
    })).await;
    let sid = spelling["profileId"].clone();
    assert_eq!(spelling["contentRev"], 1);

    let m = call(&c, "nova.task_match", json!({
        "taskDescription": "Tippfehler auf der Webseite finden", "targetUrl": "https://shop.example.test/a"
    })).await;
    assert_eq!(m["bestMatch"], sid, "{m}");
    assert_eq!(m["matches"][0]["accepted"], true);
    assert_eq!(m["matches"][0]["scoreBreakdown"]["thresholdUsed"], 0.52, "domain given: 0.45 + 0.07");
    assert_eq!(m["taskAwareness"]["source"], "profile");
    let search = call(&c, "nova.task_search", json!({"query": "invoice payments"})).await;
    assert_eq!(search["candidates"][0]["profileId"], invoices["profileId"], "{search}");
    let list = call(&c, "nova.task_profiles", json!({"taskType": "reconciliation"})).await;
    assert_eq!(list["count"], 1);
    let missing = call(&c, "nova.task_profile_get", json!({"profileId": "tp-nope"})).await;
    assert_eq!((missing["ok"].clone(), missing["reason"].clone()), (json!(false), json!("not_found")));

    // The same lesson three times (reworded only in case and spacing) becomes a candidate.
    for text in ["Use the formal Sie.", "use the  formal sie", "USE THE FORMAL SIE"] {
        call(
            &c,
            "nova.task_guidance_log_add",
            json!({
                "profileId": sid, "guidanceKind": "style", "sourceKind": "agent", "payload": {"text": text}
            }),
        )
        .await;
    }
    let other = call(&c, "nova.task_guidance_log_add", json!({
        "profileId": sid, "guidanceKind": "style", "sourceKind": "user", "payload": {"text": "Prefer short sentences"}
    })).await;
    assert_eq!((other["occurrenceCount"].clone(), other["status"].clone()), (json!(1), json!("logged")));
    let candidates = call(&c, "nova.task_promotion_candidates", json!({"profileId": sid})).await;
    assert_eq!(candidates["guidanceCandidateCount"], 1, "{candidates}");
    let log = candidates["guidanceCandidates"][0]["guidanceLogId"].clone();
    assert_eq!(candidates["guidanceCandidates"][0]["occurrenceCount"], 3);
    let promoted =
        call(&c, "nova.task_promote_guidance", json!({"guidanceLogId": log, "profileId": sid})).await;
    assert_eq!(promoted["promotedToContentRev"], 2, "{promoted}");
    let again = call(&c, "nova.task_promote_guidance", json!({"guidanceLogId": log, "profileId": sid})).await;
    assert_eq!(again["reason"], "already_promoted");
    let profile = call(&c, "nova.task_profile_get", json!({"profileId": sid})).await;
    assert_eq!(profile["stableGuidance"][0]["text"], "Use the formal Sie.", "{profile}");
    let logs = call(&c, "nova.task_guidance_logs", json!({"profileId": sid, "status": "promoted"})).await;
    assert_eq!(logs["count"], 1);
    assert!(logs["profileLearningStats"].is_object());
    // New instances of the profile carry the promoted guidance.
    let inst = call(&c, "nova.task_instance_create", json!({"profileId": sid})).await;
    assert_eq!(inst["effectiveContextJson"]["stableGuidance"][0]["text"], "Use the formal Sie.");
    assert_eq!(inst["effectiveTaskKind"], "content_audit", "Rechtschreib- and Tippfehler tighten the kind");
    assert_eq!(inst["evidenceScope"]["reason"], "evidence_scope_no_target", "{inst}");
}

#[tokio::test]
async fn verification_modes_abort_and_refusals() {
    let (c, _tmp) = setup().await;
    let ctx = json!({
        "taskType": "audit", "displayName": "Audit", "goal": "Check things",
        "completionCondition": condition("threshold", Some(2)),
        "mandatoryChecks": [{"checkId": "legal", "description": "Imprint present"}],
        "verificationContract": {"steps": [
            {"stepId": "s1", "tool": "nova.read_text", "assertionType": "has_results", "gate": "fast", "required": true},
            {"stepId": "s2", "tool": "nova.perceive", "assertionType": "has_results", "gate": "deep", "required": false}
        ]}
    });
    let inst = call(&c, "nova.task_instance_create", json!({"adHocContext": ctx})).await;
    let id = inst["instanceId"].clone();
    let v = call(&c, "nova.task_instance_verify", json!({"instanceId": id})).await;
    assert_eq!(
        (v["hasContract"].clone(), v["stepCount"].clone(), v["requiredCount"].clone()),
        (json!(true), json!(2), json!(1))
    );
    assert_eq!(v["completionVerification"]["reasonCode"], "pending_mandatory_checks", "{v}");

    let p = call(
        &c,
        "nova.task_instance_progress",
        json!({
            "instanceId": id, "expectedInstanceRev": 0, "clientEventId": "p1",
            "discoveredUnits": [{"unitKey": "a"}, {"unitKey": "b"}],
            "unitUpdates": [{"unitKey": "a", "status": "checked"}],
            "mandatoryCheckUpdates": [{"checkId": "legal", "state": "satisfied"}]
        }),
    )
    .await;
    assert_eq!(p["completionAllowed"], false, "{p}");
    let short = call(
        &c,
        "nova.task_instance_complete",
        json!({"instanceId": id, "expectedInstanceRev": 1, "clientEventId": "c0"}),
    )
    .await;
    assert_eq!(short["reason"], "threshold_not_met", "{short}");
    let p = call(
        &c,
        "nova.task_instance_progress",
        json!({
            "instanceId": id, "expectedInstanceRev": 1, "clientEventId": "p2",
            "unitUpdates": [{"unitKey": "b", "status": "checked"}]
        }),
    )
    .await;
    assert_eq!(
        (p["completionAllowed"].clone(), p["hint"].clone()),
        (json!(true), json!("Completion policy satisfied. You may call task_instance_complete."))
    );
    let failed = call(&c, "nova.task_instance_complete", json!({
        "instanceId": id, "expectedInstanceRev": 2, "clientEventId": "c1",
        "evidenceReport": [{"stepId": "s1", "state": "failed", "detail": "no text"}, {"stepId": "s2", "state": "passed"}]
    })).await;
    assert_eq!(failed["reason"], "verification_failed", "{failed}");
    assert_eq!(failed["verificationResults"]["summary"]["failedRequired"], 1);
    let ok = call(
        &c,
        "nova.task_instance_complete",
        json!({
            "instanceId": id, "expectedInstanceRev": 2, "clientEventId": "c2",
            "evidenceReport": [{"stepId": "s1", "state": "passed"}, {"stepId": "s2", "state": "inconclusive"}]
        }),
    )
    .await;
    assert_eq!(ok["completed"], true, "{ok}");
    assert_eq!(ok["verificationResults"]["noRequiredFailed"], true);
    let late = call(&c, "nova.task_instance_progress", json!({
        "instanceId": id, "expectedInstanceRev": 3, "clientEventId": "p3", "findings": [{"findingKey": "x"}]
    })).await;
    assert_eq!(late["reason"], "terminal_status");

    let other = call(&c, "nova.task_instance_create", json!({"adHocContext": {
        "taskType": "x", "displayName": "x", "goal": "x", "completionCondition": condition("exploratory", None)}})).await;
    let stale = call(&c, "nova.task_instance_abort", json!({
        "instanceId": other["instanceId"], "expectedInstanceRev": 5, "clientEventId": "a0", "reason": "stop"})).await;
    assert_eq!(stale["reasonCode"], "rev_conflict");
    let aborted = call(&c, "nova.task_instance_abort", json!({
        "instanceId": other["instanceId"], "expectedInstanceRev": 0, "clientEventId": "a1", "reason": "user stopped", "outcome": "failed"})).await;
    assert_eq!(
        (aborted["status"].clone(), aborted["previousStatus"].clone()),
        (json!("failed"), json!("pending")),
        "{aborted}"
    );

    // Bad input names the field and changes nothing.
    let e = call_err(&c, "nova.task_instance_create", json!({})).await;
    assert!(e.contains("profileId") && e.contains("adHocContext"), "{e}");
    let e = call_err(&c, "nova.task_instance_create", json!({"adHocContext": {
        "taskType": "x", "displayName": "x", "goal": "x", "completionCondition": condition("threshold", None)}})).await;
    assert!(e.contains("stopValue"), "{e}");
    let e = call_err(&c, "nova.task_instance_get", json!({"instanceId": id, "recentEventLimit": 101})).await;
    assert!(e.contains("recentEventLimit") && e.contains("100"), "{e}");
    let e = call_err(
        &c,
        "nova.task_instance_progress",
        json!({
        "instanceId": id, "expectedInstanceRev": 0, "clientEventId": "z", "bogus": 1}),
    )
    .await;
    assert!(e.contains("bogus"), "{e}");
    let e = call_err(&c, "nova.task_search", json!({"query": "x", "limit": 51})).await;
    assert!(e.contains("limit") && e.contains("50"), "{e}");
}
