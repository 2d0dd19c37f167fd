"""``goal_bm25`` and ``goal_def_bm25``: the task's goal sentence (an issue's title, a
commit's subject: ``query.goal_hint``) as a query of its own, when the task says more than
it: whole-file BM25 (as ``file_bm25``) and definition-level BM25, best three definitions
summed (as ``def_bm25``), of the goal's words.

Why: the body of an issue is mostly evidence (code, output, versions) whose words point at
every file its example touches; the title names the behaviour that is wrong.

Measured on the 296 scorable SWE-bench Lite instances, both signals at weight 1: file
Acc@1/5 .524/.814 → .622/.855 (each alone: .591/.838 and .598/.828; weights 0.5 and 2
measured lower, 1.5 about the same); the 200-task languages set .420/.715 → .420/.725
(benches/README.md, "The goal sentence as a query of its own (issue 17)").

Settings (``FileSignals``): ``goal_signals`` switches both (it also gates the candidates'
``rerank.goal_candidate_weight``); ``def_bm25_top``; ``goal_def_bm25`` needs the definition
index (``def_bm25`` on); ``weights["goal_bm25"]``, ``weights["goal_def_bm25"]``.
"""

from __future__ import annotations

from ctxfast.retrieval.signals.base import FileSignal, SignalContext
from ctxfast.retrieval.signals.def_bm25 import best_definitions
from ctxfast.retrieval.signals.file_bm25 import whole_file_scores


def _goal_bm25(ctx: SignalContext) -> dict[str, float] | None:
    if not ctx.tq.goal_terms:
        return None
    return whole_file_scores(ctx.index, list(ctx.tq.goal_terms))


def _goal_def_bm25(ctx: SignalContext) -> dict[str, float] | None:
    if not ctx.tq.goal_terms or ctx.def_index is None:
        return None
    return best_definitions(ctx.def_index, list(ctx.tq.goal_terms), ctx.cfg.files.def_bm25_top)


GOAL_BM25 = FileSignal("goal_bm25", "goal_signals", _goal_bm25)
GOAL_DEF_BM25 = FileSignal("goal_def_bm25", "goal_signals", _goal_def_bm25)
