//! Linux: per-user manifest directories of native, Flatpak and Snap browsers.
//!
//! Natively installed Chromium-family browsers read `$XDG_CONFIG_HOME/<config dir>/NativeMessagingHosts`
//! (`~/.config` by default; developer.chrome.com, "Native messaging host location"); Firefox reads
//! `~/.mozilla/native-messaging-hosts` (MDN, "Native manifests", "Manifest location").
//!
//! Sandboxed packages keep their configuration elsewhere. Flatpak gives each app its own
//! `XDG_CONFIG_HOME`, `~/.var/app/<app id>/config`, and persists Firefox's `~/.mozilla` as
//! `~/.var/app/org.mozilla.firefox/.mozilla`; the Chromium snap keeps its profile in
//! `~/snap/chromium/common/chromium`, the Firefox snap in `~/snap/firefox/common/.mozilla`.
//!
//! Caveat: a sandboxed browser can find the manifest and still fail to start the host, which
//! lives outside its sandbox. A Flatpak browser starts it inside the sandbox, where `nova` may be
//! unreachable; the Chromium snap's confinement forbids it; the Firefox snap asks the
//! WebExtensions portal, which reads the *native* `~/.mozilla/native-messaging-hosts`, so an
//! installed Firefox snap is also a sign for the native Firefox location. Nova writes the
//! sandboxed locations anyway: they cost nothing and work where the sandbox allows it.

use std::path::{Path, PathBuf};

use super::model::{Browser, Env, Location, Sign, Target, Variant, manifest_file, under};

/// The directory under `XDG_CONFIG_HOME` that holds a Chromium-family browser's profiles.
fn config_dir(browser: Browser) -> &'static [&'static str] {
    match browser {
        Browser::Chromium => &["chromium"],
        Browser::Chrome => &["google-chrome"],
        Browser::Edge => &["microsoft-edge"],
        Browser::Brave => &["BraveSoftware", "Brave-Browser"],
        Browser::Firefox => &[],
    }
}

/// Program names distribution packages put on `PATH`.
fn programs(browser: Browser) -> &'static [&'static str] {
    match browser {
        Browser::Chromium => &["chromium", "chromium-browser"],
        Browser::Chrome => &["google-chrome", "google-chrome-stable"],
        Browser::Edge => &["microsoft-edge", "microsoft-edge-stable"],
        Browser::Brave => &["brave-browser", "brave"],
        Browser::Firefox => &["firefox", "firefox-esr"],
    }
}

/// The Flathub app id.
fn flatpak_id(browser: Browser) -> &'static str {
    match browser {
        Browser::Chromium => "org.chromium.Chromium",
        Browser::Chrome => "com.google.Chrome",
        Browser::Edge => "com.microsoft.Edge",
        Browser::Brave => "com.brave.Browser",
        Browser::Firefox => "org.mozilla.firefox",
    }
}

/// The snap name, for the browsers whose snap keeps its profile in a fixed place (`common`;
/// other snaps keep it per revision).
fn snap_name(browser: Browser) -> Option<&'static str> {
    match browser {
        Browser::Chromium => Some("chromium"),
        Browser::Firefox => Some("firefox"),
        Browser::Chrome | Browser::Edge | Browser::Brave => None,
    }
}

/// `<profile root>/NativeMessagingHosts` or, for Firefox, `<home>/.mozilla/native-messaging-hosts`.
fn hosts_dir(browser: Browser, config: &Path, home: &Path) -> PathBuf {
    match browser {
        Browser::Firefox => home.join(".mozilla").join("native-messaging-hosts"),
        b => under(config, config_dir(b)).join("NativeMessagingHosts"),
    }
}

fn location(browser: Browser, variant: Variant, dir: PathBuf, signs: Vec<Sign>) -> Location {
    Location {
        target: Target { browser, variant, manifest: dir.join(manifest_file()), registry_key: None },
        signs,
    }
}

/// The native location of `browser`, then its Flatpak and (Chromium, Firefox) Snap locations.
pub(super) fn locations(browser: Browser, env: &Env) -> Vec<Location> {
    let home = &env.home;
    let config =
        env.xdg_config_home.clone().filter(|p| p.is_absolute()).unwrap_or_else(|| home.join(".config"));

    let native_dir = hosts_dir(browser, &config, home);
    let mut native_signs: Vec<Sign> = programs(browser).iter().map(|p| Sign::OnPath(p)).collect();
    // The profile root (`~/.config/chromium`, `~/.mozilla`) exists once the browser has run.
    native_signs.extend(native_dir.parent().map(|root| Sign::Exists(root.to_path_buf())));
    if let Some(snap) = snap_name(browser).filter(|_| browser.is_firefox()) {
        // The Firefox snap reads the native location through the WebExtensions portal.
        native_signs.push(Sign::Exists(under(Path::new("/snap"), &[snap])));
    }
    let mut out = vec![location(browser, Variant::Native, native_dir, native_signs)];

    let app = flatpak_id(browser);
    let app_home = under(home, &[".var", "app", app]);
    out.push(location(
        browser,
        Variant::Flatpak,
        hosts_dir(browser, &app_home.join("config"), &app_home),
        vec![
            // Installed per user, system-wide, or run at least once.
            Sign::Exists(under(home, &[".local", "share", "flatpak", "app", app])),
            Sign::Exists(under(Path::new("/var/lib/flatpak/app"), &[app])),
            Sign::Exists(app_home.clone()),
        ],
    ));

    if let Some(snap) = snap_name(browser) {
        let common = under(home, &["snap", snap, "common"]);
        out.push(location(
            browser,
            Variant::Snap,
            hosts_dir(browser, &common, &common),
            vec![
                Sign::Exists(under(Path::new("/snap"), &[snap])),
                Sign::Exists(under(home, &["snap", snap])),
            ],
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::model::{Os, Probe};
    use super::super::tests::{env, probe_seeing};
    use super::*;

    fn manifest(browser: Browser, variant: Variant, env: &Env) -> PathBuf {
        let loc = locations(browser, env).into_iter().find(|l| l.target.variant == variant);
        loc.expect("location").target.manifest
    }

    fn installed(browser: Browser, variant: Variant, env: &Env, probe: &Probe) -> bool {
        let loc = locations(browser, env).into_iter().find(|l| l.target.variant == variant);
        probe.sees_any(&loc.expect("location").signs)
    }

    #[test]
    fn native_manifests_go_under_xdg_config_home_and_firefox_under_dot_mozilla() {
        let home = Path::new("/home/u");
        let default = env(Os::Linux, home);
        let table = [
            (Browser::Chromium, "/home/u/.config/chromium/NativeMessagingHosts"),
            (Browser::Chrome, "/home/u/.config/google-chrome/NativeMessagingHosts"),
            (Browser::Edge, "/home/u/.config/microsoft-edge/NativeMessagingHosts"),
            (Browser::Brave, "/home/u/.config/BraveSoftware/Brave-Browser/NativeMessagingHosts"),
            (Browser::Firefox, "/home/u/.mozilla/native-messaging-hosts"),
        ];
        for (browser, dir) in table {
            assert_eq!(
                manifest(browser, Variant::Native, &default),
                Path::new(dir).join("io.nova.host.json")
            );
        }

        let xdg = Env { xdg_config_home: Some("/cfg".into()), ..default.clone() };
        assert_eq!(
            manifest(Browser::Brave, Variant::Native, &xdg),
            Path::new("/cfg/BraveSoftware/Brave-Browser/NativeMessagingHosts/io.nova.host.json")
        );
        assert_eq!(
            manifest(Browser::Firefox, Variant::Native, &xdg),
            Path::new("/home/u/.mozilla/native-messaging-hosts/io.nova.host.json")
        );
        // The XDG spec says to ignore a relative XDG_CONFIG_HOME.
        let relative = Env { xdg_config_home: Some("cfg".into()), ..default };
        assert_eq!(
            manifest(Browser::Chromium, Variant::Native, &relative),
            Path::new("/home/u/.config/chromium/NativeMessagingHosts/io.nova.host.json")
        );
    }

    #[test]
    fn flatpak_and_snap_manifests_go_inside_their_sandboxes() {
        let env = Env { xdg_config_home: Some("/cfg".into()), ..env(Os::Linux, Path::new("/home/u")) };
        let table = [
            (
                Browser::Chromium,
                Variant::Flatpak,
                "/home/u/.var/app/org.chromium.Chromium/config/chromium/NativeMessagingHosts",
            ),
            (
                Browser::Chrome,
                Variant::Flatpak,
                "/home/u/.var/app/com.google.Chrome/config/google-chrome/NativeMessagingHosts",
            ),
            (
                Browser::Edge,
                Variant::Flatpak,
                "/home/u/.var/app/com.microsoft.Edge/config/microsoft-edge/NativeMessagingHosts",
            ),
            (
                Browser::Brave,
                Variant::Flatpak,
                "/home/u/.var/app/com.brave.Browser/config/BraveSoftware/Brave-Browser/NativeMessagingHosts",
            ),
            (
                Browser::Firefox,
                Variant::Flatpak,
                "/home/u/.var/app/org.mozilla.firefox/.mozilla/native-messaging-hosts",
            ),
            (Browser::Chromium, Variant::Snap, "/home/u/snap/chromium/common/chromium/NativeMessagingHosts"),
            (Browser::Firefox, Variant::Snap, "/home/u/snap/firefox/common/.mozilla/native-messaging-hosts"),
        ];
        for (browser, variant, dir) in table {
            assert_eq!(
                manifest(browser, variant, &env),
                Path::new(dir).join("io.nova.host.json"),
                "{browser:?}"
            );
        }
        for browser in [Browser::Chrome, Browser::Edge, Browser::Brave] {
            assert!(locations(browser, &env).iter().all(|l| l.target.variant != Variant::Snap));
        }
        assert!(
            Browser::ALL.iter().flat_map(|b| locations(*b, &env)).all(|l| l.target.registry_key.is_none())
        );
    }

    #[test]
    fn native_browsers_are_detected_by_program_on_path_or_profile_root() {
        let home = Path::new("/home/u");
        let env = env(Os::Linux, home);
        let nothing = probe_seeing(&[], &[]);
        assert!(Browser::ALL.iter().all(|b| !installed(*b, Variant::Native, &env, &nothing)));

        let on_path = probe_seeing(&[], &["chromium-browser", "firefox-esr"]);
        assert!(installed(Browser::Chromium, Variant::Native, &env, &on_path));
        assert!(installed(Browser::Firefox, Variant::Native, &env, &on_path));
        assert!(!installed(Browser::Chrome, Variant::Native, &env, &on_path));

        let profiles = [home.join(".config/BraveSoftware/Brave-Browser"), home.join(".mozilla")];
        let by_profile = probe_seeing(&profiles, &[]);
        assert!(installed(Browser::Brave, Variant::Native, &env, &by_profile));
        assert!(installed(Browser::Firefox, Variant::Native, &env, &by_profile));
        assert!(!installed(Browser::Edge, Variant::Native, &env, &by_profile));
        // A native browser does not make its sandboxed variants installed.
        assert!(!installed(Browser::Firefox, Variant::Flatpak, &env, &by_profile));
    }

    #[test]
    fn sandboxed_variants_are_detected_by_their_app_directories() {
        let home = Path::new("/home/u");
        let env = env(Os::Linux, home);
        let cases = [
            (home.join(".var/app/com.google.Chrome"), Browser::Chrome, Variant::Flatpak),
            (PathBuf::from("/var/lib/flatpak/app/com.microsoft.Edge"), Browser::Edge, Variant::Flatpak),
            (home.join(".local/share/flatpak/app/com.brave.Browser"), Browser::Brave, Variant::Flatpak),
            (PathBuf::from("/snap/chromium"), Browser::Chromium, Variant::Snap),
            (home.join("snap/firefox"), Browser::Firefox, Variant::Snap),
        ];
        for (dir, browser, variant) in cases {
            let seen = [dir];
            let probe = probe_seeing(&seen, &["chromium", "firefox"]);
            for b in Browser::ALL {
                for v in [Variant::Flatpak, Variant::Snap] {
                    if locations(b, &env).iter().any(|l| l.target.variant == v) {
                        assert_eq!(
                            installed(b, v, &env, &probe),
                            (b, v) == (browser, variant),
                            "{b:?} {v:?}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn the_firefox_snap_also_marks_the_native_location_its_portal_reads() {
        let env = env(Os::Linux, Path::new("/home/u"));
        let seen = [PathBuf::from("/snap/firefox")];
        let probe = probe_seeing(&seen, &[]);
        assert!(installed(Browser::Firefox, Variant::Native, &env, &probe));
        assert!(installed(Browser::Firefox, Variant::Snap, &env, &probe));
        let seen = [PathBuf::from("/snap/chromium")];
        assert!(!installed(Browser::Chromium, Variant::Native, &env, &probe_seeing(&seen, &[])));
    }
}
