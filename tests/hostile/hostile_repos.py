"""Generators of hostile repositories, one per defect class of issue 19.

Each writes a small tree under ``root`` and returns what the test needs to know about it.
They build everything on the spot (no downloads), so the suite is hermetic and fast.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
from pathlib import Path

import ctxfast
from ctxfast.recon import graph_db

#: The text that must never reach a window: it lives outside every repository.
SECRET = "OUTSIDE-SECRET-7f3a"


def plain_modules(root: Path, n: int = 300) -> None:
    """``n`` one-line modules (the bulk the reports' repositories had)."""
    root.mkdir(parents=True, exist_ok=True)
    for i in range(n):
        (root / f"m{i}.py").write_text(f"x{i} = {i}\n")


def deeply_nested(root: Path) -> None:
    """The three reported stack killers: 1,500 chained ``'a' +``, ~700 nested calls, ~3,000
    nested JS arrays, beside 300 ordinary modules."""
    plain_modules(root)
    (root / "deep.py").write_text("S = (" + "'a' +\n" * 1500 + "'')\n")
    (root / "calls.py").write_text(
        "def f(x):\n    return x\n\nV = " + "f(" * 700 + "1" + ")" * 700 + "\n"
    )
    # Brackets 100 to a line: on one 6 KB line the file would be skipped as minified before
    # the visitor ever saw it.
    nest = ("[" * 100 + "\n") * 30 + ("]" * 100 + "\n") * 30
    (root / "arrays.js").write_text("const a = " + nest + ";\n")


def outside_file(base: Path) -> Path:
    """A file outside the repository holding :data:`SECRET`."""
    p = base / "outside" / "secret.txt"
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(f"{SECRET}\ndef leaked():\n    return '{SECRET}'\n")
    return p


def pager_repo(root: Path) -> Path:
    """A small repository whose ``pager.py`` a task about paging retrieves."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "pager.py").write_text(
        "def next_page(p):\n    '''Advance the pager by one page.'''\n    return p + 1\n"
    )
    (root / "util.py").write_text("def helper():\n    return 0\n")
    return root / "pager.py"


def minified_js(root: Path, n_bytes: int) -> None:
    """One JS file of a single ``n_bytes`` line holding thousands of tiny functions (what a
    minifier emits), under the default 1 MB file cap."""
    root.mkdir(parents=True, exist_ok=True)
    parts, size, i = [], 0, 0
    while size < n_bytes:
        part = f"function f{i}(a){{return a+{i}}};"
        parts.append(part)
        size += len(part)
        i += 1
    (root / "bundle.min.js").write_text("".join(parts) + "\n")
    (root / "app.py").write_text("def render_page(p):\n    return p\n")


def fifo(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(path)


def corrupt(db: Path, how: str) -> None:
    """Damages an index the ways the corruption trials did."""
    if how == "truncate":
        with open(db, "r+b") as fh:
            fh.truncate(db.stat().st_size // 3)
    elif how == "random":
        data = bytearray(db.read_bytes())
        for i in range(4096, len(data), 997):
            data[i] = (data[i] * 31 + 7) % 256
        db.write_bytes(bytes(data))
    elif how == "zero-pages":
        data = bytearray(db.read_bytes())
        page = 16384
        for start in range(page, len(data), 3 * page):
            data[start : start + page] = bytes(min(page, len(data) - start))
        db.write_bytes(bytes(data))
    elif how == "drop-edges":
        con = sqlite3.connect(db)
        con.execute("DROP TABLE edge_rows")
        con.commit()
        con.close()
    else:
        raise ValueError(how)
    for suffix in ("-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)


def dump(db: Path) -> list[str]:
    """Every graph row (nodes, edges, unresolved names, name index, definition meta), sorted."""
    con = graph_db.with_text_ids(graph_db.connect(db))
    try:
        rows: list[str] = []
        for q in (
            "SELECT id, kind, name, qualname, file, line, col, end_line FROM nodes",
            "SELECT src, dst, type FROM edges",
            "SELECT name, node_id, file, line FROM unresolved",
            "SELECT qualname FROM name_index",
            "SELECT id, signature, doc FROM defs_meta",
        ):
            rows.extend(repr(r) for r in con.rows(q))
        return sorted(rows)
    finally:
        con.close()


def cold_dump(tree: Path, scratch: Path) -> list[str]:
    if scratch.exists():
        shutil.rmtree(scratch)
    shutil.copytree(tree, scratch, ignore=shutil.ignore_patterns(".ctxfast"))
    ctxfast.Repository(scratch).index()
    return dump(scratch / ".ctxfast" / "recon.db")
