//! sqlite-web, from PyPI: a Flask browser for one SQLite database, served by its own command on
//! loopback behind a password alone (no account: `--password`, its sign-in page has a single
//! password field). Bootstrap 4 alerts for what it did and what it refused, a row inserted from
//! a form of one field per column, a delete confirmed on a page of its own. Nothing of the
//! application is ours: the tests only drive its pages and read the database it browses.

use std::path::PathBuf;
use std::process::Command;

use serde_json::json;

use super::{Judge, Step, ref_of, refused_without_contract};
use crate::agent::Agent;

/// The sqlite-web release installed.
pub const VERSION: &str = "0.8.2";
/// The password its pages ask for (a throwaway, local to the test's server).
pub const PASSWORD: &str = "shelf-key-7731";

/// The interpreter of the virtualenv with sqlite-web, installed once.
pub fn ensure_installed() -> anyhow::Result<PathBuf> {
    super::pip_install_once("sqlite-web", "sqlite-web", VERSION)
}

/// A running sqlite-web on a fresh database with one table, `book`, whose titles are unique.
pub struct SqliteWeb {
    served: super::Served,
}

impl SqliteWeb {
    /// Installs sqlite-web if needed, makes the database and serves it behind [`PASSWORD`].
    pub async fn start() -> anyhow::Result<Self> {
        let python = ensure_installed()?;
        let dir = tempfile::tempdir()?;
        let db = dir.path().join("books.db");
        rusqlite::Connection::open(&db)?.execute_batch(
            "CREATE TABLE book (id INTEGER PRIMARY KEY, title TEXT NOT NULL UNIQUE, year INTEGER);",
        )?;
        let port = super::free_port()?;
        let mut serve = Command::new(&python);
        // `-P` asks for the password, which it reads from the environment when set there.
        serve
            .args(["-m", "sqlite_web.sqlite_web", "--host", "127.0.0.1", "--port", &port.to_string()])
            .args(["--no-browser", "--password"])
            .arg(&db)
            .env("SQLITE_WEB_PASSWORD", PASSWORD)
            .current_dir(dir.path());
        Ok(Self { served: super::Served::spawn(dir, port, &mut serve, "the sqlite-web server").await? })
    }

    /// The URL of `path` on the server.
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.served.origin)
    }

    /// One integer from the database it browses.
    pub fn count(&self, sql: &str) -> anyhow::Result<i64> {
        self.served.count("books.db", sql)
    }

    /// What the server printed (for failure messages).
    pub fn log(&self) -> String {
        self.served.log()
    }
}

/// The journey of a compliant agent (who has loaded its bundle): the sign-in page asks for a
/// password alone, so a user name given is refused untyped with the way out, then a wrong and
/// the right password without one; a book inserted, the same title refused as a duplicate, and
/// the book deleted from its confirmation page (the link there, named Delete, refused without a
/// contract). Every verdict, `urlAfter` and the database after
/// each step are checked here; `after` sees each guarded step too.
pub async fn journey(
    app: &SqliteWeb,
    a: &mut Agent,
    after: impl FnMut(&Step) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    const SUBMIT: &str = "nova.guarded_submit_form";
    const CLICK: &str = "nova.click_selector";
    let mut judge = Judge { after, log: &|| app.log(), count: &|sql| app.count(sql) };
    let dune = "SELECT COUNT(*) FROM book WHERE title = 'Dune'";

    // Signed out, the browser is sent to the sign-in page, which says why in a red alert.
    let read = a.visit(&app.url("/")).await?;
    anyhow::ensure!(read["url"] == json!(app.url("/login/")), "not sent to sign in: {read}");
    let (r, _) = a.call("nova.guarded_login", json!({"username": "admin", "password": PASSWORD})).await?;
    let said = r["message"].as_str().unwrap_or_default();
    anyhow::ensure!(
        r["actionDispatched"] == json!(false) && said.contains("takes no username: leave it out"),
        "a user name on a password-alone page: refused untyped, with the way out: {r}"
    );
    let login = app.url("/login/");
    judge.sign_in(a, (None, PASSWORD), (login, app.url("/")), (dune, (0, 0))).await?;

    let book = json!({"fields": {"#id_title": "Dune", "#id_year": "1965"}});
    a.visit(&app.url("/book/insert/")).await?;
    let r = a.call(SUBMIT, book.clone()).await?;
    let listed = app.url("/book/content/?page=last");
    judge.step(("submit_valid", SUBMIT, a.calls_of(SUBMIT)), r, "verified_success", listed, (dune, 1))?;
    a.visit(&app.url("/book/insert/")).await?;
    let r = a.call(SUBMIT, book).await?;
    let again = app.url("/book/insert/");
    judge.step(("submit_duplicate", SUBMIT, a.calls_of(SUBMIT)), r, "verified_fail", again, (dune, 1))?;

    // The query page runs SQL typed into its box and shows the result below it, at its own
    // address: a misspelt column marks the box invalid; a statement that runs says how many rows
    // it changed, which Nova does not know for a success message.
    let query = app.url("/book/query/");
    let redated = "SELECT COUNT(*) FROM book WHERE title = 'Dune' AND year = 1966";
    a.visit(&query).await?;
    let sql = |column: &str| json!({"fields": {"#table-sql": format!("UPDATE book SET year = 1966 WHERE {column} = 'Dune'")}});
    let r = a.call(SUBMIT, sql("titel")).await?;
    judge.step(
        ("submit_invalid", SUBMIT, a.calls_of(SUBMIT)),
        r,
        "verified_fail",
        query.clone(),
        (dune, 1),
    )?;
    a.step("nova.perceive", json!({})).await?;
    let r = a.call(SUBMIT, sql("title")).await?;
    anyhow::ensure!(
        r.0["verifyState"] == "likely",
        "a post-back with no success message Nova knows: {}",
        r.0
    );
    judge.step(("submit_valid", SUBMIT, a.calls_of(SUBMIT)), r, "verified_success", query, (redated, 1))?;

    // The row's trash link, named Delete, opens a page that shows the row and asks to confirm
    // with a button. Named like a commit point, it takes a contract: the confirmation page.
    let read = a.visit(&app.url("/book/content/")).await?;
    let trash = ref_of(&read, "link \"Delete\"")?;
    refused_without_contract(&a.call(CLICK, json!({"selector": trash})).await?, "a delete link")?;
    let asks = json!({"actionKind": "custom", "postconditions": {"success": {"all": [
        {"factKey": "page.url", "operator": "contains", "expected": "/book/delete/"}]}}});
    let r = a.call(CLICK, json!({"selector": trash, "transitionContract": asks})).await?;
    let asking = app.url("/book/delete/WzFd/");
    judge.step(("delete_ask", CLICK, a.calls_of(CLICK)), r, "verified_success", asking, (dune, 1))?;
    let read = a.step("nova.perceive", json!({})).await?;
    let confirm = json!({"submitSelector": ref_of(&read, "button \"Delete\"")?});
    let r = a.call(SUBMIT, confirm).await?;
    let content = app.url("/book/content/");
    judge.step(("delete_confirm", SUBMIT, a.calls_of(SUBMIT)), r, "verified_success", content, (dune, 0))
}
