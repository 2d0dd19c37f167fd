"""Cold/incremental code-graph indexing vs a pure-Python ``ast`` baseline.

Usage: python benches/bench_graph.py DIR   (e.g. an extracted Django 4.2 source release)

Prints the cold index time (the graph alone) and its ratio to the ``ast`` baseline and to a
bare ``ast.parse`` + ``ast.walk`` pass (same run, same load), the retrieval state that
``index()`` builds with the graph (timed apart), no-op and one-file refresh times of the graph
(with how many files were parsed and re-resolved) and the ctxfast process's peak RSS.

The baseline walks the same ``*.py`` files, parses each with ``ast``, emits def nodes
(function/class/var with qualnames), call references with their enclosing scope and import
bindings, resolves calls by name against module-level defs and imports, and writes the same
tables to SQLite in one transaction — the "obvious" Python implementation of the code graph.
"""

from __future__ import annotations

import ast
import json
import os
import resource
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ctxfast import Repository
from ctxfast.retrieval.warm import build_state

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


def cpu() -> float:
    """User + system CPU seconds of this process, all threads (less load-sensitive than wall)."""
    t = os.times()
    return t.user + t.system


def ctxfast_run(root: Path) -> None:
    """The ctxfast half, in a child process so its peak RSS excludes the baseline's."""
    files = py_files(root)
    with tempfile.TemporaryDirectory() as tmp:
        repo = Repository(root, Path(tmp) / "idx")
        t, c = time.perf_counter(), cpu()
        s = repo.index(retrieval_state=False)  # the graph alone; the state is timed next
        out = {"cold": time.perf_counter() - t, "nodes": s.nodes, "edges": s.edges}
        out["cold_cpu"] = cpu() - c
        out["files"] = s.files_seen
        t, c = time.perf_counter(), cpu()
        build_state(repo.root, repo.graph, repo.index_dir)
        out["state"], out["state_cpu"] = time.perf_counter() - t, cpu() - c
        t = time.perf_counter()
        repo.index(retrieval_state=False)
        out["noop"] = time.perf_counter() - t
        leaf = [p for p in files if p.as_posix().endswith("django/utils/text.py")]
        target = leaf[0] if leaf else files[len(files) // 2]
        original = target.read_bytes()
        try:
            # Body-only edit (the common case): same interface, so dependents keep their edges.
            target.write_bytes(original + b"\n# touched\n")
            t = time.perf_counter()
            s2 = repo.index(retrieval_state=False)
            out["one"] = (time.perf_counter() - t, s2.files_parsed, s2.files_resolved)
            # A line inserted at the top moves every definition id: dependents re-resolve.
            target.write_bytes(b"# shifted\n" + original)
            t = time.perf_counter()
            s3 = repo.index(retrieval_state=False)
            out["shift"] = (time.perf_counter() - t, s3.files_parsed, s3.files_resolved)
        finally:
            target.write_bytes(original)
            repo.index(retrieval_state=False)
    out["rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps(out))


def main() -> int:
    if sys.argv[1] == "--ctxfast-only":
        ctxfast_run(Path(sys.argv[2]).resolve())
        return 0
    root = Path(sys.argv[1]).resolve()
    files = py_files(root)
    mb = sum(p.stat().st_size for p in files) / 1e6
    print(f"{root}: {len(files)} .py files, {mb:.1f} MB, load avg {os.getloadavg()[0]:.1f}")
    with tempfile.TemporaryDirectory() as tmp:
        t, c = time.perf_counter(), cpu()
        for p in files:
            try:
                for _ in ast.walk(ast.parse(p.read_bytes())):
                    pass
            except (SyntaxError, ValueError):
                pass
        walk, walk_cpu = time.perf_counter() - t, cpu() - c
        print(f"ast.parse + ast.walk only : {walk:6.2f} s ({walk_cpu:.2f} s CPU)")
        t, c = time.perf_counter(), cpu()
        n, e = baseline(root, Path(tmp) / "base.db")
        base, base_cpu = time.perf_counter() - t, cpu() - c
        print(
            f"ast baseline              : {base:6.2f} s "
            f"({base_cpu:.2f} s CPU, {n} nodes, {e} edges)"
        )
    child = subprocess.run(
        [sys.executable, __file__, "--ctxfast-only", str(root)],
        check=True,
        capture_output=True,
        text=True,
    )
    r = json.loads(child.stdout.strip().splitlines()[-1])
    cold = r["cold"]
    print(
        f"ctxfast cold index        : {cold:6.2f} s ({r['nodes']} nodes, {r['edges']} edges, "
        f"{r['files']} files) = {base / cold:.1f}x faster than the ast baseline, "
        f"{walk / cold:.1f}x faster than ast.parse+ast.walk"
    )
    print(
        f"ctxfast cold CPU          : {r['cold_cpu']:6.2f} s on {os.cpu_count()} cores = "
        f"{base_cpu / r['cold_cpu']:.1f}x / {walk_cpu / r['cold_cpu']:.1f}x less CPU than the "
        f"baseline / parse+walk"
    )
    print(
        f"ctxfast retrieval state   : {r['state']:6.2f} s ({r['state_cpu']:.2f} s CPU), built "
        f"with the index by index(): cold index + state = {base / (cold + r['state']):.1f}x "
        "faster than the ast baseline"
    )
    print(f"ctxfast no-op refresh     : {r['noop']:6.3f} s")
    for key, label in (("one", "1-file refresh (body)  "), ("shift", "1-file refresh (shift) ")):
        secs, parsed, resolved = r[key]
        print(f"ctxfast {label}  : {secs:6.3f} s (parsed {parsed}, resolved {resolved})")
    print(f"ctxfast peak RSS          : {r['rss_mb']:6.0f} MB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
