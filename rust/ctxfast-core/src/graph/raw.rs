//! Per-file raw extraction: what one parse of one file yields, before any cross-file name
//! resolution.
//!
//! The raw form is persisted (as a compact binary blob per file) so an incremental refresh can
//! re-run resolution for unchanged files without re-parsing them: parsing is the expensive
//! stage, resolution is cheap hash-map work.

/// Definition kinds. `Module` is stored with node kind `def` (one per file); the others map
/// to `function`, `class` and `var`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DefKind {
    Module,
    Function,
    Class,
    Var,
}

impl DefKind {
    pub fn as_str(self) -> &'static str {
        match self {
            DefKind::Module => "def",
            DefKind::Function => "function",
            DefKind::Class => "class",
            DefKind::Var => "var",
        }
    }
    fn code(self) -> u8 {
        self as u8
    }
    fn from_code(c: u8) -> DefKind {
        match c {
            0 => DefKind::Module,
            1 => DefKind::Function,
            2 => DefKind::Class,
            _ => DefKind::Var,
        }
    }
}

/// One definition. `local` is the qualname inside the module (`Class.method`); index 0 of a
/// file's defs is always the module itself (with an empty `local`).
#[derive(Clone, Debug, PartialEq)]
pub struct RawDef {
    pub kind: DefKind,
    pub name: String,
    pub local: String,
    pub line: u32,
    pub col: u32,
    pub end_line: u32,
    pub parent: u32,
    /// Dotted base-class expressions (Python/Java/TS `extends`), resolved in the parent scope.
    pub bases: Vec<String>,
    /// Names that denote the enclosing class instance inside this function (`self`, `cls`,
    /// `this`, a Go receiver).
    pub self_names: Vec<String>,
    /// For methods defined outside their type's body (Go receivers, Rust `impl`): the local
    /// qualname of the type that `self_names` refer to.
    pub self_class: String,
    /// A method of the class (or module) itself rather than of its instances: Ruby's
    /// singleton methods (`def self.x`, a method inside `class << self`,
    /// `define_singleton_method`). Ruby calls prefer the definition on the side they run on.
    pub singleton: bool,
    pub signature: String,
    pub doc: String,
}

/// A reference (call site, decorator, base class): a dotted path of identifiers. A Java
/// call with arguments ends in one more segment, [`ARG_TYPES_OPEN`]`T1,T2,…)`: the static
/// type each argument's syntax shows (`?` where it does not), which picks among overloads
/// of one arity (`emit(char)` / `emit(String)`).
#[derive(Clone, Debug, PartialEq)]
pub struct RawRef {
    pub path: Vec<String>,
    pub line: u32,
    pub col: u32,
    pub scope: u32,
    /// Arguments of the call ([`NO_ARITY`] when it is not a call with an argument list):
    /// picks among overloads (Java).
    pub arity: u32,
}

/// `RawRef::arity` of a reference that is no call with arguments (a base class, a decorator).
pub const NO_ARITY: u32 = u32::MAX;

/// How the argument-type segment of a Java call's [`RawRef::path`] starts.
pub const ARG_TYPES_OPEN: &str = "(:";

/// What an import binds a name to. `module` is written in the language's own syntax and is
/// interpreted by the resolver (`level` = Python relative-import dots).
#[derive(Clone, Debug, PartialEq)]
pub enum Target {
    Module {
        module: String,
        level: u32,
    },
    Symbol {
        module: String,
        level: u32,
        name: String,
    },
    Star {
        module: String,
        level: u32,
    },
}

#[derive(Clone, Debug, PartialEq)]
pub struct RawBinding {
    pub name: String,
    pub scope: u32,
    pub line: u32,
    pub col: u32,
    pub target: Target,
}

/// Everything extracted from one file.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RawFile {
    pub defs: Vec<RawDef>,
    pub refs: Vec<RawRef>,
    pub bindings: Vec<RawBinding>,
    /// Names bound in a scope that are not definitions (parameters, assignment targets inside
    /// functions, loop variables): a reference to them is dynamic, neither an edge nor
    /// unresolved.
    pub locals: Vec<(u32, String)>,
    /// Function-scope locals whose every binding in that scope gives them the same class:
    /// `x = Foo(...)` or a parameter annotated `x: Foo` → `(scope, "x", "Foo")`. Lets
    /// `x.method()` resolve to `Foo.method`. Python, Java (declared types), Go (parameter,
    /// `var` and composite-literal types) and TypeScript, whose class may also be a value
    /// path the resolver follows: `conn.getRepository.()` (what the call returns),
    /// `this.getTable.(await)` (what its promise resolves to), `it.gen.(field)` (what `it`'s
    /// class declares attribute `gen` holds: `const {gen} = it`); sorted.
    pub typed_locals: Vec<(u32, String, String)>,
    /// Instance attributes every assignment of which gives the same class: `self.x = Foo()`
    /// in any method, or `x: Foo` in the class body → `(class def, "x", "Foo")`. Lets
    /// `self.x.method()` resolve (Python; sorted). Part of the interface: subclasses and
    /// other files' typed locals read it.
    pub typed_attrs: Vec<(u32, String, String)>,
    /// Java `package` clause, or the namespace of a PHP file's first `namespace`
    /// declaration (dotted); empty elsewhere. Qualifies the file's definitions.
    pub package: String,
    /// PHP: each `namespace` declaration after the file's first, as (its line, its dotted
    /// namespace; empty for a global `namespace { … }` block). A file may hold several
    /// (`namespace A { … } namespace B { … }`, Flysystem's test doubles, Twig's global
    /// functions): the definitions, calls and `use` imports from that line on are that
    /// namespace's, not `package`'s ([`RawFile::namespace_at`]). Empty in nearly every file.
    pub namespaces: Vec<(u32, String)>,
}

impl RawDef {
    /// The signature as the interface keeps it: a function's or a class's (PHP reads
    /// whether a class is an `interface`), when its language's signatures are read by the
    /// resolver (`signatures`); empty otherwise.
    pub fn interface_signature(&self, signatures: bool) -> &str {
        if signatures && matches!(self.kind, DefKind::Function | DefKind::Class) {
            &self.signature
        } else {
            ""
        }
    }
}

// ---- compact binary encoding -------------------------------------------------------------

/// The first field of an interface blob since it may carry signatures: a definition count
/// no extraction has (each holds its module), so the blobs written before it, which start
/// with their definition count, are told apart ([`RawFile::decode_interface_blob`]).
pub const IFACE_MARK: u32 = 0;
/// The interface blob layout after [`IFACE_MARK`] (1 was the unmarked one).
pub const IFACE_VERSION: u32 = 2;

/// Deflates `b` at the fast level. Writing into a Vec cannot fail.
fn deflate(b: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut z = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::fast());
    let _ = z.write_all(b);
    z.finish().unwrap_or_default()
}

/// Inflates what [`deflate`] wrote; `None` for anything else.
fn inflate(b: &[u8]) -> Option<Vec<u8>> {
    use std::io::Read;
    let mut out = Vec::new();
    flate2::read::DeflateDecoder::new(b)
        .read_to_end(&mut out)
        .ok()?;
    Some(out)
}

struct W(Vec<u8>);
impl W {
    fn u32(&mut self, v: u32) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn s(&mut self, v: &str) {
        self.u32(v.len() as u32);
        self.0.extend_from_slice(v.as_bytes());
    }
    fn strs(&mut self, v: &[String]) {
        self.u32(v.len() as u32);
        for s in v {
            self.s(s);
        }
    }
}

struct R<'a>(&'a [u8], usize);
impl R<'_> {
    fn u32(&mut self) -> Option<u32> {
        let b = self.0.get(self.1..self.1 + 4)?;
        self.1 += 4;
        Some(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }
    fn u8(&mut self) -> Option<u8> {
        let b = *self.0.get(self.1)?;
        self.1 += 1;
        Some(b)
    }
    fn s(&mut self) -> Option<String> {
        let n = self.u32()? as usize;
        let b = self.0.get(self.1..self.1 + n)?;
        self.1 += n;
        Some(match std::str::from_utf8(b) {
            Ok(s) => s.to_owned(),
            Err(_) => String::from_utf8_lossy(b).into_owned(),
        })
    }

    fn strs(&mut self) -> Option<Vec<String>> {
        let n = self.u32()?;
        (0..n).map(|_| self.s()).collect()
    }
}

fn enc_target(w: &mut W, t: &Target) {
    match t {
        Target::Module { module, level } => {
            w.0.push(0);
            w.s(module);
            w.u32(*level);
        }
        Target::Symbol {
            module,
            level,
            name,
        } => {
            w.0.push(1);
            w.s(module);
            w.u32(*level);
            w.s(name);
        }
        Target::Star { module, level } => {
            w.0.push(2);
            w.s(module);
            w.u32(*level);
        }
    }
}

fn dec_target(r: &mut R<'_>) -> Option<Target> {
    Some(match r.u8()? {
        0 => Target::Module {
            module: r.s()?,
            level: r.u32()?,
        },
        1 => Target::Symbol {
            module: r.s()?,
            level: r.u32()?,
            name: r.s()?,
        },
        _ => Target::Star {
            module: r.s()?,
            level: r.u32()?,
        },
    })
}

impl RawFile {
    /// True when `self` and `other` look the same to *other* files' resolution: same
    /// definitions (kind, name, scope, line — node ids are `qualname:line` — and side),
    /// bases, self bindings, import bindings, locals, package and namespaces, and — where
    /// the resolver reads them (`signatures`, see [`RawFile::interface`]) — the same
    /// function signatures. Only the reference list, columns, end lines, docstrings and
    /// signatures nobody reads may differ. A refresh whose changed files all keep their
    /// interface re-resolves just those files, not their dependents.
    pub fn same_interface(&self, other: &RawFile, signatures: bool) -> bool {
        self.defs.len() == other.defs.len()
            && self.defs.iter().zip(&other.defs).all(|(a, b)| {
                a.kind == b.kind
                    && a.name == b.name
                    && a.local == b.local
                    && a.line == b.line
                    && a.parent == b.parent
                    && a.bases == b.bases
                    && a.self_names == b.self_names
                    && a.self_class == b.self_class
                    && a.singleton == b.singleton
                    && a.interface_signature(signatures) == b.interface_signature(signatures)
            })
            && self.bindings == other.bindings
            && self.outer_locals().eq(other.outer_locals())
            && self.typed_attrs == other.typed_attrs
            && self.package == other.package
            && self.namespaces == other.namespaces
    }

    /// The PHP namespace declaration whose code `line` is in — 0 for the file's first (or
    /// none), k for `namespaces[k - 1]` — and its dotted namespace (empty: the global one).
    pub fn namespace_at(&self, line: u32) -> (usize, &str) {
        match self.namespaces.partition_point(|(l, _)| *l <= line) {
            0 => (0, &self.package),
            k => (k, &self.namespaces[k - 1].1),
        }
    }

    /// Locals outside function bodies (module and class scope): the only ones another file's
    /// resolution can look at. Function-scope locals matter to their own file alone.
    fn outer_locals(&self) -> impl Iterator<Item = &(u32, String)> {
        self.locals.iter().filter(|(s, _)| {
            self.defs
                .get(*s as usize)
                .is_none_or(|d| d.kind != DefKind::Function)
        })
    }

    pub fn encode(&self) -> Vec<u8> {
        let mut w = W(Vec::with_capacity(256));
        w.u32(self.defs.len() as u32);
        for d in &self.defs {
            w.0.push(d.kind.code());
            w.0.push(u8::from(d.singleton));
            w.s(&d.name);
            w.s(&d.local);
            for v in [d.line, d.col, d.end_line, d.parent] {
                w.u32(v);
            }
            w.strs(&d.bases);
            w.strs(&d.self_names);
            w.s(&d.self_class);
            w.s(&d.signature);
            w.s(&d.doc);
        }
        w.u32(self.refs.len() as u32);
        for r in &self.refs {
            w.strs(&r.path);
            for v in [r.line, r.col, r.scope, r.arity] {
                w.u32(v);
            }
        }
        w.u32(self.bindings.len() as u32);
        for b in &self.bindings {
            w.s(&b.name);
            for v in [b.scope, b.line, b.col] {
                w.u32(v);
            }
            enc_target(&mut w, &b.target);
        }
        w.s(&self.package);
        w.u32(self.namespaces.len() as u32);
        for (line, ns) in &self.namespaces {
            w.u32(*line);
            w.s(ns);
        }
        w.u32(self.locals.len() as u32);
        for (s, n) in &self.locals {
            w.u32(*s);
            w.s(n);
        }
        for typed in [&self.typed_locals, &self.typed_attrs] {
            w.u32(typed.len() as u32);
            for (s, n, t) in typed {
                w.u32(*s);
                w.s(n);
                w.s(t);
            }
        }
        w.0
    }

    /// The part of `self` other files' resolution reads ([`RawFile::same_interface`]): no
    /// references, docstrings or function-scope locals, and function signatures only when
    /// `signatures` (the file's language has its return types, parameter types or `static`
    /// read by the resolver: [`super::lang::Lang::signatures_resolve`]). Stored as its own
    /// blob so a refresh reads and decodes only this for every unchanged file (most of a
    /// full blob is call sites) and the full blob only for the few files it re-resolves.
    #[must_use]
    pub fn interface(&self, signatures: bool) -> RawFile {
        RawFile {
            defs: self
                .defs
                .iter()
                .map(|d| RawDef {
                    signature: d.interface_signature(signatures).to_string(),
                    doc: String::new(),
                    ..d.clone()
                })
                .collect(),
            refs: vec![],
            bindings: self.bindings.clone(),
            locals: self.outer_locals().cloned().collect(),
            typed_locals: vec![],
            typed_attrs: self.typed_attrs.clone(),
            package: self.package.clone(),
            namespaces: self.namespaces.clone(),
        }
    }

    /// The stored interface blob of `self` ([`RawFile::interface`], deflated): the
    /// [`IFACE_MARK`] and [`IFACE_VERSION`] first, then the [`RawFile::encode`] layout.
    pub fn interface_blob(&self, signatures: bool) -> Vec<u8> {
        let mut w = W(Vec::with_capacity(256));
        w.u32(IFACE_MARK);
        w.u32(IFACE_VERSION);
        w.0.extend_from_slice(&self.interface(signatures).encode());
        deflate(&w.0)
    }

    /// Reads an interface blob back. One written before signatures were part of the
    /// interface (no [`IFACE_MARK`]: it starts with the definition count) is complete only
    /// for a language whose signatures nobody reads; for the others (`signatures`) it is
    /// `None`, so the caller parses the file again, as for any unusable blob.
    pub fn decode_interface_blob(b: &[u8], signatures: bool) -> Option<RawFile> {
        let out = inflate(b)?;
        let mut r = R(&out, 0);
        if r.u32()? != IFACE_MARK {
            return if signatures {
                None
            } else {
                RawFile::decode(&out)
            };
        }
        match r.u32()? {
            IFACE_VERSION => RawFile::decode(&out[r.1..]),
            _ => None,
        }
    }

    /// [`RawFile::encode`] deflated (fast level), as both blobs of a file are stored in
    /// `raw` (the interface behind a header: [`RawFile::interface_blob`]): the full extraction (`data`, read back only for files resolved again) compresses
    /// about 4.6× (sympy: 34 MB to 7.4 MB), the interface (`iface`, read for every file by a
    /// refresh in a new process) about 4.4× (sympy: 7.7 MB to 1.8 MB), for an inflate that
    /// costs less than decoding the blob.
    pub fn encode_compressed(&self) -> Vec<u8> {
        deflate(&self.encode())
    }

    /// Reads what [`RawFile::encode_compressed`] wrote; `None` for anything else.
    pub fn decode_compressed(b: &[u8]) -> Option<RawFile> {
        RawFile::decode(&inflate(b)?)
    }

    /// Decodes a blob written by [`RawFile::encode`]; `None` on a truncated or foreign blob
    /// (the caller then re-parses the file).
    pub fn decode(b: &[u8]) -> Option<RawFile> {
        let mut r = R(b, 0);
        let mut f = RawFile::default();
        for _ in 0..r.u32()? {
            f.defs.push(RawDef {
                kind: DefKind::from_code(r.u8()?),
                singleton: r.u8()? != 0,
                name: r.s()?,
                local: r.s()?,
                line: r.u32()?,
                col: r.u32()?,
                end_line: r.u32()?,
                parent: r.u32()?,
                bases: r.strs()?,
                self_names: r.strs()?,
                self_class: r.s()?,
                signature: r.s()?,
                doc: r.s()?,
            });
        }
        for _ in 0..r.u32()? {
            let path = r.strs()?;
            f.refs.push(RawRef {
                path,
                line: r.u32()?,
                col: r.u32()?,
                scope: r.u32()?,
                arity: r.u32()?,
            });
        }
        for _ in 0..r.u32()? {
            let name = r.s()?;
            let (scope, line, col) = (r.u32()?, r.u32()?, r.u32()?);
            f.bindings.push(RawBinding {
                name,
                scope,
                line,
                col,
                target: dec_target(&mut r)?,
            });
        }
        f.package = r.s()?;
        for _ in 0..r.u32()? {
            let line = r.u32()?;
            f.namespaces.push((line, r.s()?));
        }
        for _ in 0..r.u32()? {
            let s = r.u32()?;
            f.locals.push((s, r.s()?));
        }
        for typed in [&mut f.typed_locals, &mut f.typed_attrs] {
            for _ in 0..r.u32()? {
                let s = r.u32()?;
                let name = r.s()?;
                typed.push((s, name, r.s()?));
            }
        }
        (r.1 == b.len()).then_some(f)
    }
}
