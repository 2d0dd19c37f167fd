"""``traceback``: the files of the task's traceback frames, the innermost frame (nearest
the error) weighing most: each frame that resolves to a file of the repository adds
1 / (1 + its depth from the innermost).

Why: a traceback names the code the error went through, nearest the error most precisely;
a long trace's outer frames (a test runner, a framework's dispatch) say little.

Measured on SWE-bench Lite: one of the five signals whose plain sum with whole-file BM25 took
file Acc@5 from ≈ .69 (``file_bm25`` alone) to ≈ .81; no figure of its own is recorded.

Settings: switched with the traceback recall source, ``sources.traceback`` (flat name
``traceback``; no ``FileSignals`` field of its own); ``FileSignals.weights["traceback"]``.
"""

from __future__ import annotations

from collections import defaultdict

from ctxfast.retrieval.query import innermost_depths
from ctxfast.retrieval.repoindex import RepoIndex
from ctxfast.retrieval.signals.base import FileSignal, SignalContext
from ctxfast.retrieval.task import TaskQuery


def traceback_files(index: RepoIndex, tq: TaskQuery) -> dict[str, float]:
    """Files of the task's traceback frames, the innermost frame (nearest the error) weighing
    most."""
    query = tq.query
    tb: dict[str, float] = defaultdict(float)
    for frame, depth in zip(query.frames, innermost_depths(query.frames), strict=True):
        path = index.resolve_frame(frame.path, frame.func)
        if path is not None:
            tb[path] += 1.0 / (1 + depth)
    return tb


def _measure(ctx: SignalContext) -> dict[str, float]:
    return traceback_files(ctx.index, ctx.tq)


SIGNAL = FileSignal("traceback", "traceback", _measure)
