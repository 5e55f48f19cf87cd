//! A tiny HTTP server for the demo page `cargo xtask run` opens (content scripts do not run on
//! `file://` or extension pages, so the demo needs a real http origin).

use std::io::{BufRead as _, BufReader, Write as _};
use std::net::TcpListener;

/// Serves `demo/index.html` on 127.0.0.1 in a background thread; returns its URL.
pub fn serve() -> anyhow::Result<String> {
    let page = std::fs::read(crate::cmd::root().join("demo/index.html"))?;
    let listener = TcpListener::bind(("127.0.0.1", 0))?;
    let url = format!("http://{}/", listener.local_addr()?);
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let mut reader = BufReader::new(&stream);
            let mut request_line = String::new();
            if reader.read_line(&mut request_line).is_err() {
                continue;
            }
            let mut line = String::new();
            while reader.read_line(&mut line).is_ok_and(|n| n > 2) {
                line.clear();
            }
            let (status, body): (&str, &[u8]) =
                if request_line.starts_with("GET / ") || request_line.starts_with("GET /index.html ") {
                    ("200 OK", &page)
                } else {
                    ("404 Not Found", b"not found")
                };
            let mut out = &stream;
            let _ = write!(
                out,
                "HTTP/1.1 {status}\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                body.len()
            );
            let _ = out.write_all(body);
        }
    });
    Ok(url)
}
