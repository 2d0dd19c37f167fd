"""Batch indexing of many trees: ``index_many`` and ``ctxfast index-many LIST_FILE``.

Benchmark harnesses index hundreds of trees that are versions of a few repositories. Each
tree is one job: ``local`` runs each in its own spawned process (``workers`` at a time), so a
crash or an out-of-memory kill fails one tree and the batch goes on; ``ray`` runs one Ray
task per tree on whatever cluster ``ray.init`` reaches (see :mod:`ctxfast.batch.ray_engine`).
Every worker shares one parse cache directory, so a file seen in any earlier tree is not
parsed again, and a tree without an index starts from the finished index sharing the most
of its files (:mod:`ctxfast.batch.seeds`), so only the files that differ are parsed,
resolved and written. A rerun skips the trees whose index a previous run finished (a stamp next to
the index), so an interrupted batch resumes where it stopped. The result is a JSON-ready
summary with one record per tree.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ctxfast.batch.seeds import SeedPool, finished_under
from ctxfast.batch.worker import THREADS_ENV, is_current
from ctxfast.errors import InvalidArgumentError
from ctxfast.recon.parse_cache import user_cache_dir
from ctxfast.repository import DEFAULT_INDEX_DIRNAME, DEFAULT_MAX_FILE_BYTES

#: Concurrent trees unless configured (one per core on the 2-core machines this targets).
DEFAULT_WORKERS = 2
#: Rust threads per tree unless configured: trees, not threads, are the parallel unit.
DEFAULT_THREADS_PER_WORKER = 1
ENGINES = ("local", "ray")

__all__ = [
    "DEFAULT_THREADS_PER_WORKER",
    "DEFAULT_WORKERS",
    "ENGINES",
    "BatchSummary",
    "Tree",
    "index_many",
    "read_list_file",
]


@dataclass(frozen=True)
class Tree:
    """One tree of a batch: its root and where its index goes."""

    root: str
    index_dir: str


@dataclass
class BatchSummary:
    """What one batch did; ``results`` has one record per tree (``status`` is ``indexed``,
    ``skipped`` or ``failed``; failures carry ``error``)."""

    engine: str
    workers: int
    threads_per_worker: int
    cache_dir: str | None
    seconds: float
    results: list[dict[str, Any]] = field(default_factory=list)

    def count(self, status: str) -> int:
        return sum(r["status"] == status for r in self.results)

    def to_json(self) -> dict[str, Any]:
        done = [r for r in self.results if r["status"] == "indexed"]
        return {
            "engine": self.engine,
            "workers": self.workers,
            "threads_per_worker": self.threads_per_worker,
            "cache_dir": self.cache_dir,
            "trees": len(self.results),
            "indexed": len(done),
            "skipped": self.count("skipped"),
            "failed": self.count("failed"),
            "seconds": round(self.seconds, 3),
            "trees_per_minute": round(60 * len(done) / self.seconds, 2) if self.seconds else 0,
            "files_parsed": sum(r["files_parsed"] for r in done),
            "cache_hits": sum(r["cache_hits"] for r in done),
            "seeded": sum(bool(r.get("seeded_from")) for r in done),
            "peak_rss_mb_max": max((r["peak_rss_mb"] for r in done), default=0),
            "results": self.results,
        }


def default_index_dir(root: str | os.PathLike[str], index_root: str | os.PathLike[str]) -> str:
    """``index_root/<name>-<hash of the absolute root>``: distinct for every tree, stable
    across reruns, readable."""
    r = Path(root).resolve()
    digest = hashlib.sha256(str(r).encode()).hexdigest()[:12]
    return str(Path(index_root) / f"{r.name}-{digest}")


def _as_tree(t: Tree | str | os.PathLike[str], index_root: str | None) -> Tree:
    if isinstance(t, Tree):
        return t
    root = str(t)
    if index_root is None:
        return Tree(root, str(Path(root) / DEFAULT_INDEX_DIRNAME))
    return Tree(root, default_index_dir(root, index_root))


def read_list_file(path: str | os.PathLike[str], index_root: str | None = None) -> list[Tree]:
    """Trees listed one per line as ``ROOT`` or ``ROOT<TAB>INDEX_DIR``; blank lines and lines
    starting with ``#`` are skipped; relative paths are relative to the list file."""
    base = Path(path).resolve().parent
    out = []
    for line in Path(path).read_text().splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        parts = line.split("\t")
        root = str(base / parts[0])
        if len(parts) > 1 and parts[1].strip():
            out.append(Tree(root, str(base / parts[1].strip())))
        else:
            out.append(_as_tree(root, index_root))
    return out


def _run_local_job(
    job: dict[str, Any], threads: int, timeout: float | None, seeds: SeedPool | None
) -> dict[str, Any]:
    """One tree in a spawned interpreter; a crash, a kill or a timeout is a failed record.
    The seed candidates are taken when the tree starts, so every tree finished by then is
    one (recorded here, by the thread that ran it, before the next job can start)."""
    if seeds is not None:
        job = {**job, "seeds": seeds.candidates(job["index_dir"])}
    record = _spawn_job(job, threads, timeout)
    if seeds is not None and record["status"] == "indexed":
        seeds.finished(record["index_dir"])
    return record


def _spawn_job(job: dict[str, Any], threads: int, timeout: float | None) -> dict[str, Any]:
    env = dict(os.environ, **{THREADS_ENV: str(threads)})
    try:
        p = subprocess.run(
            [sys.executable, "-m", "ctxfast.batch.worker"],
            input=json.dumps(job),
            capture_output=True,
            text=True,
            env=env,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        return {**_job_tree(job), "status": "failed", "error": f"timed out after {timeout}s"}
    lines = p.stdout.strip().splitlines()
    if p.returncode != 0 or not lines:
        tail = p.stderr.strip().splitlines()[-5:]
        return {
            **_job_tree(job),
            "status": "failed",
            "error": f"worker exited with {p.returncode}: " + " | ".join(tail),
        }
    return dict(json.loads(lines[-1]))


def _job_tree(job: dict[str, Any]) -> dict[str, Any]:
    return {"root": job["root"], "index_dir": job["index_dir"]}


def index_many(
    trees: Iterable[Tree | str | os.PathLike[str]],
    *,
    workers: int = DEFAULT_WORKERS,
    threads_per_worker: int = DEFAULT_THREADS_PER_WORKER,
    cache_dir: str | os.PathLike[str] | None = None,
    no_cache: bool = False,
    cache_max_bytes: int | None = None,
    engine: str = "local",
    index_root: str | os.PathLike[str] | None = None,
    recheck: bool = False,
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES,
    seed: bool = True,
    tree_timeout_s: float | None = None,
    ray_address: str | None = None,
    progress: bool | None = None,
    on_result: Callable[[dict[str, Any]], None] | None = None,
) -> BatchSummary:
    """Indexes every tree (a :class:`Tree`, or a root whose index goes to
    ``index_root/<name>-<hash>`` — ``<root>/.ctxfast`` without ``index_root``).

    ``cache_dir`` is the shared parse cache (default: the per-user cache directory;
    ``no_cache`` turns it off). Trees a previous run finished are skipped unless ``recheck``
    (then their index is refreshed incrementally). With ``seed`` (the default) a tree
    without an index starts from the finished index — of this batch, or found under
    ``index_root`` — sharing the most of its files, and is refreshed from there; its record
    names it (``seeded_from``) or says why none was used (``seed_note``). The graph is the
    one a cold build gives either way. ``engine="ray"`` runs one Ray task per tree,
    connecting to ``ray_address`` (or the already-initialised / a new local Ray); its tasks
    are offered only the indexes finished before the batch started.
    ``progress`` shows a bar over trees on stderr (default: when stderr is a terminal);
    ``on_result`` sees each record as it arrives.
    """
    if engine not in ENGINES:
        raise InvalidArgumentError(f"engine must be one of {ENGINES}, not {engine!r}")
    if workers < 1 or threads_per_worker < 1:
        raise InvalidArgumentError("workers and threads_per_worker must be at least 1")
    root_dir = None if index_root is None else str(index_root)
    todo: Sequence[Tree] = [_as_tree(t, root_dir) for t in trees]
    cache = None if no_cache else str(Path(cache_dir) if cache_dir else user_cache_dir() / "parse")
    t0 = time.perf_counter()
    summary = BatchSummary(engine, workers, threads_per_worker, cache, 0.0)
    seeds = SeedPool(finished_under(index_root)) if seed else None
    jobs: list[dict[str, Any]] = []
    for t in todo:
        if not recheck and is_current(t.root, t.index_dir):
            summary.results.append({"root": t.root, "index_dir": t.index_dir, "status": "skipped"})
            continue
        jobs.append(
            {
                "root": t.root,
                "index_dir": t.index_dir,
                "cache_dir": cache,
                "cache_max_bytes": cache_max_bytes,
                "max_file_bytes": max_file_bytes,
            }
        )

    from tqdm import tqdm

    on = sys.stderr.isatty() if progress is None else progress
    with tqdm(total=len(jobs), desc="trees", unit="tree", disable=not on, file=sys.stderr) as bar:

        def done(record: dict[str, Any]) -> None:
            summary.results.append(record)
            bar.update(1)
            bar.set_postfix(failed=summary.count("failed"), refresh=False)
            if on_result is not None:
                on_result(record)

        if engine == "ray":
            from ctxfast.batch.ray_engine import run_ray

            if seeds is not None:
                jobs = [{**j, "seeds": seeds.candidates(j["index_dir"])} for j in jobs]
            run_ray(jobs, threads_per_worker, ray_address, done)
        else:
            with ThreadPoolExecutor(max_workers=workers) as pool:
                futures = [
                    pool.submit(_run_local_job, j, threads_per_worker, tree_timeout_s, seeds)
                    for j in jobs
                ]
                for f in as_completed(futures):
                    done(f.result())
    summary.seconds = time.perf_counter() - t0
    return summary
