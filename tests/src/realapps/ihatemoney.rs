//! I Hate Money, from PyPI: a Flask application for sharing expenses, with SQLite, served by
//! Flask's own development server on loopback. Classic server forms with CSRF tokens and their
//! errors shown as alerts, a bill form in a Bootstrap dialog with a `<select>` for the payer and
//! a tooltip that shows over the next field, and a delete that asks "Are you sure?" in the
//! button itself before it submits. Nothing of the application is ours: the tests only drive
//! its pages and read its database.

use std::path::PathBuf;
use std::process::Command;

use serde_json::{Value, json};

use super::{Judge, Step, refused_without_contract};
use crate::agent::Agent;

/// The I Hate Money release installed.
pub const VERSION: &str = "7.2.1";
/// The project's private code (a throwaway, local to the test's data directory).
pub const PROJECT_CODE: &str = "split-the-bill-41";

/// The interpreter of the virtualenv with I Hate Money, installed once.
pub fn ensure_installed() -> anyhow::Result<PathBuf> {
    super::pip_install_once("I Hate Money", "ihatemoney", VERSION)
}

/// A running I Hate Money with its own settings and database.
pub struct IHateMoney {
    served: super::Served,
}

impl IHateMoney {
    /// Installs I Hate Money if needed and serves it with a fresh database.
    pub async fn start() -> anyhow::Result<Self> {
        let python = ensure_installed()?;
        let dir = tempfile::tempdir()?;
        let settings = dir.path().join("settings.cfg");
        // Plain HTTP on loopback: the session cookie cannot be `Secure`.
        std::fs::write(
            &settings,
            format!(
                "SQLALCHEMY_DATABASE_URI = \"sqlite:///{}\"\nSECRET_KEY = \"nova-tests-only\"\n\
                 SESSION_COOKIE_SECURE = False\nACTIVATE_DEMO_PROJECT = False\n",
                dir.path().join("db.sqlite").display()
            ),
        )?;
        let port = super::free_port()?;
        let mut serve = Command::new(&python);
        serve
            .args(["-m", "ihatemoney.manage", "run", "--host", "127.0.0.1", "--port", &port.to_string()])
            .env("IHATEMONEY_SETTINGS_FILE_PATH", &settings)
            .current_dir(dir.path());
        Ok(Self { served: super::Served::spawn(dir, port, &mut serve, "the I Hate Money server").await? })
    }

    /// The URL of `path` on the server.
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.served.origin)
    }

    /// One integer from the application's database.
    pub fn count(&self, sql: &str) -> anyhow::Result<i64> {
        self.served.count("db.sqlite", sql)
    }

    /// What the server printed (for failure messages).
    pub fn log(&self) -> String {
        self.served.log()
    }
}

/// A contract whose success is one fact.
fn once(fact: Value) -> Value {
    json!({"actionKind": "custom", "postconditions": {"success": {"all": [fact]}}})
}

/// The expenses journey of a compliant agent (who has loaded its bundle): a project refused for
/// its e-mail address then made, a participant added twice (the second refused), a bill from
/// the dialog refused for its amount then saved (its payer chosen in a `<select>`), the bill
/// deleted in the button's own two steps, and a sign-out from the project's menu then a sign-in
/// with a wrong and the right code. Every verdict, `urlAfter` and the database after
/// each step are checked here; `after` sees each guarded step too.
pub async fn journey(
    app: &IHateMoney,
    a: &mut Agent,
    after: impl FnMut(&Step) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    const SUBMIT: &str = "nova.guarded_submit_form";
    const CLICK: &str = "nova.click_selector";
    let mut judge = Judge { after, log: &|| app.log(), count: &|sql| app.count(sql) };
    let projects = "SELECT COUNT(*) FROM project";
    let people = "SELECT COUNT(*) FROM person";
    let bills = "SELECT COUNT(*) FROM bill";
    let home = app.url("/trip/");

    a.visit(&app.url("/")).await?;
    let mut fields = json!({"#name": "Trip", "#creation-form input[name=password]": PROJECT_CODE,
                            "#contact_email": "not-an-email"});
    let r = a.call(SUBMIT, json!({"formSelector": "#creation-form", "fields": fields})).await?;
    judge.step(
        ("submit_invalid", SUBMIT, a.calls_of(SUBMIT)),
        r,
        "verified_fail",
        app.url("/create"),
        (projects, 0),
    )?;
    // The form comes back on its own page, the code emptied.
    a.step("nova.perceive", json!({})).await?;
    fields = json!({"#password": PROJECT_CODE, "#contact_email": "ada@example.com"});
    let r = a.call(SUBMIT, json!({"fields": fields})).await?;
    judge.step(
        ("submit_valid", SUBMIT, a.calls_of(SUBMIT)),
        r,
        "verified_success",
        home.clone(),
        (projects, 1),
    )?;

    a.step("nova.perceive", json!({})).await?;
    let member = |name: &str| json!({"formSelector": "#add-member-form", "fields": {"#add-member-form input[name=name]": name}});
    let r = a.call(SUBMIT, member("Ada")).await?;
    judge.step(
        ("submit_valid", SUBMIT, a.calls_of(SUBMIT)),
        r,
        "verified_success",
        home.clone(),
        (people, 1),
    )?;
    a.step("nova.perceive", json!({})).await?;
    let r = a.call(SUBMIT, member("Ada")).await?;
    let again = app.url("/trip/members/add");
    judge.step(("submit_duplicate", SUBMIT, a.calls_of(SUBMIT)), r, "verified_fail", again, (people, 1))?;
    a.visit(&home).await?;
    let r = a.call(SUBMIT, member("Bob")).await?;
    judge.step(
        ("submit_valid", SUBMIT, a.calls_of(SUBMIT)),
        r,
        "verified_success",
        home.clone(),
        (people, 2),
    )?;

    // The bill form opens in a dialog; the payer is a <select>, and the amount field's tooltip
    // shows over it once the amount is typed.
    a.step("nova.perceive", json!({})).await?;
    a.step(CLICK, json!({"selector": "a[href=\"/trip/add\"]"})).await?;
    let bill = |amount: &str| json!({"#what": "Dinner", "#payer": "Ada", "#amount": amount});
    let r = a.call(SUBMIT, json!({"formSelector": "#bill-form form", "fields": bill("forty")})).await?;
    judge.step(
        ("submit_invalid", SUBMIT, a.calls_of(SUBMIT)),
        r,
        "verified_fail",
        app.url("/trip/add"),
        (bills, 0),
    )?;
    a.step("nova.perceive", json!({})).await?;
    let r = a.call(SUBMIT, json!({"fields": bill("42")})).await?;
    let saved = "SELECT COUNT(*) FROM bill JOIN person ON person.id = bill.payer_id \
                 WHERE what = 'Dinner' AND amount = 42 AND person.name = 'Ada'";
    judge.step(
        ("submit_valid", SUBMIT, a.calls_of(SUBMIT)),
        r,
        "verified_success",
        home.clone(),
        (saved, 1),
    )?;

    // The delete button asks "Are you sure?" in place at the first click, and submits at the second.
    a.step("nova.perceive", json!({})).await?;
    let delete = "form.delete-bill button";
    refused_without_contract(&a.call(CLICK, json!({"selector": delete})).await?, "a delete")?;
    let asked = once(
        json!({"factKey": format!("dom.text({delete})"), "operator": "contains", "expected": "Are you sure"}),
    );
    let r = a.call(CLICK, json!({"selector": delete, "transitionContract": asked})).await?;
    judge.step(("delete_ask", CLICK, a.calls_of(CLICK)), r, "verified_success", home.clone(), (bills, 1))?;
    let gone = once(json!({"factKey": "dom.exists(form.delete-bill)", "operator": "eq", "expected": false}));
    let r = a.call(CLICK, json!({"selector": delete, "transitionContract": gone})).await?;
    judge.step(
        ("delete_confirm", CLICK, a.calls_of(CLICK)),
        r,
        "verified_success",
        home.clone(),
        (bills, 0),
    )?;

    // Signing out is a POST form in the project's closed menu; signing back in is the project's
    // identifier and code in the home page's first form (the project form follows it).
    a.step("nova.perceive", json!({})).await?;
    a.step(CLICK, json!({"selector": "#navbarProjectsLinks"})).await?;
    let out = once(json!({"factKey": "dom.exists(#creation-form)", "operator": "eq", "expected": true}));
    let exit = "form[action$=\"/exit\"] [type=submit]";
    let r = a.call(CLICK, json!({"selector": exit, "transitionContract": out})).await?;
    judge.step(("sign_out", CLICK, a.calls_of(CLICK)), r, "verified_success", app.url("/"), (projects, 1))?;
    a.step("nova.perceive", json!({})).await?;
    judge.sign_in(a, (Some("trip"), PROJECT_CODE), (app.url("/authenticate"), home), (projects, (1, 1))).await
}
