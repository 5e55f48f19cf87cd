//! Canaille, from PyPI: a Flask identity provider (OpenID Connect) with SQLite, served by its own
//! `canaille run` on loopback. Its sign-in asks for the account alone ("Login", then "Continue")
//! and for the password on the next page (`/auth/password`), which shows the account chosen; an
//! account it does not know goes on to the password page too (so that the first page does not
//! tell who has one). With its intruder lockout on (`ENABLE_INTRUDER_LOCKOUT`), the database
//! keeps each failed password's time on the user and clears them when the password is right,
//! which is what the tests judge. Each field is checked by htmx 500 ms after typing (its markup
//! says `delay:500ms`), and a check answered after Continue was pressed once dropped the
//! account from the session (docs/perceive.md). Nothing of the application is ours: the tests
//! only drive its pages and read its database.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::json;

use super::{Judge, Step, run};
use crate::agent::Agent;

/// The Canaille release installed.
pub const VERSION: &str = "0.3.6";
/// The user's account and password (a throwaway, local to the test's data directory).
pub const USER: &str = "alice";
/// The user's password.
pub const PASSWORD: &str = "Correct-Horse-42";

/// The interpreter of the virtualenv with Canaille and what its pages, SQLite and its server
/// need (the package's extras), installed once.
pub fn ensure_installed() -> anyhow::Result<PathBuf> {
    let package = format!("canaille[front,sqlite,server,oidc]=={VERSION}");
    super::pip_install_set_once(&format!("Canaille {VERSION}"), &format!("canaille-{VERSION}"), &[&package])
}

/// Runs Canaille's command line (the venv's interpreter: its scripts name the directory the venv
/// was made in).
fn canaille(python: &Path, config: &Path, args: &[&str]) -> Command {
    let mut cmd = Command::new(python);
    cmd.args(["-c", "import sys; from canaille.commands import cli; sys.exit(cli())"])
        .args(args)
        .env("CANAILLE_CONFIG", config);
    cmd
}

/// A running Canaille with its own settings, database and one user.
pub struct Canaille {
    served: super::Served,
}

impl Canaille {
    /// Installs Canaille if needed, makes its database and the user, and serves it.
    pub async fn start() -> anyhow::Result<Self> {
        let python = ensure_installed()?;
        let dir = tempfile::tempdir()?;
        let config = dir.path().join("canaille.toml");
        std::fs::write(
            &config,
            format!(
                "SECRET_KEY = \"nova-tests-only\"\n[CANAILLE]\nNAME = \"Nova tests\"\n\
                 ENABLE_INTRUDER_LOCKOUT = true\n[CANAILLE_SQL]\nDATABASE_URI = \"sqlite:///{}\"\n",
                dir.path().join("canaille.sqlite").display()
            ),
        )?;
        run(&mut canaille(&python, &config, &["install"]))?;
        run(&mut canaille(
            &python,
            &config,
            &[
                "create",
                "user",
                "--user-name",
                USER,
                "--password",
                PASSWORD,
                "--emails",
                "alice@example.org",
                "--given-name",
                "Alice",
                "--family-name",
                "Doe",
                "--formatted-name",
                "Alice Doe",
            ],
        ))?;
        let port = super::free_port()?;
        let bind = format!("127.0.0.1:{port}");
        let mut serve = canaille(&python, &config, &["run", "--bind", &bind]);
        serve.current_dir(dir.path());
        Ok(Self { served: super::Served::spawn(dir, port, &mut serve, "the Canaille server").await? })
    }

    /// The URL of `path` on the server.
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.served.origin)
    }

    /// One integer from the application's database.
    pub fn count(&self, sql: &str) -> anyhow::Result<i64> {
        self.served.count("canaille.sqlite", sql)
    }

    /// What the server printed (for failure messages).
    pub fn log(&self) -> String {
        self.served.log()
    }
}

/// The identifier-first sign-in of a compliant agent from the first page: an account Canaille
/// does not know (it asks for a password anyway, which fails); on that account's password page,
/// a sign-in as the user (refused before anything is typed: the page is another account's); the
/// user with a wrong password (one failure recorded); then, once the lockout's 2 s have passed,
/// the right one (the failures cleared, signed in). Then, signed out, a wrong password again and
/// the right one on the password page it left. Every verdict, `urlAfter` and the database after
/// each step are checked here; `after` sees each guarded step too.
pub async fn journey(
    app: &Canaille,
    a: &mut Agent,
    after: impl FnMut(&Step) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    const LOGIN: &str = "nova.guarded_login";
    let mut judge = Judge { after, log: &|| app.log(), count: &|sql| app.count(sql) };
    let failures = "SELECT COUNT(*) FROM user WHERE json_array_length(_password_failure_timestamps) > 0";
    let (login, password_page) = (app.url("/login"), app.url("/auth/password"));
    let first_step = |r: &serde_json::Value| {
        anyhow::ensure!(
            r["userNameStep"]["verificationStatus"] == "verified_success"
                && r["userNameStep"]["urlAfter"] == json!(password_page),
            "the account page must have led to the password page: {r}"
        );
        Ok(())
    };

    a.visit(&login).await?;
    let r = a.call(LOGIN, json!({"username": "mallory", "password": "not-the-password"})).await?;
    first_step(&r.0)?;
    judge.step(
        ("sign_in_unknown", LOGIN, a.calls_of(LOGIN)),
        r,
        "verified_fail",
        password_page.clone(),
        (failures, 0),
    )?;

    a.step("nova.perceive", json!({})).await?;
    let (r, _) = a.call(LOGIN, json!({"username": USER, "password": PASSWORD})).await?;
    anyhow::ensure!(
        r["reasonCode"] == "element_not_found" && r["actionDispatched"] == false,
        "another account's password page must be refused before anything is typed: {r}"
    );
    // The refusal names Canaille's own way back to choosing the account, which the agent takes.
    let said = r["message"].as_str().unwrap_or_default();
    anyhow::ensure!(said.contains("\"Switch account\""), "the refusal names the way back: {r}");
    a.step("nova.click_selector", json!({"selector": r["switchAccount"]})).await?;
    let page = a.step("nova.perceive", json!({})).await?;
    anyhow::ensure!(page["url"] == json!(login), "Switch account leads to {login}: {}", page["url"]);

    let r = a.call(LOGIN, json!({"username": USER, "password": "not-the-password"})).await?;
    first_step(&r.0)?;
    judge.step(
        ("sign_in_wrong", LOGIN, a.calls_of(LOGIN)),
        r,
        "verified_fail",
        password_page.clone(),
        (failures, 1),
    )?;

    // Canaille refuses any password for 2 s after a wrong one (its intruder lockout).
    tokio::time::sleep(std::time::Duration::from_millis(2500)).await;
    a.visit(&login).await?;
    let r = a.call(LOGIN, json!({"username": USER, "password": PASSWORD})).await?;
    first_step(&r.0)?;
    let profile = app.url(&format!("/profile/{USER}"));
    judge.step(
        ("sign_in_right", LOGIN, a.calls_of(LOGIN)),
        r,
        "verified_success",
        profile.clone(),
        (failures, 0),
    )?;

    // Signed out, a wrong password again, then the right one typed on the password page the
    // failure left (it shows the account, and an off-screen copy of it no one can type in).
    a.visit(&app.url("/logout")).await?;
    a.visit(&login).await?;
    let r = a.call(LOGIN, json!({"username": USER, "password": "not-the-password"})).await?;
    first_step(&r.0)?;
    judge.step(
        ("password_page_wrong", LOGIN, a.calls_of(LOGIN)),
        r,
        "verified_fail",
        password_page.clone(),
        (failures, 1),
    )?;
    tokio::time::sleep(std::time::Duration::from_millis(2500)).await;
    a.step("nova.perceive", json!({})).await?;
    let r = a.call(LOGIN, json!({"username": USER, "password": PASSWORD})).await?;
    anyhow::ensure!(r.0.get("userNameStep").is_none(), "only the password is asked: {}", r.0);
    judge.step(
        ("password_page_right", LOGIN, a.calls_of(LOGIN)),
        r,
        "verified_success",
        profile,
        (failures, 0),
    )
}
