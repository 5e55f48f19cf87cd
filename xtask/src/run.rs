//! `cargo xtask run`: the one command that runs Nova.

use std::path::PathBuf;
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use anyhow::{Context as _, bail};
use nova_e2e::{BrowserKind, chromium, firefox};

use crate::build;
use crate::cmd::step;

/// Flags of `cargo xtask run`.
#[derive(clap::Args)]
pub struct RunArgs {
    /// Run the browser headless (default: headful when a display exists).
    #[arg(long)]
    headless: bool,
    /// Data directory: every file Nova writes goes here (default: NOVA_HOME, else the
    /// platform data directory).
    #[arg(long)]
    data_dir: Option<PathBuf>,
    /// `chromium` (default), `firefox`, or the path of a Chromium or Firefox binary (which one
    /// it is is detected from `--version`).
    #[arg(long)]
    browser: Option<String>,
}

/// Which browser a `--browser` value names, and its binary.
fn choose(browser: Option<&str>) -> anyhow::Result<(BrowserKind, PathBuf)> {
    match browser {
        None | Some("chromium") => {
            crate::ensure::ensure_chromium()?;
            Ok((BrowserKind::Chromium, chromium::find_binary()?))
        }
        Some("firefox") => {
            crate::ensure::ensure_firefox()?;
            Ok((BrowserKind::Firefox, firefox::find_binary()?))
        }
        Some(path) => {
            let binary = std::path::absolute(path)?;
            if !binary.is_file() {
                bail!("--browser {path}: no such file (give chromium, firefox or a browser binary)");
            }
            let out = Command::new(&binary)
                .arg("--version")
                .output()
                .with_context(|| format!("running {path} --version"))?;
            let version = String::from_utf8_lossy(&out.stdout);
            match kind_from_version(&version) {
                Some(BrowserKind::Firefox) => {
                    firefox::require_version(&binary, &version)?;
                    Ok((BrowserKind::Firefox, binary))
                }
                Some(kind) => Ok((kind, binary)),
                None => bail!("--browser {path}: `{}` is neither Chromium nor Firefox", version.trim()),
            }
        }
    }
}

/// The browser family from a `--version` line.
fn kind_from_version(version: &str) -> Option<BrowserKind> {
    let v = version.to_lowercase();
    if v.contains("firefox") || v.contains("librewolf") || v.contains("waterfox") {
        Some(BrowserKind::Firefox)
    } else if ["chromium", "google chrome", "microsoft edge", "brave", "chrome"].iter().any(|n| v.contains(n))
    {
        Some(BrowserKind::Chromium)
    } else {
        None
    }
}

/// Runs Nova until Ctrl-C / SIGTERM or until the browser is closed.
pub fn run(args: RunArgs) -> anyhow::Result<()> {
    let (kind, binary) = choose(args.browser.as_deref())?;
    let built = build::build()?;
    let data_dir = match args.data_dir {
        Some(d) => std::path::absolute(d)?,
        None => default_data_dir(&built.host)?,
    };
    std::fs::create_dir_all(&data_dir)?;
    // A dedicated profile in the data dir; the host manifest goes where that profile's browser
    // reads it (inside the Chromium profile; in the HOME given to Firefox), so nothing is written
    // outside the data dir.
    let profile = data_dir.join(format!("{}-profile", kind.name()));
    step(&format!("registering the native host for the profile in {}", profile.display()));
    let mut install = Command::new(&built.host);
    match kind {
        BrowserKind::Chromium => install.args(["install", "--chromium-profile"]).arg(&profile),
        BrowserKind::Firefox => {
            let home = firefox::home_of(&profile);
            std::fs::create_dir_all(&home)?;
            install.args(["install", "--browser", "firefox"]).env("HOME", home)
        }
    };
    let status = install.arg("--host-path").arg(&built.host).status()?;
    anyhow::ensure!(status.success(), "nova install failed");

    let demo = crate::demo::serve()?;
    let headless = args.headless || !chromium::has_display();
    step(&format!("starting {} ({})", binary.display(), if headless { "headless" } else { "headful" }));
    let options = chromium::LaunchOptions {
        binary,
        profile,
        data_dir: data_dir.clone(),
        extension: built.extension.clone(),
        headless,
        url: demo.clone(),
        http_port: None,
        devtools: false,
    };
    let mut browser = match kind {
        BrowserKind::Chromium => chromium::launch(&options)?,
        BrowserKind::Firefox => firefox::launch(&options)?,
    };
    let log = data_dir.join("logs").join(format!("{}.log", kind.name()));
    let hub = nova_e2e::wait_for_hub(&data_dir, nova_e2e::HUB_START)
        .with_context(|| format!("the extension did not start the host; browser log: {}", log.display()))?;
    let config =
        Command::new(&built.host).args(["mcp", "--print-config", "--data-dir"]).arg(&data_dir).output()?;
    let banner = format!(
        "\nNova is running in {browser}.\n\
         demo page:   {demo}\n\
         data dir:    {data}\n\
         stdio:       {host} mcp --data-dir {data}\n\
         HTTP:        {url}\n\
         token file:  {token}  (send it as `Authorization: Bearer <token>`)\n\n\
         MCP client config:\n{config}\n\
         Press Ctrl-C to stop the browser and the host.\n",
        browser = kind.name(),
        data = data_dir.display(),
        host = built.host.display(),
        url = hub.http_url,
        token = data_dir.join("mcp-token").display(),
        config = String::from_utf8_lossy(&config.stdout),
    );
    {
        use std::io::Write as _;
        std::io::stdout().write_all(banner.as_bytes())?;
    }

    let stop = Arc::new(AtomicBool::new(false));
    signal_hook::flag::register(signal_hook::consts::SIGINT, stop.clone())?;
    signal_hook::flag::register(signal_hook::consts::SIGTERM, stop.clone())?;
    while !stop.load(Ordering::SeqCst) && !browser.exited() {
        std::thread::sleep(Duration::from_millis(200));
    }
    step("stopping the browser and the host");
    browser.stop();
    Ok(())
}

fn default_data_dir(host: &std::path::Path) -> anyhow::Result<PathBuf> {
    if let Some(home) = std::env::var_os("NOVA_HOME") {
        return Ok(PathBuf::from(home));
    }
    // Ask the host, so `cargo xtask run` and `nova` agree on the default.
    let out = Command::new(host).args(["mcp", "--print-config"]).output()?;
    let config: serde_json::Value = serde_json::from_slice(&out.stdout).context("nova mcp --print-config")?;
    let dir = config["stdio"]["args"][2].as_str().context("no data dir in the printed config")?;
    Ok(PathBuf::from(dir))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_lines_name_the_browser() {
        assert_eq!(kind_from_version("Mozilla Firefox 153.7.0esr"), Some(BrowserKind::Firefox));
        assert_eq!(kind_from_version("Chromium 142.0.7444.175 built on Debian"), Some(BrowserKind::Chromium));
        assert_eq!(kind_from_version("Google Chrome 142.0.7444.59"), Some(BrowserKind::Chromium));
        assert_eq!(kind_from_version("Microsoft Edge 142.0.3595.53"), Some(BrowserKind::Chromium));
        assert_eq!(kind_from_version("Brave Browser 142.1.84.132"), Some(BrowserKind::Chromium));
        assert_eq!(kind_from_version("GNU bash, version 5.2"), None);
    }
}
