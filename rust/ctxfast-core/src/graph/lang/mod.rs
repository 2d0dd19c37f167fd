//! Per-language extraction: tree-sitter parse → [`RawFile`] (definitions, references,
//! import bindings, local names). Each language lives in its own module; the shared
//! [`Builder`] keeps the scope stack and the text helpers in one place.

use super::raw::{DefKind, RawBinding, RawDef, RawFile, RawRef, Target, NO_ARITY};
use std::fmt::Write as _;
use tree_sitter::{Node, Parser};

mod c_family;
mod compat;
mod go;
mod java;
mod js;
mod php;
pub mod plain;
mod python;
mod ruby;
mod rust_lang;
pub mod tags;

pub use java::type_name as java_type_name;

/// Source languages the graph understands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Lang {
    Python,
    JavaScript,
    TypeScript,
    Tsx,
    Go,
    Rust,
    Java,
    C,
    Cpp,
    Php,
    Ruby,
    /// Row `i` of [`tags::TAGGED`]: the generic tier, read through its grammar's tags query.
    Tagged(u8),
    /// Row `i` of [`plain::PLAIN`]: recorded and ranked by its text, not parsed.
    Plain(u8),
}

impl Lang {
    /// Language by file extension; `None` means "not a source file" (not indexed, not recorded).
    pub fn from_path(path: &str) -> Option<Lang> {
        let ext = path.rsplit_once('.').map(|(_, e)| e)?;
        Some(match ext {
            "py" | "pyi" => Lang::Python,
            "js" | "jsx" | "mjs" | "cjs" => Lang::JavaScript,
            "ts" | "mts" | "cts" => Lang::TypeScript,
            "tsx" => Lang::Tsx,
            "go" => Lang::Go,
            "rs" => Lang::Rust,
            "java" => Lang::Java,
            // `.h` is parsed as C: the C++ grammar would misread C that uses C++ keywords.
            "c" | "h" => Lang::C,
            "cc" | "cpp" | "cxx" | "c++" | "hh" | "hpp" | "hxx" | "h++" | "ipp" | "tpp" => {
                Lang::Cpp
            }
            "php" => Lang::Php,
            // Rakefiles' `.rake` tasks are Ruby too; `.gemspec` is a manifest, not code.
            "rb" | "rake" => Lang::Ruby,
            _ => return Lang::by_table_extension(ext),
        })
    }

    /// The generic-tier or plain language of extension `ext`.
    fn by_table_extension(ext: &str) -> Option<Lang> {
        let row = |exts: &[&str]| exts.contains(&ext);
        if let Some(i) = tags::TAGGED.iter().position(|t| row(t.extensions)) {
            return Some(Lang::Tagged(i as u8));
        }
        plain::PLAIN
            .iter()
            .position(|(_, exts)| row(exts))
            .map(|i| Lang::Plain(i as u8))
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Lang::Python => "python",
            Lang::JavaScript => "javascript",
            Lang::TypeScript => "typescript",
            Lang::Tsx => "tsx",
            Lang::Go => "go",
            Lang::Rust => "rust",
            Lang::Java => "java",
            Lang::C => "c",
            Lang::Cpp => "cpp",
            Lang::Php => "php",
            Lang::Ruby => "ruby",
            Lang::Tagged(i) => tags::TAGGED[i as usize].name,
            Lang::Plain(i) => plain::PLAIN[i as usize].0,
        }
    }

    /// The languages with a visitor of their own, in a fixed order.
    pub const CURATED: [Lang; 11] = [
        Lang::Python,
        Lang::JavaScript,
        Lang::TypeScript,
        Lang::Tsx,
        Lang::Go,
        Lang::Rust,
        Lang::Java,
        Lang::C,
        Lang::Cpp,
        Lang::Php,
        Lang::Ruby,
    ];

    /// Every language: the curated ones, then the generic tier, then the plain ones.
    pub fn all() -> impl Iterator<Item = Lang> {
        let tagged = (0..tags::TAGGED.len()).map(|i| Lang::Tagged(i as u8));
        let plain = (0..plain::PLAIN.len()).map(|i| Lang::Plain(i as u8));
        Lang::CURATED.into_iter().chain(tagged).chain(plain)
    }

    pub fn from_name(s: &str) -> Option<Lang> {
        Lang::all().find(|l| l.as_str() == s)
    }

    /// The grammar files of this language are parsed with; `None` for a plain language.
    fn grammar(self) -> Option<tree_sitter::Language> {
        Some(match self {
            Lang::Python => tree_sitter_python::LANGUAGE.into(),
            Lang::JavaScript => tree_sitter_javascript::LANGUAGE.into(),
            Lang::TypeScript => tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
            Lang::Tsx => tree_sitter_typescript::LANGUAGE_TSX.into(),
            Lang::Go => tree_sitter_go::LANGUAGE.into(),
            Lang::Rust => tree_sitter_rust::LANGUAGE.into(),
            Lang::Java => tree_sitter_java::LANGUAGE.into(),
            Lang::C => tree_sitter_c::LANGUAGE.into(),
            Lang::Cpp => tree_sitter_cpp::LANGUAGE.into(),
            // The grammar with the HTML around `<?php … ?>`: templates mix both.
            Lang::Php => tree_sitter_php::LANGUAGE_PHP.into(),
            Lang::Ruby => tree_sitter_ruby::LANGUAGE.into(),
            Lang::Tagged(i) => (tags::TAGGED[i as usize].grammar)(),
            Lang::Plain(_) => return None,
        })
    }

    /// Identifies the grammar build (ABI version and the sizes of its node-kind and field
    /// tables) for the parse cache key: a grammar upgrade changes it, so old entries miss.
    /// A generic-tier language adds a hash of its tags query, which a crate may change
    /// without touching the grammar.
    pub fn grammar_fingerprint(self) -> String {
        let Some(g) = self.grammar() else {
            return "plain".to_string();
        };
        let mut f = format!(
            "{}/{}/{}",
            g.abi_version(),
            g.node_kind_count(),
            g.field_count()
        );
        if let Lang::Tagged(i) = self {
            use sha2::Digest;
            let t = &tags::TAGGED[i as usize];
            let h = sha2::Sha256::digest(format!("{}{}", t.query, t.references));
            let _ = write!(f, "/q{:02x}{:02x}{:02x}{:02x}", h[0], h[1], h[2], h[3]);
        }
        f
    }

    /// True for the JS family, which shares one extractor and one module resolver.
    pub fn is_js(self) -> bool {
        matches!(self, Lang::JavaScript | Lang::TypeScript | Lang::Tsx)
    }

    /// True when the resolver reads this language's function signatures — return types
    /// (Java, JavaScript/TypeScript, Rust), parameter types picking an overload (Java),
    /// `static` linkage (C, C++), `abstract` and `interface` (PHP), a `def` rather than an
    /// accessor (Ruby) — so they are part of a file's interface
    /// ([`super::raw::RawFile::interface`]): a refresh resolving against an unchanged file
    /// must see what a cold build sees.
    pub fn signatures_resolve(self) -> bool {
        matches!(self, Lang::Java | Lang::Rust | Lang::Php | Lang::Ruby)
            || self.is_js()
            || self.is_c_family()
    }

    /// True where a file of minified-long lines ([`super::discover::is_minified`]) is skipped
    /// as generated: JavaScript and TypeScript, where minifiers are the norm, and the
    /// generic and plain tiers, whose hand-written files never look like that (a generated
    /// C# or Lua table, a data dump saved as `.lua`) and whose readers have no visitor that
    /// knows better. The curated languages' long generated lines are still parsed.
    pub fn skips_minified(self) -> bool {
        self.is_js() || matches!(self, Lang::Tagged(_) | Lang::Plain(_))
    }

    /// True for C and C++, which share one extractor and one include resolver.
    pub fn is_c_family(self) -> bool {
        matches!(self, Lang::C | Lang::Cpp)
    }

    /// The languages whose calls may resolve through repository-wide name maps (a name
    /// defined once in the project: [`super::resolve::Symbols`]), one bit per family: C and
    /// C++ share one; PHP, Ruby and each generic-tier language have their own. A file
    /// changing what it puts in those maps makes every file of its family resolve again
    /// (`plan::to_resolve`). 0: none.
    pub fn linkage_family(self) -> u32 {
        match self {
            Lang::C | Lang::Cpp => 1,
            Lang::Php => 2,
            Lang::Ruby => 4,
            // One bit per generic-tier language: its names resolve within the language.
            Lang::Tagged(i) => 8 << i,
            _ => 0,
        }
    }
}

thread_local! {
    /// The field ids of the grammar this thread last looked a field up in, by the address
    /// and length of the field name: see [`Fields::field`].
    static FIELD_IDS: std::cell::RefCell<Option<FieldIds>> = const { std::cell::RefCell::new(None) };
}

type FieldIds = (
    tree_sitter::Language,
    rustc_hash::FxHashMap<(usize, usize), u16>,
);

/// Field access by name with the field's id remembered. `child_by_field_name` finds the id
/// by comparing the name with the grammar's field names one by one (`strncmp`), on every
/// call: that search was about 3% of a cold Django build's CPU.
pub trait Fields<'t> {
    /// The child in field `name`, exactly as `Node::child_by_field_name` gives it.
    fn field(&self, name: &'static str) -> Option<Node<'t>>;
}

impl<'t> Fields<'t> for Node<'t> {
    fn field(&self, name: &'static str) -> Option<Node<'t>> {
        let lang = self.language();
        let id = FIELD_IDS.with(|cell| {
            let mut cached = cell.borrow_mut();
            // A grammar is compared by its address: one thread extracts many languages.
            if cached.as_ref().is_none_or(|(l, _)| *l != *lang) {
                *cached = Some(((*lang).clone(), rustc_hash::FxHashMap::default()));
            }
            let ids = &mut cached.as_mut().expect("just set").1;
            *ids.entry((name.as_ptr() as usize, name.len()))
                .or_insert_with(|| {
                    lang.field_id_for_name(name)
                        .map_or(0, std::num::NonZero::get)
                })
        });
        // Id 0 is no field of the grammar, for which `child_by_field_name` gives no child.
        (id != 0).then(|| self.child_by_field_id(id)).flatten()
    }
}

/// The argument count of the call whose callee is `at` (its call node is `at`'s parent or
/// grandparent, holding an `arguments` list), or [`NO_ARITY`].
fn arity(at: Node<'_>) -> u32 {
    let mut n = at;
    for _ in 0..2 {
        let Some(p) = n.parent() else {
            break;
        };
        if let Some(count) = argument_count(p) {
            return count;
        }
        n = p;
    }
    NO_ARITY
}

/// The number of arguments in `call`'s `arguments` list (comments not counted), if it has one.
fn argument_count(call: Node<'_>) -> Option<u32> {
    let args = call.field("arguments")?;
    let mut c = args.walk();
    Some(
        args.named_children(&mut c)
            .filter(|k| !k.kind().contains("comment"))
            .count() as u32,
    )
}

/// Records one binding of `key` to `class`; a disagreeing binding makes the key untyped.
fn note(
    types: &mut rustc_hash::FxHashMap<(u32, String), Option<String>>,
    key: (u32, String),
    class: Option<String>,
) {
    use std::collections::hash_map::Entry;
    match types.entry(key) {
        Entry::Vacant(v) => {
            v.insert(class);
        }
        Entry::Occupied(mut o) => {
            if *o.get() != class {
                o.insert(None);
            }
        }
    }
}

/// The keys every binding agreed on, sorted.
fn agreed(
    types: rustc_hash::FxHashMap<(u32, String), Option<String>>,
) -> Vec<(u32, String, String)> {
    let mut out: Vec<(u32, String, String)> = types
        .into_iter()
        .filter_map(|((s, n), t)| t.map(|t| (s, n, t)))
        .collect();
    out.sort_unstable();
    out
}

/// Names modules the way they are imported: a Python file inside a package chain (directories
/// with `__init__.py`) is named from the top of that chain, so `lib/matplotlib/colors.py` is
/// `matplotlib.colors` and `python/ctxfast/cli.py` is `ctxfast.cli` — whatever non-package
/// directories (`lib/`, `python/`, `src/`) hold the package. Files outside any package, and
/// every other language, follow [`module_qualname`].
#[derive(Clone, Debug, Default)]
pub struct ModuleNamer {
    py_packages: rustc_hash::FxHashSet<String>,
}

impl ModuleNamer {
    /// From every discovered path (relative, POSIX): the directories holding `__init__.py[i]`.
    pub fn new<'a>(paths: impl IntoIterator<Item = &'a str>) -> ModuleNamer {
        let py_packages = paths
            .into_iter()
            .filter_map(|p| {
                let (dir, file) = p.rsplit_once('/')?;
                matches!(file, "__init__.py" | "__init__.pyi").then(|| dir.to_string())
            })
            .collect();
        ModuleNamer { py_packages }
    }

    /// A signature of the package layout: when it changes, module names may have moved.
    pub fn signature(&self) -> String {
        let mut dirs: Vec<&str> = self.py_packages.iter().map(String::as_str).collect();
        dirs.sort_unstable();
        dirs.join("\n")
    }

    pub fn name(&self, path: &str, lang: Lang) -> String {
        if lang == Lang::Python {
            if let Some(top) = self.package_top(path) {
                return module_qualname(&path[top..], lang);
            }
        }
        module_qualname(path, lang)
    }

    /// Byte offset in `path` where its package chain starts, when the file's directory is a
    /// package below some non-package directory (`None` when nothing needs stripping).
    fn package_top(&self, path: &str) -> Option<usize> {
        let (dir, _) = path.rsplit_once('/')?;
        if !self.py_packages.contains(dir) {
            return None;
        }
        let mut top = dir;
        while let Some((parent, _)) = top.rsplit_once('/') {
            if !self.py_packages.contains(parent) {
                return Some(parent.len() + 1);
            }
            top = parent;
        }
        None
    }
}

/// The dotted module qualname of a file, from its POSIX path relative to the root.
///
/// * Python: `pkg/mod.py` → `pkg.mod`, `pkg/__init__.py` → `pkg`; a leading `src/` layout
///   root is stripped (`src/pkg/mod.py` → `pkg.mod`), matching how the package is imported.
/// * Rust: the `src/` segment is dropped and `lib.rs`/`main.rs`/`mod.rs` name their directory;
///   the root crate's `src/lib.rs` is `crate` (its child modules are top-level: `src/a.rs` → `a`).
/// * Java: a leading `src/main/java/`, `src/test/java/` or `src/` is stripped.
/// * Ruby: a leading `lib/` is stripped (`lib/rack/utils.rb` → `rack.utils`), which is also
///   how `require "rack/utils"` names it.
/// * JS/TS, Go and PHP: the path without extension, with `/` → `.` (PHP definitions are
///   qualified by their `namespace`, not by the module: see `RawFile::package`).
/// * C/C++: the extension stays, as `_ext` (`src/io.c` → `src.io_c`, `src/io.h` →
///   `src.io_h`): a source file and its header are two modules.
///
/// An empty result (a root `__init__.py` or `src/lib.rs`) becomes the file stem.
pub fn module_qualname(path: &str, lang: Lang) -> String {
    if lang.is_c_family() {
        return path
            .split('/')
            .map(|s| s.replace(['.', '+'], "_"))
            .collect::<Vec<_>>()
            .join(".");
    }
    let no_ext = path.rsplit_once('.').map_or(path, |(s, _)| s);
    let mut segs: Vec<&str> = no_ext.split('/').collect();
    match lang {
        Lang::Python => {
            if segs.len() > 1 && segs[0] == "src" {
                segs.remove(0);
            }
            if segs.last() == Some(&"__init__") && segs.len() > 1 {
                segs.pop();
            }
        }
        Lang::Rust => {
            if let Some(i) = segs.iter().position(|s| *s == "src") {
                segs.remove(i);
            }
            if matches!(segs.last(), Some(&"lib" | &"main" | &"mod")) {
                segs.pop();
            }
            if segs.is_empty() {
                // The root crate's `src/lib.rs`/`src/main.rs`: its child modules are top-level.
                return "crate".to_string();
            }
        }
        Lang::Ruby if segs.len() > 1 && segs[0] == "lib" => {
            segs.remove(0);
        }
        Lang::Java => {
            for prefix in [
                &["src", "main", "java"][..],
                &["src", "test", "java"],
                &["src"],
            ] {
                if segs.len() > prefix.len() && segs[..prefix.len()] == *prefix {
                    segs.drain(..prefix.len());
                    break;
                }
            }
        }
        _ => {}
    }
    let q = segs.join(".");
    if q.is_empty() {
        "module".to_string()
    } else {
        q
    }
}

/// How deep the extractors descend into nested syntax (nodes inside nodes). Past it a subtree
/// is not indexed and the file records why: a hostile or generated file (1,500 chained `+`,
/// thousands of nested arrays) must cost a fail-soft entry, never a stack overflow. 256 levels
/// keep the recursive walk well inside the 2 MiB stack of a rayon worker (the test
/// `nesting_past_the_bound_is_recorded_not_fatal` walks this depth on such a thread).
pub const MAX_NESTING: u32 = 256;

/// Outcome of extracting one file.
pub struct Extracted {
    pub raw: RawFile,
    /// `Some` when tree-sitter had to recover from syntax errors (the partial graph is kept).
    pub parse_error: Option<String>,
}

/// Parses `src` and extracts its raw graph. Never panics on bad input: invalid UTF-8 is
/// parsed as bytes and names are decoded lossily.
pub fn extract(lang: Lang, src: &[u8], module: &str, end_line: u32) -> Extracted {
    let src = &*compat::rewrite(lang, src);
    thread_local! {
        // One parser per worker thread and language: creating a parser and loading its
        // grammar per file is measurable on repos with thousands of small files.
        static PARSERS: std::cell::RefCell<Vec<(Lang, Parser)>> =
            const { std::cell::RefCell::new(Vec::new()) };
    }
    let mut b = Builder::new(src, module, end_line);
    let Some(grammar) = lang.grammar() else {
        // A plain language: the file is its module node.
        return Extracted {
            raw: b.finish(),
            parse_error: None,
        };
    };
    let tree = PARSERS.with(|cell| {
        let mut parsers = cell.borrow_mut();
        let pos = if let Some(p) = parsers.iter().position(|(l, _)| *l == lang) {
            p
        } else {
            let mut p = Parser::new();
            p.set_language(&grammar)
                .map_err(|_| "grammar version mismatch")?;
            parsers.push((lang, p));
            parsers.len() - 1
        };
        let parser = &mut parsers[pos].1;
        let tree = parser.parse(src, None);
        parser.reset();
        tree.ok_or("parser gave up")
    });
    let tree = match tree {
        Ok(t) => t,
        Err(e) => {
            return Extracted {
                raw: b.finish(),
                parse_error: Some(e.into()),
            }
        }
    };
    let root = tree.root_node();
    let mut query_error = None;
    match lang {
        Lang::Python => python::walk(&mut b, root),
        Lang::JavaScript | Lang::TypeScript | Lang::Tsx => js::walk(&mut b, root),
        Lang::Go => go::walk(&mut b, root),
        Lang::Rust => rust_lang::walk(&mut b, root),
        Lang::Java => java::walk(&mut b, root),
        Lang::C | Lang::Cpp => c_family::walk(&mut b, root),
        Lang::Php => php::walk(&mut b, root),
        Lang::Ruby => ruby::walk(&mut b, root),
        Lang::Tagged(i) => query_error = tags::walk(&mut b, root, i as usize).err(),
        Lang::Plain(_) => {}
    }
    let syntax = root.has_error().then(|| first_error(root));
    let too_deep = b.too_deep.map(|line| {
        format!(
            "nesting deeper than {MAX_NESTING} levels at line {line}: that subtree is not indexed"
        )
    });
    let parse_error = [syntax, too_deep, query_error]
        .into_iter()
        .flatten()
        .reduce(|a, b| format!("{a}; {b}"));
    Extracted {
        raw: b.finish(),
        parse_error,
    }
}

fn first_error(root: Node<'_>) -> String {
    let mut cur = root.walk();
    let mut stack = vec![root];
    while let Some(n) = stack.pop() {
        if n.is_error() || n.is_missing() {
            let p = n.start_position();
            let what = if n.is_missing() {
                "missing token"
            } else {
                "syntax error"
            };
            return format!(
                "syntax error: {what} at line {} col {}",
                p.row + 1,
                p.column
            );
        }
        if n.has_error() {
            let kids: Vec<Node<'_>> = n.children(&mut cur).collect();
            stack.extend(kids.into_iter().rev());
        }
    }
    "syntax error".to_string()
}

/// Scope stack + output buffers shared by every language extractor.
pub struct Builder<'s> {
    pub src: &'s [u8],
    pub out: RawFile,
    /// Index of the innermost enclosing definition (0 = the module).
    pub scope: u32,
    /// The class each local is bound to in its scope; `None` once some binding gives it no
    /// class or a different one (becomes `RawFile::typed_locals`).
    local_types: rustc_hash::FxHashMap<(u32, String), Option<String>>,
    /// The same for instance attributes, keyed by class definition (`RawFile::typed_attrs`).
    attr_types: rustc_hash::FxHashMap<(u32, String), Option<String>>,
    /// The declared type of each parameter and local, per scope, as written (`char`,
    /// `Token`, `char[]`): Java's argument types (see `RawRef::path`).
    pub declared: rustc_hash::FxHashMap<(u32, String), String>,
    /// Current nesting of the walk, bounded by [`MAX_NESTING`].
    depth: u32,
    /// Line of the first subtree skipped for being nested too deep.
    too_deep: Option<u32>,
}

impl<'s> Builder<'s> {
    fn new(src: &'s [u8], module: &str, end_line: u32) -> Self {
        let name = module.rsplit('.').next().unwrap_or(module).to_string();
        let out = RawFile {
            defs: vec![RawDef {
                kind: DefKind::Module,
                name,
                local: String::new(),
                line: 1,
                col: 0,
                end_line: end_line.max(1),
                parent: 0,
                bases: vec![],
                self_names: vec![],
                self_class: String::new(),
                singleton: false,
                signature: String::new(),
                doc: String::new(),
            }],
            ..Default::default()
        };
        Builder {
            src,
            out,
            scope: 0,
            local_types: rustc_hash::FxHashMap::default(),
            attr_types: rustc_hash::FxHashMap::default(),
            declared: rustc_hash::FxHashMap::default(),
            depth: 0,
            too_deep: None,
        }
    }

    fn finish(mut self) -> RawFile {
        self.out.typed_locals = agreed(self.local_types);
        self.out.typed_attrs = agreed(self.attr_types);
        self.out
    }

    /// Node text, lossily decoded.
    pub fn text(&self, n: Node<'_>) -> String {
        String::from_utf8_lossy(&self.src[n.byte_range()]).into_owned()
    }

    pub fn field_text(&self, n: Node<'_>, field: &'static str) -> Option<String> {
        n.field(field).map(|c| self.text(c))
    }

    pub fn cur_def(&self) -> &RawDef {
        &self.out.defs[self.scope as usize]
    }

    /// Adds a definition under the current scope and returns its index.
    pub fn def(&mut self, kind: DefKind, name: String, at: Node<'_>, signature: String) -> u32 {
        let parent = self.cur_def();
        let local = if parent.local.is_empty() {
            name.clone()
        } else {
            format!("{}.{}", parent.local, name)
        };
        let p = at.start_position();
        self.out.defs.push(RawDef {
            kind,
            name,
            local,
            line: p.row as u32 + 1,
            col: p.column as u32,
            end_line: at.end_position().row as u32 + 1,
            parent: self.scope,
            bases: vec![],
            self_names: vec![],
            self_class: String::new(),
            singleton: false,
            signature,
            doc: String::new(),
        });
        (self.out.defs.len() - 1) as u32
    }

    /// Runs `f` with `idx` as the current scope.
    pub fn within<F: FnOnce(&mut Self)>(&mut self, idx: u32, f: F) {
        let saved = self.scope;
        self.scope = idx;
        f(self);
        self.scope = saved;
    }

    pub fn reference(&mut self, path: Vec<String>, at: Node<'_>) {
        self.reference_in(path, at, None);
    }

    /// [`Builder::reference`] for the callee `at` of the call node `call`, which the caller
    /// already holds: the arity is read from `call` instead of climbing back up to it
    /// (`Node::parent` searches down from the root, 2% of a cold Django build).
    pub fn call_reference(&mut self, path: Vec<String>, at: Node<'_>, call: Node<'_>) {
        self.reference_in(path, at, Some(call));
    }

    fn reference_in(&mut self, path: Vec<String>, at: Node<'_>, call: Option<Node<'_>>) {
        if path.is_empty() || path.iter().any(String::is_empty) {
            return;
        }
        let p = at.start_position();
        let arity = call.and_then(argument_count).unwrap_or_else(|| arity(at));
        self.out.refs.push(RawRef {
            path,
            line: p.row as u32 + 1,
            col: p.column as u32,
            scope: self.scope,
            arity,
        });
    }

    pub fn bind(&mut self, name: String, target: Target, at: Node<'_>) {
        let p = at.start_position();
        self.out.bindings.push(RawBinding {
            name,
            scope: self.scope,
            line: p.row as u32 + 1,
            col: p.column as u32,
            target,
        });
    }

    pub fn local(&mut self, name: String) {
        self.note_type(&name, None);
        self.out.locals.push((self.scope, name));
    }

    /// A local bound to an instance of the class at dotted path `class` (`x = Foo()`,
    /// `x: Foo`); it stays typed only if every binding of `name` in this scope agrees.
    pub fn typed_local(&mut self, name: String, class: String) {
        self.note_type(&name, Some(class));
        self.out.locals.push((self.scope, name));
    }

    /// An assignment to attribute `name` of instances of class definition `class_def`
    /// (`self.name = ...` in a method, `name: T` in the class body); `class` is the class it
    /// binds when known. Typed only if every such assignment agrees.
    pub fn attr_assigned(&mut self, class_def: u32, name: String, class: Option<String>) {
        note(&mut self.attr_types, (class_def, name), class);
    }

    fn note_type(&mut self, name: &str, class: Option<String>) {
        note(&mut self.local_types, (self.scope, name.to_string()), class);
    }

    /// The header text from `n`'s start up to (not including) `body`, whitespace-collapsed and
    /// capped: the skeleton signature the ego-graph and API index show.
    pub fn header(&self, n: Node<'_>, body: Option<Node<'_>>) -> String {
        let end = body.map_or(n.end_byte(), |b| b.start_byte());
        let raw = String::from_utf8_lossy(&self.src[n.start_byte()..end.max(n.start_byte())]);
        let mut s = collapse(&raw);
        while s.ends_with('{') || s.ends_with(' ') {
            s.pop();
        }
        cap(s, 300)
    }

    /// The first line of `n`'s text (for variables).
    pub fn first_line(&self, n: Node<'_>) -> String {
        let t = self.text(n);
        cap(collapse(t.lines().next().unwrap_or("")), 200)
    }

    /// Runs `f` (the visit of `n`) one nesting level deeper; past [`MAX_NESTING`] it skips `n`
    /// and remembers the first such line for the file's fail-soft entry.
    pub fn nested<F: FnOnce(&mut Self)>(&mut self, n: Node<'_>, f: F) {
        if self.depth >= MAX_NESTING {
            self.too_deep
                .get_or_insert(n.start_position().row as u32 + 1);
            return;
        }
        self.depth += 1;
        f(self);
        self.depth -= 1;
    }

    /// Recurses into every named child with the current scope.
    pub fn children<F: FnMut(&mut Self, Node<'_>)>(&mut self, n: Node<'_>, mut f: F) {
        let mut cur = n.walk();
        for k in n.named_children(&mut cur) {
            f(self, k);
        }
    }
}

pub fn collapse(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

pub fn cap(mut s: String, n: usize) -> String {
    if s.len() > n {
        let mut i = n;
        while !s.is_char_boundary(i) {
            i -= 1;
        }
        s.truncate(i);
        s.push('…');
    }
    s
}

/// First paragraph of a docstring/comment block, whitespace-collapsed and capped.
pub fn first_paragraph(doc: &str) -> String {
    let para = doc
        .trim()
        .split("\n\n")
        .next()
        .unwrap_or("")
        .lines()
        .map(|l| {
            l.trim()
                .trim_start_matches("///")
                .trim_start_matches("//")
                .trim_start_matches('*')
        })
        .collect::<Vec<_>>()
        .join(" ");
    cap(collapse(&para), 400)
}

/// Dotted path of an identifier/member chain, or `None` for anything dynamic
/// (calls, subscripts, literals in the chain). Walks the chain in a loop: a hostile
/// `a.a.a…` thousands deep costs no stack.
pub fn dotted(
    b: &Builder<'_>,
    n: Node<'_>,
    member_kinds: &[&str],
    obj_field: &'static str,
    prop_field: &'static str,
    ident_kinds: &[&str],
) -> Option<Vec<String>> {
    let mut props = vec![];
    let mut cur = n;
    loop {
        let k = cur.kind();
        if ident_kinds.contains(&k) {
            props.push(b.text(cur));
            props.reverse();
            return Some(props);
        }
        if !member_kinds.contains(&k) {
            return None;
        }
        let obj = cur.field(obj_field)?;
        props.push(b.text(cur.field(prop_field)?));
        cur = obj;
    }
}

// `Lang::linkage_family` gives each generic-tier language one bit of a `u32` from bit 3 on.
const _: () = assert!(tags::TAGGED.len() <= 29);
