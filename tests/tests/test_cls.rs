//! Guarded transitions (CLS) in real Chromium: preconditions, journal, dispatch, the
//! event-driven postcondition watch, verdicts and retry advice.

use nova_e2e::fixtures::send_contract;
use nova_e2e::{Client, Nova};
use serde_json::{Value, json};

async fn open_chat(nova: &Nova, c: &Client, mode: &str) -> anyhow::Result<()> {
    c.structured("nova.navigate", json!({"url": nova.url(&format!("chat.html?mode={mode}"))})).await?;
    c.structured("nova.type_selector", json!({"selector": "#composer", "text": "hello"})).await?;
    Ok(())
}

async fn sent_count(c: &Client) -> anyhow::Result<String> {
    let r = c.structured("nova.read_text", json!({"selector": "#sent-count"})).await?;
    Ok(r["text"].as_str().unwrap_or_default().to_owned())
}

async fn guarded_send(c: &Client, contract: Value) -> anyhow::Result<Value> {
    let r =
        c.call("nova.click_selector", json!({"selector": "#send", "transitionContract": contract})).await?;
    r.structured_content.ok_or_else(|| anyhow::anyhow!("no structured content"))
}

#[tokio::test(flavor = "multi_thread")]
async fn a_send_that_works_is_verified_and_journaled() -> anyhow::Result<()> {
    let nova = Nova::start().await?;
    let c = nova.client().await?;
    open_chat(&nova, &c, "works").await?;
    let r = guarded_send(&c, send_contract(5000, 300)).await?;
    let g = &r["guardedCommit"];
    assert_eq!(
        (r["ok"].clone(), r["status"].clone(), r["actionDispatched"].clone()),
        (json!(true), json!("ok"), json!(true)),
        "{r}"
    );
    assert_eq!(g["dispatchStatus"], "dispatched");
    assert_eq!(g["verificationStatus"], "verified_success");
    assert_eq!(g["retryAdvice"], "do_not_retry");
    assert_eq!(g["outcomeVerdict"], "satisfied");
    assert_eq!(r["verifyState"], "verified");
    assert!(g["durationMs"].as_i64().unwrap_or(-1) >= 300, "success had to hold for stabilityMs: {g}");
    // What proved it: the success assertion, as read when the verdict was reached.
    let proof = json!([{"factKey": "dom.exists(.msg.assistant)", "op": "eq", "expected": true,
        "observed": true, "passed": true, "error": null}]);
    assert_eq!(g["heldAssertions"], proof, "{g}");
    let id = g["transitionId"].as_str().unwrap_or_default();
    let conn = rusqlite::Connection::open(nova.store_path())?;
    let (state, verdict, held): (String, String, String) = conn.query_row(
        "SELECT state, verification_status, held_assertions FROM transitions WHERE transition_id = ?1",
        [id],
        |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)),
    )?;
    assert_eq!((state.as_str(), verdict.as_str()), ("completed", "verified_success"));
    assert_eq!(serde_json::from_str::<Value>(&held)?, proof, "the journal keeps the proof");
    Ok(())
}

/// A password field's value reads as filled or empty, never as itself: in a precondition that
/// blocks, in the proof of a success, and so in the journal.
#[tokio::test(flavor = "multi_thread")]
async fn a_password_fields_value_never_leaves_the_page() -> anyhow::Result<()> {
    let nova = Nova::start().await?;
    let c = nova.client().await?;
    c.structured("nova.navigate", json!({"url": nova.url("secret.html")})).await?;
    let fact = |key: &str, expected: &str| json!({"factKey": key, "operator": "eq", "expected": expected});
    let click = |contract: Value| {
        c.call("nova.click_selector", json!({"selector": "#noop", "transitionContract": contract}))
    };
    let guessed = json!({"actionKind": "custom", "stabilityMs": 50,
        "preconditions": {"all": [fact("dom.value(#pw)", "a guess")]},
        "postconditions": {"success": {"all": [fact("dom.attr(#noop|data-n)", "1")]}}});
    let blocked = click(guessed).await?.structured_content.unwrap_or_default();
    assert_eq!(blocked["guardedCommit"]["preconditionVerdict"], "failed", "{blocked}");
    assert_eq!(blocked["guardedCommit"]["failedAssertions"][0]["observed"], "[password]", "{blocked}");
    let filled = json!({"actionKind": "custom", "stabilityMs": 50,
    "postconditions": {"success": {"all": [
        fact("dom.attr(#noop|data-n)", "1"), fact("dom.value(#pw)", "[password]"),
        fact("dom.attr(#pw|value)", "[password]"), fact("dom.value(#pw2)", ""),
    ]}}});
    let done = click(filled).await?.structured_content.unwrap_or_default();
    let g = &done["guardedCommit"];
    assert_eq!(g["verificationStatus"], "verified_success", "{done}");
    let observed: Vec<&Value> =
        g["heldAssertions"].as_array().into_iter().flatten().map(|a| &a["observed"]).collect();
    assert_eq!(observed, [&json!("1"), &json!("[password]"), &json!("[password]"), &json!("")], "{g}");
    let conn = rusqlite::Connection::open(nova.store_path())?;
    let leaked: i64 = conn.query_row(
        "SELECT COUNT(*) FROM transitions WHERE failed_assertions LIKE '%s3cret%' OR held_assertions LIKE '%s3cret%'",
        [],
        |row| row.get(0),
    )?;
    assert_eq!(leaked, 0, "the password reached the journal");
    Ok(())
}

/// `page.signOut` says whether the page offers to sign out: a "Log out" link that shows, a
/// "Sign out" in a closed menu, none on a sign-in page or a page asking to approve a sign-in.
#[tokio::test(flavor = "multi_thread")]
async fn page_sign_out_says_how_the_page_offers_to_sign_out() -> anyhow::Result<()> {
    let nova = Nova::start().await?;
    let c = nova.client().await?;
    for (page, offers) in [
        ("account.html", "shown"),
        // Known by its name alone, hyphen and all.
        ("hyphen-out.html", "shown"),
        ("menu-account.html", "hidden"),
        ("login.html", "none"),
        ("approve.html", "none"),
    ] {
        c.structured("nova.navigate", json!({"url": nova.url(page)})).await?;
        assert_eq!(page_fact(&c, "page.signOut", json!("never")).await?, offers, "{page}");
    }
    Ok(())
}

/// `page.busy` is true while the page shows it is at work (a loading screen, a progress bar with
/// no value, a busy region), false on a page that only measures something (a bar with a value).
#[tokio::test(flavor = "multi_thread")]
async fn page_busy_says_whether_the_page_is_at_work() -> anyhow::Result<()> {
    let nova = Nova::start().await?;
    let c = nova.client().await?;
    for (show, busy) in [("loading", true), ("spinner", true), ("busy", true), ("meter", false), ("", false)]
    {
        c.structured("nova.navigate", json!({"url": nova.url(&format!("busy.html?show={show}"))})).await?;
        assert_eq!(page_fact(&c, "page.busy", json!(!busy)).await?, busy, "{show}");
    }
    Ok(())
}

/// What the page reads for `key`: a precondition that it equals `other`, a value it should not
/// have, is refused before anything is pressed, naming what it read.
async fn page_fact(c: &Client, key: &str, other: Value) -> anyhow::Result<Value> {
    let never = json!({"actionKind": "custom",
        "preconditions": {"all": [{"factKey": key, "operator": "eq", "expected": other}]},
        "postconditions": {"success": {"all": [{"factKey": "dom.exists(main)", "operator": "eq", "expected": true}]}}});
    let r = c.call("nova.click_selector", json!({"selector": "main", "transitionContract": never})).await?;
    let r = r.structured_content.unwrap_or_default();
    anyhow::ensure!(r["guardedCommit"]["preconditionVerdict"] == "failed", "{key}: {r}");
    Ok(r["guardedCommit"]["failedAssertions"][0]["observed"].clone())
}

#[tokio::test(flavor = "multi_thread")]
async fn an_error_banner_is_a_verified_failure() -> anyhow::Result<()> {
    let nova = Nova::start().await?;
    let c = nova.client().await?;
    open_chat(&nova, &c, "error").await?;
    let r = guarded_send(&c, send_contract(5000, 300)).await?;
    assert_eq!((r["ok"].clone(), r["status"].clone()), (json!(false), json!("failed")));
    assert_eq!(r["reasonCode"], "guarded_commit.postcondition_failed");
    assert_eq!(r["guardedCommit"]["verificationStatus"], "verified_fail");
    assert_eq!(r["guardedCommit"]["retryAdvice"], "check_postcondition_first");
    let failed = &r["guardedCommit"]["failedAssertions"][0];
    assert_eq!(
        (failed["factKey"].clone(), failed["passed"].clone()),
        (json!("dom.visible(.error-banner)"), json!(true))
    );
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn a_success_badge_that_flickers_before_an_error_is_not_success() -> anyhow::Result<()> {
    let nova = Nova::start().await?;
    let c = nova.client().await?;
    open_chat(&nova, &c, "flicker").await?;
    let mut contract = send_contract(5000, 500);
    contract["postconditions"]["success"] =
        json!({"any": [{"factKey": "dom.exists(.sent-badge)", "operator": "eq", "expected": true}]});
    let r = guarded_send(&c, contract).await?;
    assert_eq!(r["guardedCommit"]["verificationStatus"], "verified_fail", "{r}");
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn a_silent_send_is_indeterminate_and_must_not_be_repeated_blindly() -> anyhow::Result<()> {
    let nova = Nova::start().await?;
    let c = nova.client().await?;
    open_chat(&nova, &c, "silent").await?;
    let r = guarded_send(&c, send_contract(800, 200)).await?;
    let g = &r["guardedCommit"];
    assert_eq!((r["status"].clone(), r["actionDispatched"].clone()), (json!("partial"), json!(true)), "{r}");
    assert_eq!(g["verificationStatus"], "indeterminate");
    assert_eq!(g["indeterminateReason"], "no_signal_yet");
    assert_eq!(r["reasonCode"], "guarded_commit.no_signal_yet");
    assert_eq!(g["retryAdvice"], "check_postcondition_first");
    assert_eq!(r["retryable"], false);
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn failed_preconditions_block_before_dispatch() -> anyhow::Result<()> {
    let nova = Nova::start().await?;
    let c = nova.client().await?;
    open_chat(&nova, &c, "works").await?;
    let mut contract = send_contract(3000, 200);
    contract["preconditions"] =
        json!({"all": [{"factKey": "dom.value(#composer)", "operator": "eq", "expected": "something else"}]});
    let r = guarded_send(&c, contract).await?;
    assert_eq!((r["status"].clone(), r["actionDispatched"].clone()), (json!("blocked"), json!(false)), "{r}");
    assert_eq!(r["reasonCode"], "guarded_commit.precondition_failed");
    assert_eq!(r["guardedCommit"]["dispatchStatus"], "blocked_precondition");
    assert_eq!(r["guardedCommit"]["preconditionVerdict"], "failed");
    assert_eq!(r["guardedCommit"]["failedAssertions"][0]["observed"], "hello");
    assert_eq!(sent_count(&c).await?, "0", "nothing was sent");

    let mut broken = send_contract(3000, 200);
    broken["preconditions"] =
        json!({"all": [{"factKey": "dom.count(:::bad)", "operator": "gt", "expected": 0}]});
    let e = guarded_send(&c, broken).await?;
    assert_eq!(e["reasonCode"], "guarded_commit.precondition_error", "{e}");
    assert_eq!(sent_count(&c).await?, "0");
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn commit_points_without_a_contract_are_blocked_and_bad_contracts_are_invalid() -> anyhow::Result<()> {
    let nova = Nova::start().await?;
    let c = nova.client().await?;
    open_chat(&nova, &c, "works").await?;
    let r = c.call("nova.click_selector", json!({"selector": "#send"})).await?;
    let s = r.structured_content.unwrap_or_default();
    assert_eq!(
        (s["reasonCode"].clone(), s["actionDispatched"].clone()),
        (json!("guarded_commit.missing_contract"), json!(false)),
        "{s}"
    );
    let enter = c
        .call("nova.type_selector", json!({"selector": "#composer", "text": "x", "pressEnter": true}))
        .await?;
    assert_eq!(enter.structured_content.unwrap_or_default()["reasonCode"], "guarded_commit.missing_contract");
    assert_eq!(sent_count(&c).await?, "0");

    let unknown = c
        .call_err(
            "nova.click_selector",
            json!({"selector": "#send", "transitionContract": {
        "postconditions": {"success": {"all": [{"factKey": "page.url", "operator": "exists", "oops": 1}]}}}}),
        )
        .await?;
    assert_eq!(unknown.code.0, -32602);
    assert!(unknown.message.contains("oops"), "{}", unknown.message);
    let empty =
        c.structured("nova.click_selector", json!({"selector": "#send", "transitionContract": {}})).await?;
    assert_eq!(
        (empty["reasonCode"].clone(), empty["actionDispatched"].clone()),
        (json!("guarded_commit.missing_contract"), json!(false)),
        "a commit point with empty postconditions fails closed: {empty}"
    );
    // A contract that reads naturally but could never mean it is refused, with what to write.
    let trap = c
        .call_err(
            "nova.click_selector",
            json!({"selector": "#send", "transitionContract": {
        "postconditions": {"forbidden": {"all": [{"factKey": "dom.exists(#error)", "operator": "exists"}]}}}}),
        )
        .await?;
    assert_eq!(trap.code.0, -32602);
    assert!(trap.message.contains(r#""operator": "eq", "expected": true"#), "{}", trap.message);
    assert_eq!(sent_count(&c).await?, "0", "nothing was sent");
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn one_guarded_transition_per_target_at_a_time() -> anyhow::Result<()> {
    let nova = Nova::start().await?;
    let c = nova.client().await?;
    let c2 = nova.client().await?;
    open_chat(&nova, &c, "slow").await?;
    let created = c
        .structured(
            "nova.goal_register",
            json!({
                "op": "create", "summary": "Say hello", "steps": [{"actionDesc": "send hello"}]
            }),
        )
        .await?;
    let goal_id = created["goal"]["goalId"].clone();
    let slow = guarded_send(&c, send_contract(6000, 200));
    let second = async {
        tokio::time::sleep(std::time::Duration::from_millis(400)).await;
        let busy = guarded_send(&c2, send_contract(3000, 200)).await?;
        let page = c2.structured("nova.perceive", json!({"maxElements": 1})).await?;
        let goal = c2.structured("nova.goal_register", json!({"op": "query", "goalId": goal_id})).await?;
        anyhow::Ok((busy, page, goal))
    };
    let (first, second) = tokio::join!(slow, second);
    let (first, (second, page, goal)) = (first?, second?);
    assert_eq!(first["guardedCommit"]["verificationStatus"], "verified_success", "{first}");
    assert_eq!(second["reasonCode"], "guarded_commit.coordinator_busy", "{second}");
    assert_eq!(second["retryAfterMs"], 1000);
    assert_eq!(second["guardedCommit"]["dispatchStatus"], "blocked_coordinator");
    assert_eq!(second["actionDispatched"], false);
    // While the first one is being watched its verdict is pending, wherever it is looked at.
    let active = &second["guardedCommit"]["activeTransition"];
    assert_eq!(
        (active["transitionId"].clone(), active["verificationStatus"].clone()),
        (first["guardedCommit"]["transitionId"].clone(), json!("pending")),
        "{second}"
    );
    assert_eq!(page["pendingTransition"]["verificationStatus"], "pending", "{page}");
    assert_eq!(page["pendingTransition"]["dispatchStatus"], "dispatched", "{page}");
    let step = &goal["goal"]["steps"][0];
    assert_eq!(
        (step["status"].clone(), step["verificationStatus"].clone()),
        (json!("dispatched"), json!("pending")),
        "{goal}"
    );
    let done = c.structured("nova.goal_register", json!({"op": "query", "goalId": goal_id})).await?;
    assert_eq!(done["goal"]["steps"][0]["verificationStatus"], "verified_success", "{done}");
    let idle = c.structured("nova.perceive", json!({"maxElements": 1})).await?;
    assert!(idle.get("pendingTransition").is_none(), "{idle}");
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn an_expected_navigation_is_followed_and_verified_on_the_new_page() -> anyhow::Result<()> {
    let nova = Nova::start().await?;
    let c = nova.client().await?;
    c.structured("nova.navigate", json!({"url": nova.url("order.html")})).await?;
    let contract = json!({
        "actionKind": "submit_form",
        "postconditions": {"success": {"all": [{"factKey": "dom.exists(#thanks)", "operator": "eq", "expected": true}]}},
        // The submit_form default window: the new document must load (and its page module start)
        // inside it, which takes longer on a loaded 2-core CI machine running many browsers.
        "stabilityWindowMs": 10000, "stabilityMs": 200
    });
    let r = c
        .structured("nova.click_selector", json!({"selector": "#place", "transitionContract": contract}))
        .await?;
    assert_eq!(r["guardedCommit"]["verificationStatus"], "verified_success", "{r}");
    // The evidence names where the action landed, not the page it started on.
    let landed = r["urlAfter"].as_str().unwrap_or_default();
    assert!(landed.contains("/thanks.html"), "urlAfter {landed}: {r}");
    assert!(r["urlBefore"].as_str().unwrap_or_default().contains("/order.html"), "{r}");
    let rows = nova.tool_rows("nova.click_selector", 1)?;
    assert_eq!(rows[0]["url_after"], json!(landed), "the stored url_after: {}", rows[0]);
    assert!(rows[0]["url_before"].as_str().unwrap_or_default().contains("/order.html"), "{}", rows[0]);

    c.structured("nova.navigate", json!({"url": nova.url("order.html")})).await?;
    let never = json!({
        "postconditions": {"success": {"all": [{"factKey": "dom.exists(#never)", "operator": "eq", "expected": true}]}},
        "stabilityWindowMs": 1500
    });
    let r = c
        .structured("nova.click_selector", json!({"selector": "#place", "transitionContract": never}))
        .await?;
    assert_eq!(r["guardedCommit"]["indeterminateReason"], "page_navigated", "{r}");
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn every_other_verdict_and_reason_is_reachable() -> anyhow::Result<()> {
    let nova = Nova::start().await?;
    let c = nova.client().await?;

    // Contract without postconditions on an ordinary button: dispatched, verification skipped.
    c.structured("nova.navigate", json!({"url": nova.url("basic.html")})).await?;
    let pre_only = json!({"preconditions": {"all": [{"factKey": "dom.text(#counter)", "operator": "eq", "expected": "Clicked 0"}]}});
    let r = c
        .structured("nova.click_selector", json!({"selector": "#counter", "transitionContract": pre_only}))
        .await?;
    assert_eq!(
        (r["ok"].clone(), r["guardedCommit"]["verificationStatus"].clone()),
        (json!(true), json!("skipped")),
        "{r}"
    );
    assert_eq!(r["guardedCommit"]["preconditionVerdict"], "satisfied");

    // An element that cannot take the click: the dispatch could not be prepared.
    let covered = c
        .structured(
            "nova.click_selector",
            json!({"selector": "#covered", "transitionContract": send_contract(1000, 0)}),
        )
        .await?;
    assert_eq!(covered["reasonCode"], "guarded_commit.dispatch_prepare_rejected", "{covered}");
    assert_eq!(
        (covered["pageReasonCode"].clone(), covered["actionDispatched"].clone()),
        (json!("element_covered"), json!(false))
    );

    // A postcondition that cannot be evaluated.
    let broken = json!({"postconditions": {"success": {"all": [{"factKey": "dom.exists(:::bad)", "operator": "eq", "expected": true}]}},
                        "stabilityWindowMs": 600});
    let r = c
        .structured("nova.click_selector", json!({"selector": "#counter", "transitionContract": broken}))
        .await?;
    assert_eq!(r["guardedCommit"]["indeterminateReason"], "eval_error", "{r}");
    assert_eq!(r["reasonCode"], "guarded_commit.eval_error");
    assert!(r["guardedCommit"]["failedAssertions"][0]["error"].is_string());

    // Only the ambiguous bucket holds by the end of the window.
    open_chat(&nova, &c, "slow").await?;
    let mut ambiguous = send_contract(1000, 200);
    ambiguous["postconditions"]["ambiguous"] =
        json!({"all": [{"factKey": "dom.exists(.msg.user)", "operator": "eq", "expected": true}]});
    let r = guarded_send(&c, ambiguous).await?;
    assert_eq!(r["guardedCommit"]["indeterminateReason"], "ambiguous_signal", "{r}");
    assert_eq!(r["reasonCode"], "guarded_commit.ambiguous_signal");

    // The watched frame is removed by the action.
    c.structured("nova.navigate", json!({"url": nova.url("xframe.html")})).await?;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let frame_id = loop {
        let page = c.structured("nova.perceive", json!({"maxElements": 1})).await?;
        // The frame's own document, not the `about:blank` it starts as (Firefox may list that
        // one under an id that is gone once the real document loads).
        let frame = page["frames"].as_array().and_then(|f| {
            f.iter().filter_map(|f| f.as_str()).find(|f| f.ends_with("frame.html")).map(str::to_owned)
        });
        if let Some(f) = frame {
            break f.split(' ').nth(1).unwrap_or_default().to_owned();
        }
        assert!(std::time::Instant::now() < deadline, "no frame listed: {}", page["frames"]);
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    };
    let never = json!({"postconditions": {"success": {"all": [{"factKey": "dom.exists(#never)", "operator": "eq", "expected": true}]}},
                       "stabilityWindowMs": 1500});
    let r = c
        .structured(
            "nova.click_selector",
            json!({"selector": "#remove-me", "frameId": frame_id, "transitionContract": never}),
        )
        .await?;
    assert_eq!(r["guardedCommit"]["indeterminateReason"], "frame_destroyed", "{r}");
    assert_eq!(r["reasonCode"], "guarded_commit.frame_destroyed");
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn outcomes_inside_shadow_roots_and_frames_and_on_rerendered_controls_are_watched() -> anyhow::Result<()>
{
    let nova = Nova::start().await?;
    let c = nova.client().await?;
    // The page replaces its button a second after load. The early ref must be read before that
    // and the replacement seen after it (the ref changes); on a loaded machine the first read can
    // come too late, so the page is loaded again (a few times at most, then the test fails).
    let basket_ref = || async {
        let page = c.structured("nova.perceive", json!({})).await?;
        anyhow::Ok(
            page["elements"]
                .as_array()
                .and_then(|e| e.iter().filter_map(|l| l.as_str()).find(|l| l.contains("\"Add to basket\"")))
                .and_then(|l| l.split(' ').next())
                .unwrap_or_default()
                .to_owned(),
        )
    };
    // The page loaded and its button's ref read, then read again until it changes: the first
    // ref, or none if no change was seen within four seconds.
    let replaced_ref = || async {
        c.structured("nova.navigate", json!({"url": nova.url("deep.html")})).await?;
        let first = basket_ref().await?;
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(4);
        while std::time::Instant::now() < deadline {
            tokio::time::sleep(std::time::Duration::from_millis(200)).await;
            let now = basket_ref().await?;
            if !now.is_empty() && now != first {
                return anyhow::Ok(Some(first));
            }
        }
        Ok(None)
    };
    let mut early_ref = None;
    for _ in 0..4 {
        early_ref = replaced_ref().await?;
        if early_ref.is_some() {
            break;
        }
    }
    let early_ref = early_ref.expect("the page's re-render was never seen after a first read");
    assert!(!early_ref.is_empty(), "no \"Add to basket\" button in the first read");

    let contract = |key: &str, expected: &str| {
        json!({"postconditions": {"success": {"all": [{"factKey": key, "operator": "eq", "expected": expected}]}},
               "stabilityWindowMs": 3000, "stabilityMs": 200})
    };
    // Asynchronous outcome inside an open shadow root (the observer follows shadow roots).
    let r = c
        .structured(
            "nova.click_selector",
            json!({"selector": "slow-card >>> #save",
        "transitionContract": contract("dom.text(slow-card >>> #saved)", "saved")}),
        )
        .await?;
    assert_eq!(r["guardedCommit"]["verificationStatus"], "verified_success", "{r}");
    // Asynchronous outcome inside a same-origin frame.
    let r = c
        .structured(
            "nova.click_selector",
            json!({"selector": "iframe#slow-frame >>> #confirm",
        "transitionContract": contract("dom.text(iframe#slow-frame >>> #state)", "confirmed")}),
        )
        .await?;
    assert_eq!(r["guardedCommit"]["verificationStatus"], "verified_success", "{r}");
    // The early ref points at the replaced button: refused before dispatch, nothing added.
    let stale = c
        .structured(
            "nova.click_selector",
            json!({"selector": early_ref,
        "transitionContract": contract("dom.text(#basket)", "1 items")}),
        )
        .await?;
    assert_eq!(
        (stale["pageReasonCode"].clone(), stale["actionDispatched"].clone()),
        (json!("element_not_found"), json!(false)),
        "{stale}"
    );
    // The selector finds the re-rendered control.
    let r = c
        .structured(
            "nova.click_selector",
            json!({"selector": "#buy",
        "transitionContract": contract("dom.text(#basket)", "1 items")}),
        )
        .await?;
    assert_eq!(r["guardedCommit"]["verificationStatus"], "verified_success", "{r}");
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn a_page_that_stops_answering_is_a_timeout_not_a_guess() -> anyhow::Result<()> {
    let nova = Nova::start().await?;
    let c = nova.client().await?;
    c.structured("nova.navigate", json!({"url": nova.url("freeze.html")})).await?;
    let contract = json!({"postconditions": {"success": {"all": [{"factKey": "dom.exists(#done)", "operator": "eq", "expected": true}]}},
                          "stabilityWindowMs": 500});
    let r = c
        .structured("nova.click_selector", json!({"selector": "#freeze", "transitionContract": contract}))
        .await?;
    assert_eq!(r["guardedCommit"]["indeterminateReason"], "timeout", "{r}");
    assert_eq!(r["reasonCode"], "guarded_commit.timeout");
    assert_eq!(r["actionDispatched"], true);
    assert_eq!(r["guardedCommit"]["retryAdvice"], "check_postcondition_first");
    Ok(())
}

/// Every fact family of the page with every operator, on a present and an absent element of a
/// real page: a combination is either refused with -32602 saying what to write, or, evaluated
/// in the page as a precondition, tells the present element from the absent one as it reads
/// (docs/cls.md, "Operators by kind of fact").
/// An action whose page then asks in a dialog (JupyterLab's "File Changed" before a save)
/// proves nothing until the dialog is answered: `no_signal_yet`, and the reply says what the
/// dialog asks (`pageAsks`). A dialog already open when the action went out is not news.
#[tokio::test(flavor = "multi_thread")]
async fn a_page_that_asks_in_a_dialog_after_the_action_says_what_it_asks() -> anyhow::Result<()> {
    let nova = Nova::start().await?;
    let c = nova.client().await?;
    c.structured("nova.navigate", json!({"url": nova.url("asks.html")})).await?;
    let saved = json!({
        "actionKind": "custom", "stabilityWindowMs": 1500, "stabilityMs": 100,
        "postconditions": {"success": {"all": [
            {"factKey": "dom.text(#status)", "operator": "eq", "expected": "Saved"}]}}
    });
    let r = c.call("nova.click_selector", json!({"selector": "#save", "transitionContract": saved})).await?;
    let s = r.structured_content.unwrap_or_default();
    assert_eq!(s["reasonCode"], "guarded_commit.no_signal_yet", "{s}");
    let asks = s["pageAsks"].as_str().unwrap_or_default();
    assert_eq!(asks, "File Changed: notes.txt has changed on disk. Overwrite it?", "{s}");
    assert!(s["message"].as_str().is_some_and(|m| m.contains(asks)), "{s}");

    // Answered, the save shows; a dialog open before the action is not what it opened.
    c.structured("nova.click_selector", json!({"selector": "#overwrite"})).await?;
    c.structured("nova.click_selector", json!({"selector": "#open-form"})).await?;
    let applied = json!({
        "actionKind": "custom", "stabilityWindowMs": 1000, "stabilityMs": 100,
        "postconditions": {"success": {"all": [
            {"factKey": "dom.text(#status)", "operator": "eq", "expected": "Renamed"}]}}
    });
    let r =
        c.call("nova.click_selector", json!({"selector": "#apply", "transitionContract": applied})).await?;
    let s = r.structured_content.unwrap_or_default();
    assert_eq!(s["reasonCode"], "guarded_commit.no_signal_yet", "{s}");
    assert!(s.get("pageAsks").is_none(), "{s}");
    assert_eq!(
        c.structured("nova.read_text", json!({"selector": "#status"})).await?["text"],
        "Saved",
        "the answered dialog saved"
    );
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn every_fact_family_and_operator_reads_as_it_says_on_a_real_page() -> anyhow::Result<()> {
    const OPS: [&str; 10] =
        ["eq", "not_eq", "neq", "exists", "not_exists", "contains", "gt", "lt", "gte", "lte"];
    // (kind, present key, absent key, a sensible expected value: the present element's value)
    let families = [
        ("bool", "dom.exists(#box)", "dom.exists(#nope)", json!(true)),
        ("bool", "dom.visible(#box)", "dom.visible(#nope)", json!(true)),
        ("bool", "dom.checked(#box)", "dom.checked(#nope)", json!(true)),
        ("bool", "dom.enabled(#box)", "dom.enabled(#nope)", json!(true)),
        ("number", "dom.count(.e)", "dom.count(.nope)", json!(0)),
        ("text", "dom.text(#msg)", "dom.text(#nope)", json!("Saved")),
        ("text", "dom.value(#box)", "dom.value(#nope)", json!("a")),
        ("text", "dom.attr(#link|href)", "dom.attr(#nope|href)", json!("/x")),
    ];
    let nova = Nova::start().await?;
    let c = nova.client().await?;
    c.structured("nova.navigate", json!({"url": nova.url("facts.html")})).await?;
    let (mut checked, mut clicks) = (0, 0);
    for (kind, present, absent, sensible) in &families {
        for op in OPS {
            let accepted = match *kind {
                "bool" => matches!(op, "eq" | "not_eq" | "neq"),
                "number" => !matches!(op, "exists" | "not_exists" | "contains"),
                _ => !matches!(op, "gt" | "lt" | "gte" | "lte"),
            };
            // What the present (count 2) and the absent (count 0) element must give.
            let want = match (*kind, op) {
                ("number", "eq") | ("number", "lte") => (false, true),
                ("number", "lt") => (false, false),
                ("number", "gte") => (true, true),
                ("number", _) => (true, false),
                (_, "not_eq" | "neq" | "not_exists") => (false, true),
                _ => (true, false),
            };
            let got = (
                holds(&c, &mut clicks, present, op, sensible).await?,
                holds(&c, &mut clicks, absent, op, sensible).await?,
            );
            if accepted {
                assert_eq!(got, (Some(want.0), Some(want.1)), "{present} / {absent} {op} (present, absent)");
            } else {
                assert_eq!(got, (None, None), "{present} {op} must be refused with what to write instead");
            }
            checked += 1;
        }
    }
    assert_eq!(checked, families.len() * OPS.len());
    Ok(())
}

/// Whether an assertion holds in the page (`None`: refused with -32602, naming the key): as a
/// precondition of a harmless click, it lets the click through or blocks it.
/// `clicks` counts the clicks that went through: the next one must show `data-n` one higher.
async fn holds(
    c: &Client,
    clicks: &mut u32,
    key: &str,
    op: &str,
    expected: &Value,
) -> anyhow::Result<Option<bool>> {
    let mut assertion = json!({"factKey": key, "operator": op});
    if !matches!(op, "exists" | "not_exists") {
        assertion["expected"] = expected.clone();
    }
    let contract = json!({
        "actionKind": "custom", "stabilityMs": 50,
        "preconditions": {"all": [assertion]},
        "postconditions": {"success": {"all": [
            {"factKey": "dom.attr(#noop|data-n)", "operator": "eq", "expected": (*clicks + 1).to_string()}
        ]}},
    });
    match c.call("nova.click_selector", json!({"selector": "#noop", "transitionContract": contract})).await {
        Ok(r) => {
            let s = r.structured_content.unwrap_or_default();
            match s["guardedCommit"]["preconditionVerdict"].as_str() {
                Some("failed") => Ok(Some(false)),
                _ if s["guardedCommit"]["verificationStatus"] == "verified_success" => {
                    *clicks += 1;
                    Ok(Some(true))
                }
                _ => anyhow::bail!("{key} {op}: neither held nor failed: {s}"),
            }
        }
        Err(e) => match e.downcast::<rmcp::ServiceError>()? {
            rmcp::ServiceError::McpError(data) if data.code.0 == -32602 => {
                anyhow::ensure!(data.message.contains(key), "{key} {op}: {}", data.message);
                Ok(None)
            }
            other => anyhow::bail!("{key} {op}: {other}"),
        },
    }
}
