"""The distributed engine of ``index_many``: one Ray task per tree.

Install with ``pip install 'ctxfast[ray]'``. Every node must see the trees, the index
directories and the parse cache directory at the same paths (a shared filesystem); the
cache is a WAL SQLite file, so tasks on one host share it safely. ``index_many`` connects
with ``ray.init(address=ray_address)`` — e.g. ``"auto"`` or ``"ray://head:10001"`` for an
existing cluster — unless Ray is already initialised in the calling process; with neither it
starts a local Ray.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from ctxfast.batch.worker import THREADS_ENV, index_tree


def _task(job: dict[str, Any], threads: int) -> dict[str, Any]:
    # Ray reuses worker processes; the cap takes effect before the first index builds the
    # Rust thread pool, and every task of a batch asks for the same cap.
    os.environ[THREADS_ENV] = str(threads)
    return index_tree(job)


def run_ray(
    jobs: list[dict[str, Any]],
    threads_per_worker: int,
    address: str | None,
    done: Callable[[dict[str, Any]], None],
) -> None:
    """Submits every job, then reports each record as its task finishes; a task that dies
    (its worker killed) is a failed record like any other."""
    import ray

    if not ray.is_initialized():
        ray.init(address=address) if address else ray.init()
    remote = ray.remote(num_cpus=threads_per_worker, max_retries=0)(_task)
    pending = {remote.remote(j, threads_per_worker): j for j in jobs}
    while pending:
        ready, _ = ray.wait(list(pending), num_returns=1)
        for ref in ready:
            job = pending.pop(ref)
            try:
                record = ray.get(ref)
            except Exception as exc:  # a lost worker or task
                record = {
                    "root": job["root"],
                    "index_dir": job["index_dir"],
                    "status": "failed",
                    "error": f"{type(exc).__name__}: {exc}",
                }
            done(record)
