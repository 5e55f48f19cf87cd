//! Support tooling on a store made by a real run (default gates, a compliant agent, a careless
//! one, a STOP, a hub killed mid-transition): `nova log` and each filter, JSON lines that
//! round-trip, `nova log show` of a blocked call, a verified failure and an in-doubt transition,
//! `--follow`, the HTML report opened from a file URL in the real browser with no network
//! request, the bundle with every planted secret absent from every byte, `nova store check` and
//! `nova store backup`.

use std::io::{BufRead as _, Read as _};
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use nova_e2e::Nova;
use nova_e2e::agent::Agent;
use nova_e2e::fixtures::send_contract;
use nova_host::support::calls::CallRow;
use serde_json::{Value, json};

const PASSWORD: &str = "pw-HUNTER2-9931x";
const TYPED: &str = "typed-S3CRET-4471";
const URL_SECRETS: [(&str, &str); 4] = [
    ("token", "TOKSECRET1q"),
    ("access_token", "ATSECRET2q"),
    ("sig", "SIGSECRET3q"),
    ("key", "KEYSECRET4q"),
];
const SESSION_SECRET: &str = "SESSIONSECRET0q";
const COOKIE_SECRET: &str = "COOKIESECRET5q";
const AUTH_SECRET: &str = "AUTHSECRET6q";

fn nova_cmd(nova: &Nova) -> Command {
    nova.cli()
}

fn run(nova: &Nova, args: &[&str]) -> anyhow::Result<Output> {
    Ok(nova_cmd(nova).args(args).output()?)
}

fn ok_stdout(nova: &Nova, args: &[&str]) -> anyhow::Result<String> {
    let out = run(nova, args)?;
    anyhow::ensure!(
        out.status.success(),
        "nova {args:?} failed: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    Ok(String::from_utf8(out.stdout)?)
}

fn store_count(nova: &Nova, sql: &str) -> anyhow::Result<i64> {
    let conn =
        rusqlite::Connection::open_with_flags(nova.store_path(), rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)?;
    Ok(conn.query_row(sql, [], |r| r.get(0))?)
}

/// Opens the chat fixture at `query`, types `text` and sends it, guarded, watching for
/// `window_ms`: the reply and whether it is an error.
async fn chat_send(
    a: &mut Agent,
    nova: &Nova,
    query: &str,
    text: &str,
    window_ms: u32,
) -> anyhow::Result<(Value, bool)> {
    a.visit(&nova.url(&format!("chat.html?{query}"))).await?;
    a.step("nova.type_selector", json!({"selector": "#composer", "text": text})).await?;
    let send = json!({"selector": "#send", "transitionContract": send_contract(window_ms, 300)});
    a.call("nova.click_selector", send).await
}

/// A real run that leaves every kind of record support looks for.
async fn make_history(nova: &Nova) -> anyhow::Result<Agent> {
    let mut a = Agent::new(nova, "alice").await?;
    a.ready().await?;
    a.visit(&nova.url(&format!("basic.html?session={SESSION_SECRET}"))).await?;
    a.step("nova.type_selector", json!({"selector": "#pw", "text": PASSWORD})).await?;
    a.step("nova.type_selector", json!({"selector": "#plain", "text": TYPED})).await?;
    a.step("nova.capture_screenshot", json!({})).await?;

    // A task run over three pages, two of them read: one gap.
    let units: Vec<String> =
        ["page2.html", "thanks.html", "order.html"].iter().map(|p| nova.url(p)).collect();
    let created = a
        .step(
            "nova.task_instance_create",
            json!({
                "adHocContext": {
                    "taskType": "page_review", "displayName": "Review three pages",
                    "goal": "Read each page",
                    "completionCondition": {"coverageMode": "exhaustive", "unitKind": "url",
                        "stopMetric": "all_units_processed", "evidencePolicy": {"mode": "require_observed", "maxGapPercent": 0.0}}
                },
                "unitSource": {"kind": "explicit", "explicitUrls": units, "freezeAfterPopulate": true},
                "declaredTaskKind": "exploratory"
            }),
        )
        .await?;
    let task = created["instanceId"].as_str().unwrap_or_default().to_owned();
    for u in &units[..2] {
        a.visit(u).await?;
    }
    let updates: Vec<Value> = units[..2].iter().map(|u| json!({"unitKey": u, "status": "checked"})).collect();
    a.step(
        "nova.task_instance_progress",
        json!({"instanceId": task, "expectedInstanceRev": 0, "clientEventId": "two", "unitUpdates": updates}),
    )
    .await?;

    // A send the page answers: verified_success, proven by the answer.
    let (r, _) = chat_send(&mut a, nova, "mode=works", "hello", 5000).await?;
    assert_eq!(r["guardedCommit"]["verificationStatus"], "verified_success", "{r}");

    // A send the page answers with an error banner: verified_fail.
    let query: Vec<String> = URL_SECRETS.iter().map(|(k, v)| format!("{k}={v}")).collect();
    let (r, is_error) =
        chat_send(&mut a, nova, &format!("mode=error&{}", query.join("&")), "hello", 5000).await?;
    assert!(is_error && r["guardedCommit"]["verificationStatus"] == "verified_fail", "{r}");

    // A send nothing answers: indeterminate.
    let (r, _) = chat_send(&mut a, nova, "mode=silent", "anyone?", 1200).await?;
    assert_eq!(r["guardedCommit"]["verificationStatus"], "indeterminate", "{r}");

    // An agent that skips the bundle is blocked.
    let bob = nova.client().await?;
    let r = bob.call("nova.perceive", json!({"agentId": "bob"})).await?;
    let block = r.meta.as_ref().and_then(|m| m.0.get("io.nova/aag")).cloned().unwrap_or_default();
    assert_eq!(block["gateId"], "setup.bootstrap_required", "{r:?}");

    // The person presses STOP and releases it.
    ok_stdout(nova, &["stop"])?;
    ok_stdout(nova, &["resume"])?;

    // The hub dies while a send is being verified: the next hub reports it in doubt.
    a.visit(&nova.url("chat.html?mode=silent&n=2")).await?;
    a.step("nova.type_selector", json!({"selector": "#composer", "text": "still there?"})).await?;
    let before = store_count(nova, "SELECT COUNT(*) FROM transitions")?;
    let click =
        a.client.call("nova.click_selector", json!({"agentId": "alice", "targetId": a.tab, "selector": "#send", "transitionContract": send_contract(20_000, 300)}));
    let crash = async {
        let deadline = Instant::now() + Duration::from_secs(10);
        while store_count(nova, "SELECT COUNT(*) FROM transitions WHERE state = 'dispatched'")? == 0 {
            anyhow::ensure!(Instant::now() < deadline, "the transition was never dispatched");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        nova.restart_hub().await
    };
    let (lost, restarted) = tokio::join!(click, crash);
    restarted?;
    // The agent is told the send may have happened: not retryable, check first.
    let lost = lost?.structured_content.unwrap_or_default();
    assert_eq!(
        (lost["reasonCode"].clone(), lost["retryable"].clone()),
        (json!("hub_lost_in_flight"), json!(false)),
        "{lost}"
    );
    assert_eq!(store_count(nova, "SELECT COUNT(*) FROM transitions")?, before + 1);
    let deadline = Instant::now() + Duration::from_secs(10);
    while store_count(nova, "SELECT COUNT(*) FROM transitions WHERE state = 'in_doubt'")? == 0 {
        anyhow::ensure!(Instant::now() < deadline, "the new hub did not mark the transition in doubt");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    // Secrets in the hub's log, as a proxy or a careless line might leave them.
    let log = nova.data.join("logs").join(format!("hub-{}.log", nova.kind.name()));
    let mut f = std::fs::OpenOptions::new().create(true).append(true).open(&log)?;
    std::io::Write::write_all(
        &mut f,
        format!("request header Cookie: sessionid={COOKIE_SECRET}; theme=dark\nAuthorization: Bearer {AUTH_SECRET}\n")
            .as_bytes(),
    )?;
    Ok(a)
}

#[tokio::test(flavor = "multi_thread")]
async fn support_sees_what_happened_and_nothing_secret_leaves() -> anyhow::Result<()> {
    let nova = Nova::start_with_ui().await?;
    let alice = make_history(&nova).await?;
    let out = tempfile::tempdir()?;

    // Every call, oldest first, as JSON lines that round-trip.
    let all = nova.log_rows(&["-n", "0"])?;
    // Every recorded call, and the one whose hub died before it could be recorded.
    assert_eq!(all.len() as i64, calls_in_store(&nova)?);
    assert_eq!(all.iter().filter(|r| r.seq.is_none()).count(), 1, "{all:?}");
    assert!(all.windows(2).all(|w| w[0].at_ms <= w[1].at_ms), "oldest first");

    // Each filter.
    let typed = nova.log_rows(&["-n", "0", "--tool", "type_selector"])?;
    assert_eq!(
        typed.len() as i64,
        store_count(&nova, "SELECT COUNT(*) FROM observations WHERE tool = 'nova.type_selector'")?
    );
    assert!(typed.len() >= 5 && typed.iter().all(|r| r.tool == "nova.type_selector"));
    let bob = nova.log_rows(&["-n", "0", "--agent", "bob"])?;
    assert!(!bob.is_empty() && bob.iter().all(|r| r.agent == "bob" && r.outcome == "blocked"), "{bob:?}");
    let tab = alice.tab.clone().expect("alice has a tab");
    let on_tab = nova.log_rows(&["-n", "0", "--tab", &tab])?;
    assert!(on_tab.len() > 10 && on_tab.iter().all(|r| r.tab.as_deref() == Some(tab.as_str())));
    let session = all.iter().find(|r| r.agent == "alice").map(|r| r.mcp_session.clone()).expect("session");
    let in_session = nova.log_rows(&["-n", "0", "--session", &session[..8]])?;
    assert!(!in_session.is_empty() && in_session.iter().all(|r| r.mcp_session == session));
    let failed = nova.log_rows(&["-n", "0", "--outcome", "verified_fail"])?;
    assert!(failed.len() == 1 && failed[0].tool == "nova.click_selector", "{failed:?}");
    let doubt = nova.log_rows(&["-n", "0", "--outcome", "in_doubt"])?;
    assert_eq!(doubt.len(), 2, "the indeterminate send and the one the crash interrupted: {doubt:?}");
    let gated = nova.log_rows(&["-n", "0", "--gate", "setup.bootstrap_required"])?;
    assert!(!gated.is_empty() && gated.iter().all(|r| r.gate.as_deref() == Some("setup.bootstrap_required")));
    assert_eq!(nova.log_rows(&["-n", "0", "--since", "1h"])?.len(), all.len());
    assert!(nova.log_rows(&["--since", "2099-01-01"])?.is_empty());
    let middle = &all[all.len() / 2];
    let until = nova.log_rows(&["-n", "0", "--until", &middle.at_ms.to_string()])?;
    assert!(!until.is_empty() && until.iter().all(|r| r.at_ms < middle.at_ms));
    let since = nova.log_rows(&["-n", "0", "--since", &middle.at])?;
    assert!(since.iter().all(|r| r.at_ms >= middle.at_ms) && since.len() + until.len() == all.len());
    let last3 = nova.log_rows(&["-n", "3"])?;
    assert_eq!(last3, all[all.len() - 3..].to_vec());
    let both = nova.log_rows(&["-n", "0", "--outcome", "blocked", "--outcome", "verified_fail"])?;
    assert_eq!(both.len(), bob.len() + 1);

    // The table: a header, one line per call, the short ids `log show` takes.
    let table = ok_stdout(&nova, &["log", "-n", "5"])?;
    let lines: Vec<&str> = table.lines().collect();
    assert!(lines[0].starts_with("TIME (UTC)") && lines[0].contains("OUTCOME"), "{table}");
    assert!(
        lines[1..6].iter().zip(&all[all.len() - 5..]).all(|(l, r)| l.contains(&r.call_id[..8])),
        "{table}"
    );
    assert!(table.contains(&format!("the last 5 of {}", all.len())), "{table}");
    assert!(ok_stdout(&nova, &["log", "--since", "2099-01-01"])?.contains("no calls match"));

    // Bad filters: a clear error naming the flag.
    for (args, needle) in [
        (vec!["log", "--outcome", "maybe"], "--outcome `maybe`"),
        (vec!["log", "--since", "10y"], "--since `10y`"),
        (vec!["log", "--format", "xml"], "--format"),
        (vec!["log", "show", "zz"], "not a call id"),
        (vec!["log", "show", "abcdef12"], "no call `abcdef12`"),
    ] {
        let o = run(&nova, &args)?;
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success() && err.contains(needle), "{args:?}: {err}");
    }

    // `log show` of a blocked call: the gate, what triggered it and how it clears.
    let show = |id: &str| -> anyhow::Result<Value> {
        Ok(serde_json::from_str(&ok_stdout(&nova, &["log", "show", id, "--format", "json"])?)?)
    };
    let blocked = show(&bob[0].call_id[..8])?;
    assert_eq!(blocked["gates"][0]["gateId"], "setup.bootstrap_required", "{blocked}");
    assert!(
        blocked["gates"][0]["clears"].as_str().is_some_and(|c| c.contains("nova.tools_bundle")),
        "{blocked}"
    );
    assert_eq!(blocked["evidence"]["grade"], "not_executed");
    // A verified failure: the transition, its contract and the failed assertion.
    let fail = show(&failed[0].call_id)?;
    let t = &fail["transition"];
    assert_eq!(
        (t["verificationStatus"].clone(), t["state"].clone()),
        (json!("verified_fail"), json!("completed"))
    );
    assert_eq!(t["failedAssertions"][0]["factKey"], "dom.visible(.error-banner)", "{t}");
    assert_eq!(t["contract"]["actionKind"], "send_message");
    assert!(fail["arguments"]["selector"] == "#send" && fail["evidence"]["grade"] == "verified", "{fail}");
    // A verified success and what proved it.
    let succeeded =
        nova.log_rows(&["-n", "0", "--outcome", "verified_success", "--tool", "nova.click_selector"])?;
    let proof = &show(&succeeded[0].call_id)?["transition"]["heldAssertions"];
    assert_eq!(
        (succeeded.len(), proof[0]["factKey"].clone(), proof[0]["observed"].clone()),
        (1, json!("dom.exists(.msg.assistant)"), json!(true)),
        "{proof}"
    );
    // The transition the crash interrupted.
    let records: Vec<Value> = doubt.iter().map(|r| show(&r.call_id)).collect::<anyhow::Result<_>>()?;
    let states: Vec<&Value> = records.iter().map(|r| &r["transition"]["state"]).collect();
    assert_eq!(states, [&json!("completed"), &json!("in_doubt")], "{records:?}");
    assert_eq!(records[0]["transition"]["indeterminateReason"], "no_signal_yet", "{records:?}");
    assert!(
        records.iter().all(|r| r["call"]["outcome"] == "in_doubt" && r["evidence"]["grade"] == "in_doubt")
    );
    // A typed password: its arguments as stored, without the secret; the screenshot's file.
    let pw_call =
        typed.iter().find(|r| r.url.as_deref().is_some_and(|u| u.contains("basic.html"))).expect("typed");
    let pw = show(&pw_call.call_id)?;
    assert!(pw["arguments"]["text"].as_str().is_some_and(|t| t.starts_with("<redacted")), "{pw}");
    let shot = all.iter().find(|r| r.tool == "nova.capture_screenshot").expect("screenshot call");
    let shot = show(&shot.call_id)?;
    assert!(shot["screenshot"].as_str().is_some_and(|p| Path::new(p).is_file()), "{shot}");
    let text = ok_stdout(&nova, &["log", "show", &failed[0].call_id[..8]])?;
    assert!(text.contains("transition:") && text.contains("failedAssertions"), "{text}");

    // --follow prints calls as they are recorded.
    let mut follower = nova_cmd(&nova)
        .args(["log", "--follow", "--format", "jsonl", "-n", "1", "--agent", "bob"])
        .stdout(Stdio::piped())
        .spawn()?;
    let stdout = follower.stdout.take().expect("piped");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stdout).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let first = rx.recv_timeout(Duration::from_secs(10))?;
    assert_eq!(serde_json::from_str::<CallRow>(&first)?.call_id, bob.last().expect("bob").call_id);
    let late = nova.client().await?;
    late.call("nova.read_text", json!({"agentId": "bob"})).await?;
    let next: CallRow = serde_json::from_str(&rx.recv_timeout(Duration::from_secs(10))?)?;
    assert_eq!((next.agent.as_str(), next.tool.as_str()), ("bob", "nova.read_text"));
    follower.kill()?;
    follower.wait()?;

    // The report: one file, opened from disk in the real browser, no network request.
    let report = out.path().join("report.html");
    let said = ok_stdout(&nova, &["report", "--out", report.to_str().expect("utf8"), "--with-screenshots"])?;
    assert!(said.contains("file://"), "{said}");
    let html = std::fs::read_to_string(&report)?;
    for secret in secrets(&nova)? {
        assert!(!html.contains(&secret), "the report holds `{secret}`");
    }
    let calls_now = calls_in_store(&nova)?;
    let ui = nova.ui().await?;
    let page = ui.open_url(&format!("file://{}", report.display())).await?;
    page.wait_for("document.body.dataset.rendered === 'true'", Duration::from_secs(15)).await?;
    let seen = page
        .eval(
            "JSON.stringify({rows: document.querySelectorAll('#timeline-body tr.call').length, \
              doubt: document.querySelectorAll('#attention-body .card.doubt').length, \
              fails: document.querySelectorAll('#attention-body .card.fail').length, \
              blocks: document.querySelector('#blocks-body').textContent, \
              stops: document.querySelector('#control-body').textContent, \
              shots: document.querySelectorAll('#shots-body img').length, \
              resources: performance.getEntriesByType('resource').length})",
        )
        .await?;
    let seen: Value = serde_json::from_str(seen.as_str().unwrap_or("{}"))?;
    assert_eq!(seen["rows"], json!(calls_now), "{seen}");
    assert_eq!((seen["doubt"].clone(), seen["fails"].clone()), (json!(2), json!(1)), "{seen}");
    assert!(
        seen["blocks"]
            .as_str()
            .is_some_and(|b| b.contains("setup.bootstrap_required") && b.contains("nova.tools_bundle")),
        "{seen}"
    );
    assert!(
        seen["stops"]
            .as_str()
            .is_some_and(|s| s.contains("stop") && s.contains("resume") && s.contains("cli")),
        "{seen}"
    );
    assert_eq!((seen["shots"].clone(), seen["resources"].clone()), (json!(1), json!(0)), "{seen}");
    let transitions = page.eval("document.querySelector('#transitions-body').textContent").await?;
    assert!(
        transitions
            .as_str()
            .is_some_and(|t| t.contains("proven by dom.exists(.msg.assistant) eq true (read true)")),
        "what proved the success, in the report: {transitions}"
    );
    let tasks = page.eval("document.querySelector('#tasks-body').textContent").await?;
    let tasks = tasks.as_str().unwrap_or_default();
    assert!(
        tasks.contains("Review three pages") && tasks.contains("2 / 3") && tasks.contains("order.html"),
        "the task run, its units and its gap: {tasks}"
    );
    // The page's policy forbids requests: a probe to the fixture server never arrives.
    let probe = serde_json::to_string(&nova.url("submit?key=report-probe"))?;
    let outcome = page
        .eval(&format!(
            "fetch({probe}).then(() => 'fetched', () => 'refused').then(r => {{ new Image().src = {probe}; return r; }})"
        ))
        .await?;
    assert_eq!(outcome, json!("refused"));
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(nova.fixtures.count("report-probe"), 0, "the report page reached the network");
    // Search and filters in the page.
    page.eval(&set_filter("f-outcome", "verified_fail")).await?;
    let filtered = page.eval("document.querySelectorAll('#timeline-body tr.call').length").await?;
    assert_eq!(filtered, json!(1));
    page.eval(&set_filter("f-outcome", "")).await?;
    page.eval(&set_filter("q", "capture_screenshot")).await?;
    assert_eq!(page.eval("document.querySelectorAll('#timeline-body tr.call').length").await?, json!(1));
    page.eval(&set_filter("q", "")).await?;
    // Desktop, phone, dark: artifacts a person can look at.
    page.viewport(1280, 800).await?;
    page.screenshot(&nova.artifact("report-1280x800")).await?;
    page.viewport(390, 844).await?;
    page.screenshot(&nova.artifact("report-phone")).await?;
    let wide = page.eval("document.documentElement.scrollWidth <= window.innerWidth + 1").await?;
    assert_eq!(wide, json!(true), "the report scrolls sideways on a phone");
    page.viewport(1280, 800).await?;
    page.click("#theme").await?;
    page.wait_for(
        "getComputedStyle(document.body).backgroundColor !== 'rgb(251, 251, 253)'",
        Duration::from_secs(5),
    )
    .await?;
    page.screenshot(&nova.artifact("report-dark")).await?;

    // The settings page opens the same report through the hub, once, at a loopback URL.
    let options = ui.open(&nova.extension_page("options.html")).await?;
    options.wait_for("document.body.dataset.loaded === 'true'", Duration::from_secs(15)).await?;
    options.click("#open-report").await?;
    let opened = ui.wait_window("/page/", Duration::from_secs(20)).await?;
    opened.wait_for("document.body.dataset.rendered === 'true'", Duration::from_secs(15)).await?;
    let rows = opened.eval("document.querySelectorAll('#timeline-body tr.call').length").await?;
    assert!(rows.as_i64().is_some_and(|r| r >= calls_now - 1), "{rows}");
    let url = opened.eval("location.href").await?;
    let url = url.as_str().unwrap_or_default().to_owned();
    let note = options
        .wait_for(
            "document.getElementById('report-note').textContent.includes('Opened')",
            Duration::from_secs(10),
        )
        .await;
    assert!(note.is_ok(), "{note:?}");
    // The link serves once; a foreign Host is refused.
    let again = reqwest::get(&url).await?;
    assert_eq!(again.status(), 404, "a report link serves once");
    let foreign = reqwest::Client::new().get(&url).header("Host", "evil.test").send().await?;
    assert_eq!(foreign.status(), 403);

    // The bundle: what it holds, and no planted secret in any byte.
    let archive = out.path().join("bundle.tar.gz");
    let said = ok_stdout(&nova, &["bundle", "--out", archive.to_str().expect("utf8")])?;
    for name in [
        "report.html",
        "store.jsonl",
        "settings.json",
        "doctor.txt",
        "versions.json",
        "store-check.txt",
        "logs/hub-",
    ] {
        assert!(said.contains(name), "the bundle does not list {name}: {said}");
    }
    let files = untar(&archive)?;
    let names: Vec<&str> = files.iter().map(|(n, _)| n.as_str()).collect();
    assert!(names.iter().any(|n| n.starts_with("nova-bundle/logs/hub-")), "{names:?}");
    for secret in secrets(&nova)? {
        for (name, bytes) in &files {
            assert!(
                !bytes.windows(secret.len()).any(|w| w == secret.as_bytes()),
                "{name} in the bundle holds `{secret}`"
            );
        }
    }
    let (_, jsonl) = files.iter().find(|(n, _)| n.ends_with("store.jsonl")).expect("store.jsonl");
    let rows: Vec<Value> =
        String::from_utf8(jsonl.clone())?.lines().map(serde_json::from_str).collect::<Result<_, _>>()?;
    assert!(rows.iter().filter(|r| r["table"] == "observations").count() as i64 >= calls_now - 1);
    let (_, log) = files.iter().find(|(n, _)| n.contains("logs/hub-")).expect("log");
    assert!(
        String::from_utf8_lossy(log).contains("Cookie: [redacted]"),
        "the planted log line is there, redacted"
    );
    Ok(())
}

/// An expression that sets the report's control `id` to `value` as a person would.
fn set_filter(id: &str, value: &str) -> String {
    format!(
        "(() => {{ const e = document.getElementById('{id}'); e.value = '{value}'; \
         e.dispatchEvent(new Event('input')); return true; }})()"
    )
}

/// Observations, and transitions a dying hub left without one.
fn calls_in_store(nova: &Nova) -> anyhow::Result<i64> {
    store_count(
        nova,
        "SELECT (SELECT COUNT(*) FROM observations) + (SELECT COUNT(*) FROM transitions t WHERE state = 'in_doubt' \
         AND NOT EXISTS (SELECT 1 FROM observations o WHERE o.call_id = t.call_id))",
    )
}

/// Every secret planted by [`make_history`], and the MCP token.
fn secrets(nova: &Nova) -> anyhow::Result<Vec<String>> {
    let mut s: Vec<String> = vec![PASSWORD, TYPED, SESSION_SECRET, COOKIE_SECRET, AUTH_SECRET]
        .into_iter()
        .map(str::to_owned)
        .collect();
    s.extend(URL_SECRETS.iter().map(|(_, v)| (*v).to_owned()));
    let token = std::fs::read_to_string(nova.data.join("mcp-token"))?;
    anyhow::ensure!(token.trim().len() >= 16, "no MCP token");
    s.push(token.trim().to_owned());
    Ok(s)
}

fn untar(path: &Path) -> anyhow::Result<Vec<(String, Vec<u8>)>> {
    let mut files = Vec::new();
    let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(std::fs::File::open(path)?));
    for entry in archive.entries()? {
        let mut entry = entry?;
        let name = entry.path()?.display().to_string();
        let mut bytes = Vec::new();
        entry.read_to_end(&mut bytes)?;
        files.push((name, bytes));
    }
    Ok(files)
}

#[tokio::test(flavor = "multi_thread")]
async fn store_check_passes_a_sound_store_and_fails_a_damaged_one_with_the_fix() -> anyhow::Result<()> {
    let nova = Nova::start().await?;
    let c = nova.client().await?;
    c.structured("nova.navigate", json!({"url": nova.url("basic.html")})).await?;
    for i in 0..60 {
        c.structured("nova.read_text", json!({"selector": "body", "maxChars": 50 + i})).await?;
    }
    let text = ok_stdout(&nova, &["store", "check"])?;
    assert!(text.contains("verdict: SOUND") && text.contains("observations"), "{text}");
    let health: Value = serde_json::from_str(&ok_stdout(&nova, &["store", "check", "--json"])?)?;
    assert!(health["problems"].as_array().is_some_and(Vec::is_empty), "{health}");

    // A backup taken while the hub runs is sound and holds every call.
    let spare = tempfile::tempdir()?;
    let copy = spare.path().join("nova.db");
    let said = ok_stdout(&nova, &["store", "backup", "--out", copy.to_str().expect("utf8")])?;
    assert!(said.contains("verdict: SOUND"), "{said}");
    let again = run(&nova, &["store", "backup", "--out", copy.to_str().expect("utf8")])?;
    assert!(!again.status.success() && String::from_utf8_lossy(&again.stderr).contains("already exists"));
    let rows: i64 =
        rusqlite::Connection::open(&copy)?
            .query_row("SELECT COUNT(*) FROM observations", [], |r| r.get(0))?;
    assert!(rows >= 61, "{rows}");

    // Damage the copy: `store check` fails, exits non-zero and prints the fix.
    // The root page of the calls table: its cell pointers now point nowhere.
    let (root, page): (i64, i64) = rusqlite::Connection::open(&copy)?.query_row(
        "SELECT rootpage, (SELECT page_size FROM pragma_page_size) FROM sqlite_master WHERE name = 'observations'",
        [],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?;
    let at = usize::try_from((root - 1) * page)?;
    let page = usize::try_from(page)?;
    let mut bytes = std::fs::read(&copy)?;
    bytes[at + 8..at + page].fill(0x5a);
    std::fs::write(&copy, &bytes)?;
    let o = Command::new(&nova.dist.host)
        .arg("--data-dir")
        .arg(spare.path())
        .args(["store", "check"])
        .output()?;
    let text = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{text}");
    assert!(
        text.contains("verdict: DAMAGED")
            && text.contains("nova store backup")
            && text.contains("nova.db.damaged"),
        "{text}"
    );
    assert!(copy.is_file(), "the damaged store is never deleted");
    Ok(())
}
