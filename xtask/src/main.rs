//! `cargo xtask`: the project's own commands.
//!
//! # Layout
//! - `build`: host binary + extension (WASM + glue + static files) into `dist/`.
//! - `run`: build, register the host for a dedicated Chromium profile, start Chromium with the
//!   extension on a demo page, print how agents connect; Ctrl-C stops everything.
//! - `test`: install what is missing, then fmt, clippy, unit, integration and e2e tests.
//! - `bench`: performance figures (`--peer`: side by side with Playwright MCP; `bench_realapps`:
//!   verdict latency on a real application).
//! - `soak`: the 1,000-run crash soak of guarded transitions.
//! - `acceptance`: an outside MCP client drives `cargo xtask run --headless` in each browser.

mod acceptance;
mod bench;
mod bench_injection;
mod bench_realapps;
mod bench_support;
mod bench_tasks;
mod build;
mod cmd;
mod demo;
mod deps;
mod deps_ra;
mod ensure;
mod jsbuild;
mod measure;
mod package;
mod peer;
mod run;
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
    /// Print (and write as JSON) the performance figures; `--peer` compares with Playwright MCP.
    Bench(bench::BenchArgs),
    /// An MCP client nobody on the team wrote (Python `mcp`) drives `cargo xtask run --headless`
    /// on the Rust book, then Ctrl-C must stop everything (default: Chromium and Firefox).
    Acceptance {
        /// chromium, firefox or a browser binary; repeatable.
        #[arg(long)]
        browser: Vec<String>,
    },
    /// Check that no module imports another in a loop: every crate by reading its source, and
    /// the host again with cargo-modules (installed once). CI runs it.
    Deps,
    /// The crash soak: kill the hub between intent and verdict many times (default 1,000).
    Soak {
        /// Number of kill runs.
        #[arg(long, default_value_t = 1000)]
        runs: u32,
        /// Replay a sequence of kill delays.
        #[arg(long)]
        seed: Option<u64>,
    },
}

fn main() -> anyhow::Result<()> {
    match Cli::parse().command {
        Cmd::Build => build::build().map(|_| ()),
        Cmd::Run(args) => run::run(args),
        Cmd::Package => package::package().map(|_| ()),
        Cmd::Test(args) => test::test(args),
        Cmd::Bench(args) => bench::bench(args),
        Cmd::Deps => deps::deps().and_then(|()| deps_ra::check()),
        Cmd::Acceptance { mut browser } => {
            if browser.is_empty() {
                browser = vec!["chromium".into(), "firefox".into()];
            }
            acceptance::acceptance(&browser)
        }
        Cmd::Soak { runs, seed } => {
            let built = build::build()?;
            let mut cmd = cargo();
            cmd.args(["test", "--package", "nova-e2e", "--test", "test_cls_crash", "--", "--nocapture"])
                .env("NOVA_DIST", &built.dist)
                .env("NOVA_CRASH_RUNS", runs.to_string());
            if let Some(seed) = seed {
                cmd.env("NOVA_CRASH_SEED", seed.to_string());
            }
            run_cmd(&mut cmd)
        }
    }
}
