"""Indexes one tree of a batch and reports what happened as one JSON record.

The same function runs in a spawned ``python -m ctxfast.batch.worker`` process (local
engine: a crash or an out-of-memory kill costs one tree, and each tree's peak RSS is its own
process's) and inside a Ray task (distributed engine). Success writes a stamp next to the
index so a rerun of the batch can skip the tree without touching it.
"""

from __future__ import annotations

import json
import os
import resource
import sys
import time
import traceback
from pathlib import Path
from typing import Any

#: Written in the index directory after a successful index; see :func:`is_current`.
STAMP_NAME = "batch-stamp.json"

#: The environment variable that caps the Rust thread pool of a worker process (rayon's own).
THREADS_ENV = "RAYON_NUM_THREADS"


def _db_state(db: Path) -> list[int]:
    st = db.stat()
    return [st.st_size, st.st_mtime_ns]


def peak_rss_mb() -> float:
    """Peak resident set size of this process so far (Linux reports KiB, macOS bytes)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1024 * 1024) if sys.platform == "darwin" else peak / 1024


def is_current(root: str, index_dir: str) -> bool:
    """True when ``index_dir`` holds a stamp this ctxfast version wrote for ``root`` and the
    index is still the one it describes (same size and mtime): a finished tree of an
    interrupted batch. It does not look at the tree — a batch over trees that change between
    runs re-indexes them with ``recheck``."""
    from ctxfast._native import __version__
    from ctxfast.repository import GRAPH_DB_NAME

    stamp = Path(index_dir) / STAMP_NAME
    try:
        data = json.loads(stamp.read_text())
        state = _db_state(Path(index_dir) / GRAPH_DB_NAME)
    except (OSError, ValueError):
        return False
    current: bool = (
        data.get("root") == str(Path(root).resolve())
        and data.get("version") == __version__
        and data.get("db") == state
    )
    return current


def index_tree(job: dict[str, Any]) -> dict[str, Any]:
    """Indexes ``job["root"]`` into ``job["index_dir"]``; never raises — a failure is a
    record with ``status: "failed"`` and the error."""
    from ctxfast._native import __version__
    from ctxfast.recon import ParseCache
    from ctxfast.repository import Repository

    t0 = time.perf_counter()
    record: dict[str, Any] = {"root": job["root"], "index_dir": job["index_dir"]}
    try:
        cache = (
            ParseCache(job["cache_dir"], job.get("cache_max_bytes"))
            if job.get("cache_dir")
            else None
        )
        repo = Repository(
            job["root"],
            job["index_dir"],
            max_file_bytes=job["max_file_bytes"],
            parse_cache=cache,
            seed=job.get("seeds") or None,
        )
        s = repo.index()
        record.update(
            status="indexed",
            files_seen=s.files_seen,
            files_parsed=s.files_parsed,
            cache_hits=s.cache_hits,
            nodes=s.nodes,
            edges=s.edges,
            file_errors=len(s.errors),
            index_bytes=repo.graph_db.stat().st_size,
            seeded_from=s.seeded_from,
            seed_note=s.seed_note,
        )
        stamp = {
            "root": str(repo.root),
            "version": __version__,
            "db": _db_state(repo.graph_db),
        }
        (Path(job["index_dir"]) / STAMP_NAME).write_text(json.dumps(stamp))
    except Exception as exc:  # recorded per tree; the batch goes on
        record.update(status="failed", error=f"{type(exc).__name__}: {exc}")
        record["traceback"] = traceback.format_exc(limit=5)
    record["seconds"] = round(time.perf_counter() - t0, 3)
    record["peak_rss_mb"] = round(peak_rss_mb(), 1)
    record["pid"] = os.getpid()
    return record


def main() -> int:
    """``python -m ctxfast.batch.worker``: one JSON job on stdin, one JSON record on stdout."""
    job = json.loads(sys.stdin.read())
    print(json.dumps(index_tree(job)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
