//! Radicale, from PyPI: a CalDAV and CardDAV server whose collection manager is a single page
//! that never reloads (`/.web/`): its sign-in, its forms and its errors are scenes the page's
//! script shows and hides, and what it does it asks the server over WebDAV (`PROPFIND`,
//! `MKCOL`, `DELETE`) behind the scenes. Nothing of the application is ours: the tests only
//! drive its page and read the folder it keeps its collections in.

use std::path::PathBuf;
use std::process::Command;

use serde_json::json;

use super::{Judge, Step};
use crate::BrowserKind;
use crate::agent::Agent;

/// The Radicale release installed.
pub const VERSION: &str = "3.9.0";
/// The account the tests sign in with.
pub const USER: &str = "ada";
/// Its password (a throwaway, in the test's own password file).
pub const PASSWORD: &str = "calendar-key-5150";

/// The interpreter of the virtualenv with Radicale, installed once.
pub fn ensure_installed() -> anyhow::Result<PathBuf> {
    super::pip_install_once("Radicale", "radicale", VERSION)
}

/// A running Radicale with one account and no collection.
pub struct Radicale {
    served: super::Served,
}

impl Radicale {
    /// Installs Radicale if needed and serves it from a fresh folder.
    pub async fn start() -> anyhow::Result<Self> {
        let python = ensure_installed()?;
        let dir = tempfile::tempdir()?;
        let users = dir.path().join("users");
        std::fs::write(&users, format!("{USER}:{PASSWORD}\n"))?;
        let port = super::free_port()?;
        let config = dir.path().join("config");
        std::fs::write(
            &config,
            format!(
                "[server]\nhosts = 127.0.0.1:{port}\n[auth]\ntype = htpasswd\nhtpasswd_filename = {}\n\
                 htpasswd_encryption = plain\n[storage]\nfilesystem_folder = {}\n",
                users.display(),
                dir.path().join("collections").display()
            ),
        )?;
        let mut serve = Command::new(&python);
        serve.args(["-m", "radicale", "--config"]).arg(&config).current_dir(dir.path());
        Ok(Self { served: super::Served::spawn(dir, port, &mut serve, "the Radicale server").await? })
    }

    /// The collection manager's page.
    pub fn home(&self) -> String {
        format!("{}/.web/", self.served.origin)
    }

    /// `collections:NAME` is how many of the account's collections are named `NAME` (their
    /// display name, in each collection folder's properties).
    pub fn count(&self, query: &str) -> anyhow::Result<i64> {
        let Some(("collections", name)) = query.split_once(':') else {
            anyhow::bail!("unknown Radicale query `{query}` (collections:NAME)");
        };
        let root = self.served.path(&format!("collections/collection-root/{USER}"));
        let Ok(folders) = std::fs::read_dir(&root) else { return Ok(0) };
        let mut n = 0;
        for folder in folders {
            let props = folder?.path().join(".Radicale.props");
            let Ok(text) = std::fs::read_to_string(&props) else { continue };
            let props: serde_json::Value = serde_json::from_str(&text)?;
            n += i64::from(props["D:displayname"] == json!(name));
        }
        Ok(n)
    }

    /// What the server printed (for failure messages).
    pub fn log(&self) -> String {
        self.served.log()
    }
}

/// The journey of a compliant agent (who has loaded its bundle): a wrong password (refused, or
/// left unanswered where the browser holds the page's request for its own sign-in dialog),
/// then the right one, on the page's sign-in scene; an address book created from its create
/// scene, and created again at the same address, which the server refuses. `browser` is the
/// browser the agent's tab is in. Every verdict,
/// `urlAfter` and the collections folder after each step are checked here; `after` sees each
/// guarded step too.
pub async fn journey(
    app: &Radicale,
    (a, browser): (&mut Agent, BrowserKind),
    after: impl FnMut(&Step) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    const SUBMIT: &str = "nova.guarded_submit_form";
    let mut judge = Judge { after, log: &|| app.log(), count: &|q| app.count(q) };
    let books = "collections:Contacts";
    let home = app.home();

    // A wrong password: the page hides its form, shows its signed-in bar and a loading screen
    // at once, and asks the server with the password in an HTTP sign-in. Firefox hands the
    // refusal to the page, which shows it in its error line: a failure. Chromium holds the
    // request for its own sign-in dialog (which a headless browser never shows), and the page
    // keeps loading: nothing is proven, and Nova says who asks in that dialog (pageAsks).
    // Never a success.
    a.visit(&home).await?;
    const LOGIN: &str = "nova.guarded_login";
    let r = a.call(LOGIN, json!({"username": USER, "password": "not-the-password"})).await?;
    let said = r.0["message"].as_str().unwrap_or_default().to_owned();
    let verdict = match browser {
        BrowserKind::Firefox => {
            let line = super::failed_observed(&r.0, "form.errorNote");
            anyhow::ensure!(line == "401 Unauthorized", "the page's error line: {}", r.0);
            "verified_fail"
        }
        BrowserKind::Chromium => {
            let asks = r.0["pageAsks"].as_str().unwrap_or_default();
            let who = format!("{} (\"Radicale - Password Required\")", app.served.origin);
            anyhow::ensure!(
                asks.contains(&who) && said.contains(asks),
                "the browser's own sign-in dialog, named: {}",
                r.0
            );
            "indeterminate"
        }
    };
    judge.step(("sign_in_wrong", LOGIN, a.calls_of(LOGIN)), r, verdict, home.clone(), (books, 0))?;
    // A new visit drops the unanswered request; the right password is proven once the server
    // answered (the collections show, the loading screen is gone).
    a.visit(&home).await?;
    judge.sign_in_right(a, json!({"username": USER, "password": PASSWORD}), home.clone(), (books, 0)).await?;

    // Creating saves in the background and shows the list again: no new page, no message, so
    // the agent names what shows once it is saved, a collection in the list (hidden while the
    // create form or the loading screen shows). The same address again is refused by the
    // server, and the form shows why in its error line.
    let listed = json!({"actionKind": "submit_form", "postconditions": {"success": {"any": [
        {"factKey": "dom.count(#collectionsscene article:visible)", "operator": "gte", "expected": 1}]}}});
    let create = json!({"fields": {"#href": "contacts", "#create_displayname": "Contacts"},
                        "transitionContract": listed});
    for (kind, verdict) in [("submit_valid", "verified_success"), ("submit_duplicate", "verified_fail")] {
        let read = a.step("nova.perceive", json!({})).await?;
        // The button to create a collection is a link whose image says "➕".
        a.step("nova.click_selector", json!({"selector": super::ref_of(&read, "link \"➕\"")?})).await?;
        a.step("nova.perceive", json!({})).await?;
        let r = a.call(SUBMIT, create.clone()).await?;
        let said = super::failed_observed(&r.0, "form.errorNote");
        anyhow::ensure!((kind == "submit_duplicate") == said.is_string(), "{kind}: the error line: {}", r.0);
        judge.step((kind, SUBMIT, a.calls_of(SUBMIT)), r, verdict, home.clone(), (books, 1))?;
    }
    Ok(())
}
