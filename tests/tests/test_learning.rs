//! Learning (docs/learning.md) in the real browser at the product's default gates: repeated
//! work in the learning journal becomes an opportunity, a generated candidate, shadow and then
//! active knowledge only through the promotion gates; one lucky run never promotes; failures
//! demote and retire; revival needs fresh evidence; every failure row of the learning tools names
//! its field; and the journal outlives a hub killed while it writes. The memory clock
//! (`Nova::advance_clock`) stands in for the 30 s throttle and the 30-minute activity sessions.

use nova_e2e::Nova;
use nova_e2e::agent::Agent;
use serde_json::{Value, json};

/// Past the journal's throttle (the first observation per key in 30 s is kept).
const APART: i64 = 31_000;
/// Past an activity session (a new one starts after 30 idle minutes).
const SITTING: i64 = 31 * 60_000;

async fn learner(nova: &Nova, name: &'static str) -> anyhow::Result<Agent> {
    let mut a = Agent::new(nova, name).await?;
    a.ready().await?;
    a.step("nova.tools_bundle", json!({"bundle": "pks_learning"})).await?;
    Ok(a)
}

/// A visit that closes the newsletter overlay with `selector`; whether the click worked.
async fn close(nova: &Nova, a: &mut Agent, page: &str, selector: &str) -> anyhow::Result<bool> {
    nova.advance_clock(APART)?;
    a.visit(page).await?;
    let (r, failed) = a.call("nova.click_selector", json!({"selector": selector})).await?;
    anyhow::ensure!(failed != (r["ok"] == true), "a click is a success or a failure: {r}");
    Ok(!failed)
}

fn decision<'a>(r: &'a Value, kind: &str) -> &'a Value {
    r["decisions"].as_array().and_then(|d| d.iter().find(|x| x["reasonKind"] == kind)).unwrap_or(&Value::Null)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_repeated_dismissal_becomes_knowledge_only_through_the_gates() -> anyhow::Result<()> {
    let nova = Nova::start_with_default_gates().await?;
    let mut a = learner(&nova, "learner").await?;
    let page = nova.url("learn/newsletter.html");
    let scope = page.split('/').nth(2).unwrap_or_default().to_owned();

    // One visit is no pattern.
    assert!(close(&nova, &mut a, &page, "#newsletter-close").await?);
    let s = a.step("nova.learn_suggest", json!({"scope": scope})).await?;
    assert_eq!((s["count"].clone(), s["ingestionComplete"].clone()), (json!(0), json!(true)), "{s}");

    // Two more in the same sitting, across two MCP sessions (the hub restarts in between): one
    // activity session. Another overlay is closed once: a lucky run.
    assert!(close(&nova, &mut a, &page, "#newsletter-close").await?);
    // Journaling is off the hot path: what a crash would lose is only what no barrier waited
    // for. The suggestion waits for it.
    a.step("nova.learn_suggest", json!({"scope": scope, "limit": 1})).await?;
    nova.restart_hub().await?;
    assert!(close(&nova, &mut a, &page, "#newsletter-close").await?);
    nova.advance_clock(APART)?;
    a.visit(&format!("{page}?promo")).await?;
    a.step("nova.click_selector", json!({"selector": "#promo-close"})).await?;

    let s = a.step("nova.learn_suggest", json!({"scope": scope, "limit": 20})).await?;
    let ops = s["opportunities"].as_array().cloned().unwrap_or_default();
    assert!(ops.iter().all(|o| o["selector"] != "#promo-close"), "one lucky run is no opportunity: {s}");
    let o = ops.iter().find(|o| o["selector"] == "#newsletter-close").cloned().unwrap_or_default();
    assert_eq!(
        (
            o["supportCount"].clone(),
            o["successCount"].clone(),
            o["failureCount"].clone(),
            o["distinctSessions"].clone()
        ),
        (json!(3), json!(3), json!(0), json!(1)),
        "{s}"
    );
    // log2(3) = 1.58, one session: no bonus, all successes: 2.0.
    assert_eq!((o["score"].clone(), o["suggestion"].clone()), (json!(3.58), json!("learn_generate")), "{o}");
    assert_eq!(o["scoreBreakdown"]["total"], o["score"], "{o}");

    // Generated as a candidate (L0): review knowledge, not applied anywhere.
    let g = a.step("nova.learn_generate", json!({"scope": scope})).await?;
    assert_eq!(g["generated"], 1, "{g}");
    let p = g["proposals"][0].clone();
    assert_eq!(
        (p["heuristic"].clone(), p["kind"].clone(), p["phenomenonType"].clone(), p["written"].clone()),
        (json!("overlay_dismiss"), json!("phenomenon"), json!("modal"), json!(true)),
        "{g}"
    );
    let id = p["targetStableId"].as_str().unwrap_or_default().to_owned();
    assert!(id.starts_with("lcj_sid_"), "{g}");
    let again = a.step("nova.learn_generate", json!({"scope": scope})).await?;
    assert_eq!(
        (again["generated"].clone(), again["proposals"][0]["dropped"].clone()),
        (json!(0), json!("duplicate")),
        "{again}"
    );
    let one = a.step("nova.pks_get", json!({"scope": scope, "phenomenonId": id})).await?;
    assert_eq!(one["phenomenon"]["learningLevel"], "L0", "{one}");
    let x = a.step("nova.explain", json!({"scope": scope, "stableId": id})).await?;
    assert_eq!(
        (x["nextTransition"].clone(), x["approved"].clone(), x["evidence"]["support14d"].clone()),
        (json!("l0_to_l1"), json!(true), json!(3)),
        "{x}"
    );

    // Shadow through the gates: a dry run first, then the write.
    let promote =
        |t: &str, dry: bool| json!({"scope": scope, "stableIds": [id], "transition": t, "dryRun": dry});
    let r = a.step("nova.learn_promote", promote("l0_to_l1", true)).await?;
    assert_eq!(
        (r["approved"].clone(), r["applied"].clone(), r["decisions"][0]["skippedBecause"].clone()),
        (json!(1), json!(0), json!("dry_run")),
        "{r}"
    );
    let r = a.step("nova.learn_promote", promote("l0_to_l1", false)).await?;
    assert_eq!(
        (r["applied"].clone(), r["decisions"][0]["fromLevel"].clone(), r["decisions"][0]["toLevel"].clone()),
        (json!(1), json!(0), json!(1)),
        "{r}"
    );

    // Active only once its successes span two activity sessions.
    let r = a.step("nova.learn_promote", json!({"scope": scope, "stableIds": [id]})).await?;
    let up = decision(&r, "l1_to_l2");
    assert!(up["rejectionReason"].as_str().unwrap_or_default().contains("session"), "{r}");
    assert_eq!(decision(&r, "deprecation")["approved"], false, "{r}");
    nova.advance_clock(SITTING)?;
    assert!(close(&nova, &mut a, &page, "#newsletter-close").await?);
    let r = a.step("nova.learn_promote", promote("l1_to_l2", false)).await?;
    assert_eq!((r["applied"].clone(), r["decisions"][0]["toLevel"].clone()), (json!(1), json!(2)), "{r}");
    let f = a.step("nova.learn_feedback", json!({"scope": scope})).await?;
    let kinds: Vec<Value> =
        f["events"].as_array().into_iter().flatten().map(|e| e["reasonKind"].clone()).collect();
    assert_eq!(kinds, [json!("l1_to_l2"), json!("l0_to_l1")], "{f}");
    assert!(f["events"][0]["reason"]["gates"].as_array().is_some_and(|g| !g.is_empty()), "{f}");

    // The site changes its markup: two failures in a row demote it, a third retires it.
    let redesigned = format!("{page}?redesign");
    for _ in 0..2 {
        assert!(!close(&nova, &mut a, &redesigned, "#newsletter-close").await?);
    }
    let r = a.step("nova.learn_promote", json!({"scope": scope, "transition": "demotion"})).await?;
    assert_eq!((r["applied"].clone(), r["decisions"][0]["toLevel"].clone()), (json!(1), json!(1)), "{r}");
    let r = a.step("nova.learn_promote", promote("deprecation", true)).await?;
    assert_eq!(r["approved"], 0, "two failures do not retire a shadow entry: {r}");
    assert!(!close(&nova, &mut a, &redesigned, "#newsletter-close").await?);
    let r = a.step("nova.learn_promote", promote("deprecation", false)).await?;
    assert_eq!(
        (r["applied"].clone(), r["decisions"][0]["toState"].clone()),
        (json!(1), json!("retired")),
        "{r}"
    );

    // Revival needs fresh successes, from two activity sessions.
    let r = a.step("nova.learn_promote", promote("revive", true)).await?;
    assert!(r["decisions"][0]["rejectionReason"].as_str().unwrap_or_default().contains("fresh"), "{r}");
    assert!(close(&nova, &mut a, &page, "#newsletter-close").await?);
    let r = a.step("nova.learn_promote", promote("revive", true)).await?;
    assert_eq!(r["approved"], 0, "one fresh success is not enough: {r}");
    nova.advance_clock(SITTING)?;
    assert!(close(&nova, &mut a, &page, "#newsletter-close").await?);
    let r = a.step("nova.learn_promote", promote("revive", false)).await?;
    assert_eq!((r["applied"].clone(), r["decisions"][0]["toLevel"].clone()), (json!(1), json!(1)), "{r}");

    let m = a.step("nova.memory_stats", json!({"componentFilter": scope})).await?;
    let lcj = &m["components"]["lcj"];
    assert_eq!(lcj["candidates"]["byOrigin"]["generated"], 1, "{m}");
    assert!(lcj["observations"]["byKind"]["action_failure"].as_i64().unwrap_or(0) >= 3, "{m}");
    assert!(lcj["toolEvents"]["activitySessions"].as_i64().unwrap_or(0) >= 3, "{m}");
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn every_failure_row_names_its_field_and_the_journal_outlives_a_kill() -> anyhow::Result<()> {
    let nova = Nova::start_with_default_gates().await?;
    let mut a = learner(&nova, "row-a").await?;
    let b = learner(&nova, "row-b").await?;
    let page = nova.url("learn/newsletter.html");
    let scope = page.split('/').nth(2).unwrap_or_default().to_owned();
    let seen = a.visit(&page).await?;
    let tab = seen["targetId"].as_str().map(str::to_owned).or_else(|| a.tab.clone()).unwrap_or_default();

    let long = "x".repeat(281);
    for (tool, args, field, bound) in [
        ("nova.learn_suggest", json!({"bogus": 1}), "bogus", ""),
        ("nova.learn_suggest", json!({"limit": 21}), "limit", "20"),
        ("nova.learn_generate", json!({}), "scope", ""),
        ("nova.learn_generate", json!({"scope": ""}), "scope", ""),
        ("nova.learn_generate", json!({"scope": scope, "limit": 0}), "limit", "20"),
        ("nova.learn_promote", json!({"scope": "*"}), "scope", ""),
        ("nova.learn_promote", json!({"scope": scope, "stableIds": []}), "stableIds", ""),
        ("nova.learn_promote", json!({"scope": scope, "stableIds": [1]}), "stableIds", ""),
        ("nova.learn_promote", json!({"scope": scope, "transition": "sideways"}), "transition", ""),
        ("nova.learn_promote", json!({"scope": scope, "dryRun": "true"}), "dryRun", ""),
        ("nova.learn_feedback", json!({"limit": 101}), "limit", "100"),
        ("nova.explain", json!({"scope": scope, "stableId": "a", "stable_id": "b"}), "stableId", ""),
        (
            "nova.explain",
            json!({"scope": scope, "stableId": "a", "observedSignals": ["x"], "observed_signals": ["y"]}),
            "observedSignals",
            "",
        ),
        ("nova.revalidate", json!({"scope": scope}), "targetId", ""),
        ("nova.revalidate", json!({"targetId": tab, "limit": 6}), "limit", "5"),
        (
            "nova.memory_add_candidate",
            json!({"targetId": tab, "component": "overlay", "claim": long}),
            "claim",
            "280",
        ),
        (
            "nova.memory_add_candidate",
            json!({"targetId": tab, "component": "overlay", "claim": "c", "confidence": 1.5}),
            "confidence",
            "1",
        ),
    ] {
        let mut args = args;
        args["agentId"] = json!("row-a");
        let e = a.client.call_err(tool, args.clone()).await?;
        assert_eq!(e.code.0, -32602, "{tool} {args}: {e:?}");
        assert!(e.message.contains(field) && e.message.contains(bound), "{tool} {args}: {}", e.message);
    }
    // Writes need the site open in a tab; a dry run does not.
    for tool in ["nova.learn_generate", "nova.learn_promote"] {
        let r = a.step(tool, json!({"scope": "elsewhere.example"})).await?;
        assert_eq!(r["reasonCode"], "pks.scope_not_open", "{tool}: {r}");
    }
    let r = a.step("nova.learn_promote", json!({"scope": "elsewhere.example", "dryRun": true})).await?;
    assert_eq!((r["ok"].clone(), r["total"].clone()), (json!(true), json!(0)), "{r}");

    // A claim belongs to the agent holding the tab.
    let add = json!({"targetId": tab, "component": "newsletter overlay", "claim": "appears on every visit",
                     "confidence": 0.7});
    let r = a.step("nova.memory_add_candidate", add.clone()).await?;
    assert_eq!(
        (r["created"].clone(), r["ownerAgentId"].clone(), r["status"].clone()),
        (json!(true), json!("row-a"), json!("unverified")),
        "{r}"
    );
    let r2 = a.step("nova.memory_add_candidate", add.clone()).await?;
    assert_eq!(
        (r2["created"].clone(), r2["candidateId"].clone()),
        (json!(false), r["candidateId"].clone()),
        "merged: {r2}"
    );
    let e = b
        .client
        .call_err(
            "nova.memory_add_candidate",
            json!({"agentId": "row-b", "targetId": tab,
        "component": "x", "claim": "y"}),
        )
        .await?;
    assert_eq!(
        e.data.as_ref().map(|d| d["reasonCode"].clone()),
        Some(json!("claim.owner_mismatch")),
        "{e:?}"
    );
    let secret = a
        .client
        .call_err(
            "nova.memory_add_candidate",
            json!({"agentId": "row-a", "targetId": tab,
        "component": "login", "claim": "password=hunter2 works"}),
        )
        .await?;
    assert!(secret.message.contains("secret"), "{}", secret.message);
    a.step("nova.tab_release", json!({"targetId": tab})).await?;
    let (r, failed) = a.call("nova.memory_add_candidate", add).await?;
    assert!(failed && r["reasonCode"] == "lcj.tab_not_claimed", "{r}");

    // The journal outlives a hub killed while calls are being written.
    let before = a.step("nova.memory_stats", json!({})).await?;
    let n = before["components"]["lcj"]["toolEvents"]["total"].as_i64().unwrap_or(-1);
    assert!(n > 20 && before["ingestionComplete"] == true, "{before}");
    for i in 1..=20 {
        a.step("nova.learn_feedback", json!({"limit": i})).await?;
    }
    nova.restart_hub().await?;
    {
        let c = rusqlite::Connection::open_with_flags(
            nova.store_path(),
            rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
        )?;
        let ok: String = c.query_row("PRAGMA integrity_check", [], |r| r.get(0))?;
        assert_eq!(ok, "ok");
    }
    let after = a.step("nova.memory_stats", json!({})).await?;
    let m = after["components"]["lcj"]["toolEvents"]["total"].as_i64().unwrap_or(-1);
    // The stats call itself at least was written before the kill; each call once at most (the
    // feedback calls: the twenty, and one refused for its limit).
    let feedback =
        after["components"]["lcj"]["toolEvents"]["byTool"]["nova.learn_feedback"].as_i64().unwrap_or(-1);
    assert!(m > n && (1..=21).contains(&feedback), "{n} before, {m} after: {after}");
    assert_eq!(after["ingestionComplete"], true, "{after}");
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn semantic_opportunities_are_asked_about_escalate_and_resolve() -> anyhow::Result<()> {
    let nova = Nova::start_with_default_gates().await?;
    let mut a = learner(&nova, "semantic").await?;
    let page = nova.url("blockers.html");

    // Declining a consent request on a site Nova knows nothing of raises an opportunity.
    a.visit(&page).await?;
    a.step("nova.click_selector", json!({"selector": "#no"})).await?;
    let r = a.step("nova.click_selector", json!({"selector": "#cookie-consent #reject"})).await?;
    let p = r["pksSemanticLearning"].clone();
    assert_eq!(
        (p["gateId"].clone(), p["status"].clone(), p["kind"].clone(), p["skeleton"]["type"].clone()),
        (json!("pks.semantic_learning"), json!("prompted"), json!("consent_cmp"), json!("consent_cmp")),
        "{r}"
    );
    let id = p["opportunityId"].as_str().unwrap_or_default().to_owned();
    assert!(id.starts_with("sem:consent_cmp:"), "{p}");
    for field in [
        "origin",
        "fingerprint",
        "confidence",
        "reason",
        "whyAutoUpsertIsInsufficient",
        "resolutionTools",
        "evidenceJson",
    ] {
        assert!(!p[field].is_null(), "{field} missing: {p}");
    }

    // Unresolved, it escalates: warned after three more calls on the site, and the gate warns.
    for n in 0..3 {
        let r = a.step("nova.perceive", json!({"maxElements": 50 + n})).await?;
        assert_eq!(r["pksSemanticLearning"]["opportunityId"], id.as_str(), "{r}");
    }
    let r = a.step("nova.perceive", json!({"maxElements": 60})).await?;
    assert_eq!(r["pksSemanticLearning"]["status"], "warned", "{r}");
    let g = &r["_aagGates"]["semanticLearning"];
    assert_eq!(
        (g["status"].clone(), g["details"]["opportunityId"].clone()),
        (json!("warned"), json!(id)),
        "{r}"
    );

    // Resolving it: every bad argument names its field; defer quiets it.
    for (args, field) in [
        (json!({"verdict": "defer"}), "opportunityId"),
        (json!({"opportunityId": id, "verdict": "later"}), "verdict"),
        (json!({"opportunityId": id, "verdict": "defer", "reason": "x".repeat(501)}), "reason"),
        (json!({"opportunityId": id, "verdict": "defer", "colour": 1}), "colour"),
    ] {
        let e = a.client.call_err("nova.learn_resolve_opportunity", args).await?;
        assert!(e.code.0 == -32602 && e.message.contains(field), "{field}: {}", e.message);
    }
    let (r, failed) = a
        .call("nova.learn_resolve_opportunity", json!({"opportunityId": "sem:nothing", "verdict": "unsafe"}))
        .await?;
    assert!(failed && r["reasonCode"] == "lcj.opportunity_not_found", "{r}");
    let r = a
        .step(
            "nova.learn_resolve_opportunity",
            json!({"opportunityId": id, "verdict": "defer", "reason": "mapping it later"}),
        )
        .await?;
    assert_eq!(
        (r["priorState"].clone(), r["resolvedState"].clone(), r["verdict"].clone()),
        (json!("warned"), json!("deferred"), json!("defer")),
        "{r}"
    );
    let r = a.step("nova.perceive", json!({"maxElements": 70})).await?;
    assert!(r["pksSemanticLearning"].is_null() && r["_aagGates"]["semanticLearning"].is_null(), "{r}");

    // A sign-in wall: resolved by storing a matching entry.
    let r = a.visit(&nova.url("login.html")).await?;
    let p = r["pksSemanticLearning"].clone();
    assert_eq!(p["kind"], "login_wall", "{r}");
    let scope = page.split('/').nth(2).unwrap_or_default().to_owned();
    let wall = json!({"id": "sign_in_wall", "type": "login_wall",
        "fingerprint": {"signals": [{"kind": "dom", "match": "form#login"}, {"kind": "text", "match": "Sign in"}]},
        "playbook": {"policy": "warn", "actions": [], "verify": []}, "context": {"routes": ["/login.html"]}});
    let r = a.step("nova.pks_upsert", json!({"scope": scope, "phenomenon": wall})).await?;
    let res = &r["pksSemanticLearningResolution"];
    assert_eq!(
        (res["opportunityId"].clone(), res["verdict"].clone(), res["matchSource"].clone()),
        (p["opportunityId"].clone(), json!("upsert"), json!("pks_upsert")),
        "{r}"
    );

    // Leaving a site with an opportunity open says so, once.
    let other = page.replace("127.0.0.1", "www.site.localhost");
    a.visit(&other).await?;
    a.step("nova.click_selector", json!({"selector": "#no"})).await?;
    let r = a.step("nova.click_selector", json!({"selector": "#cookie-consent #reject"})).await?;
    assert_eq!(r["pksSemanticLearning"]["kind"], "consent_cmp", "{r}");
    let r = a.step("nova.navigate", json!({"url": page})).await?;
    let s = &r["pksSemanticLearningBatchSummary"];
    assert_eq!(
        (s["status"].clone(), s["entries"][0]["kind"].clone()),
        (json!("batch_summary"), json!("consent_cmp")),
        "{r}"
    );
    assert!(s["origin"].as_str().unwrap_or_default().starts_with("site.localhost"), "{r}");
    a.visit(&other).await?;
    let r = a.step("nova.navigate", json!({"url": page})).await?;
    assert!(r["pksSemanticLearningBatchSummary"].is_null(), "summarised once: {r}");

    // A fragile selector clicked three times in a session.
    a.visit(&nova.url("basic.html")).await?;
    let mut last = Value::Null;
    for _ in 0..3 {
        last = a.step("nova.click_selector", json!({"selector": "main > button:nth-of-type(1)"})).await?;
    }
    assert_eq!(last["pksSemanticLearning"]["kind"], "risky_repeat", "{last}");
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn learn_mode_refuses_an_early_release_and_accepts_an_explained_exhaustion() -> anyhow::Result<()> {
    let nova = Nova::start_with_default_gates().await?;
    let mut a = learner(&nova, "mapper").await?;
    a.visit(&nova.url("basic.html")).await?;
    let tab = a.tab.clone().unwrap_or_default();

    let g =
        a.step("nova.get_instructions", json!({"mode": "learn", "taskKeywords": ["fixture site"]})).await?;
    assert!(g["instructions"].as_str().unwrap_or_default().contains("PLATFORM_PLAYBOOK"), "{g}");
    let lm = &g["learnMode"];
    assert_eq!(
        (
            lm["deliverable"]["name"].clone(),
            lm["progress"]["minVisitedSurfaces"].clone(),
            lm["progress"]["minMeaningfulInteractions"].clone(),
            lm["progress"]["allFloorsMet"].clone()
        ),
        (json!("PLATFORM_PLAYBOOK"), json!(5), json!(8), json!(false)),
        "{g}"
    );
    let task = lm["progress"]["tasks"][0].clone();
    assert_eq!(
        (task["targetId"].clone(), task["learnModeActive"].clone(), task["visitedSurfaces"].clone()),
        (json!(tab), json!(true), json!(0)),
        "what came before the task does not count: {g}"
    );
    for (args, field) in [
        (json!({"mode": "learn", "domain": "a.example", "scopeDomain": "b.example"}), "scopeDomain"),
        (json!({"mode": "learn", "taskKeywords": [""]}), "taskKeywords[0]"),
        (json!({"mode": "learn", "scope": "everything"}), "scope"),
    ] {
        let mut args = args;
        args["agentId"] = json!("mapper");
        let e = a.client.call_err("nova.get_instructions", args.clone()).await?;
        assert!(e.code.0 == -32602 && e.message.contains(field), "{args}: {}", e.message);
    }

    // A shallow tour: two pages, one action. The release is refused, naming the floors. (A page
    // read again within 30 s is one observation: the clock moves past the journal's throttle.)
    a.visit(&nova.url("page2.html")).await?;
    nova.advance_clock(APART)?;
    a.visit(&nova.url("basic.html")).await?;
    a.step("nova.click_selector", json!({"selector": "#counter"})).await?;
    let e = a.client.call_err("nova.tab_release", json!({"targetId": tab, "agentId": "mapper"})).await?;
    let data = e.data.clone().unwrap_or_default();
    assert_eq!(
        (
            e.code.0,
            data["reasonCode"].clone(),
            data["required"]["minVisitedSurfaces"].clone(),
            data["current"]["visitedSurfaces"].clone(),
            data["current"]["meaningfulInteractions"].clone()
        ),
        (-32041, json!("learn.coverage_not_met"), json!(5), json!(2), json!(1)),
        "{e:?}"
    );
    let e = a
        .client
        .call_err(
            "nova.tab_release",
            json!({"targetId": tab, "agentId": "mapper", "coverageExhausted": true}),
        )
        .await?;
    assert!(e.code.0 == -32602 && e.message.contains("coverageExhaustedReason"), "{}", e.message);
    let r = a
        .step("nova.tab_release", json!({"targetId": tab, "coverageExhausted": true,
                                         "coverageExhaustedReason": "the rest of the site needs the person's sign-in"}))
        .await?;
    assert_eq!(
        (r["released"].clone(), r["learnMode"]["ended"].clone()),
        (json!(true), json!("coverage_exhausted")),
        "{r}"
    );

    // A real exploration: five pages, eight actions; the release goes through.
    nova.advance_clock(APART)?;
    let g = a.step("nova.get_instructions", json!({"mode": "learn", "detail": "compact"})).await?;
    assert_eq!(g["learnMode"]["progress"]["tasks"][0]["visitedSurfaces"], 0, "a new task: {g}");
    for page in ["page2.html", "blockers.html", "learn/newsletter.html", "counter.html", "basic.html"] {
        a.visit(&nova.url(page)).await?;
    }
    for _ in 0..8 {
        a.step("nova.click_selector", json!({"selector": "#counter"})).await?;
    }
    let g = a.step("nova.get_instructions", json!({"mode": "learn"})).await?;
    let p = &g["learnMode"]["progress"];
    assert_eq!(
        (
            p["tasks"][0]["visitedSurfaces"].clone(),
            p["tasks"][0]["meaningfulInteractions"].clone(),
            p["allFloorsMet"].clone()
        ),
        (json!(5), json!(8), json!(true)),
        "{g}"
    );
    let r = a.step("nova.tab_release", json!({"targetId": tab})).await?;
    assert_eq!(r["learnMode"]["ended"], "complete", "{r}");
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn a_click_that_keeps_working_is_learned_alone_only_when_nothing_is_open() -> anyhow::Result<()> {
    let nova = Nova::start_with_default_gates().await?;
    let mut a = learner(&nova, "autonomous").await?;
    let column = nova.url("learn/newsletter.html");
    let archive = nova.url("learn/archive.html");
    let scope = column.split('/').nth(2).unwrap_or_default().to_owned();

    // A consent request answered on the site opens a semantic opportunity first.
    a.visit(&nova.url("blockers.html")).await?;
    a.step("nova.click_selector", json!({"selector": "#no"})).await?;
    let r = a.step("nova.click_selector", json!({"selector": "#cookie-consent #reject"})).await?;
    let opportunity = r["pksSemanticLearning"]["opportunityId"].as_str().unwrap_or_default().to_owned();
    assert!(opportunity.starts_with("sem:consent_cmp:"), "{r}");

    // Three successes in a row, on two pages and three documents: learned, but held back while
    // the opportunity is open.
    let mut last = Value::Null;
    for page in [&column, &archive, &column] {
        nova.advance_clock(APART)?;
        a.visit(page).await?;
        last = a.step("nova.click_selector", json!({"selector": "#newsletter-close"})).await?;
    }
    let auto = &last["pksAutonomousLearning"];
    assert_eq!(
        (auto["heldBack"].clone(), auto["opportunityId"].clone()),
        (json!(true), json!(opportunity)),
        "{last}"
    );
    a.step(
        "nova.learn_resolve_opportunity",
        json!({"opportunityId": opportunity, "verdict": "not_applicable",
                                                     "reason": "a test page"}),
    )
    .await?;

    // Resolved: the next success stores it, as a candidate nothing applies yet.
    nova.advance_clock(APART)?;
    a.visit(&archive).await?;
    let r = a.step("nova.click_selector", json!({"selector": "#newsletter-close"})).await?;
    let auto = &r["pksAutonomousLearning"];
    let id = auto["targetStableId"].as_str().unwrap_or_default().to_owned();
    assert!(auto["written"] == true && id.starts_with("auto_learning:"), "{r}");
    let one = a.step("nova.pks_get", json!({"scope": scope, "phenomenonId": id})).await?;
    assert_eq!(
        (
            one["phenomenon"]["learningLevel"].clone(),
            one["phenomenon"]["origin"].clone(),
            one["phenomenon"]["type"].clone()
        ),
        (json!("L0"), json!("auto_learning"), json!("modal")),
        "{one}"
    );
    // Once stored, the same clicks learn nothing more.
    nova.advance_clock(APART)?;
    a.visit(&column).await?;
    let r = a.step("nova.click_selector", json!({"selector": "#newsletter-close"})).await?;
    assert!(r["pksAutonomousLearning"].is_null(), "{r}");
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn completing_the_task_run_of_a_learn_tab_meets_the_same_floors() -> anyhow::Result<()> {
    let nova = Nova::start_with_default_gates().await?;
    let mut a = learner(&nova, "mapper-run").await?;
    a.step("nova.tools_bundle", json!({"bundle": "task_memory"})).await?;
    a.visit(&nova.url("basic.html")).await?;
    a.step("nova.get_instructions", json!({"mode": "learn"})).await?;
    let created = a
        .step(
            "nova.task_instance_create",
            json!({"adHocContext": {"taskType": "platform_map", "displayName": "Map the fixture site",
                   "goal": "Map the fixture site's pages and controls",
                   "completionCondition": {"coverageMode": "exploratory", "unitKind": "url", "stopMetric": "checked_units", "evidencePolicy": {"mode": "none"}}}}),
        )
        .await?;
    let id = created["instanceId"].as_str().unwrap_or_default().to_owned();
    let r = a
        .step(
            "nova.task_instance_progress",
            json!({"instanceId": id, "expectedInstanceRev": created["instanceRev"],
               "clientEventId": "p1", "discoveredUnits": [{"unitKey": "/basic.html"}]}),
        )
        .await?;
    let r = a
        .step(
            "nova.task_instance_progress",
            json!({"instanceId": id, "expectedInstanceRev": r["instanceRev"],
               "clientEventId": "p2", "unitUpdates": [{"unitKey": "/basic.html", "status": "checked"}]}),
        )
        .await?;
    let rev = r["instanceRev"].clone();
    let complete = |event: &str, extra: Value| {
        let mut args = json!({"agentId": "mapper-run", "instanceId": id, "expectedInstanceRev": rev, "clientEventId": event});
        for (k, v) in extra.as_object().cloned().unwrap_or_default() {
            args[k] = v;
        }
        args
    };
    let e = a.client.call_err("nova.task_instance_complete", complete("c1", json!({}))).await?;
    assert_eq!(e.code.0, -32041, "{e:?}");
    let e = a
        .client
        .call_err("nova.task_instance_complete", complete("c2", json!({"coverageExhausted": true})))
        .await?;
    assert!(e.code.0 == -32602 && e.message.contains("coverageExhaustedReason"), "{}", e.message);
    let done = a
        .step(
            "nova.task_instance_complete",
            complete(
                "c3",
                json!({"coverageExhausted": true,
               "coverageExhaustedReason": "one page is all the fixture has"}),
            ),
        )
        .await?;
    assert_eq!(
        (done["completed"].clone(), done["learnMode"]["ended"].clone()),
        (json!(true), json!("coverage_exhausted")),
        "{done}"
    );
    let g = a.step("nova.get_instructions", json!({"mode": "learn", "scope": "allOwnerClaims"})).await?;
    let open: Vec<Value> = g["learnMode"]["progress"]["tasks"].as_array().cloned().unwrap_or_default();
    assert!(
        open.iter().all(|t| t["taskId"] != done["learnMode"]["taskId"]),
        "the ended task is not reported: {g}"
    );
    Ok(())
}
