//! Streamlit, from PyPI: the data-app framework whose chat elements (`st.chat_input`,
//! `st.chat_message`, `st.write_stream`) many model demos use. A React page whose whole screen
//! lies in a layer placed over the viewport, drawn after the load event from what the script
//! sends over a WebSocket; every interaction reruns the script. The application is the chat of
//! Streamlit's documentation ("Build a basic LLM chat app") with a streamed echo for a model and
//! a `st.selectbox` of two models ([`super::chat`]); a failing reply shows `st.error` in the
//! assistant's message.

use std::path::PathBuf;
use std::process::Command;

use super::chat::Chat;

/// The Streamlit release installed.
pub const VERSION: &str = "1.67.0";

/// The application: `streamlit run app.py -- RECEIVED`. The history is kept in the session's
/// state, as the documentation's chat does; the reply streams in a few characters at a time.
const APP: &str = r#"import sys, time
import streamlit as st

RECEIVED = sys.argv[1]

st.title("Echo")
model = st.selectbox("Model", ["echo-small", "echo-large"])
if "history" not in st.session_state:
    st.session_state.history = []
for role, text in st.session_state.history:
    with st.chat_message(role):
        st.markdown(text)

if message := st.chat_input("Say something"):
    with open(RECEIVED, "a", encoding="utf-8") as f:
        f.write(model + "\t" + " ".join(message.split()) + "\n")
    st.session_state.history.append(("user", message))
    with st.chat_message("user"):
        st.markdown(message)
    with st.chat_message("assistant"):
        if "fail" in message:
            st.error("The model is overloaded, try again later")
        else:
            def words():
                text = f"[{model}] You said: {message}"
                for i in range(0, len(text), 4):
                    time.sleep(0.05)
                    yield text[i:i + 4]
            st.session_state.history.append(("assistant", st.write_stream(words())))
"#;

/// The interpreter of the virtualenv with Streamlit, installed once.
pub fn ensure_installed() -> anyhow::Result<PathBuf> {
    super::pip_install_once("Streamlit", "streamlit", VERSION)
}

/// Installs Streamlit if needed and serves the chat.
pub async fn start() -> anyhow::Result<Chat> {
    let python = ensure_installed()?;
    Chat::serve(APP, "the Streamlit chat", |port, received| {
        let mut serve = Command::new(python);
        serve
            .args(["-m", "streamlit", "run", "app.py", "--server.address", "127.0.0.1", "--server.port"])
            .arg(port.to_string())
            .args(["--server.headless", "true", "--browser.gatherUsageStats", "false"])
            .args(["--server.fileWatcherType", "none", "--"])
            .arg(received);
        serve
    })
    .await
}
