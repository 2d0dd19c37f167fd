"""Other languages' definitions/calls, incremental refresh, and bad input."""

from __future__ import annotations

import os
import sqlite3
import textwrap
from pathlib import Path

import pytest
from recon_fixture import callees

from ctxfast import Repository
from ctxfast.errors import CtxfastError


def write(root: Path, files: dict[str, str | bytes]) -> None:
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(text, bytes):
            p.write_bytes(text)
        else:
            p.write_text(textwrap.dedent(text).lstrip("\n"))


def kinds(graph, path: str) -> dict[str, str]:
    return {n.qualname: n.kind for n in graph.nodes_in_file(path) if n.kind != "ref"}


def test_javascript_and_typescript(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "web/util.js": """
                export function fmt(x) { return String(x); }
                export const twice = (x) => fmt(x) + fmt(x);
                """,
            "web/app.ts": """
                import { fmt as f, twice } from './util';
                import * as u from './util.js';
                import React from 'react';
                interface Shape { area(): number }
                export class Box {
                  size(): number { return this.inner(); }
                  inner(): number { return 1; }
                }
                function main() { f(1); twice(2); u.fmt(3); new Box(); React.render(); }
                """,
            "web/view.tsx": """
                import { Box } from './app';
                export const View = () => { const b = new Box(); return <div>{b.size()}</div>; };
                """,
        },
    )
    repo = Repository(tmp_path)
    repo.index()
    g = repo.graph
    assert kinds(g, "web/util.js") == {
        "web.util": "def",
        "web.util.fmt": "function",
        "web.util.twice": "function",
    }
    k = kinds(g, "web/app.ts")
    assert k["web.app.Shape"] == "class" and k["web.app.Box.size"] == "function"
    assert callees(g, "web.app.main") == {"web.util.fmt", "web.util.twice", "web.app.Box"}
    assert callees(g, "web.app.Box.size") == {"web.app.Box.inner"}
    assert callees(g, "web.util.twice") == {"web.util.fmt"}
    # `const b = new Box()` types `b`: `b.size()` reaches the method.
    assert callees(g, "web.view.View") == {"web.app.Box", "web.app.Box.size"}
    assert all(f.language for f in g.files())


def test_go(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "go.mod": "module example.com/proj\n",
            "util/strs.go": """
                package util

                // Upper upper-cases.
                func Upper(s string) string { return lower(s) }
                func lower(s string) string { return s }
                """,
            "main.go": """
                package main

                import (
                    "fmt"
                    "example.com/proj/util"
                )

                type Server struct{}

                func (s *Server) Start() { s.listen(); util.Upper("x"); fmt.Println("hi") }
                func (s *Server) listen() {}
                func main() { srv := &Server{}; srv.Start(); helper() }
                func helper() {}
                func serve(s *Server, n int) { s.listen(); var t Server; t.Start() }
                func other() { x := newServer(); x.Start() }
                func newServer() *Server { return &Server{} }
                """,
        },
    )
    repo = Repository(tmp_path)
    repo.index()
    g = repo.graph
    assert kinds(g, "util/strs.go")["util.Upper"] == "function"
    assert g.signature("util.Upper:4").doc == "Upper upper-cases."
    assert callees(g, "util.Upper") == {"util.lower"}
    assert callees(g, "root.Server.Start") == {"root.Server.listen", "util.Upper"}
    # Typed locals: `srv := &Server{}`, a `*Server` parameter, `var t Server`; a value of
    # unknown type (`x := newServer()`) gets no method edge.
    assert callees(g, "root.main") == {"root.helper", "root.Server.Start"}
    assert callees(g, "root.serve") == {"root.Server.listen", "root.Server.Start"}
    assert callees(g, "root.other") == {"root.newServer"}


def test_rust(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "src/lib.rs": """
                pub mod store;
                use crate::store::open;
                pub struct Index { n: usize }
                impl Index {
                    pub fn new() -> Self { Self::empty() }
                    fn empty() -> Self { Index { n: 0 } }
                    pub fn run(&self) { self.step(); open(); store::close(); }
                    fn step(&self) {}
                }
                """,
            "src/store.rs": """
                /// Opens the store.
                pub fn open() {}
                pub fn close() {}
                """,
        },
    )
    repo = Repository(tmp_path)
    repo.index()
    g = repo.graph
    assert kinds(g, "src/store.rs") == {
        "store": "def",
        "store.open": "function",
        "store.close": "function",
    }
    assert g.signature("store.open:2").doc == "Opens the store."
    assert callees(g, "crate.Index.new") == {"crate.Index.empty"}
    assert callees(g, "crate.Index.run") == {"crate.Index.step", "store.open", "store.close"}


def test_java(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "src/main/java/com/acme/Util.java": """
                package com.acme;

                public class Util {
                    public static int twice(int x) { return add(x, x); }
                    static int add(int a, int b) { return a + b; }
                }
                """,
            "src/main/java/com/acme/app/Main.java": """
                package com.acme.app;

                import com.acme.Util;
                import java.util.List;

                public class Main extends Base {
                    public void run() { Util.twice(2); helper(); this.helper(); new Base(); }
                    void helper() { System.out.println("x"); }
                    void typed(Base p) {
                        Base b = new Base(); b.ping(); p.pong(); var v = new Main(); v.run();
                    }
                    void untyped(List<Base> xs) { xs.get(0); }
                }
                class Base { void ping() {} void pong() {} }
                """,
        },
    )
    repo = Repository(tmp_path)
    repo.index()
    g = repo.graph
    assert kinds(g, "src/main/java/com/acme/Util.java")["com.acme.Util.twice"] == "function"
    assert callees(g, "com.acme.Util.twice") == {"com.acme.Util.add"}
    assert callees(g, "com.acme.app.Main.run") == {
        "com.acme.Util.twice",
        "com.acme.app.Main.helper",
        "com.acme.app.Base",
    }
    # Declared types of locals and parameters (`Base b`, `Base p`, `var v = new Main()`).
    assert callees(g, "com.acme.app.Main.typed") == {
        "com.acme.app.Base",
        "com.acme.app.Base.ping",
        "com.acme.app.Base.pong",
        "com.acme.app.Main",
        "com.acme.app.Main.run",
    }
    assert callees(g, "com.acme.app.Main.untyped") == set()


# ---- incremental refresh -------------------------------------------------------------------


def test_incremental_refresh_modify_and_delete(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "a.py": "def f():\n    return 1\n",
            "b.py": "from a import f\n\n\ndef g():\n    return f()\n",
            "c.py": "def h():\n    return 2\n",
        },
    )
    repo = Repository(tmp_path)
    s1 = repo.index()
    assert (s1.files_seen, s1.files_parsed, s1.files_removed) == (3, 3, 0)
    assert [c.qualname for c in repo.graph.callers("a.f:1")] == ["b.g"]

    s2 = repo.index()
    assert (s2.files_parsed, s2.files_removed) == (0, 0)
    assert (s2.nodes, s2.edges) == (s1.nodes, s1.edges)

    # Move f down two lines: only a.py re-parses, and b.py's edge follows the new id.
    (tmp_path / "a.py").write_text("# c\n# c\ndef f():\n    return 1\n")
    s3 = repo.index()
    assert s3.files_parsed == 1
    g = repo.graph
    assert g.node("a.f:1") is None
    assert [c.qualname for c in g.callers("a.f:3")] == ["b.g"]
    assert not g.edges_to("a.f:1")

    # A name that was unresolved becomes resolvable when its definition appears.
    (tmp_path / "c.py").write_text("def h():\n    return later()\n")
    repo.index()
    assert [u.name for u in repo.graph.unresolved()] == ["later"]
    (tmp_path / "d.py").write_text("x = 1\n")
    (tmp_path / "c.py").write_text("from d import x\n\n\ndef h():\n    return x.bit_length()\n")
    repo.index()
    assert repo.graph.unresolved() == []

    # Delete a file: its nodes and the edges into it are gone; b's call becomes unresolved.
    (tmp_path / "a.py").unlink()
    s4 = repo.index()
    assert s4.files_removed == 1
    g = repo.graph
    assert g.nodes_in_file("a.py") == []
    assert not g.edges_to("a.f:3")
    con = sqlite3.connect(repo.graph_db)
    dangling = con.execute(
        "SELECT COUNT(*) FROM edges WHERE dst NOT IN (SELECT id FROM nodes)"
    ).fetchone()
    con.close()
    assert dangling == (0,)
    # `a` no longer maps to a project file, so it reads as a third-party module: no edge.
    assert g.callees("b.g:4") == []
    assert g.unresolved() == []


def test_schema_tables_and_wal(tmp_path: Path) -> None:
    write(tmp_path, {"m.py": "def f():\n    pass\n"})
    repo = Repository(tmp_path)
    repo.index()
    con = sqlite3.connect(repo.graph_db)
    cols = {
        t: [r[1] for r in con.execute(f"PRAGMA table_info({t})")]
        for t in ("nodes", "edges", "name_index", "files", "file_deps")
    }
    mode = con.execute("PRAGMA journal_mode").fetchone()[0]
    names = [r[0] for r in con.execute("SELECT qualname FROM name_index ORDER BY qualname")]
    assert cols["nodes"] == ["id", "kind", "name", "qualname", "file", "line", "col", "end_line"]
    # `nodes`, `edges` and `file_deps` are views over integer-keyed rows (schema 9); `edges`
    # shows its rows' rowid, which a view would otherwise read as NULL.
    assert cols["edges"] == ["src", "dst", "type", "rowid"]
    assert cols["name_index"] == ["qualname"]
    assert cols["files"] == ["id", "path", "sha256", "language", "bytes", "parse_error"]
    assert cols["file_deps"] == ["src_file", "dst_file"]
    views = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'view'")}
    assert views == {"nodes", "edges", "file_deps"}
    assert mode == "wal"
    assert names == ["m", "m.f"]
    con.close()
    assert repo.graph_db == tmp_path.resolve() / ".ctxfast" / "recon.db"


# ---- discovery and bad input ---------------------------------------------------------------


def test_gitignore_and_vendored_dirs_are_skipped(tmp_path: Path) -> None:
    files = {
        d + "/x.py": "def f():\n    pass\n"
        for d in ("vendor", "node_modules", "site-packages", "third_party", "external", "build")
    }
    files[".gitignore"] = "build/\n"
    files["main.py"] = "def main():\n    pass\n"
    write(tmp_path, files)
    repo = Repository(tmp_path)
    stats = repo.index()
    assert [f.path for f in repo.graph.files()] == ["main.py"]
    assert stats.files_seen == 1


def test_bad_input_is_recorded_never_fatal(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "syntax.py": (
                "def ok():\n    return 1\n\ndef broken(:\n    pass\n\n"
                "def after():\n    return ok()\n"
            ),
            "latin.py": b"def caf\xe9():\n    return 1\n\ndef fine():\n    return 2\n",
            "fake.py": b"\x00\x01\x02binary" * 100,
            "big.js": "var a=1;" * 700_000,
            "ok.py": "def ok2():\n    pass\n",
        },
    )
    outside = tmp_path.parent / (tmp_path.name + "_outside")
    outside.mkdir()
    (outside / "secret.py").write_text("def secret():\n    pass\n")
    os.symlink(outside / "secret.py", tmp_path / "link_out.py")
    os.symlink(outside, tmp_path / "dirlink")
    os.symlink(tmp_path, tmp_path / "loop")
    os.symlink(tmp_path / "self_loop", tmp_path / "self_loop")
    unreadable = tmp_path / "locked.py"
    unreadable.write_text("def locked():\n    pass\n")
    unreadable.chmod(0)
    try:
        repo = Repository(tmp_path)
        stats = repo.index()
    finally:
        unreadable.chmod(0o644)
    errs = {e["path"]: e["error"] for e in stats.errors}
    assert "syntax error" in errs["syntax.py"]
    assert "binary" in errs["fake.py"]
    assert "exceeds" in errs["big.js"]
    assert "outside the repository" in errs["link_out.py"]
    assert "symlink not followed" in errs["loop"]
    assert "symlink not followed" in errs["self_loop"]
    assert "symlink not followed" in errs["dirlink"]
    g = repo.graph
    files = {f.path: f for f in g.files()}
    assert files["fake.py"].sha256 is None and "binary" in files["fake.py"].parse_error
    assert files["syntax.py"].sha256 is not None
    # partial graph survives the syntax error
    names = {n.name for n in g.nodes_in_file("syntax.py")}
    assert {"ok", "after"} <= names
    # invalid UTF-8 parsed lossily
    assert {"fine"} <= {n.name for n in g.nodes_in_file("latin.py")}
    assert g.lookup("secret") == []
    # running as root the chmod-000 file is still readable; either way it is accounted for
    assert "locked.py" in files
    assert g.lookup("ok2")


def test_size_limit_is_configurable(tmp_path: Path) -> None:
    write(tmp_path, {"a.py": "x = 1\n" * 100})
    assert Repository(tmp_path).index().files_parsed == 1
    stats = Repository(tmp_path, max_file_bytes=50).index()
    assert stats.files_parsed == 0 and "exceeds the 50 byte limit" in stats.errors[0]["error"]


def test_empty_repository(tmp_path: Path) -> None:
    repo = Repository(tmp_path)
    stats = repo.index()
    assert (stats.files_seen, stats.nodes, stats.edges, stats.errors) == (0, 0, 0, [])
    assert repo.graph.files() == []


def test_errors_are_ctxfast_errors(tmp_path: Path) -> None:
    with pytest.raises(CtxfastError):
        Repository(tmp_path / "missing")
    with pytest.raises(CtxfastError):
        _ = Repository(tmp_path).graph


def test_refresh_counts_parsed_and_resolved_files(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "lib.py": "def f():\n    return 1\n",
            "user.py": "from lib import f\n\n\ndef g():\n    return f()\n",
            "leaf.py": "def k():\n    return 2\n",
        },
    )
    repo = Repository(tmp_path)
    assert (repo.index().files_resolved, repo.index().files_resolved) == (3, 0)
    # Body-only edit of an imported module: its definitions keep their ids, so only the
    # file itself is re-resolved.
    (tmp_path / "lib.py").write_text("def f():\n    return 10  # changed\n")
    s = repo.index()
    assert (s.files_parsed, s.files_resolved) == (1, 1)
    # Moving the definition changes its id: the importer's edges are pointed at the new one
    # without resolving it again (nothing it looks up changed), the leaf is untouched.
    (tmp_path / "lib.py").write_text("\n\ndef f():\n    return 10\n")
    s = repo.index()
    assert (s.files_parsed, s.files_resolved) == (1, 1)
    assert [c.qualname for c in repo.graph.callers("lib.f:3")] == ["user.g"]


def test_module_name_clash_is_reported(tmp_path: Path) -> None:
    write(tmp_path, {"pkg/a.py": "def f():\n    pass\n", "src/pkg/a.py": "def g():\n    pass\n"})
    stats = Repository(tmp_path).index()
    errs = {e["path"]: e["error"] for e in stats.errors}
    assert list(errs) == ["src/pkg/a.py"]
    assert errs["src/pkg/a.py"].startswith(
        "module name clash: `pkg.a` is also the module of pkg/a.py"
    )
