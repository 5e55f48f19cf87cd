//! Closed-loop goals: create / query / close / annotate, goalContext on perceive, steps advanced
//! by verified outcomes, owner checks (blocked_goal), leases (orphaned) and restarts.

use std::time::Duration;

use nova_e2e::Nova;
use serde_json::json;

fn step_contract() -> serde_json::Value {
    json!({
        "actionKind": "send_message",
        "postconditions": {"success": {"all": [{"factKey": "dom.exists(.msg.assistant)", "operator": "eq", "expected": true}]}},
        "stabilityWindowMs": 4000, "stabilityMs": 200
    })
}

#[tokio::test(flavor = "multi_thread")]
async fn a_goal_step_is_verified_advanced_and_survives_a_restart() -> anyhow::Result<()> {
    let nova = Nova::start().await?;
    let c = nova.client().await?;
    c.structured("nova.navigate", json!({"url": nova.url("chat.html"), "agentId": "alice"})).await?;
    // Navigating claimed the tab for alice; free it so bob can be turned away by the goal itself.
    c.structured("nova.tab_release", json!({"targetId": "active", "agentId": "alice"})).await?;
    let created = c
        .structured("nova.goal_register", json!({
            "op": "create", "agentId": "alice", "ownerAgentId": "alice", "summary": "Greet the assistant",
            "preconditions": {"all": [{"factKey": "dom.exists(#composer)", "operator": "eq", "expected": true}]},
            "steps": [{"actionDesc": "send the greeting", "contract": step_contract()}, {"actionDesc": "read the reply"}]
        }))
        .await?;
    let goal = &created["goal"];
    let goal_id = goal["goalId"].as_str().unwrap_or_default().to_owned();
    assert_eq!(
        (goal["state"].clone(), goal["currentStep"].clone(), goal["totalSteps"].clone()),
        (json!("active"), json!(1), json!(2))
    );
    assert_eq!(goal["steps"][0]["status"], "ready");

    let page = c.structured("nova.perceive", json!({"agentId": "alice", "maxElements": 5})).await?;
    let ctx = &page["goalContext"];
    assert_eq!(
        (ctx["goalId"].as_str(), ctx["stepStatus"].clone(), ctx["stepAction"].clone()),
        (Some(goal_id.as_str()), json!("ready"), json!("send the greeting"))
    );
    let other = c.structured("nova.perceive", json!({"agentId": "bob", "maxElements": 5})).await?;
    assert!(other["goalContext"].is_null(), "another agent's goal does not apply to bob");

    // Another agent cannot run a guarded action on a tab whose goal alice owns.
    let bob = c
        .structured(
            "nova.click_selector",
            json!({"selector": "#send", "agentId": "bob", "transitionContract": step_contract()}),
        )
        .await?;
    assert_eq!(bob["guardedCommit"]["dispatchStatus"], "blocked_goal", "{bob}");
    assert_eq!(
        (bob["reasonCode"].clone(), bob["actionDispatched"].clone()),
        (json!("guarded_commit.blocked_goal"), json!(false))
    );
    c.structured("nova.tab_release", json!({"targetId": "active", "agentId": "bob"})).await?;

    // The raw click takes the step's contract, is verified and advances the plan.
    c.structured("nova.type_selector", json!({"selector": "#composer", "text": "hi", "agentId": "alice"}))
        .await?;
    let sent = c.structured("nova.click_selector", json!({"selector": "#send", "agentId": "alice"})).await?;
    assert_eq!(sent["guardedCommit"]["verificationStatus"], "verified_success", "{sent}");
    let q = c
        .structured(
            "nova.goal_register",
            json!({"op": "query", "goalId": goal_id, "includeEvents": true, "eventsLimit": 10}),
        )
        .await?;
    assert_eq!(q["goal"]["steps"][0]["status"], "done");
    assert_eq!(q["goal"]["steps"][0]["transitionId"], sent["guardedCommit"]["transitionId"]);
    assert_eq!(
        (q["goal"]["currentStep"].clone(), q["goal"]["steps"][1]["status"].clone()),
        (json!(2), json!("ready"))
    );
    assert!(q["goal"]["events"].as_array().is_some_and(|e| e.iter().any(|x| x["kind"] == "step_done")));

    let note = c.structured("nova.goal_register", json!({"op": "annotate", "goalId": goal_id, "content": "reply looked fine", "includeEvents": true})).await?;
    assert!(
        note["goal"]["events"]
            .as_array()
            .is_some_and(|e| e.iter().any(|x| x["content"] == "reply looked fine"))
    );

    // The goal lives in the store: a new hub still knows it.
    nova.restart_hub().await?;
    let c2 = nova.client().await?;
    let again = c2.structured("nova.goal_register", json!({"op": "query", "goalId": goal_id})).await?;
    assert_eq!(
        (again["goal"]["state"].clone(), again["goal"]["currentStep"].clone()),
        (json!("active"), json!(2))
    );
    let closed = c2
        .structured("nova.goal_register", json!({"op": "close", "goalId": goal_id, "state": "completed"}))
        .await?;
    assert_eq!(closed["goal"]["state"], "completed");
    let page = c2.structured("nova.perceive", json!({"agentId": "alice", "maxElements": 1})).await?;
    assert!(page["goalContext"].is_null());
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn goals_expire_refuse_bad_input_and_check_preconditions() -> anyhow::Result<()> {
    let nova = Nova::start().await?;
    let c = nova.client().await?;
    c.structured("nova.navigate", json!({"url": nova.url("chat.html")})).await?;

    let failed = c
        .call(
            "nova.goal_register",
            json!({"op": "create", "summary": "x",
        "preconditions": {"all": [{"factKey": "dom.exists(#nope)", "operator": "eq", "expected": true}]}}),
        )
        .await?;
    assert_eq!(failed.structured_content.unwrap_or_default()["reasonCode"], "goal.precondition_failed");

    for (args, field) in [
        (json!({"op": "create", "summary": "x", "leaseMs": 10}), "leaseMs"),
        (json!({"op": "create", "summary": "x", "leaseMs": 5000, "leaseTimeoutMs": 5000}), "leaseMs"),
        (json!({"op": "create", "summary": "x", "steps": [{"actionDesc": "a", "bogus": 1}]}), "bogus"),
        (
            json!({"op": "create", "summary": "x", "steps": [{"actionDesc": "a", "contract": {}}, {"actionDesc": "b", "contractJson": "{}"}]}),
            "steps",
        ),
        (json!({"op": "create"}), "summary"),
        (json!({"op": "close", "goalId": "g"}), "state"),
        (json!({"op": "query", "includeEvents": true, "eventsLimit": 0}), "eventsLimit"),
        (json!({"op": "launch"}), "launch"),
    ] {
        let e = c.call_err("nova.goal_register", args.clone()).await?;
        assert_eq!(e.code.0, -32602, "{args}");
        assert!(e.message.contains(field), "{args}: {}", e.message);
    }

    let legacy = c.structured("nova.goal_register", json!({"op": "create", "summary": "short lease", "leaseTimeoutMs": 1000,
        "preconditionsJson": "{\"all\":[{\"factKey\":\"page.title\",\"operator\":\"eq\",\"expected\":\"Chat fixture\"}]}"})).await?;
    let id = legacy["goal"]["goalId"].as_str().unwrap_or_default().to_owned();
    assert_eq!(legacy["goal"]["leaseMs"], 1000);
    let dup = c.call("nova.goal_register", json!({"op": "create", "summary": "second"})).await?;
    assert_eq!(dup.structured_content.unwrap_or_default()["reasonCode"], "goal.active_exists");
    tokio::time::sleep(Duration::from_millis(1300)).await;
    let q = c.structured("nova.goal_register", json!({"op": "query", "goalId": id})).await?;
    assert_eq!(q["goal"]["state"], "orphaned", "a goal without progress inside its lease is orphaned");
    let page = c.structured("nova.perceive", json!({"maxElements": 1})).await?;
    assert!(page["goalContext"].is_null());
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn a_goal_linked_to_a_task_closes_as_completed_only_after_the_task() -> anyhow::Result<()> {
    let nova = Nova::start().await?;
    let c = nova.client().await?;
    c.structured("nova.navigate", json!({"url": nova.url("chat.html")})).await?;
    let task = c
        .structured(
            "nova.task_instance_create",
            json!({"adHocContext": {"taskType": "chat", "displayName": "Greet", "goal": "Say hello",
                   "completionCondition": {"coverageMode": "exploratory", "unitKind": "item", "stopMetric": "checked_units"}}}),
        )
        .await?;
    let instance = task["instanceId"].clone();
    let goal = c.structured("nova.goal_register", json!({"op": "create", "summary": "Say hello"})).await?;
    assert_eq!(goal["goal"]["linkedTaskInstanceId"], instance, "{goal}");
    let goal_id = goal["goal"]["goalId"].clone();

    let early = c
        .structured("nova.goal_register", json!({"op": "close", "goalId": goal_id, "state": "completed"}))
        .await?;
    assert_eq!(
        (early["ok"].clone(), early["reason"].clone()),
        (json!(false), json!("linked_task_in_progress")),
        "{early}"
    );
    assert_eq!(early["message"], "Linked task instance still in progress");

    let p = c
        .structured(
            "nova.task_instance_progress",
            json!({"instanceId": instance, "expectedInstanceRev": 0, "clientEventId": "p1",
                   "discoveredUnits": [{"unitKey": "hello"}], "unitUpdates": [{"unitKey": "hello", "status": "checked"}]}),
        )
        .await?;
    let done = c
        .structured(
            "nova.task_instance_complete",
            json!({"instanceId": instance, "expectedInstanceRev": p["instanceRev"], "clientEventId": "c1"}),
        )
        .await?;
    assert_eq!(done["completed"], true, "{done}");
    let closed = c
        .structured("nova.goal_register", json!({"op": "close", "goalId": goal_id, "state": "completed"}))
        .await?;
    assert_eq!(closed["goal"]["state"], "completed", "{closed}");
    Ok(())
}
