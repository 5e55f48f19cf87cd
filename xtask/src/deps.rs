//! `cargo xtask deps`: the module graph of every crate in the workspace, and a failure when
//! modules import each other in a loop (docs/architecture.md, "Imports point one way").
//!
//! A node is one module file; an edge `a -> b` means code in `a` names an item of `b` through a
//! path: a `use` (`crate::`, `super::`, `self::` or a child module) or a path written in code
//! or inside a macro call (`crate::x::y`). Declaring a child (`mod b;`) is no edge, and test
//! code (`#[cfg(test)]`) is left out. The module tree is read with `syn` from each crate root,
//! following `mod` declarations as rustc does.
//!
//! No loop is allowed, not even between a file and its own submodules: what a folder's files
//! share lives in a submodule of its own (`aware::query`, `ui::kit`, `background::state`,
//! `install::model`), below both the parent and its other children.
//!
//! Then every crate's graph is checked a second time as rust-analyzer resolves names, method
//! calls and fields included ([`crate::deps_ra`]).

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write as _;
use std::path::{Path, PathBuf};

use anyhow::Context as _;
use proc_macro2::{TokenStream, TokenTree};
use syn::visit::Visit;

use crate::cmd::{root, step};

/// The crate roots checked, relative to the workspace root.
pub const CRATE_ROOTS: &[&str] = &[
    "shared/src/lib.rs",
    "host/src/lib.rs",
    "host/src/main.rs",
    "extension/src/lib.rs",
    "tests/src/lib.rs",
    "xtask/src/main.rs",
];

/// One module: its path in the crate (`["aag", "pipeline"]`) and its file.
pub struct Module {
    pub path: Vec<String>,
    pub file: PathBuf,
    pub ast: syn::File,
}

/// The modules of the crate whose root file is `crate_root`, as rustc finds them.
pub fn modules(crate_root: &Path) -> anyhow::Result<Vec<Module>> {
    let mut modules = Vec::new();
    load(crate_root, Vec::new(), true, &mut modules)?;
    Ok(modules)
}

/// Checks every crate; fails naming each loop and the names that tie it. Answers each crate's
/// modules (in [`CRATE_ROOTS`] order) for the second check ([`crate::deps_ra`]).
pub fn deps() -> anyhow::Result<Vec<Vec<Module>>> {
    step("module graph: imports point one way");
    let root = root();
    let mut loops = Vec::new();
    let mut crates = Vec::new();
    let (mut modules, mut edges) = (0, 0);
    for crate_root in CRATE_ROOTS {
        let graph = Graph::read(&root, &root.join(crate_root))?;
        modules += graph.modules.len();
        edges += graph.edges.values().map(BTreeMap::len).sum::<usize>();
        for cycle in graph.cycles() {
            loops.push(graph.describe(&root, &cycle));
        }
        crates.push(graph.modules);
    }
    if !loops.is_empty() {
        anyhow::bail!(
            "{} import loop(s); every module must import only modules below it:\n{}",
            loops.len(),
            loops.join("\n")
        );
    }
    let _ = writeln!(
        std::io::stderr(),
        "{} crates, {modules} modules, {edges} imports between them, no loops",
        CRATE_ROOTS.len()
    );
    Ok(crates)
}

/// The modules of one crate and the names each takes from the others.
struct Graph {
    modules: Vec<Module>,
    /// from -> to -> names taken.
    edges: BTreeMap<usize, BTreeMap<usize, BTreeSet<String>>>,
}

impl Graph {
    fn read(workspace: &Path, crate_root: &Path) -> anyhow::Result<Self> {
        let modules = modules(crate_root).with_context(|| {
            format!("reading {}", crate_root.strip_prefix(workspace).unwrap_or(crate_root).display())
        })?;
        let index: BTreeMap<Vec<String>, usize> =
            modules.iter().enumerate().map(|(i, m)| (m.path.clone(), i)).collect();
        let mut edges: BTreeMap<usize, BTreeMap<usize, BTreeSet<String>>> = BTreeMap::new();
        for (from, module) in modules.iter().enumerate() {
            let mut paths = Paths::default();
            paths.visit_file(&module.ast);
            for path in paths.found {
                if let Some((to, name)) = resolve(&index, &module.path, &path)
                    && to != from
                {
                    edges.entry(from).or_default().entry(to).or_default().insert(name);
                }
            }
        }
        Ok(Self { modules, edges })
    }

    /// Loops of more than one module.
    fn cycles(&self) -> Vec<Vec<usize>> {
        loops(self.modules.len(), |v| {
            self.edges.get(&v).map(|e| e.keys().copied().collect()).unwrap_or_default()
        })
    }

    /// The files of a loop and, for each import inside it, the names taken.
    fn describe(&self, workspace: &Path, cycle: &[usize]) -> String {
        let file = |i: usize| {
            let f = &self.modules[i].file;
            f.strip_prefix(workspace).unwrap_or(f).display().to_string()
        };
        let mut out = format!("loop of {} modules:", cycle.len());
        for &from in cycle {
            for (&to, names) in self.edges.get(&from).into_iter().flatten() {
                if cycle.contains(&to) {
                    let names: Vec<&str> = names.iter().map(String::as_str).collect();
                    out.push_str(&format!("\n  {} -> {}: {}", file(from), file(to), names.join(", ")));
                }
            }
        }
        out
    }
}

/// Strongly connected components of more than one node (Tarjan) of a graph of `n` nodes whose
/// edges from `v` are `next(v)`; each sorted.
pub fn loops(n: usize, next: impl Fn(usize) -> Vec<usize>) -> Vec<Vec<usize>> {
    struct State<'a> {
        next_of: &'a dyn Fn(usize) -> Vec<usize>,
        next: usize,
        index: Vec<Option<usize>>,
        low: Vec<usize>,
        stack: Vec<usize>,
        on_stack: Vec<bool>,
        found: Vec<Vec<usize>>,
    }
    fn visit(v: usize, s: &mut State<'_>) {
        s.index[v] = Some(s.next);
        s.low[v] = s.next;
        s.next += 1;
        s.stack.push(v);
        s.on_stack[v] = true;
        for w in (s.next_of)(v) {
            match s.index[w] {
                None => {
                    visit(w, s);
                    s.low[v] = s.low[v].min(s.low[w]);
                }
                Some(i) if s.on_stack[w] => s.low[v] = s.low[v].min(i),
                Some(_) => {}
            }
        }
        if Some(s.low[v]) == s.index[v] {
            let mut component = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on_stack[w] = false;
                component.push(w);
                if w == v {
                    break;
                }
            }
            if component.len() > 1 {
                component.sort_unstable();
                s.found.push(component);
            }
        }
    }
    let mut s = State {
        next_of: &next,
        next: 0,
        index: vec![None; n],
        low: vec![0; n],
        stack: Vec::new(),
        on_stack: vec![false; n],
        found: Vec::new(),
    };
    for v in 0..n {
        if s.index[v].is_none() {
            visit(v, &mut s);
        }
    }
    s.found
}

/// Parses `file` as module `path` and, recursively, the modules it declares. `owns_dir`: the
/// file is a crate root or a `mod.rs`, whose children live beside it rather than in a folder
/// named after it.
fn load(file: &Path, path: Vec<String>, owns_dir: bool, out: &mut Vec<Module>) -> anyhow::Result<()> {
    let text = std::fs::read_to_string(file).with_context(|| format!("reading {}", file.display()))?;
    let ast = syn::parse_file(&text).with_context(|| format!("parsing {}", file.display()))?;
    let dir = if owns_dir {
        file.parent().map(Path::to_path_buf).unwrap_or_default()
    } else {
        file.with_extension("")
    };
    let children: Vec<String> = ast
        .items
        .iter()
        .filter_map(|item| match item {
            syn::Item::Mod(m) if m.content.is_none() && !is_test(&m.attrs) => Some(m.ident.to_string()),
            _ => None,
        })
        .collect();
    out.push(Module { path: path.clone(), file: file.to_path_buf(), ast });
    for child in children {
        let mut child_path = path.clone();
        child_path.push(child.clone());
        let flat = dir.join(format!("{child}.rs"));
        if flat.exists() {
            load(&flat, child_path, false, out)?;
        } else {
            load(&dir.join(&child).join("mod.rs"), child_path, true, out)?;
        }
    }
    Ok(())
}

/// Whether the attributes hold `#[cfg(test)]`.
pub fn is_test(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("cfg") && a.meta.require_list().is_ok_and(|l| l.tokens.to_string().trim() == "test")
    })
}

/// Resolves a path written in module `at` to the module whose item it names, and that name.
fn resolve(index: &BTreeMap<Vec<String>, usize>, at: &[String], path: &[String]) -> Option<(usize, String)> {
    let (mut base, rest): (Vec<String>, &[String]) = match path.first().map(String::as_str) {
        Some("crate") => (Vec::new(), &path[1..]),
        Some("self") => (at.to_vec(), &path[1..]),
        Some("super") => {
            let mut base = at.to_vec();
            let mut rest = path;
            while rest.first().map(String::as_str) == Some("super") {
                base.pop();
                rest = &rest[1..];
            }
            (base, rest)
        }
        // A child module named directly (`use child::Item;`, `child::f()`).
        Some(first) => {
            let mut child = at.to_vec();
            child.push(first.to_owned());
            if !index.contains_key(&child) {
                return None;
            }
            (at.to_vec(), path)
        }
        None => return None,
    };
    // The longest prefix that is a module.
    let mut found = index.get(&base).copied().map(|m| (m, rest.first().cloned()));
    for (i, segment) in rest.iter().enumerate() {
        base.push(segment.clone());
        match index.get(&base) {
            Some(&m) => found = Some((m, rest.get(i + 1).cloned().or_else(|| Some(segment.clone())))),
            None => break,
        }
    }
    found.map(|(m, name)| (m, name.unwrap_or_else(|| "*".into())))
}

/// Every path of a file that may name another module, outside test code.
#[derive(Default)]
struct Paths {
    found: Vec<Vec<String>>,
}

impl Paths {
    fn use_tree(&mut self, prefix: &mut Vec<String>, tree: &syn::UseTree) {
        match tree {
            syn::UseTree::Path(p) => {
                prefix.push(p.ident.to_string());
                self.use_tree(prefix, &p.tree);
                prefix.pop();
            }
            syn::UseTree::Name(n) => self.push_with(prefix, &n.ident.to_string()),
            syn::UseTree::Rename(r) => self.push_with(prefix, &r.ident.to_string()),
            syn::UseTree::Glob(_) => self.found.push(prefix.clone()),
            syn::UseTree::Group(g) => {
                for t in &g.items {
                    self.use_tree(prefix, t);
                }
            }
        }
    }

    fn push_with(&mut self, prefix: &[String], last: &str) {
        let mut p = prefix.to_vec();
        if last != "self" {
            p.push(last.to_owned());
        }
        self.found.push(p);
    }

    /// `crate :: a :: b` (or `super`, `self`) sequences inside a macro call's tokens.
    fn tokens(&mut self, tokens: TokenStream) {
        let trees: Vec<TokenTree> = tokens.into_iter().collect();
        let mut i = 0;
        while i < trees.len() {
            match &trees[i] {
                TokenTree::Group(g) => self.tokens(g.stream()),
                TokenTree::Ident(id) if matches!(id.to_string().as_str(), "crate" | "super" | "self") => {
                    let mut path = vec![id.to_string()];
                    let mut j = i + 1;
                    while let (
                        Some(TokenTree::Punct(a)),
                        Some(TokenTree::Punct(b)),
                        Some(TokenTree::Ident(next)),
                    ) = (trees.get(j), trees.get(j + 1), trees.get(j + 2))
                    {
                        if a.as_char() != ':' || b.as_char() != ':' {
                            break;
                        }
                        path.push(next.to_string());
                        j += 3;
                    }
                    if path.len() > 1 {
                        self.found.push(path);
                    }
                    i = j.max(i + 1);
                    continue;
                }
                _ => {}
            }
            i += 1;
        }
    }
}

impl<'ast> Visit<'ast> for Paths {
    fn visit_item(&mut self, item: &'ast syn::Item) {
        let attrs = match item {
            syn::Item::Mod(m) => &m.attrs,
            syn::Item::Fn(f) => &f.attrs,
            syn::Item::Impl(i) => &i.attrs,
            syn::Item::Use(u) => &u.attrs,
            _ => return syn::visit::visit_item(self, item),
        };
        if !is_test(attrs) {
            syn::visit::visit_item(self, item);
        }
    }

    fn visit_item_use(&mut self, u: &'ast syn::ItemUse) {
        self.use_tree(&mut Vec::new(), &u.tree);
    }

    /// `pub(crate)`, `pub(super)`: visibility, not a use.
    fn visit_visibility(&mut self, _: &'ast syn::Visibility) {}

    fn visit_path(&mut self, p: &'ast syn::Path) {
        self.found.push(p.segments.iter().map(|s| s.ident.to_string()).collect());
        syn::visit::visit_path(self, p);
    }

    fn visit_macro(&mut self, m: &'ast syn::Macro) {
        self.tokens(m.tokens.clone());
        syn::visit::visit_macro(self, m);
    }
}
