//! Linux locations of per-user native-messaging manifests.

use std::path::{Path, PathBuf};

use super::Browser;

/// Per-user manifest directory of `browser` under `home`.
pub fn manifest_dir(browser: Browser, home: &Path) -> PathBuf {
    let config = std::env::var_os("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .unwrap_or_else(|| home.join(".config"));
    match browser {
        Browser::Chromium => config.join("chromium/NativeMessagingHosts"),
        Browser::Chrome => config.join("google-chrome/NativeMessagingHosts"),
        Browser::Edge => config.join("microsoft-edge/NativeMessagingHosts"),
        Browser::Brave => config.join("BraveSoftware/Brave-Browser/NativeMessagingHosts"),
        Browser::Firefox => home.join(".mozilla/native-messaging-hosts"),
    }
}

fn binaries(browser: Browser) -> &'static [&'static str] {
    match browser {
        Browser::Chromium => &["chromium", "chromium-browser"],
        Browser::Chrome => &["google-chrome", "google-chrome-stable"],
        Browser::Edge => &["microsoft-edge", "microsoft-edge-stable"],
        Browser::Brave => &["brave-browser", "brave"],
        Browser::Firefox => &["firefox", "firefox-esr"],
    }
}

/// Whether `browser` looks installed: its binary is on PATH or its profile directory exists.
pub fn is_installed(browser: Browser, home: &Path) -> bool {
    let on_path = std::env::var_os("PATH").is_some_and(|path| {
        std::env::split_paths(&path).any(|dir| binaries(browser).iter().any(|b| dir.join(b).is_file()))
    });
    let profile = manifest_dir(browser, home).parent().is_some_and(Path::exists);
    on_path || profile
}
