"""What a ``recon.db`` holds, per table and index, against the size of the source it indexes.

    python benches/index_size.py TREE [INDEX_DIR]

Indexes TREE cold into INDEX_DIR (a fresh temporary directory by default, never the tree's
own cache) and prints SQLite's ``dbstat`` page totals per object, largest first, with the
database's size as a multiple of the indexed files' bytes: the figure issue 15's "index at
most 3x the source" target is about.
"""

from __future__ import annotations

import argparse
import sqlite3
import tempfile
import time
from pathlib import Path

import ctxfast


def object_sizes(db: Path) -> list[tuple[str, int]]:
    """(table or index name, bytes of its pages), largest first."""
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        rows = con.execute(
            "SELECT name, SUM(pgsize) FROM dbstat GROUP BY name ORDER BY 2 DESC"
        ).fetchall()
    finally:
        con.close()
    return [(str(n), int(s)) for n, s in rows]


def source_bytes(db: Path) -> int:
    """Bytes of the files the index holds a graph of (skipped files excluded)."""
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        row = con.execute("SELECT COALESCE(SUM(bytes), 0) FROM files WHERE sha256 IS NOT NULL")
        return int(row.fetchone()[0])
    finally:
        con.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("tree", type=Path)
    ap.add_argument("index_dir", type=Path, nargs="?")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="ctxfast-size-") as tmp:
        index_dir = args.index_dir or Path(tmp)
        t0 = time.perf_counter()
        ctxfast.Repository(args.tree, index_dir).index()
        took = time.perf_counter() - t0
        db = index_dir / "recon.db"
        sizes = object_sizes(db)
        src = source_bytes(db)
        total = db.stat().st_size
        for name, size in sizes:
            print(f"{name:32s} {size / 1e6:8.1f} MB")
        print(
            f"{'recon.db':32s} {total / 1e6:8.1f} MB = {total / max(src, 1):.2f}x "
            f"{src / 1e6:.1f} MB of source (cold index {took:.1f} s)"
        )


if __name__ == "__main__":
    main()
