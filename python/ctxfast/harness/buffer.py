"""A rolling conversation buffer whose summary is a function of what fell out of it."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Turn:
    role: str
    content: str


Summarizer = Callable[[list[Turn]], str]


class RollingBuffer:
    """Keeps the last ``buffer_size`` turns; evicted turns are logged and summarised.

    With ``incremental=False`` the summary is recomputed from the whole eviction log on every
    eviction (a pure function of the log, O(E²) over a session). With ``incremental=True`` the
    previous summary and the newly evicted turn are folded together (O(E)), trading exact
    reproducibility from the log for cost.
    """

    def __init__(self, buffer_size: int, summarizer: Summarizer, incremental: bool = False):
        if buffer_size < 1:
            raise ValueError("buffer_size must be at least 1")
        self.buffer_size = buffer_size
        self.summarizer = summarizer
        self.incremental = incremental
        self.buffer: deque[Turn] = deque()
        self._evicted: list[Turn] = []
        self.summary = ""

    @property
    def evicted(self) -> list[Turn]:
        return list(self._evicted)

    def add_turn(self, turn: Turn) -> None:
        self.buffer.append(turn)
        while len(self.buffer) > self.buffer_size:
            old = self.buffer.popleft()
            self._evicted.append(old)
            if self.incremental:
                folded = [Turn("summary", self.summary), old] if self.summary else [old]
                self.summary = self.summarizer(folded)
            else:
                self.summary = self.summarizer(list(self._evicted))

    def turns(self) -> list[Turn]:
        return list(self.buffer)


__all__ = ["RollingBuffer", "Summarizer", "Turn"]
