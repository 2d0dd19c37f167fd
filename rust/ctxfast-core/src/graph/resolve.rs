//! Name resolution: raw references and import bindings → project-internal `invoke`/`import`
//! edges, or `unresolved` entries.
//!
//! Rules (Python is modelled most fully):
//! * a name is looked up innermost scope first (Python skips enclosing *class* bodies, as the
//!   language does; other languages see class members), then module scope (definitions,
//!   import bindings, star imports), then the package (Go: the directory; Java: the
//!   `package` clause);
//! * `self`/`cls`/`this`/Go receivers/Rust `Self` denote the enclosing class; attribute lookup
//!   on a class searches its members and then its project-internal base classes;
//! * `mod.func` follows module bindings, package re-exports (`from .x import y` in an
//!   `__init__.py`) and submodules;
//! * builtins, the standard library and third-party modules (anything that does not map to a
//!   file in the index) are external: no edge, never unresolved;
//! * a name bound as a local/parameter is dynamic: no edge, never unresolved;
//! * in Python, a bare name found nowhere (or an attribute missing from a project module) is
//!   *unresolved*, recorded for the gate. Other languages record no unresolved names (their
//!   local scoping is not modelled well enough to make that signal trustworthy).
//!
//! Layout: this module holds the data resolution produces and the [`Resolver`] with its
//! per-file tables; `driver` resolves one file; `lookup` and `typed` are the steps
//! every language shares (scopes, bindings, attributes; the class a value holds); each
//! language's own rules (what an import names, declared return types, overloads) live in
//! its module, named as in `graph/lang/`.

mod builtins;
mod c_family;
mod context;
mod driver;
mod go;
mod java;
mod js;
mod lookup;
mod php;
mod python;
mod ruby;
mod rust_lang;
mod symbols;
mod tags;
mod typed;

#[cfg(test)]
mod tests;

use super::lang::Lang;
use super::raw::{RawFile, Target};
use super::store;
pub use context::Context;
use rustc_hash::{FxHashMap, FxHashSet};
pub use symbols::{c_linkage, linkage_keys, Symbols};

/// Bumped whenever resolution makes a reference reach another definition (or none) for the
/// same extracted files: the stored index version names it, so an index resolved by another
/// resolver is rebuilt rather than kept with the edges of the old rules. 1: a PHP call
/// reaches the method where a property shares its name, a method with a body before an
/// abstract declaration, and never another namespace's definition by its short name; a Ruby
/// call reaches a `def` before an attribute of the same name, on the side it runs on. 2: a
/// file whose header marks it generated is skipped (`discover::is_generated`), so a
/// reference into it reaches nothing.
pub const RESOLVER_VERSION: u32 = 2;

/// One parsed file as resolution sees it.
pub struct FileData {
    pub rel: String,
    pub lang: Lang,
    pub module: String,
    pub raw: RawFile,
}

impl FileData {
    /// `module` comes from the run's [`super::lang::ModuleNamer`].
    pub fn new(rel: String, lang: Lang, module: String, raw: RawFile) -> FileData {
        FileData {
            rel,
            lang,
            module,
            raw,
        }
    }

    /// The prefix that qualifies this file's definitions (module, Go package dir, Java package).
    pub fn prefix(&self) -> String {
        prefix_of(&self.rel, self.lang, &self.module, &self.raw.package)
    }

    /// Qualnames of every definition (index 0 = the module itself).
    pub fn qualnames(&self) -> Vec<String> {
        qualnames_of(&self.rel, self.lang, &self.module, &self.raw)
    }
}

/// [`FileData::prefix`] of a file not (yet) moved into a [`FileData`], whose code is in
/// Java package or PHP namespace `package`.
fn prefix_of(rel: &str, lang: Lang, module: &str, package: &str) -> String {
    match lang {
        Lang::Go => match rel.rsplit_once('/') {
            Some((dir, _)) => dir.replace('/', "."),
            None => "root".into(),
        },
        Lang::Java | Lang::Php if !package.is_empty() => package.to_string(),
        _ => module.to_string(),
    }
}

/// [`FileData::qualnames`] of a file not (yet) moved into a [`FileData`]: the cold build
/// writes definitions while parsing, before the run's file list exists.
pub fn qualnames_of(rel: &str, lang: Lang, module: &str, raw: &RawFile) -> Vec<String> {
    let prefix = prefix_of(rel, lang, module, &raw.package);
    raw.defs
        .iter()
        .enumerate()
        .map(|(i, d)| {
            if i == 0 {
                module.to_string()
            } else if raw.namespaces.is_empty() {
                format!("{prefix}.{}", d.local)
            } else {
                // A PHP file of several namespaces: each definition is its own block's.
                let ns = raw.namespace_at(d.line).1;
                format!("{}.{}", prefix_of(rel, lang, module, ns), d.local)
            }
        })
        .collect()
}

/// A reference-site node: one per enclosing scope and line (see the `ref` kind in
/// [`super`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RefNode {
    /// `enclosing_qualname:line`.
    pub id: String,
    /// [`store::node_key`] of `id`, hashed on the resolving thread.
    pub key: i64,
    /// The last segment of the first name referenced at the site.
    pub name: String,
    /// The enclosing definition's qualname.
    pub qualname: String,
    pub line: u32,
    pub col: u32,
}

/// The three edge types of the graph.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EdgeKind {
    /// Reference site → the definition it calls (or names as decorator / base class).
    Invoke,
    /// Import site → the module or definition it binds.
    Import,
    /// Definition → its enclosing definition.
    Contain,
}

impl EdgeKind {
    /// The `edges.type` value.
    pub fn as_str(self) -> &'static str {
        match self {
            EdgeKind::Invoke => "invoke",
            EdgeKind::Import => "import",
            EdgeKind::Contain => "contain",
        }
    }

    /// The `edge_rows.kind` code, which the `edges` view spells back as [`EdgeKind::as_str`]
    /// (`store::SCHEMA`; a new kind needs a code there too).
    pub fn code(self) -> i64 {
        match self {
            EdgeKind::Invoke => 0,
            EdgeKind::Import => 1,
            EdgeKind::Contain => 2,
        }
    }
}

/// One edge, between node keys ([`store::key_of`] of the ends' qualname and line: what
/// `edge_rows` stores). Resolution emits hundreds of thousands of edge ends, most of them the
/// same few definitions: each definition's key is hashed once per run
/// ([`Resolver::def_key`]) instead of formatting and hashing its text id at every end.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Edge {
    pub src: i64,
    pub dst: i64,
    pub kind: EdgeKind,
}

/// A name that resolves nowhere (Python only), recorded for the escalation gate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnresolvedName {
    /// The dotted name as written (`os.pathx`, `.sibling.f`).
    pub name: String,
    /// The key of the reference-site node it was found at.
    pub node: i64,
    pub line: u32,
    pub col: u32,
}

/// Resolution output for one file.
#[derive(Default, Debug)]
pub struct Resolved {
    pub ref_nodes: Vec<RefNode>,
    /// Invoke, import and contain edges, each once.
    pub edges: Vec<Edge>,
    pub unresolved: Vec<UnresolvedName>,
    /// Files this file's resolution depends on: those its edges point into, plus every file
    /// whose definitions or bindings were read on the way (a class's bases, the module an
    /// import goes through). A change there can move an edge here — `x.diff()` resolves to
    /// `Expr.diff` through `class Function(Expr)` in a third file — so a refresh re-resolves
    /// this file when any of them changes, exactly as a cold build would.
    pub deps: FxHashSet<u32>,
}

impl Resolved {
    /// [`Resolved::deps`] in file order, the order their `file_dep_rows` are written in: a
    /// hash set's iteration order depends on its capacity history, which for the per-thread
    /// set the resolver drains differs from run to run (which files that worker resolved
    /// before), so writing in set order gave the same index different row orders.
    pub fn deps_in_order(&self) -> Vec<u32> {
        let mut deps: Vec<u32> = self.deps.iter().copied().collect();
        deps.sort_unstable();
        deps
    }

    /// Adds `e` unless `seen` has it; `into` is the file a new edge points into (recorded as a
    /// dependency).
    fn add_edge(&mut self, seen: &mut FxHashSet<Edge>, e: Edge, into: Option<u32>) {
        if seen.insert(e) {
            self.edges.push(e);
            if let Some(f) = into {
                self.deps.insert(f);
            }
        }
    }
}

thread_local! {
    /// The file being resolved on this thread, and the other files read while resolving it
    /// (see [`Resolved::deps`]).
    static CONSULTED: std::cell::RefCell<(u32, rustc_hash::FxHashSet<u32>)> =
        std::cell::RefCell::new((u32::MAX, rustc_hash::FxHashSet::default()));
}

/// Notes that resolution read file `f`'s definitions or bindings (most lookups stay in the
/// file being resolved, which costs one comparison).
fn consulted(f: u32) {
    CONSULTED.with(|c| {
        let mut c = c.borrow_mut();
        if c.0 != f {
            c.1.insert(f);
        }
    });
}

#[derive(Clone, Debug, PartialEq)]
enum Res {
    Def(u32, u32),
    Module(u32),
    Package(String),
    External,
    Dynamic,
    NotFound,
}

/// (scope, name) → (binding index, "bound by the first segment of a dotted import").
type BindingMap<'a> = FxHashMap<(u32, &'a str), Vec<(u32, bool)>>;

/// Resolution over one run's files: the repository-wide [`Symbols`] and each file's own
/// tables, built the first time resolution looks into that file, so a refresh that
/// re-resolves a few files builds tables for those and the files they reach, not for the
/// whole repository.
pub struct Resolver<'a> {
    files: &'a [FileData],
    sym: &'a Symbols,
    tables: Vec<std::sync::OnceLock<FileTables<'a>>>,
    /// Each file's definition keys ([`Resolver::def_key`]), hashed when the file is first
    /// pointed into.
    def_keys: Vec<std::sync::OnceLock<Vec<i64>>>,
    go_module: String,
    /// Cargo package (and `[lib]`) names, `-` as `_`, → the crate root's module.
    cargo_crates: FxHashMap<String, String>,
}

/// One file's own tables (see [`Resolver`]), built independently of every other file.
/// Keys borrow from the file's extraction: cloning each name was most of the cost.
struct FileTables<'a> {
    local_index: FxHashMap<&'a str, u32>,
    bindings: BindingMap<'a>,
    stars: Vec<u32>,
    locals: FxHashSet<(u32, &'a str)>,
    typed_locals: FxHashMap<(u32, &'a str), &'a str>,
    typed_attrs: FxHashMap<(u32, &'a str), &'a str>,
}

fn typed_map(typed: &[(u32, String, String)]) -> FxHashMap<(u32, &str), &str> {
    typed
        .iter()
        .map(|(s, n, t)| ((*s, n.as_str()), t.as_str()))
        .collect()
}

impl<'a> FileTables<'a> {
    fn of(f: &'a FileData) -> FileTables<'a> {
        let mut local_index = FxHashMap::default();
        local_index.reserve(f.raw.defs.len());
        for (di, d) in f.raw.defs.iter().enumerate().skip(1) {
            local_index.entry(d.local.as_str()).or_insert(di as u32);
        }
        let mut bindings: BindingMap = FxHashMap::default();
        let mut stars = vec![];
        for (bi, b) in f.raw.bindings.iter().enumerate() {
            if matches!(b.target, Target::Star { .. }) {
                stars.push(bi as u32);
                continue;
            }
            if f.lang == Lang::Python && b.name.contains('.') {
                let first = b.name.split('.').next().unwrap_or("");
                bindings
                    .entry((b.scope, first))
                    .or_default()
                    .push((bi as u32, true));
            } else {
                bindings
                    .entry((b.scope, b.name.as_str()))
                    .or_default()
                    .push((bi as u32, false));
            }
        }
        FileTables {
            local_index,
            bindings,
            stars,
            locals: f.raw.locals.iter().map(|(s, n)| (*s, n.as_str())).collect(),
            typed_locals: typed_map(&f.raw.typed_locals),
            typed_attrs: typed_map(&f.raw.typed_attrs),
        }
    }
}

fn parent_module(q: &str) -> &str {
    q.rsplit_once('.').map_or("", |(p, _)| p)
}

impl<'a> Resolver<'a> {
    /// `sym` must be the table over `files` ([`Symbols::build`] or [`Symbols::refreshed`]);
    /// `context` is what the tree's `go.mod` and `Cargo.toml` files say ([`Context::read`]).
    pub fn new(files: &'a [FileData], sym: &'a Symbols, context: &Context) -> Resolver<'a> {
        Resolver {
            files,
            sym,
            tables: files.iter().map(|_| std::sync::OnceLock::new()).collect(),
            def_keys: files.iter().map(|_| std::sync::OnceLock::new()).collect(),
            go_module: context.go_module.clone(),
            cargo_crates: context.cargo_crates.clone(),
        }
    }

    /// File `f`'s own tables, built on first use (thread-safe: resolution runs in parallel).
    fn t(&self, f: usize) -> &FileTables<'a> {
        self.tables[f].get_or_init(|| FileTables::of(&self.files[f]))
    }

    pub fn qualnames(&self, f: u32) -> &[String] {
        &self.sym.quals[f as usize]
    }

    /// The node key of definition `d` of file `f`.
    fn def_key(&self, f: u32, d: u32) -> i64 {
        let keys = self.def_keys[f as usize].get_or_init(|| {
            let quals = &self.sym.quals[f as usize];
            let defs = &self.files[f as usize].raw.defs;
            quals
                .iter()
                .zip(defs)
                .map(|(q, def)| store::key_of(q, def.line))
                .collect()
        });
        keys[d as usize]
    }

    /// The definition (file, index) a resolution points at, if it is one: what an edge to it
    /// would name. Cheap, since the attribute walk asks at every segment.
    fn target(r: &Res) -> Option<(u32, u32)> {
        match r {
            Res::Def(f, d) => Some((*f, *d)),
            Res::Module(f) => Some((*f, 0)),
            _ => None,
        }
    }
}

/// `path` as written relative to the folder of the file `rel` (`..` climbs, `.` stays), as
/// a POSIX path from the root: what `require_relative` and a quoted `#include` name.
fn beside(rel: &str, path: &str) -> String {
    let dir = rel.rsplit_once('/').map_or("", |(d, _)| d);
    let mut parts: Vec<&str> = if dir.is_empty() {
        vec![]
    } else {
        dir.split('/').collect()
    };
    for seg in path.split('/') {
        match seg {
            "." | "" => {}
            ".." => {
                parts.pop();
            }
            s => parts.push(s),
        }
    }
    parts.join("/")
}
