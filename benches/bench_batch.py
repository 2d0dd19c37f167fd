"""Batch indexing with ``index_many``: trees per minute with and without the parse cache.

Usage: python benches/bench_batch.py [--workers N] [--threads T] TREE [TREE ...]
       (e.g. every SWE-bench tree of a few repositories; the trees are only read)

Runs the whole list twice in the same run, each into fresh index directories: once without
the parse cache, once with an empty cache that fills as it goes (the cached run's first
tree of each repository is cold; later versions reuse it). Prints trees/minute, files
parsed vs taken from the cache, and the peak RSS of the worker processes.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
from pathlib import Path

from ctxfast.batch import index_many


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("trees", nargs="+")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    trees = [str(Path(t).resolve()) for t in args.trees]
    print(
        f"{len(trees)} trees, {args.workers} workers x {args.threads} threads, "
        f"load avg {os.getloadavg()[0]:.1f}"
    )
    with tempfile.TemporaryDirectory() as tmp:
        t = Path(tmp)
        rates = {}
        for label, kw in (
            ("no cache", {"no_cache": True}),
            ("cache   ", {"cache_dir": t / "cache"}),
        ):
            s = index_many(
                trees,
                workers=args.workers,
                threads_per_worker=args.threads,
                index_root=t / label.strip().replace(" ", "-"),
                **kw,
            ).to_json()
            rss = [r["peak_rss_mb"] for r in s["results"] if r["status"] == "indexed"]
            rates[label] = s["trees_per_minute"]
            print(
                f"{label}: {s['seconds']:7.1f} s = {s['trees_per_minute']:5.1f} trees/min; "
                f"{s['files_parsed']} files, {s['cache_hits']} from the cache; failed "
                f"{s['failed']}; worker peak RSS median {statistics.median(rss):.0f} MB, "
                f"max {max(rss):.0f} MB"
            )
        print(f"cache speedup: {rates['cache   '] / rates['no cache']:.2f}x trees/min")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
