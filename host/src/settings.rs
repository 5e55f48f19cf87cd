//! User settings: `<data dir>/settings.json`, read on use (no restart needed). Every key is
//! optional; unknown keys make the file invalid (reported by `nova doctor`, defaults used).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::paths::DataDir;

/// The shared gate-mode enum (contracts.md §1.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum GateMode {
    /// No evaluation.
    Off,
    /// The call succeeds with a warning attached.
    #[default]
    Warn,
    /// The call succeeds; a would-have-blocked record is written.
    ShadowBlock,
    /// The call is rejected.
    Block,
}

impl GateMode {
    /// Wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Off => "off",
            Self::Warn => "warn",
            Self::ShadowBlock => "shadow_block",
            Self::Block => "block",
        }
    }
}

fn yes() -> bool {
    true
}

/// Everything configurable (TUC defaults from contracts.md §3.12).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct Settings {
    /// `etm.task_url_coverage` completion gate.
    pub task_url_coverage_gate_mode: GateMode,
    /// `etm.coverage_scan_recommended` hint.
    pub task_url_coverage_scan_recommended_gate_mode: GateMode,
    /// Passive URL-coverage attribution.
    #[serde(default = "yes")]
    pub task_url_coverage_tracking_enabled: bool,
    /// Lets agents run `task_instance_reconcile_coverage` with `dryRun=false`.
    pub task_url_coverage_allow_agent_reconcile_apply: bool,
    /// Screenshots count as visits for URL coverage.
    pub task_url_coverage_screenshot_counts: bool,
    /// Keep raw URLs (query, fragment) in audit rows.
    pub audit_keep_raw_urls: bool,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            task_url_coverage_gate_mode: GateMode::Warn,
            task_url_coverage_scan_recommended_gate_mode: GateMode::Warn,
            task_url_coverage_tracking_enabled: true,
            task_url_coverage_allow_agent_reconcile_apply: false,
            task_url_coverage_screenshot_counts: false,
            audit_keep_raw_urls: false,
        }
    }
}

impl Settings {
    /// Reads the settings file; defaults when it is absent.
    pub fn try_load(data: &DataDir) -> Result<Self, String> {
        let path = data.root().join("settings.json");
        match std::fs::read_to_string(&path) {
            Ok(text) => serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Self::default()),
            Err(e) => Err(format!("{}: {e}", path.display())),
        }
    }

    /// [`Settings::try_load`], falling back to the defaults (logged) when the file is bad.
    pub fn load(data: &DataDir) -> Self {
        Self::try_load(data).unwrap_or_else(|e| {
            tracing::warn!(error = %e, "settings file ignored; using defaults");
            Self::default()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_file_gives_defaults_and_bad_keys_are_refused() {
        let dir = tempfile::tempdir().expect("tmp");
        let data = DataDir::at(dir.path());
        assert_eq!(Settings::try_load(&data), Ok(Settings::default()));
        std::fs::write(dir.path().join("settings.json"), r#"{"taskUrlCoverageGateMode":"block"}"#)
            .expect("w");
        assert_eq!(Settings::load(&data).task_url_coverage_gate_mode, GateMode::Block);
        assert!(Settings::load(&data).task_url_coverage_tracking_enabled);
        std::fs::write(dir.path().join("settings.json"), r#"{"taskUrlCoverageGateMod":"block"}"#).expect("w");
        assert!(Settings::try_load(&data).expect_err("typo").contains("unknown field"));
    }
}
