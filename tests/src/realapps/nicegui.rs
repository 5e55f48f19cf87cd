//! NiceGUI, from PyPI: Python user interfaces drawn in the browser with Vue and Quasar, kept in
//! step with the server over Socket.IO. The application is a chat in the manner of NiceGUI's
//! chat examples: `ui.chat_message` (Quasar's QChatMessage) for each message, the reply
//! streamed into its label a few characters at a time, the model chosen in a `ui.select`, a
//! failing reply told with
//! `ui.notify(type="negative")` (a Quasar notification, `role="alert"`) ([`super::chat`]).
//!
//! Its model picker is `ui.select`, Quasar's QSelect: what takes the focus is a transparent
//! one-pixel input inside the field's label (Nova lists it and presses where the label shows),
//! and the list opens only once the field's box has announced the focus, which a page in a
//! window without the focus (a person's background window, a headless browser) does not do by
//! itself (Nova's press gives the focus to the box around what it presses, as the browser does).

use std::path::PathBuf;
use std::process::Command;

use super::chat::Chat;

/// The NiceGUI release installed.
pub const VERSION: &str = "3.18.0";

/// The application: `python3 app.py PORT RECEIVED`.
const APP: &str = r#"import asyncio, sys
from nicegui import ui

PORT, RECEIVED = int(sys.argv[1]), sys.argv[2]


@ui.page("/")
def main():
    model = ui.select(["echo-small", "echo-large"], value="echo-small", label="Model")
    log = ui.column().classes("w-full")

    async def send():
        question = text.value
        if not question.strip():
            return
        text.value = ""
        with log:
            ui.chat_message(text=question, name="You", sent=True)
        with open(RECEIVED, "a", encoding="utf-8") as f:
            f.write(model.value + "\t" + " ".join(question.split()) + "\n")
        if "fail" in question:
            ui.notify("The model is overloaded, try again later", type="negative")
            return
        answer = f"[{model.value}] You said: {question}"
        with log:
            with ui.chat_message(name="Echo", sent=False):
                content = ui.label("")
        for i in range(0, len(answer), 4):
            await asyncio.sleep(0.05)
            content.text = answer[: i + 4]

    text = ui.input(placeholder="Message").on("keydown.enter", send).classes("w-full")


ui.run(host="127.0.0.1", port=PORT, reload=False, show=False, title="Echo")
"#;

/// The interpreter of the virtualenv with NiceGUI, installed once.
pub fn ensure_installed() -> anyhow::Result<PathBuf> {
    super::pip_install_once("NiceGUI", "nicegui", VERSION)
}

/// Installs NiceGUI if needed and serves the chat.
pub async fn start() -> anyhow::Result<Chat> {
    let python = ensure_installed()?;
    Chat::serve(APP, "the NiceGUI chat", |port, received| {
        let mut serve = Command::new(python);
        serve.arg("app.py").arg(port.to_string()).arg(received);
        serve
    })
    .await
}
