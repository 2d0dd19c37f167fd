"""Indexing cost as the repository grows: a synthetic repository of N files made of real code.

Usage: python benches/bench_scale.py DJANGO_SRC SIZE [SIZE ...] [--plot FILE] [--keep DIR]
       (DJANGO_SRC: an extracted Django source release, holding the ``django/`` package;
       e.g. ``python benches/bench_scale.py /tmp/dj/Django-4.2 10000 30000 100000``)

For each size, copies Django's ``.py`` files as packages ``dj0``, ``dj1``, ... with every
``django`` name rewritten to the copy's own (so imports stay inside each copy and resolution
has real cross-file work) until SIZE files, then, in a child process (its own peak RSS):
cold index, no-op refresh, one-file body-edit refresh. Prints one row per size (and the
per-file cost, to show the growth) and optionally plots them.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

WORD = re.compile(rb"\bdjango\b")


def synthesise(src: Path, out: Path, size: int) -> int:
    """Writes ``size`` files under ``out``; returns their total bytes."""
    files = sorted((src / "django").rglob("*.py"))
    total = written = 0
    copy = 0
    while written < size:
        name = f"dj{copy}".encode()
        for f in files:
            if written == size:
                break
            dst = out / f"dj{copy}" / f.relative_to(src / "django")
            dst.parent.mkdir(parents=True, exist_ok=True)
            data = WORD.sub(name, f.read_bytes())
            dst.write_bytes(data)
            total += len(data)
            written += 1
        copy += 1
    return total


def child(root: str, index_dir: str) -> None:
    from ctxfast import Repository

    repo = Repository(root, index_dir)
    t, cpu = time.perf_counter(), time.process_time()
    s = repo.index(retrieval_state=False)
    out: dict = {"cold": time.perf_counter() - t, "files": s.files_seen}
    out["cold_cpu"] = time.process_time() - cpu
    out |= {"nodes": s.nodes, "edges": s.edges}
    t = time.perf_counter()
    repo.index(retrieval_state=False)
    out["noop"] = time.perf_counter() - t
    target = Path(root) / "dj0" / "utils" / "text.py"
    target.write_bytes(target.read_bytes() + b"\n# touched\n")
    t = time.perf_counter()
    s = repo.index(retrieval_state=False)
    out["one"] = time.perf_counter() - t
    out["one_parsed"] = s.files_parsed
    out["rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    out["index_mb"] = repo.graph_db.stat().st_size / 1e6
    print(json.dumps(out))


def main() -> int:
    if sys.argv[1] == "--child":
        child(sys.argv[2], sys.argv[3])
        return 0
    ap = argparse.ArgumentParser()
    ap.add_argument("django_src")
    ap.add_argument("sizes", nargs="+", type=int)
    ap.add_argument("--plot", default=None, help="write a PNG of time/RSS/size vs files")
    ap.add_argument("--keep", default=None, help="synthesise under this dir (kept)")
    args = ap.parse_args()
    print(f"{os.cpu_count()} cores, load avg {os.getloadavg()[0]:.1f}")
    print(
        "files   | cold s | cold CPU s | s/1k files | no-op s | 1-file s | peak RSS MB | "
        "index MB | src MB"
    )
    rows = []
    for size in args.sizes:
        base = Path(args.keep or tempfile.mkdtemp(prefix="ctxfast-scale-")) / f"repo{size}"
        if base.exists():
            shutil.rmtree(base)
        src_bytes = synthesise(Path(args.django_src), base / "src", size)
        p = subprocess.run(
            [sys.executable, __file__, "--child", str(base / "src"), str(base / "idx")],
            check=True,
            capture_output=True,
            text=True,
        )
        r = json.loads(p.stdout.strip().splitlines()[-1])
        r["src_mb"] = src_bytes / 1e6
        rows.append(r)
        print(
            f"{r['files']:7d} | {r['cold']:6.1f} | {r['cold_cpu']:10.1f} | "
            f"{1000 * r['cold'] / r['files']:10.2f} | "
            f"{r['noop']:7.3f} | {r['one']:8.3f} | {r['rss_mb']:11.0f} | "
            f"{r['index_mb']:8.0f} | {r['src_mb']:6.0f}"
        )
        if not args.keep:
            shutil.rmtree(base.parent)
    if args.plot:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        n = [r["files"] for r in rows]
        fig, ax = plt.subplots(1, 3, figsize=(12, 3.5))
        ax[0].plot(n, [r["cold"] for r in rows], "o-", label="cold")
        ax[0].set_title("cold index (s)")
        ax[1].plot(n, [r["noop"] for r in rows], "o-", label="no-op refresh")
        ax[1].plot(n, [r["one"] for r in rows], "s-", label="1-file refresh")
        ax[1].set_title("refresh (s)")
        ax[1].legend()
        ax[2].plot(n, [r["rss_mb"] for r in rows], "o-", label="peak RSS")
        ax[2].plot(n, [r["index_mb"] for r in rows], "s-", label="index")
        ax[2].set_title("MB")
        ax[2].legend()
        for a in ax:
            a.set_xlabel("files")
        fig.tight_layout()
        fig.savefig(args.plot, dpi=90)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
