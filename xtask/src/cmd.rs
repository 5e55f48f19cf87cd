//! Running commands from xtask: the workspace root, cargo, a command that must succeed, and
//! progress lines.

use std::path::PathBuf;
use std::process::Command;

use anyhow::{Context as _, bail};

/// The workspace root.
pub fn root() -> PathBuf {
    nova_e2e::workspace_root()
}

/// Runs a command in the workspace root, failing with its name when it fails.
pub fn run_cmd(cmd: &mut Command) -> anyhow::Result<()> {
    let shown = format!("{cmd:?}");
    let status = cmd.current_dir(root()).status().with_context(|| format!("cannot start {shown}"))?;
    if !status.success() {
        bail!("{shown} failed ({status})");
    }
    Ok(())
}

/// A `cargo` command using the same cargo that runs xtask.
pub fn cargo() -> Command {
    Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
}

/// Prints a progress line to stderr.
pub fn step(message: &str) {
    use std::io::Write as _;
    let _ = writeln!(std::io::stderr(), "==> {message}");
}

/// Cargo's target directory.
pub fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR").map(PathBuf::from).unwrap_or_else(|| root().join("target"))
}
