//! Finding and launching Firefox with the Nova extension installed in its profile (as a person's
//! add-on stays installed across restarts), in its own process group like [`crate::chromium`].

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context as _, bail};

use crate::chromium::{BrowserProcess, LaunchOptions};

/// Where Firefox may live, best first.
const CANDIDATES: &[&str] = &["/usr/bin/firefox-esr", "/usr/lib/firefox-esr/firefox-esr", "/usr/bin/firefox"];

/// The moz-extension UUID pinned in test profiles, so pages are at a known URL.
pub const EXTENSION_UUID: &str = "6f1d3c5e-9a2b-4c8d-8e7f-0a1b2c3d4e5f";

/// The Firefox to use: `NOVA_FIREFOX`, else the first known location that exists.
pub fn find_binary() -> anyhow::Result<PathBuf> {
    if let Some(p) = std::env::var_os("NOVA_FIREFOX") {
        return Ok(PathBuf::from(p));
    }
    CANDIDATES.iter().map(PathBuf::from).find(|p| p.is_file()).context(
        "Firefox not found: install it with `sudo apt-get install -y firefox-esr` (or set NOVA_FIREFOX)",
    )
}

/// The oldest Firefox Nova supports (`strict_min_version` of the manifest: ESR 153). Older
/// ones lack what Nova needs (docs/browsers.md): the Navigation API (Firefox 147), which tells
/// an action that a script sent the page elsewhere, and `tabs.captureVisibleTab` for a Manifest
/// V3 add-on (absent in ESR 140 with every permission granted), which takes screenshots.
pub const MIN_VERSION: u32 = 153;

/// The major version from a `firefox --version` line (`Mozilla Firefox 153.7.0esr` -> 153).
pub fn major_version(line: &str) -> Option<u32> {
    line.split_whitespace().find_map(|w| w.split('.').next()?.parse().ok())
}

/// Checks that `binary` is Firefox [`MIN_VERSION`] or newer; returns its version line.
pub fn check_version(binary: &Path) -> anyhow::Result<String> {
    let out = Command::new(binary)
        .arg("--version")
        .output()
        .with_context(|| format!("running {} --version", binary.display()))?;
    let line = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    require_version(binary, &line)?;
    Ok(line)
}

/// Checks a `--version` line of `binary` already read: Firefox [`MIN_VERSION`] or newer.
pub fn require_version(binary: &Path, line: &str) -> anyhow::Result<()> {
    match major_version(line) {
        Some(v) if v >= MIN_VERSION => Ok(()),
        _ => bail!(
            "{} is `{}`; Nova needs Firefox {MIN_VERSION} (ESR) or newer: `sudo apt-get update && sudo apt-get install -y firefox-esr` (Debian's security updates carry ESR {MIN_VERSION}) or a newer Firefox",
            binary.display(),
            line.trim()
        ),
    }
}

/// The home directory Firefox gets (its `.mozilla/native-messaging-hosts` holds the host
/// manifest): next to the profile.
pub fn home_of(profile: &Path) -> PathBuf {
    profile.with_extension("home")
}

const PREFS: &str = r#"
user_pref("browser.shell.checkDefaultBrowser", false);
user_pref("browser.startup.homepage_override.mstone", "ignore");
user_pref("browser.aboutwelcome.enabled", false);
user_pref("datareporting.policy.dataSubmissionEnabled", false);
user_pref("toolkit.telemetry.reportingpolicy.firstRun", false);
user_pref("app.update.disabledForTesting", true);
user_pref("browser.tabs.warnOnClose", false);
user_pref("extensions.autoDisableScopes", 0);
// The extension is unsigned (a signed build comes from the store); Firefox ESR, Developer Edition
// and Nightly honour this.
user_pref("xpinstall.signatures.required", false);
user_pref("browser.newtabpage.enabled", false);
user_pref("network.captive-portal-service.enabled", false);
user_pref("dom.disable_open_during_load", false);
user_pref("devtools.console.stdout.chrome", true);
user_pref("devtools.console.stdout.content", true);
user_pref("browser.dom.window.dump.enabled", true);
// Sibling sites and another origin for per-site knowledge tests: resolved to this machine, as
// Chromium resolves every *.localhost.
user_pref("network.dns.localDomains", "www.site.localhost,shop.site.localhost,sp.site.localhost");
"#;

/// Installs the extension in the profile, starts Firefox and returns the browser (stderr in
/// `<data_dir>/logs/firefox.log`).
pub fn launch(o: &LaunchOptions) -> anyhow::Result<BrowserProcess> {
    if !o.binary.is_file() {
        bail!("{} does not exist", o.binary.display());
    }
    let logs = o.data_dir.join("logs");
    std::fs::create_dir_all(&logs)?;
    std::fs::create_dir_all(&o.profile)?;
    // On a restart (the profile has run before) the add-on is already installed and opens no
    // settings page; tests drive the extension's pages from one (`crate::ui`: BiDi will not
    // navigate to `moz-extension:` URLs), so the command line opens it as the install did.
    let restart = o.profile.join("extensions.json").exists();
    let uuids = format!(
        "user_pref(\"extensions.webextensions.uuids\", {});\n",
        serde_json::to_string(&format!("{{\"{}\":\"{EXTENSION_UUID}\"}}", nova_shared::FIREFOX_ADDON_ID))?
    );
    std::fs::write(o.profile.join("user.js"), format!("{PREFS}{uuids}"))?;
    install_in_profile(&o.profile, &o.extension)?;
    let log_path = logs.join("firefox.log");
    let log = std::fs::File::create(&log_path)?;
    let home = home_of(&o.profile);
    std::fs::create_dir_all(&home)?;
    let mut cmd = Command::new(&o.binary);
    if o.headless {
        cmd.arg("-headless");
    }
    cmd.args(["-no-remote", "-new-instance", "--remote-debugging-port", "0", "-profile"])
        .arg(&o.profile)
        .arg(&o.url)
        .args(restart.then(|| format!("moz-extension://{EXTENSION_UUID}/options.html#welcome")))
        .env("HOME", &home)
        .env("NOVA_HOME", &o.data_dir)
        .env(nova_host::clock::SHIFT_ENV, crate::chromium::clock_shift_file(&o.data_dir))
        .env("MOZ_CRASHREPORTER_DISABLE", "1")
        .env("MOZ_HEADLESS_WIDTH", "1280")
        .env("MOZ_HEADLESS_HEIGHT", "900")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(log);
    std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
    if let Some(port) = o.http_port {
        cmd.env("NOVA_HTTP_PORT", port.to_string());
    }
    let child = cmd.spawn().with_context(|| format!("starting {}", o.binary.display()))?;
    let mut browser = BrowserProcess::from_child(child);
    browser.set_bidi_port(bidi_port(&log_path, Duration::from_secs(60))?);
    Ok(browser)
}

/// Installs `extension` in `profile` before Firefox starts: a packed `.xpi` is copied to
/// `extensions/<id>.xpi`, an unpacked directory is named by a link file `extensions/<id>` holding
/// its path. Firefox finds it at startup and enables it (`extensions.autoDisableScopes` 0).
fn install_in_profile(profile: &Path, extension: &Path) -> anyhow::Result<()> {
    let dir = profile.join("extensions");
    std::fs::create_dir_all(&dir)?;
    let id = nova_shared::FIREFOX_ADDON_ID;
    if extension.is_dir() {
        let path = std::path::absolute(extension)?;
        std::fs::write(dir.join(id), path.to_str().context("the extension's path is not UTF-8")?)?;
    } else {
        std::fs::copy(extension, dir.join(format!("{id}.xpi")))
            .with_context(|| format!("copying {} into the profile", extension.display()))?;
    }
    Ok(())
}

/// The BiDi port Firefox prints once it listens.
fn bidi_port(log: &Path, timeout: Duration) -> anyhow::Result<u16> {
    const MARK: &str = "WebDriver BiDi listening on ws://127.0.0.1:";
    let deadline = Instant::now() + timeout;
    loop {
        let text = std::fs::read_to_string(log).unwrap_or_default();
        if let Some(rest) = text.split(MARK).nth(1) {
            let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
            return digits.parse().context("BiDi port");
        }
        if Instant::now() > deadline {
            bail!("Firefox did not open WebDriver BiDi within {timeout:?}; see {}", log.display());
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_are_read_from_the_version_line() {
        assert_eq!(major_version("Mozilla Firefox 153.7.0esr"), Some(153));
        assert_eq!(major_version("Mozilla Firefox 140.10.2esr"), Some(140));
        assert_eq!(major_version("Mozilla Firefox 115.0"), Some(115));
        assert_eq!(major_version("Mozilla Firefox"), None);
        let ff = Path::new("/usr/bin/firefox");
        assert!(require_version(ff, "Mozilla Firefox 153.8.0esr").is_ok());
        assert!(require_version(ff, "Mozilla Firefox 157.0").is_ok());
        for line in ["Mozilla Firefox 140.12.0esr", "Mozilla Firefox 152.0.5", "Mozilla Firefox 115.0"] {
            let old = require_version(ff, line).expect_err("too old");
            assert!(old.to_string().contains("needs Firefox 153"), "{old}");
        }
    }
}
