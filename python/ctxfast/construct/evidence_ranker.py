"""The no-model ranker: the §4 ranking step answered from retrieval's own evidence.

Without an LLM endpoint, the residue (candidates the gate could not tie to the obligation or
the impact) is still ranked once, deterministically, so the window can use its budget on the
next-best evidence instead of discarding it. It implements the same :class:`Ranker` protocol
as the model ranker and replies in the same strict schema; it makes no model call.

An item's relevance is its retrieval score over the best retrieval score among the change
targets (the evidence the window is built around), clipped to [0, 1]: a candidate half as
strong as the target scores 0.5, which is exactly the admission threshold.
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
        if score is None or self.reference <= 0:
            return 0.0
        return round(min(1.0, max(0.0, score / self.reference)), 6)

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
