//! Installing what the commands need when it is missing: rustup targets, browsers, the MinGW
//! cross compiler, and the pinned npm tools.

use std::path::PathBuf;
use std::process::Command;

use anyhow::{Context as _, bail};

use crate::cmd::{root, run_cmd, step, target_dir};

/// The npm packages the build uses, pinned (the strict-CSP build keys its cache on them).
pub const NPM_TOOLS: &[&str] =
    &["binaryen@132.0.0", "terser@5.51.2", "dictionary-en@4.0.0", "dictionary-de@3.0.0", "web-ext@10.7.0"];

/// Dictionaries shipped next to the host: (npm package, language).
/// Installs the pinned npm tools under `target/tools` once; returns their `.bin` directory.
pub fn ensure_npm_tools() -> anyhow::Result<PathBuf> {
    let dir = target_dir().join("tools");
    let bin = dir.join("node_modules/.bin");
    let marker = dir.join("installed.txt");
    let wanted = NPM_TOOLS.join(" ");
    if std::fs::read_to_string(&marker).is_ok_and(|m| m == wanted) && bin.join("wasm2js").exists() {
        return Ok(bin);
    }
    npm_install(&dir, NPM_TOOLS, "for the strict-CSP build")?;
    std::fs::write(marker, wanted)?;
    Ok(bin)
}

/// `npm install` of pinned `packages` under `dir`, saying so; `why` completes "npm is needed …".
pub fn npm_install(dir: &std::path::Path, packages: &[&str], why: &str) -> anyhow::Result<()> {
    npm_install_with(dir, packages, why, &[])
}

/// [`npm_install`] with `env` set for the packages' install scripts.
pub fn npm_install_with(
    dir: &std::path::Path,
    packages: &[&str],
    why: &str,
    env: &[(&str, &str)],
) -> anyhow::Result<()> {
    let wanted = packages.join(" ");
    step(&format!("installing {wanted} from npm into {}", dir.display()));
    std::fs::create_dir_all(dir)?;
    let npm = Command::new("npm")
        .args(["install", "--no-audit", "--no-fund", "--prefix"])
        .arg(dir)
        .args(packages)
        .envs(env.iter().copied())
        .current_dir(root())
        .status()
        .with_context(|| {
            format!("npm is needed {why}: install Node.js and npm (apt-get install -y nodejs npm)")
        })?;
    if !npm.success() {
        bail!("npm install {wanted} failed");
    }
    Ok(())
}

/// The Windows target the host is cross-checked for.
pub const WINDOWS_TARGET: &str = "x86_64-pc-windows-gnu";

/// The Windows target and the MinGW C compiler (SQLite is compiled from source by rusqlite).
pub fn ensure_windows_cross() -> anyhow::Result<()> {
    let installed = Command::new("rustup").args(["target", "list", "--installed"]).output()?;
    if !String::from_utf8_lossy(&installed.stdout).contains(WINDOWS_TARGET) {
        step(&format!("installing the {WINDOWS_TARGET} target"));
        run_cmd(Command::new("rustup").args(["target", "add", WINDOWS_TARGET]))?;
    }
    if Command::new("x86_64-w64-mingw32-gcc").arg("--version").output().is_err() {
        install_package("gcc-mingw-w64-x86-64", "the MinGW cross compiler")?;
    }
    Ok(())
}

/// Installs Firefox ESR with apt-get when it is missing and we are root; otherwise says how.
pub fn ensure_firefox() -> anyhow::Result<()> {
    use nova_e2e::firefox;
    let old = match firefox::find_binary() {
        Ok(binary) => match firefox::check_version(&binary) {
            Ok(_) => return Ok(()),
            Err(e) => Some(e),
        },
        Err(_) => None,
    };
    // Missing or older than ESR 153: apt-get installs or upgrades it; without root, an old one
    // is reported as old (with the upgrade command), not as missing.
    if let Some(e) = old.filter(|_| !is_root()) {
        return Err(e);
    }
    install_package("firefox-esr", "Firefox")?;
    firefox::check_version(&firefox::find_binary()?).map(|_| ())
}

/// Adds the wasm32 target when the toolchain lacks it.
pub fn ensure_wasm_target() -> anyhow::Result<()> {
    let installed = Command::new("rustup").args(["target", "list", "--installed"]).output();
    match installed {
        Ok(out) if String::from_utf8_lossy(&out.stdout).contains("wasm32-unknown-unknown") => Ok(()),
        Ok(_) => {
            step("installing the wasm32-unknown-unknown target");
            run_cmd(Command::new("rustup").args(["target", "add", "wasm32-unknown-unknown"]))
        }
        Err(_) => {
            bail!("rustup not found: install the wasm32-unknown-unknown target for your toolchain")
        }
    }
}

/// Installs Chromium with apt-get when it is missing and we are root; otherwise says how.
pub fn ensure_chromium() -> anyhow::Result<()> {
    if nova_e2e::chromium::find_binary().is_ok() {
        return Ok(());
    }
    install_package("chromium", "Chromium")
}

/// Whether this process runs as root (apt-get may install).
fn is_root() -> bool {
    Command::new("id").arg("-u").output().is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

/// Installs `package` with apt-get (after `apt-get update`) when we are root; otherwise says how.
fn install_package(package: &str, what: &str) -> anyhow::Result<()> {
    if !is_root() {
        bail!(
            "{what} is missing. Install it with:\n    sudo apt-get install -y {package}\nthen run `cargo xtask test` again"
        );
    }
    step(&format!("installing {what} with apt-get"));
    run_cmd(Command::new("apt-get").arg("update"))?;
    run_cmd(
        Command::new("apt-get")
            .args(["install", "-y", "--no-install-recommends", package])
            .env("DEBIAN_FRONTEND", "noninteractive"),
    )
}
