//! The Django admin, from PyPI: a stock project (`django-admin startproject`) with SQLite, a
//! superuser, served by Django's own development server on loopback. Nothing of the
//! application is ours: the tests only drive its admin pages and read its database.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::json;

use super::{Judge, Step, run};
use crate::agent::Agent;

/// The Django release installed (5.2 is the long-term support line).
pub const VERSION: &str = "5.2.19";
/// The superuser's name.
pub const ADMIN_USER: &str = "admin";
/// The superuser's password (a throwaway, local to the test's data directory).
pub const ADMIN_PASSWORD: &str = "correct-horse-battery-staple";

/// The interpreter of the virtualenv with Django, installed once.
pub fn ensure_installed() -> anyhow::Result<PathBuf> {
    super::pip_install_once("Django", "Django", VERSION)
}

/// A running Django admin with its own project directory and database.
pub struct Django {
    served: super::Served,
}

impl Django {
    /// Installs Django if needed, makes a project with a superuser, and serves it.
    pub async fn start() -> anyhow::Result<Self> {
        Self::start_project(&ensure_installed()?, |_| Ok(()), None).await
    }

    /// Makes a stock project with `python`'s Django, lets `adjust` change its files (settings,
    /// URLs) before its database is made, adds the superuser, runs `shell` (Python, in
    /// `manage.py shell`) if given, and serves it.
    pub async fn start_project(
        python: &Path,
        adjust: impl FnOnce(&Path) -> anyhow::Result<()>,
        shell: Option<&str>,
    ) -> anyhow::Result<Self> {
        let dir = tempfile::tempdir()?;
        let project = dir.path();
        let manage = |args: &[&str]| {
            let mut c = Command::new(python);
            c.arg("manage.py").args(args).current_dir(project);
            c
        };
        run(Command::new(python).args(["-m", "django", "startproject", "demo", "."]).current_dir(project))?;
        adjust(project)?;
        run(&mut manage(&["migrate", "--noinput"]))?;
        run(manage(&[
            "createsuperuser",
            "--noinput",
            "--username",
            ADMIN_USER,
            "--email",
            "admin@example.org",
        ])
        .env("DJANGO_SUPERUSER_PASSWORD", ADMIN_PASSWORD))?;
        if let Some(script) = shell {
            run(&mut manage(&["shell", "-c", script]))?;
        }
        let port = super::free_port()?;
        let mut serve = manage(&["runserver", "--noreload", &format!("127.0.0.1:{port}")]);
        Ok(Self { served: super::Served::spawn(dir, port, &mut serve, "the Django server").await? })
    }

    /// The URL of `path` on the server.
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.served.origin)
    }

    /// One integer from the application's database.
    pub fn count(&self, sql: &str) -> anyhow::Result<i64> {
        self.served.count("db.sqlite3", sql)
    }

    /// What the server printed (for failure messages).
    pub fn log(&self) -> String {
        self.served.log()
    }
}

/// The admin journey of a compliant agent (who has loaded its bundle): sign-in wrong and right,
/// a form with a validation error and a valid one, the same record again, a delete refused
/// without a contract and confirmed with one. Every verdict, `urlAfter` and the database after
/// each step are checked here; `after` sees each guarded step too (the store, timings).
pub async fn journey(
    app: &Django,
    a: &mut Agent,
    after: impl FnMut(&Step) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    let sessions = "SELECT COUNT(*) FROM django_session";
    let groups = "SELECT COUNT(*) FROM auth_group WHERE name = 'Editors'";
    let mut judge = Judge { after, log: &|| app.log(), count: &|sql| app.count(sql) };
    const SUBMIT: &str = "nova.guarded_submit_form";

    let login = app.url("/admin/login/?next=/admin/");
    a.visit(&login).await?;
    let landings = (login.clone(), app.url("/admin/"));
    judge.sign_in(a, (ADMIN_USER, ADMIN_PASSWORD), landings, (sessions, (0, 1))).await?;

    let add = app.url("/admin/auth/group/add/");
    let save = json!("input[name=\"_save\"]");
    a.visit(&add).await?;
    let r = a.call(SUBMIT, json!({"submitSelector": save})).await?;
    judge.step(
        ("submit_invalid", SUBMIT, a.calls_of(SUBMIT)),
        r,
        "verified_fail",
        add.clone(),
        ("SELECT COUNT(*) FROM auth_group", 0),
    )?;
    a.step("nova.perceive", json!({})).await?;
    let fields = json!({"#id_name": "Editors"});
    let r = a.call(SUBMIT, json!({"fields": fields, "submitSelector": save})).await?;
    judge.step(
        ("submit_valid", SUBMIT, a.calls_of(SUBMIT)),
        r,
        "verified_success",
        app.url("/admin/auth/group/"),
        (groups, 1),
    )?;

    a.visit(&add).await?;
    let r = a.call(SUBMIT, json!({"fields": fields, "submitSelector": save})).await?;
    judge.step(
        ("submit_duplicate", SUBMIT, a.calls_of(SUBMIT)),
        r,
        "verified_fail",
        add.clone(),
        (groups, 1),
    )?;

    let id = app.count("SELECT id FROM auth_group WHERE name = 'Editors'")?;
    a.visit(&app.url(&format!("/admin/auth/group/{id}/change/"))).await?;
    let (r, failed) = a.call("nova.click_selector", json!({"selector": "a.deletelink"})).await?;
    anyhow::ensure!(
        failed && r["reasonCode"] == "guarded_commit.missing_contract" && r["actionDispatched"] == false,
        "a delete without a contract must be refused before dispatch: {r}"
    );
    let to_confirm = json!({
        "actionKind": "custom",
        "postconditions": {"success": {"all": [
            {"factKey": "dom.exists(input[name=post])", "operator": "eq", "expected": true}
        ]}},
    });
    let r = a
        .call("nova.click_selector", json!({"selector": "a.deletelink", "transitionContract": to_confirm}))
        .await?;
    let confirm = app.url(&format!("/admin/auth/group/{id}/delete/"));
    judge.step(
        ("delete_ask", "nova.click_selector", a.calls_of("nova.click_selector")),
        r,
        "verified_success",
        confirm,
        (groups, 1),
    )?;
    a.step("nova.perceive", json!({})).await?;
    let r = a.call(SUBMIT, json!({"submitSelector": "input[type=submit]"})).await?;
    judge.step(
        ("delete_confirm", SUBMIT, a.calls_of(SUBMIT)),
        r,
        "verified_success",
        app.url("/admin/auth/group/"),
        (groups, 0),
    )
}
