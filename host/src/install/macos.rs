//! macOS: per-user manifest directories under `~/Library/Application Support`
//! (developer.chrome.com, "Native messaging host location"; MDN, "Native manifests").

use std::path::Path;

use super::model::{Browser, Env, Location, Sign, Target, Variant, manifest_file, under};

/// The directory under Application Support whose `NativeMessagingHosts` the browser reads.
fn manifest_root(browser: Browser) -> &'static [&'static str] {
    match browser {
        Browser::Chromium => &["Chromium"],
        Browser::Chrome => &["Google", "Chrome"],
        Browser::Edge => &["Microsoft Edge"],
        Browser::Brave => &["BraveSoftware", "Brave-Browser"],
        Browser::Firefox => &["Mozilla"],
    }
}

/// The directory under Application Support that holds the browser's profiles; for the
/// Chromium family the same as [`manifest_root`], Firefox keeps its profiles apart from Mozilla's
/// shared directory.
fn profile_root(browser: Browser) -> &'static [&'static str] {
    match browser {
        Browser::Firefox => &["Firefox"],
        b => manifest_root(b),
    }
}

/// The application bundle.
fn app(browser: Browser) -> &'static str {
    match browser {
        Browser::Chromium => "Chromium.app",
        Browser::Chrome => "Google Chrome.app",
        Browser::Edge => "Microsoft Edge.app",
        Browser::Brave => "Brave Browser.app",
        Browser::Firefox => "Firefox.app",
    }
}

/// The one location of `browser`: macOS browsers are not sandboxed variants of themselves.
pub(super) fn locations(browser: Browser, env: &Env) -> Vec<Location> {
    let support = under(&env.home, &["Library", "Application Support"]);
    let manifest = under(&support, manifest_root(browser)).join("NativeMessagingHosts").join(manifest_file());
    let signs = vec![
        Sign::Exists(Path::new("/Applications").join(app(browser))),
        Sign::Exists(env.home.join("Applications").join(app(browser))),
        Sign::Exists(under(&support, profile_root(browser))),
    ];
    vec![Location {
        target: Target { browser, variant: Variant::Native, manifest, registry_key: None },
        signs,
    }]
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::super::model::{Os, Probe};
    use super::super::tests::{env, probe_seeing};
    use super::*;

    fn installed(browser: Browser, env: &Env, probe: &Probe) -> bool {
        locations(browser, env).iter().any(|l| probe.sees_any(&l.signs))
    }

    #[test]
    fn manifests_go_under_application_support() {
        let env = env(Os::Macos, Path::new("/Users/u"));
        let table = [
            (Browser::Chromium, "/Users/u/Library/Application Support/Chromium/NativeMessagingHosts"),
            (Browser::Chrome, "/Users/u/Library/Application Support/Google/Chrome/NativeMessagingHosts"),
            (Browser::Edge, "/Users/u/Library/Application Support/Microsoft Edge/NativeMessagingHosts"),
            (
                Browser::Brave,
                "/Users/u/Library/Application Support/BraveSoftware/Brave-Browser/NativeMessagingHosts",
            ),
            (Browser::Firefox, "/Users/u/Library/Application Support/Mozilla/NativeMessagingHosts"),
        ];
        for (browser, dir) in table {
            let locs = locations(browser, &env);
            assert_eq!(locs.len(), 1);
            let t = &locs[0].target;
            assert_eq!(t.manifest, Path::new(dir).join("io.nova.host.json"));
            assert_eq!((t.variant, t.registry_key.as_deref()), (Variant::Native, None));
        }
    }

    #[test]
    fn browsers_are_detected_by_app_bundle_or_profile_directory() {
        let home = Path::new("/Users/u");
        let env = env(Os::Macos, home);
        assert!(Browser::ALL.iter().all(|b| !installed(*b, &env, &probe_seeing(&[], &[]))));
        // Programs on PATH say nothing on macOS: browsers are app bundles.
        assert!(!installed(Browser::Firefox, &env, &probe_seeing(&[], &["firefox"])));

        let cases = [
            (PathBuf::from("/Applications/Google Chrome.app"), Browser::Chrome),
            (home.join("Applications/Brave Browser.app"), Browser::Brave),
            (home.join("Library/Application Support/Microsoft Edge"), Browser::Edge),
            (home.join("Library/Application Support/Firefox"), Browser::Firefox),
            (PathBuf::from("/Applications/Chromium.app"), Browser::Chromium),
        ];
        for (path, browser) in cases {
            let seen = [path];
            let probe = probe_seeing(&seen, &[]);
            for b in Browser::ALL {
                assert_eq!(installed(b, &env, &probe), b == browser, "{b:?} with {}", seen[0].display());
            }
        }
    }
}
