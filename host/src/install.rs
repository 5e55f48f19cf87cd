//! `nova install` / `nova uninstall`: native-messaging host manifests, per user, for the
//! browsers the user names or that are detected. The paths per OS live in their own modules;
//! this module decides what to write.

#[cfg(target_os = "linux")]
mod linux;
#[cfg(target_os = "linux")]
use linux as os;
#[cfg(not(target_os = "linux"))]
mod unsupported;
#[cfg(not(target_os = "linux"))]
use unsupported as os;

use std::path::{Path, PathBuf};

use nova_shared::{CHROMIUM_EXTENSION_ID, FIREFOX_ADDON_ID, NATIVE_HOST_NAME};
use serde_json::{Value, json};

/// Browsers Nova can register with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Browser {
    /// Chromium.
    Chromium,
    /// Google Chrome.
    Chrome,
    /// Microsoft Edge.
    Edge,
    /// Brave.
    Brave,
    /// Firefox.
    Firefox,
}

impl Browser {
    /// All browsers.
    pub const ALL: [Browser; 5] = [Self::Chromium, Self::Chrome, Self::Edge, Self::Brave, Self::Firefox];

    /// Lower-case name.
    pub fn name(self) -> &'static str {
        match self {
            Self::Chromium => "chromium",
            Self::Chrome => "chrome",
            Self::Edge => "edge",
            Self::Brave => "brave",
            Self::Firefox => "firefox",
        }
    }

    /// Whether this browser uses Firefox's manifest format.
    pub fn is_firefox(self) -> bool {
        self == Self::Firefox
    }
}

/// Where a manifest goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// Which browser (Chromium format for a custom profile).
    pub browser: Browser,
    /// The manifest file path.
    pub manifest: PathBuf,
}

/// The per-user manifest location of `browser`.
pub fn user_target(browser: Browser) -> Option<Target> {
    let home = std::env::var_os("HOME").map(PathBuf::from)?;
    Some(Target { browser, manifest: os::manifest_dir(browser, &home).join(manifest_file()) })
}

/// The manifest location inside a Chromium `--user-data-dir` profile (read instead of the
/// per-user location when Chromium runs with that flag).
pub fn profile_target(profile: &Path) -> Target {
    Target {
        browser: Browser::Chromium,
        manifest: profile.join("NativeMessagingHosts").join(manifest_file()),
    }
}

fn manifest_file() -> String {
    format!("{NATIVE_HOST_NAME}.json")
}

/// Browsers that look installed for this user.
pub fn detect() -> Vec<Browser> {
    let home = std::env::var_os("HOME").map(PathBuf::from).unwrap_or_default();
    Browser::ALL.into_iter().filter(|b| os::is_installed(*b, &home)).collect()
}

/// The manifest JSON for `browser` pointing at `host`.
pub fn manifest_json(browser: Browser, host: &Path) -> Value {
    let mut m = json!({
        "name": NATIVE_HOST_NAME,
        "description": "Nova: verified browser actions for AI agents",
        "path": host.display().to_string(),
        "type": "stdio",
    });
    if browser.is_firefox() {
        m["allowed_extensions"] = json!([FIREFOX_ADDON_ID]);
    } else {
        m["allowed_origins"] = json!([format!("chrome-extension://{CHROMIUM_EXTENSION_ID}/")]);
    }
    m
}

/// Writes the manifest for `target`.
pub fn install(target: &Target, host: &Path) -> std::io::Result<()> {
    if let Some(dir) = target.manifest.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let text =
        serde_json::to_string_pretty(&manifest_json(target.browser, host)).map_err(std::io::Error::other)?;
    std::fs::write(&target.manifest, text)
}

/// Removes the manifest for `target`; returns whether one was there.
pub fn uninstall(target: &Target) -> std::io::Result<bool> {
    match std::fs::remove_file(&target.manifest) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(e),
    }
}

/// What is wrong with an installed manifest, if anything.
pub fn check(target: &Target) -> Result<PathBuf, String> {
    let text = std::fs::read_to_string(&target.manifest)
        .map_err(|e| format!("no manifest at {} ({e})", target.manifest.display()))?;
    let m: Value = serde_json::from_str(&text).map_err(|e| format!("manifest is not JSON: {e}"))?;
    let path = PathBuf::from(m["path"].as_str().unwrap_or_default());
    if !path.is_file() {
        return Err(format!("manifest points at {}, which does not exist", path.display()));
    }
    let expected = manifest_json(target.browser, &path);
    let key = if target.browser.is_firefox() { "allowed_extensions" } else { "allowed_origins" };
    if m[key] != expected[key] {
        return Err(format!("manifest does not allow the Nova extension ({key} is {})", m[key]));
    }
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn manifests_pin_our_extension() {
        let chromium = manifest_json(Browser::Chromium, Path::new("/opt/nova"));
        assert_eq!(chromium["allowed_origins"][0], format!("chrome-extension://{CHROMIUM_EXTENSION_ID}/"));
        assert_eq!(chromium["type"], "stdio");
        let firefox = manifest_json(Browser::Firefox, Path::new("/opt/nova"));
        assert_eq!(firefox["allowed_extensions"][0], FIREFOX_ADDON_ID);
        assert!(firefox.get("allowed_origins").is_none());
    }

    #[test]
    fn install_check_uninstall_round_trip() {
        let tmp = tempfile::tempdir().expect("tmp");
        let host = tmp.path().join("nova");
        std::fs::write(&host, b"#!/bin/sh\n").expect("host");
        let target = profile_target(&tmp.path().join("profile"));
        assert!(check(&target).is_err());
        install(&target, &host).expect("install");
        assert_eq!(check(&target).expect("valid"), host);
        std::fs::remove_file(&host).expect("rm");
        assert!(check(&target).expect_err("dangling").contains("does not exist"));
        assert!(uninstall(&target).expect("uninstall"));
        assert!(!uninstall(&target).expect("again"));
    }
}
