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

mod builtins;
mod context;
mod php;
mod ruby;
mod symbols;
mod tags;

#[cfg(test)]
mod tests;

use super::lang::{module_qualname, Lang};
use super::raw::{DefKind, RawFile, RawRef, Target, ARG_TYPES_OPEN, NO_ARITY};
use super::store;
pub use context::Context;
use rustc_hash::{FxHashMap, FxHashSet};
use symbols::DefAt;
pub use symbols::{c_linkage, linkage_keys, Symbols};

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
        prefix_of(&self.rel, self.lang, &self.module, &self.raw)
    }

    /// Qualnames of every definition (index 0 = the module itself).
    pub fn qualnames(&self) -> Vec<String> {
        qualnames_of(&self.rel, self.lang, &self.module, &self.raw)
    }
}

/// [`FileData::prefix`] of a file not (yet) moved into a [`FileData`].
fn prefix_of(rel: &str, lang: Lang, module: &str, raw: &RawFile) -> String {
    match lang {
        Lang::Go => match rel.rsplit_once('/') {
            Some((dir, _)) => dir.replace('/', "."),
            None => "root".into(),
        },
        Lang::Java | Lang::Php if !raw.package.is_empty() => raw.package.clone(),
        _ => module.to_string(),
    }
}

/// [`FileData::qualnames`] of a file not (yet) moved into a [`FileData`]: the cold build
/// writes definitions while parsing, before the run's file list exists.
pub fn qualnames_of(rel: &str, lang: Lang, module: &str, raw: &RawFile) -> Vec<String> {
    let prefix = prefix_of(rel, lang, module, raw);
    raw.defs
        .iter()
        .enumerate()
        .map(|(i, d)| {
            if i == 0 {
                module.to_string()
            } else {
                format!("{prefix}.{}", d.local)
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

/// Where a file's child modules live: its own module, except the root Rust crate (`crate`),
/// whose children are top-level.
fn children_base(fd: &FileData) -> String {
    if fd.lang == Lang::Rust {
        children_base_of(&fd.module)
    } else {
        fd.module.clone()
    }
}

fn children_base_of(module: &str) -> String {
    if module == "crate" {
        String::new()
    } else {
        module.to_string()
    }
}

/// The class a Java method header declares it returns: `public Elements select(String q)` →
/// `Elements`, `List<Node> children()` → `List`; `None` for arrays, `void` and headers it
/// cannot read.
fn java_return_type(signature: &str, name: &str) -> Option<String> {
    let at = signature.find(&format!("{name}("))?;
    let mut before = signature[..at].trim_end();
    if before.ends_with("[]") {
        return None;
    }
    if before.ends_with('>') {
        let mut depth = 0;
        let mut cut = None;
        for (i, c) in before.char_indices().rev() {
            match c {
                '>' => depth += 1,
                '<' => {
                    depth -= 1;
                    if depth == 0 {
                        cut = Some(i);
                        break;
                    }
                }
                _ => {}
            }
        }
        before = before[..cut?].trim_end();
    }
    let ty: String = before
        .rsplit(|c: char| !(c.is_alphanumeric() || c == '_' || c == '.' || c == '$'))
        .next()?
        .to_string();
    (!ty.is_empty() && ty != "void").then_some(ty)
}

/// The class a TypeScript function header declares it returns: `where(w: string): this` →
/// `this`, `qb<T>(a?: string): SelectQueryBuilder<T>` → `SelectQueryBuilder`,
/// `const f = (x: A): ns.B => …` → `ns.B`; `None` without a return annotation or when it
/// is no plain class name (a union, an array, an object type).
fn ts_return_type<'s>(signature: &'s str, name: &str) -> Option<&'s str> {
    let ret = ts_return_text(signature, name)?;
    let end = ret
        .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '$' || c == '.'))
        .unwrap_or(ret.len());
    let (ty, rest) = ret.split_at(end);
    let rest = rest.trim_start();
    let plain = rest.is_empty() || rest.starts_with('<') && rest.ends_with('>');
    (!ty.is_empty() && plain).then_some(ty)
}

/// The return annotation of a TypeScript function header, as written (an arrow's `=>`
/// dropped): `f(a: string): Promise<T>` → `Promise<T>`.
fn ts_return_text<'s>(signature: &'s str, name: &str) -> Option<&'s str> {
    let at = signature.find(name)? + name.len();
    let open = at + signature[at..].find('(')?;
    let mut depth = 0i32;
    let mut close = None;
    for (i, c) in signature[open..].char_indices() {
        match c {
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => {
                depth -= 1;
                if depth == 0 {
                    close = Some(open + i);
                    break;
                }
            }
            _ => {}
        }
    }
    let ret = signature[close? + 1..]
        .trim_start()
        .strip_prefix(':')?
        .trim();
    Some(ret.strip_suffix("=>").unwrap_or(ret).trim_end())
}

/// A reference path without its Java argument-type segment, and that segment's types (see
/// `RawRef::path`; empty without one).
fn split_arg_types(path: &[String]) -> (&[String], Vec<&str>) {
    match path.split_last() {
        Some((last, rest)) if !rest.is_empty() && last.starts_with(ARG_TYPES_OPEN) => {
            let inner = last[ARG_TYPES_OPEN.len()..].trim_end_matches(')');
            (rest, inner.split(',').collect())
        }
        _ => (path, vec![]),
    }
}

/// The parameter types a Java method header declares, as `lang::java::type_name` writes
/// them: `void f(final int a, Map<K, V> m, String... r)` → `["int", "Map", "String..."]`.
fn java_param_types(signature: &str, name: &str) -> Vec<String> {
    let Some(at) = signature.find(&format!("{name}(")) else {
        return vec![];
    };
    let at = at + name.len() + 1;
    let mut depth = 0i32;
    let mut params = vec![];
    let mut start = at;
    for (i, c) in signature[at..].char_indices() {
        match c {
            '(' | '<' => depth += 1,
            ')' if depth == 0 => {
                params.push(&signature[start..at + i]);
                break;
            }
            ')' | '>' => depth -= 1,
            ',' if depth == 0 => {
                params.push(&signature[start..at + i]);
                start = at + i + 1;
            }
            _ => {}
        }
    }
    params
        .into_iter()
        .map(|p| {
            let words: Vec<&str> = p
                .split_whitespace()
                .filter(|w| !w.starts_with('@') && *w != "final")
                .collect();
            let ty = words[..words.len().saturating_sub(1)].join(" ");
            crate::graph::lang::java_type_name(&ty)
        })
        .collect()
}

/// Whether an argument of static type `arg` (`?`: unknown) can be passed as a parameter of
/// type `param`, and whether that is an exact match.
fn passes(arg: &str, param: &str) -> (bool, bool) {
    let param = param.trim_end_matches("...");
    const PRIMITIVE: &[&str] = &[
        "byte", "short", "char", "int", "long", "float", "double", "boolean",
    ];
    const WIDER: &[(&str, &[&str])] = &[
        ("char", &["int", "long", "float", "double"]),
        ("int", &["long", "float", "double"]),
        ("double", &[]),
        ("boolean", &[]),
    ];
    if arg == "?" || param == "Object" {
        return (true, arg == param);
    }
    if arg == param {
        return (true, true);
    }
    if let Some((_, wider)) = WIDER.iter().find(|(a, _)| *a == arg) {
        return (wider.contains(&param), false);
    }
    if arg == "String" {
        return (param == "CharSequence", false);
    }
    // Some class: maybe a subclass of `param` (the hierarchy is not consulted), never a
    // primitive or a String.
    (!PRIMITIVE.contains(&param) && param != "String", false)
}

/// The overloads of `fits` whose parameters take arguments of `arg_types`, narrowed to
/// those with the most exact matches.
fn by_arg_types<F: Fn(usize) -> Vec<String>>(
    fits: &[usize],
    arg_types: &[&str],
    params: F,
) -> Vec<usize> {
    if arg_types.is_empty() {
        return fits.to_vec();
    }
    let scored: Vec<(usize, usize)> = fits
        .iter()
        .filter_map(|&i| {
            let ps = params(i);
            let mut exact = 0;
            for (k, a) in arg_types.iter().enumerate() {
                let p = ps.get(k).or(ps.last())?;
                let (ok, same) = passes(a, p);
                if !ok {
                    return None;
                }
                exact += usize::from(same);
            }
            Some((i, exact))
        })
        .collect();
    let best = scored.iter().map(|t| t.1).max().unwrap_or(0);
    scored
        .into_iter()
        .filter(|t| t.1 == best)
        .map(|t| t.0)
        .collect()
}

/// The number of parameters a Java method header declares, and whether the last is
/// variadic: `void f(int a, Map<K, V> m, String... r)` → `(3, true)`.
fn java_params(signature: &str, name: &str) -> Option<(u32, bool)> {
    let at = signature.find(&format!("{name}("))? + name.len() + 1;
    let mut depth = 0i32;
    let (mut commas, mut any) = (0u32, false);
    let mut end = None;
    for (i, c) in signature[at..].char_indices() {
        match c {
            '(' | '<' => depth += 1,
            ')' if depth == 0 => {
                end = Some(at + i);
                break;
            }
            ')' | '>' => depth -= 1,
            ',' if depth == 0 => commas += 1,
            c if !c.is_whitespace() => any = true,
            _ => {}
        }
    }
    let params = &signature[at..end?];
    let n = if any { commas + 1 } else { 0 };
    Some((n, params.contains("...")))
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
    fn target(&self, r: &Res) -> Option<(u32, u32)> {
        match r {
            Res::Def(f, d) => Some((*f, *d)),
            Res::Module(f) => Some((*f, 0)),
            _ => None,
        }
    }

    fn self_class(&self, f: u32, s: u32) -> Res {
        let fd = &self.files[f as usize];
        let d = &fd.raw.defs[s as usize];
        if !d.self_class.is_empty() {
            if let Some(&i) = self.t(f as usize).local_index.get(d.self_class.as_str()) {
                return Res::Def(f, i);
            }
            let q = format!("{}.{}", fd.prefix(), d.self_class);
            if let Some(&(df, dd)) = self.sym.def_by_qual.get(&q) {
                return Res::Def(df, dd);
            }
            return Res::Dynamic;
        }
        let p = d.parent;
        if p != 0 && fd.raw.defs[p as usize].kind == DefKind::Class {
            return Res::Def(f, p);
        }
        Res::Dynamic
    }

    /// The class `path` (dotted, as written in `scope` of file `f`) names, if it is a
    /// project class.
    fn class_at(&self, f: u32, scope: u32, path: &str, depth: u32) -> Option<Res> {
        let segs: Vec<&str> = path.split('.').collect();
        let mut r = self.lookup_name(f, scope, segs[0], depth + 1);
        for seg in &segs[1..] {
            r = self.attr(&r, seg, depth + 1);
        }
        match r {
            Res::Def(cf, cd)
                if self.files[cf as usize].raw.defs[cd as usize].kind == DefKind::Class =>
            {
                Some(r)
            }
            _ => None,
        }
    }

    /// The class attribute `name` of instances of `base` (a class) holds, from
    /// `RawFile::typed_attrs` of the class or, unless the class defines `name` itself, of
    /// its bases.
    fn typed_attr(&self, base: &Res, name: &str, depth: u32) -> Option<Res> {
        let Res::Def(f, d) = *base else {
            return None;
        };
        consulted(f);
        let def = &self.files[f as usize].raw.defs[d as usize];
        if depth > 8 || def.kind != DefKind::Class {
            return None;
        }
        if let Some(class) = self.t(f as usize).typed_attrs.get(&(d, name)) {
            return self.class_at(f, def.parent, class, depth);
        }
        let own = format!("{}.{}", def.local, name);
        if self.t(f as usize).local_index.contains_key(own.as_str()) {
            return None;
        }
        def.bases.iter().find_map(|b| {
            let r = self.class_at(f, def.parent, b, depth)?;
            (r != *base).then(|| self.typed_attr(&r, name, depth + 1))?
        })
    }

    /// For `super().name` referenced from `scope`: the first base of the enclosing method's
    /// class that has `name` (its own or inherited), so `attr(base, name)` finds the member.
    fn super_base(&self, f: u32, scope: u32, name: &str) -> Option<Res> {
        let defs = &self.files[f as usize].raw.defs;
        let mut s = scope;
        while s != 0 {
            let d = &defs[s as usize];
            let class = &defs[d.parent as usize];
            if d.kind == DefKind::Function && class.kind == DefKind::Class && d.parent != 0 {
                return class.bases.iter().find_map(|b| {
                    let base = self.class_at(f, class.parent, b, 0)?;
                    matches!(self.attr(&base, name, 1), Res::Def(..)).then_some(base)
                });
            }
            s = if d.parent < s { d.parent } else { 0 };
        }
        None
    }

    /// The class a function-local `name` is known to hold where it is referenced from
    /// `scope` (see `RawFile::typed_locals`): the nearest function scope binding `name` decides;
    /// an untyped binding there, or a type that does not resolve to a project class, gives
    /// `None`.
    fn typed_local(&self, f: u32, scope: u32, name: &str) -> Option<Res> {
        self.typed_local_at(f, scope, name, 0)
    }

    fn typed_local_at(&self, f: u32, scope: u32, name: &str, depth: u32) -> Option<Res> {
        let fi = f as usize;
        let defs = &self.files[fi].raw.defs;
        let mut s = scope;
        while s != 0 {
            if let Some(class) = self.t(fi).typed_locals.get(&(s, name)) {
                if let Some(call) = class.strip_suffix(".()") {
                    return self.call_result(f, s, call, false, depth + 1);
                }
                if let Some(call) = class.strip_suffix(".(await)") {
                    return self.call_result(f, s, call, true, depth + 1);
                }
                return self.class_at(f, s, class, 0);
            }
            if self.t(fi).locals.contains(&(s, name)) {
                return None;
            }
            let d = &defs[s as usize];
            s = if d.parent < s { d.parent } else { 0 };
        }
        None
    }

    /// A TypeScript function declared with overload signatures (`function f(a: string): X;`
    /// … then `function f(a) { … }`): calls reach the implementation, which the language
    /// puts last.
    fn implementation(&self, r: &Res) -> Res {
        let Res::Def(f, d) = *r else {
            return r.clone();
        };
        let fd = &self.files[f as usize];
        let def = &fd.raw.defs[d as usize];
        if !fd.lang.is_js() || def.kind != DefKind::Function {
            return r.clone();
        }
        let last = (d as usize + 1..fd.raw.defs.len()).rev().find(|&i| {
            fd.raw.defs[i].kind == DefKind::Function && fd.raw.defs[i].local == def.local
        });
        last.map_or_else(|| r.clone(), |i| Res::Def(f, i as u32))
    }

    /// The class a call of `callee` (a dotted path written in `scope`, its receiver a typed
    /// local, a typed attribute or `this`, calls in it marked `()`) returns: a local bound to
    /// `conn.getRepository(Post)` holds what `getRepository` declares it returns;
    /// `awaited`, the class of the `Promise<…>` it declares.
    fn call_result(
        &self,
        f: u32,
        scope: u32,
        callee: &str,
        awaited: bool,
        depth: u32,
    ) -> Option<Res> {
        if depth > 4 {
            return None;
        }
        let segs: Vec<&str> = callee.split('.').collect();
        let mut cur = self
            .typed_local_at(f, scope, segs[0], depth)
            .unwrap_or_else(|| self.lookup_name(f, scope, segs[0], 0));
        let n = segs.len();
        for (i, seg) in segs[1..].iter().chain(std::iter::once(&"()")).enumerate() {
            cur = if *seg == "()" && awaited && i + 1 == n {
                self.awaited_class(&cur)?
            } else if *seg == "()" {
                self.returned_class(&cur)?
            } else {
                let next = self
                    .typed_attr(&cur, seg, 0)
                    .unwrap_or_else(|| self.attr(&cur, seg, 0));
                if !matches!(next, Res::Def(..)) {
                    return None;
                }
                next
            };
        }
        self.is_class(&cur).then_some(cur)
    }

    fn is_class(&self, r: &Res) -> bool {
        matches!(*r, Res::Def(f, d) if self.files[f as usize].raw.defs[d as usize].kind == DefKind::Class)
    }

    /// The overload of `r` a call with `arity` arguments reaches: among the methods sharing
    /// `r`'s qualname (a field of the same name is never called), the one whose declared
    /// parameters take `arity` arguments, else one inherited from a base class that does,
    /// else the first method; `r` itself when it names no method. When several overloads
    /// take that many arguments (`emit(Token)`, `emit(char)`) the argument types decide,
    /// which the graph does not know: [`Res::Dynamic`], no edge rather than a guess.
    fn overload(&self, r: &Res, arity: u32, arg_types: &[&str]) -> Res {
        let Res::Def(f, d) = *r else {
            return r.clone();
        };
        let defs = &self.files[f as usize].raw.defs;
        let local = &defs[d as usize].local;
        let same: Vec<usize> = (1..defs.len())
            .filter(|&i| defs[i].kind == DefKind::Function && defs[i].local == *local)
            .collect();
        let Some(&first) = same.first() else {
            return r.clone();
        };
        self.taking(f, &same, arity, arg_types, 0)
            .unwrap_or(Res::Def(f, first as u32))
    }

    /// The method of `same` (of file `f`) or, failing them, of their class's bases that
    /// takes `arity` arguments: declaring exactly `arity` parameters before taking them as
    /// varargs; [`Res::Dynamic`] when more than one does.
    fn taking(
        &self,
        f: u32,
        same: &[usize],
        arity: u32,
        arg_types: &[&str],
        depth: u32,
    ) -> Option<Res> {
        let defs = &self.files[f as usize].raw.defs;
        let params = |i: usize| java_params(&defs[i].signature, &defs[i].name);
        let exact: Vec<usize> = same
            .iter()
            .copied()
            .filter(|&i| params(i).is_some_and(|(n, _)| arity == n))
            .collect();
        let fits: Vec<usize> = if exact.is_empty() {
            same.iter()
                .copied()
                .filter(|&i| params(i).is_some_and(|(n, v)| v && arity + 1 >= n))
                .collect()
        } else {
            exact
        };
        let fits = match by_arg_types(&fits, arg_types, |i| {
            java_param_types(&defs[i].signature, &defs[i].name)
        }) {
            narrowed if fits.len() > 1 && !narrowed.is_empty() => narrowed,
            _ => fits,
        };
        match fits.as_slice() {
            [i] => return Some(Res::Def(f, *i as u32)),
            [_, _, ..] => return Some(Res::Dynamic),
            [] => {}
        }
        let m = &defs[*same.first()?];
        let class = &defs[m.parent as usize];
        if depth > 4 || class.kind != DefKind::Class || m.parent == 0 {
            return None;
        }
        class.bases.iter().find_map(|b| {
            let Res::Def(bf, bd) = self.class_at(f, class.parent, b, 0)? else {
                return None;
            };
            let bdefs = &self.files[bf as usize].raw.defs;
            let local = format!("{}.{}", bdefs[bd as usize].local, m.name);
            let inherited: Vec<usize> = (1..bdefs.len())
                .filter(|&i| bdefs[i].kind == DefKind::Function && bdefs[i].local == local)
                .collect();
            if inherited.is_empty() {
                return None;
            }
            self.taking(bf, &inherited, arity, arg_types, depth + 1)
        })
    }

    /// The class a field `name` (a `var` member of the enclosing class, referenced bare as
    /// Java allows) is declared to hold, from the class's `typed_attrs`.
    fn typed_field(&self, f: u32, scope: u32, name: &str) -> Option<Res> {
        let Res::Def(ff, fd) = self.lookup_name(f, scope, name, 0) else {
            return None;
        };
        let def = &self.files[ff as usize].raw.defs[fd as usize];
        let class = &self.files[ff as usize].raw.defs[def.parent as usize];
        if def.kind != DefKind::Var || class.kind != DefKind::Class || def.parent == 0 {
            return None;
        }
        self.typed_attr(&Res::Def(ff, def.parent), name, 0)
    }

    fn lookup_name(&self, f: u32, scope: u32, name: &str, depth: u32) -> Res {
        consulted(f);
        let fd = &self.files[f as usize];
        let defs = &fd.raw.defs;
        let fi = f as usize;
        let mut s = scope;
        let mut first = true;
        loop {
            let d = &defs[s as usize];
            let consult = s == 0 || d.kind != DefKind::Class || first || fd.lang != Lang::Python;
            // Inside Java class `C`, a bare `C` names the class (`new C()`), never its
            // constructors, which are members of the same name.
            let java_class = fd.lang == Lang::Java && s != 0 && d.kind == DefKind::Class;
            if consult && !(java_class && d.name == name) {
                if s != 0 && d.self_names.iter().any(|x| x == name) {
                    return self.self_class(f, s);
                }
                let q = if d.local.is_empty() {
                    name.to_string()
                } else {
                    format!("{}.{}", d.local, name)
                };
                if let Some(&i) = self.t(fi).local_index.get(q.as_str()) {
                    return Res::Def(f, i);
                }
                if let Some(bs) = self.t(fi).bindings.get(&(s, name)) {
                    let (bi, truncate) = bs[0];
                    return self.resolve_binding(f, bi, truncate, depth + 1);
                }
                if self.t(fi).locals.contains(&(s, name)) {
                    return Res::Dynamic;
                }
                // A bare name in a Java class body also reaches the members its bases
                // declare (`reparentChild(c)` in a subclass of `Node`), before any outer class.
                if java_class {
                    if let r @ Res::Def(..) = self.attr(&Res::Def(f, s), name, depth + 1) {
                        return r;
                    }
                }
            }
            if s == 0 {
                break;
            }
            first = false;
            s = if d.parent < s { d.parent } else { 0 };
        }
        match fd.lang {
            Lang::Go | Lang::Java => {
                if let Some(&(df, dd)) =
                    self.sym
                        .def_by_qual
                        .get(&format!("{}.{}", fd.prefix(), name))
                {
                    return Res::Def(df, dd);
                }
            }
            // A path written from `crate::`, `super::`, `self::` or a workspace crate's name.
            Lang::Rust
                if matches!(name, "crate" | "super" | "self")
                    || self.cargo_crates.contains_key(name) =>
            {
                return self.module_lookup(f, name, 0, depth + 1);
            }
            _ => {}
        }
        let mut external_star = false;
        for &bi in &self.t(fi).stars {
            let m = self.resolve_binding(f, bi, false, depth + 1);
            match self.attr(&m, name, depth + 1) {
                r @ (Res::Def(..) | Res::Module(_)) => return r,
                Res::External | Res::Dynamic => external_star = true,
                _ => {}
            }
        }
        if fd.lang.is_c_family() {
            if let Some(r) = self.c_enclosing_method(defs, scope, name) {
                return r;
            }
            if let Some([(df, dd)]) = self.sym.c_funcs.get(name).map(Vec::as_slice) {
                return Res::Def(*df, *dd);
            }
        }
        if external_star {
            return Res::External;
        }
        match fd.lang {
            Lang::Python if !builtins::PY_BUILTINS.contains(&name) => Res::NotFound,
            _ => Res::External,
        }
    }

    fn resolve_binding(&self, f: u32, bi: u32, truncate: bool, depth: u32) -> Res {
        if depth > 12 {
            return Res::Dynamic;
        }
        consulted(f);
        let b = &self.files[f as usize].raw.bindings[bi as usize];
        match &b.target {
            Target::Module { module, level } => {
                if truncate {
                    let first = module.split('.').next().unwrap_or("");
                    self.module_lookup(f, first, *level, depth)
                } else {
                    self.module_lookup(f, module, *level, depth)
                }
            }
            Target::Star { module, level } => self.module_lookup(f, module, *level, depth),
            Target::Symbol {
                module,
                level,
                name,
            } => {
                let m = self.module_lookup(f, module, *level, depth);
                self.attr(&m, name, depth + 1)
            }
        }
    }

    fn py_module(&self, full: &str, from: u32) -> Res {
        if let Some(&m) = self.sym.module_by_qual.get(full) {
            return Res::Module(m);
        }
        if self.sym.packages.contains(full) {
            return Res::Package(full.to_string());
        }
        if let Some(c) = self.sym.py_suffix.get(full) {
            // Script-style imports (`tests/` on sys.path): only a candidate below a directory
            // that is *not* a package and that also holds the importer counts, so `import json`
            // inside a package never maps to a project `json.py`.
            let me = &self.files[from as usize].module;
            let hit = c.iter().find(|&&i| {
                let other = &self.files[i as usize].module;
                let root = other[..other.len() - full.len()].trim_end_matches('.');
                !root.is_empty()
                    && !self.sym.module_by_qual.contains_key(root)
                    && me.starts_with(&format!("{root}."))
            });
            if let Some(&b) = hit {
                return Res::Module(b);
            }
        }
        Res::External
    }

    fn module_lookup(&self, f: u32, module: &str, level: u32, depth: u32) -> Res {
        let fd = &self.files[f as usize];
        match fd.lang {
            Lang::Python => {
                if level == 0 {
                    return self.py_module(module, f);
                }
                let is_pkg = fd.rel.ends_with("__init__.py") || fd.rel.ends_with("__init__.pyi");
                let mut base = if is_pkg {
                    fd.module.as_str()
                } else {
                    parent_module(&fd.module)
                };
                for _ in 1..level {
                    base = parent_module(base);
                }
                let full = match (base.is_empty(), module.is_empty()) {
                    (true, _) => module.to_string(),
                    (false, true) => base.to_string(),
                    (false, false) => format!("{base}.{module}"),
                };
                match self.sym.module_by_qual.get(&full) {
                    Some(&m) => Res::Module(m),
                    None if self.sym.packages.contains(&full) => Res::Package(full),
                    None => Res::NotFound,
                }
            }
            Lang::JavaScript | Lang::TypeScript | Lang::Tsx => {
                if !module.starts_with('.') {
                    return Res::External;
                }
                let dir = fd.rel.rsplit_once('/').map_or("", |(d, _)| d);
                let mut parts: Vec<&str> = if dir.is_empty() {
                    vec![]
                } else {
                    dir.split('/').collect()
                };
                for seg in module.split('/') {
                    match seg {
                        "." | "" => {}
                        ".." => {
                            parts.pop();
                        }
                        s => parts.push(s),
                    }
                }
                let mut p = parts.join("/");
                if let Some((stem, ext)) = p.rsplit_once('.') {
                    if matches!(ext, "js" | "ts" | "tsx" | "jsx" | "mjs" | "cjs") {
                        p = stem.to_string();
                    }
                }
                if let Some(&m) = self
                    .sym
                    .js_by_path
                    .get(&p)
                    .or_else(|| self.sym.js_by_path.get(&format!("{p}/index")))
                {
                    return Res::Module(m);
                }
                Res::External
            }
            Lang::Go => {
                if self.go_module.is_empty() || !module.starts_with(&self.go_module) {
                    return Res::External;
                }
                let rest = module[self.go_module.len()..]
                    .trim_matches('/')
                    .replace('/', ".");
                let pkg = if rest.is_empty() {
                    "root".to_string()
                } else {
                    rest
                };
                if self.sym.packages.contains(&pkg) {
                    Res::Package(pkg)
                } else {
                    Res::External
                }
            }
            Lang::Java | Lang::Php => Res::Package(module.to_string()),
            Lang::Ruby => self.rb_require(fd, module, level),
            Lang::C | Lang::Cpp => self.c_include(fd, module, level),
            // The generic tier and plain files bind no imports.
            Lang::Tagged(_) | Lang::Plain(_) => Res::External,
            Lang::Rust => {
                let segs: Vec<&str> = module.split("::").collect();
                let crate_base = children_base_of(&self.rust_crate_root(fd));
                let own = children_base(fd);
                match segs.first() {
                    Some(&"crate") => self.rust_path(&crate_base, &segs[1..], depth),
                    Some(&"self") => self.rust_path(&own, &segs[1..], depth),
                    Some(&"super") => {
                        let mut cur = own.clone();
                        let mut i = 0;
                        while segs.get(i) == Some(&"super") {
                            cur = parent_module(&cur).to_string();
                            i += 1;
                        }
                        self.rust_path(&cur, &segs[i..], depth)
                    }
                    _ => match self.rust_path(&own, &segs, depth) {
                        r @ (Res::Def(..) | Res::Module(_)) => r,
                        _ => match self.rust_path(&crate_base, &segs, depth) {
                            r @ (Res::Def(..) | Res::Module(_)) => r,
                            _ => match segs.first().and_then(|s| self.cargo_crates.get(*s)) {
                                Some(m) => self.rust_path(&children_base_of(m), &segs[1..], depth),
                                None => Res::External,
                            },
                        },
                    },
                }
            }
        }
    }

    /// Resolves `rest` below the module whose children live at `base` (`""` = root crate):
    /// the longest module prefix first, then attributes.
    fn rust_path(&self, base: &str, rest: &[&str], depth: u32) -> Res {
        for k in (0..=rest.len()).rev() {
            let cand = match (base.is_empty(), k) {
                (true, 0) => "crate".to_string(),
                (true, _) => rest[..k].join("."),
                (false, 0) => base.to_string(),
                (false, _) => format!("{base}.{}", rest[..k].join(".")),
            };
            if let Some(&m) = self.sym.module_by_qual.get(&cand) {
                let mut r = Res::Module(m);
                for s in &rest[k..] {
                    r = self.attr(&r, s, depth + 1);
                    if !matches!(r, Res::Def(..) | Res::Module(_)) {
                        return Res::External;
                    }
                }
                return r;
            }
        }
        Res::External
    }

    /// The project file a `require` (`level` 0, from the load path: `lib/` is stripped from
    /// module names) or `require_relative` (`level` 1, from the requiring file's folder)
    /// names.
    fn rb_require(&self, fd: &FileData, path: &str, level: u32) -> Res {
        let full = if level > 0 {
            beside(&fd.rel, path)
        } else {
            path.to_string()
        };
        let module = module_qualname(&format!("{full}.rb"), Lang::Ruby);
        match self.sym.module_by_qual.get(&module) {
            Some(&m) if self.files[m as usize].lang == Lang::Ruby => Res::Module(m),
            _ => Res::External,
        }
    }

    /// The one C++ method `owner.name` in the project, if exactly one is defined.
    fn c_method(&self, owner: &str, name: &str) -> Option<Res> {
        match self
            .sym
            .c_methods
            .get(format!("{owner}.{name}").as_str())?
            .as_slice()
        {
            [(f, d)] => Some(Res::Def(*f, *d)),
            _ => None,
        }
    }

    /// A bare call inside a C++ class body or method: a method of that class defined in
    /// another file (the class body declares it, a source file defines it).
    fn c_enclosing_method(
        &self,
        defs: &[super::raw::RawDef],
        scope: u32,
        name: &str,
    ) -> Option<Res> {
        let mut s = scope;
        while s != 0 {
            let d = &defs[s as usize];
            if d.kind == DefKind::Class {
                return self.c_method(&d.local, name);
            }
            if !d.self_class.is_empty() {
                return self.c_method(&d.self_class, name);
            }
            s = if d.parent < s { d.parent } else { 0 };
        }
        None
    }

    /// The project file an `#include` names: next to the includer (quoted includes only),
    /// then from the root, then the one file whose path ends with it (`-I include/` layouts).
    fn c_include(&self, fd: &FileData, path: &str, level: u32) -> Res {
        let mut candidates = vec![];
        if level > 0 {
            candidates.push(beside(&fd.rel, path));
        }
        candidates.push(path.trim_start_matches("./").to_string());
        for c in &candidates {
            if let Some(&m) = self.sym.c_by_path.get(c.as_str()) {
                return Res::Module(m);
            }
        }
        let base = path.rsplit('/').next().unwrap_or(path);
        let suffix = format!("/{path}");
        let hits: Vec<u32> = self
            .sym
            .c_by_file_name
            .get(base)
            .into_iter()
            .flatten()
            .copied()
            .filter(|&i| self.files[i as usize].rel.ends_with(&suffix))
            .collect();
        match hits.as_slice() {
            [m] => Res::Module(*m),
            _ => Res::External,
        }
    }

    fn rust_crate_root(&self, fd: &FileData) -> String {
        if let Some(i) = fd.rel.find("src/") {
            return module_qualname(&format!("{}src/lib.rs", &fd.rel[..i]), Lang::Rust);
        }
        // A crate without `src/` (`crates/core/main.rs`): the nearest folder holding a crate
        // root file.
        let mut dir = fd.rel.as_str();
        while let Some((d, _)) = dir.rsplit_once('/') {
            if self.sym.rust_roots.contains(&format!("{d}/")) {
                return module_qualname(&format!("{d}/lib.rs"), Lang::Rust);
            }
            dir = d;
        }
        module_qualname("lib.rs", Lang::Rust)
    }

    /// The class a call of the function `callee` returns, from its declared return type
    /// (`-> Self`, `-> WalkBuilder`, `-> &mut Self`); `None` when it names no project class.
    fn returned_class(&self, callee: &Res) -> Option<Res> {
        let Res::Def(f, d) = *callee else {
            return None;
        };
        let fd = &self.files[f as usize];
        let def = &fd.raw.defs[d as usize];
        if def.kind == DefKind::Class && (fd.lang == Lang::Java || fd.lang.is_js()) {
            return Some(callee.clone()); // `new A()`
        }
        if def.kind != DefKind::Function {
            return None;
        }
        if fd.lang == Lang::Java {
            let ty = java_return_type(&def.signature, &def.name)?;
            return self.class_at(f, def.parent, &ty, 0);
        }
        if fd.lang.is_js() {
            return match ts_return_type(&def.signature, &def.name)? {
                // A fluent method (`where(...): this`) returns its own instance.
                "this" => match self.self_class(f, d) {
                    r @ Res::Def(..) => Some(r),
                    _ => None,
                },
                ty => self.class_at(f, def.parent, ty, 0),
            };
        }
        if fd.lang != Lang::Rust {
            return None;
        }
        let ret = def.signature.rsplit_once("->")?.1.trim();
        let ret = ret.trim_start_matches('&').trim_start();
        // `-> &'a mut Self`: a reference's lifetime says nothing of the type.
        let ret = match ret.strip_prefix('\'') {
            Some(r) => r.split_once(' ').map_or("", |(_, t)| t).trim_start(),
            None => ret,
        };
        let ret = ret.strip_prefix("mut ").unwrap_or(ret).trim_start();
        let ty: String = ret
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':')
            .collect();
        if ty.is_empty() {
            return None;
        }
        if ty == "Self" {
            return match self.self_class(f, d) {
                r @ Res::Def(..) => Some(r),
                _ => None,
            };
        }
        self.class_at(f, def.parent, &ty.replace("::", "."), 0)
    }

    /// The class a TypeScript function declares its promise resolves to (`async f():
    /// Promise<Table>` → `Table`).
    fn awaited_class(&self, callee: &Res) -> Option<Res> {
        let Res::Def(f, d) = *callee else {
            return None;
        };
        let fd = &self.files[f as usize];
        let def = &fd.raw.defs[d as usize];
        if !fd.lang.is_js() || def.kind != DefKind::Function {
            return None;
        }
        let ret = ts_return_text(&def.signature, &def.name)?;
        let inner = ret.strip_prefix("Promise<")?.strip_suffix('>')?;
        let ty = ts_return_type(&format!("f(): {inner}"), "f")?.to_string();
        self.class_at(f, def.parent, &ty, 0)
    }

    fn attr(&self, base: &Res, name: &str, depth: u32) -> Res {
        if depth > 12 {
            return Res::Dynamic;
        }
        if let Res::Def(f, _) | Res::Module(f) = base {
            consulted(*f);
        }
        match base {
            Res::Def(f, d) => {
                let fd = &self.files[*f as usize];
                let def = &fd.raw.defs[*d as usize];
                if !matches!(def.kind, DefKind::Class | DefKind::Module) {
                    return Res::Dynamic;
                }
                let q = format!("{}.{}", def.local, name);
                if let Some(&i) = self.t(*f as usize).local_index.get(q.as_str()) {
                    return Res::Def(*f, i);
                }
                if let Some(&(df, dd)) = self.sym.def_by_qual.get(&format!(
                    "{}.{}",
                    self.sym.quals[*f as usize][*d as usize], name
                )) {
                    return Res::Def(df, dd);
                }
                if fd.lang.is_c_family() {
                    if let Some(r) = self.c_method(&def.local, name) {
                        return r;
                    }
                }
                for base in &def.bases {
                    let segs: Vec<&str> = base.split('.').collect();
                    let mut r = self.lookup_name(*f, def.parent, segs[0], depth + 1);
                    for s in &segs[1..] {
                        r = self.attr(&r, s, depth + 1);
                    }
                    if matches!(r, Res::Def(..)) && r != Res::Def(*f, *d) {
                        let found = self.attr(&r, name, depth + 1);
                        if matches!(found, Res::Def(..)) {
                            return found;
                        }
                    }
                }
                Res::Dynamic
            }
            Res::Module(m) => {
                let fd = &self.files[*m as usize];
                let mi = *m as usize;
                if let Some(&i) = self.t(mi).local_index.get(name) {
                    return Res::Def(*m, i);
                }
                if let Some(bs) = self.t(mi).bindings.get(&(0, name)) {
                    let (bi, truncate) = bs[0];
                    let r = self.resolve_binding(*m, bi, truncate, depth + 1);
                    if r != Res::NotFound {
                        return r;
                    }
                }
                let base = children_base(fd);
                let sub = if base.is_empty() {
                    name.to_string()
                } else {
                    format!("{base}.{name}")
                };
                if let Some(&s) = self.sym.module_by_qual.get(&sub) {
                    return Res::Module(s);
                }
                if self.sym.packages.contains(&sub) {
                    return Res::Package(sub);
                }
                if self.t(mi).locals.contains(&(0, name)) {
                    return Res::Dynamic;
                }
                if fd.lang.is_c_family() {
                    // Includes are followed one level only: transitive include graphs are
                    // large and cyclic, and the unique-definition rule covers the rest.
                    return Res::Dynamic;
                }
                // An `index.ts` re-exports dozens of modules (`export * from './a'`): a name
                // missing from one is looked for in the next.
                let mut external = false;
                for &bi in &self.t(mi).stars {
                    let sm = self.resolve_binding(*m, bi, false, depth + 1);
                    match self.attr(&sm, name, depth + 1) {
                        r @ (Res::Def(..) | Res::Module(_)) => return r,
                        Res::External | Res::Dynamic if fd.lang.is_js() => external = true,
                        Res::External | Res::Dynamic => return Res::External,
                        _ => {}
                    }
                }
                if external {
                    return Res::External;
                }
                if fd.lang == Lang::Python {
                    Res::NotFound
                } else {
                    Res::Dynamic
                }
            }
            Res::Package(p) => {
                let q = format!("{p}.{name}");
                if let Some(&(df, dd)) = self.sym.def_by_qual.get(&q) {
                    return Res::Def(df, dd);
                }
                if let Some(&m) = self.sym.module_by_qual.get(&q) {
                    return Res::Module(m);
                }
                if self.sym.packages.contains(&q) {
                    return Res::Package(q);
                }
                Res::NotFound
            }
            other => other.clone(),
        }
    }

    /// Resolves every reference and binding of file `f`, plus its contain edges.
    pub fn resolve_file(&self, f: u32) -> Resolved {
        let fd = &self.files[f as usize];
        let quals = &self.sym.quals[f as usize];
        let mut out = Resolved::default();
        CONSULTED.with(|c| {
            let mut c = c.borrow_mut();
            c.0 = f;
            c.1.clear();
        });
        let mut seen_nodes: FxHashSet<String> = FxHashSet::default();
        // The key of each (scope, line) site emitted so far: a site is named by its scope's
        // qualname and line, so one key serves every edge from it without formatting again.
        let mut site_keys: FxHashMap<(u32, u32), i64> = FxHashMap::default();
        let mut seen_edges: FxHashSet<Edge> = FxHashSet::default();
        let python = fd.lang == Lang::Python;
        for (di, d) in fd.raw.defs.iter().enumerate().skip(1) {
            let parent = d.parent.min(di as u32 - 1);
            let e = Edge {
                src: self.def_key(f, di as u32),
                dst: self.def_key(f, parent),
                kind: EdgeKind::Contain,
            };
            out.add_edge(&mut seen_edges, e, None);
        }
        let mut emit = |out: &mut Resolved, scope: u32, name: &str, line: u32, col: u32| -> i64 {
            if let Some(&key) = site_keys.get(&(scope, line)) {
                return key;
            }
            let q = &quals[scope as usize];
            let id = format!("{q}:{line}");
            let key = store::node_key(&id);
            if seen_nodes.insert(id.clone()) {
                out.ref_nodes.push(RefNode {
                    id,
                    key,
                    name: name.to_string(),
                    qualname: q.clone(),
                    line,
                    col,
                });
            }
            site_keys.insert((scope, line), key);
            key
        };
        let own_rules = match fd.lang {
            Lang::Php => Some(Resolver::php_ref as fn(&Self, u32, &RawRef) -> Option<DefAt>),
            Lang::Ruby => Some(Resolver::rb_ref as fn(&Self, u32, &RawRef) -> Option<DefAt>),
            Lang::Tagged(_) => Some(Resolver::tags_ref as fn(&Self, u32, &RawRef) -> Option<DefAt>),
            _ => None,
        };
        for r in &fd.raw.refs {
            // PHP and Ruby name things their own way (namespaces, reopened constants), the
            // generic tier by bare names: each has its own rules, and an edge only where
            // they reach a project definition.
            if let Some(rules) = own_rules {
                if let Some((df, dd)) = rules(self, f, r) {
                    let name = r.path.last().map(String::as_str).unwrap_or("");
                    let e = Edge {
                        src: emit(&mut out, r.scope, name, r.line, r.col),
                        dst: self.def_key(df, dd),
                        kind: EdgeKind::Invoke,
                    };
                    out.add_edge(&mut seen_edges, e, Some(df));
                }
                continue;
            }
            let (path, arg_types) = split_arg_types(&r.path);
            let head = path[0].as_str();
            let via_self = fd.raw.defs[r.scope as usize]
                .self_names
                .iter()
                .any(|s| s == head)
                || {
                    let mut s = r.scope;
                    let mut hit = false;
                    while s != 0 {
                        let d = &fd.raw.defs[s as usize];
                        if d.self_names.iter().any(|x| x == head) {
                            hit = true;
                            break;
                        }
                        s = if d.parent < s { d.parent } else { 0 };
                    }
                    hit
                };
            // An instance held by a typed local behaves as `self` does: only its members
            // (`x.method()`) get edges, never the class itself.
            let typed = if via_self {
                None
            } else if (python || fd.lang == Lang::Java) && head == "super" && path.len() > 1 {
                self.super_base(f, r.scope, &path[1])
            } else {
                self.typed_local(f, r.scope, head)
                    .or_else(|| self.typed_field(f, r.scope, head).filter(|_| !python))
            };
            let self_only = via_self || typed.is_some();
            let mut cur = typed.unwrap_or_else(|| self.lookup_name(f, r.scope, head, 0));
            let mut last = self.target(&cur);
            let mut resolved_all = last.is_some();
            let mut unresolved = python && cur == Res::NotFound;
            let mut extra_resolved = false;
            // True while `cur` is an instance reached through a typed attribute
            // (`self.x`): calling it is not a call of its class.
            let mut instance = false;
            if last.is_some() {
                for seg in &path[1..] {
                    if seg == "()" {
                        // The value a call returns: an instance of its declared return class.
                        match self.returned_class(&cur) {
                            Some(c) => {
                                cur = c;
                                continue;
                            }
                            None => {
                                resolved_all = false;
                                break;
                            }
                        }
                    }
                    let prev_is_module = matches!(cur, Res::Module(_) | Res::Package(_));
                    let typed = self.typed_attr(&cur, seg, 0);
                    instance = typed.is_some();
                    let next = typed.unwrap_or_else(|| self.attr(&cur, seg, 0));
                    match self.target(&next) {
                        Some(t) => {
                            last = Some(t);
                            extra_resolved = true;
                            cur = next;
                        }
                        None => {
                            resolved_all = false;
                            unresolved = python && next == Res::NotFound && prev_is_module;
                            break;
                        }
                    }
                }
            } else if matches!(cur, Res::Package(_)) {
                // `import a.b` then `a.b.f()` through a namespace package.
                let mut c = cur.clone();
                for seg in &path[1..] {
                    c = self.attr(&c, seg, 0);
                    if let Some(t) = self.target(&c) {
                        last = Some(t);
                        resolved_all = true;
                    } else if matches!(c, Res::Package(_)) {
                        continue;
                    } else {
                        resolved_all = false;
                        unresolved = python && c == Res::NotFound;
                        break;
                    }
                }
            }
            if fd.lang == Lang::Java && r.arity != NO_ARITY {
                // Overloads share a qualname: the call's argument count picks one.
                let picked = self.overload(&cur, r.arity, &arg_types);
                if picked != cur {
                    last = self.target(&picked);
                }
            }
            if fd.lang.is_js() {
                let imp = self.implementation(&cur);
                if imp != cur {
                    last = self.target(&imp);
                }
            }
            let name = path.last().map(String::as_str).unwrap_or("");
            if unresolved {
                let node = emit(&mut out, r.scope, name, r.line, r.col);
                out.unresolved.push(UnresolvedName {
                    name: path.join("."),
                    node,
                    line: r.line,
                    col: r.col,
                });
                continue;
            }
            // Outside Python a call is an edge only when its whole path resolves: the prefix of
            // `param.Reset()` or `field.serialize()` is the receiver, never the callee.
            let keep = match &last {
                Some(_) if instance && resolved_all => false,
                Some(_) if self_only && !extra_resolved => false,
                // Go has no constructors: `T(x)` converts, it calls nothing.
                Some(_) if fd.lang == Lang::Go && self.is_class(&cur) => false,
                Some(_) if !python => resolved_all,
                Some(_) => resolved_all || !self_only,
                None => false,
            };
            if let (true, Some((df, dd))) = (keep, last) {
                let e = Edge {
                    src: emit(&mut out, r.scope, name, r.line, r.col),
                    dst: self.def_key(df, dd),
                    kind: EdgeKind::Invoke,
                };
                out.add_edge(&mut seen_edges, e, Some(df));
            }
        }
        for (bi, b) in fd.raw.bindings.iter().enumerate() {
            let r = match fd.lang {
                Lang::Php => self
                    .php_binding(f, bi as u32)
                    .map_or(Res::External, |(df, dd)| Res::Def(df, dd)),
                _ => self.resolve_binding(f, bi as u32, false, 0),
            };
            let name = b.name.rsplit('.').next().unwrap_or(&b.name);
            let name = if name == "*" { "*" } else { name };
            match self.target(&r) {
                Some((df, dd)) => {
                    let e = Edge {
                        src: emit(&mut out, b.scope, name, b.line, b.col),
                        dst: self.def_key(df, dd),
                        kind: EdgeKind::Import,
                    };
                    out.add_edge(&mut seen_edges, e, Some(df));
                }
                None if python && r == Res::NotFound => {
                    let node = emit(&mut out, b.scope, name, b.line, b.col);
                    let text = match &b.target {
                        Target::Symbol {
                            module,
                            level,
                            name,
                        } => {
                            format!("{}{}.{}", ".".repeat(*level as usize), module, name)
                        }
                        Target::Module { module, level } | Target::Star { module, level } => {
                            format!("{}{}", ".".repeat(*level as usize), module)
                        }
                    };
                    out.unresolved.push(UnresolvedName {
                        name: text,
                        node,
                        line: b.line,
                        col: b.col,
                    });
                }
                None => {}
            }
        }
        CONSULTED.with(|c| out.deps.extend(c.borrow_mut().1.drain()));
        out.deps.remove(&f);
        out
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
