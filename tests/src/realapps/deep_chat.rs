//! Deep Chat, from npm: a chat drawn by one web component (`<deep-chat>`), everything inside its
//! open shadow root: the messages, the error bubble, the text box (an editable region). Sites
//! put it on their pages and point it at their own endpoint; so does this one. The page is a
//! plain page holding the component, connected to `/chat`, which streams the reply as
//! Server-Sent Events (the component's own protocol: `data: {"text": ...}` chunks appended), and
//! a `<select>` of two models beside it, whose choice the component's request interceptor adds
//! to each request. A failing reply answers with an error status and `{"error": ...}`, which the
//! component shows as its error bubble ([`super::chat`]). The server is Python's standard
//! library; the component, the part nobody here wrote, is the npm package's browser bundle.

use std::path::PathBuf;
use std::process::Command;

use super::chat::Chat;

/// The Deep Chat release installed.
pub const VERSION: &str = "2.4.2";

/// The application: `python3 app.py PORT RECEIVED BUNDLE`.
const APP: &str = r#"import json, sys, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PORT, RECEIVED, BUNDLE = int(sys.argv[1]), sys.argv[2], sys.argv[3]

PAGE = """<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Echo</title>
<script type="module" src="/deepChat.bundle.js"></script></head>
<body>
<h1>Echo</h1>
<label>Model <select id="model"><option>echo-small</option><option>echo-large</option></select></label>
<deep-chat id="chat" style="font-family: sans-serif; width: 640px; height: 420px"
  connect='{"url": "/chat", "stream": true}'
  errorMessages='{"displayServiceErrorMessages": true}'></deep-chat>
<script type="module">
  document.getElementById("chat").requestInterceptor = (details) => {
    details.body.model = document.getElementById("model").value;
    return details;
  };
</script>
</body>
</html>
"""


class Handler(BaseHTTPRequestHandler):
    def send(self, status, kind, body):
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        if self.path == "/":
            self.send(200, "text/html; charset=utf-8", PAGE.encode())
        elif self.path == "/deepChat.bundle.js":
            with open(BUNDLE, "rb") as f:
                self.send(200, "text/javascript", f.read())
        else:
            self.send(404, "text/plain", b"not found")

    def do_POST(self):
        if self.path != "/chat":
            return self.send(404, "text/plain", b"not found")
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        question, model = body["messages"][-1]["text"], body.get("model", "echo-small")
        with open(RECEIVED, "a", encoding="utf-8") as f:
            f.write(model + "\t" + " ".join(question.split()) + "\n")
        if "fail" in question:
            error = json.dumps({"error": "The model is overloaded, try again later"})
            return self.send(500, "application/json", error.encode())
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.end_headers()
        answer = f"[{model}] You said: {question}"
        for i in range(0, len(answer), 4):
            time.sleep(0.05)
            self.wfile.write(b"data: " + json.dumps({"text": answer[i : i + 4]}).encode() + b"\n\n")
            self.wfile.flush()


ThreadingHTTPServer(("127.0.0.1", PORT), Handler).serve_forever()
"#;

/// Deep Chat's bundle, installed once with npm.
pub fn ensure_installed() -> anyhow::Result<PathBuf> {
    super::npm_install_once("Deep Chat", "deep-chat", VERSION, "dist/deepChat.bundle.js")
}

/// Installs Deep Chat if needed and serves the chat.
pub async fn start() -> anyhow::Result<Chat> {
    let bundle = ensure_installed()?;
    Chat::serve(APP, "the Deep Chat page", |port, received| {
        let mut serve = Command::new("python3");
        serve.arg("app.py").arg(port.to_string()).arg(received).arg(bundle);
        serve
    })
    .await
}
