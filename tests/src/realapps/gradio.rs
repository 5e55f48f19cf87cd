//! Gradio, from PyPI: the chat interface most model demos are built with (`gr.ChatInterface`:
//! a Svelte page that sends each message over Gradio's event queue and streams the reply back
//! into its chatbot). The application is the chat interface of Gradio's documentation with a
//! streamed echo for a model, and a dropdown of two models among its `additional_inputs`; every
//! element on the page and the way messages reach the server are Gradio's. What the server
//! receives is its database: the reply function writes each message it gets, with the model
//! chosen, to a file of its own before answering, and fails (`gr.Error`, which Gradio shows as an
//! error toast) on a message asking it to.

use std::path::PathBuf;
use std::process::Command;

use serde_json::json;

use super::{Judge, Step};
use crate::agent::Agent;

/// The Gradio release installed.
pub const VERSION: &str = "6.31.0";
/// The model the chat starts with, and the one the agent switches to.
pub const MODELS: [&str; 2] = ["echo-small", "echo-large"];

/// The application: `python3 app.py PORT RECEIVED`. The reply streams in a few words at a time,
/// as a model's does.
const APP: &str = r#"import sys, time
import gradio as gr

PORT, RECEIVED = int(sys.argv[1]), sys.argv[2]

def reply(message, history, model):
    with open(RECEIVED, "a", encoding="utf-8") as f:
        f.write(model + "\t" + " ".join(message.split()) + "\n")
    if "fail" in message:
        raise gr.Error("The model is overloaded, try again later")
    text = f"[{model}] You said: {message}"
    for end in range(4, len(text), 4):
        time.sleep(0.05)
        yield text[:end]
    yield text

gr.ChatInterface(
    reply,
    title="Echo",
    additional_inputs=[gr.Dropdown(["echo-small", "echo-large"], value="echo-small", label="Model")],
    additional_inputs_accordion=gr.Accordion(label="Settings", open=True),
).launch(server_name="127.0.0.1", server_port=PORT)
"#;

/// The interpreter of the virtualenv with Gradio, installed once.
pub fn ensure_installed() -> anyhow::Result<PathBuf> {
    super::pip_install_once("Gradio", "gradio", VERSION)
}

/// A running chat with its own directory (the application, what it received, its log).
pub struct Gradio {
    served: super::Served,
}

impl Gradio {
    /// Installs Gradio if needed and serves the chat.
    pub async fn start() -> anyhow::Result<Self> {
        let python = ensure_installed()?;
        let dir = tempfile::tempdir()?;
        std::fs::write(dir.path().join("app.py"), APP)?;
        let port = super::free_port()?;
        let mut serve = Command::new(python);
        serve
            .arg("app.py")
            .arg(port.to_string())
            .arg(dir.path().join("received.tsv"))
            .current_dir(dir.path())
            .env("GRADIO_ANALYTICS_ENABLED", "False")
            .env("HF_HUB_OFFLINE", "1");
        Ok(Self { served: super::Served::spawn(dir, port, &mut serve, "the Gradio chat").await? })
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
/// message answered by the first model; the model switched in the dropdown (its list shows a
/// moment after the click); a message answered by that model; a message the model fails on
/// (Gradio's error toast). Every verdict, `urlAfter` and what the server received after each step
/// are checked here; `after` sees each guarded step too.
pub async fn journey(
    app: &Gradio,
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
    // Gradio sends the model with the next message: nothing reaches the server yet.
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
