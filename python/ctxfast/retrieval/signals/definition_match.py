"""``definition_match``: files defining an identifier the task's text names, weighted by
the identifier's rarity: its one point is shared among the files defining it, so a name
defined in one file points at that file alone.

Why: a task names the code it is about (``QuerySet.defer()``), and the file defining that
name is where its behaviour is written, whatever else the task's prose shares with other
files.

Measured on SWE-bench Lite: one of the five signals whose plain sum with whole-file BM25 took
file Acc@5 from ≈ .69 (``file_bm25`` alone) to ≈ .81. Switched off alone (stop 65, same run,
tasks with every gold file first / in the first five / a gold function in the first ten):
issue corpus half A 60/95/56 → 57/95/58 and half B 67/106/64 → 64/104/61, Lite's 140 exact
trees 88/118/85 → 82/119/87, PHP/Ruby 12/26/19 → 10/26/19 and 22/39/25 → 25/39/26, JS/TS
10/28/20 → 12/29/21: the files Python tasks name first, at a cost to PHP and JS/TS tasks,
whose class and function names recur across many files.

Settings (``FileSignals``): ``definition_match`` switches it; ``weights["definition_match"]``.
"""

from __future__ import annotations

from collections import defaultdict

from ctxfast.retrieval.repoindex import RepoIndex
from ctxfast.retrieval.signals.base import FileSignal, SignalContext
from ctxfast.retrieval.task import TaskQuery


def definition_match(index: RepoIndex, tq: TaskQuery) -> dict[str, float]:
    """Per file, the identifiers of the task's text it defines, each one's point shared
    among the files defining it."""
    dm: dict[str, float] = defaultdict(float)
    for ident in tq.text_identifiers:
        defs = index.defs_by_name.get(ident, [])
        files = {d.file for d in defs}
        for f in files:
            dm[f] += 1.0 / len(files)
    return dm


def _measure(ctx: SignalContext) -> dict[str, float]:
    return definition_match(ctx.index, ctx.tq)


SIGNAL = FileSignal("definition_match", "definition_match", _measure)
