//! `cargo xtask test`: installs what is missing, then runs every check CI runs.

use crate::build;
use crate::cmd::{cargo, run_cmd, step};
use crate::ensure::{
    WINDOWS_TARGET, ensure_chromium, ensure_firefox, ensure_wasm_target, ensure_windows_cross,
};
use crate::package::web_ext_lint;

/// Flags of `cargo xtask test`.
#[derive(clap::Args)]
pub struct TestArgs {
    /// Only run tests whose name contains this (skips fmt and clippy).
    filter: Option<String>,
}

/// Runs the whole suite.
pub fn test(args: TestArgs) -> anyhow::Result<()> {
    ensure_wasm_target()?;
    ensure_chromium()?;
    ensure_firefox()?;
    // Every apt-get install comes before the background installs start (MediaWiki's PHP is
    // installed with apt-get there, and two apt-gets at once fail on dpkg's lock).
    let installs = if args.filter.is_none() {
        ensure_windows_cross()?;
        Some(crate::prefetch::start())
    } else {
        None
    };
    if args.filter.is_none() {
        step("cargo fmt --check");
        run_cmd(cargo().args(["fmt", "--all", "--check"]))?;
        crate::deps_ra::check(crate::deps::deps()?)?;
        step("cargo clippy (host side)");
        run_cmd(cargo().args(["clippy", "--workspace", "--all-targets", "--", "-D", "warnings"]))?;
        step("cargo clippy (extension, wasm32)");
        run_cmd(cargo().args([
            "clippy",
            "--package",
            "nova-extension",
            "--target",
            "wasm32-unknown-unknown",
            "--",
            "-D",
            "warnings",
        ]))?;
        step("cargo clippy (host for Windows, x86_64-pc-windows-gnu: named pipes, registry)");
        run_cmd(cargo().args([
            "clippy",
            "--package",
            "nova-host",
            "--target",
            WINDOWS_TARGET,
            "--",
            "-D",
            "warnings",
        ]))?;
    }
    let built = build::build()?;
    if args.filter.is_none() {
        step("web-ext lint (the same extension for Firefox)");
        web_ext_lint(&built.extension)?;
    }
    step("store packages (tests/tests/test_package.rs checks them)");
    crate::package::package()?;
    crate::suites::compile(&built.dist, args.filter.as_deref())?;
    if let Some(installs) = installs {
        installs.finish();
    }
    crate::suites::run(&built.dist, args.filter.as_deref())?;
    if args.filter.is_none() {
        step("fuzzing (every target for 20 s, unoptimised build; `cargo xtask fuzz` runs longer)");
        crate::fuzz::run(20, &[], crate::fuzz::Build::Dev)?;
        crate::acceptance::acceptance(&["chromium".into(), "firefox".into()])?;
    }
    Ok(())
}
