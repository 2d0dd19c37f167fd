"""Which finished indexes a tree of a batch may start from (``Repository(seed=...)``).

A batch holds many versions of a few repositories, and a new tree's index seeded from the
index of a version sharing most of its files refreshes only the files that differ. The
core picks, among the candidates it is given, the one holding the most of the tree's files
unchanged (by content key, on a sample of the tree) and passes over any it cannot use, so
this side only has to offer the right few: the trees this batch finished, newest first,
then the indexes earlier batches finished under the same ``index_root``.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

from ctxfast.batch.worker import STAMP_NAME

#: At most this many candidates per tree: the core reads a sample lookup from each, so the
#: choice stays cheap beside a build when ``index_root`` holds thousands of indexes.
MAX_CANDIDATES = 32


def finished_under(index_root: str | os.PathLike[str] | None) -> list[str]:
    """The index directories under ``index_root`` that a batch finished (they hold its
    stamp), the most recently finished first; ``[]`` without an ``index_root``."""
    if index_root is None:
        return []
    try:
        stamps = [d / STAMP_NAME for d in Path(index_root).iterdir() if d.is_dir()]
    except OSError:
        return []
    dated = []
    for s in stamps:
        try:
            dated.append((-s.stat().st_mtime_ns, str(s.parent)))
        except OSError:
            continue
    return [d for _, d in sorted(dated)]


class SeedPool:
    """The seed candidates of one batch, shared by the threads that start its trees."""

    def __init__(self, earlier: list[str]) -> None:
        self._lock = threading.Lock()
        self._done: list[str] = []
        self._earlier = earlier

    def finished(self, index_dir: str) -> None:
        """Records a tree of this batch as indexed: the best candidate for the next ones."""
        with self._lock:
            self._done.insert(0, index_dir)

    def candidates(self, index_dir: str) -> list[str]:
        """Up to :data:`MAX_CANDIDATES` index directories for the tree indexed into
        ``index_dir``: this batch's finished trees first, then earlier batches'."""
        with self._lock:
            pool = self._done + self._earlier
        out: list[str] = []
        for d in pool:
            if d != index_dir and d not in out:
                out.append(d)
        return out[:MAX_CANDIDATES]
