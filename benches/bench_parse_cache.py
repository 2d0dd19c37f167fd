"""Second-version indexing with the shared parse cache vs a cold build, same run.

Usage: python benches/bench_parse_cache.py FIRST_TREE SECOND_TREE
       (e.g. two SWE-bench trees of one repository; both are only read)

Indexes SECOND cold without a cache (the baseline), then FIRST with an empty cache (which
fills it), then SECOND with that cache, and prints the second-tree time against the cold
one, the cache hits, the cache's payload and whether the two SECOND indexes hold the same
rows (they must). Each index runs in its own child process so each peak RSS is its own.
"""

from __future__ import annotations

import json
import os
import resource
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def rows(db: Path) -> list[tuple]:
    con = sqlite3.connect(db)
    out: list[tuple] = []
    for t in ("nodes", "edges", "defs_meta", "unresolved", "name_index", "raw", "files"):
        out += [(t, *r) for r in con.execute(f"SELECT * FROM {t}")]
    con.close()
    return sorted(out, key=repr)


def child(tree: str, index_dir: str, cache: str) -> None:
    from ctxfast import ParseCache, Repository

    repo = Repository(tree, index_dir, parse_cache=ParseCache(cache) if cache else None)
    t = time.perf_counter()
    s = repo.index(retrieval_state=False)
    secs = time.perf_counter() - t
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    out = {"seconds": secs, "files": s.files_seen, "parsed": s.files_parsed}
    out |= {"hits": s.cache_hits, "rss_mb": rss, "db_mb": repo.graph_db.stat().st_size / 1e6}
    print(json.dumps(out))


def run(tree: Path, index_dir: Path, cache: Path | None) -> dict:
    args = [sys.executable, __file__, "--child", str(tree), str(index_dir), str(cache or "")]
    p = subprocess.run(args, check=True, capture_output=True, text=True)
    return dict(json.loads(p.stdout.strip().splitlines()[-1]))


def main() -> int:
    if sys.argv[1] == "--child":
        child(*sys.argv[2:5])
        return 0
    first, second = (Path(a).resolve() for a in sys.argv[1:3])
    print(f"{first.name} -> {second.name}, load avg {os.getloadavg()[0]:.1f}")
    with tempfile.TemporaryDirectory() as tmp:
        t = Path(tmp)
        cold = run(second, t / "cold", None)
        warm_up = run(first, t / "first", t / "cache")
        second_run = run(second, t / "second", t / "cache")
        same = rows(t / "cold" / "recon.db") == rows(t / "second" / "recon.db")
        payload = (t / "cache" / "parse-cache.db").stat().st_size / 1e6
    print(
        f"cold (no cache)      : {cold['seconds']:6.2f} s, {cold['files']} files, "
        f"peak RSS {cold['rss_mb']:.0f} MB, index {cold['db_mb']:.0f} MB"
    )
    print(f"first tree (fills)   : {warm_up['seconds']:6.2f} s, cache file {payload:.0f} MB")
    ratio = cold["seconds"] / second_run["seconds"]
    print(
        f"second tree (cached) : {second_run['seconds']:6.2f} s, {second_run['hits']} of "
        f"{second_run['parsed']} files from the cache = {ratio:.1f}x faster than cold; "
        f"peak RSS {second_run['rss_mb']:.0f} MB; identical rows: {same}"
    )
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
