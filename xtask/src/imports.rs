//! The import graph of the workspace's crates, file by file: `cargo xtask imports`.
//!
//! Every `src/` file of a crate is a node; a path that a file names (`use crate::a::B`, `super::c::D`,
//! `crate::e::f(..)` in an expression) is an edge to the file that defines it, following the re-exports
//! (`pub use`) of the modules on the way, so that `crate::Settings` reaches `settings.rs`, not `lib.rs`.
//! Test code (`#[cfg(test)]` items and the files of `#[cfg(test)] mod x;`) is left out: a test may import
//! whatever it checks. A module's declaration of its children (`mod x;`) and its use of them are not
//! imports: a module is made of its children, so only a child's import of its parent (or of anything
//! outside itself) counts.
//!
//! Two checks, both in `cargo xtask test`:
//! - **no circle**: no file reaches itself through its imports (a strongly connected component of more
//!   than one file is reported with the edges that close it);
//! - **layers**: each crate's top-level modules are listed in [`LAYERS`], lowest first; an import from a
//!   module to one listed above it is *upward*, and the whole tree may hold at most [`MAX_UPWARD`] of them,
//!   each one named in [`ALLOWED_UPWARD`] with the reason it stays.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use syn::visit::Visit;

/// Each crate's top-level modules, lowest layer first (a module may import the ones before it). A crate's
/// root file (`lib.rs`, `main.rs`) sits above all of its modules. Modules not listed are an error, so
/// that a new module is placed on purpose.
pub const LAYERS: &[(&str, &[&str])] = &[
    (
        "rules",
        &[
            "path",
            "input",
            "invalid_setting",
            "finding",
            "windows",
            "platform",
            "lifecycle",
            "model",
            "catalog",
            "settings",
            "infra",
            "schedule",
            "placement",
            "rules",
            "check",
            "fix",
            "explain",
            "audit",
            "what_if",
            "export",
        ],
    ),
    (
        "server",
        &[
            "bounded_read",
            "clock",
            "kube_client",
            "logging",
            "inputs",
            "metrics",
            "registry",
            "source",
            "lease",
            "place",
            "state",
            "image_resolution",
            "http",
            "commands",
            "cli",
        ],
    ),
];

/// The upward imports the tree keeps, each with its reason: `(from file, to top-level module, why)`.
pub const ALLOWED_UPWARD: &[(&str, &str, &str)] = &[(
    "rules/src/model/events.rs",
    "explain",
    "an Event is reduced to the causes its message shows as it is decoded, so that the model never \
     holds a cluster's raw Events; it needs only explain's cause and matching files, which need no model",
)];

/// The most upward imports the tree may hold.
pub const MAX_UPWARD: usize = 3;

/// An import from a file to a top-level module above its own: counted once per (file, module).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Upward {
    /// The importing file.
    pub from: String,
    /// The top-level module it reaches up to.
    pub to_module: String,
    /// One path it names there, for the report.
    pub path: String,
}

/// One import: `from` names something defined in `to` (files relative to the workspace root).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Edge {
    /// The importing file.
    pub from: String,
    /// The file that defines what it names.
    pub to: String,
    /// The path as written, for the report.
    pub path: String,
}

/// `cargo xtask imports`: prints the circles and the upward imports; fails on a circle, on more than
/// [`MAX_UPWARD`] upward imports, or on one not in [`ALLOWED_UPWARD`].
pub fn command() -> Result<(), String> {
    let root = crate::util::root();
    let mut problems = Vec::new();
    let mut upward_total = Vec::new();
    let mut files = 0;
    let mut edges_total = 0;
    for krate in workspace_crates(&root)? {
        let graph = Graph::of_crate(&root, &krate)?;
        files += graph.files.len();
        edges_total += graph.edges.len();
        for circle in graph.circles() {
            problems.push(format!("import circle: {}", describe_circle(&circle)));
        }
        let layers = LAYERS.iter().find(|(name, _)| *name == krate.name);
        if let Some((_, order)) = layers {
            let (upward, unlisted) = graph.upward(order);
            for module in unlisted {
                problems.push(format!(
                    "{}: top-level module `{module}` is not in xtask/src/imports.rs LAYERS",
                    krate.dir
                ));
            }
            upward_total.extend(upward);
        }
    }
    for e in &upward_total {
        let allowed = ALLOWED_UPWARD
            .iter()
            .any(|(from, to, _)| *from == e.from && *to == e.to_module);
        let mark = if allowed { "allowed" } else { "NOT ALLOWED" };
        eprintln!(
            "upward import ({mark}): {} → {} ({})",
            e.from, e.to_module, e.path
        );
        if !allowed {
            problems.push(format!(
                "upward import {} → {} ({}): move what it needs down, or list it in ALLOWED_UPWARD with why",
                e.from, e.to_module, e.path
            ));
        }
    }
    if upward_total.len() > MAX_UPWARD {
        problems.push(format!(
            "{} upward imports, at most {MAX_UPWARD}",
            upward_total.len()
        ));
    }
    eprintln!(
        "imports: {files} files, {edges_total} imports between files, {} upward, {} problems",
        upward_total.len(),
        problems.len()
    );
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("\n"))
    }
}

fn describe_circle(circle: &[Edge]) -> String {
    circle
        .iter()
        .map(|e| format!("{} → {} ({})", e.from, e.to, e.path))
        .collect::<Vec<_>>()
        .join("; ")
}

/// A crate of the workspace with a `src/` folder.
pub struct Crate {
    /// Its folder, relative to the workspace root (`rules`, `policy-host/template-policy`).
    pub dir: String,
    /// The name [`LAYERS`] knows it by: the folder's last part.
    pub name: String,
    /// Its crate name with underscores (`winplace_rules`), how its own binaries name it.
    pub lib_name: String,
}

/// The workspace's members (from the root `Cargo.toml`) that have a `src/` folder.
fn workspace_crates(root: &Path) -> Result<Vec<Crate>, String> {
    let text =
        std::fs::read_to_string(root.join("Cargo.toml")).map_err(|e| format!("Cargo.toml: {e}"))?;
    let members = text
        .lines()
        .find(|l| l.trim_start().starts_with("members"))
        .ok_or("Cargo.toml: no members")?;
    let mut crates = Vec::new();
    for dir in members.split('"').skip(1).step_by(2) {
        if !root.join(dir).join("src").is_dir() {
            continue;
        }
        let manifest = std::fs::read_to_string(root.join(dir).join("Cargo.toml"))
            .map_err(|e| format!("{dir}/Cargo.toml: {e}"))?;
        let package = manifest
            .lines()
            .find_map(|l| {
                let l = l.trim();
                l.strip_prefix("name")
                    .map(|rest| rest.trim_start_matches([' ', '=']).trim_matches('"'))
            })
            .unwrap_or(dir);
        crates.push(Crate {
            dir: dir.to_string(),
            name: dir.rsplit('/').next().unwrap_or(dir).to_string(),
            lib_name: package.replace('-', "_"),
        });
    }
    Ok(crates)
}

/// One crate's files and the imports between them.
pub struct Graph {
    /// Module path (`["source", "live"]`) → file (relative to the workspace root).
    pub files: BTreeMap<Vec<String>, String>,
    /// The imports, one per (from, to) pair.
    pub edges: Vec<Edge>,
}

/// What one file says: the paths it names and the names it re-exports.
#[derive(Default)]
struct FileFacts {
    /// Absolute module paths named outside test code (`crate::a::B` → `["a", "B"]`).
    named: Vec<Vec<String>>,
    /// `pub use` (any visibility) re-exports: name → the absolute path it stands for.
    reexports: BTreeMap<String, Vec<String>>,
    /// Children declared `#[cfg(test)] mod x;`: test code in files of their own.
    test_children: BTreeSet<String>,
    /// `#[path = "..."]` children: not part of the module tree we follow.
    path_children: BTreeSet<String>,
}

impl Graph {
    /// Reads every file under `<crate>/src` of the library (or, without one, the binary).
    pub fn of_crate(root: &Path, krate: &Crate) -> Result<Graph, String> {
        let src = root.join(&krate.dir).join("src");
        let mut sources = BTreeMap::new();
        collect(&src, &src, &mut sources)?;
        // A crate with both a library and a main.rs: the binary is a thin user of the library, which
        // it names by the crate's name; it is not part of the library's tree.
        let has_lib = sources.contains_key(&vec!["lib".to_string()]);
        let mut facts = BTreeMap::new();
        for (module, file) in &sources {
            let key = module_key(module, has_lib);
            let Some(key) = key else { continue };
            let text =
                std::fs::read_to_string(file).map_err(|e| format!("{}: {e}", file.display()))?;
            let parsed = syn::parse_file(&text).map_err(|e| format!("{}: {e}", file.display()))?;
            let mut v = Collector::new(&key, &krate.lib_name);
            v.visit_file(&parsed);
            let rel = file
                .strip_prefix(root)
                .unwrap_or(file)
                .to_string_lossy()
                .into_owned();
            facts.insert(key, (rel, v.facts));
        }
        // Files of `#[cfg(test)] mod x;` (and everything below them) are test code.
        let mut test_roots = Vec::new();
        for (module, (_, f)) in &facts {
            for child in f.test_children.iter().chain(&f.path_children) {
                let mut m = module.clone();
                m.push(child.clone());
                test_roots.push(m);
            }
        }
        facts.retain(|module, _| !test_roots.iter().any(|t| module.starts_with(t)));
        let files: BTreeMap<Vec<String>, String> = facts
            .iter()
            .map(|(m, (file, _))| (m.clone(), file.clone()))
            .collect();
        let reexports: BTreeMap<Vec<String>, BTreeMap<String, Vec<String>>> = facts
            .iter()
            .map(|(m, (_, f))| (m.clone(), f.reexports.clone()))
            .collect();
        let mut edges = BTreeMap::new();
        for (module, (file, f)) in &facts {
            for path in &f.named {
                if let Some(target) = resolve(path, &files, &reexports, 0) {
                    // Within the file itself, or a module naming its own descendants' items (the
                    // parent declares its children and is made of them) is no edge.
                    if target.starts_with(module) {
                        continue;
                    }
                    let to = files[&target].clone();
                    edges.entry((file.clone(), to.clone())).or_insert(Edge {
                        from: file.clone(),
                        to,
                        path: path.join("::"),
                    });
                }
            }
        }
        Ok(Graph {
            files,
            edges: edges.into_values().collect(),
        })
    }

    /// The circles: each strongly connected component of more than one file, as the edges inside it.
    pub fn circles(&self) -> Vec<Vec<Edge>> {
        let names: Vec<&String> = self.files.values().collect();
        let index: BTreeMap<&String, usize> =
            names.iter().enumerate().map(|(i, n)| (*n, i)).collect();
        let mut adjacency = vec![Vec::new(); names.len()];
        for e in &self.edges {
            adjacency[index[&e.from]].push(index[&e.to]);
        }
        let components = strongly_connected(&adjacency);
        components
            .into_iter()
            .filter(|c| c.len() > 1)
            .map(|c| {
                let set: BTreeSet<usize> = c.into_iter().collect();
                self.edges
                    .iter()
                    .filter(|e| set.contains(&index[&e.from]) && set.contains(&index[&e.to]))
                    .cloned()
                    .collect()
            })
            .collect()
    }

    /// The imports that run from a top-level module to one above it in `order`, and the top-level modules
    /// `order` does not list.
    pub fn upward(&self, order: &[&str]) -> (Vec<Upward>, BTreeSet<String>) {
        let by_file: BTreeMap<&String, &Vec<String>> =
            self.files.iter().map(|(m, f)| (f, m)).collect();
        let rank = |file: &String| -> Option<usize> {
            let module = by_file[file];
            match module.first() {
                None => Some(usize::MAX), // the crate root sits above everything
                Some(top) => order.iter().position(|o| o == top),
            }
        };
        let mut unlisted = BTreeSet::new();
        for module in self.files.keys() {
            if let Some(top) = module.first()
                && !order.contains(&top.as_str())
            {
                unlisted.insert(top.clone());
            }
        }
        let mut upward: BTreeMap<(String, String), Upward> = BTreeMap::new();
        for e in &self.edges {
            let (Some(from), Some(to)) = (rank(&e.from), rank(&e.to)) else {
                continue;
            };
            let to_module = by_file[&e.to].first().cloned().unwrap_or_default();
            if by_file[&e.from].first() != by_file[&e.to].first() && to > from {
                upward
                    .entry((e.from.clone(), to_module.clone()))
                    .or_insert(Upward {
                        from: e.from.clone(),
                        to_module,
                        path: e.path.clone(),
                    });
            }
        }
        (upward.into_values().collect(), unlisted)
    }
}

/// A file's module path: `src/a/b.rs` and `src/a/b/mod.rs` are `["a", "b"]`, `lib.rs` is `[]`; `None` for
/// a binary's root beside a library, and for `src/bin/*`.
fn module_key(module: &[String], has_lib: bool) -> Option<Vec<String>> {
    match module {
        [only] if only == "lib" => Some(Vec::new()),
        [only] if only == "main" => (!has_lib).then(Vec::new),
        [first, ..] if first == "bin" => None,
        _ => Some(module.to_vec()),
    }
}

/// Every `.rs` file under `dir`, keyed by its module path (`mod.rs` names its folder).
fn collect(
    base: &Path,
    dir: &Path,
    out: &mut BTreeMap<Vec<String>, PathBuf>,
) -> Result<(), String> {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            collect(base, &path, out)?;
        } else if path.extension().is_some_and(|e| e == "rs") {
            let rel = path.strip_prefix(base).unwrap_or(&path);
            let mut module: Vec<String> = rel
                .with_extension("")
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            if module.last().is_some_and(|m| m == "mod") {
                module.pop();
            }
            out.insert(module, path);
        }
    }
    Ok(())
}

/// The file (module path) that defines `path`: its longest prefix that is a file, then through that
/// file's re-exports of the next name, as deep as they go.
fn resolve(
    path: &[String],
    files: &BTreeMap<Vec<String>, String>,
    reexports: &BTreeMap<Vec<String>, BTreeMap<String, Vec<String>>>,
    depth: usize,
) -> Option<Vec<String>> {
    let longest = (0..=path.len())
        .rev()
        .find(|n| files.contains_key(&path[..*n]))?;
    let module = path[..longest].to_vec();
    if depth < 8
        && let Some(next) = path.get(longest)
        && let Some(target) = reexports.get(&module).and_then(|r| r.get(next))
    {
        let mut followed = target.clone();
        followed.extend_from_slice(&path[longest + 1..]);
        if let Some(found) = resolve(&followed, files, reexports, depth + 1) {
            return Some(found);
        }
    }
    Some(module)
}

/// Walks one file's syntax, skipping test code, collecting the absolute paths it names.
struct Collector {
    /// The module the walker is in (the file's, then any inline `mod x { }` inside it).
    module: Vec<String>,
    /// This crate's name, as its binary names it (`winplace_server::...`).
    lib_name: String,
    facts: FileFacts,
}

impl Collector {
    fn new(module: &[String], lib_name: &str) -> Self {
        Collector {
            module: module.to_vec(),
            lib_name: lib_name.to_string(),
            facts: FileFacts::default(),
        }
    }

    /// `segments` made absolute, or `None` when it does not start in this crate.
    fn absolute(&self, segments: &[String]) -> Option<Vec<String>> {
        let first = segments.first()?;
        let mut base = match first.as_str() {
            "crate" => Vec::new(),
            "self" => self.module.clone(),
            "super" => {
                let mut m = self.module.clone();
                m.pop()?;
                m
            }
            name if name == self.lib_name => Vec::new(),
            _ => return None,
        };
        let mut rest = &segments[1..];
        while rest.first().is_some_and(|s| s == "super") {
            base.pop()?;
            rest = &rest[1..];
        }
        base.extend(rest.iter().filter(|s| *s != "self").cloned());
        Some(base)
    }

    /// The use tree's leaves as full paths (`a::{b, c::D}` → `a::b`, `a::c::D`), with the name each one
    /// is known by here (its rename, or its last segment; `None` for a glob).
    fn leaves(
        tree: &syn::UseTree,
        prefix: &mut Vec<String>,
        out: &mut Vec<(Vec<String>, Option<String>)>,
    ) {
        match tree {
            syn::UseTree::Path(p) => {
                prefix.push(p.ident.to_string());
                Self::leaves(&p.tree, prefix, out);
                prefix.pop();
            }
            syn::UseTree::Name(n) => {
                let mut full = prefix.clone();
                let name = n.ident.to_string();
                if name != "self" {
                    full.push(name.clone());
                }
                let known = if name == "self" {
                    prefix.last().cloned()
                } else {
                    Some(name)
                };
                out.push((full, known));
            }
            syn::UseTree::Rename(r) => {
                let mut full = prefix.clone();
                full.push(r.ident.to_string());
                out.push((full, Some(r.rename.to_string())));
            }
            syn::UseTree::Glob(_) => out.push((prefix.clone(), None)),
            syn::UseTree::Group(g) => {
                for t in &g.items {
                    Self::leaves(t, prefix, out);
                }
            }
        }
    }
}

/// `#[cfg(test)]` (or `cfg(all(test, ...))`, or a `#[test]` function).
fn is_test(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        if a.path().is_ident("test") {
            return true;
        }
        if !a.path().is_ident("cfg") {
            return false;
        }
        let tokens = a
            .meta
            .require_list()
            .map(|l| l.tokens.to_string())
            .unwrap_or_default();
        tokens == "test" || tokens.starts_with("all (test") || tokens.starts_with("all(test")
    })
}

impl<'ast> Visit<'ast> for Collector {
    fn visit_item(&mut self, item: &'ast syn::Item) {
        let attrs: &[syn::Attribute] = match item {
            syn::Item::Const(i) => &i.attrs,
            syn::Item::Enum(i) => &i.attrs,
            syn::Item::Fn(i) => &i.attrs,
            syn::Item::Impl(i) => &i.attrs,
            syn::Item::Mod(i) => &i.attrs,
            syn::Item::Static(i) => &i.attrs,
            syn::Item::Struct(i) => &i.attrs,
            syn::Item::Trait(i) => &i.attrs,
            syn::Item::Type(i) => &i.attrs,
            syn::Item::Use(i) => &i.attrs,
            syn::Item::Macro(i) => &i.attrs,
            _ => &[],
        };
        if is_test(attrs) {
            if let syn::Item::Mod(m) = item
                && m.content.is_none()
            {
                self.facts.test_children.insert(m.ident.to_string());
            }
            return;
        }
        match item {
            syn::Item::Mod(m) => {
                if m.attrs.iter().any(|a| a.path().is_ident("path")) {
                    self.facts.path_children.insert(m.ident.to_string());
                }
                if let Some((_, items)) = &m.content {
                    self.module.push(m.ident.to_string());
                    for i in items {
                        self.visit_item(i);
                    }
                    self.module.pop();
                }
            }
            syn::Item::Use(u) => {
                let mut leaves = Vec::new();
                Self::leaves(&u.tree, &mut Vec::new(), &mut leaves);
                let public = !matches!(u.vis, syn::Visibility::Inherited);
                for (path, known) in leaves {
                    // `use child::X` inside a module is relative to it (2018 paths): a name of this
                    // module's own children, when the first segment is not a crate.
                    let Some(abs) = self.absolute(&path).or_else(|| {
                        let first = path.first()?;
                        if ["std", "core", "alloc"].contains(&first.as_str()) {
                            return None;
                        }
                        let mut m = self.module.clone();
                        m.extend(path.iter().cloned());
                        Some(m)
                    }) else {
                        continue;
                    };
                    if public && let Some(name) = known {
                        // A re-export is the module's facade, followed when resolving; not a use of
                        // its own.
                        self.facts.reexports.insert(name, abs);
                    } else {
                        self.facts.named.push(abs);
                    }
                }
            }
            other => syn::visit::visit_item(self, other),
        }
    }

    fn visit_impl_item_fn(&mut self, f: &'ast syn::ImplItemFn) {
        if !is_test(&f.attrs) {
            syn::visit::visit_impl_item_fn(self, f);
        }
    }

    fn visit_path(&mut self, path: &'ast syn::Path) {
        let segments: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
        if let Some(abs) = self.absolute(&segments) {
            self.facts.named.push(abs);
        }
        syn::visit::visit_path(self, path);
    }

    fn visit_visibility(&mut self, _: &'ast syn::Visibility) {
        // `pub(crate)`, `pub(super)`: a visibility, not an import.
    }

    fn visit_attribute(&mut self, _: &'ast syn::Attribute) {
        // Doc comments and derives name no module of ours.
    }
}

/// Tarjan's strongly connected components of a graph given as adjacency lists.
fn strongly_connected(adjacency: &[Vec<usize>]) -> Vec<Vec<usize>> {
    struct State<'a> {
        adjacency: &'a [Vec<usize>],
        index: Vec<Option<usize>>,
        low: Vec<usize>,
        on_stack: Vec<bool>,
        stack: Vec<usize>,
        next: usize,
        out: Vec<Vec<usize>>,
    }
    fn visit(s: &mut State, v: usize) {
        s.index[v] = Some(s.next);
        s.low[v] = s.next;
        s.next += 1;
        s.stack.push(v);
        s.on_stack[v] = true;
        for i in 0..s.adjacency[v].len() {
            let w = s.adjacency[v][i];
            match s.index[w] {
                None => {
                    visit(s, w);
                    s.low[v] = s.low[v].min(s.low[w]);
                }
                Some(iw) if s.on_stack[w] => s.low[v] = s.low[v].min(iw),
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
            s.out.push(component);
        }
    }
    let n = adjacency.len();
    let mut s = State {
        adjacency,
        index: vec![None; n],
        low: vec![0; n],
        on_stack: vec![false; n],
        stack: Vec::new(),
        next: 0,
        out: Vec::new(),
    };
    for v in 0..n {
        if s.index[v].is_none() {
            visit(&mut s, v);
        }
    }
    s.out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A crate written into a temporary folder: `(relative path, text)`.
    fn graph_of(files: &[(&str, &str)]) -> Graph {
        let dir = std::env::temp_dir().join(format!(
            "xtask-imports-{}-{}",
            std::process::id(),
            files.len() * 31 + files.iter().map(|f| f.1.len()).sum::<usize>()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        for (path, text) in files {
            let p = dir.join("k/src").join(path);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
        let krate = Crate {
            dir: "k".into(),
            name: "k".into(),
            lib_name: "k".into(),
        };
        let g = Graph::of_crate(&dir, &krate).unwrap();
        let _ = std::fs::remove_dir_all(&dir);
        g
    }

    #[test]
    fn a_circle_through_a_reexport_is_found_and_a_test_import_is_not() {
        let g = graph_of(&[
            ("lib.rs", "pub mod a; pub mod b; pub use b::B;"),
            ("a.rs", "use crate::B; pub struct A;"),
            (
                "b.rs",
                "pub struct B(crate::a::A);\n#[cfg(test)] mod tests { use crate::c::C; }",
            ),
        ]);
        let circles = g.circles();
        assert_eq!(circles.len(), 1, "{:?}", g.edges);
        let files: BTreeSet<&str> = circles[0].iter().map(|e| e.from.as_str()).collect();
        assert_eq!(files, BTreeSet::from(["k/src/a.rs", "k/src/b.rs"]));
    }

    #[test]
    fn super_and_nested_use_groups_resolve_to_their_files() {
        let g = graph_of(&[
            ("lib.rs", "pub mod low; pub mod high;"),
            ("low/mod.rs", "pub mod leaf; pub struct L;"),
            ("low/leaf.rs", "use super::L; pub fn f() {}"),
            ("high.rs", "use crate::{low::{leaf::f, L}};"),
        ]);
        assert!(g.circles().is_empty());
        let pairs: BTreeSet<(&str, &str)> = g
            .edges
            .iter()
            .map(|e| (e.from.as_str(), e.to.as_str()))
            .collect();
        assert!(pairs.contains(&("k/src/low/leaf.rs", "k/src/low/mod.rs")));
        assert!(pairs.contains(&("k/src/high.rs", "k/src/low/leaf.rs")));
        assert!(pairs.contains(&("k/src/high.rs", "k/src/low/mod.rs")));
        let (upward, unlisted) = g.upward(&["low", "high"]);
        assert!(upward.is_empty() && unlisted.is_empty());
        // high.rs names two files of `low`: one upward import (a file reaching one module).
        let (upward, _) = g.upward(&["high", "low"]);
        assert_eq!(upward.len(), 1, "{upward:?}");
        assert_eq!(upward[0].to_module, "low");
    }

    #[test]
    fn the_workspace_has_no_circle_and_its_upward_imports_are_allowed() {
        command().unwrap();
    }
}
