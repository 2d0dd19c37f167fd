//! The repository-wide half of the symbol table: every file's qualnames and the global maps
//! resolution looks names up in (qualname → definition, module → file, packages, file paths).
//!
//! Building it reads every file's interface, which made a one-file refresh of a 100k-file
//! repository cost seconds. So the table is owned (it borrows no file), a process keeps the
//! one its last run built ([`crate::graph::cache`]), and the next run over the same files
//! (same paths, same module names, same order) only replaces what the files it parsed
//! contribute. The maps are exactly what [`Symbols::build`] over this run's files would give:
//! a name defined more than once keeps its other definitions aside, in order, so the next
//! one takes over when the first goes.

use super::{parent_module, FileData};
use crate::graph::lang::Lang;
use crate::graph::raw::{DefKind, RawFile};
use rayon::prelude::*;
use rustc_hash::{FxHashMap, FxHashSet};

/// A definition: (file index, definition index), ordered as a cold build meets them.
pub type DefAt = (u32, u32);

/// See the module documentation.
#[derive(Default)]
pub struct Symbols {
    /// (path, module) of every file the table is over, in order: the file indexes below
    /// point into this order, so the table is reused only over the same files.
    files: Vec<(String, String)>,
    /// Qualnames of every definition of each file (index 0 = the module itself).
    pub(super) quals: Vec<Vec<String>>,
    /// Each qualname → its first definition (file order, then definition order).
    pub(super) def_by_qual: FxHashMap<String, DefAt>,
    /// The other definitions of a qualname defined more than once, in order.
    def_others: FxHashMap<String, Vec<DefAt>>,
    pub(super) module_by_qual: FxHashMap<String, u32>,
    pub(super) packages: FxHashSet<String>,
    pub(super) py_suffix: FxHashMap<String, Vec<u32>>,
    pub(super) js_by_path: FxHashMap<String, u32>,
    /// C/C++ files by path and by file name (for `#include` resolution).
    pub(super) c_by_path: FxHashMap<String, u32>,
    pub(super) c_by_file_name: FxHashMap<String, Vec<u32>>,
    /// C/C++ functions with external linkage (and function-like macros) by name: a call that
    /// no scope or included header defines resolves to the definition when it is the only one.
    pub(super) c_funcs: FxHashMap<String, Vec<DefAt>>,
    /// C++ methods by `Class.method`, wherever they are defined: the class body is usually in
    /// a header and the method bodies in a source file.
    pub(super) c_methods: FxHashMap<String, Vec<DefAt>>,
    /// PHP, Ruby and generic-tier definitions by ([`Lang::linkage_family`], name): PHP
    /// functions outside classes and classes, every Ruby method and class, every definition
    /// of the generic tier. A call no scope, import or ancestor resolves reaches the
    /// definition when it is the only one of its name in the project (the generic tier:
    /// the nearest, `resolve/tags.rs`).
    pub(super) named: FxHashMap<(u32, String), Vec<DefAt>>,
    /// Ruby definitions by local qualname (`Rack.Utils.escape`) in every file: Ruby reopens
    /// a class or module in as many files as it likes, so a constant names them all.
    pub(super) rb_by_local: FxHashMap<String, Vec<DefAt>>,
    /// Directories (`""`, `crates/core/`, `x/src/`) holding a Rust crate root (`lib.rs` or
    /// `main.rs`): `crate::` in a file below one means that root.
    pub(super) rust_roots: FxHashSet<String>,
}

impl Symbols {
    /// The table over `files` (qualnames in parallel, the maps in file order).
    pub fn build(files: &[FileData]) -> Symbols {
        let quals: Vec<Vec<String>> = files.par_iter().map(FileData::qualnames).collect();
        let mut s = Symbols {
            files: files
                .iter()
                .map(|f| (f.rel.clone(), f.module.clone()))
                .collect(),
            ..Symbols::default()
        };
        for ((fi, f), fq) in files.iter().enumerate().zip(&quals) {
            let fi = fi as u32;
            for (di, q) in fq.iter().enumerate().skip(1) {
                s.add_def(q, (fi, di as u32));
            }
            s.add_file(fi, f);
            s.add_linkage_defs(fi, f);
        }
        s.quals = quals;
        s
    }

    /// The table for this run: `cached` (the previous run's, if this process kept it) with
    /// the contributions of the files parsed in this run (`parsed`, indexes into `files`)
    /// replaced, when it is over the same files; otherwise built afresh.
    pub fn refreshed(cached: Option<Symbols>, files: &[FileData], parsed: &[usize]) -> Symbols {
        match cached {
            Some(mut s) if s.is_over(files) => {
                s.replace(files, parsed);
                s
            }
            _ => Symbols::build(files),
        }
    }

    /// Whether the table is over `files`: the same paths with the same module names, in the
    /// same order.
    fn is_over(&self, files: &[FileData]) -> bool {
        self.files.len() == files.len()
            && self
                .files
                .iter()
                .zip(files)
                .all(|((rel, module), f)| *rel == f.rel && *module == f.module)
    }

    /// Drops what the files of `parsed` contributed from their previous extraction and adds
    /// what they contribute now. Paths and modules are unchanged ([`Symbols::is_over`]), so
    /// only the definition maps move.
    fn replace(&mut self, files: &[FileData], parsed: &[usize]) {
        let parsed: FxHashSet<u32> = parsed.iter().map(|&i| i as u32).collect();
        for &fi in &parsed {
            let old = std::mem::take(&mut self.quals[fi as usize]);
            for q in old.iter().skip(1) {
                self.drop_def(q, fi);
            }
        }
        if parsed
            .iter()
            .any(|&fi| files[fi as usize].lang.linkage_family() != 0)
        {
            for v in self
                .c_funcs
                .values_mut()
                .chain(self.c_methods.values_mut())
                .chain(self.rb_by_local.values_mut())
                .chain(self.named.values_mut())
            {
                v.retain(|d| !parsed.contains(&d.0));
            }
            self.c_funcs.retain(|_, v| !v.is_empty());
            self.c_methods.retain(|_, v| !v.is_empty());
            self.rb_by_local.retain(|_, v| !v.is_empty());
            self.named.retain(|_, v| !v.is_empty());
        }
        let mut order: Vec<u32> = parsed.into_iter().collect();
        order.sort_unstable();
        for fi in order {
            let f = &files[fi as usize];
            let fq = f.qualnames();
            for (di, q) in fq.iter().enumerate().skip(1) {
                self.add_def(q, (fi, di as u32));
            }
            self.quals[fi as usize] = fq;
            self.add_linkage_defs(fi, f);
        }
    }

    /// Records definition `at` of qualname `q`: the first in order is the one names resolve
    /// to, the others wait in `def_others`.
    fn add_def(&mut self, q: &str, at: DefAt) {
        let Some(first) = self.def_by_qual.get_mut(q) else {
            self.def_by_qual.insert(q.to_string(), at);
            return;
        };
        let aside = if at < *first {
            std::mem::replace(first, at)
        } else {
            at
        };
        let others = self.def_others.entry(q.to_string()).or_default();
        let pos = others.partition_point(|d| *d < aside);
        others.insert(pos, aside);
    }

    /// Every definition of qualname `q`, the one names resolve to first.
    pub(super) fn defs_of<'a>(&'a self, q: &str) -> impl Iterator<Item = DefAt> + 'a {
        let first = self.def_by_qual.get(q).copied();
        let others = self.def_others.get(q).map_or(&[][..], Vec::as_slice);
        first.into_iter().chain(others.iter().copied())
    }

    /// Forgets every definition of qualname `q` in file `fi`; the next one takes over.
    fn drop_def(&mut self, q: &str, fi: u32) {
        let Some(first) = self.def_by_qual.get_mut(q) else {
            return;
        };
        let others = self.def_others.get_mut(q);
        let mut rest = others.map_or(vec![], std::mem::take);
        rest.retain(|d| d.0 != fi);
        if first.0 == fi {
            if rest.is_empty() {
                self.def_by_qual.remove(q);
            } else {
                *first = rest.remove(0);
            }
        }
        if rest.is_empty() {
            self.def_others.remove(q);
        } else if let Some(o) = self.def_others.get_mut(q) {
            *o = rest;
        }
    }

    /// What file `fi`'s path and module contribute: its module, the packages above it, and
    /// the per-language path maps.
    fn add_file(&mut self, fi: u32, f: &FileData) {
        self.module_by_qual.entry(f.module.clone()).or_insert(fi);
        let pkg_base = match f.lang {
            Lang::Go => f.prefix(),
            _ => f.module.clone(),
        };
        let mut p = pkg_base.as_str();
        if f.lang == Lang::Go {
            self.packages.insert(p.to_string());
        }
        loop {
            p = parent_module(p);
            if p.is_empty() || !self.packages.insert(p.to_string()) {
                break;
            }
        }
        if f.lang == Lang::Python {
            let segs: Vec<&str> = f.module.split('.').collect();
            for i in 1..segs.len() {
                self.py_suffix
                    .entry(segs[i..].join("."))
                    .or_default()
                    .push(fi);
            }
        }
        if f.lang.is_js() {
            let no_ext = f.rel.rsplit_once('.').map_or(f.rel.as_str(), |(s, _)| s);
            self.js_by_path.entry(no_ext.to_string()).or_insert(fi);
        }
        if f.lang.is_c_family() {
            self.c_by_path.insert(f.rel.clone(), fi);
            let base = f.rel.rsplit('/').next().unwrap_or(&f.rel);
            self.c_by_file_name
                .entry(base.to_string())
                .or_default()
                .push(fi);
        }
        if f.lang == Lang::Rust {
            if let Some(dir) = rust_root(&f.rel) {
                self.rust_roots.insert(dir);
            }
        }
    }

    /// What file `fi` puts in the repository-wide name maps (C/C++ functions and methods,
    /// PHP and Ruby names, Ruby locals), each in its place in (file, definition) order.
    fn add_linkage_defs(&mut self, fi: u32, f: &FileData) {
        fn put<K: std::hash::Hash + Eq>(map: &mut FxHashMap<K, Vec<DefAt>>, key: K, at: DefAt) {
            let v = map.entry(key).or_default();
            let pos = v.partition_point(|x| *x < at);
            v.insert(pos, at);
        }
        if f.lang.is_c_family() {
            for (di, key, method) in c_linkage(&f.raw) {
                let map = if method {
                    &mut self.c_methods
                } else {
                    &mut self.c_funcs
                };
                put(map, key.to_string(), (fi, di as u32));
            }
            return;
        }
        let family = f.lang.linkage_family();
        if family == 0 {
            return;
        }
        for (di, d) in f.raw.defs.iter().enumerate().skip(1) {
            let at = (fi, di as u32);
            if f.lang == Lang::Ruby {
                put(&mut self.rb_by_local, d.local.clone(), at);
            }
            let named = match d.kind {
                _ if matches!(f.lang, Lang::Tagged(_)) => true,
                DefKind::Class => true,
                DefKind::Function => f.lang == Lang::Ruby || d.parent == 0,
                _ => false,
            };
            if named {
                put(&mut self.named, (family, d.name.clone()), at);
            }
        }
    }
}

/// What of `raw` (a file of language `lang`) other files' resolution can see through the
/// repository-wide name maps, sorted: when it changes, every file of the language's
/// [`Lang::linkage_family`] is resolved again. Empty for the other languages.
pub fn linkage_keys(lang: Lang, raw: &RawFile) -> Vec<String> {
    let mut k: Vec<String> = if lang.is_c_family() {
        c_linkage(raw)
            .map(|(_, key, m)| format!("{key}:{m}"))
            .collect()
    } else if lang.linkage_family() != 0 {
        // Names and locals (in their PHP namespace, where a file has several), and the
        // bases a lookup climbs through, but no lines: an edit that only moves definitions
        // re-resolves the files pointing into them (their edges and dependencies), not the
        // whole language.
        let mut k: Vec<String> = raw
            .defs
            .iter()
            .skip(1)
            .map(|d| {
                let ns = raw.namespace_at(d.line).1;
                let bases = d.bases.join(",");
                format!("{}:{ns}:{}:{bases}", d.kind.as_str(), d.local)
            })
            .collect();
        k.push(format!("package:{}", raw.package));
        k
    } else {
        vec![]
    };
    k.sort_unstable();
    k
}

/// What a C/C++ extraction puts in the repository-wide maps any C file's call may resolve
/// through: `(definition index, key, is a method)` — each method by `Class.method`
/// (`Symbols::c_methods`), each top-level function with external linkage (not `static`)
/// by name (`Symbols::c_funcs`).
pub fn c_linkage(raw: &RawFile) -> impl Iterator<Item = (usize, &str, bool)> {
    raw.defs.iter().enumerate().skip(1).filter_map(|(di, d)| {
        if d.kind != DefKind::Function {
            None
        } else if d.local != d.name {
            Some((di, d.local.as_str(), true))
        } else if d.parent == 0 && !d.signature.starts_with("static ") {
            Some((di, d.name.as_str(), false))
        } else {
            None
        }
    })
}

/// The crate directory (`""` or `dir/`) a Rust file roots when it is a `lib.rs` or
/// `main.rs`; `None` for any other file.
pub(super) fn rust_root(rel: &str) -> Option<String> {
    let (dir, name) = rel.rsplit_once('/').map_or(("", rel), |(d, n)| (d, n));
    (name == "lib.rs" || name == "main.rs").then(|| {
        if dir.is_empty() {
            String::new()
        } else {
            format!("{dir}/")
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::lang::{self, module_qualname};

    fn file(rel: &str, src: &str) -> FileData {
        let lang = Lang::from_path(rel).unwrap();
        let module = module_qualname(rel, lang);
        let ex = lang::extract(lang, src.as_bytes(), &module, 1);
        FileData::new(rel.to_string(), lang, module, ex.raw)
    }

    /// Every map, sorted, for comparing two tables.
    fn maps(s: &Symbols) -> Vec<String> {
        let mut out = vec![];
        let mut push = |name: &str, v: String| out.push(format!("{name} {v}"));
        for (k, v) in &s.def_by_qual {
            push("def", format!("{k} {v:?} {:?}", s.def_others.get(k)));
        }
        for (k, v) in &s.def_others {
            push("other", format!("{k} {v:?}"));
        }
        for (k, v) in s.c_funcs.iter().chain(&s.c_methods) {
            push("c", format!("{k} {v:?}"));
        }
        push("quals", format!("{:?}", s.quals));
        out.sort();
        out
    }

    #[test]
    fn replacing_parsed_files_gives_the_table_a_build_gives() {
        // `pkg.b.f` and `pkg.b.K` are defined twice in b (first wins) and `dup` in several
        // files; edits move the first definition, drop it, and add one in front.
        let before = vec![
            file("pkg/a.py", "def dup():\n    pass\n"),
            file(
                "pkg/b.py",
                "def f():\n    pass\ndef f():\n    pass\nclass K:\n    pass\n",
            ),
            file("pkg/c.py", "def dup():\n    pass\nclass K:\n    pass\n"),
            file(
                "x.c",
                "int add(int a) { return a; }\nstatic int hid(void) { return 0; }\n",
            ),
            file("y.c", "int add(int a) { return a + 1; }\n"),
            // One Go package in two files: `g.Dup` is defined in both.
            file("g/x.go", "package g\nfunc Dup() {}\n"),
            file("g/y.go", "package g\nfunc Dup() {}\nfunc Own() {}\n"),
        ];
        let edits: Vec<Vec<(usize, &str)>> = vec![
            vec![(1, "class K:\n    pass\ndef f():\n    pass\n")],
            vec![(0, "x = 1\n"), (2, "def dup():\n    pass\n")],
            vec![
                (3, "static int add(int a) { return a; }\n"),
                (1, "def f():\n    pass\n"),
            ],
            vec![
                (0, "def dup():\n    pass\ndef dup():\n    pass\n"),
                (4, "int sub(void);\n"),
            ],
            vec![(5, "package g\nfunc Other() {}\n")],
            vec![
                (5, "package g\nfunc Dup() {}\n"),
                (6, "package g\nfunc Own() {}\n"),
            ],
        ];
        let mut files = before;
        let mut table = Symbols::build(&files);
        // The first definition in (file, definition) order is the one names resolve to.
        assert_eq!(table.def_by_qual.get("pkg.b.f"), Some(&(1, 1)));
        assert_eq!(table.def_by_qual.get("g.Dup"), Some(&(5, 1)));
        assert_eq!(table.def_others.get("g.Dup"), Some(&vec![(6, 1)]));
        for step in edits {
            for (i, src) in &step {
                let rel = files[*i].rel.clone();
                files[*i] = file(&rel, src);
            }
            let parsed: Vec<usize> = step.iter().map(|(i, _)| *i).collect();
            table = Symbols::refreshed(Some(table), &files, &parsed);
            assert_eq!(
                maps(&table),
                maps(&Symbols::build(&files)),
                "after {step:?}"
            );
        }
    }

    #[test]
    fn a_table_over_other_files_is_built_again() {
        let files = vec![file("a.py", "def f():\n    pass\n")];
        let table = Symbols::build(&files);
        let more = vec![
            file("a.py", "def f():\n    pass\n"),
            file("b.py", "def g():\n    pass\n"),
        ];
        let table = Symbols::refreshed(Some(table), &more, &[]);
        assert_eq!(table.def_by_qual.get("b.g"), Some(&(1, 1)));
    }
}
