"""Intent routing with two gates: a score threshold and a top-two margin.

``argmax`` always dispatches, so a tie is decided by a coin flip. The margin gate makes a
confident tie a refusal (``fallback=True``), which is what a workflow collision really is.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from ctxfast.text import lower_words


def bag_of_words(text: str) -> Counter[str]:
    """Lower-cased word counts (letters, digits, underscore, apostrophe)."""
    return Counter(lower_words(text))


@dataclass(frozen=True)
class RouteDecision:
    """``intent`` is ``None`` when the router falls back; ``reason`` says which gate fired."""

    intent: str | None
    score: float
    second: float
    fallback: bool
    reason: str


class IntentRouter:
    """Routes a query to the prototype with the highest bag-of-words cosine similarity."""

    def __init__(
        self,
        prototypes: Mapping[str, Iterable[str]],
        threshold: float = 0.3,
        margin: float = 0.05,
    ) -> None:
        if not prototypes:
            raise ValueError("IntentRouter needs at least one prototype")
        self.prototypes = {name: Counter(set(words)) for name, words in prototypes.items()}
        self.threshold = threshold
        self.margin = margin

    @staticmethod
    def _cosine(q: Counter[str], p: Counter[str]) -> float:
        dot = sum(v * p[k] for k, v in q.items() if k in p)
        if dot == 0:
            return 0.0
        qn = math.sqrt(sum(v * v for v in q.values()))
        pn = math.sqrt(sum(v * v for v in p.values()))
        return dot / (qn * pn)

    def scores(self, query: str) -> list[tuple[str, float]]:
        """Every intent with its score, sorted by (-score, name): deterministic on ties."""
        q = bag_of_words(query)
        scored = [(name, self._cosine(q, p)) for name, p in self.prototypes.items()]
        return sorted(scored, key=lambda item: (-item[1], item[0]))

    def route(self, query: str) -> RouteDecision:
        scored = self.scores(query)
        top_name, top = scored[0]
        second = scored[1][1] if len(scored) > 1 else 0.0
        if top < self.threshold:
            return RouteDecision(None, top, second, True, "below_threshold")
        if second > 0.0 and top - second < self.margin:
            return RouteDecision(None, top, second, True, "ambiguous_tie")
        return RouteDecision(top_name, top, second, False, "match")


__all__ = ["IntentRouter", "RouteDecision", "bag_of_words"]
