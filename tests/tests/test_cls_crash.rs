//! Crash safety of guarded transitions: the hub is killed (SIGKILL) at random points between
//! intent and verdict while submitting a form whose server counts submissions. The count never
//! exceeds one (Nova never dispatches a transition twice) and every interrupted transition is
//! reported in doubt by the next hub. `NOVA_CRASH_RUNS` sets the number of runs (default 50;
//! `cargo xtask soak` runs 1,000); `NOVA_CRASH_SEED` replays a sequence of kill delays.

use std::time::Duration;

use nova_e2e::Nova;
use nova_e2e::crash::{Lcg, env_num, wait_for_new_hub};
use serde_json::json;

fn journal(nova: &Nova) -> anyhow::Result<Vec<(String, String)>> {
    let conn =
        rusqlite::Connection::open_with_flags(nova.store_path(), rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)?;
    let mut stmt = conn.prepare("SELECT transition_id, state FROM transitions ORDER BY started_at_ms")?;
    let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
    Ok(rows.collect::<Result<_, _>>()?)
}

#[tokio::test(flavor = "multi_thread")]
async fn killing_the_hub_between_intent_and_verdict_never_duplicates_a_submission() -> anyhow::Result<()> {
    let runs = env_num("NOVA_CRASH_RUNS", 50);
    let seed = env_num("NOVA_CRASH_SEED", u64::from(std::process::id()) ^ 0x9e37_79b9);
    let mut rng = Lcg(seed);
    let nova = Nova::start().await?;
    let contract = json!({
        "actionKind": "submit_form",
        "postconditions": {"success": {"all": [{"factKey": "dom.exists(#submitted)", "operator": "eq", "expected": true}]}},
        "stabilityWindowMs": 3000,
        "stabilityMs": 300
    });
    let (mut interrupted, mut in_doubt_reported) = (0, 0);
    for run in 0..runs {
        let key = format!("run{run}");
        let c = nova.client().await?;
        c.structured("nova.navigate", json!({"url": nova.url(&format!("counter.html?key={key}"))})).await?;
        let before: Vec<String> = journal(&nova)?.into_iter().map(|(id, _)| id).collect();
        let hub = nova.hub_pid().ok_or_else(|| anyhow::anyhow!("no hub"))?;
        let delay = Duration::from_millis(rng.next(450));
        let click = c.call("nova.click_selector", json!({"selector": "#go", "transitionContract": contract}));
        let kill = async {
            tokio::time::sleep(delay).await;
            nova.kill_hub()
        };
        let (result, killed) = tokio::join!(click, kill);
        killed?;
        wait_for_new_hub(&nova, hub)?;
        let count = nova.fixtures.count(&key);
        assert!(count <= 1, "seed {seed} run {run}: the form was submitted {count} times");

        let verdict = result
            .ok()
            .and_then(|r| r.structured_content)
            .and_then(|s| s["guardedCommit"]["verificationStatus"].as_str().map(str::to_owned));
        let rows = journal(&nova)?;
        assert!(
            rows.iter().all(|(_, state)| state != "intent" && state != "dispatched"),
            "seed {seed} run {run}: the new hub left transitions unresolved: {rows:?}"
        );
        let new_row = rows.iter().find(|(id, _)| !before.contains(id));
        if let Some((id, state)) = new_row
            && state == "in_doubt"
        {
            interrupted += 1;
            assert!(
                verdict.is_none() || verdict.as_deref() == Some("indeterminate"),
                "seed {seed} run {run}: verdict {verdict:?} but row in doubt"
            );
            let c2 = nova.client().await?;
            let page = c2.structured("nova.perceive", json!({"maxElements": 1, "maxTextChars": 0})).await?;
            let listed = page["inDoubtTransitions"].as_array().cloned().unwrap_or_default();
            let entry = listed.iter().find(|t| t["transitionId"].as_str() == Some(id.as_str()));
            assert!(entry.is_some(), "seed {seed} run {run}: in-doubt transition {id} not reported: {page}");
            assert_eq!(entry.map(|e| e["retryAdvice"].clone()), Some(json!("check_postcondition_first")));
            in_doubt_reported += 1;
        }
    }
    assert_eq!(interrupted, in_doubt_reported);
    assert!(
        interrupted > 0,
        "seed {seed}: no run was interrupted between intent and verdict; the test proved nothing"
    );
    Ok(())
}
