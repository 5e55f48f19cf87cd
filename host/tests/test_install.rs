//! `nova install`, `nova uninstall` and `nova doctor` as a user runs them, in a temporary home
//! with an empty PATH, so that only what a test creates looks installed. The Linux tables apply
//! (the unit tests in `install` cover macOS and Windows).
#![cfg(target_os = "linux")]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

struct Home {
    dir: tempfile::TempDir,
    host: PathBuf,
}

impl Home {
    fn new() -> Home {
        let dir = tempfile::tempdir().expect("tmp");
        let host = dir.path().join("bin/nova");
        std::fs::create_dir_all(dir.path().join("bin")).expect("bin");
        std::fs::create_dir_all(dir.path().join("empty-path")).expect("path");
        std::fs::write(&host, b"#!/bin/sh\n").expect("host");
        Home { dir, host }
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join("home").join(rel)
    }

    fn nova(&self, args: &[&str]) -> (Output, String) {
        std::fs::create_dir_all(self.path("")).expect("home");
        let out = Command::new(env!("CARGO_BIN_EXE_nova"))
            .args(args)
            .env("HOME", self.path(""))
            .env("PATH", self.dir.path().join("empty-path"))
            .env("NOVA_HOME", self.dir.path().join("data"))
            .env_remove("XDG_CONFIG_HOME")
            .output()
            .expect("run nova");
        let text =
            format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        (out, text)
    }

    fn install(&self, args: &[&str]) -> String {
        let host = self.host.display().to_string();
        let mut all = vec!["install"];
        all.extend_from_slice(args);
        all.extend(["--host-path", &host]);
        let (out, text) = self.nova(&all);
        assert!(out.status.success(), "{text}");
        text
    }

    fn manifests(&self) -> Vec<PathBuf> {
        let mut found = Vec::new();
        walk(&self.path(""), &mut found);
        found.sort();
        found
    }
}

fn walk(dir: &Path, found: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            walk(&path, found);
        } else if path.file_name().is_some_and(|n| n == "io.nova.host.json") {
            found.push(path);
        }
    }
}

const MANIFEST: &str = "io.nova.host.json";

#[test]
fn a_chromium_profile_alone_is_registered_without_touching_the_home() {
    let home = Home::new();
    let profile = home.dir.path().join("profile");
    let text = home.install(&["--chromium-profile", &profile.display().to_string()]);
    let manifest = profile.join("NativeMessagingHosts").join(MANIFEST);
    let m: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&manifest).expect("manifest")).expect("json");
    assert_eq!(m["path"], home.host.display().to_string());
    assert!(text.contains(&manifest.display().to_string()), "{text}");
    assert!(home.manifests().is_empty(), "{:?}", home.manifests());
}

#[test]
fn a_named_browser_is_registered_natively_even_when_not_detected() {
    let home = Home::new();
    let text = home.install(&["--browser", "firefox"]);
    let manifest = home.path(".mozilla/native-messaging-hosts").join(MANIFEST);
    assert_eq!(home.manifests(), std::slice::from_ref(&manifest));
    assert!(text.contains(&format!("registered with firefox: {}", manifest.display())), "{text}");
    let m: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&manifest).expect("manifest")).expect("json");
    assert_eq!(m["allowed_extensions"][0], nova_shared::FIREFOX_ADDON_ID);
}

#[test]
fn installed_sandboxed_variants_are_registered_checked_and_removed() {
    let home = Home::new();
    std::fs::create_dir_all(home.path(".var/app/org.chromium.Chromium")).expect("flatpak");
    std::fs::create_dir_all(home.path("snap/firefox")).expect("snap");
    std::fs::create_dir_all(home.path(".config/microsoft-edge")).expect("edge profile");

    // Nothing named: what is installed. Chromium and Firefox are not installed natively here
    // (empty PATH, no profile roots), Edge is (its profile root exists).
    let text = home.install(&[]);
    let flatpak =
        home.path(".var/app/org.chromium.Chromium/config/chromium/NativeMessagingHosts").join(MANIFEST);
    let snap = home.path("snap/firefox/common/.mozilla/native-messaging-hosts").join(MANIFEST);
    let edge = home.path(".config/microsoft-edge/NativeMessagingHosts").join(MANIFEST);
    for (label, path) in [("chromium (flatpak)", &flatpak), ("firefox (snap)", &snap), ("edge", &edge)] {
        assert!(text.contains(&format!("registered with {label}: {}", path.display())), "{text}");
        assert!(path.exists(), "{}", path.display());
    }
    assert!(!home.path(".config/chromium").exists());
    assert!(!home.path(".mozilla").exists());

    let (_, report) = home.nova(&["doctor"]);
    for label in ["chromium (flatpak)", "firefox (snap)", "edge"] {
        assert!(report.contains(&format!("ok    {label} native-host manifest")), "{report}");
    }
    assert!(!report.contains("chrome native-host manifest"), "{report}");

    let (out, text) = home.nova(&["uninstall", "--browser", "firefox"]);
    assert!(out.status.success(), "{text}");
    assert_eq!(text.trim(), format!("removed {}", snap.display()));

    let (out, text) = home.nova(&["uninstall"]);
    assert!(out.status.success(), "{text}");
    assert!(text.contains(&format!("removed {}", flatpak.display())), "{text}");
    assert!(text.contains(&format!("removed {}", edge.display())), "{text}");
    assert!(home.manifests().is_empty(), "{:?}", home.manifests());
}

#[test]
fn doctor_names_the_fix_for_a_broken_manifest() {
    let home = Home::new();
    home.install(&["--browser", "brave"]);
    let manifest = home.path(".config/BraveSoftware/Brave-Browser/NativeMessagingHosts").join(MANIFEST);
    std::fs::write(&manifest, "{ not json").expect("break");
    let (out, report) = home.nova(&["doctor"]);
    assert!(!out.status.success());
    assert!(report.contains("FAIL  brave native-host manifest: manifest is not JSON"), "{report}");
    assert!(report.contains("fix: run `nova install --browser brave`"), "{report}");
}
