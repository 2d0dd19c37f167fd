//! The resolver on its own: extractions in, edges / reference sites / unresolved names out,
//! with no database in between.

use super::*;
use crate::graph::lang::{self, module_qualname};

/// Extracts `srcs` (path, text) as the indexer does (module names from the paths).
fn files(srcs: &[(&str, &str)]) -> Vec<FileData> {
    srcs.iter()
        .map(|(rel, src)| {
            let lang = Lang::from_path(rel).unwrap();
            let module = module_qualname(rel, lang);
            let lines = src.matches('\n').count() as u32 + 1;
            let ex = lang::extract(lang, src.as_bytes(), &module, lines);
            FileData::new(rel.to_string(), lang, module, ex.raw)
        })
        .collect()
}

/// The resolution of file `f` of `srcs`, with the text id of every node key it can name.
struct Resolution {
    resolved: Resolved,
    ids: FxHashMap<i64, String>,
}

impl std::ops::Deref for Resolution {
    type Target = Resolved;
    fn deref(&self) -> &Resolved {
        &self.resolved
    }
}

impl Resolution {
    fn id(&self, key: i64) -> &str {
        &self.ids[&key]
    }
}

fn resolve(srcs: &[(&str, &str)], f: u32) -> Resolution {
    let fs = files(srcs);
    let sym = Symbols::build(&fs);
    let r = Resolver::new(&fs, &sym, &super::Context::default());
    let resolved = r.resolve_file(f);
    let mut ids: FxHashMap<i64, String> = FxHashMap::default();
    for (fi, fd) in fs.iter().enumerate() {
        for (q, d) in r.qualnames(fi as u32).iter().zip(&fd.raw.defs) {
            ids.insert(store::key_of(q, d.line), format!("{q}:{}", d.line));
        }
    }
    for n in &resolved.ref_nodes {
        assert_eq!(n.key, store::node_key(&n.id));
        ids.insert(n.key, n.id.clone());
    }
    Resolution { resolved, ids }
}

fn edges(r: &Resolution, kind: EdgeKind) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = r
        .edges
        .iter()
        .filter(|e| e.kind == kind)
        .map(|e| (r.id(e.src).to_string(), r.id(e.dst).to_string()))
        .collect();
    out.sort();
    out
}

fn pair(a: &str, b: &str) -> (String, String) {
    (a.to_string(), b.to_string())
}

#[test]
fn an_imported_function_call_is_an_invoke_edge_and_a_dependency() {
    let srcs = [
        ("a.py", "def f():\n    return 1\n"),
        ("b.py", "from a import f\n\n\ndef g():\n    return f()\n"),
    ];
    let r = resolve(&srcs, 1);
    assert_eq!(edges(&r, EdgeKind::Invoke), vec![pair("b.g:5", "a.f:1")]);
    assert_eq!(edges(&r, EdgeKind::Import), vec![pair("b:1", "a.f:1")]);
    assert_eq!(r.deps, FxHashSet::from_iter([0]));
    assert!(r.unresolved.is_empty());
    // One reference-site node per scope and line, named after what it references.
    let site = r.ref_nodes.iter().find(|n| n.id == "b.g:5").unwrap();
    assert_eq!((site.name.as_str(), site.qualname.as_str()), ("f", "b.g"));
    assert_eq!(site.line, 5);
}

#[test]
fn definitions_are_contained_in_their_parents() {
    let r = resolve(
        &[("m.py", "class K:\n    def run(self):\n        pass\n")],
        0,
    );
    assert_eq!(
        edges(&r, EdgeKind::Contain),
        vec![pair("m.K.run:2", "m.K:1"), pair("m.K:1", "m:1")]
    );
}

#[test]
fn builtins_locals_and_unknown_names_are_told_apart() {
    let src = concat!(
        "def f(arg):\n",         // 1
        "    print(len(arg))\n", // 2
        "    arg.anything()\n",  // 3
        "    local = 1\n",       // 4
        "    local()\n",         // 5
        "    missing()\n",       // 6
    );
    let r = resolve(&[("m.py", src)], 0);
    assert!(edges(&r, EdgeKind::Invoke).is_empty());
    // Only the name bound nowhere (not a builtin, parameter or local) is unresolved.
    let names: Vec<(&str, &str, u32)> = r
        .unresolved
        .iter()
        .map(|u| (u.name.as_str(), r.id(u.node), u.line))
        .collect();
    assert_eq!(names, vec![("missing", "m.f:6", 6)]);
    assert!(builtins::PY_BUILTINS.contains(&"print"));
}

#[test]
fn a_missing_attribute_of_a_project_module_is_unresolved() {
    let srcs = [
        ("a.py", "def f():\n    return 1\n"),
        ("b.py", "import a\n\n\ndef g():\n    a.f()\n    a.nope()\n"),
    ];
    let r = resolve(&srcs, 1);
    assert_eq!(edges(&r, EdgeKind::Invoke), vec![pair("b.g:5", "a.f:1")]);
    let names: Vec<&str> = r.unresolved.iter().map(|u| u.name.as_str()).collect();
    assert_eq!(names, vec!["a.nope"]);
}

#[test]
fn inherited_methods_resolve_through_the_base_class_in_another_file() {
    let srcs = [
        ("base.py", "class Base:\n    def save(self):\n        return 1\n"),
        (
            "child.py",
            "from base import Base\n\n\nclass Child(Base):\n    def run(self):\n        self.save()\n",
        ),
    ];
    let r = resolve(&srcs, 1);
    // The base class named in the class header is a reference too.
    assert_eq!(
        edges(&r, EdgeKind::Invoke),
        vec![
            pair("child.Child.run:6", "base.Base.save:2"),
            pair("child:4", "base.Base:1")
        ]
    );
    assert!(r.deps.contains(&0));
}

#[test]
fn external_modules_get_no_edge_and_are_never_unresolved() {
    let r = resolve(
        &[(
            "m.py",
            "import os\n\n\ndef f():\n    return os.path.join('a')\n",
        )],
        0,
    );
    assert!(r.edges.iter().all(|e| e.kind == EdgeKind::Contain));
    assert!(r.unresolved.is_empty());
    assert!(r.deps.is_empty());
}

#[test]
fn other_languages_record_no_unresolved_names() {
    // A Go file at the root is qualified by the package directory, `root`.
    let src = "package main\n\nfunc main() {\n\tmissing()\n\thelper()\n}\n\nfunc helper() {}\n";
    let r = resolve(&[("main.go", src)], 0);
    assert_eq!(
        edges(&r, EdgeKind::Invoke),
        vec![pair("root.main:5", "root.helper:8")]
    );
    assert!(r.unresolved.is_empty());
}

#[test]
fn edge_kinds_are_stored_by_name() {
    let names: Vec<&str> = [EdgeKind::Invoke, EdgeKind::Import, EdgeKind::Contain]
        .iter()
        .map(|k| k.as_str())
        .collect();
    assert_eq!(names, ["invoke", "import", "contain"]);
}
