//! The registration through which relays and `nova doctor` find a running hub:
//! `hubs/<browser>.json` in the data dir (mode 0600), written whole, newest hub wins.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::paths::DataDir;

/// What a running hub publishes in `hubs/<browser>.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HubRecord {
    /// Browser family: `chromium` or `firefox`.
    pub browser: String,
    /// Hub process id.
    pub pid: u32,
    /// Unix socket for `nova mcp`.
    pub socket: PathBuf,
    /// Streamable HTTP endpoint.
    pub http_url: String,
    /// Start time, ms since epoch.
    pub started_at_ms: i64,
    /// The caller the browser named (extension origin).
    pub caller: String,
}

impl HubRecord {
    /// Reads every registration in the data dir, newest first.
    pub fn all(data: &DataDir) -> Vec<Self> {
        let mut out: Vec<Self> = std::fs::read_dir(data.hubs())
            .into_iter()
            .flatten()
            .flatten()
            .filter(|e| e.path().extension().is_some_and(|x| x == "json"))
            .filter_map(|e| std::fs::read(e.path()).ok())
            .filter_map(|b| serde_json::from_slice(&b).ok())
            .collect();
        out.sort_by_key(|r| std::cmp::Reverse(r.started_at_ms));
        out
    }
}

impl HubRecord {
    /// Publishes the record (written to a temporary file, then renamed into place).
    pub fn write(&self, data: &DataDir) -> std::io::Result<()> {
        let file = data.hub_file(&self.browser);
        let tmp = file.with_extension(format!("json.{}", self.pid));
        std::fs::write(&tmp, serde_json::to_vec_pretty(self).map_err(std::io::Error::other)?)?;
        crate::paths::set_mode(&tmp, 0o600)?;
        std::fs::rename(tmp, file)
    }

    /// Removes the record and its socket unless a newer hub has taken them over.
    pub fn remove_if_ours(&self, data: &DataDir) {
        let file = data.hub_file(&self.browser);
        let still_ours = std::fs::read(&file)
            .ok()
            .and_then(|b| serde_json::from_slice::<Self>(&b).ok())
            .is_some_and(|r| r.pid == self.pid);
        if still_ours {
            let _ = std::fs::remove_file(&file);
            let _ = std::fs::remove_file(&self.socket);
        }
    }
}
