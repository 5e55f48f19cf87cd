//! Load (tests/src/load.rs): eight compliant agents, half over stdio and half over HTTP, each on
//! its own tab at the product's default gates; no error but the designed lease conflicts, every
//! call in the store, no busy store, and the hub's memory after the run within 20 % of what it
//! was after the warm-up. `NOVA_LOAD_CALLS` sets the calls per agent (50 here; `cargo xtask bench
//! --only load` runs 500 and prints p50 / p99 per tool).

use std::io::Write as _;

use nova_e2e::BrowserKind;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn eight_agents_over_stdio_and_http_meet_only_designed_conflicts() -> anyhow::Result<()> {
    let calls = std::env::var("NOVA_LOAD_CALLS").ok().and_then(|v| v.parse().ok()).unwrap_or(50);
    let r = nova_e2e::load::run(BrowserKind::from_env(), calls).await?;
    // Shown with `--nocapture`.
    writeln!(std::io::stdout(), "{}", nova_e2e::load::render(&r.to_json(), ""))?;
    let (before, after) = r.rss_kib;
    assert!(after <= before + before / 5, "hub RSS grew from {before} KiB to {after} KiB");
    for tool in
        ["nova.navigate", "nova.perceive", "nova.read_text", "nova.type_selector", "nova.click_selector"]
    {
        assert!(
            r.per_tool.get(tool).is_some_and(|(n, _, _)| *n >= 8 * 2),
            "{tool}: {:?}",
            r.per_tool.get(tool)
        );
    }
    Ok(())
}
