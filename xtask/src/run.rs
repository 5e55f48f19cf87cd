//! `cargo xtask run`: the one command that runs Nova.

use std::path::PathBuf;
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use anyhow::Context as _;
use nova_e2e::chromium;

use crate::{build, step};

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
    /// Browser binary to start (default: the installed Chromium).
    #[arg(long)]
    browser: Option<PathBuf>,
}

/// Runs Nova until Ctrl-C / SIGTERM or until the browser is closed.
pub fn run(args: RunArgs) -> anyhow::Result<()> {
    crate::test::ensure_wasm_target()?;
    if args.browser.is_none() {
        crate::test::ensure_chromium()?;
    }
    let built = build::build()?;
    let data_dir = match args.data_dir {
        Some(d) => std::path::absolute(d)?,
        None => default_data_dir(&built.host)?,
    };
    std::fs::create_dir_all(&data_dir)?;
    let profile = data_dir.join("chromium-profile");
    step(&format!("registering the native host for the profile in {}", profile.display()));
    let status = Command::new(&built.host)
        .args(["install", "--chromium-profile"])
        .arg(&profile)
        .arg("--host-path")
        .arg(&built.host)
        .status()?;
    anyhow::ensure!(status.success(), "nova install failed");

    let demo = crate::demo::serve()?;
    let binary = match args.browser {
        Some(b) => b,
        None => chromium::find_binary()?,
    };
    let headless = args.headless || !chromium::has_display();
    step(&format!("starting {} ({})", binary.display(), if headless { "headless" } else { "headful" }));
    let mut browser = chromium::launch(&chromium::LaunchOptions {
        binary,
        profile,
        data_dir: data_dir.clone(),
        extension: built.extension.clone(),
        headless,
        url: demo.clone(),
        http_port: None,
        devtools: false,
    })?;
    let hub = nova_e2e::wait_for_hub(&data_dir, Duration::from_secs(30)).with_context(|| {
        format!(
            "the extension did not start the host; browser log: {}",
            chromium::log_path(&data_dir).display()
        )
    })?;
    let config =
        Command::new(&built.host).args(["mcp", "--print-config", "--data-dir"]).arg(&data_dir).output()?;
    let banner = format!(
        "\nNova is running.\n\
         demo page:   {demo}\n\
         data dir:    {data}\n\
         stdio:       {host} mcp --data-dir {data}\n\
         HTTP:        {url}\n\
         token file:  {token}  (send it as `Authorization: Bearer <token>`)\n\n\
         MCP client config:\n{config}\n\
         Press Ctrl-C to stop the browser and the host.\n",
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
