"""The file signals: one module each, registered in one ordered list.

Every piece of evidence that a file is what the task is about is a :class:`FileSignal` of
its own module (its docstring says what it measures, why, what it was measured to do and
which ``FileSignals`` settings it reads). ``localize.file_scores`` measures each one enabled,
normalises it to [0, 1] per task and adds it with its weight, in the order of
:data:`FILE_SIGNALS`; then each :data:`LENDERS` entry lends scores between files, reading
those totals. The learned ranker reads the same signals as its first file columns
(:data:`COLUMNS`, ``features.SIGNALS``) and ``eval.train_ranker.hand_prior`` reads the
hand-set weights over those columns from here (:func:`hand_weights`), so the two rankers
read one list.

To add a signal: a module with a ``FileSignal``, its switch in ``FileSignals``, an entry
here in both lists (a new column goes last in :data:`COLUMNS`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ctxfast.retrieval.signals import (
    def_bm25,
    definition_match,
    file_bm25,
    goal,
    lending,
    literals,
    path_mentions,
    path_words,
    platform_code,
    traceback,
)
from ctxfast.retrieval.signals.base import (
    DefinitionSearch,
    FileSignal,
    Lender,
    SignalContext,
    best_first,
    best_n,
    normalise,
)

if TYPE_CHECKING:
    from ctxfast.retrieval.config import RetrievalConfig

__all__ = [
    "COLUMNS",
    "FILE_SIGNALS",
    "LENDERS",
    "DefinitionSearch",
    "FileSignal",
    "Lender",
    "SignalContext",
    "best_first",
    "best_n",
    "hand_weights",
    "normalise",
]

#: The direct file signals, in the order their weighted scores are added to a file's total
#: (the order fixes the floating-point sum, and ``RetrievalResult.signals``' key order).
FILE_SIGNALS: tuple[FileSignal, ...] = (
    file_bm25.SIGNAL,
    definition_match.SIGNAL,
    path_mentions.SIGNAL,
    def_bm25.SIGNAL,
    goal.GOAL_BM25,
    goal.GOAL_DEF_BM25,
    path_words.SIGNAL,
    traceback.SIGNAL,
    literals.LITERALS,
    literals.LITERAL_NAMES,
    platform_code.SIGNAL,
)

#: What files lend one another once the direct signals are summed, in order (each reads the
#: totals so far).
LENDERS: tuple[Lender, ...] = (lending.TESTED_MODULES, lending.INCLUDED)

#: Every signal and lender by name, in the order they became the learned ranker's file
#: columns (``features.SIGNALS``): training rows cached without their column names are read
#: by position (``eval.train_ranker.ADDED_COLUMNS``), so a column keeps its place and a new
#: one goes last.
COLUMNS: tuple[str, ...] = tuple(
    s.name
    for s in (
        file_bm25.SIGNAL,
        definition_match.SIGNAL,
        path_mentions.SIGNAL,
        def_bm25.SIGNAL,
        path_words.SIGNAL,
        traceback.SIGNAL,
        literals.LITERALS,
        lending.TESTED_MODULES,
        literals.LITERAL_NAMES,
        goal.GOAL_BM25,
        goal.GOAL_DEF_BM25,
        platform_code.SIGNAL,
        lending.INCLUDED,
    )
)


def hand_weights(cfg: RetrievalConfig) -> dict[str, float]:
    """The hand-set fusion's weight of each column of :data:`COLUMNS` under ``cfg``: a
    signal's ``files.weights`` entry (1.0 if unset), a lender's share."""
    entries: tuple[FileSignal | Lender, ...] = (*FILE_SIGNALS, *LENDERS)
    by_name = {s.name: s for s in entries}
    return {name: by_name[name].weight(cfg) for name in COLUMNS}
