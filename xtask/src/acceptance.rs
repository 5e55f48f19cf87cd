//! `cargo xtask acceptance`: the README's first command, checked from the outside.
//!
//! `cargo xtask run --headless --browser B` must come up and print how an agent connects; an MCP
//! client nobody on the team wrote (the Python `mcp` package, driving
//! `tests/acceptance/python_agent.py`) then works through `nova mcp` on pages nobody wrote for
//! the tests (the Rust book of the toolchain's documentation): navigate, perceive, read, open the
//! search, type, click a link, screenshot. Last, SIGTERM (what Ctrl-C sends) must stop the browser
//! and the host. `cargo xtask test` runs it for Chromium and Firefox.

use std::io::{BufRead as _, BufReader, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use anyhow::{Context as _, bail};

use crate::cmd::{root, run_cmd, step};

/// The Python MCP SDK the acceptance client runs on.
const PYTHON_MCP: &str = "mcp==2.3.0";
/// How long `cargo xtask run` may take to print its banner (it builds first).
const BANNER_TIMEOUT: Duration = Duration::from_secs(300);
/// The page the client starts on, inside the Rust documentation.
const START_PAGE: &str = "book/ch01-00-getting-started.html";

/// Runs the acceptance check for each browser (`chromium`, `firefox` or a binary path).
pub fn acceptance(browsers: &[String]) -> anyhow::Result<()> {
    let python = ensure_python_mcp()?;
    let docs = rust_docs()?;
    let runtime = tokio::runtime::Runtime::new()?;
    let server = runtime.block_on(nova_e2e::fixtures::FixtureServer::start(&docs))?;
    for browser in browsers {
        drive(browser, &python, &server.url(START_PAGE))
            .with_context(|| format!("acceptance in {browser}"))?;
    }
    Ok(())
}

/// One browser: start `cargo xtask run`, let the client drive it, stop it.
fn drive(browser: &str, python: &Path, url: &str) -> anyhow::Result<()> {
    step(&format!("acceptance: an MCP client drives `cargo xtask run --headless --browser {browser}`"));
    let data = tempfile::Builder::new().prefix("nova-acceptance-").tempdir()?;
    let mut run = Command::new(std::env::current_exe()?)
        .args(["run", "--headless", "--browser", browser, "--data-dir"])
        .arg(data.path())
        .current_dir(root())
        .stdout(Stdio::piped())
        .spawn()
        .context("starting cargo xtask run")?;
    let result = (|| {
        let banner = wait_for_banner(&mut run)?;
        for line in ["stdio:", "HTTP:", "token file:", "mcpServers"] {
            anyhow::ensure!(banner.contains(line), "the banner does not say `{line}`:\n{banner}");
        }
        let nova = root().join("dist/bin/nova");
        run_cmd(
            Command::new(python)
                .arg(root().join("tests/acceptance/python_agent.py"))
                .arg("--nova")
                .arg(&nova)
                .arg("--data-dir")
                .arg(data.path())
                .args(["--url", url]),
        )
    })();
    let stopped = stop(&mut run, data.path());
    result.and(stopped)
}

/// Reads `cargo xtask run`'s stdout until its banner is complete; returns the banner.
fn wait_for_banner(run: &mut Child) -> anyhow::Result<String> {
    let stdout = run.stdout.take().context("no stdout")?;
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let deadline = Instant::now() + BANNER_TIMEOUT;
    let mut banner = String::new();
    loop {
        match rx.recv_timeout(Duration::from_millis(500)) {
            Ok(line) => {
                let _ = writeln!(std::io::stderr(), "    | {line}");
                banner.push_str(&line);
                banner.push('\n');
                if line.contains("Press Ctrl-C") {
                    return Ok(banner);
                }
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                bail!("cargo xtask run ended before printing how to connect ({:?})", run.wait()?)
            }
            Err(mpsc::RecvTimeoutError::Timeout) if Instant::now() > deadline => {
                bail!("cargo xtask run printed no banner within {BANNER_TIMEOUT:?}")
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {}
        }
    }
}

/// SIGTERM, as Ctrl-C would: `cargo xtask run` must exit cleanly and take the browser and the
/// host with it (the hub removes its record from `hubs/` when it ends).
fn stop(run: &mut Child, data: &Path) -> anyhow::Result<()> {
    run_cmd(Command::new("kill").args(["-TERM", &run.id().to_string()]))?;
    let deadline = Instant::now() + Duration::from_secs(30);
    let status = loop {
        if let Some(status) = run.try_wait()? {
            break status;
        }
        if Instant::now() > deadline {
            let _ = run.kill();
            bail!("cargo xtask run did not stop within 30 s of SIGTERM");
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    anyhow::ensure!(status.success(), "cargo xtask run exited with {status} after SIGTERM");
    let deadline = Instant::now() + Duration::from_secs(10);
    while !nova_e2e::hub_records(data).is_empty() {
        if Instant::now() > deadline {
            bail!(
                "the host is still registered in {} after the browser stopped",
                data.join("hubs").display()
            );
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    Ok(())
}

/// A virtual environment in `target/tools/python` with the pinned Python MCP SDK.
fn ensure_python_mcp() -> anyhow::Result<PathBuf> {
    let venv = root().join("target/tools/python");
    let python = venv.join("bin/python3");
    let stamp = venv.join(PYTHON_MCP);
    if stamp.is_file() {
        return Ok(python);
    }
    step(&format!("installing the Python MCP client ({PYTHON_MCP}) into {}", venv.display()));
    run_cmd(Command::new("python3").args(["-m", "venv"]).arg(&venv))
        .context("python3 -m venv (Debian/Ubuntu: apt-get install -y python3-venv)")?;
    run_cmd(Command::new(&python).args(["-m", "pip", "install", "--quiet", PYTHON_MCP]))?;
    std::fs::write(&stamp, b"")?;
    Ok(python)
}

/// The toolchain's HTML documentation (the `rust-docs` component, listed in
/// rust-toolchain.toml).
fn rust_docs() -> anyhow::Result<PathBuf> {
    let out = Command::new("rustc").args(["--print", "sysroot"]).current_dir(root()).output()?;
    let docs = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()).join("share/doc/rust/html");
    if !docs.join(START_PAGE).is_file() {
        bail!("{} is missing: run `rustup component add rust-docs`", docs.join(START_PAGE).display());
    }
    Ok(docs)
}
