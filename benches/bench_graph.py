"""Cold/incremental code-graph indexing vs a pure-Python ``ast`` baseline.

Usage: python benches/bench_graph.py DIR   (e.g. an extracted Django 4.2 source release)

The baseline walks the same ``*.py`` files, parses each with ``ast``, emits def nodes
(function/class/var with qualnames), call references with their enclosing scope and import
bindings, resolves calls by name against module-level defs and imports, and writes the same
tables to SQLite in one transaction — the "obvious" Python implementation of spec §3.2.
"""

from __future__ import annotations

import ast
import os
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

from ctxfast import Repository

SKIP = {"vendor", "node_modules", "site-packages", "third_party", "external", ".git", ".ctxfast"}


def py_files(root: Path) -> list[Path]:
    out = []
    for d, dirs, files in os.walk(root):
        dirs[:] = [x for x in dirs if x not in SKIP]
        out += [Path(d) / f for f in files if f.endswith(".py")]
    return sorted(out)


def baseline(root: Path, db: Path) -> tuple[int, int]:
    nodes: list[tuple] = []
    refs: list[tuple[str, str, str, int]] = []  # (file module, scope qual, name, line)
    defs: dict[str, str] = {}
    for path in py_files(root):
        rel = path.relative_to(root).as_posix()
        mod = rel[:-3].replace("/", ".").removesuffix(".__init__")
        try:
            tree = ast.parse(path.read_bytes())
        except (SyntaxError, ValueError):
            continue

        def visit(node: ast.AST, scope: str, rel: str = rel, mod: str = mod) -> None:
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                    q = f"{scope}.{child.name}"
                    kind = "class" if isinstance(child, ast.ClassDef) else "function"
                    nid = f"{q}:{child.lineno}"
                    nodes.append(
                        (
                            nid,
                            kind,
                            child.name,
                            q,
                            rel,
                            child.lineno,
                            child.col_offset,
                            child.end_lineno,
                        )
                    )
                    defs.setdefault(q, nid)
                    visit(child, q)
                    continue
                if isinstance(child, ast.Call):
                    f = child.func
                    name = (
                        f.id
                        if isinstance(f, ast.Name)
                        else (f.attr if isinstance(f, ast.Attribute) else None)
                    )
                    if name:
                        refs.append((mod, scope, name, child.lineno))
                if isinstance(child, ast.ImportFrom) and child.module:
                    for a in child.names:
                        defs.setdefault(f"{mod}.{a.asname or a.name}", f"{child.module}.{a.name}")
                visit(child, scope)

        nodes.append((f"{mod}:1", "def", mod.rsplit(".", 1)[-1], mod, rel, 1, 0, 1))
        visit(tree, mod)
    edges = []
    for mod, scope, name, line in refs:
        dst = defs.get(f"{mod}.{name}")
        if dst and ":" not in dst:
            dst = defs.get(dst)
        if dst:
            edges.append((f"{scope}:{line}", dst, "invoke"))
    con = sqlite3.connect(db)
    con.executescript(
        "CREATE TABLE nodes(id TEXT PRIMARY KEY, kind TEXT, name TEXT, qualname TEXT, file TEXT,"
        " line INT, col INT, end_line INT); CREATE TABLE edges(src TEXT, dst TEXT, type TEXT);"
    )
    with con:
        con.executemany("INSERT OR IGNORE INTO nodes VALUES (?,?,?,?,?,?,?,?)", nodes)
        con.executemany("INSERT INTO edges VALUES (?,?,?)", edges)
    con.close()
    return len(nodes), len(edges)


def main() -> int:
    root = Path(sys.argv[1]).resolve()
    files = py_files(root)
    mb = sum(p.stat().st_size for p in files) / 1e6
    print(f"{root}: {len(files)} .py files, {mb:.1f} MB")
    with tempfile.TemporaryDirectory() as tmp:
        t = time.perf_counter()
        for p in files:
            try:
                for _ in ast.walk(ast.parse(p.read_bytes())):
                    pass
            except (SyntaxError, ValueError):
                pass
        print(f"ast.parse + ast.walk only : {time.perf_counter() - t:6.2f} s")
        t = time.perf_counter()
        n, e = baseline(root, Path(tmp) / "base.db")
        print(f"ast baseline: {time.perf_counter() - t:6.2f} s ({n} nodes, {e} edges)")
        repo = Repository(root, Path(tmp) / "idx")
        t = time.perf_counter()
        s = repo.index()
        cold = time.perf_counter() - t
        print(
            f"ctxfast cold index        : {cold:6.2f} s ({s.nodes} nodes, {s.edges} edges, "
            f"{s.files_seen} files)"
        )
        t = time.perf_counter()
        repo.index()
        print(f"ctxfast no-op refresh     : {time.perf_counter() - t:6.3f} s")
        leaf = [p for p in files if p.as_posix().endswith("django/utils/text.py")]
        target = leaf[0] if leaf else files[len(files) // 2]
        original = target.read_bytes()
        try:
            target.write_bytes(original + b"\n# touched\n")
            t = time.perf_counter()
            s2 = repo.index()
            print(
                f"ctxfast 1-file refresh    : {time.perf_counter() - t:6.3f} s "
                f"(parsed {s2.files_parsed})"
            )
        finally:
            target.write_bytes(original)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
