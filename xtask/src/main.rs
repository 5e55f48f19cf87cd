//! `cargo xtask`: the project's own commands.
//!
//! # Layout
//! - `build`: host binary + extension (WASM + glue + static files) into `dist/`.
//! - `run`: build, register the host for a dedicated Chromium profile, start Chromium with the
//!   extension on a demo page, print how agents connect; Ctrl-C stops everything.
//! - `test`: install what is missing, then fmt, clippy, unit, integration and e2e tests.
//! - `bench`: performance figures (`--peer`, `bench_peer`: side by side with Playwright MCP and
//!   chrome-devtools-mcp, driven through `peer`; `bench_realapps`:
//!   verdict latency on a real application; `bench_tools`: `tools/list` in tokens per listing;
//!   `bench_reads`: tokens of full and incremental page reads over a 20-step flow;
//!   `bench_stages`: where the time of a read and a click goes, stage by stage;
//!   `bench_profile`: on what the page spends a read, by function, from a sampling profile;
//!   `bench_memory`: hub RSS idle and after 10,000 calls, Nova's memory per tab;
//!   `bench_injection`: prompt-injection warnings on the fixture set; `bench_support`: the
//!   support commands on a large store; `bench_tasks`: evidence ingestion and correlation).
//! - `soak`: the 1,000-run crash soak of guarded transitions; `--all-tools`: kills during every
//!   mutating tool (tests/tests/test_soak.rs).
//! - `fuzz`: coverage-guided fuzzing of the input parsers (cargo-fuzz, nightly).
//! - `acceptance`: an outside MCP client drives `cargo xtask run --headless` in each browser.
//! - `deps`: no module imports another in a loop, by reading the source; `deps_ra` checks again
//!   as rust-analyzer resolves names (`rust-analyzer lsif`).
//! - `prefetch`: the real applications installed in the background while `test` builds;
//!   `suites`: the tests in Chromium and in Firefox at once, each line led by its browser.
//! - `package`: the store packages. Shared by the commands: `cmd` (running tools, steps),
//!   `ensure` (installing what is missing), `jsbuild` (the strict-CSP page module), `demo` (the
//!   demo page), `measure` (what the benches share: percentiles, rounding, gate modes).

mod acceptance;
mod bench;
mod bench_injection;
mod bench_memory;
mod bench_peer;
mod bench_profile;
mod bench_reads;
mod bench_realapps;
mod bench_stages;
mod bench_support;
mod bench_tasks;
mod bench_tools;
mod build;
mod cmd;
mod demo;
mod deps;
mod deps_ra;
mod ensure;
mod fuzz;
mod jsbuild;
mod measure;
mod package;
mod peer;
mod prefetch;
mod run;
mod suites;
mod test;

use clap::{Parser, Subcommand};

use crate::cmd::{cargo, run_cmd};

#[derive(Parser)]
#[command(name = "cargo xtask", about = "Nova's build, run and test commands")]
struct Cli {
    #[command(subcommand)]
    command: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Build the host and the extension into dist/.
    Build,
    /// Build, install the host, start a browser with the extension, print how agents connect.
    Run(run::RunArgs),
    /// Store-ready archives: a Chrome Web Store zip and an unsigned Firefox .xpi in dist/packages.
    Package,
    /// Install missing tools, then run fmt, clippy, unit, integration and end-to-end tests.
    Test(test::TestArgs),
    /// Print (and write as JSON) the performance figures; `--peer` compares with Playwright MCP and
    /// chrome-devtools-mcp.
    Bench(bench::BenchArgs),
    /// An MCP client nobody on the team wrote (Python `mcp`) drives `cargo xtask run --headless`
    /// on the Rust book, then Ctrl-C must stop everything (default: Chromium and Firefox).
    Acceptance {
        /// chromium, firefox or a browser binary; repeatable.
        #[arg(long)]
        browser: Vec<String>,
    },
    /// Check that no module imports another in a loop: every crate by reading its source, and
    /// again as rust-analyzer resolves names (`rust-analyzer lsif`). CI runs it.
    Deps,
    /// The crash soak: kill the hub between intent and verdict many times (default 1,000), or
    /// with `--all-tools` during every mutating tool (default 200 kills).
    Soak {
        /// Number of kill runs.
        #[arg(long)]
        runs: Option<u32>,
        /// Replay a sequence of kill delays (and tools, with `--all-tools`).
        #[arg(long)]
        seed: Option<u64>,
        /// Kill the hub during every mutating tool, not only guarded transitions.
        #[arg(long)]
        all_tools: bool,
    },
    /// Fuzz the input parsers (cargo-fuzz on nightly, installed when missing), each target for
    /// `--secs` seconds; fails naming the target and the input on a crash (docs/fuzzing.md).
    Fuzz(fuzz::FuzzArgs),
}

fn main() -> anyhow::Result<()> {
    match Cli::parse().command {
        Cmd::Build => build::build().map(|_| ()),
        Cmd::Run(args) => run::run(args),
        Cmd::Package => package::package().map(|_| ()),
        Cmd::Test(args) => test::test(args),
        Cmd::Bench(args) => bench::bench(args),
        Cmd::Fuzz(args) => fuzz::fuzz(args),
        Cmd::Deps => deps::deps().and_then(deps_ra::check),
        Cmd::Acceptance { mut browser } => {
            if browser.is_empty() {
                browser = vec!["chromium".into(), "firefox".into()];
            }
            acceptance::acceptance(&browser)
        }
        Cmd::Soak { runs, seed, all_tools } => {
            let built = build::build()?;
            // tests/tests/test_soak.rs (every mutating tool) or test_cls_crash.rs (transitions).
            let (test, prefix, default_runs) = if all_tools {
                ("test_soak", "NOVA_SOAK", 200)
            } else {
                ("test_cls_crash", "NOVA_CRASH", 1000)
            };
            let mut cmd = cargo();
            cmd.args(["test", "--package", "nova-e2e", "--test", test, "--", "--nocapture"])
                .env("NOVA_DIST", &built.dist)
                .env(
                    format!("{prefix}_{}", if all_tools { "ROUNDS" } else { "RUNS" }),
                    runs.unwrap_or(default_runs).to_string(),
                );
            if let Some(seed) = seed {
                cmd.env(format!("{prefix}_SEED"), seed.to_string());
            }
            run_cmd(&mut cmd)
        }
    }
}
