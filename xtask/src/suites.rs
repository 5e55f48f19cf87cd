//! The workspace's tests in both browsers at once: the tests are compiled first ([`compile`]),
//! then one `cargo test --workspace` per browser runs beside the other ([`run`]), each line of
//! their output led by its browser's name. A browser test spends most of its time waiting on pages and Chromium's
//! suite leaves most of the machine idle, so the two together take little longer than
//! Firefox's alone: on a two-core machine, 26 minutes side by side against 15 for Chromium's
//! and 23 for Firefox's one after the other (2026-12-03).

use std::io::{BufRead as _, BufReader, Read, Write as _};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

use anyhow::{Context as _, bail};

use crate::cmd::{cargo, root, run_cmd, step};

/// The browsers the suite runs in.
const BROWSERS: [&str; 2] = ["chromium", "firefox"];

/// `cargo test --workspace` for `browser` against the build in `dist`. Always the whole
/// workspace: `--package nova-e2e` alone unifies features differently and would build every
/// dependency a second time. Every test binary runs even after one failed, so a run names every
/// failing test, not only the first.
fn suite(dist: &Path, browser: &str, filter: Option<&str>) -> Command {
    let mut cmd = cargo();
    cmd.args(["test", "--workspace", "--no-fail-fast"]).env("NOVA_DIST", dist).env("NOVA_BROWSER", browser);
    cmd.args(filter);
    cmd
}

/// Compiles the tests (the same build serves both browsers).
pub fn compile(dist: &Path, filter: Option<&str>) -> anyhow::Result<()> {
    step("compiling the tests");
    run_cmd(suite(dist, BROWSERS[0], filter).arg("--no-run"))
}

/// Runs the compiled tests in both browsers at once; fails naming each browser whose suite
/// failed.
pub fn run(dist: &Path, filter: Option<&str>) -> anyhow::Result<()> {
    step(
        "unit, integration and end-to-end tests in Chromium and in Firefox at once (each line \
         starts with its browser; the fast unit tests run in both)",
    );
    let started = Instant::now();
    let (ended, ends) = std::sync::mpsc::channel();
    for browser in BROWSERS {
        let mut child = suite(dist, browser, filter)
            .current_dir(root())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .with_context(|| format!("starting the {browser} suite"))?;
        let out = child.stdout.take().context("no stdout")?;
        let err = child.stderr.take().context("no stderr")?;
        let relays = [relay(browser, out, false), relay(browser, err, true)];
        let ended = ended.clone();
        // Each suite is waited for on its own, so its time is its own end's.
        std::thread::spawn(move || {
            let status = child.wait();
            for r in relays {
                let _ = r.join();
            }
            let _ = ended.send((browser, status, started.elapsed().as_secs()));
        });
    }
    drop(ended);
    let mut failed = Vec::new();
    for (browser, status, secs) in ends {
        let status = status.with_context(|| format!("waiting for the {browser} suite"))?;
        if status.success() {
            step(&format!("{browser}: every test passed ({secs} s)"));
        } else {
            step(&format!("{browser}: tests failed ({status}, {secs} s): see the lines led by `{browser}`"));
            failed.push(browser);
        }
    }
    if !failed.is_empty() {
        bail!("the tests failed in {}", failed.join(" and "));
    }
    Ok(())
}

/// Copies `from` line by line to our stdout (or stderr), each line led by `browser`.
fn relay(
    browser: &'static str,
    from: impl Read + Send + 'static,
    to_stderr: bool,
) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        let mut from = BufReader::new(from);
        let mut line = Vec::new();
        while from.read_until(b'\n', &mut line).is_ok_and(|n| n > 0) {
            let text = String::from_utf8_lossy(&line);
            let text = text.trim_end_matches(['\n', '\r']);
            let _ = if to_stderr {
                writeln!(std::io::stderr().lock(), "{browser:<8}| {text}")
            } else {
                writeln!(std::io::stdout().lock(), "{browser:<8}| {text}")
            };
            line.clear();
        }
    })
}
