//! JupyterLab, from PyPI: the notebook editor, one Lumino application over a Jupyter server
//! and a Python kernel. A notebook is opened from its file browser with a double-click, a cell
//! is typed into a CodeMirror editor and run by the kernel, and the notebook is saved to its
//! `.ipynb` file. Nothing of the application is ours: the tests only drive its page and read
//! the notebook file, which is its database.

use std::path::PathBuf;
use std::process::Command;

use anyhow::Context as _;
use serde_json::{Value, json};

use super::{Judge, Step, line_of, press, read_first_screen, read_until, ref_of};
use crate::agent::Agent;

/// The JupyterLab release installed (it brings the Jupyter server and the Python kernel).
pub const VERSION: &str = "4.6.6";

/// The notebook the journey works on, in the server's root directory.
pub const NOTEBOOK: &str = "analysis.ipynb";

/// The interpreter of the virtualenv with JupyterLab, installed once.
pub fn ensure_installed() -> anyhow::Result<PathBuf> {
    super::pip_install_once("JupyterLab", "jupyterlab", VERSION)
}

/// A running JupyterLab serving a fresh directory holding one notebook with one empty cell.
pub struct JupyterLab {
    served: super::Served,
}

impl JupyterLab {
    /// Installs JupyterLab if needed and starts it on loopback, without a token (the page is
    /// opened as the person who started it), its settings and workspaces in its own directory.
    pub async fn start() -> anyhow::Result<Self> {
        let python = ensure_installed()?;
        let dir = tempfile::tempdir()?;
        let root = dir.path().join("work");
        std::fs::create_dir_all(&root)?;
        let notebook = json!({
            "cells": [{"cell_type": "code", "execution_count": null, "id": "first", "metadata": {},
                       "outputs": [], "source": []}],
            "metadata": {"kernelspec": {"display_name": "Python 3 (ipykernel)", "language": "python",
                                        "name": "python3"}},
            "nbformat": 4, "nbformat_minor": 5
        });
        std::fs::write(root.join(NOTEBOOK), serde_json::to_string_pretty(&notebook)?)?;
        let port = super::free_port()?;
        let mut serve = Command::new(&python);
        serve
            .args(["-m", "jupyterlab", "--no-browser", "--ip=127.0.0.1"])
            .arg(format!("--port={port}"))
            .arg("--IdentityProvider.token=")
            // It refuses to run as root unless told (CI machines run the tests as root).
            .arg("--allow-root")
            .arg(format!("--ServerApp.root_dir={}", root.display()))
            .env("JUPYTER_CONFIG_DIR", dir.path().join("config"))
            .env("JUPYTER_DATA_DIR", dir.path().join("data"))
            .env("JUPYTER_RUNTIME_DIR", dir.path().join("runtime"))
            .env("JUPYTERLAB_SETTINGS_DIR", dir.path().join("settings"))
            .env("JUPYTERLAB_WORKSPACES_DIR", dir.path().join("workspaces"))
            .current_dir(&root);
        let served = super::Served::spawn(dir, port, &mut serve, "JupyterLab").await?;
        served.until_ok("/api/status", "JupyterLab").await?;
        Ok(Self { served })
    }

    /// The editor (the whole application).
    pub fn home(&self) -> String {
        format!("{}/lab", self.served.origin)
    }

    /// The notebook as saved: its file's JSON.
    fn notebook(&self) -> anyhow::Result<Value> {
        let text = std::fs::read_to_string(self.served.path(&format!("work/{NOTEBOOK}")))?;
        Ok(serde_json::from_str(&text)?)
    }

    /// How many cells of the notebook as saved hold `text`, in their code or their output.
    pub fn count(&self, text: &str) -> anyhow::Result<i64> {
        let notebook = self.notebook()?;
        let cells = notebook["cells"].as_array().map(Vec::as_slice).unwrap_or_default();
        let joined = |v: &Value| match v {
            Value::Array(lines) => lines.iter().filter_map(Value::as_str).collect::<String>(),
            other => other.as_str().unwrap_or_default().to_owned(),
        };
        let holds = |c: &Value| {
            joined(&c["source"]).contains(text)
                || c["outputs"].as_array().into_iter().flatten().any(|o| {
                    joined(&o["text"]).contains(text)
                        || o["evalue"].as_str().is_some_and(|e| e.contains(text))
                })
        };
        Ok(cells.iter().filter(|c| holds(c)).count() as i64)
    }

    /// A colleague adds a note of theirs (a Markdown cell saying `note`) at the top of the
    /// notebook's file on disk, so the editor's copy is older than the file.
    pub async fn colleague_adds(&self, note: &str) -> anyhow::Result<()> {
        let path = self.served.path(&format!("work/{NOTEBOOK}"));
        let mut notebook = self.notebook()?;
        let cell = json!({"cell_type": "markdown", "id": "colleague", "metadata": {}, "source": [note]});
        notebook["cells"].as_array_mut().context("a notebook without cells")?.insert(0, cell);
        // The server tells a change by the file's time: a second later is later on any disk.
        tokio::time::sleep(std::time::Duration::from_secs(1)).await;
        std::fs::write(&path, serde_json::to_string_pretty(&notebook)?)?;
        Ok(())
    }

    /// What the server printed (for failure messages).
    pub fn log(&self) -> String {
        self.served.log()
    }
}

/// The run button of the notebook's toolbar.
const RUN: &str = "button \"Run this cell and advance (Shift+Enter)\"";
/// The save button of the notebook's toolbar.
const SAVE: &str = "button \"Save and create checkpoint (Ctrl+S)\"";

/// A contract the agent writes for running the notebook's `cell`th cell (from 0, as JupyterLab
/// numbers them): its output shows `printed`, and no error output (a traceback) shows.
fn run_contract(cell: usize, printed: &str) -> Value {
    let output = format!(".jp-Cell[data-windowed-list-index=\"{cell}\"] .jp-OutputArea-output");
    json!({
        "actionKind": "custom",
        "postconditions": {
            "success": {"all": [{"factKey": format!("dom.text({output})"),
                                 "operator": "contains", "expected": printed}]},
            "forbidden": {"any": [{"factKey": "dom.exists([data-mime-type=\"application/vnd.jupyter.stderr\"])",
                                   "operator": "eq", "expected": true}]}
        },
        "stabilityWindowMs": 15000,
        "stabilityMs": 300
    })
}

/// A contract the agent writes for saving: the notebook's tab no longer marks unsaved changes.
fn save_contract() -> Value {
    json!({
        "actionKind": "custom",
        "postconditions": {"success": {"all": [
            {"factKey": "dom.exists(.lm-TabBar-tab.jp-mod-dirty)", "operator": "eq", "expected": false}]}},
        "stabilityWindowMs": 5000,
        "stabilityMs": 300
    })
}

/// The empty cell editor the notebook shows last (a new cell's text box has no name yet).
fn empty_cell(read: &Value) -> anyhow::Result<String> {
    let lines = read["elements"].as_array().map(Vec::as_slice).unwrap_or_default();
    let line = lines
        .iter()
        .filter_map(Value::as_str)
        .rfind(|l| l.ends_with(" textbox") && l.split(' ').count() == 2);
    line.and_then(|l| l.split(' ').next()).map(str::to_owned).context("no empty cell in the notebook")
}

/// Types `code` into the notebook's empty cell, its `cell`th, and runs it with a contract whose
/// success is `printed` in the cell's output.
async fn run_cell(a: &mut Agent, cell: usize, code: &str, printed: &str) -> anyhow::Result<(Value, bool)> {
    let read = read_until(a, "an empty cell", |r| empty_cell(r).is_ok() && line_of(r, RUN).is_ok()).await?;
    a.step("nova.type_selector", json!({"selector": empty_cell(&read)?, "text": code})).await?;
    let run = ref_of(&read, RUN)?;
    // The status bar shows the kernel once a cell is being edited. It may still be starting;
    // on a busy machine JupyterLab may first ask which kernel to start (it had not yet heard
    // which there are), and the agent takes the one offered.
    const IDLE: &str = "Python 3 (ipykernel) | Idle";
    const SELECT: &str = "button \"Select Kernel\"";
    let ready = |r: &Value| line_of(r, IDLE).is_ok() || line_of(r, SELECT).is_ok();
    let read = read_first_screen(a, "the kernel ready, or a question about it", ready).await?;
    if line_of(&read, IDLE).is_err() {
        press(a, SELECT).await?;
        read_first_screen(a, "the kernel ready", |r| line_of(r, IDLE).is_ok()).await?;
    }
    a.call("nova.click_selector", json!({"selector": run, "transitionContract": run_contract(cell, printed)}))
        .await
}

/// The journey of a compliant agent writing its own contracts, on a new installation: it answers
/// JupyterLab's question about news (no), opens the notebook from the file browser with a
/// double-click, types a cell, waits for its kernel (taking the one offered if asked which) and
/// runs it (verified_success on its output), types one that raises and runs it (verified_fail
/// on the traceback), and saves: a colleague added a note to
/// the file on disk meanwhile, so JupyterLab asks whether to overwrite it and saves nothing;
/// Nova proves nothing and says what the page asks (`pageAsks`); the agent answers Overwrite
/// (the colleague's note is lost, as the dialog says), verified by the tab's saved mark. Judged
/// on the notebook's file after each step.
pub async fn journey(
    app: &JupyterLab,
    a: &mut Agent,
    after: impl FnMut(&Step) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    const CLICK: &str = "nova.click_selector";
    let mut judge = Judge { after, log: &|| app.log(), count: &|text| app.count(text) };

    a.visit(&app.home()).await?;
    let news = "button \"No\"";
    read_first_screen(a, "the question about news", |r| line_of(r, news).is_ok()).await?;
    press(a, news).await?;
    let file = format!("button \"{NOTEBOOK}\"");
    let read = read_until(a, "the notebook in the file browser", |r| line_of(r, &file).is_ok()).await?;
    a.step(CLICK, json!({"selector": ref_of(&read, &file)?, "doubleClick": true})).await?;
    let at = format!("{}/tree/{NOTEBOOK}", app.home());

    let r = run_cell(a, 0, "total = sum(range(1, 11))\nprint(f\"total={total}\")", "total=55").await?;
    judge.step(
        ("run_printed", CLICK, a.calls_of(CLICK)),
        r,
        "verified_success",
        at.clone(),
        ("total=55", 0),
    )?;
    // The cell reads as typed, though CodeMirror colours each token in an element of its own.
    let text = a.step("nova.read_text", json!({})).await?;
    let code = "total = sum(range(1, 11))";
    anyhow::ensure!(
        text["text"].as_str().is_some_and(|t| t.contains(code)),
        "the cell does not read {code}: {text}"
    );
    let r = run_cell(a, 1, "ratio = 1 / 0", "ratio").await?;
    judge.step(
        ("run_raised", CLICK, a.calls_of(CLICK)),
        r,
        "verified_fail",
        at.clone(),
        ("division by zero", 0),
    )?;

    const NOTE: &str = "A colleague's note";
    app.colleague_adds(NOTE).await?;
    let read = a.step("nova.perceive", json!({})).await?;
    let save = json!({"selector": ref_of(&read, SAVE)?, "transitionContract": save_contract()});
    let r = a.call(CLICK, save).await?;
    let asks = r.0["pageAsks"].as_str().unwrap_or_default().to_owned();
    anyhow::ensure!(asks.contains("has changed on disk"), "the save's dialog is not said: {}", r.0);
    judge.step(("save_asked", CLICK, a.calls_of(CLICK)), r, "indeterminate", at.clone(), (NOTE, 1))?;
    anyhow::ensure!(app.count("total=55")? == 0, "the save that asked first wrote the notebook");

    let read =
        read_until(a, "the dialog's Overwrite", |r| line_of(r, "button \"Overwrite\"").is_ok()).await?;
    let overwrite =
        json!({"selector": ref_of(&read, "button \"Overwrite\"")?, "transitionContract": save_contract()});
    let r = a.call(CLICK, overwrite).await?;
    judge.step(("save_overwritten", CLICK, a.calls_of(CLICK)), r, "verified_success", at, ("total=55", 1))?;
    anyhow::ensure!(
        app.count("division by zero")? == 1,
        "the saved notebook lacks the raised cell's traceback"
    );
    anyhow::ensure!(app.count(NOTE)? == 0, "overwritten, the file still holds the colleague's note");
    Ok(())
}
