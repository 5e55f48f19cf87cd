//! Shiny for Python, from PyPI (Posit): reactive applications drawn with Bootstrap, kept in step
//! with the server over a WebSocket. The application is a chat as Shiny's documentation builds one:
//! `ui.chat_ui` (shinychat's `<shiny-chat-container>`) on the page, the reply streamed by
//! `Chat.append_message_stream`, the model chosen in a `ui.input_selectize` (Selectize, the picker
//! Shiny for R draws every `selectInput` with: a hidden `<select>`, the choice drawn as text beside
//! a narrow text box, no ARIA), a failing reply raised from the `on_user_submit` handler a second
//! after the send (as a remote model's timeout would), which Shiny tells with an error notification
//! ([`super::chat`]). Until the reply's first words, shinychat draws an assistant's message with an
//! empty body (after 500 ms, pending dots beside it): that is no reply.

use std::path::PathBuf;
use std::process::Command;

use super::chat::Chat;

/// The Shiny release installed.
pub const VERSION: &str = "1.8.0";

/// The application: `python3 app.py PORT RECEIVED`.
const APP: &str = r#"import asyncio, sys
import uvicorn
from shiny import App, ui

PORT, RECEIVED = int(sys.argv[1]), sys.argv[2]

app_ui = ui.page_fillable(
    ui.input_selectize("model", "Model", ["echo-small", "echo-large"]),
    ui.chat_ui("chat", placeholder="Message"),
    title="Echo",
)


def server(input, output, session):
    chat = ui.Chat(id="chat")

    @chat.on_user_submit
    async def answer(question: str):
        with open(RECEIVED, "a", encoding="utf-8") as f:
            f.write(input.model() + "\t" + " ".join(question.split()) + "\n")
        if "fail" in question:
            # A remote model fails after a while (a timeout), not at once.
            await asyncio.sleep(1)
            raise RuntimeError("The model is overloaded, try again later")
        reply = f"[{input.model()}] You said: {question}"

        async def stream():
            for i in range(0, len(reply), 4):
                await asyncio.sleep(0.05)
                yield reply[i : i + 4]

        await chat.append_message_stream(stream())


app = App(app_ui, server)
uvicorn.run(app, host="127.0.0.1", port=PORT, log_level="warning")
"#;

/// The interpreter of the virtualenv with Shiny, installed once.
pub fn ensure_installed() -> anyhow::Result<PathBuf> {
    super::pip_install_once("Shiny", "shiny", VERSION)
}

/// Installs Shiny if needed and serves the chat.
pub async fn start() -> anyhow::Result<Chat> {
    let python = ensure_installed()?;
    Chat::serve(APP, "the Shiny chat", |port, received| {
        let mut serve = Command::new(python);
        serve.arg("app.py").arg(port.to_string()).arg(received);
        serve
    })
    .await
}
