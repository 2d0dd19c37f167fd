"""``traceback``: the files of the task's traceback frames, the innermost frame (nearest
the error) weighing most: each frame that resolves to a file of the repository adds
1 / (1 + its depth from the innermost).

Why: a traceback names the code the error went through, nearest the error most precisely;
a long trace's outer frames (a test runner, a framework's dispatch) say little.

Measured on SWE-bench Lite: one of the five signals whose plain sum with whole-file BM25 took
file Acc@5 from ≈ .69 (``file_bm25`` alone) to ≈ .81. Switched off with its recall source
(stop 65, same run, tasks with every gold file first / in the first five / a gold function in
the first ten): issue corpus half A 60/95/56 → 61/95/56, half B 67/106/64 → 66/106/61, Lite
88/118/85 → 88/118/84, PHP/Ruby set A 12 → 11 first: the files move little (a frame's file
is usually named by other evidence too); the frames' definitions are what it adds.

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
