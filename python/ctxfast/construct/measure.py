"""Exact token counts of the window's text, with a cache of each block's own count.

The fill prices each candidate by its own token count and the eviction ladder re-measures
after every change; both read the same cache, so a text is counted once. It is its own
module so that the budget stage and the ladder share it without importing each other.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ctxfast.tokens import count_tokens, count_tokens_batch

if TYPE_CHECKING:
    from ctxfast.construct.config import ConstructConfig


class Measure:
    """Exact measurement with a per-entry token cache (for balancing and quick rejection)."""

    def __init__(self, config: ConstructConfig, ceiling: int) -> None:
        self.config = config
        self.ceiling = ceiling
        self.cache: dict[str, int] = {}

    def sizes(self, texts: Sequence[str]) -> list[int]:
        missing = [t for t in dict.fromkeys(texts) if t not in self.cache]
        if missing:
            for t, n in zip(
                missing, count_tokens_batch(missing, self.config.encoding), strict=True
            ):
                self.cache[t] = n
        return [self.cache[t] for t in texts]

    def exact(self, text: str) -> int:
        return count_tokens(text, self.config.encoding)


__all__ = ["Measure"]
