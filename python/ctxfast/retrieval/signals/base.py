"""What a file signal is: a name, the setting that switches it, and a measure of the task
against the repository's files (raw per-file scores, normalised to [0, 1] by the scorer).

Nothing here imports ``localize``: it imports the signals, which read the definition index
through :class:`DefinitionSearch` (``localize.DefinitionBM25`` is one).
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from operator import itemgetter
from typing import TYPE_CHECKING, Protocol

from ctxfast import settings
from ctxfast.retrieval.deftable import Definitions
from ctxfast.retrieval.literals import LiteralIndex, LiteralMatch
from ctxfast.retrieval.repoindex import RepoIndex
from ctxfast.retrieval.task import TaskQuery

if TYPE_CHECKING:
    from ctxfast.retrieval.config import RetrievalConfig


class DefinitionSearch(Protocol):
    """BM25 over the repository's definitions (``localize.DefinitionBM25``)."""

    @property
    def defs(self) -> Definitions: ...

    def search(
        self, terms: list[str], k: int, *, candidates: bool = False
    ) -> list[tuple[int, float]]: ...


@dataclass(frozen=True)
class SignalContext:
    """What the file signals read for one task: the repository's index, its definition
    index (``None`` with ``def_bm25`` off), the parsed task, the settings, and the literal
    index with the literals the task quotes (``None`` and empty with both literal signals
    off)."""

    index: RepoIndex
    def_index: DefinitionSearch | None
    tq: TaskQuery
    cfg: RetrievalConfig
    literal_index: LiteralIndex | None = None
    quoted_literals: Sequence[LiteralMatch] = ()


def _on(cfg: RetrievalConfig, flat_name: str) -> bool:
    """Whether the setting ``flat_name`` switches its stage on: true, or a positive share."""
    value = settings.flat_value(cfg, flat_name)
    return bool(value > 0)


@dataclass(frozen=True)
class FileSignal:
    """One file signal of ``localize.file_scores``: its ``measure`` gives each file's raw
    score (``None`` when the task or the index lacks what it reads), which the scorer
    normalises by the best file and adds with ``cfg.files.weights[name]`` (1.0 if unset)."""

    #: Its key in ``RetrievalResult.signals`` and its learned-ranker column.
    name: str
    #: The flat name of the setting that switches it on and off (``RetrievalConfig.files``,
    #: but ``traceback``'s is the recall source's own switch, ``sources.traceback``).
    switch: str
    measure: Callable[[SignalContext], Mapping[str, float] | None]

    def enabled(self, cfg: RetrievalConfig) -> bool:
        return _on(cfg, self.switch)

    def weight(self, cfg: RetrievalConfig) -> float:
        """Its weight in the hand-set sum."""
        return cfg.files.weights.get(self.name, 1.0)

    def score(self, ctx: SignalContext) -> Mapping[str, float] | None:
        """Each file's raw score (before normalisation); ``None`` when switched off or not
        measurable for this task."""
        return self.measure(ctx) if self.enabled(ctx.cfg) else None


@dataclass(frozen=True)
class Lender:
    """A score one file lends another, read from the totals of the direct signals (so it
    runs after they are summed): ``lend`` gives each receiving file the score it is lent,
    added with the weight set by the setting ``weight_setting``."""

    name: str
    #: The flat name of the setting that switches it (a bool, or a share: on when positive).
    switch: str
    #: The flat name of the setting holding its weight (may be the switch itself).
    weight_setting: str
    lend: Callable[[RepoIndex, Mapping[str, float], RetrievalConfig], dict[str, float]]

    def enabled(self, cfg: RetrievalConfig) -> bool:
        return _on(cfg, self.switch)

    def weight(self, cfg: RetrievalConfig) -> float:
        """Its weight in the hand-set sum."""
        weight: float = settings.flat_value(cfg, self.weight_setting)
        return weight


def normalise(scores: Mapping[str, float]) -> dict[str, float]:
    """``scores`` over the best one, files scoring 0 left out; empty when none is positive."""
    top = max(scores.values(), default=0.0)
    return {f: s / top for f, s in scores.items() if s > 0} if top > 0 else {}


def best_first(scores: Mapping[str, float]) -> list[tuple[str, float]]:
    """``scores``' items best first, ties by key: the order of sorting by ``(-score, key)``,
    made by two sorts that compare in C (by key, then stably by score) instead of a Python
    key call per item. Retrieval ranks every scored file (≈1,300 on Django) several times
    a query."""
    ranked = sorted(scores.items())
    ranked.sort(key=itemgetter(1), reverse=True)
    return ranked


def best_n(scores: Mapping[str, float], n: int) -> list[tuple[str, float]]:
    """The first ``n`` items of :func:`best_first`, sorting only those that can be among
    them: the ones scoring at least the ``n``-th best score (found by ``heapq.nlargest``)."""
    if n <= 0 or not scores:
        return []
    floor = heapq.nlargest(n, scores.values())[-1]
    return best_first({key: s for key, s in scores.items() if s >= floor})[:n]
