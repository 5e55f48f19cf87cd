//! User settings: `<data dir>/settings.json`, read on use (no restart needed). Every key is
//! optional; unknown keys make the file invalid (reported by `nova doctor`, defaults used).

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::{Mutex, OnceLock};
use std::time::SystemTime;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::paths::DataDir;

/// The shared gate-mode enum (docs/gates.md, "Gates (AAG)"; docs/tasks.md, "Settings").
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

/// Everything configurable (docs/tasks.md, "Settings"; docs/gates.md for the gate keys).
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
    /// Gate modes by gate id (AAG); gates not named keep their defaults.
    pub gate_modes: BTreeMap<String, GateMode>,
    /// Per-domain policy: `{"example.com": {"default": "allow", "interact": "block"}}`. A rule for
    /// a domain applies to its subdomains; action groups are read, navigate, interact.
    pub domain_policy: BTreeMap<String, BTreeMap<String, Rule>>,
    /// Agents may not open new tabs.
    pub agent_new_tabs_disabled: bool,
    /// Agents may not move work to a tab other than the one they hold.
    pub agent_cross_tab_navigation_disabled: bool,
    /// `safety.disk_space_low` threshold, MB (default 500).
    #[serde(default = "five_hundred")]
    pub disk_space_low_mb: u64,
    /// How long an OK fact stays fresh, ms (default 300000: five minutes; docs/ok.md).
    #[serde(default = "five_minutes")]
    pub ok_freshness_window_ms: u64,
    /// The PKS drift gate (docs/pks.md, "Drift"): `block` (default) refuses to apply an entry
    /// whose drift debt reached 0.40.
    #[serde(default = "block")]
    pub pks_drift_gate_mode: GateMode,
    /// Which sibling sites share per-site knowledge (docs/pks.md, "Sibling sites"): `auto`
    /// (default: the same registrable domain), `strict` (a registrable domain and its own
    /// subdomains, not subdomains among themselves), `off`.
    pub pks_sibling_policy: SiblingPolicy,
}

/// `pksSiblingPolicy`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SiblingPolicy {
    /// Sites of the same registrable domain.
    #[default]
    Auto,
    /// A registrable domain and its subdomains, not subdomains among themselves.
    Strict,
    /// None.
    Off,
}

fn block() -> GateMode {
    GateMode::Block
}

fn five_minutes() -> u64 {
    300_000
}

fn five_hundred() -> u64 {
    500
}

/// A domain-policy rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Rule {
    /// Allowed.
    Allow,
    /// Blocked.
    Block,
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
            gate_modes: BTreeMap::new(),
            domain_policy: BTreeMap::new(),
            agent_new_tabs_disabled: false,
            agent_cross_tab_navigation_disabled: false,
            disk_space_low_mb: 500,
            ok_freshness_window_ms: five_minutes(),
            pks_drift_gate_mode: GateMode::Block,
            pks_sibling_policy: SiblingPolicy::Auto,
        }
    }
}

impl Settings {
    /// Whether the policy blocks `group` on `host`: the most specific domain rule wins, and
    /// within it the group's rule, else its `default`.
    pub fn domain_blocked(&self, host: &str, group: &str) -> bool {
        let host = host.to_ascii_lowercase();
        let host = host.split(':').next().unwrap_or_default();
        let rules = self
            .domain_policy
            .iter()
            .filter(|(d, _)| {
                let d = d.to_ascii_lowercase();
                host == d || host.ends_with(&format!(".{d}"))
            })
            .max_by_key(|(d, _)| d.len());
        rules.and_then(|(_, r)| r.get(group).or_else(|| r.get("default"))).is_some_and(|r| *r == Rule::Block)
    }

    /// Writes the settings file (the options page does this through the host). The new file is
    /// written beside the old one and renamed over it, so a reader (the gates read it on every
    /// call) never sees a half-written file.
    pub fn save(&self, data: &DataDir) -> std::io::Result<()> {
        let text = serde_json::to_string_pretty(self).map_err(std::io::Error::other)?;
        let path = data.root().join("settings.json");
        let partial = data.root().join(format!("settings.json.{}.tmp", std::process::id()));
        std::fs::write(&partial, text)?;
        std::fs::rename(&partial, &path).inspect_err(|_| {
            let _ = std::fs::remove_file(&partial);
        })
    }

    /// Reads the settings file; defaults when it is absent. Every tool call consults the
    /// settings several times, so a parsed file is kept until its size or mtime changes.
    pub fn try_load(data: &DataDir) -> Result<Self, String> {
        let path = data.root().join("settings.json");
        let stamp = std::fs::metadata(&path).ok().and_then(|m| Some((m.modified().ok()?, m.len())));
        if let Some((mtime, len)) = stamp
            && let Some((m, l, s)) = cache().lock().unwrap_or_else(|p| p.into_inner()).get(&path)
            && (*m, *l) == (mtime, len)
        {
            return Ok(s.clone());
        }
        let loaded = Self::read(&path);
        match (stamp, &loaded) {
            (Some((mtime, len)), Ok(s)) => {
                cache().lock().unwrap_or_else(|p| p.into_inner()).insert(path, (mtime, len, s.clone()));
            }
            // Deleted: the defaults, and nothing older to fall back on.
            (None, Ok(_)) => {
                cache().lock().unwrap_or_else(|p| p.into_inner()).remove(&path);
            }
            (_, Err(_)) => {}
        }
        loaded
    }

    fn read(path: &std::path::Path) -> Result<Self, String> {
        match std::fs::read_to_string(path) {
            Ok(text) => serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Self::default()),
            Err(e) => Err(format!("{}: {e}", path.display())),
        }
    }

    /// [`Settings::try_load`]; when the file is bad, the last valid settings read from it
    /// (logged), so that a typo or a file caught mid-write never lifts the person's policy
    /// (gates fail closed); the defaults only when it was never valid (`nova doctor` says so).
    pub fn load(data: &DataDir) -> Self {
        Self::try_load(data).unwrap_or_else(|e| {
            let path = data.root().join("settings.json");
            let last =
                cache().lock().unwrap_or_else(|p| p.into_inner()).get(&path).map(|(_, _, s)| s.clone());
            tracing::warn!(error = %e, kept_last_valid = last.is_some(), "settings file unreadable");
            last.unwrap_or_default()
        })
    }
}

/// Parsed settings files by path, with the modification time and size they were read at.
type Cache = Mutex<HashMap<PathBuf, (SystemTime, u64, Settings)>>;

fn cache() -> &'static Cache {
    static CACHE: OnceLock<Cache> = OnceLock::new();
    CACHE.get_or_init(Cache::default)
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

    #[test]
    fn saves_are_whole_and_a_bad_file_keeps_the_last_valid_policy() {
        let dir = tempfile::tempdir().expect("tmp");
        let data = DataDir::at(dir.path());
        let s = Settings { agent_new_tabs_disabled: true, ..Settings::default() };
        s.save(&data).expect("save");
        assert!(Settings::load(&data).agent_new_tabs_disabled);
        let files: Vec<_> =
            std::fs::read_dir(dir.path()).expect("ls").flatten().map(|e| e.file_name()).collect();
        assert_eq!(files, ["settings.json"], "no temporary file is left behind");
        // Caught mid-write by an editor, or a typo: the person's rules still hold.
        std::fs::write(dir.path().join("settings.json"), "").expect("torn");
        assert!(Settings::try_load(&data).is_err());
        assert!(Settings::load(&data).agent_new_tabs_disabled, "the last valid settings hold");
        // Never valid in this process: the product defaults.
        let other = tempfile::tempdir().expect("tmp");
        std::fs::write(other.path().join("settings.json"), "{").expect("bad");
        assert_eq!(Settings::load(&DataDir::at(other.path())), Settings::default());
    }

    #[test]
    fn domain_rules_pick_the_most_specific_domain_and_group() {
        let s: Settings = serde_json::from_str(
            r#"{"domainPolicy": {"example.com": {"default": "block"}, "docs.example.com": {"interact": "block", "default": "allow"}}}"#,
        )
        .expect("parse");
        assert!(s.domain_blocked("shop.example.com", "read"));
        assert!(s.domain_blocked("example.com:8080", "navigate"));
        assert!(!s.domain_blocked("docs.example.com", "read"));
        assert!(s.domain_blocked("docs.example.com", "interact"));
        assert!(!s.domain_blocked("notexample.com", "read"));
    }
}
