//! Real web applications that nobody on the Nova team wrote, installed from the package
//! registries these machines reach and started on loopback for the end-to-end tests
//! (`tests/tests/test_realapps.rs`). Each is installed once into `target/tools/realapps/`
//! (kept between runs, so CI pays the download once per clean machine) and gets a fresh data
//! directory per test, whose database the tests read to judge Nova's verdicts.
//!
//! - [`canaille`]: Canaille (PyPI, Flask), an identity provider whose sign-in asks for the
//!   account on one page and its password on the next.
//! - [`django`]: the Django admin (PyPI), with SQLite.
//! - [`gradio`]: Gradio's chat interface (PyPI): a streamed reply, a model dropdown, an error
//!   toast.
//! - [`streamlit`]: a Streamlit chat (PyPI): a streamed reply, a model selectbox, an error in
//!   the reply; its whole screen lies in a positioned layer drawn over a WebSocket.
//! - [`chainlit`]: a Chainlit chat (PyPI): a streamed reply, a model among the chat settings in
//!   a dialog, an error message in the conversation.
//! - [`nicegui`]: a NiceGUI chat (PyPI, Vue and Quasar): a streamed reply, a Quasar select
//!   whose focus target is a transparent input, an error notification.
//! - [`shiny`]: a Shiny for Python chat (PyPI, Posit's shinychat): a streamed reply, a
//!   `<select>`, an error notification.
//! - [`deep_chat`]: Deep Chat (npm), a chat web component on a plain page, all of it inside its
//!   shadow root: a reply streamed as Server-Sent Events, an error bubble.
//! - [`chat`]: what the chats share: what their server received, and the agent's journey.
//! - [`two_factor`]: django-two-factor-auth (PyPI) on a stock Django project: a sign-in that
//!   asks for a one-time code after the password.
//! - [`mediawiki`]: MediaWiki (Debian's package, PHP), with SQLite.
//! - [`jingo`]: Jingo (npm, Node.js), a wiki kept in a git repository.
//! - [`tiddlywiki`]: TiddlyWiki (npm, Node.js), a single-page wiki with no forms that saves
//!   each entry as a file.
//! - [`wagtail`]: Wagtail (PyPI), Django's content management system: a page editor whose
//!   scripts make a page's address from its title as it is typed, a publish button in a menu.
//! - [`trac`]: Trac (PyPI), the issue tracker: two submit buttons, refusals in a warning box
//!   of its own, and a change refused because someone else changed the ticket first.
//! - [`ihatemoney`]: I Hate Money (PyPI, Flask), shared expenses with SQLite: forms in a dialog,
//!   a `<select>`, a delete that asks in its own button.
//! - [`radicale`]: Radicale (PyPI), a calendar and contacts server whose collection manager is
//!   one page that never reloads: a sign-in behind a loading screen, forms that save in the
//!   background, errors in the form's own line.
//! - [`sqlite_web`]: sqlite-web (PyPI, Flask), a browser for one SQLite database behind a
//!   password alone: a sign-in page with no user-name field, Bootstrap alerts.
//! - [`mlflow`]: MLflow (PyPI), a machine-learning tracking server whose React page creates
//!   from a dialog with its submit button in the footer and shows `role="status"` badges on
//!   every view.
//! - [`prefect`]: Prefect (PyPI), a workflow server whose React page (shadcn/ui) creates from a
//!   dialog saved in the background and confirms only in a Sonner toast that leaves.
//! - [`fava`]: Fava (PyPI), Beancount's web interface over a plain-text ledger: an entry added
//!   from a modal dialog whose fields keep what was typed once left, confirmed or refused only
//!   in notifications that leave.
//! - [`node_red`]: Node-RED (npm), a flow editor whose changes take effect once deployed: a
//!   deploy confirmed only in a notification, and one refused because a colleague deployed
//!   first, sent again once merged.
//! - [`jupyterlab`]: JupyterLab (PyPI), the notebook editor: a notebook opened with a
//!   double-click, cells typed into CodeMirror and run by a Python kernel, and a save that asks
//!   first because the file changed on disk.
//! - [`installs`]: every application installed in one call, for `cargo xtask test` to do in the
//!   background while it builds.

pub mod canaille;
pub mod chainlit;
pub mod chat;
pub mod deep_chat;
pub mod django;
pub mod fava;
pub mod gradio;
pub mod ihatemoney;
pub mod installs;
pub mod jingo;
pub mod jupyterlab;
pub mod mediawiki;
pub mod mlflow;
pub mod nicegui;
pub mod node_red;
pub mod prefect;
pub mod radicale;
pub mod shiny;
pub mod sqlite_web;
pub mod streamlit;
pub mod tiddlywiki;
pub mod trac;
pub mod two_factor;
pub mod wagtail;

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, bail};
use serde_json::json;

use crate::agent::Agent;

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

/// The npm package `package` at `version`, installed once into its own folder of [`tools_dir`]
/// (`label` names it in the progress line); the path of its file `bin` (inside the package).
pub fn npm_install_once(label: &str, package: &str, version: &str, bin: &str) -> anyhow::Result<PathBuf> {
    let dir = tools_dir().join(format!("{package}-{version}"));
    install_once(&dir, |tmp| {
        use std::io::Write as _;
        let _ =
            writeln!(std::io::stderr(), "==> installing {label} {version} from npm into {}", dir.display());
        run(Command::new("npm")
            .args(["install", "--no-audit", "--no-fund", "--loglevel=error", "--prefix"])
            .arg(tmp)
            .arg(format!("{package}@{version}")))
        .with_context(|| format!("npm install {package} (Debian/Ubuntu: apt-get install -y nodejs npm)"))?;
        Ok(())
    })?;
    let bin = dir.join("node_modules").join(package).join(bin);
    anyhow::ensure!(bin.is_file(), "no {} in {}", bin.display(), dir.display());
    Ok(bin)
}

/// The PyPI package `package` at `version`, installed once into a virtualenv of its own in
/// [`tools_dir`] (`label` names it in the progress line); the venv's interpreter. (The venv's
/// scripts name the directory they were made in, not the one it was renamed to: call the
/// interpreter directly.)
pub fn pip_install_once(label: &str, package: &str, version: &str) -> anyhow::Result<PathBuf> {
    let dir = format!("{}-{version}", package.to_lowercase());
    pip_install_set_once(&format!("{label} {version}"), &dir, &[&format!("{package}=={version}")])
}

/// [`pip_install_once`] for several pinned packages in one virtualenv, `tools_dir()/dir`.
pub fn pip_install_set_once(label: &str, dir: &str, pinned: &[&str]) -> anyhow::Result<PathBuf> {
    let dir = tools_dir().join(dir);
    install_once(&dir, |tmp| {
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), "==> installing {label} from PyPI into {}", dir.display());
        run(Command::new("python3").args(["-m", "venv"]).arg(tmp))
            .context("python3 -m venv (Debian/Ubuntu: apt-get install -y python3-venv)")?;
        run(Command::new(tmp.join("bin/pip")).args(["install", "--quiet"]).args(pinned))?;
        Ok(())
    })?;
    let python = dir.join("bin/python3");
    anyhow::ensure!(python.is_file(), "no python3 in {}", dir.display());
    Ok(python)
}

/// A free loopback port.
pub fn free_port() -> anyhow::Result<u16> {
    Ok(std::net::TcpListener::bind(("127.0.0.1", 0))?.local_addr()?.port())
}

/// How long a real application's server may take to listen: Prefect, on a CI machine running
/// both browsers' tests at once, printed its banner and had not listened after 60 s.
pub const LISTEN_WITHIN: std::time::Duration = std::time::Duration::from_secs(120);

/// A real application's server process and its own directory (settings, database, log). The
/// process is killed when this is dropped.
pub struct Served {
    child: std::process::Child,
    dir: tempfile::TempDir,
    /// `http://127.0.0.1:PORT`.
    pub origin: String,
}

impl Served {
    /// Starts `cmd` (which serves on `port`) in a process group of its own, with its output in
    /// `dir/server.log`, and waits until it listens (at most [`LISTEN_WITHIN`]; a server that
    /// stops first fails at once, with what it printed).
    pub async fn spawn(
        dir: tempfile::TempDir,
        port: u16,
        cmd: &mut Command,
        what: &str,
    ) -> anyhow::Result<Self> {
        let log = std::fs::File::create(dir.path().join("server.log"))?;
        // A group of its own, so that its workers (PHP's server forks them) stop with it.
        std::os::unix::process::CommandExt::process_group(cmd, 0);
        let child = cmd
            .stdout(std::process::Stdio::from(log.try_clone()?))
            .stderr(std::process::Stdio::from(log))
            .spawn()
            .with_context(|| format!("starting {what}"))?;
        let mut me = Self { child, dir, origin: format!("http://127.0.0.1:{port}") };
        let deadline = std::time::Instant::now() + LISTEN_WITHIN;
        loop {
            if tokio::net::TcpStream::connect(("127.0.0.1", port)).await.is_ok() {
                return Ok(me);
            }
            if let Some(status) = me.child.try_wait()? {
                bail!("{what} stopped ({status}) before it listened; it printed:\n{}", me.log());
            }
            if std::time::Instant::now() > deadline {
                bail!(
                    "{what} did not listen on 127.0.0.1:{port} within {} s; it printed:\n{}",
                    LISTEN_WITHIN.as_secs(),
                    me.log()
                );
            }
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
    }

    /// Waits until `path` answers 200 OK, for a server that listens before it is ready (one
    /// that makes its store after it binds its port): at most two minutes.
    pub async fn until_ok(&self, path: &str, what: &str) -> anyhow::Result<()> {
        use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
        let address = self.origin.trim_start_matches("http://");
        let ask = format!("GET {path} HTTP/1.1\r\nHost: {address}\r\nConnection: close\r\n\r\n");
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
        let mut last = String::from("no answer");
        loop {
            if let Ok(mut conn) = tokio::net::TcpStream::connect(address).await {
                let mut head = [0u8; 12];
                if conn.write_all(ask.as_bytes()).await.is_ok() && conn.read_exact(&mut head).await.is_ok() {
                    last = String::from_utf8_lossy(&head).into_owned();
                    if last.ends_with(" 200") {
                        return Ok(());
                    }
                }
            }
            if std::time::Instant::now() > deadline {
                bail!(
                    "{what} did not answer 200 on {path} within 120 s (last: {last}); it printed:\n{}",
                    self.log()
                );
            }
            tokio::time::sleep(std::time::Duration::from_millis(250)).await;
        }
    }

    /// A path in the application's directory.
    pub fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    /// One integer from the application's SQLite database at `rel`.
    pub fn count(&self, rel: &str, sql: &str) -> anyhow::Result<i64> {
        crate::store::query_i64(&self.path(rel), sql)
    }

    /// What the server printed (for failure messages).
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.path("server.log")).unwrap_or_default()
    }
}

impl Drop for Served {
    /// Stops the server and every process it started (its group).
    fn drop(&mut self) {
        if let Ok(pid) = i32::try_from(self.child.id()) {
            let _ =
                nix::sys::signal::killpg(nix::unistd::Pid::from_raw(pid), nix::sys::signal::Signal::SIGKILL);
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One guarded step of a journey, once its verdict came.
pub struct Step {
    /// What the step does (`sign_in_wrong`, `submit_valid`, ...).
    pub kind: &'static str,
    /// The tool it called.
    pub tool: &'static str,
    /// Which call of that tool it was (1 for the journey's first): the store's row of the call
    /// is the `nth` of the tool's rows.
    pub nth: usize,
    /// The reply.
    pub reply: serde_json::Value,
    /// Where the action had to land (`urlAfter`).
    pub landed: String,
}

impl Step {
    /// How long the verdict took after the dispatch (`guardedCommit.durationMs`).
    pub fn verdict_ms(&self) -> Option<f64> {
        self.reply["guardedCommit"]["durationMs"].as_f64()
    }
}

/// Judges each guarded step of a journey: its verdict, its `urlAfter` and a count in the
/// application's own database; then hands the step to `after` (the store's row, timings).
pub struct Judge<'a, F> {
    /// What else looks at each step.
    pub after: F,
    /// The server's output, for failure messages.
    pub log: &'a dyn Fn() -> String,
    /// One integer from the application's database.
    pub count: &'a dyn Fn(&str) -> anyhow::Result<i64>,
}

impl<F: FnMut(&Step) -> anyhow::Result<()>> Judge<'_, F> {
    /// Checks the reply of step `kind` (the `nth` call of `tool`) against the verdict it must have,
    /// where it must have landed, and `sql` against the count the database must show.
    pub fn step(
        &mut self,
        (kind, tool, nth): (&'static str, &'static str, usize),
        (reply, _): (serde_json::Value, bool),
        verdict: &str,
        landed: String,
        (sql, count): (&str, i64),
    ) -> anyhow::Result<()> {
        let got = reply["guardedCommit"]["verificationStatus"].as_str().unwrap_or_default();
        anyhow::ensure!(got == verdict, "{kind}: the verdict should be {verdict}: {reply}\n{}", (self.log)());
        anyhow::ensure!(
            reply["urlAfter"] == serde_json::json!(landed),
            "{kind}: urlAfter should be {landed}: {reply}"
        );
        let n = (self.count)(sql)?;
        anyhow::ensure!(n == count, "{kind}: `{sql}` gives {n}, not {count}");
        (self.after)(&Step { kind, tool, nth, reply, landed })
    }

    /// On a sign-in page already shown, signs in as `user` (none where the page asks for a
    /// password alone) with a wrong password, then with `password`: the first must fail and stay
    /// at `stays`, the second succeed and land at `lands`; `sql` must count `counts.0` after the
    /// first and `counts.1` after the second.
    pub async fn sign_in(
        &mut self,
        a: &mut Agent,
        (user, password): (Option<&str>, &str),
        (stays, lands): (String, String),
        (sql, counts): (&str, (i64, i64)),
    ) -> anyhow::Result<()> {
        const LOGIN: &str = "nova.guarded_login";
        let args = |password: &str| match user {
            Some(user) => json!({"username": user, "password": password}),
            None => json!({"password": password}),
        };
        let r = a.call(LOGIN, args("not-the-password")).await?;
        self.step(("sign_in_wrong", LOGIN, a.calls_of(LOGIN)), r, "verified_fail", stays, (sql, counts.0))?;
        a.step("nova.perceive", json!({})).await?;
        self.sign_in_right(a, args(password), lands, (sql, counts.1)).await
    }

    /// The right sign-in (`args` for `nova.guarded_login`): a success that lands on `lands`
    /// and is proven, not only likely, with `sql` at `count`.
    pub async fn sign_in_right(
        &mut self,
        a: &mut Agent,
        args: serde_json::Value,
        lands: String,
        (sql, count): (&str, i64),
    ) -> anyhow::Result<()> {
        const LOGIN: &str = "nova.guarded_login";
        let r = a.call(LOGIN, args).await?;
        // Every application here offers to sign out once signed in (in a menu at least): proven, not likely.
        anyhow::ensure!(
            r.0["verifyState"] == "verified",
            "sign_in_right: verified, not only likely: {}",
            r.0
        );
        self.step(("sign_in_right", LOGIN, a.calls_of(LOGIN)), r, "verified_success", lands, (sql, count))
    }
}

/// The ref of the first element line of a page read (`nova.perceive`) holding `wanted`, as
/// an agent picks what to act on by what it reads.
pub fn ref_of(read: &serde_json::Value, wanted: &str) -> anyhow::Result<String> {
    let line = line_of(read, wanted)?;
    Ok(line.split(' ').next().unwrap_or_default().to_owned())
}

/// Opens a dialog: visits `url`, presses the button whose page-model line holds `button` once
/// the page's script has drawn it, and reads the page until a line holding `field` shows.
pub async fn open_dialog(a: &mut Agent, url: &str, button: &str, field: &str) -> anyhow::Result<()> {
    a.visit(url).await?;
    press(a, button).await?;
    read_until(a, &format!("the {field}"), |r| line_of(r, field).is_ok()).await?;
    Ok(())
}

/// Reads the page until an element line holding `wanted` shows (the page's script may draw it
/// a moment later), and clicks that element by its ref. A click refused because something
/// covers it is tried again after reading the page, four times in all, waiting 1, 2 and 4 s
/// between: a person waits out a cover that goes away (Node-RED fades out the shade of a
/// dialog just closed, and its notifications, over the flows' tabs, stay five seconds). Any
/// other refusal fails at once.
pub async fn press(a: &mut Agent, wanted: &str) -> anyhow::Result<()> {
    let mut pause = std::time::Duration::from_secs(1);
    let mut attempts = 1;
    loop {
        let read = read_until(a, &format!("the {wanted}"), |r| line_of(r, wanted).is_ok()).await?;
        let (r, failed) = a.call("nova.click_selector", json!({"selector": ref_of(&read, wanted)?})).await?;
        if !failed {
            return Ok(());
        }
        anyhow::ensure!(r["reasonCode"] == "element_covered", "pressing {wanted}: {r}");
        anyhow::ensure!(attempts < 4, "{wanted} stayed covered for seven seconds: {r}");
        tokio::time::sleep(pause).await;
        pause *= 2;
        attempts += 1;
    }
}

/// Calls `tool` (a guarded action) with `args`; refused because something covers its target and
/// safe to retry (a shade still fading out: Node-RED's over its header once the node editor is
/// done), tries again as [`press`] does, four times in all, waiting 1, 2 and 4 s between, as an
/// agent follows `retryAdvice`. The last answer, whatever it is.
pub async fn act_uncovered(
    a: &mut Agent,
    tool: &str,
    args: serde_json::Value,
) -> anyhow::Result<(serde_json::Value, bool)> {
    let mut pause = std::time::Duration::from_secs(1);
    let mut r = a.call(tool, args.clone()).await?;
    for _ in 1..4 {
        if r.0["pageReasonCode"] != "element_covered" || r.0["retryAdvice"] != "safe_to_retry" {
            break;
        }
        tokio::time::sleep(pause).await;
        pause *= 2;
        r = a.call(tool, args.clone()).await?;
    }
    Ok(r)
}

/// The page read once `done` holds of it (at most [`SOON`]): what a click or typing opened may be
/// fetched from the server first. Fails naming `what` was awaited. See [`poll`].
pub async fn read_until(
    a: &mut Agent,
    what: &str,
    done: impl Fn(&serde_json::Value) -> bool,
) -> anyhow::Result<serde_json::Value> {
    poll(a, ("nova.perceive", SOON), what, done).await
}

/// How long a person waits for what a click or typing opened (fetched from the server first),
/// on a busy machine: two browsers' suites at once on two cores, as CI runs them.
pub const SOON: std::time::Duration = std::time::Duration::from_secs(10);

/// How long a person waits for an application's first screen: a heavy one (Node-RED's editor,
/// JupyterLab) loads its parts after the page itself, longer on a busy machine.
pub const FIRST_SCREEN: std::time::Duration = std::time::Duration::from_secs(20);

/// [`read_until`] for an application's first screen, at most [`FIRST_SCREEN`].
pub async fn read_first_screen(
    a: &mut Agent,
    what: &str,
    done: impl Fn(&serde_json::Value) -> bool,
) -> anyhow::Result<serde_json::Value> {
    poll(a, ("nova.perceive", FIRST_SCREEN), what, done).await
}

/// The page's text (`nova.read_text`) once it holds `wanted` (at most [`SOON`]): a reply still
/// streaming in. Fails naming `wanted`. See [`poll`].
pub async fn read_text_until(a: &mut Agent, wanted: &str) -> anyhow::Result<String> {
    let read =
        poll(a, ("nova.read_text", SOON), wanted, |r| r["text"].as_str().is_some_and(|t| t.contains(wanted)))
            .await?;
    Ok(read["text"].as_str().unwrap_or_default().to_owned())
}

/// Reads the page with `tool` until `done` holds of the read (at most `budget`), as a compliant
/// agent polls: 100 ms after a read that showed a change; after one that showed none, 400 ms,
/// then once more at the budget's end. So a page that stays the same is read four times in a
/// row at most (five reads of a page that did not change within a minute are a loop, and
/// blocked), and a page still changing is read until the budget is spent. Fails naming `what`
/// was awaited.
async fn poll(
    a: &mut Agent,
    (tool, budget): (&str, std::time::Duration),
    what: &str,
    done: impl Fn(&serde_json::Value) -> bool,
) -> anyhow::Result<serde_json::Value> {
    let started = std::time::Instant::now();
    let mut last = serde_json::Value::Null;
    // Reads in a row that showed what the one before showed.
    let mut same = 0;
    loop {
        let read = a.step(tool, json!({})).await?;
        if done(&read) {
            return Ok(read);
        }
        let changed = (&read["elements"], &read["text"]) != (&last["elements"], &last["text"]);
        same = if changed { 0 } else { same + 1 };
        let left = budget.saturating_sub(started.elapsed());
        if left.is_zero() || same == 3 {
            bail!("the page never showed {what}: {} {}", read["elements"], read["text"]);
        }
        let pause = match same {
            0 => std::time::Duration::from_millis(100),
            1 => std::time::Duration::from_millis(400),
            _ => left,
        };
        last = read;
        tokio::time::sleep(pause.min(left)).await;
    }
}

/// The first element line of a page read (`nova.perceive`) holding `wanted`.
pub fn line_of(read: &serde_json::Value, wanted: &str) -> anyhow::Result<String> {
    let lines = read["elements"].as_array().map(Vec::as_slice).unwrap_or_default();
    match lines.iter().filter_map(|l| l.as_str()).find(|l| l.contains(wanted)) {
        Some(l) => Ok(l.to_owned()),
        None => bail!("no element line holds `{wanted}`: {lines:?}"),
    }
}

/// The element line of a page read (`nova.perceive`) for the element whose ref is `r`.
pub fn line_with_ref<'a>(read: &'a serde_json::Value, r: &str) -> Option<&'a str> {
    let lines = read["elements"].as_array().map(Vec::as_slice).unwrap_or_default();
    lines
        .iter()
        .filter_map(|l| l.as_str())
        .find(|l| l.strip_prefix(r).is_some_and(|rest| rest.starts_with(' ')))
}

/// The page type a read (`nova.perceive`) gives in its hints (`core.page.type`), `null` when it
/// gives none.
pub fn page_type(read: &serde_json::Value) -> &serde_json::Value {
    &read["okHints"]["currentFacts"]["core.page.type"]["valueJson"]
}

/// What a verdict (`guardedCommit`) observed of `fact` among the assertions that failed, `null`
/// when none about it failed.
pub fn failed_observed<'a>(reply: &'a serde_json::Value, fact: &str) -> &'a serde_json::Value {
    let failed = reply["guardedCommit"]["failedAssertions"].as_array().into_iter().flatten();
    failed.into_iter().find(|f| f["factKey"] == fact).map_or(&serde_json::Value::Null, |f| &f["observed"])
}

/// The facts a success was proven by (`guardedCommit.heldAssertions`), empty when none.
pub fn proven_by(reply: &serde_json::Value) -> Vec<&str> {
    let held = reply["guardedCommit"]["heldAssertions"].as_array().into_iter().flatten();
    held.filter(|h| h["passed"] == true).filter_map(|h| h["factKey"].as_str()).collect()
}

/// Fails unless the answer `(r, failed)` to a state-changing click is the refusal of one sent
/// without a transition contract, before anything was dispatched: `what` names the click
/// ("a delete", "a save") in the failure.
pub fn refused_without_contract((r, failed): &(serde_json::Value, bool), what: &str) -> anyhow::Result<()> {
    anyhow::ensure!(
        *failed && r["reasonCode"] == "guarded_commit.missing_contract" && r["actionDispatched"] == false,
        "{what} without a contract must be refused before dispatch: {r}"
    );
    Ok(())
}

/// Runs `call` while the person watches: a native dialog that shows meanwhile is answered by
/// `person` (polled every 100 ms).
pub async fn with_person<T>(
    call: impl std::future::Future<Output = T>,
    person: &impl AsyncFn() -> bool,
) -> T {
    let mut call = std::pin::pin!(call);
    loop {
        tokio::select! {
            out = &mut call => return out,
            () = tokio::time::sleep(std::time::Duration::from_millis(100)) => {
                person().await;
            }
        }
    }
}
