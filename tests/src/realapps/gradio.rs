//! Gradio, from PyPI: the chat interface most model demos are built with (`gr.ChatInterface`:
//! a Svelte page that sends each message over Gradio's event queue and streams the reply back
//! into its chatbot). The application is the chat interface of Gradio's documentation with a
//! streamed echo for a model, and a dropdown of two models among its `additional_inputs`
//! ([`super::chat`]); a failing reply raises `gr.Error`, which Gradio shows as an error toast.

use std::path::PathBuf;
use std::process::Command;

use super::chat::Chat;

/// The Gradio release installed.
pub const VERSION: &str = "6.31.0";

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

/// Installs Gradio if needed and serves the chat.
pub async fn start() -> anyhow::Result<Chat> {
    let python = ensure_installed()?;
    Chat::serve(APP, "the Gradio chat", |port, received| {
        let mut serve = Command::new(python);
        serve
            .arg("app.py")
            .arg(port.to_string())
            .arg(received)
            .env("GRADIO_ANALYTICS_ENABLED", "False")
            .env("HF_HUB_OFFLINE", "1");
        serve
    })
    .await
}
