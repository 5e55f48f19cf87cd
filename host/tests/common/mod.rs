// Shared by several test binaries; each uses only part of it.
#![allow(dead_code)]

//! Starts the real `nova` binary as a browser would (`nova chrome-extension://<id>/`), with
//! its stdin/stdout as the native-messaging channel and a private data dir.

pub mod mcp;

use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

pub struct Hub {
    pub child: Child,
    pub stdin: Option<ChildStdin>,
    pub stdout: ChildStdout,
    pub data: tempfile::TempDir,
}

impl Hub {
    pub fn start() -> Self {
        let data = tempfile::tempdir().expect("tempdir");
        let mut child = Command::new(env!("CARGO_BIN_EXE_nova"))
            .arg(format!("chrome-extension://{}/", nova_shared::CHROMIUM_EXTENSION_ID))
            .env("NOVA_HOME", data.path())
            .env("NOVA_HTTP_PORT", "0")
            .env("NOVA_LOG", "warn")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn nova");
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().expect("stdout");
        Self { child, stdin, stdout, data }
    }

    pub fn data_path(&self) -> PathBuf {
        self.data.path().to_path_buf()
    }

    /// The hub's registration, once it is written.
    pub fn record(&self) -> Value {
        let file = self.data.path().join("hubs/chromium.json");
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if let Ok(bytes) = std::fs::read(&file)
                && let Ok(v) = serde_json::from_slice(&bytes)
            {
                return v;
            }
            assert!(Instant::now() < deadline, "hub did not register");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    pub fn write_raw(&mut self, bytes: &[u8]) {
        self.stdin.as_mut().expect("stdin open").write_all(bytes).expect("write");
    }

    pub fn write_frame(&mut self, payload: &[u8]) {
        let mut bytes = (payload.len() as u32).to_ne_bytes().to_vec();
        bytes.extend_from_slice(payload);
        self.write_raw(&bytes);
    }

    pub fn read_frame(&mut self) -> Value {
        let mut len = [0u8; 4];
        self.stdout.read_exact(&mut len).expect("frame header");
        let mut body = vec![0u8; u32::from_ne_bytes(len) as usize];
        self.stdout.read_exact(&mut body).expect("frame body");
        serde_json::from_slice(&body).expect("json frame")
    }

    /// Waits for the process to exit; returns whether it exited successfully.
    pub fn wait_exit(&mut self, timeout: Duration) -> Option<bool> {
        let deadline = Instant::now() + timeout;
        while Instant::now() < deadline {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Some(status.success());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        None
    }
}

impl Drop for Hub {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
