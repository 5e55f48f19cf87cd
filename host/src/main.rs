//! `nova`: argument parsing and wiring only; the work happens in the `nova_host` library.

use std::io::Write as _;
use std::path::PathBuf;
use std::time::Duration;

use clap::{Parser, Subcommand};
use nova_host::install::{self, Browser};
use nova_host::paths::DataDir;
use nova_host::{daemon, doctor, mcp, support};

#[derive(Parser)]
#[command(name = "nova", version, about = "Nova: verified browser actions for AI agents")]
struct Cli {
    /// Data directory (default: NOVA_HOME, else the platform data directory).
    #[arg(long, global = true, env = "NOVA_HOME")]
    data_dir: Option<PathBuf>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// The hub; browsers start it through native messaging (you do not run this by hand).
    Native {
        /// What the browser passes: the extension origin (Chromium) or manifest path (Firefox).
        caller: Option<String>,
        /// Further browser arguments (Firefox passes the add-on id, Chrome a parent window).
        #[arg(trailing_var_arg = true, allow_hyphen_values = true, hide = true)]
        rest: Vec<String>,
    },
    /// MCP over stdio for agents: relays to the running hub.
    Mcp {
        /// Which browser's hub to use (default: the most recently started).
        #[arg(long)]
        browser: Option<String>,
        /// Print the JSON an MCP client config needs and exit.
        #[arg(long)]
        print_config: bool,
        /// How long to wait for a hub at start before answering locally.
        #[arg(long, default_value_t = 1500)]
        wait_ms: u64,
        /// What tools/list shows: `core` (the setup tools, then each bundle the agent loads with
        /// nova.tools_bundle), `all`, or bundles separated by commas (browser_automation,
        /// task_memory, page_read_debug, pks_learning, system_tools). Every tool stays callable.
        #[arg(long, value_name = "core|all|BUNDLE,...")]
        tools: Option<nova_host::mcp::listing::Listing>,
    },
    /// Register the native host with browsers (the named ones, else those detected).
    Install {
        /// Browser to register with (repeatable).
        #[arg(long = "browser", value_enum)]
        browsers: Vec<Browser>,
        /// Also register inside this Chromium --user-data-dir profile.
        #[arg(long)]
        chromium_profile: Option<PathBuf>,
        /// Host binary the manifest points at (default: this executable).
        #[arg(long)]
        host_path: Option<PathBuf>,
    },
    /// Remove the native-host registration.
    Uninstall {
        /// Browser to unregister from (repeatable; default: all).
        #[arg(long = "browser", value_enum)]
        browsers: Vec<Browser>,
        /// Also unregister from this Chromium --user-data-dir profile.
        #[arg(long)]
        chromium_profile: Option<PathBuf>,
    },
    /// Check the installation, the hub, the store and free disk.
    Doctor,
    /// Emergency stop: block every agent tool call until `nova resume` (or the popup) releases it.
    Stop,
    /// Release the emergency stop.
    Resume,
    /// The calls agents made: a table, newest last (`nova log show CALL` for one in full).
    #[command(args_conflicts_with_subcommands = true)]
    Log {
        #[command(subcommand)]
        show: Option<LogCmd>,
        #[command(flatten)]
        filter: FilterArgs,
        /// How many calls (the newest); 0 for all.
        #[arg(short = 'n', long = "lines", default_value_t = 200)]
        lines: usize,
        /// Output format.
        #[arg(long, value_enum, default_value_t = support::log::Format::Table)]
        format: support::log::Format,
        /// Keep printing calls as they are recorded (like `tail -f`).
        #[arg(short, long)]
        follow: bool,
    },
    /// One self-contained HTML activity report (opens from disk, makes no network request).
    Report {
        #[command(flatten)]
        report: ReportArgs,
        /// Where to write it (default: nova-report.html in the data dir).
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// A redacted support archive (.tar.gz): report, store export, settings, doctor, versions, logs.
    Bundle {
        /// The report's window and screenshots (the store export is always whole).
        #[command(flatten)]
        report: ReportArgs,
        /// Where to write it (default: nova-bundle-<time>.tar.gz in the current directory).
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// The store: check its health, or copy it.
    Store {
        #[command(subcommand)]
        command: StoreCmd,
    },
}

#[derive(Subcommand)]
enum LogCmd {
    /// Everything known about one call: arguments as stored, gates, transition, evidence, screenshot.
    Show {
        /// The call id (the 8-digit short form `nova log` prints is enough).
        call: String,
        /// Output format (table = for people).
        #[arg(long, value_enum, default_value_t = support::log::Format::Table)]
        format: support::log::Format,
    },
}

#[derive(Subcommand)]
enum StoreCmd {
    /// integrity_check, foreign_key_check, schema version, row counts, size; exit 1 on a problem.
    Check {
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Copy the store into a new, compacted, checked file (`VACUUM INTO`), also while Nova runs.
    Backup {
        /// The new file.
        #[arg(long)]
        out: PathBuf,
    },
}

/// What `nova report` and `nova bundle` put in the report.
#[derive(clap::Args)]
struct ReportArgs {
    #[command(flatten)]
    filter: FilterArgs,
    /// Inline the saved screenshots (they may show private content).
    #[arg(long)]
    with_screenshots: bool,
}

/// The filters `nova log`, `nova report` and `nova bundle` share.
#[derive(clap::Args)]
struct FilterArgs {
    /// From: a duration back (10m, 2h, 3d), a UTC date or time (2026-11-25, 2026-11-25 14:30), today.
    #[arg(long)]
    since: Option<String>,
    /// Until (same forms as --since).
    #[arg(long)]
    until: Option<String>,
    /// Tool (repeatable; `click_selector` or `nova.click_selector`).
    #[arg(long)]
    tool: Vec<String>,
    /// Agent id (repeatable).
    #[arg(long)]
    agent: Vec<String>,
    /// Tab id (repeatable).
    #[arg(long)]
    tab: Vec<String>,
    /// MCP session id or its start (repeatable).
    #[arg(long)]
    session: Vec<String>,
    /// Outcome (repeatable): success, failed, blocked, invalid, verified_success, verified_fail, in_doubt.
    #[arg(long)]
    outcome: Vec<String>,
    /// Gate id that blocked, warned or was bypassed (repeatable), e.g. safety.perceive_first.
    #[arg(long)]
    gate: Vec<String>,
}

impl FilterArgs {
    fn filter(self) -> anyhow::Result<support::calls::Filter> {
        let now = nova_host::time::now_ms();
        let when = |flag: &str, v: Option<String>| {
            v.map(|v| support::when::parse(flag, &v, now)).transpose().map_err(anyhow::Error::msg)
        };
        let f = support::calls::Filter {
            since_ms: when("--since", self.since)?,
            until_ms: when("--until", self.until)?,
            tools: self.tool,
            agents: self.agent,
            tabs: self.tab,
            sessions: self.session,
            outcomes: self.outcome,
            gates: self.gate,
            after_seq: None,
        };
        f.validate().map_err(anyhow::Error::msg)?;
        Ok(f)
    }
}

fn main() -> anyhow::Result<()> {
    // Browsers start the host as `nova chrome-extension://<id>/` or `nova <manifest> <addon-id>`.
    let mut args: Vec<String> = std::env::args().collect();
    if args.get(1).is_some_and(|a| a.starts_with("chrome-extension://") || a.ends_with(".json")) {
        args.insert(1, "native".into());
    }
    let cli = Cli::parse_from(args);
    let data = DataDir::resolve(cli.data_dir.as_deref())?;
    let runtime = || tokio::runtime::Builder::new_multi_thread().enable_all().build();
    match cli.command {
        Command::Native { caller, rest: _ } => {
            let caller = caller.unwrap_or_default();
            // A data dir that cannot be written still gets its refusal, on stderr (the browser's
            // log); `daemon::run` says what to do about it.
            let writable = data.ensure().is_ok();
            init_logging(writable.then(|| (&data, daemon::browser_from_caller(&caller))));
            runtime()?.block_on(daemon::run(data, caller))
        }
        Command::Mcp { print_config, .. } if print_config => print_config_json(&data),
        Command::Mcp { browser, wait_ms, tools, .. } => {
            init_logging(None);
            runtime()?.block_on(mcp::relay::run(data, browser, Duration::from_millis(wait_ms), tools))
        }
        Command::Install { browsers, chromium_profile, host_path } => {
            let host = match host_path {
                Some(p) => std::path::absolute(p)?,
                None => std::env::current_exe()?,
            };
            let targets = install::install_targets(&browsers, chromium_profile.as_deref())?;
            anyhow::ensure!(
                !targets.is_empty(),
                "no supported browser detected; name one with --browser (chromium, chrome, edge, brave, firefox)"
            );
            let mut out = std::io::stdout();
            for t in targets {
                install::install(&t, &host, &mut install::RegExe)?;
                writeln!(out, "registered with {}: {}", t.label(), t.manifest.display())?;
                if let Some(key) = &t.registry_key {
                    writeln!(out, "registered with {}: {}", t.label(), install::registry_path(key))?;
                }
            }
            Ok(())
        }
        Command::Uninstall { browsers, chromium_profile } => {
            let mut out = std::io::stdout();
            for t in install::uninstall_targets(&browsers, chromium_profile.as_deref())? {
                let removed = install::uninstall(&t, &mut install::RegExe)?;
                if removed.manifest {
                    writeln!(out, "removed {}", t.manifest.display())?;
                }
                if let Some(key) = t.registry_key.as_deref().filter(|_| removed.registry_key) {
                    writeln!(out, "removed {}", install::registry_path(key))?;
                }
            }
            Ok(())
        }
        Command::Stop => {
            data.ensure()?;
            let conn = nova_host::store::open(&data.db())?;
            let stop = nova_host::aag::control::engage(&conn, "cli")?;
            let mut out = std::io::stdout();
            writeln!(
                out,
                "Emergency stop engaged (since {} ms, by {}): agents are blocked until `nova resume`.",
                stop.at_ms, stop.by
            )?;
            Ok(())
        }
        Command::Resume => {
            data.ensure()?;
            let conn = nova_host::store::open(&data.db())?;
            let released = nova_host::aag::control::release(&conn, "cli")?;
            let mut out = std::io::stdout();
            writeln!(
                out,
                "{}",
                if released {
                    "Emergency stop released: agents may work again."
                } else {
                    "No emergency stop was engaged."
                }
            )?;
            Ok(())
        }
        Command::Log { show: Some(LogCmd::Show { call, format }), .. } => {
            let conn = nova_host::store::open_existing(&data.db())?;
            let record = support::show::show(&conn, &data, &call).map_err(anyhow::Error::msg)?;
            let mut out = std::io::stdout().lock();
            match format {
                support::log::Format::Table => support::log::print_record(&record, &mut out)?,
                _ => writeln!(out, "{}", serde_json::to_string_pretty(&record)?)?,
            }
            Ok(())
        }
        Command::Log { show: None, filter, lines, format, follow } => {
            let filter = filter.filter()?;
            let conn = nova_host::store::open_existing(&data.db())?;
            let mut out = std::io::stdout().lock();
            let last = support::log::print(&conn, &filter, (lines > 0).then_some(lines), format, &mut out)?;
            if follow {
                support::log::follow(&conn, &filter, last, format, &mut out)?;
            }
            Ok(())
        }
        Command::Report { report: ReportArgs { filter, with_screenshots }, out } => {
            let filter = filter.filter()?;
            let (html, calls) = support::report::of_store(&data, &filter, with_screenshots)?;
            let path = out.unwrap_or_else(|| data.root().join("nova-report.html"));
            std::fs::write(&path, html)?;
            writeln!(
                std::io::stdout(),
                "Report of {calls} calls written to {}\nOpen it in a browser: file://{}",
                path.display(),
                std::path::absolute(&path)?.display()
            )?;
            Ok(())
        }
        Command::Bundle { report: ReportArgs { filter, with_screenshots }, out } => {
            let filter = filter.filter()?;
            let path = out.unwrap_or_else(support::bundle::default_name);
            let entries =
                support::bundle::write(&data, &support::bundle::Options { filter, with_screenshots }, &path)?;
            let mut out = std::io::stdout().lock();
            writeln!(out, "Support bundle written to {}; it holds:", path.display())?;
            for e in entries {
                writeln!(out, "  {:<24} {:>10} bytes  {}", e.name, e.bytes, e.about)?;
            }
            writeln!(
                out,
                "Redacted: typed text and passwords (never stored), the MCP token, cookies, Authorization headers,\n\
                 credential-like URL parameters. Not included: the store file, the token file, screenshots{}.",
                if with_screenshots { " (inlined into the report, as asked)" } else { "" }
            )?;
            Ok(())
        }
        Command::Store { command: StoreCmd::Check { json } } => {
            let health = support::check::check(&data.db()).map_err(anyhow::Error::msg)?;
            let mut out = std::io::stdout().lock();
            if json {
                writeln!(out, "{}", serde_json::to_string_pretty(&health)?)?;
            } else {
                support::check::print(&health, &mut out)?;
            }
            if !health.sound() {
                std::process::exit(1);
            }
            Ok(())
        }
        Command::Store { command: StoreCmd::Backup { out } } => {
            let health = support::check::backup(&data.db(), &out).map_err(anyhow::Error::msg)?;
            let mut stdout = std::io::stdout().lock();
            writeln!(stdout, "Backup written to {} ({:.1} MB)", out.display(), health.bytes as f64 / 1e6)?;
            support::check::print(&health, &mut stdout)?;
            if !health.sound() {
                std::process::exit(1);
            }
            Ok(())
        }
        Command::Doctor => {
            let checks = doctor::run_checks(&data);
            let ok = doctor::report(&checks, &mut std::io::stdout())?;
            if !ok {
                std::process::exit(1);
            }
            Ok(())
        }
    }
}

fn print_config_json(data: &DataDir) -> anyhow::Result<()> {
    let exe = std::env::current_exe()?;
    let http_url = nova_host::ipc::HubRecord::all(data)
        .first()
        .map(|h| h.http_url.clone())
        .unwrap_or_else(|| format!("http://127.0.0.1:{}{}", daemon::DEFAULT_HTTP_PORT, mcp::http::MCP_PATH));
    let data_dir = data.root().display().to_string();
    let config = serde_json::json!({
        "mcpServers": {
            "nova": {"command": exe.display().to_string(), "args": ["mcp", "--data-dir", data_dir]}
        },
        "stdio": {"command": exe.display().to_string(), "args": ["mcp", "--data-dir", data_dir]},
        "http": {
            "url": http_url,
            "tokenFile": data.token_file().display().to_string(),
            "headers": {"Authorization": "Bearer <contents of tokenFile>"}
        }
    });
    writeln!(std::io::stdout(), "{}", serde_json::to_string_pretty(&config)?)?;
    Ok(())
}

fn init_logging(file: Option<(&DataDir, &str)>) {
    use tracing_subscriber::fmt::writer::MakeWriterExt as _;
    // The hub logs its life at info; the relay runs inside agents' terminals and stays quiet.
    let default = if file.is_some() { "info" } else { "warn" };
    let filter = tracing_subscriber::EnvFilter::try_from_env("NOVA_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    let builder = tracing_subscriber::fmt().with_env_filter(filter).with_ansi(false);
    let log_file = file.and_then(|(data, browser)| {
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(data.logs().join(format!("hub-{browser}.log")))
            .ok()
    });
    match log_file {
        Some(f) => builder.with_writer(std::io::stderr.and(std::sync::Mutex::new(f))).init(),
        None => builder.with_writer(std::io::stderr).init(),
    }
}
