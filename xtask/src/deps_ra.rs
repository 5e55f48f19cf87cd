//! The host's module graph as rust-analyzer resolves it, by `cargo-modules` (a maintained tool
//! built on rust-analyzer's crates), and a failure on any loop (docs/architecture.md, "Imports
//! point one way").
//!
//! `cargo modules dependencies --acyclic` cannot be used as is: it checks the graph of items
//! before the filters apply, so a type and its own method (`ToolReply` and `ToolReply::ok`)
//! count as a loop. So the graph is printed with modules only and `uses` edges only (no `mod`
//! ownership edges, no functions, types or traits), and its loops are found here. What
//! cargo-modules records as a use: `use` items and the types in fields and signatures,
//! including the signatures of `impl` blocks written in other modules (an `impl Hub` in
//! `aag::facts` returning a type of `aag::facts` ties `hub` to `aag::facts`). Paths written
//! inside function bodies are not recorded; `cargo xtask deps`' own reading sees those.
//!
//! cargo-modules is installed once under `target/tools/cargo-modules`, pinned: 0.27.0 is the
//! newest release that builds with this workspace's Rust (0.28 needs rustc 1.98).

use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::PathBuf;
use std::process::Command;

use anyhow::{Context as _, bail};

use crate::cmd::{root, run_cmd, step, target_dir};

/// The pinned release.
const VERSION: &str = "0.27.0";

/// The host's targets checked: the library (the `nova` binary is a `main` over it, with no
/// modules of its own).
const TARGETS: &[&[&str]] = &[&["--lib"]];

/// Checks the host's graph; fails naming every loop.
pub fn check() -> anyhow::Result<()> {
    let tool = ensure()?;
    step(&format!("module graph of the host as cargo-modules {VERSION} (rust-analyzer) resolves it"));
    let mut problems = Vec::new();
    let mut summary = Vec::new();
    for target in TARGETS {
        let out = Command::new(&tool)
            .args(["dependencies", "-p", "nova-host"])
            .args(*target)
            .args(["--no-externs", "--no-sysroot", "--no-fns", "--no-traits", "--no-types", "--no-owns"])
            .current_dir(root())
            .output()
            .context("running cargo-modules")?;
        if !out.status.success() {
            bail!(
                "cargo-modules dependencies {} failed:\n{}",
                target.join(" "),
                String::from_utf8_lossy(&out.stderr)
            );
        }
        let (names, edges) = parse_dot(&String::from_utf8_lossy(&out.stdout));
        if edges.is_empty() {
            bail!(
                "cargo-modules printed no `uses` edge for the host's {}: its output format changed",
                target.join(" ")
            );
        }
        let found = crate::deps::loops(names.len(), |v| edges.get(&v).cloned().unwrap_or_default());
        for component in found {
            let mut text = format!("loop of {} modules ({}):", component.len(), target.join(" "));
            for &from in &component {
                for &to in edges.get(&from).into_iter().flatten() {
                    if component.contains(&to) {
                        text.push_str(&format!("\n  {} -> {}", names[from], names[to]));
                    }
                }
            }
            problems.push(text);
        }
        summary.push(format!(
            "{}: {} modules, {} uses",
            target.join(" "),
            names.len(),
            edges.values().map(Vec::len).sum::<usize>()
        ));
    }
    if !problems.is_empty() {
        bail!(
            "{} import loop(s) in the host, as cargo-modules sees it:\n{}",
            problems.len(),
            problems.join("\n")
        );
    }
    let _ = writeln!(std::io::stderr(), "{}; no loops", summary.join("; "));
    Ok(())
}

/// The `uses` edges of a cargo-modules dot graph: node names, and edges by index.
fn parse_dot(dot: &str) -> (Vec<String>, BTreeMap<usize, Vec<usize>>) {
    let mut names: Vec<String> = Vec::new();
    let mut index: BTreeMap<String, usize> = BTreeMap::new();
    let mut edges: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    let mut id = |name: &str, names: &mut Vec<String>| {
        *index.entry(name.to_owned()).or_insert_with(|| {
            names.push(name.to_owned());
            names.len() - 1
        })
    };
    for line in dot.lines() {
        // `"a::b" -> "a::c" [label="uses", ...`
        let Some((from, rest)) = line.trim().strip_prefix('"').and_then(|l| l.split_once("\" -> \"")) else {
            continue;
        };
        let Some((to, attrs)) = rest.split_once('"') else { continue };
        if !attrs.contains("label=\"uses\"") {
            continue;
        }
        let (a, b) = (id(from, &mut names), id(to, &mut names));
        if a != b {
            edges.entry(a).or_default().push(b);
        }
    }
    (names, edges)
}

/// The pinned cargo-modules, installed under `target/tools` when missing.
fn ensure() -> anyhow::Result<PathBuf> {
    let dir = target_dir().join("tools/cargo-modules");
    let bin = dir.join("bin").join(format!("cargo-modules{}", std::env::consts::EXE_SUFFIX));
    let marker = dir.join("version.txt");
    if bin.exists() && std::fs::read_to_string(&marker).is_ok_and(|v| v == VERSION) {
        return Ok(bin);
    }
    step(&format!(
        "installing cargo-modules {VERSION} into {} (once; about 7 minutes on 2 cores)",
        dir.display()
    ));
    run_cmd(
        Command::new("cargo")
            .args(["install", "cargo-modules", "--locked", "--version", VERSION, "--root"])
            .arg(&dir),
    )?;
    std::fs::write(&marker, VERSION)?;
    Ok(bin)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_uses_edges_and_ignores_the_rest() {
        let dot = r##"digraph {
    "nova_host::a" [label="a"];
    "nova_host::a" -> "nova_host::b" [label="uses", color="#7f7f7f"] [constraint=false]; // "uses" edge
    "nova_host::b" -> "nova_host::a" [label="owns", color="#000000"]; // "owns" edge
    "nova_host::b" -> "nova_host::c" [label="uses", color="#7f7f7f"] [constraint=false]; // "uses" edge
}"##;
        let (names, edges) = parse_dot(dot);
        assert_eq!(names, ["nova_host::a", "nova_host::b", "nova_host::c"]);
        assert_eq!(edges.get(&0), Some(&vec![1]));
        assert_eq!(edges.get(&1), Some(&vec![2]));
        assert!(crate::deps::loops(names.len(), |v| edges.get(&v).cloned().unwrap_or_default()).is_empty());
        let looped = format!("{dot}\n    \"nova_host::c\" -> \"nova_host::a\" [label=\"uses\"];");
        let (names, edges) = parse_dot(&looped);
        let found = crate::deps::loops(names.len(), |v| edges.get(&v).cloned().unwrap_or_default());
        assert_eq!(found, vec![vec![0, 1, 2]]);
    }
}
