//! `cargo xtask test`: installs what is missing, then runs every check CI runs.

use std::process::Command;

use anyhow::bail;

use crate::{build, cargo, run_cmd, step};

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
    if args.filter.is_none() {
        step("cargo fmt --check");
        run_cmd(cargo().args(["fmt", "--all", "--check"]))?;
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
        ensure_windows_cross()?;
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
    step("unit, integration and end-to-end tests (Chromium)");
    let mut cmd = cargo();
    cmd.args(["test", "--workspace"]).env("NOVA_DIST", &built.dist).env("NOVA_BROWSER", "chromium");
    if let Some(f) = &args.filter {
        cmd.arg(f);
    }
    run_cmd(&mut cmd)?;
    step("end-to-end tests (Firefox)");
    let mut cmd = cargo();
    cmd.args(["test", "--package", "nova-e2e"]).env("NOVA_DIST", &built.dist).env("NOVA_BROWSER", "firefox");
    if let Some(f) = &args.filter {
        cmd.arg(f);
    }
    run_cmd(&mut cmd)?;
    if args.filter.is_none() {
        crate::acceptance::acceptance(&["chromium".into(), "firefox".into()])?;
    }
    Ok(())
}

/// `web-ext lint` on the built extension: errors fail the run, warnings are listed.
pub fn web_ext_lint(extension: &std::path::Path) -> anyhow::Result<()> {
    let bin = crate::jsbuild::ensure_npm_tools()?;
    let out = Command::new(bin.join("web-ext"))
        .args(["lint", "--no-input", "--output", "json", "--source-dir"])
        .arg(extension)
        .output()?;
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).map_err(|e| {
        anyhow::anyhow!("web-ext lint gave no JSON ({e}): {}", String::from_utf8_lossy(&out.stderr))
    })?;
    let list = |kind: &str| report[kind].as_array().cloned().unwrap_or_default();
    for w in list("warnings") {
        step(&format!(
            "web-ext warning {}: {}",
            w["code"].as_str().unwrap_or(""),
            w["message"].as_str().unwrap_or("")
        ));
    }
    let errors = list("errors");
    if !errors.is_empty() {
        for e in &errors {
            step(&format!("web-ext ERROR {}: {} ({})", e["code"], e["message"], e["file"]));
        }
        bail!("web-ext lint found {} error(s) in {}", errors.len(), extension.display());
    }
    Ok(())
}

/// The Windows target the host is cross-checked for.
const WINDOWS_TARGET: &str = "x86_64-pc-windows-gnu";

/// The Windows target and the MinGW C compiler (SQLite is compiled from source by rusqlite).
fn ensure_windows_cross() -> anyhow::Result<()> {
    let installed = Command::new("rustup").args(["target", "list", "--installed"]).output()?;
    if !String::from_utf8_lossy(&installed.stdout).contains(WINDOWS_TARGET) {
        step(&format!("installing the {WINDOWS_TARGET} target"));
        run_cmd(Command::new("rustup").args(["target", "add", WINDOWS_TARGET]))?;
    }
    if Command::new("x86_64-w64-mingw32-gcc").arg("--version").output().is_err() {
        install_package("gcc-mingw-w64-x86-64", "the MinGW cross compiler")?;
    }
    Ok(())
}

/// Installs Firefox ESR with apt-get when it is missing and we are root; otherwise says how.
pub fn ensure_firefox() -> anyhow::Result<()> {
    use nova_e2e::firefox;
    if firefox::find_binary().is_ok_and(|b| firefox::check_version(&b).is_ok()) {
        return Ok(());
    }
    // Missing or older than ESR 140: apt-get installs or upgrades it.
    install_package("firefox-esr", "Firefox")?;
    firefox::check_version(&firefox::find_binary()?).map(|_| ())
}

/// Adds the wasm32 target when the toolchain lacks it.
pub fn ensure_wasm_target() -> anyhow::Result<()> {
    let installed = Command::new("rustup").args(["target", "list", "--installed"]).output();
    match installed {
        Ok(out) if String::from_utf8_lossy(&out.stdout).contains("wasm32-unknown-unknown") => Ok(()),
        Ok(_) => {
            step("installing the wasm32-unknown-unknown target");
            run_cmd(Command::new("rustup").args(["target", "add", "wasm32-unknown-unknown"]))
        }
        Err(_) => {
            bail!("rustup not found: install the wasm32-unknown-unknown target for your toolchain")
        }
    }
}

/// Installs Chromium with apt-get when it is missing and we are root; otherwise says how.
pub fn ensure_chromium() -> anyhow::Result<()> {
    if nova_e2e::chromium::find_binary().is_ok() {
        return Ok(());
    }
    install_package("chromium", "Chromium")
}

fn install_package(package: &str, what: &str) -> anyhow::Result<()> {
    let root =
        Command::new("id").arg("-u").output().is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0");
    if !root {
        bail!(
            "{what} is missing. Install it with:\n    sudo apt-get install -y {package}\nthen run `cargo xtask test` again"
        );
    }
    step(&format!("installing {what} with apt-get"));
    run_cmd(Command::new("apt-get").arg("update"))?;
    run_cmd(
        Command::new("apt-get")
            .args(["install", "-y", "--no-install-recommends", package])
            .env("DEBIAN_FRONTEND", "noninteractive"),
    )
}
