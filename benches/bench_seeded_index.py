"""Second version of a repository: a cold build against one seeded from the first version's
index (``Repository(seed=...)``), with and without the parse cache, same run.

Usage: python benches/bench_seeded_index.py [--state] FIRST_TREE SECOND_TREE [ROUNDS]
       (e.g. two SWE-bench trees of one repository; both are only read)

``--state``: every index is built with its retrieval state (``index()``'s default), so a
seeded one carries the seed's state (``ctxfast.retrieval.carry``) where a cold one builds it.

Indexes FIRST once (its index is the seed; with an empty parse cache, which it fills), then
for each round, in this order, SECOND four ways, each in its own child process into a fresh
index directory: cold; cold with a fresh copy of FIRST's cache; seeded from FIRST's index;
seeded with a copy of the cache. Prints wall and CPU seconds (``getrusage`` of the child
around ``index()``), peak RSS, files parsed and resolved, the ratios to the cold build of
the same round, and whether every index holds the same rows as the round's cold one
(every table, through the views readers use; ``files.id`` and the edges' rowid, which only
number rows, and the run's times left out).
"""

from __future__ import annotations

import hashlib
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

VARIANTS = ("cold", "cold+cache", "seeded", "seeded+cache")


def rows_digest(db: Path) -> str:
    """SHA-256 of every table's sorted rows: computed in the child that built the index, so
    the parent never holds a large index's rows (a forked child inherits the parent's peak
    RSS on Linux, which would then show in every later child's figure)."""
    from ctxfast.recon import graph_db

    h = hashlib.sha256()
    for t, rows in graph_db.content_rows(db).items():
        h.update(repr((t, rows)).encode())
    return h.hexdigest()


def cpu_seconds() -> float:
    u = resource.getrusage(resource.RUSAGE_SELF)
    return u.ru_utime + u.ru_stime


#: Whether the indexes are built with their retrieval state (``--state``).
STATE = "--state" in sys.argv


def child(tree: str, index_dir: str, cache: str, seed: str) -> None:
    from ctxfast import ParseCache, Repository

    repo = Repository(
        tree, index_dir, parse_cache=ParseCache(cache) if cache else None, seed=seed or None
    )
    cpu, t = cpu_seconds(), time.perf_counter()
    s = repo.index(retrieval_state=STATE)
    out = {"seconds": time.perf_counter() - t, "cpu": cpu_seconds() - cpu}
    out |= {"files": s.files_seen, "parsed": s.files_parsed, "resolved": s.files_resolved}
    out |= {"hits": s.cache_hits, "seeded_from": s.seeded_from, "seed_note": s.seed_note}
    out["rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    out["rows"] = rows_digest(repo.graph_db)
    print(json.dumps(out))


def run(tree: Path, index_dir: Path, cache: Path | None = None, seed: Path | None = None) -> dict:
    args = [sys.executable, __file__, *(["--state"] if STATE else []), "--child", str(tree)]
    args.append(str(index_dir))
    args += [str(cache or ""), str(seed or "")]
    p = subprocess.run(args, check=True, capture_output=True, text=True)
    return dict(json.loads(p.stdout.strip().splitlines()[-1]))


def main() -> int:
    argv = [a for a in sys.argv[1:] if a != "--state"]
    if argv[0] == "--child":
        child(*argv[1:5])
        return 0
    first, second = (Path(a).resolve() for a in argv[0:2])
    rounds = int(argv[2]) if len(argv) > 2 else 1
    print(f"{first.name} -> {second.name}")
    all_same = True
    with tempfile.TemporaryDirectory() as tmp:
        t = Path(tmp)
        seed = run(first, t / "first", t / "cache")
        print(f"first tree (seed, fills the cache): {seed['seconds']:.2f} s")
        for n in range(rounds):
            print(f"round {n + 1}, load avg {os.getloadavg()[0]:.1f}")
            got = {}
            for v in VARIANTS:
                cache = None
                if v.endswith("+cache"):
                    cache = t / f"cache-{v}"
                    shutil.rmtree(cache, ignore_errors=True)
                    shutil.copytree(t / "cache", cache)
                seed_dir = t / "first" if v.startswith("seeded") else None
                got[v] = run(second, t / f"{v}-{n}", cache, seed_dir)
                if cache:
                    shutil.rmtree(cache)
            for v in VARIANTS:
                r = got[v]
                same = r["rows"] == got["cold"]["rows"]
                all_same &= same
                ratio = got["cold"]["seconds"] / r["seconds"]
                cpu_ratio = got["cold"]["cpu"] / r["cpu"]
                note = f" seed note: {r['seed_note']}" if r["seed_note"] else ""
                print(
                    f"  {v:13s} {r['seconds']:6.2f} s wall {r['cpu']:6.2f} s CPU "
                    f"({ratio:4.1f}x / {cpu_ratio:4.1f}x) parsed {r['parsed']:5d} "
                    f"(cache {r['hits']}) resolved {r['resolved']:5d} of {r['files']} "
                    f"RSS {r['rss_mb']:.0f} MB rows same: {same}{note}"
                )
            for v in VARIANTS:
                shutil.rmtree(t / f"{v}-{n}")
    print(f"identical rows in every run: {all_same}")
    return 0 if all_same else 1


if __name__ == "__main__":
    raise SystemExit(main())
