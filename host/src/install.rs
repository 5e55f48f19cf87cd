//! `nova install` / `nova uninstall` and the manifest half of `nova doctor`: native-messaging
//! host manifests, per user, for every supported browser on Linux, macOS and Windows.
//!
//! # Layout
//! - this module decides *what* to do: which browsers and variants get a manifest
//!   ([`select_for_install`], [`select_for_uninstall`], [`select_for_doctor`]), the manifest JSON,
//!   writing, removing and checking manifests and (Windows) registry keys.
//! - `model` holds what both halves speak of: [`Browser`], [`Variant`], [`Env`], [`Target`],
//!   [`Location`], [`Probe`], [`Error`].
//! - `linux`, `macos`, `windows` hold *where*: pure tables from [`Env`] to [`Location`]s. All
//!   three compile on every OS and are picked at run time by [`Env::os`], so each OS's tables
//!   are unit-tested everywhere; only [`RegExe`] touches the real registry, and only on Windows.
//!
//! The functions without a `select_for_` prefix ([`install_targets`], [`uninstall_targets`],
//! [`doctor_targets`]) read this process's environment and filesystem; the `select_for_`
//! functions take them as arguments ([`Env`], [`Probe`]) so tests fake both.

mod linux;
mod macos;
mod model;
mod windows;

use model::manifest_file;
pub use model::{Browser, Env, Error, Location, Os, Probe, Sign, Target, Variant};

use std::path::{Path, PathBuf};

use nova_shared::{CHROMIUM_EXTENSION_ID, FIREFOX_ADDON_ID, NATIVE_HOST_NAME};
use serde_json::{Value, json};

/// The registry as [`install`], [`uninstall`] and [`check`] use it: default values of
/// `HKEY_CURRENT_USER` subkeys. [`RegExe`] is the real one; tests use a map.
pub trait Registry {
    /// Sets the default value of `key` (creating it) to `value`.
    fn set_default(&mut self, key: &str, value: &Path) -> Result<(), Error>;
    /// The default value of `key`, or `None` if the key does not exist.
    fn default_value(&self, key: &str) -> Result<Option<String>, Error>;
    /// Deletes `key`; returns whether it existed.
    fn delete(&mut self, key: &str) -> Result<bool, Error>;
}

/// The Windows registry through `reg.exe` (no extra crate, no `unsafe`). Off Windows no
/// target has a key, so it is never asked; if it is, it fails instead of running anything.
#[derive(Debug, Clone, Copy, Default)]
pub struct RegExe;

impl Registry for RegExe {
    fn set_default(&mut self, key: &str, value: &Path) -> Result<(), Error> {
        windows::run_reg(key, &windows::reg_add_args(key, value)).map(drop)
    }

    fn default_value(&self, key: &str) -> Result<Option<String>, Error> {
        // reg.exe exits 1 both for a missing key and for other failures; its message is
        // localized, so a failed query counts as "no key" and a real fault shows up on writing.
        Ok(windows::run_reg(key, &windows::reg_query_args(key))
            .ok()
            .and_then(|out| windows::parse_default_value(&out)))
    }

    fn delete(&mut self, key: &str) -> Result<bool, Error> {
        if self.default_value(key)?.is_none() {
            return Ok(false);
        }
        windows::run_reg(key, &windows::reg_delete_args(key)).map(|_| true)
    }
}

/// `HKCU\<key>`, as reg.exe takes it and as output names it.
pub fn registry_path(key: &str) -> String {
    format!("{}\\{key}", windows::HIVE)
}

/// Every location Nova knows for `browser` on `env.os`: the native one first, then the
/// sandboxed variants.
pub fn locations(env: &Env, browser: Browser) -> Vec<Location> {
    match env.os {
        Os::Linux => linux::locations(browser, env),
        Os::Macos => macos::locations(browser, env),
        Os::Windows => windows::locations(browser, env),
    }
}

/// What `nova install` writes. With browsers named: each one's native location, plus its
/// sandboxed variants that are installed. With none named: every location that is installed.
pub fn select_for_install(env: &Env, named: &[Browser], probe: &Probe) -> Vec<Target> {
    let browsers = if named.is_empty() { Browser::ALL.to_vec() } else { dedup(named) };
    browsers
        .into_iter()
        .flat_map(|b| locations(env, b))
        .filter(|loc| {
            let named_native = loc.target.variant == Variant::Native && named.contains(&loc.target.browser);
            named_native || probe.sees_any(&loc.signs)
        })
        .map(|loc| loc.target)
        .collect()
}

/// What `nova uninstall` removes: every location of the named browsers (all when none are
/// named), installed or not, so nothing Nova may have written stays behind.
pub fn select_for_uninstall(env: &Env, named: &[Browser]) -> Vec<Target> {
    let browsers = if named.is_empty() { Browser::ALL.to_vec() } else { dedup(named) };
    browsers.into_iter().flat_map(|b| locations(env, b)).map(|loc| loc.target).collect()
}

/// What `nova doctor` checks: every location that is installed or already holds a manifest.
pub fn select_for_doctor(env: &Env, probe: &Probe) -> Vec<Target> {
    Browser::ALL
        .into_iter()
        .flat_map(|b| locations(env, b))
        .filter(|loc| probe.sees_any(&loc.signs) || (probe.exists)(&loc.target.manifest))
        .map(|loc| loc.target)
        .collect()
}

fn dedup(browsers: &[Browser]) -> Vec<Browser> {
    let mut out: Vec<Browser> = Vec::new();
    for b in browsers {
        if !out.contains(b) {
            out.push(*b);
        }
    }
    out
}

/// [`select_for_install`] in this process's environment, plus `profile`'s target. With only a
/// profile and no browser named, the profile alone (tests and `cargo xtask run` register there
/// without touching the user's browsers).
pub fn install_targets(named: &[Browser], profile: Option<&Path>) -> Result<Vec<Target>, Error> {
    let mut targets = match (named.is_empty(), profile) {
        (true, Some(_)) => Vec::new(),
        _ => select_for_install(&Env::from_process()?, named, &Probe::system()),
    };
    targets.extend(profile.map(profile_target));
    Ok(targets)
}

/// [`select_for_uninstall`] in this process's environment, plus `profile`'s target.
pub fn uninstall_targets(named: &[Browser], profile: Option<&Path>) -> Result<Vec<Target>, Error> {
    let mut targets = select_for_uninstall(&Env::from_process()?, named);
    targets.extend(profile.map(profile_target));
    Ok(targets)
}

/// [`select_for_doctor`] in this process's environment.
pub fn doctor_targets() -> Result<Vec<Target>, Error> {
    Ok(select_for_doctor(&Env::from_process()?, &Probe::system()))
}

/// The manifest location inside a Chromium `--user-data-dir` profile (read instead of the
/// per-user location when Chromium runs with that flag, on Linux and macOS).
pub fn profile_target(profile: &Path) -> Target {
    Target {
        browser: Browser::Chromium,
        variant: Variant::Native,
        manifest: profile.join("NativeMessagingHosts").join(manifest_file()),
        registry_key: None,
    }
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

/// Writes the manifest for `target` and, on Windows, points its registry key at it.
pub fn install(target: &Target, host: &Path, registry: &mut impl Registry) -> Result<(), Error> {
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| Error::Io { path, source }
    };
    if let Some(dir) = target.manifest.parent() {
        std::fs::create_dir_all(dir).map_err(io(dir))?;
    }
    let text = serde_json::to_string_pretty(&manifest_json(target.browser, host))
        .map_err(|e| io(&target.manifest)(std::io::Error::other(e)))?;
    std::fs::write(&target.manifest, text).map_err(io(&target.manifest))?;
    if let Some(key) = &target.registry_key {
        registry.set_default(key, &target.manifest)?;
    }
    Ok(())
}

/// What [`uninstall`] found and removed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Removed {
    /// The manifest file was there.
    pub manifest: bool,
    /// The registry key was there (Windows).
    pub registry_key: bool,
}

/// Removes the manifest for `target` and its registry key.
pub fn uninstall(target: &Target, registry: &mut impl Registry) -> Result<Removed, Error> {
    let manifest = match std::fs::remove_file(&target.manifest) {
        Ok(()) => true,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => false,
        Err(source) => return Err(Error::Io { path: target.manifest.clone(), source }),
    };
    let registry_key = match &target.registry_key {
        Some(key) => registry.delete(key)?,
        None => false,
    };
    Ok(Removed { manifest, registry_key })
}

/// What is wrong with an installed manifest, if anything; else the host binary it names.
pub fn check(target: &Target, registry: &impl Registry) -> Result<PathBuf, String> {
    let text = std::fs::read_to_string(&target.manifest)
        .map_err(|e| format!("no manifest at {} ({e})", target.manifest.display()))?;
    let m: Value = serde_json::from_str(&text).map_err(|e| format!("manifest is not JSON: {e}"))?;
    if m["name"] != NATIVE_HOST_NAME {
        return Err(format!("manifest names {} instead of {NATIVE_HOST_NAME}", m["name"]));
    }
    let path = PathBuf::from(m["path"].as_str().unwrap_or_default());
    if !path.is_file() {
        return Err(format!("manifest points at {}, which does not exist", path.display()));
    }
    let expected = manifest_json(target.browser, &path);
    let key = if target.browser.is_firefox() { "allowed_extensions" } else { "allowed_origins" };
    if m[key] != expected[key] {
        return Err(format!("manifest does not allow the Nova extension ({key} is {})", m[key]));
    }
    if let Some(reg_key) = &target.registry_key {
        let value = registry.default_value(reg_key).map_err(|e| e.to_string())?;
        windows::check_registry_value(reg_key, value.as_deref(), &target.manifest)?;
    }
    Ok(path)
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    /// The registry as a map, so that Windows targets round-trip on any OS.
    #[derive(Default)]
    pub(super) struct FakeRegistry(pub(super) HashMap<String, String>);

    impl Registry for FakeRegistry {
        fn set_default(&mut self, key: &str, value: &Path) -> Result<(), Error> {
            self.0.insert(key.to_owned(), value.display().to_string());
            Ok(())
        }
        fn default_value(&self, key: &str) -> Result<Option<String>, Error> {
            Ok(self.0.get(key).cloned())
        }
        fn delete(&mut self, key: &str) -> Result<bool, Error> {
            Ok(self.0.remove(key).is_some())
        }
    }

    /// A probe that sees exactly these paths and programs.
    pub(super) fn probe_seeing<'a>(paths: &'a [PathBuf], programs: &'a [&'a str]) -> Probe<'a> {
        Probe {
            exists: Box::new(move |p: &Path| paths.iter().any(|q| q == p)),
            on_path: Box::new(move |name: &str| programs.contains(&name)),
        }
    }

    pub(super) fn env(os: Os, home: &Path) -> Env {
        Env {
            os,
            home: home.to_path_buf(),
            xdg_config_home: None,
            local_app_data: None,
            app_data: None,
            program_files: Vec::new(),
        }
    }

    fn labels(targets: &[Target]) -> Vec<String> {
        targets.iter().map(Target::label).collect()
    }

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
    fn os_is_chosen_by_its_std_name() {
        assert_eq!(Os::from_name("linux"), Some(Os::Linux));
        assert_eq!(Os::from_name("macos"), Some(Os::Macos));
        assert_eq!(Os::from_name("windows"), Some(Os::Windows));
        assert_eq!(Os::from_name("freebsd"), None);
        assert_eq!(Os::current(), Os::from_name(std::env::consts::OS));
    }

    #[test]
    fn install_check_uninstall_round_trip() {
        let tmp = tempfile::tempdir().expect("tmp");
        let host = tmp.path().join("nova");
        std::fs::write(&host, b"#!/bin/sh\n").expect("host");
        let mut reg = FakeRegistry::default();
        let target = profile_target(&tmp.path().join("profile"));
        assert!(check(&target, &reg).is_err());
        install(&target, &host, &mut reg).expect("install");
        assert_eq!(check(&target, &reg).expect("valid"), host);
        std::fs::remove_file(&host).expect("rm");
        assert!(check(&target, &reg).expect_err("dangling").contains("does not exist"));
        assert_eq!(
            uninstall(&target, &mut reg).expect("uninstall"),
            Removed { manifest: true, registry_key: false }
        );
        assert_eq!(uninstall(&target, &mut reg).expect("again"), Removed::default());
    }

    /// Every location of every browser, on every OS, installs into a temporary home, checks
    /// clean and uninstalls without leaving a manifest or a registry key.
    #[test]
    fn every_location_round_trips_in_a_temporary_home_on_every_os() {
        for os in [Os::Linux, Os::Macos, Os::Windows] {
            let tmp = tempfile::tempdir().expect("tmp");
            let host = tmp.path().join("bin").join("nova");
            std::fs::create_dir_all(host.parent().expect("bin")).expect("bin");
            std::fs::write(&host, b"#!/bin/sh\n").expect("host");
            let env = Env {
                local_app_data: Some(tmp.path().join("Local")),
                app_data: Some(tmp.path().join("Roaming")),
                ..env(os, &tmp.path().join("home"))
            };
            let mut reg = FakeRegistry::default();
            let targets = select_for_uninstall(&env, &[]);
            for t in &targets {
                assert!(
                    t.manifest.starts_with(tmp.path()),
                    "{os:?}: {} escapes the temp dirs",
                    t.manifest.display()
                );
                install(t, &host, &mut reg).expect("install");
            }
            for t in &targets {
                assert_eq!(check(t, &reg), Ok(host.clone()), "{os:?} {}", t.label());
            }
            assert_eq!(reg.0.len(), if os == Os::Windows { Browser::ALL.len() } else { 0 });
            for t in &targets {
                let removed = uninstall(t, &mut reg).expect("uninstall");
                assert_eq!(removed, Removed { manifest: true, registry_key: t.registry_key.is_some() });
                assert!(!t.manifest.exists());
            }
            assert!(reg.0.is_empty(), "{os:?}: keys left: {:?}", reg.0);
        }
    }

    #[test]
    fn doctor_reports_a_registry_key_that_does_not_name_the_manifest() {
        let tmp = tempfile::tempdir().expect("tmp");
        let host = tmp.path().join("nova.exe");
        std::fs::write(&host, b"MZ").expect("host");
        let env = Env { local_app_data: Some(tmp.path().join("Local")), ..env(Os::Windows, tmp.path()) };
        let target = select_for_uninstall(&env, &[Browser::Edge]).remove(0);
        let mut reg = FakeRegistry::default();
        install(&target, &host, &mut reg).expect("install");
        let key = target.registry_key.clone().expect("key");
        reg.0.insert(key.clone(), r"C:\elsewhere\io.nova.host.json".into());
        let problem = check(&target, &reg).expect_err("stale key");
        assert!(problem.contains("elsewhere") && problem.contains(&key), "{problem}");
        reg.0.remove(&key);
        assert!(check(&target, &reg).expect_err("no key").contains("missing"));
    }

    #[test]
    fn with_nothing_named_only_installed_variants_get_a_manifest() {
        let home = Path::new("/home/u");
        let env = env(Os::Linux, home);
        let seen = [home.join(".var/app/org.chromium.Chromium")];
        let picked = select_for_install(&env, &[], &probe_seeing(&seen, &["firefox"]));
        assert_eq!(labels(&picked), ["chromium (flatpak)", "firefox"]);
        assert!(select_for_install(&env, &[], &probe_seeing(&[], &[])).is_empty());
    }

    #[test]
    fn a_named_browser_gets_its_native_manifest_and_its_installed_sandboxed_ones_only() {
        let home = Path::new("/home/u");
        let env = env(Os::Linux, home);
        let seen = [home.join("snap/firefox"), home.join(".var/app/org.chromium.Chromium")];
        let probe = probe_seeing(&seen, &["google-chrome"]);
        // Firefox is named: native (though not detected) and the installed snap, not the flatpak;
        // Chromium's flatpak and Chrome are installed but not named.
        let picked = select_for_install(&env, &[Browser::Firefox, Browser::Firefox], &probe);
        assert_eq!(labels(&picked), ["firefox", "firefox (snap)"]);
        assert_eq!(picked[0].manifest, home.join(".mozilla/native-messaging-hosts/io.nova.host.json"));
    }

    #[test]
    fn uninstall_covers_every_variant_of_the_named_browsers() {
        let env = env(Os::Linux, Path::new("/home/u"));
        assert_eq!(
            labels(&select_for_uninstall(&env, &[Browser::Chromium])),
            ["chromium", "chromium (flatpak)", "chromium (snap)"]
        );
        let all = select_for_uninstall(&env, &[]);
        assert_eq!(all.len(), 5 + 5 + 2, "{:?}", labels(&all));
    }

    #[test]
    fn doctor_looks_at_detected_variants_and_at_any_manifest_already_there() {
        let home = Path::new("/Users/u");
        let env = env(Os::Macos, home);
        let stray =
            home.join("Library/Application Support/Microsoft Edge/NativeMessagingHosts/io.nova.host.json");
        let seen = [PathBuf::from("/Applications/Firefox.app"), stray];
        assert_eq!(labels(&select_for_doctor(&env, &probe_seeing(&seen, &[]))), ["edge", "firefox"]);
    }

    #[test]
    fn any_one_sign_shows_a_variant_is_installed() {
        let seen = [PathBuf::from("/opt/app")];
        let probe = probe_seeing(&seen, &["firefox"]);
        assert!(probe.sees_any(&[Sign::Exists("/nope".into()), Sign::OnPath("firefox")]));
        assert!(probe.sees_any(&[Sign::Exists("/opt/app".into()), Sign::OnPath("chromium")]));
        assert!(!probe.sees_any(&[Sign::Exists("/nope".into()), Sign::OnPath("chromium")]));
        assert!(!probe.sees_any(&[]));
        assert!(!Probe::system().sees_any(&[Sign::OnPath("no-such-program-nova-test")]));
    }
}
