//! Operational knowledge (docs/ok.md) in the real browser, at the product's default gates, on a
//! fixture service (`fixtures/ok/`: a dashboard with plan and account, a chat with a model
//! picker, a settings page, a sign-in page) that a site adapter names `okdemo`.

use nova_e2e::Nova;
use nova_e2e::agent::Agent;
use serde_json::{Value, json};

/// The site adapter that names the fixture service and says where its state shows.
const OKDEMO: &str = r##"{
  "name": "okdemo",
  "urlContains": "/ok/",
  "service": "okdemo",
  "chat": {"composer": "#composer", "send": "#send", "messages": ".turn"},
  "login": {"loggedIn": ".signout"},
  "picker": {"model": "#model", "modelSelected": "#model", "modelOptions": "#model option"},
  "account": {"displayName": ".who", "email": ".mail", "plan": ".plan"}
}"##;

async fn start() -> anyhow::Result<(Nova, Agent)> {
    let nova = Nova::start_with_default_gates().await?;
    let dir = nova.data.join("adapters");
    std::fs::create_dir_all(&dir)?;
    std::fs::write(dir.join("okdemo.json"), OKDEMO)?;
    let mut a = Agent::new(&nova, "ok-agent").await?;
    a.ready().await?;
    Ok((nova, a))
}

fn claim(key: &str, value: Value, certainty: &str) -> Value {
    json!({"signalKey": key, "value": value, "certainty": certainty, "evidence": "seen on the page"})
}

async fn observe(a: &mut Agent, claims: Vec<Value>) -> anyhow::Result<Value> {
    a.step("nova.ok_observe", json!({"claims": claims, "perceptionId": "p1"})).await
}

/// `(key, state)` of each entry of an observe reply's `facts`.
fn states(r: &Value) -> Vec<(String, String)> {
    r["facts"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|f| {
            (
                f["key"].as_str().unwrap_or_default().to_owned(),
                f["state"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect()
}

fn count(nova: &Nova, sql: &str) -> anyhow::Result<i64> {
    let c = rusqlite::Connection::open(nova.store_path())?;
    Ok(c.query_row(sql, [], |r| r.get(0))?)
}

#[tokio::test(flavor = "multi_thread")]
async fn first_visit_system_facts_and_every_claim_outcome() -> anyhow::Result<()> {
    let (nova, mut a) = start().await?;
    let nav = a.step("nova.navigate", json!({"url": nova.url("ok/dashboard.html")})).await?;
    let hints = &nav["okHints"];
    assert_eq!(hints["firstVisit"], true, "{nav}");
    assert_eq!(hints["shouldObserve"], true);
    assert_eq!(hints["serviceKey"], "okdemo");
    assert_eq!(hints["missingOrStaleKeys"], json!(["core.login_state", "core.page.type"]));
    assert_eq!(hints["currentFacts"], Value::Null);

    // Nova reads what the page shows itself: system facts, and the reply keeps no raw signals.
    let page = a.step("nova.perceive", json!({})).await?;
    assert!(page.get("signals").is_none(), "{page}");
    let facts = &page["okHints"]["currentFacts"];
    assert_eq!(facts["core.login_state"]["valueJson"], "logged_in", "{page}");
    assert_eq!(facts["core.login_state"]["sourceKind"], "system");
    assert_eq!(facts["core.plan.tier"]["valueJson"], "team");
    assert_eq!(facts["core.plan.tier"]["scope"], "account", "the account is known from its email");
    assert_eq!(facts["core.account.email"]["valueJson"], "ada@okdemo.test");
    assert_eq!(
        page["okHints"]["missingOrStaleKeys"],
        json!(["core.page.type"]),
        "a dashboard is not recognised generically"
    );
    assert_eq!(page["okHints"]["capabilities"]["authenticated"], true);

    // The agent reports what it sees: a new fact, and agreement with Nova's reads.
    let r = observe(
        &mut a,
        vec![
            claim("core.page.type", json!("dashboard"), "certain"),
            claim("core.login_state", json!("logged_in"), "likely"),
        ],
    )
    .await?;
    assert_eq!(
        states(&r),
        [("core.page.type".into(), "fresh".into()), ("core.login_state".into(), "confirmed".into())],
        "{r}"
    );
    assert_eq!(r["facts"][0]["isNew"], true);
    assert_eq!(
        (r["accepted"].clone(), r["rejected"].clone(), r["warnings"].clone()),
        (json!(2), json!(0), Value::Null)
    );
    let page = a.step("nova.perceive", json!({})).await?;
    assert_eq!(page["okHints"], Value::Null, "nothing to refresh: {}", page["okHints"]);

    // superseded: an agent's certain word over a page read; conflicted: a likely differing
    // claim against it; observation_only: a tentative differing one.
    let r = observe(&mut a, vec![claim("core.plan.tier", json!("enterprise"), "certain")]).await?;
    assert_eq!(
        (states(&r), r["superseded"].clone()),
        (vec![("core.plan.tier".into(), "fresh".into())], json!(1))
    );
    let r = observe(&mut a, vec![claim("core.plan.tier", json!("pro"), "likely")]).await?;
    assert_eq!(
        (states(&r), r["conflicted"].clone()),
        (vec![("core.plan.tier".into(), "conflicted".into())], json!(1))
    );
    assert_eq!(r["facts"][0]["value"], "enterprise", "OK still holds what was reported with certainty");
    assert!(r["warnings"][0].as_str().unwrap_or_default().contains("conflicted"), "{r}");
    let r = observe(&mut a, vec![claim("core.plan.tier", json!("free"), "tentative")]).await?;
    assert_eq!(
        (states(&r), r["observationOnly"].clone()),
        (vec![("core.plan.tier".into(), "observation_only".into())], json!(1))
    );
    // A conflicted fact asks for a look; Nova's own read of the page settles it.
    let page = a.step("nova.perceive", json!({})).await?;
    assert_eq!(page["okHints"], Value::Null, "settled: {}", page["okHints"]);
    let r = observe(&mut a, vec![claim("core.plan.tier", json!("team"), "tentative")]).await?;
    assert_eq!(states(&r), [("core.plan.tier".into(), "confirmed".into())], "OK holds team again: {r}");

    // scope_full: 500 facts in this tab's binding, then one more.
    for batch in 0..10 {
        let claims =
            (0..50).map(|i| claim(&format!("okdemo.widget{}", batch * 50 + i), json!(i), "likely")).collect();
        assert_eq!(observe(&mut a, claims).await?["accepted"], 50);
    }
    let r = observe(&mut a, vec![claim("okdemo.one_more", json!(1), "likely")]).await?;
    assert_eq!(states(&r), [("okdemo.one_more".into(), "scope_full".into())], "{r}");
    assert_eq!(count(&nova, "SELECT COUNT(*) FROM ok_facts WHERE fact_key = 'okdemo.one_more'")?, 0);

    // The keys an agent can report: the core vocabulary, then the custom keys OK holds facts of.
    let core = a.step("nova.ok_signal_schema", json!({"namespace": "core"})).await?;
    let keys = core["keys"].as_array().cloned().unwrap_or_default();
    assert_eq!(
        (core["count"].clone(), core["truncated"].clone(), keys.len()),
        (json!(15), json!(false), 15),
        "{core}"
    );
    assert_eq!(keys[0]["signalKey"], "core.login_state", "{core}");
    assert_eq!(keys[0]["allowedValues"], json!(["logged_in", "logged_out", "session_expired"]));
    assert_eq!(
        (keys[0]["scope"].clone(), keys[0]["exampleJson"].clone()),
        (json!("tab"), json!("\"logged_in\""))
    );
    let tier = keys.iter().find(|k| k["signalKey"] == "core.plan.tier").cloned().unwrap_or_default();
    assert_eq!(
        (tier["scope"].clone(), tier["origin"].clone()),
        (json!("account"), json!("vocabulary")),
        "{tier}"
    );
    assert!(keys.iter().all(|k| k["namespace"] == "core" && k["deprecated"] == false), "{core}");
    let custom = a.step("nova.ok_signal_schema", json!({"namespace": "okdemo", "maxEntries": 3})).await?;
    let names: Vec<&str> =
        custom["keys"].as_array().into_iter().flatten().filter_map(|k| k["signalKey"].as_str()).collect();
    assert_eq!(names, ["okdemo.widget0", "okdemo.widget1", "okdemo.widget10"], "{custom}");
    assert_eq!(
        (custom["truncated"].clone(), custom["namespaceFilter"].clone()),
        (json!(true), json!("okdemo"))
    );
    let widget = &custom["keys"][0];
    assert_eq!(
        (widget["origin"].clone(), widget["exampleJson"].clone()),
        (json!("reported"), Value::Null),
        "{widget}"
    );
    assert!(widget["description"].as_str().unwrap_or_default().contains("1 current fact,"), "{widget}");
    let all = a.step("nova.ok_signal_schema", json!({})).await?;
    assert_eq!(
        (all["count"].clone(), all["truncated"].clone()),
        (json!(100), json!(true)),
        "core, then custom keys"
    );
    assert_eq!(
        (all["keys"][14]["signalKey"].clone(), all["keys"][15]["signalKey"].clone()),
        (json!("core.feature.available"), json!("okdemo.widget0"))
    );
    let none = a.step("nova.ok_signal_schema", json!({"namespace": "acme"})).await?;
    assert_eq!((none["count"].clone(), none["keys"].clone()), (json!(0), json!([])), "{none}");

    // The ledger: observations append-only, one current fact per scope and key.
    assert_eq!(
        count(
            &nova,
            "SELECT COUNT(*) FROM (SELECT scope_ref, fact_key FROM ok_facts WHERE valid_to IS NULL
                       GROUP BY scope_ref, fact_key HAVING COUNT(*) > 1)"
        )?,
        0
    );
    assert_eq!(count(&nova, "SELECT COUNT(*) FROM ok_observations WHERE outcome = 'conflicted'")?, 1);

    let stats = a.step("nova.memory_stats", json!({"windowHours": 1, "topComponents": 2})).await?;
    let ok = &stats["components"]["ok"];
    assert_eq!(ok["conflicts"], 1, "{stats}");
    assert_eq!(ok["topServices"][0]["serviceKey"], "okdemo");
    assert_eq!(ok["topSignalKeys"].as_array().map(Vec::len), Some(2));
    assert!(ok["observations"]["bySource"]["system"].as_i64() > Some(0), "{stats}");
    let plan = a.step("nova.memory_stats", json!({"componentFilter": "core.plan"})).await?;
    assert_eq!(plan["components"]["ok"]["topSignalKeys"][0]["signalKey"], "core.plan.tier", "{plan}");
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn hard_limits_and_secrets_are_refused_and_nothing_is_written() -> anyhow::Result<()> {
    let (nova, mut a) = start().await?;
    a.visit(&nova.url("ok/dashboard.html")).await?;
    let rows = || count(&nova, "SELECT COUNT(*) FROM ok_observations");
    let before = rows()?;
    let tab = a.tab.clone().unwrap_or_default();
    let ok_claim = claim("core.page.type", json!("dashboard"), "likely");
    let big = "x".repeat(16_400);
    let cases = [
        (json!({"claims": []}), "claims"),
        (json!({"claims": vec![ok_claim.clone(); 51]}), "claims"),
        (json!({}), "claims"),
        (json!({"claims": [ok_claim.clone()], "extra": 1}), "extra"),
        (
            json!({"claims": [ok_claim.clone(), claim("core.mood", json!("happy"), "likely")]}),
            "claims[1].signalKey",
        ),
        (json!({"claims": [claim("okdemo.note", json!(big), "likely")]}), "claims[0].value"),
        (json!({"claims": [claim("core.page.type", json!("chat"), "sure")]}), "certainty"),
        (json!({"claims": [{"signalKey": "core.page.type"}]}), "value"),
        (json!({"claims": [{"signalKey": "core.page.type", "value": "chat", "colour": 1}]}), "colour"),
        (json!({"claims": [ok_claim.clone()], "perceptionId": "p".repeat(129)}), "perceptionId"),
    ];
    for (mut args, field) in cases {
        args["targetId"] = json!(tab);
        let e = a.client.call_err("nova.ok_observe", args.clone()).await?;
        assert_eq!(e.code.0, -32602, "{args}: {e:?}");
        assert!(e.message.contains(field), "{args}: the error names `{field}`: {}", e.message);
    }
    assert_eq!(rows()?, before, "a refused call writes nothing");
    let e = a.client.call_err("nova.memory_stats", json!({"windowHours": 0})).await?;
    assert!(e.message.contains("windowHours") && e.message.contains("720"), "{}", e.message);
    for (args, field, bound) in [
        (json!({"maxEntries": 0}), "maxEntries", "500"),
        (json!({"maxEntries": 501}), "maxEntries", "500"),
        (json!({"namespace": "Core"}), "namespace", "lower-case"),
        (json!({"namespace": "core.plan"}), "namespace", "lower-case"),
        (json!({"namespace": ""}), "namespace", "lower-case"),
        (json!({"namespace": "a".repeat(129)}), "namespace", "128"),
        (json!({"prefix": "core"}), "prefix", ""),
    ] {
        let e = a.client.call_err("nova.ok_signal_schema", args.clone()).await?;
        assert_eq!(e.code.0, -32602, "{args}: {e:?}");
        assert!(e.message.contains(field) && e.message.contains(bound), "{args}: {}", e.message);
    }

    // A malformed key or a secret is refused claim by claim; the rest goes in.
    let key = "sk-proj-Zx9QmT4vLp2RwY8sKd6NbH3j";
    let r = observe(
        &mut a,
        vec![
            claim("okdemo.api_token", json!("abc"), "likely"),
            claim("okdemo.note", json!(key), "likely"),
            claim("Not A Key", json!(1), "likely"),
            claim(&format!("okdemo.{}", "k".repeat(130)), json!(1), "likely"),
            claim("core.page.type", json!("dashboard"), "likely"),
        ],
    )
    .await?;
    assert_eq!((r["accepted"].clone(), r["rejected"].clone()), (json!(1), json!(4)), "{r}");
    let warnings = r["warnings"].to_string();
    assert!(warnings.contains("never stored") && warnings.contains("at most 128"), "{warnings}");
    let c = rusqlite::Connection::open(nova.store_path())?;
    for table in ["ok_observations", "ok_facts", "observations"] {
        let dump: Vec<String> = c
            .prepare(&format!("SELECT * FROM {table}"))?
            .query_map([], |r| {
                let n = r.as_ref().column_count();
                Ok((0..n)
                    .map(|i| {
                        r.get::<_, rusqlite::types::Value>(i).map(|v| format!("{v:?}")).unwrap_or_default()
                    })
                    .collect())
            })?
            .collect::<Result<_, _>>()?;
        assert!(!dump.iter().any(|row| row.contains("sk-proj")), "{table} holds the secret");
    }
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn stale_after_the_window_a_new_url_two_tabs_and_a_restart() -> anyhow::Result<()> {
    let (nova, mut a) = start().await?;
    a.visit(&nova.url("ok/dashboard.html")).await?;
    observe(&mut a, vec![claim("core.page.type", json!("dashboard"), "certain")]).await?;

    // Six minutes later (the OK clock moved, no sleeping): everything is stale.
    nova.shift_clock(6 * 60_000)?;
    let nav = a.step("nova.navigate", json!({"url": nova.url("ok/dashboard.html")})).await?;
    let hints = &nav["okHints"];
    assert_eq!(
        (hints["firstVisit"].clone(), hints["urlChanged"].clone()),
        (json!(false), json!(false)),
        "{nav}"
    );
    assert_eq!(hints["currentFacts"]["core.page.type"]["factState"], "stale", "{nav}");
    assert!(hints["lastObservedAgoMs"].as_i64() >= Some(360_000), "{nav}");
    let stale = hints["missingOrStaleKeys"].to_string();
    assert!(stale.contains("core.page.type") && stale.contains("core.login_state"), "{stale}");
    // Nova's own read refreshes what the page shows; the agent's page type stays stale.
    let page = a.step("nova.perceive", json!({})).await?;
    assert_eq!(page["okHints"]["missingOrStaleKeys"], json!(["core.page.type"]), "{}", page["okHints"]);
    assert_eq!(page["okHints"]["currentFacts"]["core.login_state"]["factState"], "confirmed");

    // A new URL: the hint says so, and the page type of the old page is not carried over.
    let nav = a.step("nova.navigate", json!({"url": nova.url("ok/settings.html")})).await?;
    assert_eq!(nav["okHints"]["urlChanged"], true, "{nav}");
    let page = a.step("nova.perceive", json!({})).await?;
    assert_eq!(page["okHints"]["urlChanged"], true, "{}", page["okHints"]);
    // A page that asks for passwords beside a sign-out control (changing one): signed in, settings.
    assert_eq!(page["okHints"]["currentFacts"]["core.page.type"]["valueJson"], "settings");
    assert_eq!(page["okHints"]["currentFacts"]["core.login_state"]["valueJson"], "logged_in");
    assert_eq!(page["okHints"]["currentFacts"]["core.ui.theme"]["valueJson"], "dark");
    assert_eq!(a.step("nova.perceive", json!({})).await?["okHints"], Value::Null);

    // A second tab on the same service: its own binding (first visit, no page type of tab 1),
    // the service's facts shared and marked as seen in tab 1.
    let first = a.tab.clone().unwrap_or_default();
    let other = a.step("nova.navigate", json!({"url": nova.url("ok/chat.html"), "newTab": true})).await?;
    let second = other["targetId"].as_str().unwrap_or_default().to_owned();
    assert_ne!(second, first);
    let hints = &other["okHints"];
    assert_eq!(hints["firstVisit"], true, "{other}");
    assert!(hints["currentFacts"].get("core.page.type").is_none(), "{hints}");
    assert_eq!(hints["currentFacts"]["core.ui.theme"]["observedInTarget"], json!(first), "{hints}");
    let page = a.step("nova.perceive", json!({"targetId": second})).await?;
    let facts = &page["okHints"]["currentFacts"];
    assert_eq!(facts["core.page.type"]["valueJson"], "chat", "{page}");
    assert_eq!(facts["core.model.active"]["valueJson"], "Swift");
    assert_eq!(
        facts["core.plan.tier"]["observedInTarget"],
        Value::Null,
        "tab 2 read the plan itself: {page}"
    );
    let claims = json!([claim("core.model.active", json!("Deep"), "certain")]);
    let r = a.step("nova.ok_observe", json!({"targetId": second, "claims": claims})).await?;
    assert_eq!(
        states(&r),
        [("core.model.active".into(), "fresh".into())],
        "the agent's word over the page read: {r}"
    );
    let back = a.step("nova.perceive", json!({"targetId": first})).await?;
    assert!(
        back["okHints"].is_null() || back["okHints"]["currentFacts"].get("core.model.active").is_none(),
        "{back}"
    );

    // Facts outlive the hub.
    nova.restart_hub().await?;
    let claims = json!([claim("core.model.active", json!("Deep"), "tentative")]);
    let r = a.step("nova.ok_observe", json!({"targetId": second, "claims": claims})).await?;
    assert_eq!(states(&r), [("core.model.active".into(), "confirmed".into())], "{r}");
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn a_fact_orients_and_never_authorises() -> anyhow::Result<()> {
    let (nova, mut a) = start().await?;
    a.visit(&nova.url("ok/login.html")).await?;
    // The agent insists it is signed in; the page asks for a password.
    let r = observe(&mut a, vec![claim("core.login_state", json!("logged_in"), "certain")]).await?;
    assert_eq!(states(&r), [("core.login_state".into(), "fresh".into())], "{r}");
    // Nova's next read of the page contradicts it, and the hint says to look again.
    let page = a.step("nova.perceive", json!({})).await?;
    let hints = &page["okHints"];
    assert_eq!(hints["currentFacts"]["core.login_state"]["factState"], "conflicted", "{page}");
    assert_eq!(hints["capabilities"]["authenticated"], Value::Null, "a conflicted fact grants nothing");
    // The sign-in macro judges the page, not the stored fact: it signs in.
    let r = a
        .step("nova.guarded_login", json!({"username": "ada@okdemo.test", "password": "correct horse"}))
        .await?;
    assert_eq!(r["guardedCommit"]["verificationStatus"], "verified_success", "{r}");
    assert!(r["urlAfter"].as_str().unwrap_or_default().contains("ok/dashboard.html"), "{r}");

    // The agent says the Deep model is picked; the page shows Swift. Switching to Deep still
    // switches: the macro reads the picker, not the fact.
    a.visit(&nova.url("ok/chat.html")).await?;
    let r = observe(&mut a, vec![claim("core.model.active", json!("Deep"), "certain")]).await?;
    assert_eq!(r["superseded"], 1, "the agent's certain word over the page read: {r}");
    let r = a.step("nova.guarded_switch_model", json!({"option": "Deep"})).await?;
    assert_eq!(r["guardedCommit"]["verificationStatus"], "verified_success", "{r}");
    assert_eq!(r["actionDispatched"], true, "{r}");
    let page = a.step("nova.perceive", json!({})).await?;
    assert!(page["okHints"].is_null(), "the page now agrees with the fact: {}", page["okHints"]);
    let r = observe(&mut a, vec![claim("core.model.active", json!("Deep"), "tentative")]).await?;
    assert_eq!(states(&r), [("core.model.active".into(), "confirmed".into())], "{r}");
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn a_verified_sign_in_is_known_where_the_page_hides_its_sign_out() -> anyhow::Result<()> {
    let (nova, mut a) = start().await?;
    a.visit(&nova.url("login.html?to=menu-account.html")).await?;
    let login_state = || nova.ok_facts("core.login_state");
    let out = vec![(json!("logged_out"), "system".to_owned())];
    assert_eq!(login_state()?, out, "a password field shows");
    let (wrong, _) = a.call("nova.guarded_login", json!({"username": "ada", "password": "nope"})).await?;
    assert_eq!(wrong["guardedCommit"]["verificationStatus"], "verified_fail", "{wrong}");
    assert_eq!(login_state()?, out, "a refused sign-in changes nothing");

    let right = a.step("nova.guarded_login", json!({"username": "ada", "password": "correct-horse"})).await?;
    assert_eq!(right["guardedCommit"]["verificationStatus"], "verified_success", "{right}");
    // Verified, not only likely: the closed menu's "Sign out" is in the document.
    assert_eq!(right["verifyState"], "verified", "{right}");
    // The page it lands on keeps its sign-out in a closed menu: no read of it says signed in, and
    // none says signed out; the verified sign-in does.
    let page = a.step("nova.perceive", json!({})).await?;
    let hints = &page["okHints"];
    assert_eq!(hints["currentFacts"]["core.login_state"]["valueJson"], "logged_in", "{hints}");
    assert_eq!(hints["currentFacts"]["core.login_state"]["sourceKind"], "system", "{hints}");
    assert_eq!(hints["capabilities"]["authenticated"], true, "{hints}");
    assert_eq!(login_state()?, vec![(json!("logged_in"), "system".to_owned())]);
    Ok(())
}
