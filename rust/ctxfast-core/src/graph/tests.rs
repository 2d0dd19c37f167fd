//! End-to-end tests of [`super::index`]: cold builds, refreshes and their equivalence.

use super::lang::{module_qualname, Lang};
use super::*;
use crate::graph::raw::RawFile;
use std::fmt::Write as _;
use std::fs;

/// `(src, dst)` rows of a two-column query on the index at `db`.
fn pairs(db: &Path, sql: &str) -> Vec<(String, String)> {
    let conn = store::open_with_text_ids(db);
    let mut st = conn.prepare(sql).unwrap();
    st.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

fn count(db: &Path, sql: &str) -> i64 {
    let conn = store::open_with_text_ids(db);
    conn.query_row(sql, [], |r| r.get(0)).unwrap()
}

fn repo(files: &[(&str, &str)]) -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    for (p, t) in files {
        let path = d.path().join(p);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, t).unwrap();
    }
    d
}

/// `d` indexed with the default options into its own `.ctxfast/recon.db`: the tree (kept
/// alive for the test) and the database.
fn index_tree(d: tempfile::TempDir) -> (tempfile::TempDir, std::path::PathBuf) {
    let db = d.path().join(".ctxfast/recon.db");
    index(d.path(), &db, &IndexOptions::default()).unwrap();
    (d, db)
}

/// `files` written into a temporary tree and indexed ([`index_tree`]).
fn indexed(files: &[(&str, &str)]) -> (tempfile::TempDir, std::path::PathBuf) {
    index_tree(repo(files))
}

#[test]
fn raw_blob_round_trips() {
    let src = b"import os\nfrom .a import b as c\n\nclass K(Base):\n    def m(self, x):\n        return self.n(x)\n";
    let ex = lang::extract(Lang::Python, src, "pkg.mod", 6);
    let blob = ex.raw.encode();
    assert_eq!(RawFile::decode(&blob).as_ref(), Some(&ex.raw));
    assert_eq!(RawFile::decode(&blob[..blob.len() - 1]), None);
    let packed = ex.raw.encode_compressed();
    assert_eq!(RawFile::decode_compressed(&packed).as_ref(), Some(&ex.raw));
    assert_eq!(RawFile::decode_compressed(&blob), None);
    // The interface blob is much smaller and still compares equal to the full extraction.
    let iface = ex.raw.interface(false);
    assert!(iface.refs.is_empty() && iface.same_interface(&ex.raw, false));
    assert!(iface.encode().len() < blob.len());
    let stored = ex.raw.interface_blob(false);
    assert_eq!(
        RawFile::decode_interface_blob(&stored, false).as_ref(),
        Some(&iface)
    );
    // An interface blob as written before it had a header still reads where signatures
    // are not part of the interface, and is unusable where they are.
    let unmarked = iface.encode_compressed();
    assert_eq!(
        RawFile::decode_interface_blob(&unmarked, false),
        Some(iface)
    );
    assert_eq!(RawFile::decode_interface_blob(&unmarked, true), None);
    let body_edit = lang::extract(
        Lang::Python,
        &[src.as_slice(), b"    # c\n"].concat(),
        "pkg.mod",
        7,
    );
    assert!(body_edit.raw.same_interface(&ex.raw, false));
    let moved = lang::extract(
        Lang::Python,
        &[b"\n".as_slice(), src].concat(),
        "pkg.mod",
        7,
    );
    assert!(!moved.raw.same_interface(&ex.raw, false));
}

#[test]
fn an_interface_keeps_the_signatures_its_language_resolves_through() {
    let java = |ret: &str| {
        let src =
            format!("package p;\nclass M {{\n    static {ret} make() {{ return null; }}\n}}\n");
        lang::extract(Lang::Java, src.as_bytes(), "p.M", 4).raw
    };
    let (widget, gadget) = (java("Widget"), java("Gadget"));
    assert!(Lang::Java.signatures_resolve() && !Lang::Python.signatures_resolve());
    let iface = widget.interface(true);
    assert_eq!(iface.defs[2].signature, "static Widget make()");
    assert!(iface.defs.iter().all(|d| d.doc.is_empty()));
    let stored = widget.interface_blob(true);
    assert_eq!(
        RawFile::decode_interface_blob(&stored, true).as_ref(),
        Some(&iface)
    );
    // A new return type moves the interface only where signatures are part of it.
    assert!(!gadget.same_interface(&iface, true));
    assert!(gadget.same_interface(&widget.interface(false), false));
    assert!(widget.same_interface(&iface, true));
}

#[test]
fn module_qualnames() {
    assert_eq!(module_qualname("src/pkg/__init__.py", Lang::Python), "pkg");
    assert_eq!(module_qualname("pkg/mod.py", Lang::Python), "pkg.mod");
    assert_eq!(module_qualname("src/lib.rs", Lang::Rust), "crate");
    assert_eq!(
        module_qualname("core/src/graph/mod.rs", Lang::Rust),
        "core.graph"
    );
    assert_eq!(module_qualname("src/main/java/a/B.java", Lang::Java), "a.B");
    assert_eq!(module_qualname("web/app.ts", Lang::TypeScript), "web.app");
}

#[test]
fn defaults_are_pinned() {
    assert_eq!(IndexOptions::default().max_file_bytes, 1_000_000);
    assert_eq!(discover::BINARY_SNIFF_BYTES, 8192);
    assert!(discover::is_binary(b"ab\0c"));
    assert!(!discover::is_binary("é".as_bytes()));
}

#[test]
fn a_file_its_header_marks_generated_is_recorded_as_skipped_never_parsed() {
    let license = "// Copyright 2024 The Authors.\n//\n// Licensed under the Apache License.\n\n";
    let late = format!(
        "{}# Generated by tool. DO NOT EDIT.\n",
        "x = 1\n".repeat(40)
    );
    let (_d, db) = indexed(&[
        (
            "core/client_mock.go",
            "// Code generated by MockGen. DO NOT EDIT.\npackage core\n\nfunc Mock() {}\n",
        ),
        (
            "api/service.pb.go",
            &format!("{license}// Code generated by protoc-gen-go. DO NOT EDIT.\npackage api\n"),
        ),
        (
            "proto/msg_pb.py",
            "# Generated by the protocol buffer compiler.  DO NOT EDIT!\nX = 1\n",
        ),
        ("web/relay.js", "/**\n * @generated\n */\nfunction q() {}\n"),
        (
            "parser/lexer.py",
            "# *** GENERATED BY antlr4, DO NOT EDIT BY HAND ***\ndef lex():\n    pass\n",
        ),
        // The generator: its template is a string, its note says what it writes.
        (
            "tools/gen.py",
            "# Writes tables.py; do not edit that file by hand.\nHEADER = \"# Code generated by gen.py. DO NOT EDIT.\"\n",
        ),
        // A migration says who made it, not that it must not be edited.
        (
            "app/migrations/0001_initial.py",
            "# Generated by Django 4.2 on 2023-05-01 10:00\nclass Migration:\n    pass\n",
        ),
        ("pkg/late.py", &late),
    ]);
    let skipped = pairs(
        &db,
        "SELECT path, parse_error FROM files WHERE sha256 IS NULL ORDER BY path",
    );
    let generated = |p: &str| (p.to_string(), discover::GENERATED_HEADER.to_string());
    assert_eq!(
        skipped,
        vec![
            generated("api/service.pb.go"),
            generated("core/client_mock.go"),
            generated("parser/lexer.py"),
            generated("proto/msg_pb.py"),
            generated("web/relay.js"),
        ]
    );
    let parsed = pairs(
        &db,
        "SELECT path, language FROM files WHERE sha256 IS NOT NULL ORDER BY path",
    );
    let parsed: Vec<&str> = parsed.iter().map(|(p, _)| p.as_str()).collect();
    assert_eq!(
        parsed,
        [
            "app/migrations/0001_initial.py",
            "pkg/late.py",
            "tools/gen.py"
        ]
    );
}

#[test]
fn progress_counts_every_file_and_ends_done() {
    let d = repo(&[("a.py", "x = 1\n"), ("b.py", "y = 2\n"), ("c.txt", "z\n")]);
    let p = std::sync::Arc::new(Progress::new());
    let opts = IndexOptions {
        progress: Some(p.clone()),
        ..IndexOptions::default()
    };
    let s = index(d.path(), &d.path().join("r.db"), &opts).unwrap();
    assert_eq!(p.snapshot(), (Stage::Done, s.files_seen, s.files_seen));
    assert_eq!(s.files_seen, 2);
}

#[test]
fn a_cold_build_publishes_the_content_rows_it_commits_and_a_refresh_none() {
    // A skipped file (binary) is recorded without a content key: not published.
    let d = repo(&[
        ("b/z.py", "x = 1\n"),
        ("a.py", "def f():\n    pass\n"),
        ("m.js", "var q;\n"),
    ]);
    fs::write(d.path().join("bin.py"), b"\0\0").unwrap();
    let db = d.path().join("r.db");
    let run = || {
        let p = std::sync::Arc::new(Progress::new());
        let opts = IndexOptions {
            progress: Some(p.clone()),
            ..IndexOptions::default()
        };
        index(d.path(), &db, &opts).unwrap();
        p.content_rows().map(<[_]>::to_vec)
    };
    let published = run().expect("a cold build publishes its rows");
    let conn = store::open_with_text_ids(&db);
    let mut st = conn
        .prepare("SELECT path, sha256, language FROM files WHERE sha256 IS NOT NULL ORDER BY path")
        .unwrap();
    let stored: Vec<(String, String, String)> = st
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(published, stored);
    assert_eq!(published.len(), 3);
    fs::write(d.path().join("a.py"), "def g():\n    pass\n").unwrap();
    assert_eq!(run(), None);
}

#[test]
fn cold_build_removes_side_files_of_dead_builds_only() {
    let d = repo(&[("a.py", "x = 1\n")]);
    let dir = d.path().join(".ctxfast");
    fs::create_dir_all(&dir).unwrap();
    // No live process has pid u32::MAX - 1; pid 1 is always alive.
    let dead = dir.join(format!("recon.db.building-{}", u32::MAX - 1));
    let dead_journal = dir.join(format!("recon.db.building-{}-journal", u32::MAX - 1));
    let live = dir.join("recon.db.building-1");
    let other = dir.join("recon.db.building-notapid");
    for p in [&dead, &dead_journal, &live, &other] {
        fs::write(p, b"junk").unwrap();
    }
    let db = dir.join("recon.db");
    index(d.path(), &db, &IndexOptions::default()).unwrap();
    assert!(!dead.exists() && !dead_journal.exists());
    assert!(other.exists(), "names that are not ours are left alone");
    assert!(live.exists(), "a running build's side file is kept");
    assert!(db.exists());
}

#[test]
fn index_and_refresh() {
    let d = repo(&[
        ("a.py", "def f():\n    return 1\n"),
        (
            "b.py",
            "from a import f\n\ndef g():\n    print(f())\n    missing()\n",
        ),
    ]);
    let db = d.path().join(".ctxfast/recon.db");
    let s = index(d.path(), &db, &IndexOptions::default()).unwrap();
    assert_eq!((s.files_seen, s.files_parsed), (2, 2));
    let conn = store::open_with_text_ids(&db);
    let edges: Vec<(String, String, String)> = conn
        .prepare("SELECT src, dst, type FROM edges WHERE type != 'contain' ORDER BY src, type")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(
        edges,
        vec![
            ("b.g:4".into(), "a.f:1".into(), "invoke".into()),
            ("b:1".into(), "a.f:1".into(), "import".into()),
        ]
    );
    let unresolved: String = conn
        .query_row("SELECT name FROM unresolved", [], |r| r.get(0))
        .unwrap();
    assert_eq!(unresolved, "missing");
    let s2 = index(d.path(), &db, &IndexOptions::default()).unwrap();
    assert_eq!((s2.files_parsed, s2.nodes, s2.edges), (0, s.nodes, s.edges));
}

#[test]
fn file_deps_are_written_in_file_order() {
    // One file importing forty: its dependency rows come out in file order, not in the
    // iteration order of the hash set they are collected in (which varied between runs).
    let mut files: Vec<(String, String)> = (0..40)
        .map(|i| {
            (
                format!("m{i:02}.py"),
                format!("def f{i}():\n    return {i}\n"),
            )
        })
        .collect();
    let imports: String = (0..40).rev().fold(String::new(), |mut out, i| {
        let _ = write!(out, "from m{i:02} import f{i}\nf{i}()\n");
        out
    });
    files.push(("main.py".into(), imports));
    let refs: Vec<(&str, &str)> = files
        .iter()
        .map(|(p, t)| (p.as_str(), t.as_str()))
        .collect();
    let d = repo(&refs);
    let db = d.path().join(".ctxfast/recon.db");
    index(d.path(), &db, &IndexOptions::default()).unwrap();
    let mut expected: Vec<String> = (0..40).map(|i| format!("m{i:02}.py")).collect();
    let written = |db: &Path| -> Vec<String> {
        pairs(
            db,
            "SELECT s.path, t.path FROM file_dep_rows r JOIN files s ON s.id = r.src \
             JOIN files t ON t.id = r.dst WHERE s.path = 'main.py' ORDER BY r.rowid",
        )
        .into_iter()
        .map(|(_, dst)| dst)
        .collect()
    };
    assert_eq!(written(&db), expected);
    // A refresh that re-resolves main.py writes its rows in the same order.
    fs::write(d.path().join("m40.py"), "def f40():\n    return 40\n").unwrap();
    let main = d.path().join("main.py");
    let text = fs::read_to_string(&main).unwrap();
    fs::write(&main, format!("from m40 import f40\nf40()\n{text}")).unwrap();
    index(d.path(), &db, &IndexOptions::default()).unwrap();
    expected.push("m40.py".into());
    assert_eq!(written(&db), expected);
}

#[test]
fn modules_are_named_from_the_top_of_their_package_chain() {
    let paths = [
        "lib/matplotlib/__init__.py",
        "lib/matplotlib/colors.py",
        "lib/matplotlib/tri/__init__.py",
        "lib/matplotlib/tri/_triangulation.py",
        "python/ctxfast/__init__.py",
        "python/ctxfast/recon/graph.py",
        "django/__init__.py",
        "django/db/__init__.py",
        "django/db/models.py",
        "src/pkg/__init__.py",
        "src/pkg/mod.py",
        "src/script.py",
        "tests/test_a.py",
        "tests/unit/__init__.py",
        "tests/unit/test_b.py",
    ];
    let n = ModuleNamer::new(paths);
    let py = |p: &str| n.name(p, Lang::Python);
    assert_eq!(py("lib/matplotlib/colors.py"), "matplotlib.colors");
    assert_eq!(py("lib/matplotlib/__init__.py"), "matplotlib");
    assert_eq!(
        py("lib/matplotlib/tri/_triangulation.py"),
        "matplotlib.tri._triangulation"
    );
    // `recon/` has no __init__.py: graph.py is not in a package, the plain rule applies.
    assert_eq!(
        py("python/ctxfast/recon/graph.py"),
        "python.ctxfast.recon.graph"
    );
    assert_eq!(py("django/db/models.py"), "django.db.models");
    assert_eq!(py("src/pkg/mod.py"), "pkg.mod");
    assert_eq!(py("src/script.py"), "script");
    assert_eq!(py("tests/test_a.py"), "tests.test_a");
    assert_eq!(py("tests/unit/test_b.py"), "unit.test_b");
    assert_eq!(n.name("lib/x/y.ts", Lang::TypeScript), "lib.x.y");
}

#[test]
fn a_new_package_root_renames_unchanged_files_on_refresh() {
    let d = repo(&[
        ("lib/pkg/__init__.py", ""),
        ("lib/pkg/a.py", "def f():\n    return 1\n"),
        (
            "lib/pkg/b.py",
            "from pkg.a import f\n\ndef g():\n    return f()\n",
        ),
    ]);
    let db = d.path().join(".ctxfast/recon.db");
    let opts = IndexOptions::default();
    let quals = || -> Vec<String> {
        let conn = store::open_with_text_ids(&db);
        let mut st = conn
            .prepare("SELECT qualname FROM nodes WHERE kind = 'function' ORDER BY qualname")
            .unwrap();
        st.query_map([], |r| r.get(0))
            .unwrap()
            .map(Result::unwrap)
            .collect()
    };
    index(d.path(), &db, &opts).unwrap();
    assert_eq!(quals(), ["pkg.a.f", "pkg.b.g"]);
    let conn = store::open_with_text_ids(&db);
    let invoke: String = conn
        .query_row("SELECT dst FROM edges WHERE type = 'invoke'", [], |r| {
            r.get(0)
        })
        .unwrap();
    assert_eq!(invoke, "pkg.a.f:1");
    let s = index(d.path(), &db, &opts).unwrap();
    assert_eq!(s.files_parsed, 0, "same layout: nothing re-parsed");

    fs::write(d.path().join("lib/__init__.py"), "").unwrap();
    let s = index(d.path(), &db, &opts).unwrap();
    assert_eq!(
        s.files_parsed, 4,
        "every file re-parsed under the new names"
    );
    assert_eq!(quals(), ["lib.pkg.a.f", "lib.pkg.b.g"]);
    let s = index(d.path(), &db, &opts).unwrap();
    assert_eq!(s.files_parsed, 0);
}

/// `(kind, qualname)` of every class and function of the index at `db`, sorted.
fn kinds(db: &Path) -> Vec<(String, String)> {
    pairs(
        db,
        "SELECT kind, qualname FROM nodes WHERE kind IN ('class', 'function') ORDER BY qualname",
    )
}

const CPP_HEADER: &str = "namespace cap {\n\
    class Capturer {\n\
    public:\n\
        void captureValue(int index);\n\
    };\n\
}\n";

#[test]
fn headers_are_cpp_in_a_cpp_tree_and_c_in_a_c_tree() {
    let opts = IndexOptions::default();
    let d = repo(&[
        ("src/capture.h", CPP_HEADER),
        (
            "src/capture.cpp",
            "#include \"capture.h\"\nint run() { return 0; }\n",
        ),
    ]);
    let db = d.path().join(".ctxfast/recon.db");
    index(d.path(), &db, &opts).unwrap();
    let got = kinds(&db);
    assert!(
        got.contains(&("class".into(), "src.capture_h.Capturer".into())),
        "{got:?}"
    );
    assert!(
        !got.iter()
            .any(|(k, q)| k == "function" && q == "src.capture_h.cap"),
        "{got:?}"
    );
    let lang = |rel: &str| {
        count(
            &db,
            &format!("SELECT language = 'cpp' FROM files WHERE path = '{rel}'"),
        )
    };
    assert_eq!(lang("src/capture.h"), 1);

    // A C tree: its header stays C, even with a C++ file beside its two C files; adding
    // C++ files until they outnumber the C files re-parses the unchanged header as C++.
    let c = repo(&[
        ("lib/zstd.h", "int compress(int level);\n"),
        ("lib/zstd.c", "int compress(int level) { return level; }\n"),
        ("lib/util.c", "int util(void) { return 1; }\n"),
        ("tools/bench.cpp", "int main() { return 0; }\n"),
    ]);
    let db = c.path().join(".ctxfast/recon.db");
    index(c.path(), &db, &opts).unwrap();
    let lang = |rel: &str| {
        count(
            &db,
            &format!("SELECT language = 'cpp' FROM files WHERE path = '{rel}'"),
        )
    };
    assert_eq!(lang("lib/zstd.h"), 0);
    fs::write(c.path().join("tools/a.cpp"), "int a() { return 0; }\n").unwrap();
    fs::write(c.path().join("tools/b.cpp"), "int b() { return 0; }\n").unwrap();
    let s = index(c.path(), &db, &opts).unwrap();
    assert_eq!(lang("lib/zstd.h"), 1);
    assert_eq!(
        s.files_parsed, 6,
        "every file re-parsed: the headers' grammar changed"
    );
    let s = index(c.path(), &db, &opts).unwrap();
    assert_eq!(s.files_parsed, 0);
}

#[test]
fn typed_locals_resolve_method_calls_on_instances() {
    let d = repo(&[
        (
            "a.py",
            "class Foo:\n    def run(self):\n        return 1\n\n    def stop(self):\n        return 2\n\n\nclass Bar:\n    def run(self):\n        return 3\n",
        ),
        (
            "b.py",
            concat!(
                "from a import Foo, Bar\n",                      // 1
                "import a\n",                                    // 2
                "import json\n",                                 // 3
                "\n",                                            // 4
                "def use():\n",                                  // 5
                "    x = Foo()\n",                               // 6
                "    x.run()\n",                                 // 7
                "    y = a.Bar()\n",                             // 8
                "    y.run()\n",                                 // 9
                "\n",                                            // 10
                "def param(z: Foo):\n",                          // 11
                "    z.stop()\n",                                // 12
                "\n",                                            // 13
                "def conflict(flag):\n",                         // 14
                "    w = Foo()\n",                               // 15
                "    if flag:\n",                                // 16
                "        w = Bar()\n",                           // 17
                "    w.run()\n",                                 // 18
                "\n",                                            // 19
                "def rebound():\n",                              // 20
                "    v = Foo()\n",                               // 21
                "    for v in range(3):\n",                      // 22
                "        pass\n",                                // 23
                "    v.run()\n",                                 // 24
                "\n",                                            // 25
                "def external():\n",                             // 26
                "    dec = json.JSONDecoder()\n",                // 27
                "    dec.decode('1')\n",                         // 28
                "    u = Foo()\n",                               // 29
                "    u()\n",                                     // 30
                "    u.missing()\n",                             // 31
            ),
        ),
    ]);
    let db = d.path().join(".ctxfast/recon.db");
    index(d.path(), &db, &IndexOptions::default()).unwrap();
    let edges = pairs(
        &db,
        "SELECT src, dst FROM edges WHERE type = 'invoke' AND src LIKE 'b.%' \
             AND dst NOT IN ('a.Foo:1', 'a.Bar:9') ORDER BY src",
    );
    assert_eq!(
        edges,
        vec![
            ("b.param:12".into(), "a.Foo.stop:5".into()),
            ("b.use:7".into(), "a.Foo.run:2".into()),
            ("b.use:9".into(), "a.Bar.run:10".into()),
        ]
    );
    let to_class = count(
        &db,
        "SELECT COUNT(*) FROM edges WHERE src = 'b.external:30'",
    );
    assert_eq!(
        to_class, 0,
        "calling an instance is not a call of its class"
    );
    assert_eq!(count(&db, "SELECT COUNT(*) FROM unresolved"), 0);
}

#[test]
fn typed_attributes_resolve_calls_through_self_and_instances() {
    let d = repo(&[
        (
            "q.py",
            "class Query:\n    def add(self):\n        return 1\n\n\nclass Where:\n    def push(self):\n        return 2\n",
        ),
        (
            "m.py",
            concat!(
                "from q import Query, Where\n",           // 1
                "\n",                                     // 2
                "class Base:\n",                          // 3
                "    where: Where\n",                     // 4
                "\n",                                     // 5
                "    def __init__(self):\n",              // 6
                "        self.query = Query()\n",         // 7
                "        self.other = Query()\n",         // 8
                "\n",                                     // 9
                "    def reset(self):\n",                 // 10
                "        self.other = None\n",            // 11
                "\n",                                     // 12
                "\n",                                     // 13
                "class Child(Base):\n",                   // 14
                "    def run(self):\n",                   // 15
                "        self.query.add()\n",             // 16
                "        self.where.push()\n",            // 17
                "        self.other.add()\n",             // 18
                "        self.query()\n",                 // 19
                "\n",                                     // 20
                "\n",                                     // 21
                "def use():\n",                           // 22
                "    c = Child()\n",                      // 23
                "    c.query.add()\n",                    // 24
            ),
        ),
    ]);
    let db = d.path().join(".ctxfast/recon.db");
    index(d.path(), &db, &IndexOptions::default()).unwrap();
    let edges = pairs(
        &db,
        "SELECT src, dst FROM edges WHERE type = 'invoke' AND src LIKE 'm.%' \
             AND dst LIKE 'q.%.%' ORDER BY src",
    );
    // `self.other` is also set to None: untyped. Calling `self.query()` is not a call of
    // Query; the class-body annotation types `where`; the attribute types are inherited.
    assert_eq!(
        edges,
        vec![
            ("m.Child.run:16".into(), "q.Query.add:2".into()),
            ("m.Child.run:17".into(), "q.Where.push:7".into()),
            ("m.use:24".into(), "q.Query.add:2".into()),
        ]
    );
    let to_class = count(
        &db,
        "SELECT COUNT(*) FROM edges WHERE src = 'm.Child.run:19'",
    );
    assert_eq!(to_class, 0);
}

#[test]
fn super_calls_and_caught_exceptions_resolve() {
    let d = repo(&[(
        "s.py",
        concat!(
            "class A:\n",                      // 1
            "    def save(self):\n",           // 2
            "        return 1\n",              // 3
            "\n",                              // 4
            "\n",                              // 5
            "class B(A):\n",                   // 6
            "    pass\n",                      // 7
            "\n",                              // 8
            "\n",                              // 9
            "class C(B):\n",                   // 10
            "    def save(self):\n",           // 11
            "        super().save()\n",        // 12
            "        super(C, self).save()\n", // 13
            "        super().missing()\n",     // 14
            "\n",                              // 15
            "\n",                              // 16
            "def handle():\n",                 // 17
            "    try:\n",                      // 18
            "        pass\n",                  // 19
            "    except A as err:\n",          // 20
            "        err.save()\n",            // 21
            "    except (A, B) as both:\n",    // 22
            "        both.save()\n",           // 23
        ),
    )]);
    let db = d.path().join(".ctxfast/recon.db");
    index(d.path(), &db, &IndexOptions::default()).unwrap();
    let edges = pairs(
        &db,
        "SELECT src, dst FROM edges WHERE type = 'invoke' \
         AND (src LIKE 's.C.save:%' OR src LIKE 's.handle:%') ORDER BY src, dst",
    );
    assert_eq!(
        edges,
        vec![
            ("s.C.save:12".into(), "s.A.save:2".into()),
            ("s.C.save:13".into(), "s.A.save:2".into()),
            ("s.handle:21".into(), "s.A.save:2".into()),
        ]
    );
}

#[test]
fn cyclic_bases_and_typed_attributes_terminate() {
    let d = repo(&[(
        "c.py",
        "class A(B):\n    def __init__(self):\n        self.peer = B()\n\n    def f(self):\n        super().g()\n        self.peer.peer.h()\n\n\nclass B(A):\n    def __init__(self):\n        self.peer = A()\n\n    def g(self):\n        super().missing()\n        self.peer.f()\n",
    )]);
    let db = d.path().join(".ctxfast/recon.db");
    index(d.path(), &db, &IndexOptions::default()).unwrap();
    let edges = pairs(
        &db,
        "SELECT src, dst FROM edges WHERE type = 'invoke' AND dst LIKE 'c.%.%' ORDER BY src",
    );
    assert_eq!(
        edges,
        vec![
            ("c.A.f:6".into(), "c.B.g:14".into()),
            ("c.B.g:16".into(), "c.A.f:5".into()),
        ]
    );
}

/// Every graph row of the index at `db`, sorted (to compare two indexes).
fn dump(db: &Path) -> Vec<String> {
    let conn = store::open_with_text_ids(db);
    let mut out = vec![];
    for q in [
        "SELECT id || kind || name || qualname || file || line || col || end_line FROM nodes",
        "SELECT src || ' ' || dst || ' ' || type FROM edges",
        "SELECT name || node_id || file || line FROM unresolved",
        "SELECT qualname FROM name_index",
        "SELECT id || signature || doc FROM defs_meta",
        // File ids must survive a refresh of the file they name (schema 9 stores ids).
        "SELECT src_file || ' ' || dst_file FROM file_deps",
    ] {
        let mut st = conn.prepare(q).unwrap();
        out.extend(
            st.query_map([], |r| r.get::<_, String>(0))
                .unwrap()
                .map(Result::unwrap),
        );
    }
    out.sort();
    out
}

#[test]
fn in_process_refreshes_match_a_cold_build_at_every_step() {
    let d = repo(&[
        ("a.py", "class A:\n    def f(self):\n        return 1\n"),
        ("b.py", "from a import A\n\ndef g():\n    return A().f()\n"),
        ("c.py", "import b\n\ndef h():\n    return b.g()\n"),
    ]);
    let db = d.path().join(".ctxfast/recon.db");
    let opts = IndexOptions::default();
    index(d.path(), &db, &opts).unwrap();
    let steps: [&dyn Fn(&Path); 6] = [
        &|r| {
            fs::write(
                r.join("a.py"),
                "class A:\n    def f(self):\n        return 2\n",
            )
            .unwrap();
        },
        &|r| {
            fs::write(r.join("a.py"), "\nclass A:\n    def f(self):\n        return 2\n\n    def k(self):\n        return 3\n").unwrap();
        },
        &|r| {
            fs::write(
                r.join("d.py"),
                "from a import A\n\ndef m():\n    return A().k()\n",
            )
            .unwrap();
        },
        &|r| fs::remove_file(r.join("b.py")).unwrap(),
        // Back to the first content: seen only if the last run recorded the new key.
        &|r| {
            fs::write(
                r.join("a.py"),
                "class A:\n    def f(self):\n        return 1\n",
            )
            .unwrap();
        },
        &|_| {},
    ];
    for (n, step) in steps.iter().enumerate() {
        // Files touched this recently are re-hashed (RACY_NS), so every edit is seen.
        step(d.path());
        index(d.path(), &db, &opts).unwrap();
        let fresh = d.path().join(format!("fresh{n}.db"));
        index(d.path(), &fresh, &opts).unwrap();
        assert_eq!(dump(&db), dump(&fresh), "step {n}");
    }
}

#[test]
fn what_a_run_leaves_in_the_process_is_what_the_next_would_read() {
    let d = repo(&[
        ("a.py", "def f():\n    return 1\n"),
        ("b.py", "from a import f\n"),
    ]);
    let db = d.path().join(".ctxfast/recon.db");
    let opts = IndexOptions::default();
    let steps: [&dyn Fn(&Path); 5] = [
        &|_| {},
        &|r| fs::write(r.join("a.py"), "def f():\n    return 2\n").unwrap(),
        &|r| fs::write(r.join("c.py"), "import a\n").unwrap(),
        &|r| fs::write(r.join("b.py"), b"x = 1\0\n").unwrap(),
        &|r| fs::remove_file(r.join("c.py")).unwrap(),
    ];
    for (n, step) in steps.iter().enumerate() {
        step(d.path());
        index(d.path(), &db, &opts).unwrap();
        let conn = rusqlite::Connection::open(&db).unwrap();
        let tag = plan::stored_run_start(&conn);
        let left = cache::take_previous(&db, tag).expect("the run left its record");
        // The cold build of step 0 hands over its symbol table too.
        assert!(cache::take_symbols(&db, tag).is_some(), "step {n}");
        let read = Previous::read(&conn).unwrap();
        assert_eq!(left.shas, read.shas, "step {n}");
        assert_eq!(left.stats, read.stats, "step {n}");
        assert_eq!(left.run_start_ns, read.run_start_ns, "step {n}");
    }
}

/// The tables of schema 8, the last whose `nodes` was a table carrying each row's path.
const SCHEMA_8: &str = "
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE files(path TEXT PRIMARY KEY, sha256 TEXT, language TEXT, bytes INT, parse_error TEXT);
CREATE TABLE nodes(id INTEGER PRIMARY KEY, kind TEXT, name TEXT, qualname TEXT, file TEXT, line INT, col INT, end_line INT);
CREATE TABLE edges(src INTEGER, dst INTEGER, type TEXT);
CREATE TABLE name_index(qualname TEXT PRIMARY KEY) WITHOUT ROWID;
CREATE TABLE defs_meta(id INTEGER PRIMARY KEY, signature TEXT, doc TEXT);
CREATE TABLE unresolved(name TEXT, node_id INTEGER, file TEXT, line INT, col INT);
CREATE TABLE raw(path TEXT PRIMARY KEY, data BLOB, iface BLOB);
CREATE TABLE file_deps(src_file TEXT, dst_file TEXT);
CREATE TABLE file_stat(path TEXT PRIMARY KEY, size INT, mtime_ns INT);
INSERT INTO meta VALUES('schema_version', '8');
INSERT INTO nodes VALUES(1, 'function', 'stale', 'a.stale', 'a.py', 1, 0, 1);
";

#[test]
fn an_index_of_schema_8_is_rebuilt_into_the_same_rows_as_a_cold_build() {
    let files = [
        ("a.py", "def f():\n    return 1\n"),
        ("b.py", "from a import f\n\ndef g():\n    return f()\n"),
    ];
    let (old, cold) = (repo(&files), repo(&files));
    let old_db = old.path().join(".ctxfast/recon.db");
    fs::create_dir_all(old_db.parent().unwrap()).unwrap();
    rusqlite::Connection::open(&old_db)
        .unwrap()
        .execute_batch(SCHEMA_8)
        .unwrap();
    let cold_db = cold.path().join(".ctxfast/recon.db");
    index(old.path(), &old_db, &IndexOptions::default()).unwrap();
    index(cold.path(), &cold_db, &IndexOptions::default()).unwrap();
    // The old `nodes` table is gone, not left to shadow the view of the new rows.
    assert_eq!(dump(&old_db), dump(&cold_db));
    assert_eq!(
        count(&old_db, "SELECT COUNT(*) FROM nodes WHERE name = 'stale'"),
        0
    );
    // And an index of a later schema, whose `nodes` is a view too, is rebuilt the same way.
    let conn = rusqlite::Connection::open(&old_db).unwrap();
    conn.execute(
        "UPDATE meta SET value = '99' WHERE key = 'schema_version'",
        [],
    )
    .unwrap();
    drop(conn);
    index(old.path(), &old_db, &IndexOptions::default()).unwrap();
    assert_eq!(dump(&old_db), dump(&cold_db));
}

#[test]
fn an_index_written_by_another_extractor_is_rebuilt() {
    // Same tables, other extractor: the stamp names both, and a graph the current extractor
    // would not write (the stale name below) is not kept.
    let files = [("a.py", "def f():\n    return 1\n")];
    let (d, cold) = (repo(&files), repo(&files));
    let (db, cold_db) = (d.path().join(".ctxfast/recon.db"), cold.path().join("c.db"));
    index(d.path(), &db, &IndexOptions::default()).unwrap();
    index(cold.path(), &cold_db, &IndexOptions::default()).unwrap();
    let stamp = |db: &Path| -> String {
        rusqlite::Connection::open(db)
            .unwrap()
            .query_row(
                "SELECT value FROM meta WHERE key='schema_version'",
                [],
                |r| r.get(0),
            )
            .unwrap()
    };
    assert_eq!(stamp(&db), store::index_version());
    assert!(store::index_version().starts_with(&format!("{}.", store::SCHEMA_VERSION)));
    for other in [
        store::SCHEMA_VERSION.to_string(),
        format!("{}.0", store::SCHEMA_VERSION),
    ] {
        let conn = rusqlite::Connection::open(&db).unwrap();
        conn.execute(
            "UPDATE meta SET value = ?1 WHERE key = 'schema_version'",
            [&other],
        )
        .unwrap();
        conn.execute("INSERT INTO name_index VALUES('a.stale')", [])
            .unwrap();
        drop(conn);
        index(d.path(), &db, &IndexOptions::default()).unwrap();
        assert_eq!(dump(&db), dump(&cold_db), "stamp {other}");
        assert_eq!(stamp(&db), store::index_version());
    }
}

#[test]
fn node_rows_name_their_file_by_id() {
    let d = repo(&[
        ("pkg/a.py", "def f():\n    return 1\n"),
        ("pkg/b.py", "import pkg.a\n"),
    ]);
    let db = d.path().join(".ctxfast/recon.db");
    index(d.path(), &db, &IndexOptions::default()).unwrap();
    let conn = rusqlite::Connection::open(&db).unwrap();
    let text_columns: i64 = conn
        .query_row(
            "SELECT COUNT(*) FROM pragma_table_info('node_rows') WHERE type = 'TEXT' AND name = 'file'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(text_columns, 0);
    let by_id: i64 = conn
        .query_row(
            "SELECT COUNT(*) FROM node_rows n JOIN files f ON f.id = n.file_id",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert!(by_id > 0);
    assert_eq!(by_id, count(&db, "SELECT COUNT(*) FROM nodes"));
    assert_eq!(
        count(
            &db,
            "SELECT COUNT(*) FROM nodes WHERE file = 'pkg/a.py' AND name = 'f'"
        ),
        1
    );
}

#[test]
fn module_clash_is_recorded() {
    let d = repo(&[
        ("pkg/a.py", "def f():\n    return 1\n"),
        ("src/pkg/a.py", "def f():\n    return 2\n"),
    ]);
    let db = d.path().join(".ctxfast/recon.db");
    for _ in 0..2 {
        // Reported on the cold build and again on the no-op refresh.
        let s = index(d.path(), &db, &IndexOptions::default()).unwrap();
        assert_eq!(s.errors.len(), 1, "{:?}", s.errors);
        assert_eq!(s.errors[0].0, "src/pkg/a.py");
        assert!(s.errors[0].1.contains("module name clash: `pkg.a`"));
        assert!(s.errors[0].1.contains("pkg/a.py"));
    }
}

#[test]
fn refresh_reparses_one_file_and_resolves_only_what_can_change() {
    let d = repo(&[
        ("a.py", "def f():\n    return 1\n"),
        ("b.py", "from a import f\n\ndef g():\n    return f()\n"),
        ("c.py", "import a\n\ndef h():\n    return a.f()\n"),
        ("d.py", "def k():\n    return 2\n"),
    ]);
    let db = d.path().join(".ctxfast/recon.db");
    let opts = IndexOptions::default();
    let s = index(d.path(), &db, &opts).unwrap();
    assert_eq!((s.files_parsed, s.files_resolved), (4, 4));
    assert!(!store::side(&db, &format!(".building-{}", std::process::id())).exists());
    let s = index(d.path(), &db, &opts).unwrap();
    assert_eq!((s.files_parsed, s.files_resolved), (0, 0));

    // A body-only edit keeps a.py's interface: only a.py itself is re-resolved.
    fs::write(d.path().join("a.py"), "def f():\n    return 3  # x\n").unwrap();
    let s = index(d.path(), &db, &opts).unwrap();
    assert_eq!((s.files_parsed, s.files_resolved), (1, 1));

    // Moving f changes its id: the edges of its two dependents are pointed at the new one
    // without resolving them again ([`names`]); d.py is untouched.
    fs::write(d.path().join("a.py"), "# c\n\ndef f():\n    return 3\n").unwrap();
    let s = index(d.path(), &db, &opts).unwrap();
    assert_eq!((s.files_parsed, s.files_resolved), (1, 1));
    let conn = store::open_with_text_ids(&db);
    let dsts: Vec<String> = conn
        .prepare("SELECT DISTINCT dst FROM edges WHERE type = 'invoke' ORDER BY dst")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(dsts, vec!["a.f:3".to_string()]);
    let names: Vec<String> = conn
        .prepare("SELECT qualname FROM name_index ORDER BY qualname")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(names, ["a", "a.f", "b", "b.g", "c", "c.h", "d", "d.k"]);

    // Leaf edit in d.py: nothing depends on it.
    fs::write(d.path().join("d.py"), "def k():\n    return 5\n").unwrap();
    let s = index(d.path(), &db, &opts).unwrap();
    assert_eq!((s.files_parsed, s.files_resolved), (1, 1));
    // Removing a definition drops it from name_index; a file removal is counted too.
    fs::write(d.path().join("d.py"), "x = 1\n").unwrap();
    fs::remove_file(d.path().join("c.py")).unwrap();
    let s = index(d.path(), &db, &opts).unwrap();
    // The stored counts follow every delta exactly.
    let real: (usize, usize) = conn
        .query_row(
            "SELECT (SELECT COUNT(*) FROM nodes), (SELECT COUNT(*) FROM edges)",
            [],
            |r| Ok((r.get::<_, i64>(0)? as usize, r.get::<_, i64>(1)? as usize)),
        )
        .unwrap();
    assert_eq!((s.nodes, s.edges), real);
    assert_eq!(s.files_removed, 1);
    let gone = count(
        &db,
        "SELECT COUNT(*) FROM name_index WHERE qualname = 'd.k'",
    );
    assert_eq!(gone, 0);
}

#[test]
fn stat_shortcut_trusts_old_mtimes_and_rehashes_racy_ones() {
    use std::time::{Duration, SystemTime};
    let d = repo(&[("a.py", "def f():\n    return 1\n")]);
    let a = d.path().join("a.py");
    let db = d.path().join(".ctxfast/recon.db");
    let opts = IndexOptions::default();
    let set_mtime = |t: SystemTime| {
        fs::File::options()
            .write(true)
            .open(&a)
            .unwrap()
            .set_modified(t)
            .unwrap();
    };
    let old = SystemTime::now() - Duration::from_mins(1);
    set_mtime(old);
    index(d.path(), &db, &opts).unwrap();
    // Same size, old mtime restored: trusted without reading (git's rule too).
    fs::write(&a, "def f():\n    return 2\n").unwrap();
    set_mtime(old);
    assert_eq!(index(d.path(), &db, &opts).unwrap().files_parsed, 0);
    // A fresh mtime differs from the recorded one: re-hashed, detected.
    fs::write(&a, "def g():\n    return 2\n").unwrap();
    assert_eq!(index(d.path(), &db, &opts).unwrap().files_parsed, 1);
    // Same size *and* the recorded mtime, but that mtime is within RACY_NS of the last
    // run's start: a same-tick edit is possible, so the file is re-hashed.
    let recorded = fs::metadata(&a).unwrap().modified().unwrap();
    fs::write(&a, "def h():\n    return 2\n").unwrap();
    set_mtime(recorded);
    let s = index(d.path(), &db, &opts).unwrap();
    assert_eq!(s.files_parsed, 1);
    let conn = store::open_with_text_ids(&db);
    let n: i64 = conn
        .query_row("SELECT COUNT(*) FROM nodes WHERE name = 'h'", [], |r| {
            r.get(0)
        })
        .unwrap();
    assert_eq!((n, RACY_NS), (1, 1_000_000_000));
}

#[test]
fn not_a_directory_is_an_error() {
    let d = tempfile::tempdir().unwrap();
    let err = index(
        &d.path().join("nope"),
        &d.path().join("x.db"),
        &IndexOptions::default(),
    );
    assert!(matches!(err, Err(CoreError::InvalidArgument(_))));
}

/// Every row of every table of the index at `db`, sorted, the run's two timestamps left out
/// (they differ between any two builds); rows of `rowid_tables` carry their rowid (the order
/// readers see edges and unresolved names in).
pub(crate) fn every_row(db: &Path, rowid_tables: &[&str]) -> Vec<String> {
    let conn = rusqlite::Connection::open(db).unwrap();
    let tables: Vec<String> = conn
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table'")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let mut out = vec![];
    for t in tables {
        let rowid = if rowid_tables.contains(&t.as_str()) {
            "rowid, "
        } else {
            ""
        };
        let mut st = conn.prepare(&format!("SELECT {rowid}* FROM {t}")).unwrap();
        let n = st.column_count();
        let rows = st
            .query_map([], |r| {
                let mut cells = vec![t.clone()];
                for i in 0..n {
                    cells.push(match r.get_ref(i)? {
                        rusqlite::types::ValueRef::Text(s) => String::from_utf8_lossy(s).into(),
                        rusqlite::types::ValueRef::Blob(b) => format!("{b:02x?}"),
                        v => format!("{v:?}"),
                    });
                }
                Ok(cells.join("|"))
            })
            .unwrap()
            .map(Result::unwrap);
        out.extend(rows.filter(|row| {
            !row.starts_with("meta|run_start_ns|") && !row.starts_with("meta|last_refresh|")
        }));
    }
    out.sort();
    out
}

#[test]
fn a_streamed_cold_build_writes_the_rows_a_full_refresh_writes() {
    // More files than two parse chunks, so rows cross batch boundaries; references into
    // earlier and later chunks, calls on definition lines (the definition's row stands for
    // the site), unresolved names, a module clash (two files defining the same ids) and a
    // parse error.
    let n = 2 * parse::SINK_CHUNK + 77;
    let text = |i: usize| {
        let j = (i * 7 + 1) % n;
        format!(
            "from pkg.m{j} import f{j} as g\n\ndef f{i}(): return g()\n\n\
             class C{i}:\n    def m(self):\n        return self.k() + undefined_{}()\n\n    \
             def k(self): return f{i}()\n",
            i % 3
        )
    };
    let mut files: Vec<(String, String)> =
        (0..n).map(|i| (format!("pkg/m{i}.py"), text(i))).collect();
    files.push(("pkg/__init__.py".into(), "from .m0 import f0\n".into()));
    files.push(("pkg/clash.py".into(), "def same(): return f0()\n".into()));
    files.push((
        "pkg/clash/__init__.py".into(),
        "def same(): return f0()\n".into(),
    ));
    files.push((
        "pkg/broken.py".into(),
        "def oops(:\n    return f1()\n".into(),
    ));
    let d = tempfile::tempdir().unwrap();
    for (p, _) in &files {
        let path = d.path().join(p);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, "").unwrap();
    }
    // A refresh that re-parses every file writes them all through the row-by-row path
    // ([`write`]), files keeping the ids the cold build of the empty files gave them.
    let refreshed = d.path().join("refreshed/recon.db");
    let opts = IndexOptions::default();
    index(d.path(), &refreshed, &opts).unwrap();
    for (p, t) in &files {
        fs::write(d.path().join(p), t).unwrap();
    }
    let s = index(d.path(), &refreshed, &opts).unwrap();
    assert_eq!(s.files_parsed, files.len());
    let streamed = d.path().join("streamed/recon.db");
    let c = index(d.path(), &streamed, &opts).unwrap();
    assert_eq!((c.nodes, c.edges), (s.nodes, s.edges));
    assert!(c.edges > 4 * n, "{}", c.edges);
    // The refresh's upserts each consume an AUTOINCREMENT number even when they update a row
    // in place, so only `sqlite_sequence` may differ: it is past every id either way.
    let graph = |db: &Path| -> Vec<String> {
        every_row(db, &["edge_rows", "unresolved"])
            .into_iter()
            .filter(|r| !r.starts_with("sqlite_sequence|"))
            .collect()
    };
    assert_eq!(graph(&streamed), graph(&refreshed));
}

/// Fixtures where an unchanged file's function signatures decide how a changed file
/// resolves: a call on what a function of another file returns (Java, TypeScript, Rust
/// return types), a Java overload picked by parameter types, a C `static` function another
/// file must not bind to. `(name, files, file edited, its new text)`; the edit keeps the
/// edited file's interface, so only it is re-resolved against the others' interfaces.
type SignatureCase = (
    &'static str,
    &'static [(&'static str, &'static str)],
    &'static str,
    &'static str,
);

const SIGNATURE_CASES: &[SignatureCase] = &[
    (
        "java",
        &[
            ("p/Widget.java", "package p;\npublic class Widget {\n    public void spin() {}\n}\n"),
            (
                "p/Maker.java",
                "package p;\npublic class Maker {\n    public static Widget make() { return new Widget(); }\n    \
                 public static void pick(int n) {}\n    public static void pick(String s) {}\n}\n",
            ),
            (
                "p/User.java",
                "package p;\nclass User {\n    void use() { Maker.make().spin(); Maker.pick(\"s\"); }\n}\n",
            ),
        ],
        "p/User.java",
        "package p;\nclass User {\n    void use() { Maker.make().spin(); Maker.pick(\"s\"); }\n}\n// x\n",
    ),
    (
        "typescript",
        &[
            ("w.ts", "export class Widget {\n  spin(): void {}\n}\n"),
            (
                "a.ts",
                "import { Widget } from './w';\nexport function make(): Widget {\n  return new Widget();\n}\n\
                 export async function later(): Promise<Widget> {\n  return new Widget();\n}\n",
            ),
            (
                "b.ts",
                "import { make, later } from './a';\nexport async function use() {\n  make().spin();\n  \
                 (await later()).spin();\n}\n",
            ),
        ],
        "b.ts",
        "import { make, later } from './a';\nexport async function use() {\n  make().spin();\n  \
         (await later()).spin();\n}\n// x\n",
    ),
    // A default import, an interface's property and a property destructured from it.
    (
        "typescript (default export, interface property)",
        &[
            ("gen.ts", "export default class CodeGen {\n  name(n: string) {}\n}\n"),
            ("cxt.ts", "import CodeGen from './gen';\nexport interface Cxt {\n  gen: CodeGen;\n}\n"),
            (
                "use.ts",
                "import CodeGen from './gen';\nimport { Cxt } from './cxt';\n\
                 export function use(g: CodeGen, it: Cxt) {\n  g.name('a');\n  const { gen } = it;\n  \
                 gen.name('b');\n}\n",
            ),
        ],
        "use.ts",
        "import CodeGen from './gen';\nimport { Cxt } from './cxt';\n\
         export function use(g: CodeGen, it: Cxt) {\n  g.name('a');\n  const { gen } = it;\n  \
         gen.name('b');\n}\n// x\n",
    ),
    (
        "rust",
        &[
            ("src/lib.rs", "pub mod w;\npub mod a;\npub mod b;\n"),
            ("src/w.rs", "pub struct Widget;\nimpl Widget {\n    pub fn spin(&self) {}\n}\n"),
            ("src/a.rs", "use crate::w::Widget;\npub fn make() -> Widget {\n    Widget\n}\n"),
            ("src/b.rs", "use crate::a::make;\npub fn user() {\n    make().spin();\n}\n"),
        ],
        "src/b.rs",
        "use crate::a::make;\npub fn user() {\n    make().spin();\n}\n// x\n",
    ),
    (
        "c",
        &[
            ("a.c", "static int helper(void) { return 1; }\nint shared(void) { return helper(); }\n"),
            ("b.c", "int user(void) { return helper() + shared(); }\n"),
        ],
        "b.c",
        "int user(void) { return helper() + shared(); }\n/* x */\n",
    ),
];

/// The refreshed index at `db` holds the rows a cold build of the same tree writes.
fn matches_cold(root: &Path, db: &Path) -> bool {
    let fresh = root.join("cold.db");
    index(root, &fresh, &IndexOptions::default()).unwrap();
    let same = dump(db) == dump(&fresh);
    fs::remove_file(fresh).unwrap();
    same
}

/// The same trees with the signatures edited and their callers unchanged: the edit moves the
/// edited file's interface, so the callers are resolved again.
const SIGNATURE_EDITS: &[SignatureCase] = &[
    (
        "java",
        &[
            ("p/Widget.java", "package p;\npublic class Widget {\n    public void spin() {}\n}\n"),
            ("p/Gadget.java", "package p;\npublic class Gadget {\n    public void spin() {}\n}\n"),
            (
                "p/Maker.java",
                "package p;\npublic class Maker {\n    public static Widget make() { return null; }\n}\n",
            ),
            ("p/User.java", "package p;\nclass User {\n    void use() { Maker.make().spin(); }\n}\n"),
        ],
        "p/Maker.java",
        "package p;\npublic class Maker {\n    public static Gadget make() { return null; }\n}\n",
    ),
    (
        "typescript",
        &[
            ("w.ts", "export class Widget {\n  spin(): void {}\n}\nexport class Gadget {\n  spin(): void {}\n}\n"),
            ("a.ts", "import { Widget, Gadget } from './w';\nexport function make(): Widget {\n  return null;\n}\n"),
            ("b.ts", "import { make } from './a';\nexport function use() {\n  make().spin();\n}\n"),
        ],
        "a.ts",
        "import { Widget, Gadget } from './w';\nexport function make(): Gadget {\n  return null;\n}\n",
    ),
    (
        "typescript (the default export changes)",
        &[
            ("w.ts", "export default class Widget {\n  spin(): void {}\n}\nexport class Gadget {\n  spin(): void {}\n}\n"),
            ("b.ts", "import W from './w';\nexport function use(w: W) {\n  w.spin();\n}\n"),
        ],
        "w.ts",
        "export class Widget {\n  spin(): void {}\n}\nexport default class Gadget {\n  spin(): void {}\n}\n",
    ),
    (
        "typescript (an interface property retyped)",
        &[
            ("w.ts", "export class Widget {\n  spin(): void {}\n}\nexport class Gadget {\n  spin(): void {}\n}\n"),
            ("c.ts", "import { Widget, Gadget } from './w';\nexport interface Cxt {\n  gen: Widget;\n}\n"),
            (
                "b.ts",
                "import { Cxt } from './c';\nexport function use({ gen }: Cxt, it: Cxt) {\n  gen.spin();\n  \
                 it.gen.spin();\n}\n",
            ),
        ],
        "c.ts",
        "import { Widget, Gadget } from './w';\nexport interface Cxt {\n  gen: Gadget;\n}\n",
    ),
    (
        "javascript (an aliased export moves)",
        &[
            ("utils.js", "exports.dQuote = function dQuote(s) { return s; };\n"),
            (
                "runner.js",
                "var utils = require('./utils');\nvar dQuote = utils.dQuote;\nfunction run(x) {\n  return dQuote(x);\n}\n",
            ),
        ],
        "utils.js",
        "// quoting\nexports.dQuote = function dQuote(s) { return s; };\n",
    ),
    (
        "rust",
        &[
            ("src/lib.rs", "pub mod w;\npub mod a;\npub mod b;\n"),
            (
                "src/w.rs",
                "pub struct Widget;\nimpl Widget {\n    pub fn spin(&self) {}\n}\n\
                 pub struct Gadget;\nimpl Gadget {\n    pub fn spin(&self) {}\n}\n",
            ),
            ("src/a.rs", "use crate::w::{Gadget, Widget};\npub fn make() -> Widget {\n    Widget\n}\n"),
            ("src/b.rs", "use crate::a::make;\npub fn user() {\n    make().spin();\n}\n"),
        ],
        "src/a.rs",
        "use crate::w::{Gadget, Widget};\npub fn make() -> Gadget {\n    Gadget\n}\n",
    ),
    (
        "c",
        &[
            ("a.c", "int helper(void) { return 1; }\n"),
            ("b.c", "int user(void) { return helper(); }\n"),
        ],
        "a.c",
        "static int helper(void) { return 1; }\n",
    ),
    // A call no header declares resolves through the repository-wide function names: a new
    // file defining it gains the caller an edge, a second definition makes it ambiguous.
    // Java names a class of its own package without an import: a new one is seen.
    (
        "java (a class of the package appears)",
        &[(
            "p/User.java",
            "package p;\nclass User {\n    void use() { Widget.build(); }\n}\n",
        )],
        "p/Widget.java",
        "package p;\npublic class Widget {\n    public static void build() {}\n}\n",
    ),
    // So does Go, for a function of its own package.
    (
        "go (a function of the package appears)",
        &[
            ("go.mod", "module example.com/m\n"),
            ("p/a.go", "package p\n\nfunc Use() {\n\tHelper()\n}\n\nfunc Other() {}\n"),
        ],
        "p/b.go",
        "package p\n\nfunc Helper() {}\n",
    ),
    (
        "c (defined in a new file)",
        &[("b.c", "int user(void) { return helper(); }\nint other(void) { return 0; }\n")],
        "a.c",
        "int helper(void) { return 1; }\n",
    ),
    (
        "c (defined a second time)",
        &[
            ("a.c", "int helper(void) { return 1; }\n"),
            ("b.c", "int user(void) { return helper(); }\n"),
        ],
        "x.c",
        "int helper(void) { return 2; }\n",
    ),
];

/// The cases of `cases` whose refresh (after the case's edit, in this process and in a new
/// one) differs from a cold build. With `one_file`, each refresh must also resolve just the
/// edited file.
fn refreshes_unlike_cold(cases: &[SignatureCase], one_file: bool) -> Vec<String> {
    let mut differ = vec![];
    for (name, files, edited, text) in cases {
        // Refreshed in this process (the interfaces the build left) and in a new one (the
        // interfaces read back from `raw`).
        for in_process in [true, false] {
            let d = repo(files);
            let db = d.path().join(".ctxfast/recon.db");
            let cold = index(d.path(), &db, &IndexOptions::default()).unwrap();
            assert!(cold.edges > cold.files_seen, "{name}: the fixture resolves");
            if !in_process {
                forget_process_cache(&db);
            }
            fs::write(d.path().join(edited), text).unwrap();
            let s = index(d.path(), &db, &IndexOptions::default()).unwrap();
            let resolved_as_expected = !one_file || (s.files_parsed, s.files_resolved) == (1, 1);
            if !resolved_as_expected || !matches_cold(d.path(), &db) {
                differ.push(format!("{name} (in process: {in_process})"));
            }
        }
    }
    differ
}

#[test]
fn a_refresh_resolves_through_unchanged_files_signatures_as_a_cold_build_does() {
    let differ = refreshes_unlike_cold(SIGNATURE_CASES, true);
    assert!(differ.is_empty(), "refresh differs from cold: {differ:?}");
}

#[test]
fn a_signature_edit_re_resolves_the_callers_as_a_cold_build_does() {
    let differ = refreshes_unlike_cold(SIGNATURE_EDITS, false);
    assert!(differ.is_empty(), "refresh differs from cold: {differ:?}");
}

/// Rewrites every interface blob of `db` as the build before signatures were part of the
/// interface wrote it: unmarked, with no signature.
fn write_unmarked_interfaces(db: &Path) {
    let conn = rusqlite::Connection::open(db).unwrap();
    let rows: Vec<(String, Vec<u8>)> = conn
        .prepare("SELECT path, data FROM raw")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    for (path, data) in rows {
        let full = RawFile::decode_compressed(&data).unwrap();
        let old = full.interface(false).encode_compressed();
        conn.execute(
            "UPDATE raw SET iface = ?1 WHERE path = ?2",
            rusqlite::params![old, path],
        )
        .unwrap();
    }
}

#[test]
fn an_index_with_unmarked_interfaces_refreshes_as_a_cold_build_does() {
    let python: SignatureCase = (
        "python",
        &[
            ("a.py", "class A:\n    def f(self):\n        return 1\n"),
            ("b.py", "from a import A\n\ndef g():\n    return A().f()\n"),
        ],
        "b.py",
        "from a import A\n\ndef g():\n    return A().f()\n# x\n",
    );
    for (name, files, edited, text) in SIGNATURE_CASES.iter().chain([&python]) {
        let d = repo(files);
        let db = d.path().join(".ctxfast/recon.db");
        index(d.path(), &db, &IndexOptions::default()).unwrap();
        write_unmarked_interfaces(&db);
        forget_process_cache(&db);
        fs::write(d.path().join(edited), text).unwrap();
        let s = index(d.path(), &db, &IndexOptions::default()).unwrap();
        assert!(matches_cold(d.path(), &db), "{name}");
        // Where the old blob lacks what the interface needs, its file was parsed again
        // (and its blob rewritten); a Python blob was complete and is used as it is.
        let parsed = if *name == "python" { 1 } else { files.len() };
        assert_eq!(s.files_parsed, parsed, "{name}");
        forget_process_cache(&db);
        fs::write(
            d.path().join(edited),
            files.iter().find(|f| f.0 == *edited).unwrap().1,
        )
        .unwrap();
        let s = index(d.path(), &db, &IndexOptions::default()).unwrap();
        assert_eq!(s.files_parsed, 1, "{name}: the blobs were rewritten");
        assert!(matches_cold(d.path(), &db), "{name}");
    }
}

/// Drops what the last run left in this process for `db`: the next run reads the index back
/// as a new process would.
fn forget_process_cache(db: &Path) {
    let conn = rusqlite::Connection::open(db).unwrap();
    let tag = plan::stored_run_start(&conn);
    cache::take_previous(db, tag);
    cache::take(db, tag);
    cache::take_symbols(db, tag);
}

mod c_family;
mod js_ts;
mod names;
mod php_ruby;
mod tags;
