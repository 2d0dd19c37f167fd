"""The no-model ranker: the ranking step answered from retrieval's own evidence.

Without an LLM endpoint, the residue (candidates the gate could not tie to the obligation or
the impact) is still ranked once, deterministically, so the window can use its budget on the
next-best evidence instead of discarding it. It implements the same :class:`Ranker` protocol
as the model ranker and replies in the same strict schema; it makes no model call.

Every residue item retrieval scored is admitted, ranked by its score over the best retrieval
score among the change targets (the evidence the window is built around): relevance
``0.5 + 0.5 × min(1, score / best)``, so the order is retrieval's and the admission threshold
(0.5) lets through exactly what retrieval found. How many of them enter the window is then
the budget's decision — the fill toward the target size, best first — not a threshold's:
measured on the exact-tree Lite instances, a 0.5 × best cut dropped the fix for one instance
in six while the window still had room.
"""

from __future__ import annotations

import json
from collections.abc import Iterable

from ctxfast.construct.ranker import RankRequest
from ctxfast.construct.schema import EvidenceItem


class EvidenceRanker:
    """A deterministic :class:`~ctxfast.construct.ranker.Ranker` over retrieval scores."""

    #: Not a model: ``DecisionContext.model_calls`` does not count it.
    calls_model = False

    def __init__(self, items: Iterable[EvidenceItem], reference: float) -> None:
        self.reference = reference
        self.scores = {it.id: self.relevance(it) for it in items}

    def relevance(self, item: EvidenceItem) -> float:
        score = item.meta.score
        if score is None or score <= 0 or self.reference <= 0:
            return 0.0
        return round(0.5 + 0.5 * min(1.0, score / self.reference), 6)

    def rank(self, request: RankRequest) -> str:
        rankings = [
            {"candidate_id": i, "relevance_score": self.scores.get(i, 0.0)}
            for i in request.candidate_ids
        ]
        return json.dumps({"rankings": rankings})


def reference_score(items: Iterable[EvidenceItem], change_set: Iterable[str]) -> float:
    """The best retrieval score among the change targets (else among all items)."""
    changes = set(change_set)
    scored = [it for it in items if it.meta.score is not None]
    targets = [it.meta.score for it in scored if it.meta.entity in changes]
    pool = targets or [it.meta.score for it in scored]
    return max((s for s in pool if s is not None), default=0.0)


__all__ = ["EvidenceRanker", "reference_score"]
