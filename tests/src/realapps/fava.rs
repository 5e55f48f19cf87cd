//! Fava, from PyPI: the web interface of Beancount, double-entry bookkeeping kept in a plain
//! text file. Its page is one Svelte application; a transaction is added in a native modal
//! `<dialog>` whose form is saved in the background and confirmed only in a notification that
//! leaves after five seconds ("Stored 1 entries."); an amount the server cannot read is refused
//! in a notification of its own ("Saving failed: ..."). Nothing of the application is ours: the
//! tests only drive its page and read its ledger file.

use std::path::PathBuf;
use std::process::Command;

use serde_json::json;

use super::{Judge, Step};
use crate::agent::Agent;

/// The Fava release installed.
pub const VERSION: &str = "1.30.16";

/// The ledger file Fava serves, in its data directory.
const LEDGER_FILE: &str = "main.beancount";

/// The ledger Fava serves: its title names the path of every view (`/household/...`).
const LEDGER: &str = r#"option "title" "Household"
option "operating_currency" "EUR"

2026-01-01 open Assets:Bank EUR
2026-01-01 open Expenses:Food EUR
2026-01-01 open Equity:Opening EUR

2026-01-02 * "Opening balance"
  Assets:Bank  1000.00 EUR
  Equity:Opening
"#;

/// The interpreter of the virtualenv with Fava, installed once.
pub fn ensure_installed() -> anyhow::Result<PathBuf> {
    super::pip_install_once("Fava", "fava", VERSION)
}

/// A running Fava on a fresh ledger with one transaction.
pub struct Fava {
    served: super::Served,
}

impl Fava {
    /// Installs Fava if needed and serves a fresh ledger on loopback.
    pub async fn start() -> anyhow::Result<Self> {
        let python = ensure_installed()?;
        let dir = tempfile::tempdir()?;
        std::fs::write(dir.path().join(LEDGER_FILE), LEDGER)?;
        let port = super::free_port()?;
        let mut serve = Command::new(&python);
        // Its `fava` script names the interpreter of the directory it was installed in first.
        serve
            .args([
                "-c",
                "from fava.cli import main; main()",
                "--host",
                "127.0.0.1",
                "--port",
                &port.to_string(),
                LEDGER_FILE,
            ])
            .current_dir(dir.path());
        let served = super::Served::spawn(dir, port, &mut serve, "Fava").await?;
        Ok(Self { served })
    }

    /// The URL of `path` on the server.
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.served.origin)
    }

    /// How many lines of the ledger file hold `text`.
    pub fn count(&self, text: &str) -> anyhow::Result<i64> {
        let ledger = std::fs::read_to_string(self.served.path(LEDGER_FILE))?;
        Ok(ledger.lines().filter(|l| l.contains(text)).count() as i64)
    }

    /// What the server printed (for failure messages).
    pub fn log(&self) -> String {
        self.served.log()
    }
}

/// Opens the dialog that adds an entry, from the sidebar's "+" on the journal.
async fn open_add(app: &Fava, a: &mut Agent) -> anyhow::Result<()> {
    super::open_dialog(a, &app.url("/household/journal/"), "link \"+\"", "combobox \"Payee\"").await
}

/// The fields of an entry: its payee and narration (kept by the page only once each is left),
/// and two postings, the second appearing once the first is filled. The selectors are as a
/// compliant agent writes them from a read of the page: the postings' are told apart by their
/// rows (`[role=group]`), which only the dialog has.
fn entry(narration: &str, amount: &str) -> serde_json::Value {
    json!({"fields": {
        "input[placeholder=\"Payee\"]": "Bakery",
        "input[placeholder=\"Narration\"]": narration,
        "dialog [role=group] input[placeholder=\"Account\"]": "Expenses:Food",
        "dialog [role=group] input[placeholder=\"Amount\"]": amount,
        "dialog [role=group] + [role=group] input[placeholder=\"Account\"]": "Assets:Bank",
    }})
}

/// The journey of a compliant agent (who has loaded its bundle), with no contract of its own: an
/// entry added from the dialog (its notification proves it), and one whose amount is written with
/// a decimal comma, refused in a notification. Every verdict, `urlAfter` and the ledger file
/// after each step are checked here; `after` sees each guarded step too.
pub async fn journey(
    app: &Fava,
    a: &mut Agent,
    after: impl FnMut(&Step) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    const SUBMIT: &str = "nova.guarded_submit_form";
    let mut judge = Judge { after, log: &|| app.log(), count: &|text| app.count(text) };

    open_add(app, a).await?;
    let r = a.call(SUBMIT, entry("Bread", "4.50 EUR")).await?;
    judge.step(
        ("submit_valid", SUBMIT, a.calls_of(SUBMIT)),
        r,
        "verified_success",
        app.url("/household/journal/"),
        (r#"* "Bakery" "Bread""#, 1),
    )?;

    open_add(app, a).await?;
    let r = a.call(SUBMIT, entry("Milk", "1,20 EUR")).await?;
    let said = super::failed_observed(&r.0, "form.errorNote");
    anyhow::ensure!(
        said.as_str().is_some_and(|s| s.contains("Invalid amount: 1,20 EUR")),
        "the notification's refusal: {}",
        r.0
    );
    judge.step(
        ("submit_refused", SUBMIT, a.calls_of(SUBMIT)),
        r,
        "verified_fail",
        app.url("/household/journal/#add-transaction"),
        ("\"Milk\"", 0),
    )
}
