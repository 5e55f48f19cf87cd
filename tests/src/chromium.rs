//! Finding and launching Chromium with the Nova extension, in its own process group so that
//! the browser and everything it spawned (renderers, the native host) go away together.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context as _, bail};
use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;

/// Where Chromium may live, best first. `/usr/lib/chromium/chromium` is preferred over the
/// Debian `/usr/bin/chromium` wrapper, which injects an empty `--load-extension=`.
const CANDIDATES: &[&str] = &[
    "/usr/lib/chromium/chromium",
    "/usr/bin/chromium",
    "/usr/bin/chromium-browser",
    "/usr/bin/google-chrome",
    "/opt/google/chrome/chrome",
];

/// The Chromium to use: `NOVA_CHROMIUM`, else the first known location that exists.
pub fn find_binary() -> anyhow::Result<PathBuf> {
    if let Some(p) = std::env::var_os("NOVA_CHROMIUM") {
        return Ok(PathBuf::from(p));
    }
    CANDIDATES.iter().map(PathBuf::from).find(|p| p.is_file()).context(
        "Chromium not found: install it with `sudo apt-get install -y chromium` (or set NOVA_CHROMIUM)",
    )
}

/// The file whose number of milliseconds moves the host's memory clock forward
/// (`nova_host::clock`); every browser launch names it to its host, and the tests age facts
/// with `Nova::shift_ok_clock` instead of waiting.
pub fn clock_shift_file(data: &Path) -> PathBuf {
    data.join("ok-clock-shift-ms")
}

/// How to launch.
#[derive(Debug, Clone)]
pub struct LaunchOptions {
    /// Browser binary.
    pub binary: PathBuf,
    /// `--user-data-dir`.
    pub profile: PathBuf,
    /// NOVA_HOME passed to the browser and so to the hub it spawns.
    pub data_dir: PathBuf,
    /// Unpacked extension.
    pub extension: PathBuf,
    /// Headless or not.
    pub headless: bool,
    /// First page.
    pub url: String,
    /// NOVA_HTTP_PORT for the hub (`Some(0)` picks a free port).
    pub http_port: Option<u16>,
    /// Opens the DevTools protocol on a free local port (`--remote-debugging-port=0`), for
    /// tests that drive the extension's own pages; see [`crate::cdp`].
    pub devtools: bool,
}

/// A running browser; killed with its whole process group on drop.
pub struct BrowserProcess {
    child: Child,
    /// Firefox's WebDriver BiDi port; the session is opened on first use ([`Self::bidi`]).
    bidi_port: Option<u16>,
    /// Firefox's WebDriver BiDi session, once opened (the UI tests drive pages through it,
    /// Firefox allowing one session at a time).
    bidi: tokio::sync::OnceCell<std::sync::Arc<crate::bidi::Bidi>>,
}

impl BrowserProcess {
    /// Wraps a spawned browser (its own process group).
    pub fn from_child(child: Child) -> Self {
        Self { child, bidi_port: None, bidi: tokio::sync::OnceCell::new() }
    }

    /// Where this browser's WebDriver BiDi listens (Firefox).
    pub fn set_bidi_port(&mut self, port: u16) {
        self.bidi_port = Some(port);
    }

    /// The BiDi session (Firefox), opened on first use: a session waits for the browser's idle
    /// startup tasks (about two seconds), which only the tests that drive pages through it pay.
    pub async fn bidi(&self) -> anyhow::Result<std::sync::Arc<crate::bidi::Bidi>> {
        let port = self.bidi_port.context("this browser has no WebDriver BiDi (Firefox only)")?;
        let bidi = self
            .bidi
            .get_or_try_init(|| async { crate::bidi::Bidi::connect(port).await.map(std::sync::Arc::new) })
            .await?;
        Ok(bidi.clone())
    }

    /// The browser's process id (and process group id).
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Whether the browser has exited.
    pub fn exited(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(Some(_)))
    }

    /// Terminates the group: TERM, then KILL after a grace period.
    pub fn stop(&mut self) {
        let Ok(pid) = i32::try_from(self.child.id()) else {
            return;
        };
        let group = Pid::from_raw(pid);
        let _ = killpg(group, Signal::SIGTERM);
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if self.exited() {
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = killpg(group, Signal::SIGKILL);
        let _ = self.child.wait();
    }
}

impl Drop for BrowserProcess {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Starts Chromium. Stderr goes to `<data_dir>/logs/chromium.log`.
pub fn launch(o: &LaunchOptions) -> anyhow::Result<BrowserProcess> {
    use std::os::unix::process::CommandExt as _;
    if !o.binary.is_file() {
        bail!("{} does not exist", o.binary.display());
    }
    let logs = o.data_dir.join("logs");
    std::fs::create_dir_all(&logs)?;
    std::fs::create_dir_all(&o.profile)?;
    let log = std::fs::File::create(logs.join("chromium.log"))?;
    let mut cmd = Command::new(&o.binary);
    if o.headless {
        cmd.arg("--headless=new");
    }
    cmd.args([
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--no-default-browser-check",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-features=DialMediaRouteProvider",
        "--enable-logging=stderr",
        "--v=0",
        "--window-size=1280,900",
    ])
    .arg(format!("--user-data-dir={}", o.profile.display()))
    .arg(format!("--load-extension={}", o.extension.display()))
    .arg(format!("--disable-extensions-except={}", o.extension.display()))
    .arg(&o.url)
    .env("NOVA_HOME", &o.data_dir)
    .env("XDG_CONFIG_HOME", o.profile.join("xdg-config"))
    .env(nova_host::clock::SHIFT_ENV, clock_shift_file(&o.data_dir))
    .stdin(Stdio::null())
    .stdout(Stdio::null())
    .stderr(log)
    .process_group(0);
    if let Some(port) = o.http_port {
        cmd.env("NOVA_HTTP_PORT", port.to_string());
    }
    if o.devtools {
        let _ = std::fs::remove_file(o.profile.join("DevToolsActivePort"));
        cmd.arg("--remote-debugging-port=0");
    }
    let child = cmd.spawn().with_context(|| format!("starting {}", o.binary.display()))?;
    Ok(BrowserProcess::from_child(child))
}

/// Whether a display is available for a headful browser.
pub fn has_display() -> bool {
    ["DISPLAY", "WAYLAND_DISPLAY"].iter().any(|v| std::env::var_os(v).is_some_and(|x| !x.is_empty()))
}

/// The log file of a launch.
pub fn log_path(data_dir: &Path) -> PathBuf {
    data_dir.join("logs").join("chromium.log")
}
