"""``path_mentions``: files whose path (or file name) the task prints, one point per
mention that resolves to a file of the repository.

Why: a path written out in an issue (``django/db/models/query.py``, a file name in a log
line) names the file outright.

Measured on SWE-bench Lite: one of the five signals whose plain sum with whole-file BM25 took
file Acc@5 from ≈ .69 (``file_bm25`` alone) to ≈ .81; no figure of its own is recorded.

Settings (``FileSignals``): ``path_mentions`` switches it; ``weights["path_mentions"]``. What
counts as a printed path is the query's (``query.file_paths``).
"""

from __future__ import annotations

from collections import defaultdict

from ctxfast.retrieval.repoindex import RepoIndex
from ctxfast.retrieval.signals.base import FileSignal, SignalContext
from ctxfast.retrieval.task import TaskQuery


def path_mentions(index: RepoIndex, tq: TaskQuery) -> dict[str, float]:
    """Files whose path the task prints, one point per mention that resolves to a file."""
    pm: dict[str, float] = defaultdict(float)
    for printed in tq.query.file_paths:
        path = index.resolve_path(printed)
        if path is not None:
            pm[path] += 1.0
    return pm


def _measure(ctx: SignalContext) -> dict[str, float]:
    return path_mentions(ctx.index, ctx.tq)


SIGNAL = FileSignal("path_mentions", "path_mentions", _measure)
