//! Real web applications that nobody on the Nova team wrote, installed from the package
//! registries these machines reach and started on loopback for the end-to-end tests
//! (`tests/tests/test_realapps.rs`). Each is installed once into `target/tools/realapps/`
//! (kept between runs, so CI pays the download once per clean machine) and gets a fresh data
//! directory per test, whose database the tests read to judge Nova's verdicts.
//!
//! - [`django`]: the Django admin (PyPI), with SQLite.

pub mod django;

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, bail};

/// Where the real applications are installed.
pub fn tools_dir() -> PathBuf {
    crate::workspace_root().join("target/tools/realapps")
}

/// Runs `cmd`, failing with its output when it fails.
pub fn run(cmd: &mut Command) -> anyhow::Result<String> {
    let out = cmd.output().with_context(|| format!("starting {cmd:?}"))?;
    if !out.status.success() {
        bail!(
            "{cmd:?} failed ({}):\n{}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Makes `dir` with `fill` unless it exists: filled in a temporary sibling first and renamed into
/// place, so tests running at once never see a half-made install (the loser of a race keeps the
/// winner's).
pub fn install_once(dir: &Path, fill: impl FnOnce(&Path) -> anyhow::Result<()>) -> anyhow::Result<()> {
    if dir.is_dir() {
        return Ok(());
    }
    let parent = dir.parent().context("install dir has no parent")?;
    std::fs::create_dir_all(parent)?;
    let tmp = tempfile::Builder::new().prefix(".installing-").tempdir_in(parent)?;
    fill(tmp.path())?;
    let made = tmp.keep();
    if std::fs::rename(&made, dir).is_err() {
        let _ = std::fs::remove_dir_all(&made);
        if !dir.is_dir() {
            bail!("could not move the install into {}", dir.display());
        }
    }
    Ok(())
}

/// A free loopback port.
pub fn free_port() -> anyhow::Result<u16> {
    Ok(std::net::TcpListener::bind(("127.0.0.1", 0))?.local_addr()?.port())
}

/// Waits until something listens on `port` (at most `secs`).
pub async fn wait_listening(port: u16, secs: u64, what: &str) -> anyhow::Result<()> {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(secs);
    loop {
        if tokio::net::TcpStream::connect(("127.0.0.1", port)).await.is_ok() {
            return Ok(());
        }
        if std::time::Instant::now() > deadline {
            bail!("{what} did not listen on 127.0.0.1:{port} within {secs} s");
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
}
