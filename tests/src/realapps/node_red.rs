//! Node-RED, from npm: a flow editor whose page is one jQuery application. A flow is changed in
//! the editor and takes effect only once deployed; the deploy goes to the server in the
//! background and is confirmed only in a notification ("Successfully deployed"). Nothing of the
//! application is ours: the tests only drive its page and read its flows file, which is its
//! database.

use std::path::PathBuf;
use std::process::Command;

use serde_json::{Value, json};

use super::{
    Judge, Step, act_uncovered, failed_observed, line_of, press, read_first_screen, read_until, ref_of,
    refused_without_contract,
};
use crate::agent::Agent;

/// The Node-RED release installed (the 4.1 line runs on the Node.js 20 Debian ships; 5.x needs
/// 22.9 or later).
pub const VERSION: &str = "4.1.15";

/// Node-RED and its editor, installed once with npm.
pub fn ensure_installed() -> anyhow::Result<PathBuf> {
    super::npm_install_once("Node-RED", "node-red", VERSION, "red.js")
}

/// A running Node-RED with its own user directory (settings, flows file).
pub struct NodeRed {
    served: super::Served,
}

impl NodeRed {
    /// Installs Node-RED if needed and starts it on loopback with a fresh user directory, its
    /// settings as a new installation writes them.
    pub async fn start() -> anyhow::Result<Self> {
        let red = ensure_installed()?;
        let dir = tempfile::tempdir()?;
        let port = super::free_port()?;
        let mut serve = Command::new("node");
        serve
            .arg(&red)
            .arg("--userDir")
            .arg(dir.path())
            .args(["--port", &port.to_string(), "-D", "uiHost=127.0.0.1"])
            .current_dir(dir.path());
        let served = super::Served::spawn(dir, port, &mut serve, "Node-RED").await?;
        served.until_ok("/flows", "Node-RED").await?;
        Ok(Self { served })
    }

    /// The editor (the whole application).
    pub fn home(&self) -> String {
        format!("{}/", self.served.origin)
    }

    /// How many nodes of the deployed flows (its flows file) are named `name`.
    pub fn count(&self, name: &str) -> anyhow::Result<i64> {
        let path = self.served.path("flows.json");
        let flows: Value = match std::fs::read_to_string(&path) {
            Ok(text) => serde_json::from_str(&text)?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => json!([]),
            Err(e) => return Err(e.into()),
        };
        let nodes = flows.as_array().map(Vec::as_slice).unwrap_or_default();
        Ok(nodes.iter().filter(|n| n["name"] == name).count() as i64)
    }

    /// What the server printed (for failure messages).
    pub fn log(&self) -> String {
        self.served.log()
    }
}

/// A flow of its own tab holding one inject node named `name`, as a person copies it from
/// Node-RED's flow library to paste into the import dialog.
fn flow(name: &str) -> String {
    let tab = format!("tab-{name}");
    json!([
        {"id": tab, "type": "tab", "label": name},
        {"id": format!("inject-{name}"), "type": "inject", "z": tab, "name": name,
         "repeat": "", "once": false, "topic": "", "payload": "", "payloadType": "date",
         "x": 140, "y": 80, "wires": [[]]}
    ])
    .to_string()
}

/// A colleague's deploy through Node-RED's Admin API (`GET` then `POST /flows`): a comment
/// named `name` added to the first flow. Run by Node.js, which Node-RED needs anyway.
const COLLEAGUE: &str = r#"
const [origin, name] = process.argv.slice(1);
const v2 = { "Node-RED-API-Version": "v2" };
(async () => {
  const now = await (await fetch(`${origin}/flows`, { headers: v2 })).json();
  const tab = now.flows.find((n) => n.type === "tab");
  now.flows.push({ id: `colleague-${name}`, type: "comment", z: tab.id, name, info: "", x: 300, y: 200, wires: [] });
  const headers = { ...v2, "Content-Type": "application/json", "Node-RED-Deployment-Type": "full" };
  const sent = await fetch(`${origin}/flows`, { method: "POST", headers, body: JSON.stringify(now) });
  if (!sent.ok) throw new Error(`POST /flows: ${sent.status} ${await sent.text()}`);
})().catch((e) => { console.error(e); process.exit(1); });
"#;

impl NodeRed {
    /// A colleague deploys a change of their own (a comment named `name`) while the agent's
    /// editor still holds the flows it loaded.
    pub fn colleague_deploys(&self, name: &str) -> anyhow::Result<()> {
        super::run(Command::new("node").args(["-e", COLLEAGUE, &self.served.origin, name]))?;
        Ok(())
    }
}

/// Pastes `flow` into the import dialog, opened from the editor's menu, and imports it (into
/// a flow of its own: the editor changes, the server does not). The Import button is enabled
/// once the page has checked what was typed, a moment after the key is released.
async fn import(a: &mut Agent, flow: &str) -> anyhow::Result<()> {
    press(a, "id=\"red-ui-header-button-sidemenu\"").await?;
    press(a, "link \"Import").await?;
    let field = "id=\"red-ui-clipboard-dialog-import-text\"";
    let read = read_until(a, "the import dialog", |r| line_of(r, field).is_ok()).await?;
    a.step("nova.type_selector", json!({"selector": ref_of(&read, field)?, "text": flow})).await?;
    let enabled = |r: &Value| line_of(r, "button \"Import\"").is_ok_and(|l| !l.contains(" disabled"));
    let read = read_until(a, "an enabled Import button", enabled).await?;
    a.step("nova.click_selector", json!({"selector": ref_of(&read, "button \"Import\"")?})).await?;
    Ok(())
}

/// The journey of a compliant agent (who has loaded its bundle), with no contract of its own,
/// on a new installation: it answers the editor's first questions (update notifications: no;
/// the tour: closed), imports a flow and deploys it, refused without a contract and then sent
/// with `nova.guarded_submit_form` naming the Deploy button (its notification proves it); a
/// colleague deploys meanwhile, so its next deploy is refused (the server runs newer flows)
/// and, once the agent merges, sent again; last it renames its node in the node's editor,
/// opened with a double-click on the node, and deploys the new name. Every verdict, `urlAfter`
/// and the flows file after each step are checked here; `after` sees each guarded step too.
pub async fn journey(
    app: &NodeRed,
    a: &mut Agent,
    after: impl FnMut(&Step) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    const SUBMIT: &str = "nova.guarded_submit_form";
    let mut judge = Judge { after, log: &|| app.log(), count: &|name| app.count(name) };

    a.visit(&app.home()).await?;
    let question = "button \"No, do not enable notifications\"";
    read_first_screen(a, "the editor's first question", |r| line_of(r, question).is_ok()).await?;
    press(a, question).await?;
    let tour = |r: &Value| {
        r["text"].as_str().is_some_and(|t| t.contains("Welcome to Node-RED"))
            && line_of(r, "button icon=\"times\"").is_ok()
    };
    read_until(a, "the tour", tour).await?;
    press(a, "button icon=\"times\"").await?;
    // The editor's address names the flow shown (`#flow/ID`); deploying keeps it.
    let read = a.step("nova.perceive", json!({})).await?;
    let at = read["url"].as_str().unwrap_or_default().to_owned();
    let deploy = ref_of(&read, "link \"Deploy\"")?;

    import(a, &flow("Morning")).await?;
    let click = a.call("nova.click_selector", json!({"selector": deploy})).await?;
    refused_without_contract(&click, "a deploy")?;
    anyhow::ensure!(app.count("Morning")? == 0, "a deploy refused without a contract reached the server");
    let send = json!({"fields": {}, "submitSelector": deploy});
    let r = act_uncovered(a, SUBMIT, send.clone()).await?;
    judge.step(
        ("submit_valid", SUBMIT, a.calls_of(SUBMIT)),
        r,
        "verified_success",
        at.clone(),
        ("Morning", 1),
    )?;

    app.colleague_deploys("Colleague")?;
    import(a, &flow("Evening")).await?;
    let r = act_uncovered(a, SUBMIT, send.clone()).await?;
    let said = failed_observed(&r.0, "form.errorNote");
    anyhow::ensure!(
        said.as_str().is_some_and(|s| s.contains("more recent set of flows")),
        "the deploy's refusal: {}",
        r.0
    );
    judge.step(
        ("submit_refused", SUBMIT, a.calls_of(SUBMIT)),
        r,
        "verified_fail",
        at.clone(),
        ("Evening", 0),
    )?;

    // The agent takes the colleague's change into its own, as Node-RED offers, and deploys both.
    press(a, "button \"Merge\"").await?;
    let r = act_uncovered(a, SUBMIT, send.clone()).await?;
    judge.step(
        ("submit_merged", SUBMIT, a.calls_of(SUBMIT)),
        r,
        "verified_success",
        at.clone(),
        ("Evening", 1),
    )?;
    for kept in ["Morning", "Colleague"] {
        anyhow::ensure!(app.count(kept)? == 1, "after the merged deploy, `{kept}` is not in the flows once");
    }

    // The agent renames its node in the node's own editor, which opens as a person opens it: a
    // double-click on the node, in its flow's tab (the node's id is the one the agent's flow
    // gave it; the node itself is drawn in SVG and has no line of its own).
    press(a, "link \"Evening\"").await?;
    let read = a.step("nova.perceive", json!({})).await?;
    let at = read["url"].as_str().unwrap_or_default().to_owned();
    anyhow::ensure!(at.ends_with("#flow/tab-Evening"), "the Evening flow's address: {at}");
    let node = "[id=\"inject-Evening\"] > rect.red-ui-flow-node";
    a.step("nova.click_selector", json!({"selector": node, "doubleClick": true})).await?;
    let name = "textbox \"Name\" value=\"Evening\"";
    let read = read_until(a, "the node's editor", |r| line_of(r, name).is_ok()).await?;
    a.step("nova.type_selector", json!({"selector": ref_of(&read, name)?, "text": "Night"})).await?;
    press(a, "button \"Done\"").await?;
    let r = act_uncovered(a, SUBMIT, send).await?;
    judge.step(("submit_renamed", SUBMIT, a.calls_of(SUBMIT)), r, "verified_success", at, ("Night", 1))?;
    anyhow::ensure!(app.count("Evening")? == 0, "the renamed node still has its old name in the flows");
    // The canvas draws the node in SVG, its name a label of its own: what a person reads there.
    let canvas = json!({"selector": "#red-ui-workspace-chart"});
    let drawn = a.step("nova.read_text", canvas).await?;
    let text = drawn["text"].as_str().unwrap_or_default();
    anyhow::ensure!(text.lines().any(|l| l.trim() == "Night"), "the canvas reads {text:?}");
    Ok(())
}
