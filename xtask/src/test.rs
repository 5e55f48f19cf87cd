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
    }
    let built = build::build()?;
    step("unit, integration and end-to-end tests");
    let mut cmd = cargo();
    cmd.args(["test", "--workspace"]).env("NOVA_DIST", &built.dist);
    if let Some(f) = &args.filter {
        cmd.arg(f);
    }
    run_cmd(&mut cmd)
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
    let root =
        Command::new("id").arg("-u").output().is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0");
    if !root {
        bail!(
            "Chromium is missing. Install it with:\n    sudo apt-get install -y chromium\nthen run `cargo xtask test` again"
        );
    }
    step("installing Chromium with apt-get");
    run_cmd(Command::new("apt-get").arg("update"))?;
    run_cmd(
        Command::new("apt-get")
            .args(["install", "-y", "--no-install-recommends", "chromium"])
            .env("DEBIAN_FRONTEND", "noninteractive"),
    )
}
