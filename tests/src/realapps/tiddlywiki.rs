//! TiddlyWiki, from npm: a wiki that is one single-page application, served by its own Node.js
//! server on loopback, which keeps each entry (a "tiddler") as a file in the wiki's `tiddlers/`
//! folder. No forms and no page loads: the editor slides into the page, its body is a textarea
//! inside an iframe of its own, saves and deletions go to the server in the background, and a
//! deletion is confirmed in the browser's own dialog. Nothing of the application is ours: the
//! tests only drive its page and read its folder, which is its database.

use std::path::PathBuf;
use std::process::Command;

use serde_json::{Value, json};

use super::{Judge, Step, refused_without_contract, run, with_person};
use crate::agent::Agent;

/// The TiddlyWiki release installed.
pub const VERSION: &str = "5.4.1";

/// TiddlyWiki (no dependencies of its own), installed once with npm.
pub fn ensure_installed() -> anyhow::Result<PathBuf> {
    super::npm_install_once("TiddlyWiki", "tiddlywiki", VERSION, "tiddlywiki.js")
}

/// A running TiddlyWiki with its own wiki folder (the "server" edition: it saves to the server).
pub struct TiddlyWiki {
    served: super::Served,
}

impl TiddlyWiki {
    /// Installs TiddlyWiki if needed, makes a wiki and serves it.
    pub async fn start() -> anyhow::Result<Self> {
        let tw = ensure_installed()?;
        let dir = tempfile::tempdir()?;
        run(Command::new("node").arg(&tw).arg("wiki").args(["--init", "server"]).current_dir(dir.path()))?;
        let port = super::free_port()?;
        let mut serve = Command::new("node");
        serve
            .arg(&tw)
            .arg("wiki")
            .args(["--listen", &format!("port={port}"), "host=127.0.0.1"])
            .current_dir(dir.path());
        Ok(Self { served: super::Served::spawn(dir, port, &mut serve, "the TiddlyWiki server").await? })
    }

    /// The wiki's page (the whole application).
    pub fn home(&self) -> String {
        format!("{}/", self.served.origin)
    }

    /// `present:TITLE` is 1 while the wiki's folder holds the tiddler `TITLE`, else 0.
    pub fn count(&self, query: &str) -> anyhow::Result<i64> {
        match query.split_once(':') {
            Some(("present", title)) => {
                Ok(i64::from(self.served.path(&format!("wiki/tiddlers/{title}.tid")).is_file()))
            }
            _ => anyhow::bail!("unknown wiki query `{query}` (present:TITLE)"),
        }
    }

    /// What the server printed (for failure messages).
    pub fn log(&self) -> String {
        self.served.log()
    }
}

/// A contract whose success is `facts`, all of them, and the wiki's page saying it has nothing
/// left to send to the server (TiddlyWiki marks `<body>` with `tc-dirty` until then).
fn synced(facts: &[(&str, bool)]) -> Value {
    let mut all: Vec<Value> = facts
        .iter()
        .map(|(selector, there)| {
            json!({"factKey": format!("dom.exists({selector})"), "operator": "eq", "expected": there})
        })
        .collect();
    all.push(json!({"factKey": "dom.exists(body.tc-dirty)", "operator": "eq", "expected": false}));
    json!({"actionKind": "custom", "postconditions": {"success": {"all": all}}})
}

/// The wiki journey of a compliant agent (who has loaded its bundle), on the wiki's page already
/// shown: a new tiddler written in the editor that slides in and saved, refused without a
/// contract and, with one, verified once the server has it; then deleted, the person confirming
/// in the browser's own dialog (`person` accepts a native dialog when one shows). Every verdict,
/// `urlAfter` and the wiki's folder after each step are checked here; `after` sees each guarded
/// step too.
pub async fn journey(
    app: &TiddlyWiki,
    a: &mut Agent,
    after: impl FnMut(&Step) -> anyhow::Result<()>,
    person: impl AsyncFn() -> bool,
) -> anyhow::Result<()> {
    const CLICK: &str = "nova.click_selector";
    let mut judge = Judge { after, log: &|| app.log(), count: &|q| app.count(q) };
    let editors = "present:Editors";

    // At once after each click: the editor is still sliding in (Nova waits for it to settle).
    a.step(CLICK, json!({"selector": "button[aria-label=\"new tiddler\"]"})).await?;
    a.step(
        "nova.type_selector",
        json!({"selector": "input.tc-titlebar.tc-edit-texteditor", "text": "Editors"}),
    )
    .await?;
    let body = "div.tc-tiddler-edit-frame iframe >>> textarea";
    a.step("nova.type_selector", json!({"selector": body, "text": "Who edits what."})).await?;

    let confirm = "button[title=\"Confirm changes to this tiddler\"]";
    refused_without_contract(&a.call(CLICK, json!({"selector": confirm})).await?, "a save")?;
    let saved = synced(&[(".tc-tiddler-view-frame[data-tiddler-title=Editors]", true)]);
    let r = a.call(CLICK, json!({"selector": confirm, "transitionContract": saved})).await?;
    judge.step(
        ("submit_valid", CLICK, a.calls_of(CLICK)),
        r,
        "verified_success",
        app.home(),
        (editors, 1),
    )?;

    let edit = ".tc-tiddler-view-frame[data-tiddler-title=Editors] button[title=\"Edit this tiddler\"]";
    a.step(CLICK, json!({"selector": edit})).await?;
    // TiddlyWiki asks "Do you wish to delete the tiddler?" with the browser's own dialog, which
    // only the person can answer: `person` does, as soon as it shows.
    let delete = json!({"selector": "button[title=\"Delete this tiddler\"]",
        "transitionContract": synced(&[(".tc-tiddler-edit-frame", false)])});
    let r = with_person(a.call(CLICK, delete), &person).await?;
    judge.step(("delete_confirm", CLICK, a.calls_of(CLICK)), r, "verified_success", app.home(), (editors, 0))
}
