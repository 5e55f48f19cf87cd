//! Windows: browsers find manifests through `HKEY_CURRENT_USER` registry keys whose default
//! value is the manifest's path (developer.chrome.com, "Native messaging host location"; MDN,
//! "Native manifests"). Nova keeps the files in `%LOCALAPPDATA%\Nova\NativeMessagingHosts\<browser>`
//! (one directory per browser: Firefox and the Chromium family need different manifests) and
//! writes the keys with `reg.exe`. The argument lists are built here, purely, and run by
//! [`run_reg`] only on Windows.
//!
//! Brave on Windows has also been seen reading Chrome's key; naming both browsers covers that.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use nova_shared::NATIVE_HOST_NAME;

use super::model::{Browser, Env, Error, Location, Os, Sign, Target, Variant, manifest_file, under};

/// The hive every key lives in: per user, no elevation needed.
pub(super) const HIVE: &str = "HKCU";

/// The key (under [`HIVE`]) whose subkeys name native-messaging manifests.
fn hosts_key(browser: Browser) -> &'static str {
    match browser {
        Browser::Chromium => r"Software\Chromium\NativeMessagingHosts",
        Browser::Chrome => r"Software\Google\Chrome\NativeMessagingHosts",
        Browser::Edge => r"Software\Microsoft\Edge\NativeMessagingHosts",
        Browser::Brave => r"Software\BraveSoftware\Brave-Browser\NativeMessagingHosts",
        Browser::Firefox => r"Software\Mozilla\NativeMessagingHosts",
    }
}

fn local_app_data(env: &Env) -> PathBuf {
    env.local_app_data.clone().unwrap_or_else(|| under(&env.home, &["AppData", "Local"]))
}

fn app_data(env: &Env) -> PathBuf {
    env.app_data.clone().unwrap_or_else(|| under(&env.home, &["AppData", "Roaming"]))
}

/// The profile directory that exists once the browser has run for this user.
fn profile_dir(browser: Browser, env: &Env) -> PathBuf {
    match browser {
        Browser::Chromium => under(&local_app_data(env), &["Chromium", "User Data"]),
        Browser::Chrome => under(&local_app_data(env), &["Google", "Chrome", "User Data"]),
        Browser::Edge => under(&local_app_data(env), &["Microsoft", "Edge", "User Data"]),
        Browser::Brave => under(&local_app_data(env), &["BraveSoftware", "Brave-Browser", "User Data"]),
        Browser::Firefox => under(&app_data(env), &["Mozilla", "Firefox"]),
    }
}

/// The browser's program, installed for every user (under each Program Files directory) or for
/// this user only (under `%LOCALAPPDATA%`): a browser installed but never started has no
/// profile directory yet.
fn programs(browser: Browser, env: &Env) -> Vec<PathBuf> {
    let (dir, exe): (&[&str], &str) = match browser {
        Browser::Chromium => (&["Chromium", "Application"], "chrome.exe"),
        Browser::Chrome => (&["Google", "Chrome", "Application"], "chrome.exe"),
        Browser::Edge => (&["Microsoft", "Edge", "Application"], "msedge.exe"),
        Browser::Brave => (&["BraveSoftware", "Brave-Browser", "Application"], "brave.exe"),
        Browser::Firefox => (&["Mozilla Firefox"], "firefox.exe"),
    };
    env.program_files.iter().chain([&local_app_data(env)]).map(|base| under(base, dir).join(exe)).collect()
}

/// The one location of `browser`: its manifest file under Nova's directory and its key.
pub(super) fn locations(browser: Browser, env: &Env) -> Vec<Location> {
    let manifest =
        under(&local_app_data(env), &["Nova", "NativeMessagingHosts", browser.name()]).join(manifest_file());
    vec![Location {
        target: Target {
            browser,
            variant: Variant::Native,
            manifest,
            registry_key: Some(format!(r"{}\{NATIVE_HOST_NAME}", hosts_key(browser))),
        },
        signs: std::iter::once(profile_dir(browser, env))
            .chain(programs(browser, env))
            .map(Sign::Exists)
            .collect(),
    }]
}

fn full_key(key: &str) -> OsString {
    format!(r"{HIVE}\{key}").into()
}

/// `reg add HKCU\<key> /ve /t REG_SZ /d <manifest> /f`: sets the default value, creating the
/// key, overwriting without asking.
pub(super) fn reg_add_args(key: &str, manifest: &Path) -> Vec<OsString> {
    let mut args: Vec<OsString> = vec!["add".into(), full_key(key)];
    args.extend(["/ve", "/t", "REG_SZ", "/d"].map(OsString::from));
    args.push(manifest.as_os_str().to_owned());
    args.push("/f".into());
    args
}

/// `reg delete HKCU\<key> /f`: deletes the key without asking.
pub(super) fn reg_delete_args(key: &str) -> Vec<OsString> {
    vec!["delete".into(), full_key(key), "/f".into()]
}

/// `reg query HKCU\<key> /ve`: prints the default value.
pub(super) fn reg_query_args(key: &str) -> Vec<OsString> {
    vec!["query".into(), full_key(key), "/ve".into()]
}

/// The default value in `reg query ... /ve` output: the line
/// `    (Default)    REG_SZ    C:\...\io.nova.host.json` (the `(Default)` label is localized,
/// the type is not).
pub(super) fn parse_default_value(stdout: &str) -> Option<String> {
    stdout.lines().find_map(|line| {
        let (_, value) = line.split_once("REG_SZ")?;
        Some(value.trim().to_owned())
    })
}

/// Whether the key's default value names `manifest` (Windows paths compare without case).
pub(super) fn check_registry_value(key: &str, value: Option<&str>, manifest: &Path) -> Result<(), String> {
    let full = format!(r"{HIVE}\{key}");
    match value {
        None => Err(format!("registry key {full} is missing")),
        Some(v) if v.eq_ignore_ascii_case(&manifest.display().to_string()) => Ok(()),
        Some(v) => Err(format!("registry key {full} names {v}, not {}", manifest.display())),
    }
}

/// Runs `reg.exe` with `args` and returns its stdout; refuses off Windows. reg.exe prints in
/// the console code page, so a path outside ASCII may not read back as written.
pub(super) fn run_reg(key: &str, args: &[OsString]) -> Result<String, Error> {
    let fail = |message: String| Error::Registry { key: format!(r"{HIVE}\{key}"), message };
    if Os::current() != Some(Os::Windows) {
        return Err(fail("the registry exists only on Windows".into()));
    }
    let out = std::process::Command::new("reg")
        .args(args)
        .output()
        .map_err(|e| fail(format!("cannot run reg.exe: {e}")))?;
    if !out.status.success() {
        return Err(fail(format!("reg.exe failed: {}", String::from_utf8_lossy(&out.stderr).trim())));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

#[cfg(test)]
mod tests {
    use super::super::tests::{env, probe_seeing};
    use super::*;

    fn strings(args: &[OsString]) -> Vec<&str> {
        args.iter().map(|a| a.to_str().expect("utf-8")).collect()
    }

    /// The path's components after `base`, as strings (Windows paths built on any OS).
    fn parts_after<'a>(path: &'a Path, base: &Path) -> Vec<&'a str> {
        let rest = path.strip_prefix(base).expect("under base");
        rest.components().map(|c| c.as_os_str().to_str().expect("utf-8")).collect()
    }

    fn win_env() -> Env {
        Env {
            local_app_data: Some(r"C:\Users\u\AppData\Local".into()),
            app_data: Some(r"C:\Users\u\AppData\Roaming".into()),
            ..env(Os::Windows, Path::new(r"C:\Users\u"))
        }
    }

    #[test]
    fn manifests_go_under_local_app_data_and_keys_under_each_browsers_hosts_key() {
        let env = win_env();
        let local = env.local_app_data.clone().expect("local");
        let table = [
            (Browser::Chromium, r"Software\Chromium\NativeMessagingHosts\io.nova.host"),
            (Browser::Chrome, r"Software\Google\Chrome\NativeMessagingHosts\io.nova.host"),
            (Browser::Edge, r"Software\Microsoft\Edge\NativeMessagingHosts\io.nova.host"),
            (Browser::Brave, r"Software\BraveSoftware\Brave-Browser\NativeMessagingHosts\io.nova.host"),
            (Browser::Firefox, r"Software\Mozilla\NativeMessagingHosts\io.nova.host"),
        ];
        for (browser, key) in table {
            let locs = locations(browser, &env);
            assert_eq!(locs.len(), 1);
            let t = &locs[0].target;
            assert_eq!(
                parts_after(&t.manifest, &local),
                ["Nova", "NativeMessagingHosts", browser.name(), "io.nova.host.json"]
            );
            assert_eq!(t.registry_key.as_deref(), Some(key));
        }
    }

    #[test]
    fn local_app_data_defaults_under_the_profile_directory() {
        let env = env(Os::Windows, Path::new(r"C:\Users\u"));
        let t = locations(Browser::Chrome, &env).remove(0).target;
        assert_eq!(
            parts_after(&t.manifest, &env.home),
            ["AppData", "Local", "Nova", "NativeMessagingHosts", "chrome", "io.nova.host.json"]
        );
    }

    #[test]
    fn browsers_are_detected_by_their_user_data_directories() {
        let env = win_env();
        let local = env.local_app_data.clone().expect("local");
        let roaming = env.app_data.clone().expect("roaming");
        let cases = [
            (under(&local, &["Google", "Chrome", "User Data"]), Browser::Chrome),
            (under(&local, &["Chromium", "User Data"]), Browser::Chromium),
            (under(&local, &["Microsoft", "Edge", "User Data"]), Browser::Edge),
            (under(&local, &["BraveSoftware", "Brave-Browser", "User Data"]), Browser::Brave),
            (under(&roaming, &["Mozilla", "Firefox"]), Browser::Firefox),
        ];
        for (dir, browser) in cases {
            let seen = [dir];
            let probe = probe_seeing(&seen, &["chrome.exe", "firefox.exe"]);
            for b in Browser::ALL {
                let found = locations(b, &env).iter().any(|l| probe.sees_any(&l.signs));
                assert_eq!(found, b == browser, "{b:?}");
            }
        }
    }

    #[test]
    fn browsers_installed_but_never_started_are_detected_by_their_programs() {
        let env = Env {
            program_files: vec![r"C:\Program Files".into(), r"C:\Program Files (x86)".into()],
            ..win_env()
        };
        let local = env.local_app_data.clone().expect("local");
        let (pf, pf86) = (Path::new(r"C:\Program Files"), Path::new(r"C:\Program Files (x86)"));
        let cases = [
            (under(pf, &["Google", "Chrome", "Application", "chrome.exe"]), Browser::Chrome),
            (under(&local, &["Google", "Chrome", "Application", "chrome.exe"]), Browser::Chrome),
            (under(pf86, &["Microsoft", "Edge", "Application", "msedge.exe"]), Browser::Edge),
            (under(pf, &["BraveSoftware", "Brave-Browser", "Application", "brave.exe"]), Browser::Brave),
            (under(&local, &["Chromium", "Application", "chrome.exe"]), Browser::Chromium),
            (under(pf, &["Mozilla Firefox", "firefox.exe"]), Browser::Firefox),
            (under(&local, &["Mozilla Firefox", "firefox.exe"]), Browser::Firefox),
        ];
        for (program, browser) in cases {
            let seen: [PathBuf; 1] = [program];
            let probe = probe_seeing(&seen, &[]);
            for b in Browser::ALL {
                let found = locations(b, &env).iter().any(|l| probe.sees_any(&l.signs));
                assert_eq!(found, b == browser, "{b:?} by {}", seen[0].display());
            }
        }
    }

    #[test]
    fn reg_exe_argument_lists() {
        let key = r"Software\Google\Chrome\NativeMessagingHosts\io.nova.host";
        let manifest =
            Path::new(r"C:\Users\u\AppData\Local\Nova\NativeMessagingHosts\chrome\io.nova.host.json");
        assert_eq!(
            strings(&reg_add_args(key, manifest)),
            [
                "add",
                r"HKCU\Software\Google\Chrome\NativeMessagingHosts\io.nova.host",
                "/ve",
                "/t",
                "REG_SZ",
                "/d",
                r"C:\Users\u\AppData\Local\Nova\NativeMessagingHosts\chrome\io.nova.host.json",
                "/f",
            ]
        );
        assert_eq!(
            strings(&reg_delete_args(key)),
            ["delete", r"HKCU\Software\Google\Chrome\NativeMessagingHosts\io.nova.host", "/f"]
        );
        assert_eq!(
            strings(&reg_query_args(key)),
            ["query", r"HKCU\Software\Google\Chrome\NativeMessagingHosts\io.nova.host", "/ve"]
        );
    }

    #[test]
    fn the_default_value_is_read_from_reg_query_output_in_any_language() {
        let english = "\r\nHKEY_CURRENT_USER\\Software\\Mozilla\\NativeMessagingHosts\\io.nova.host\r\n    \
                       (Default)    REG_SZ    C:\\Users\\u\\My Files\\io.nova.host.json\r\n\r\n";
        assert_eq!(parse_default_value(english).as_deref(), Some(r"C:\Users\u\My Files\io.nova.host.json"));
        let german = "HKEY_CURRENT_USER\\Software\\Mozilla\\NativeMessagingHosts\\io.nova.host\n    \
                      (Standard)    REG_SZ    D:\\n.json\n";
        assert_eq!(parse_default_value(german).as_deref(), Some(r"D:\n.json"));
        assert_eq!(
            parse_default_value("ERROR: The system was unable to find the specified registry key"),
            None
        );
    }

    #[test]
    fn the_key_must_name_the_manifest() {
        let manifest =
            Path::new(r"C:\Users\u\AppData\Local\Nova\NativeMessagingHosts\edge\io.nova.host.json");
        let key = r"Software\Microsoft\Edge\NativeMessagingHosts\io.nova.host";
        assert_eq!(check_registry_value(key, Some(&manifest.display().to_string()), manifest), Ok(()));
        let upper = manifest.display().to_string().to_uppercase();
        assert_eq!(check_registry_value(key, Some(&upper), manifest), Ok(()));
        assert!(check_registry_value(key, None, manifest).expect_err("missing").contains("missing"));
        let other = check_registry_value(key, Some(r"C:\old.json"), manifest).expect_err("other");
        assert!(other.contains(r"HKCU\Software\Microsoft\Edge") && other.contains(r"C:\old.json"), "{other}");
    }

    #[test]
    fn reg_exe_is_never_run_off_windows() {
        if Os::current() != Some(Os::Windows) {
            let err = run_reg("Software\\Nova\\Test", &reg_query_args("Software\\Nova\\Test"))
                .expect_err("off windows");
            assert!(err.to_string().contains("only on Windows"), "{err}");
        }
    }
}
