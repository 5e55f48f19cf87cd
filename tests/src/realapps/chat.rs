//! What the chat applications have in common ([`super::gradio`], [`super::streamlit`],
//! [`super::chainlit`], [`super::nicegui`], [`super::deep_chat`], [`super::shiny`]): each is
//! a chat built the way that framework's documentation builds one, whose "model" is an echo that
//! streams its reply a few words at a time, with two models to choose from in a picker. Its
//! reply function writes each message it receives, with the model chosen, to `received.tsv`
//! before answering (that file is its database), and fails on a message containing "fail". The
//! page and the way messages reach the server are the framework's own.

use std::process::Command;

use serde_json::json;

use super::{Judge, Served, Step, page_type, read_text_until};
use crate::agent::Agent;
use crate::ui::Page;

/// The model the chat starts with, and the one the agent switches to.
pub const MODELS: [&str; 2] = ["echo-small", "echo-large"];

/// A picker kept in a settings dialog ([`super::chainlit`]): the control that opens the dialog
/// and the one that applies the choice.
pub struct Settings {
    /// What the line of the control that opens the dialog holds in `nova.perceive` (the agent
    /// finds it there, as an agent would, and clicks its ref).
    pub open: &'static str,
    /// Applies the choice and closes the dialog.
    pub confirm: &'static str,
}

/// Where a chat keeps its model picker.
#[derive(Clone, Copy)]
pub enum Picker<'a> {
    /// On the page (Gradio's dropdown, Streamlit's selectbox).
    Shown,
    /// In a settings dialog (Chainlit's chat settings).
    InDialog(&'a Settings),
}

/// A running chat application with its own directory (the application, what it received, its
/// log).
pub struct Chat {
    served: Served,
}

impl Chat {
    /// Writes `app` (the application's source) to `app.py` in a directory of its own and runs
    /// there the command `serve` makes of the port to listen on and the path of `received.tsv`.
    pub async fn serve(
        app: &str,
        what: &str,
        serve: impl FnOnce(u16, &std::path::Path) -> Command,
    ) -> anyhow::Result<Self> {
        let dir = tempfile::tempdir()?;
        std::fs::write(dir.path().join("app.py"), app)?;
        let port = super::free_port()?;
        let mut cmd = serve(port, &dir.path().join("received.tsv"));
        cmd.current_dir(dir.path());
        Ok(Self { served: Served::spawn(dir, port, &mut cmd, what).await? })
    }

    /// The chat's page (the whole application).
    pub fn home(&self) -> String {
        format!("{}/", self.served.origin)
    }

    /// What the server received: `message:TEXT` counts the messages `TEXT`, `model:NAME` those
    /// answered with the model `NAME`.
    pub fn count(&self, query: &str) -> anyhow::Result<i64> {
        let received = std::fs::read_to_string(self.served.path("received.tsv")).unwrap_or_default();
        let rows = received.lines().filter_map(|l| l.split_once('\t'));
        let n = match query.split_once(':') {
            Some(("message", text)) => rows.filter(|(_, m)| *m == text).count(),
            Some(("model", name)) => rows.filter(|(model, _)| *model == name).count(),
            _ => anyhow::bail!("unknown chat query `{query}` (message:TEXT or model:NAME)"),
        };
        Ok(i64::try_from(n)?)
    }

    /// What the server printed (for failure messages).
    pub fn log(&self) -> String {
        self.served.log()
    }
}

/// The chat journey of a compliant agent (who has loaded its bundle), on the chat's page: a
/// message answered by the first model; the model switched in the `picker` (in its settings
/// dialog, opened before and confirmed after, when the chat keeps it there); a message answered
/// by that model; a message the model fails on (the framework's error message).
/// Every verdict, `urlAfter` and what the server received after each step are checked here;
/// `after` sees each guarded step too.
pub async fn journey(
    app: &Chat,
    a: &mut Agent,
    picker: Picker<'_>,
    after: impl FnMut(&Step) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    const SEND: &str = "nova.guarded_send_message";
    let mut judge = Judge { after, log: &|| app.log(), count: &|q| app.count(q) };
    let home = app.home();

    a.visit(&home).await?;
    let hello = FIRST;
    let r = a.call(SEND, json!({"text": hello})).await?;
    judge.step(
        ("send_reply", SEND, a.calls_of(SEND)),
        r,
        "verified_success",
        home.clone(),
        (&format!("message:{hello}"), 1),
    )?;

    // The agent reads the reply to the end before it moves on (in Streamlit a switch reruns
    // the application, which cuts a reply still streaming short, as it would a person's).
    let replied = format!("[{}] You said: {hello}", MODELS[0]);
    read_text_until(a, &replied).await?;
    // A conversation shows beside the composer: the page reads as a chat.
    let read = a.step("nova.perceive", json!({})).await?;
    let kind = page_type(&read);
    anyhow::ensure!(kind == "chat", "a conversation shows, yet the page type is {kind}: {}", read["okHints"]);

    switch(a, &mut judge, &home, picker).await?;
    let answering = MODELS[1];

    let again = "Which model answers?";
    let r = a.call(SEND, json!({"text": again})).await?;
    judge.step(
        ("send_switched", SEND, a.calls_of(SEND)),
        r,
        "verified_success",
        home.clone(),
        (&format!("model:{answering}"), 1),
    )?;

    // Once the reply has streamed in, the whole conversation is read (a chat that follows its
    // latest message has scrolled the first away by the journey's end: see
    // [`first_scrolled_away_is_read`]).
    let answer = format!("[{answering}] You said: {again}");
    let text = read_text_until(a, &answer).await?;
    for said in [hello, &replied, &answer] {
        anyhow::ensure!(text.contains(said), "`{said}` is missing from the conversation read: {text:?}");
    }

    // The failure last: Gradio keeps its text box disabled after a reply that failed (and lays
    // its error panel over the conversation).
    let doomed = "Please fail this one";
    let r = a.call(SEND, json!({"text": doomed})).await?;
    judge.step(
        ("send_failed", SEND, a.calls_of(SEND)),
        r,
        "verified_fail",
        home,
        (&format!("message:{doomed}"), 1),
    )
}

/// The journey's switch to the second model in `picker`: the dialog opened first and confirmed
/// after when the chat keeps the picker in one.
async fn switch<F: FnMut(&Step) -> anyhow::Result<()>>(
    a: &mut Agent,
    judge: &mut Judge<'_, F>,
    home: &str,
    picker: Picker<'_>,
) -> anyhow::Result<()> {
    const SWITCH: &str = "nova.guarded_switch_model";
    let settings = match picker {
        Picker::InDialog(s) => Some(s),
        Picker::Shown => None,
    };
    if let Some(s) = settings {
        let page = a.step("nova.perceive", json!({})).await?;
        let opener = super::ref_of(&page, s.open)?;
        a.step("nova.click_selector", json!({"selector": opener})).await?;
    }
    let r = a.call(SWITCH, json!({"option": MODELS[1]})).await?;
    // A picker in a dialog still open: the agent is told the choice waits for its confirmation.
    let told = r.0["message"].as_str().unwrap_or_default().contains("once the dialog is confirmed");
    anyhow::ensure!(told == settings.is_some(), "switching in a dialog: {}", r.0);
    // The model goes with the next message: nothing reaches the server yet.
    let large = format!("model:{}", MODELS[1]);
    judge.step(
        ("switch_model", SWITCH, a.calls_of(SWITCH)),
        r,
        "verified_success",
        home.to_owned(),
        (&large, 0),
    )?;
    if let Some(s) = settings {
        // Confirm is a commit point: the agent says what shows once it took (the dialog gone).
        let closed = json!({
            "actionKind": "custom",
            "postconditions": {"success": {"all": [
                {"factKey": "dom.exists([role=\"dialog\"]:visible)", "operator": "eq", "expected": false}
            ]}},
        });
        let click = json!({"selector": s.confirm, "transitionContract": closed});
        let (r, _) = a.call("nova.click_selector", click).await?;
        let verdict = &r["guardedCommit"]["verificationStatus"];
        anyhow::ensure!(verdict == "verified_success", "confirming the settings: {r}\n{}", (judge.log)());
    }
    Ok(())
}

/// The journey's first message.
pub const FIRST: &str = "Hello from Nova";

/// Where [`FIRST`] lies in `page` (the chat's tab): `true` when the conversation's pane has
/// scrolled it wholly above the pane's top (a chat that follows its latest message), `false`
/// when it is in view or below.
const FIRST_SCROLLED_AWAY: &str = r#"(() => {
  const walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  let n;
  while ((n = walk.nextNode()) && n.data.trim() !== FIRST);
  if (!n) throw new Error('the first message is not on the page');
  const el = n.parentElement;
  for (let pane = el.parentElement; pane; pane = pane.parentElement) {
    if (pane.scrollHeight > pane.clientHeight && /auto|scroll/.test(getComputedStyle(pane).overflowY)) {
      return el.getBoundingClientRect().bottom <= pane.getBoundingClientRect().top && pane.scrollTop > 0;
    }
  }
  return false;
})()"#;

/// Once the journey is over, on a chat whose pane follows its latest message (`page`, the
/// chat's tab), [`FIRST`] has been scrolled out of view; the conversation read now still holds
/// it. Fails when the message is not scrolled away (the check would prove nothing) or the read
/// lost it.
pub async fn first_scrolled_away_is_read(a: &mut Agent, page: &Page<'_>) -> anyhow::Result<()> {
    let away = page.eval(&FIRST_SCROLLED_AWAY.replace("FIRST", &json!(FIRST).to_string())).await?;
    anyhow::ensure!(away == true, "the first message is not scrolled above the conversation's pane: {away}");
    for (tool, args) in [("nova.read_text", json!({})), ("nova.perceive", json!({}))] {
        let read = a.step(tool, args).await?;
        let text = read["text"].as_str().unwrap_or_default();
        anyhow::ensure!(
            text.contains(FIRST),
            "{tool} lost the first message scrolled above the pane: {text:?}"
        );
    }
    Ok(())
}
