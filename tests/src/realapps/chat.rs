//! What the chat applications have in common ([`super::gradio`], [`super::streamlit`]): each is
//! a chat built the way that framework's documentation builds one, whose "model" is an echo that
//! streams its reply a few words at a time, with two models to choose from in a picker. Its
//! reply function writes each message it receives, with the model chosen, to `received.tsv`
//! before answering (that file is its database), and fails on a message containing "fail". The
//! page and the way messages reach the server are the framework's own.

use std::process::Command;

use serde_json::json;

use super::{Judge, Served, Step};
use crate::agent::Agent;

/// The model the chat starts with, and the one the agent switches to.
pub const MODELS: [&str; 2] = ["echo-small", "echo-large"];

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
/// message answered by the first model; the model switched in the picker; a message answered
/// by that model; a message the model fails on (the framework's error message). Every verdict,
/// `urlAfter` and what the server received after each step are checked here; `after` sees each
/// guarded step too.
pub async fn journey(
    app: &Chat,
    a: &mut Agent,
    after: impl FnMut(&Step) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    const SEND: &str = "nova.guarded_send_message";
    const SWITCH: &str = "nova.guarded_switch_model";
    let mut judge = Judge { after, log: &|| app.log(), count: &|q| app.count(q) };
    let home = app.home();

    a.visit(&home).await?;
    let hello = "Hello from Nova";
    let r = a.call(SEND, json!({"text": hello})).await?;
    judge.step(
        ("send_reply", SEND, a.calls_of(SEND)),
        r,
        "verified_success",
        home.clone(),
        (&format!("message:{hello}"), 1),
    )?;

    let r = a.call(SWITCH, json!({"option": MODELS[1]})).await?;
    // The model goes with the next message: nothing reaches the server yet.
    let large = format!("model:{}", MODELS[1]);
    judge.step(
        ("switch_model", SWITCH, a.calls_of(SWITCH)),
        r,
        "verified_success",
        home.clone(),
        (&large, 0),
    )?;

    let r = a.call(SEND, json!({"text": "Which model answers?"})).await?;
    judge.step(
        ("send_switched", SEND, a.calls_of(SEND)),
        r,
        "verified_success",
        home.clone(),
        (&large, 1),
    )?;

    // The failure last: Gradio keeps its text box disabled after a reply that failed.
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
