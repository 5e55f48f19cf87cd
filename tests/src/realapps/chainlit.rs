//! Chainlit, from PyPI: a framework for chat assistants (a React page talking to its server
//! over Socket.IO; each message is a "step"). The application is a chat in the manner of
//! Chainlit's documentation: `@cl.on_message` answers with a streamed echo for a model
//! (`cl.Message.stream_token`), the model is chosen among the chat settings (`cl.ChatSettings`
//! with a `Select`, shown in a settings dialog opened from the composer and applied with its
//! Confirm button: [`SETTINGS`]), and a failing reply is a `cl.ErrorMessage` ([`super::chat`]).

use std::path::PathBuf;
use std::process::Command;

use super::chat::{Chat, Settings};

/// The Chainlit release installed.
pub const VERSION: &str = "2.12.0";

/// Where Chainlit keeps the model picker: the composer's settings button opens the dialog,
/// its Confirm button applies the choice. The settings button is an icon with no name: its id
/// tells it apart (`e9 button id="chat-settings-open-modal"`).
pub const SETTINGS: Settings =
    Settings { open: r#"button id="chat-settings-open-modal""#, confirm: "#confirm" };

/// The application: `python3 -m chainlit run app.py`, with `RECEIVED` in its environment.
const APP: &str = r#"import asyncio, os
import chainlit as cl
from chainlit.input_widget import Select

RECEIVED = os.environ["RECEIVED"]

@cl.on_chat_start
async def start():
    settings = await cl.ChatSettings([
        Select(id="model", label="Model", values=["echo-small", "echo-large"], initial_index=0),
    ]).send()
    cl.user_session.set("model", settings["model"])

@cl.on_settings_update
async def update(settings):
    cl.user_session.set("model", settings["model"])

@cl.on_message
async def on_message(message: cl.Message):
    model = cl.user_session.get("model")
    with open(RECEIVED, "a", encoding="utf-8") as f:
        f.write(model + "\t" + " ".join(message.content.split()) + "\n")
    if "fail" in message.content:
        await cl.ErrorMessage(content="The model is overloaded, try again later").send()
        return
    text = f"[{model}] You said: {message.content}"
    reply = cl.Message(content="")
    for i in range(0, len(text), 4):
        await asyncio.sleep(0.05)
        await reply.stream_token(text[i:i + 4])
    await reply.send()
"#;

/// The interpreter of the virtualenv with Chainlit, installed once.
pub fn ensure_installed() -> anyhow::Result<PathBuf> {
    super::pip_install_once("Chainlit", "chainlit", VERSION)
}

/// Installs Chainlit if needed and serves the chat.
pub async fn start() -> anyhow::Result<Chat> {
    let python = ensure_installed()?;
    Chat::serve(APP, "the Chainlit chat", |port, received| {
        let mut serve = Command::new(python);
        serve
            .args(["-m", "chainlit", "run", "app.py", "--headless", "--host", "127.0.0.1", "--port"])
            .arg(port.to_string())
            .env("RECEIVED", received);
        serve
    })
    .await
}
