//! Every crate's module graph a second time, as rust-analyzer resolves it, and a failure on any
//! loop (docs/architecture.md, "Imports point one way").
//!
//! `rust-analyzer lsif` (the toolchain's own rust-analyzer, a rustup component named in
//! `rust-toolchain.toml`) indexes the workspace: every name written in the code (a path
//! segment, a method call, a field, a type in a signature, a name inside a macro call) with the
//! place it is defined. A use in module file `a` of a name defined in module file `b` of the same
//! crate is an edge `a -> b`. So this reading sees what [`crate::deps`]' reading of paths cannot:
//! method calls and fields, whose module no path names. As there, naming a module itself (a
//! `mod b;` declaration, or the `b` of `b::Item`) is no edge, and test code (`#[cfg(test)]`
//! items) is left out.
//!
//! The index takes about 100 s and 3 GB of memory on 2 cores; its JSON lines are read as they
//! come, not kept.

use std::collections::{BTreeMap, HashMap};
use std::io::{BufRead as _, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{Context as _, bail};
use serde_json::Value;

use crate::cmd::{root, step, target_dir};
use crate::deps::{CRATE_ROOTS, Module};

/// A place in a file: 0-based line, and the line the range ends on.
#[derive(Clone, Copy)]
struct Place {
    line: u64,
    character: u64,
    end_line: u64,
}

impl Place {
    /// A module's own definition: the whole file, from its first character (an item's is its
    /// name, on one line).
    fn is_module(self) -> bool {
        self.line == 0 && self.character == 0 && self.end_line > 0
    }
}

/// What the index says, reduced to what the graph needs.
#[derive(Default)]
struct Index {
    documents: HashMap<u64, PathBuf>,
    ranges: HashMap<u64, Place>,
    /// range -> its document.
    contains: HashMap<u64, u64>,
    /// range -> result set.
    next: HashMap<u64, u64>,
    /// result set -> definition result.
    definition: HashMap<u64, u64>,
    /// definition result -> (document, ranges) of the definitions.
    items: HashMap<u64, Vec<(u64, u64)>>,
}

impl Index {
    /// Takes one line of LSIF (a vertex or an edge).
    fn take(&mut self, line: &str) -> anyhow::Result<()> {
        let v: Value = serde_json::from_str(line).context("a line of the LSIF index is not JSON")?;
        let id = |k: &str| v.get(k).and_then(Value::as_u64);
        let ids =
            |k: &str| v.get(k).and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_u64);
        match (v["type"].as_str(), v["label"].as_str()) {
            (Some("vertex"), Some("document")) => {
                let uri = v["uri"].as_str().unwrap_or_default();
                if let (Some(id), Some(path)) = (id("id"), uri.strip_prefix("file://")) {
                    self.documents.insert(id, PathBuf::from(percent_decoded(path)));
                }
            }
            (Some("vertex"), Some("range")) => {
                let n = |p: &str| v.pointer(p).and_then(Value::as_u64).unwrap_or_default();
                if let Some(id) = id("id") {
                    let place = Place {
                        line: n("/start/line"),
                        character: n("/start/character"),
                        end_line: n("/end/line"),
                    };
                    self.ranges.insert(id, place);
                }
            }
            (Some("edge"), Some("contains")) => {
                let doc = id("outV").unwrap_or_default();
                self.contains.extend(ids("inVs").map(|r| (r, doc)));
            }
            (Some("edge"), Some("next")) => {
                if let (Some(a), Some(b)) = (id("outV"), id("inV")) {
                    self.next.insert(a, b);
                }
            }
            (Some("edge"), Some("textDocument/definition")) => {
                if let (Some(a), Some(b)) = (id("outV"), id("inV")) {
                    self.definition.insert(a, b);
                }
            }
            // Items of a definition result carry no `property` (references' items do).
            (Some("edge"), Some("item")) if v.get("property").is_none() => {
                if let (Some(out), Some(doc)) = (id("outV"), id("document")) {
                    self.items.entry(out).or_default().extend(ids("inVs").map(|r| (doc, r)));
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// Every use of a name defined elsewhere: (document, line of the use, document of the
    /// definition, line of the definition). Uses of modules themselves are left out.
    fn uses(&self) -> Vec<(u64, u64, u64, u64)> {
        let mut out = Vec::new();
        for (range, &doc) in &self.contains {
            let Some(place) = self.ranges.get(range) else { continue };
            let defs =
                self.next.get(range).and_then(|s| self.definition.get(s)).and_then(|d| self.items.get(d));
            for &(def_doc, def_range) in defs.into_iter().flatten() {
                let Some(def) = self.ranges.get(&def_range) else { continue };
                if def_doc != doc && !def.is_module() {
                    out.push((doc, place.line, def_doc, def.line));
                }
            }
        }
        out.sort_unstable();
        out
    }
}

/// A crate's modules as [`crate::deps`] reads them, with the lines of their test code.
struct Crate {
    modules: Vec<Module>,
    /// file -> module index.
    by_file: HashMap<PathBuf, usize>,
    /// module index -> 0-based line spans (inclusive) of `#[cfg(test)]` items.
    tests: Vec<Vec<(u64, u64)>>,
}

impl Crate {
    fn of(modules: Vec<Module>) -> anyhow::Result<Self> {
        let by_file = modules
            .iter()
            .enumerate()
            .map(|(i, m)| Ok((std::path::absolute(&m.file)?, i)))
            .collect::<anyhow::Result<_>>()?;
        let tests = modules.iter().map(|m| test_spans(&m.ast)).collect();
        Ok(Self { modules, by_file, tests })
    }

    fn in_test(&self, module: usize, line: u64) -> bool {
        self.tests[module].iter().any(|&(a, b)| (a..=b).contains(&line))
    }
}

/// The 0-based line spans of a file's `#[cfg(test)]` items.
fn test_spans(ast: &syn::File) -> Vec<(u64, u64)> {
    use syn::spanned::Spanned as _;
    ast.items
        .iter()
        .filter(|item| crate::deps::is_test(item_attrs(item)))
        .map(|item| {
            let span = item.span();
            ((span.start().line as u64).saturating_sub(1), (span.end().line as u64).saturating_sub(1))
        })
        .collect()
}

/// The attributes of an item of any kind that can be `#[cfg(test)]`.
fn item_attrs(item: &syn::Item) -> &[syn::Attribute] {
    match item {
        syn::Item::Mod(i) => &i.attrs,
        syn::Item::Fn(i) => &i.attrs,
        syn::Item::Impl(i) => &i.attrs,
        syn::Item::Use(i) => &i.attrs,
        syn::Item::Struct(i) => &i.attrs,
        syn::Item::Enum(i) => &i.attrs,
        syn::Item::Const(i) => &i.attrs,
        syn::Item::Static(i) => &i.attrs,
        syn::Item::Trait(i) => &i.attrs,
        syn::Item::Type(i) => &i.attrs,
        syn::Item::Macro(i) => &i.attrs,
        _ => &[],
    }
}

/// Indexes the workspace and checks every crate's graph (`crates`: each crate's modules as
/// [`crate::deps::deps`] read them, in [`CRATE_ROOTS`] order); fails naming every loop and a
/// use that ties each of its edges.
pub fn check(crates: Vec<Vec<Module>>) -> anyhow::Result<()> {
    let root = root();
    let crates = crates.into_iter().map(Crate::of).collect::<anyhow::Result<Vec<_>>>()?;
    let index = index(&root)?;
    let uses = index.uses();
    let mut problems = Vec::new();
    let (mut modules, mut edges_total) = (0, 0);
    for (krate, name) in crates.iter().zip(CRATE_ROOTS) {
        // from -> to -> one use that makes the edge: (line of the use, line of the definition).
        let mut edges: BTreeMap<usize, BTreeMap<usize, (u64, u64)>> = BTreeMap::new();
        let module_of = |doc: u64| index.documents.get(&doc).and_then(|p| krate.by_file.get(p)).copied();
        for &(doc, line, def_doc, def_line) in &uses {
            let (Some(from), Some(to)) = (module_of(doc), module_of(def_doc)) else { continue };
            if from != to && !krate.in_test(from, line) {
                edges.entry(from).or_default().entry(to).or_insert((line, def_line));
            }
        }
        // A crate none of whose files the index names would pass with no edges at all.
        if !index.documents.values().any(|p| krate.by_file.contains_key(p)) {
            bail!(
                "rust-analyzer's index names no file of {name}: it indexed another tree, or paths are written differently"
            );
        }
        modules += krate.modules.len();
        edges_total += edges.values().map(BTreeMap::len).sum::<usize>();
        let file = |i: usize| {
            let f = &krate.modules[i].file;
            f.strip_prefix(&root).unwrap_or(f).display().to_string()
        };
        for component in crate::deps::loops(krate.modules.len(), |v| {
            edges.get(&v).map(|e| e.keys().copied().collect()).unwrap_or_default()
        }) {
            let mut text = format!("loop of {} modules ({name}):", component.len());
            for &from in &component {
                for (&to, &(line, def_line)) in edges.get(&from).into_iter().flatten() {
                    if component.contains(&to) {
                        text.push_str(&format!(
                            "\n  {}:{} uses {}:{}",
                            file(from),
                            line + 1,
                            file(to),
                            def_line + 1
                        ));
                    }
                }
            }
            problems.push(text);
        }
    }
    if !problems.is_empty() {
        bail!("{} import loop(s) as rust-analyzer resolves names:\n{}", problems.len(), problems.join("\n"));
    }
    let _ = writeln!(
        std::io::stderr(),
        "{} crates, {modules} modules, {edges_total} module pairs tied by resolved names; no loops",
        CRATE_ROOTS.len()
    );
    Ok(())
}

/// A `file:` URI's path with its `%XX` escapes decoded (a space is `%20`).
fn percent_decoded(path: &str) -> String {
    let bytes = path.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes.get(i + 1..i + 3).and_then(|h| std::str::from_utf8(h).ok());
        match (bytes[i], hex.and_then(|h| u8::from_str_radix(h, 16).ok())) {
            (b'%', Some(b)) => {
                out.push(b);
                i += 3;
            }
            (c, _) => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Runs `rust-analyzer lsif` over the workspace and reads its index as it is printed (its
/// diagnostics go to `target/rust-analyzer-lsif.log`).
fn index(root: &Path) -> anyhow::Result<Index> {
    let tool = ensure()?;
    step("module graph as rust-analyzer resolves names (`rust-analyzer lsif`, about 100 s)");
    let log_path = target_dir().join("rust-analyzer-lsif.log");
    let log = std::fs::File::create(&log_path).with_context(|| format!("creating {}", log_path.display()))?;
    let mut child = Command::new(&tool)
        .args(["lsif", "--exclude-vendored-libraries"])
        .arg(root)
        .current_dir(root)
        .stdout(Stdio::piped())
        .stderr(log)
        .spawn()
        .with_context(|| format!("running {}", tool.display()))?;
    let mut index = Index::default();
    let out = child.stdout.take().context("rust-analyzer's output")?;
    for line in std::io::BufReader::new(out).lines() {
        index.take(&line.context("reading rust-analyzer's output")?)?;
    }
    let status = child.wait()?;
    if !status.success() {
        bail!("rust-analyzer lsif failed ({status}); see {}", log_path.display());
    }
    if index.documents.is_empty() || index.definition.is_empty() {
        bail!(
            "rust-analyzer lsif printed no documents or definitions: its output format changed; see {}",
            log_path.display()
        );
    }
    Ok(index)
}

/// The toolchain's rust-analyzer (`rust-toolchain.toml` names the component; added when missing).
fn ensure() -> anyhow::Result<PathBuf> {
    let which = || Command::new("rustup").args(["which", "rust-analyzer"]).output();
    match which() {
        Ok(out) if out.status.success() => {}
        Ok(_) => {
            step("installing the rust-analyzer component (rustup component add rust-analyzer)");
            crate::cmd::run_cmd(Command::new("rustup").args(["component", "add", "rust-analyzer"]))?;
        }
        Err(e) => {
            bail!("rustup not found ({e}): install rustup, or the rust-analyzer component of your toolchain")
        }
    }
    let out = which().context("rustup which rust-analyzer")?;
    anyhow::ensure!(
        out.status.success(),
        "rustup has no rust-analyzer for this toolchain: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Ok(PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two documents: a use in 1 of an item of 2, a use in 1 of module 2 itself, a use in 1 of
    /// an item of 1.
    const LSIF: &str = r#"{"id":1,"type":"vertex","label":"document","uri":"file:///w/a.rs"}
{"id":2,"type":"vertex","label":"document","uri":"file:///w/b.rs"}
{"id":10,"type":"vertex","label":"range","start":{"line":4,"character":8},"end":{"line":4,"character":12}}
{"id":11,"type":"vertex","label":"range","start":{"line":6,"character":8},"end":{"line":6,"character":9}}
{"id":12,"type":"vertex","label":"range","start":{"line":9,"character":1},"end":{"line":9,"character":3}}
{"id":20,"type":"vertex","label":"range","start":{"line":30,"character":7},"end":{"line":30,"character":11}}
{"id":21,"type":"vertex","label":"range","start":{"line":0,"character":0},"end":{"line":80,"character":0}}
{"id":22,"type":"vertex","label":"range","start":{"line":2,"character":3},"end":{"line":2,"character":5}}
{"id":30,"type":"edge","label":"contains","outV":1,"inVs":[10,11,12,22]}
{"id":31,"type":"edge","label":"contains","outV":2,"inVs":[20]}
{"id":40,"type":"edge","label":"next","outV":10,"inV":50}
{"id":41,"type":"edge","label":"next","outV":11,"inV":51}
{"id":42,"type":"edge","label":"next","outV":12,"inV":52}
{"id":60,"type":"edge","label":"textDocument/definition","outV":50,"inV":70}
{"id":61,"type":"edge","label":"textDocument/definition","outV":51,"inV":71}
{"id":62,"type":"edge","label":"textDocument/definition","outV":52,"inV":72}
{"id":80,"type":"edge","label":"item","outV":70,"inVs":[20],"document":2}
{"id":81,"type":"edge","label":"item","outV":71,"inVs":[21],"document":2}
{"id":82,"type":"edge","label":"item","outV":72,"inVs":[22],"document":1}
{"id":83,"type":"edge","label":"item","outV":73,"inVs":[20],"document":1,"property":"references"}"#;

    #[test]
    fn a_use_of_an_item_elsewhere_is_an_edge_and_modules_themselves_are_not() {
        let mut index = Index::default();
        for line in LSIF.lines() {
            index.take(line).expect("valid line");
        }
        assert_eq!(index.documents.get(&2), Some(&PathBuf::from("/w/b.rs")));
        assert_eq!(index.uses(), vec![(1, 4, 2, 30)]);
        assert!(index.take("{not json").is_err());
    }

    #[test]
    fn file_uris_are_decoded() {
        assert_eq!(percent_decoded("/w/my%20work/a.rs"), "/w/my work/a.rs");
        assert_eq!(percent_decoded("/w/100%/a%2"), "/w/100%/a%2");
    }

    #[test]
    fn test_items_are_found_by_their_lines() {
        let text = "use a::b;\n\n#[cfg(test)]\nfn helper() {}\n\nfn real() {}\n\n#[cfg(test)]\nmod tests {\n    fn t() {}\n}\n";
        let ast = syn::parse_file(text).expect("parses");
        assert_eq!(test_spans(&ast), vec![(2, 3), (7, 10)]);
    }
}
