"""``path_mentions``: files whose path (or file name) the task prints, one point per
mention that resolves to a file of the repository.

Why: a path written out in an issue (``django/db/models/query.py``, a file name in a log
line) names the file outright.

Measured on SWE-bench Lite: one of the five signals whose plain sum with whole-file BM25 took
file Acc@5 from ≈ .69 (``file_bm25`` alone) to ≈ .81. Switched off alone (stop 65, same run,
tasks with every gold file first / in the first five / a gold function in the first ten):
issue corpus half A 60/95/56 → 59/95/56, half B 67/106/64 → 66/106/64, Lite 88/118/85 →
86/118/83, the PHP/Ruby and JS/TS sets unchanged: few tasks print a path, and those that do
mostly rank the file first by other words too.

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
