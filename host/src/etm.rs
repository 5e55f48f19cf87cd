//! ETM, episodic task memory (docs/tasks.md, "Task runs"): reusable task profiles, concrete
//! instances with work units, and completion judged by the host against observed evidence (TOB),
//! never by the agent's own report. Every instance mutation is compare-and-set on `instanceRev` and
//! idempotent on `clientEventId` (a replay returns the stored result and writes nothing).
//!
//! Layout: `args` (tool arguments), `instance` (instance rows, units and the event log),
//! `grading` (evidence grades and the assessment of an instance), `completion` (the completion
//! decision), `profiles` (task profiles, search and matching tools), `lifecycle` (the instance
//! tools: create, get, progress, verify, complete, abort), `matching` (profile matching scores),
//! `guidance` (guidance logs and promotion), `tools` (the tool declarations).

pub mod args;
pub mod completion;
pub mod context;
pub mod grading;
pub mod guidance;
pub mod instance;
pub mod lifecycle;
pub mod matching;
pub mod profiles;
pub mod tools;

use std::path::Path;
use std::sync::Mutex;

use rusqlite::Connection;
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

use crate::call::{CallError, CallRecord, ToolReply};
use crate::store::{self, StoreError};

/// Units a `site_urls` / `crawler` source copies at most.
pub const MAX_SEEDED_URLS: usize = 1000;

/// ETM state of a hub: its own connection to the store.
pub struct Etm {
    conn: Mutex<Connection>,
}

impl Etm {
    /// Opens the task tables.
    pub fn open(db: &Path) -> Result<Self, StoreError> {
        Ok(Self { conn: Mutex::new(store::open(db)?) })
    }

    /// Runs `f` on the connection.
    pub fn with<T>(&self, f: impl FnOnce(&mut Connection) -> rusqlite::Result<T>) -> Result<T, CallError> {
        let mut c = self.conn.lock().unwrap_or_else(|p| p.into_inner());
        f(&mut c).map_err(|e| CallError::Store(e.to_string()))
    }
}

pub(crate) fn hex32() -> String {
    uuid::Uuid::new_v4().simple().to_string()
}

pub(crate) fn sha256_hex(text: &str) -> String {
    Sha256::digest(text.as_bytes()).iter().map(|b| format!("{b:02x}")).collect()
}

/// A soft rejection: a normal result with `ok:false` and a reason (docs/tasks.md, "Refusals").
pub fn soft(reason: &str, message: impl Into<String>, extra: Value) -> ToolReply {
    let mut body = json!({
        "ok": false, "status": "rejected", "reason": reason, "reasonCode": reason,
        "retryable": false, "message": message.into(),
    });
    if let (Some(b), Value::Object(e)) = (body.as_object_mut(), extra) {
        b.extend(e);
    }
    ToolReply { structured: body, is_error: false, text: None, image: None, meta: Map::new() }
}

pub(crate) fn ok(mut body: Value) -> ToolReply {
    body["ok"] = json!(true);
    if body.get("status").is_none() {
        body["status"] = json!("ok");
    }
    ToolReply::ok(body)
}

/// The agent a call is recorded for.
pub(crate) fn agent(rec: &CallRecord) -> String {
    rec.obs.agent_id.clone()
}
