//! Trac, from PyPI: the issue tracker and wiki (Python, Jinja2 templates, jQuery), with SQLite,
//! served by its own `tracd` on loopback to anonymous visitors allowed to file and change
//! tickets. Classic server forms with a form token, two submit buttons (Preview before Create),
//! its refusals shown in a warning box of its own, and a check that refuses a change to a
//! ticket someone else changed since the form was shown. Nothing of the application is ours:
//! the tests only drive its pages and read its database.

use std::path::PathBuf;
use std::process::Command;

use serde_json::json;

use super::{Judge, Step, failed_observed, line_of, page_type, ref_of};
use crate::agent::Agent;

/// The Trac release installed.
pub const VERSION: &str = "1.6";

/// Where the environment keeps its database, in the server's directory.
const DB: &str = "env/db/trac.db";

/// The interpreter of the virtualenv with Trac, installed once.
pub fn ensure_installed() -> anyhow::Result<PathBuf> {
    super::pip_install_once("Trac", "Trac", VERSION)
}

/// A running Trac with its own environment and database.
pub struct Trac {
    served: super::Served,
    python: PathBuf,
}

impl Trac {
    /// Installs Trac if needed, makes a fresh environment whose anonymous visitors may file and
    /// change tickets, and serves it.
    pub async fn start() -> anyhow::Result<Self> {
        let python = ensure_installed()?;
        let dir = tempfile::tempdir()?;
        let env = dir.path().join("env");
        let admin = |args: &[&str]| {
            super::run(Command::new(&python).args(["-m", "trac.admin.console"]).arg(&env).args(args))
        };
        admin(&["initenv", "Storefront", "sqlite:db/trac.db"])?;
        admin(&["permission", "add", "anonymous", "TICKET_CREATE", "TICKET_MODIFY"])?;
        let port = super::free_port()?;
        let mut serve = Command::new(&python);
        serve.args(["-m", "trac.web.standalone", "-b", "127.0.0.1", "-p", &port.to_string(), "-s"]).arg(&env);
        let served = super::Served::spawn(dir, port, &mut serve, "Trac's server (tracd)").await?;
        Ok(Self { served, python })
    }

    /// The URL of `path` on the server.
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.served.origin)
    }

    /// One integer from the application's database.
    pub fn count(&self, sql: &str) -> anyhow::Result<i64> {
        self.served.count(DB, sql)
    }

    /// What the server printed (for failure messages).
    pub fn log(&self) -> String {
        self.served.log()
    }

    /// Someone else changes ticket `id` through Trac's own model: raises its priority, with a
    /// comment, as a colleague's edit in another browser would.
    pub fn someone_else_changes(&self, id: i64) -> anyhow::Result<()> {
        const CHANGE: &str = "import sys\n\
            from trac.env import Environment\n\
            from trac.ticket.model import Ticket\n\
            t = Ticket(Environment(sys.argv[1]), int(sys.argv[2]))\n\
            t['priority'] = 'critical'\n\
            t.save_changes('someone', 'It blocks every order.')\n";
        super::run(
            Command::new(&self.python).args(["-c", CHANGE]).arg(self.served.path("env")).arg(id.to_string()),
        )?;
        Ok(())
    }
}

/// The tracker journey of a compliant agent (who has loaded its bundle): a submit naming no
/// button, refused before typing (it would press Preview); a ticket filed without a summary
/// (refused in Trac's warning box), then with one typed into the same form; a comment sent after
/// someone else changed the ticket (refused: the ticket changed since the form was shown), then
/// sent again once the agent read the ticket afresh (the colleague's change kept); the ticket
/// resolved as fixed; in the preferences, which post back to their own address, a value Trac
/// discards (refused in its warning box beside its notice) and a name and address saved (its
/// notice alone). Every verdict, `urlAfter` and the database after each step are checked here;
/// `after` sees each guarded step too.
pub async fn journey(
    app: &Trac,
    a: &mut Agent,
    after: impl FnMut(&Step) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    const SUBMIT: &str = "nova.guarded_submit_form";
    let mut judge = Judge { after, log: &|| app.log(), count: &|sql| app.count(sql) };
    let tickets = "SELECT COUNT(*) FROM ticket";
    let comment = "Seen in Firefox too.";
    let commented =
        format!("SELECT COUNT(*) FROM ticket_change WHERE field = 'comment' AND newvalue = '{comment}'");

    // Every form here is Trac's `#propertyform`, sent by its own submit button.
    let form = |fields: serde_json::Value| {
        json!({"formSelector": "#propertyform", "submitSelector": "#propertyform input[name=submit]",
               "fields": fields})
    };

    // The new-ticket form has Preview before Create: a submit naming no control would press
    // Preview (the button Enter presses), which saves nothing and comes back as a new page. It
    // is refused before anything is typed, and the agent names the button it means.
    a.visit(&app.url("/newticket")).await?;
    let naive = json!({"fields": {"#field-summary": "Only a preview"}});
    match a.call(SUBMIT, naive).await {
        Ok((r, _)) => anyhow::bail!("a submit that would press Preview was not refused: {r}"),
        Err(e) => {
            let e = format!("{e:#}");
            anyhow::ensure!(e.contains("submitSelector") && e.contains("\"Preview\""), "{e}");
        }
    }
    let read = a.step("nova.perceive", json!({})).await?;
    let summary = line_of(&read, r#"textbox "Summary:""#)?;
    anyhow::ensure!(!summary.contains("value="), "the refused submit typed: {summary}");
    anyhow::ensure!(app.count(tickets)? == 0, "a refused submit filed a ticket");
    let r = a.call(SUBMIT, form(json!({"#field-description": "Pressing Pay does nothing."}))).await?;
    // What Trac's warning box says, without its own "close" link.
    let note = failed_observed(&r.0, "form.errorNote");
    let said = note.as_str().unwrap_or_default();
    anyhow::ensure!(said.starts_with("Warning:") && said.contains("summary"), "the refusal's note: {note}");
    judge.step(
        ("create_untitled", SUBMIT, a.calls_of(SUBMIT)),
        r,
        "verified_fail",
        app.url("/newticket#ticket"),
        (tickets, 0),
    )?;
    a.step("nova.perceive", json!({})).await?;
    let r = a.call(SUBMIT, form(json!({"#field-summary": "The checkout button does nothing"}))).await?;
    let filed = "SELECT COUNT(*) FROM ticket WHERE summary = 'The checkout button does nothing' \
                 AND description = 'Pressing Pay does nothing.'";
    // The form's address ends `#ticket`; the browser keeps that fragment through the redirect.
    judge.step(
        ("create_titled", SUBMIT, a.calls_of(SUBMIT)),
        r,
        "verified_success",
        app.url("/ticket/1#ticket"),
        (filed, 1),
    )?;

    // A colleague raises the priority while the agent writes its comment. Trac shows the form
    // back holding what the agent sent, the priority as it was before the colleague's change:
    // sent again, it would undo that change. The agent reads the ticket afresh instead.
    a.step("nova.perceive", json!({})).await?;
    app.someone_else_changes(1)?;
    let send = form(json!({"#comment": comment}));
    let r = a.call(SUBMIT, send.clone()).await?;
    judge.step(
        ("comment_collided", SUBMIT, a.calls_of(SUBMIT)),
        r,
        "verified_fail",
        app.url("/ticket/1#trac-add-comment"),
        (&commented, 0),
    )?;
    a.visit(&app.url("/ticket/1")).await?;
    // A comment box is no chat.
    let read = a.step("nova.perceive", json!({})).await?;
    let kind = page_type(&read);
    anyhow::ensure!(kind != "chat", "a ticket read as a chat: {}", read["okHints"]);
    let r = a.call(SUBMIT, send).await?;
    let kept = format!("{commented} AND ticket IN (SELECT id FROM ticket WHERE priority = 'critical')");
    judge.step(
        ("comment_saved", SUBMIT, a.calls_of(SUBMIT)),
        r,
        "verified_success",
        app.url("/ticket/1#comment:2"),
        (&kept, 1),
    )?;

    // Resolving is a radio among the ticket's actions, in the folded "Modify Ticket" section,
    // then its resolution in a `<select>`.
    let read = a.step("nova.perceive", json!({})).await?;
    a.step("nova.click_selector", json!({"selector": ref_of(&read, r#"link "Modify Ticket""#)?})).await?;
    a.step("nova.click_selector", json!({"selector": "#action_resolve"})).await?;
    let resolve = form(json!({"#action_resolve_resolve_resolution": "fixed"}));
    let r = a.call(SUBMIT, resolve).await?;
    let fixed = "SELECT COUNT(*) FROM ticket WHERE status = 'closed' AND resolution = 'fixed' \
                 AND priority = 'critical'";
    let closed = app.url("/ticket/1#comment:3");
    judge.step(("resolve", SUBMIT, a.calls_of(SUBMIT)), r, "verified_success", closed, (fixed, 1))?;

    // Preferences post back to their own address. A value Trac discards shows its warning beside
    // the notice that the preferences were saved: the agent's value was not kept.
    let prefs = app.url("/prefs/userinterface");
    a.visit(&prefs).await?;
    a.step("nova.perceive", json!({})).await?;
    let timeout = "SELECT COUNT(*) FROM session_attribute WHERE name = 'ui.auto_preview_timeout'";
    let r = a.call(SUBMIT, json!({"fields": {"input[name='ui.auto_preview_timeout']": "soon"}})).await?;
    let said = failed_observed(&r.0, "form.errorNote");
    anyhow::ensure!(
        said.as_str().unwrap_or_default().contains("Discarded invalid value"),
        "the refusal: {said}"
    );
    judge.step(("prefs_refused", SUBMIT, a.calls_of(SUBMIT)), r, "verified_fail", prefs, (timeout, 0))?;
    // Saved, the page comes back at its own address with Trac's notice: verified by the notice,
    // not only likely.
    let prefs = app.url("/prefs");
    a.visit(&prefs).await?;
    a.step("nova.perceive", json!({})).await?;
    let r = a.call(SUBMIT, json!({"fields": {"#name": "Ada Lovelace", "#email": "ada@example.org"}})).await?;
    anyhow::ensure!(r.0["verifyState"] == "verified", "a save Trac confirmed: {}", r.0);
    let saved = "SELECT COUNT(*) FROM session_attribute WHERE (name = 'name' AND value = 'Ada Lovelace') \
                 OR (name = 'email' AND value = 'ada@example.org')";
    judge.step(("prefs_saved", SUBMIT, a.calls_of(SUBMIT)), r, "verified_success", prefs, (saved, 2))
}
