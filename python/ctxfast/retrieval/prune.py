"""Goal-scoped line prune: keep the lines that serve the goal, whole lines only.

Each line scores the identifier-weighted BM25/IDF contribution of its tokens against the goal
terms; a line survives iff its score ≥ τ·max (τ = 0.6), the signature line always survives,
retained lines extend to their whole statement, and a candidate whose best line is below the
absolute floor (1e-3) is dropped from the slice whole.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar

from ctxfast.bm25 import BM25Index, tokenize_code
from ctxfast.retrieval.candidates import Candidate
from ctxfast.retrieval.repoindex import RepoIndex


@dataclass(frozen=True)
class PruneSettings:
    """The line prune of retrieval's own slice (``RetrievalConfig.prune``): which lines of
    each candidate the slice shows. A window (``compose``) shows code its own way and does
    not read these."""

    FLAT_NAMES: ClassVar[Mapping[str, str]] = {"enabled": "prune"}

    #: Show only the lines of each candidate that serve the task's goal (whole statements,
    #: the signature always); off shows every line, up to the token cap.
    enabled: bool = True
    #: A line is kept when it scores at least this share (0.6) of the candidate's best line:
    #: the lines that carry the goal's words, not every line sharing one of them.
    tau: float = 0.6
    #: A candidate whose best line scores below this (0.001: no goal word at all) is dropped
    #: from the slice whole.
    line_floor: float = 1e-3


def line_scores(lines: list[str], goal_terms: set[str], ix: BM25Index) -> list[float]:
    """Each line's summed ``idf × weight`` of the goal terms it holds (0 for none). The
    weights are looked up once per goal term, not once per line holding it."""
    weight = {t: (ix.idf(t) or 0.0) * ix.term_weight(t) for t in goal_terms}
    return [sum(map(weight.__getitem__, _line_tokens(line) & goal_terms)) for line in lines]


@functools.lru_cache(maxsize=1 << 16)
def _line_tokens(line: str) -> frozenset[str]:
    """A line's distinct tokens, remembered: the prune scores the lines of every query's
    top candidates, mostly the same definitions query after query. A frozenset made from
    the token list is laid out as the set was, so the intersection (and the order the
    score is summed in) is the one ``set(tokenize_code(line))`` gave."""
    return frozenset(tokenize_code(line))


def prune_candidate(
    cand: Candidate,
    index: RepoIndex,
    goal_terms: set[str],
    ix: BM25Index,
    tau: float,
    floor: float,
) -> None:
    lines = index.lines(cand.file)[cand.start_line - 1 : cand.end_line]
    if not lines:
        cand.kept_lines, cand.pruned = [], True
        return
    scores = line_scores(lines, goal_terms, ix)
    best = max(scores)
    if best < floor:
        cand.kept_lines, cand.pruned = [], True
        return
    keep: set[int] = set()
    for offset, s in enumerate(scores):
        if s >= tau * best:
            start = cand.start_line + offset
            end = min(index.statement_end(cand.file, start), cand.end_line)
            keep.update(range(start, end + 1))
    if cand.signature or cand.qualname:
        keep.add(cand.start_line)  # the signature line always survives
    cand.kept_lines = sorted(keep)
