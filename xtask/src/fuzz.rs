//! `cargo xtask fuzz`: coverage-guided fuzzing of Nova's input parsers (docs/fuzzing.md) with
//! cargo-fuzz and libFuzzer on the nightly toolchain.
//!
//! Installs what is missing (the nightly toolchain, `cargo-fuzz`), builds every target of
//! `fuzz/` once, then runs each for the given time, a target per core. Everything a run writes
//! stays under `target/fuzz/`: the build, new corpus entries (`corpus/<target>`, the committed
//! seeds in `fuzz/corpus/<target>` are only read), crash inputs (`artifacts/<target>`) and
//! libFuzzer's log (`logs/<target>.log`), so a run leaves the repository as it was. A crash
//! fails the command, naming the target and the input that crashed it.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::Instant;

use anyhow::{Context as _, bail};

use crate::cmd::{cargo, root, run_cmd, step, target_dir};

/// Flags of `cargo xtask fuzz`.
#[derive(clap::Args)]
pub struct FuzzArgs {
    /// Seconds each target runs.
    #[arg(long, default_value_t = 300)]
    secs: u64,
    /// Run only these targets (file names in fuzz/fuzz_targets/ without `.rs`); all by default.
    #[arg(long, value_delimiter = ',')]
    only: Vec<String>,
    /// Build without optimisation: about 2 minutes instead of 9 on two cores, for a run of a few
    /// thousand inputs per second instead of tens of thousands (what `cargo xtask test` does).
    #[arg(long)]
    dev: bool,
}

/// How the targets are built.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Build {
    /// Optimised, for long runs.
    Release,
    /// Unoptimised, for a short run right after a short build (CI).
    Dev,
}

impl Build {
    /// cargo's profile directory under the target triple.
    fn dir(self) -> &'static str {
        match self {
            Self::Release => "release",
            Self::Dev => "debug",
        }
    }
}

/// Runs `cargo xtask fuzz`.
pub fn fuzz(args: FuzzArgs) -> anyhow::Result<()> {
    run(args.secs, &args.only, if args.dev { Build::Dev } else { Build::Release })
}

/// Builds the targets (all, or `only`) and runs each for `secs` seconds; fails on a crash.
pub fn run(secs: u64, only: &[String], how: Build) -> anyhow::Result<()> {
    let started = Instant::now();
    let targets = targets(only)?;
    ensure_tools()?;
    let dirs = Dirs::new();
    let built = Instant::now();
    build(&targets, &dirs, how)?;
    let build_time = built.elapsed();
    let jobs = std::thread::available_parallelism().map_or(1, |n| n.get()).min(targets.len());
    step(&format!("fuzzing {} target(s) for {secs} s each, {jobs} at a time", targets.len()));
    let queue = Mutex::new(targets.iter());
    let results = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..jobs {
            s.spawn(|| {
                while let Some(target) = queue.lock().ok().and_then(|mut q| q.next()) {
                    let outcome = fuzz_one(target, secs, &dirs, how);
                    if let Ok(r) = &outcome {
                        let _ = writeln!(std::io::stderr(), "    {}", r.line());
                    }
                    if let Ok(mut all) = results.lock() {
                        all.push((target.clone(), outcome));
                    }
                }
            });
        }
    });
    let mut results = results.into_inner().unwrap_or_default();
    results.sort_by(|a, b| a.0.cmp(&b.0));
    let mut out = std::io::stdout().lock();
    writeln!(out, "{:<14} {:>12} {:>9} {:>7}  crash", "target", "execs", "exec/s", "corpus")?;
    let mut failures = Vec::new();
    for (target, outcome) in results {
        match outcome {
            Ok(r) => {
                writeln!(out, "{}", r.line())?;
                if let Some(why) = r.crash {
                    failures.push(why);
                }
            }
            Err(e) => {
                writeln!(out, "{target:<14} did not run: {e:#}")?;
                failures.push(format!("{target}: {e:#}"));
            }
        }
    }
    writeln!(
        out,
        "build {:.0} s, total {:.0} s; new corpus entries in {}, logs in {}",
        build_time.as_secs_f64(),
        started.elapsed().as_secs_f64(),
        dirs.corpus.display(),
        dirs.logs.display()
    )?;
    if !failures.is_empty() {
        bail!(
            "{} fuzz target(s) crashed or did not run; make each crash a regression test next to \
             the code it crashed (docs/fuzzing.md):\n{}",
            failures.len(),
            failures.join("\n")
        );
    }
    Ok(())
}

/// Where a run builds and writes (under cargo's target directory, never in the repository).
struct Dirs {
    build: PathBuf,
    corpus: PathBuf,
    artifacts: PathBuf,
    logs: PathBuf,
}

impl Dirs {
    fn new() -> Self {
        let base = target_dir().join("fuzz");
        Self {
            build: base.join("build"),
            corpus: base.join("corpus"),
            artifacts: base.join("artifacts"),
            logs: base.join("logs"),
        }
    }
}

/// The targets asked for: every `fuzz/fuzz_targets/*.rs`, or those of `only`.
fn targets(only: &[String]) -> anyhow::Result<Vec<String>> {
    let dir = root().join("fuzz/fuzz_targets");
    let mut all: Vec<String> = std::fs::read_dir(&dir)
        .with_context(|| format!("reading {}", dir.display()))?
        .filter_map(Result::ok)
        .filter_map(|e| e.file_name().to_str()?.strip_suffix(".rs").map(str::to_owned))
        .collect();
    all.sort();
    if only.is_empty() {
        return Ok(all);
    }
    if let Some(unknown) = only.iter().find(|t| !all.contains(t)) {
        bail!("no fuzz target `{unknown}`; the targets are: {}", all.join(", "));
    }
    Ok(only.to_vec())
}

/// The nightly toolchain and cargo-fuzz, installed when missing.
fn ensure_tools() -> anyhow::Result<()> {
    let toolchains = Command::new("rustup")
        .args(["toolchain", "list"])
        .output()
        .context("rustup not found: fuzzing needs rustup with the nightly toolchain (https://rustup.rs)")?;
    if !String::from_utf8_lossy(&toolchains.stdout).lines().any(|l| l.starts_with("nightly")) {
        step("installing the nightly toolchain (rustup toolchain install nightly --profile minimal)");
        run_cmd(Command::new("rustup").args(["toolchain", "install", "nightly", "--profile", "minimal"]))?;
    }
    let present = nightly().args(["fuzz", "--version"]).stdout(Stdio::null()).stderr(Stdio::null()).status();
    if !present.is_ok_and(|s| s.success()) {
        step("installing cargo-fuzz (cargo install cargo-fuzz --locked)");
        run_cmd(cargo().args(["install", "cargo-fuzz", "--locked"]))?;
    }
    Ok(())
}

/// `cargo +nightly`, through rustup's `cargo` (the `cargo` running xtask is the stable one).
fn nightly() -> Command {
    let mut cmd = Command::new("cargo");
    cmd.arg("+nightly");
    cmd
}

/// Builds the targets once. No sanitizer: Nova denies `unsafe_code`, and AddressSanitizer
/// would slow every run for bugs safe Rust cannot have; debug assertions and overflow checks
/// stay on (cargo-fuzz's default without `-O`). 16 codegen units instead of cargo-fuzz's 1
/// keep the build of the host and its dependencies short on small machines.
fn build(targets: &[String], dirs: &Dirs, how: Build) -> anyhow::Result<()> {
    let all = targets.len() == std::fs::read_dir(root().join("fuzz/fuzz_targets"))?.count();
    let names: Vec<Option<&str>> =
        if all { vec![None] } else { targets.iter().map(|t| Some(t.as_str())).collect() };
    for name in names {
        let mut cmd = nightly();
        cmd.args(["fuzz", "build", "--fuzz-dir", "fuzz", "--sanitizer", "none", "--codegen-units", "16"])
            .arg("--target-dir")
            .arg(&dirs.build);
        cmd.args((how == Build::Dev).then_some("--dev")).args(name);
        step(&format!("building fuzz target(s) {}: {cmd:?}", name.unwrap_or("(all)")));
        run_cmd(&mut cmd)?;
    }
    Ok(())
}

/// What one target's run gave.
struct Outcome {
    target: String,
    execs: u64,
    per_sec: u64,
    corpus: u64,
    /// Why the run failed: the target, the input that crashed it and the panic.
    crash: Option<String>,
}

impl Outcome {
    fn line(&self) -> String {
        let crashed = if self.crash.is_some() { "YES" } else { "no" };
        format!("{:<14} {:>12} {:>9} {:>7}  {crashed}", self.target, self.execs, self.per_sec, self.corpus)
    }
}

/// Runs one target for `secs` seconds over its committed seeds and its scratch corpus.
fn fuzz_one(target: &str, secs: u64, dirs: &Dirs, how: Build) -> anyhow::Result<Outcome> {
    let binary = binary(&dirs.build, target, how)?;
    let corpus = dirs.corpus.join(target);
    let artifacts = dirs.artifacts.join(target);
    let seeds = root().join("fuzz/corpus").join(target);
    for d in [&corpus, &artifacts, &dirs.logs] {
        std::fs::create_dir_all(d).with_context(|| format!("creating {}", d.display()))?;
    }
    let log_path = dirs.logs.join(format!("{target}.log"));
    let log = std::fs::File::create(&log_path).with_context(|| format!("creating {}", log_path.display()))?;
    let started = Instant::now();
    // New inputs go to the first directory only; the seeds are read, never written.
    let status = Command::new(&binary)
        .arg(&corpus)
        .args(seeds.is_dir().then_some(&seeds))
        .arg(format!("-max_total_time={secs}"))
        .arg(format!("-artifact_prefix={}/", artifacts.display()))
        .args(["-print_final_stats=1", "-timeout=10", "-rss_limit_mb=2048"])
        .current_dir(root())
        .stdout(log.try_clone()?)
        .stderr(log)
        .status()
        .with_context(|| format!("starting {}", binary.display()))?;
    let text = std::fs::read_to_string(&log_path).unwrap_or_default();
    let stat = |name: &str| {
        text.lines()
            .filter_map(|l| l.strip_prefix(&format!("stat::{name}:")))
            .find_map(|v| v.trim().parse::<u64>().ok())
            .unwrap_or(0)
    };
    // Status lines end with `corp: <entries>/<size>`; the last one is the final corpus.
    let corpus_size = text
        .lines()
        .rev()
        .find_map(|l| l.split(" corp: ").nth(1)?.split('/').next()?.parse().ok())
        .unwrap_or(0);
    let crash = (!status.success()).then(|| {
        let input = text
            .lines()
            .find_map(|l| l.split("Test unit written to ").nth(1))
            .map_or_else(|| "no input written".to_owned(), |p| p.trim().to_owned());
        let panic: Vec<&str> = text
            .lines()
            .skip_while(|l| !l.contains("panicked at") && !l.contains("ERROR: libFuzzer"))
            .take_while(|l| !l.starts_with("stack backtrace") && !l.starts_with("note:"))
            .take(4)
            .collect();
        format!(
            "`{target}` crashed ({status}, after {:.0} s) on {input}\n  {}\n  reproduce: {} {input}\n  log: {}",
            started.elapsed().as_secs_f64(),
            panic.join("\n  "),
            binary.display(),
            log_path.display()
        )
    });
    Ok(Outcome {
        target: target.to_owned(),
        execs: stat("number_of_executed_units"),
        per_sec: stat("average_exec_per_sec"),
        corpus: corpus_size,
        crash,
    })
}

/// The built binary of `target` (`<build>/<host triple>/<release|debug>/<target>`).
fn binary(build: &Path, target: &str, how: Build) -> anyhow::Result<PathBuf> {
    let triples = std::fs::read_dir(build).with_context(|| format!("reading {}", build.display()))?;
    triples
        .filter_map(Result::ok)
        .map(|e| e.path().join(how.dir()).join(target))
        .find(|p| p.is_file())
        .with_context(|| format!("no built fuzz target `{target}` under {}", build.display()))
}
