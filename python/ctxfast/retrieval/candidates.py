"""Candidates of the retrieval pipeline: raw source hits and merged structural entries."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple


class RawCandidate(NamedTuple):
    """One hit of one recall source, before merging. A named tuple, not a frozen dataclass:
    a query makes about a thousand (most of them line hits), and a frozen dataclass's
    ``__init__`` (a ``setattr`` per field) cost 2–3 µs each."""

    source: str
    term: str
    file: str
    start_line: int
    end_line: int
    qualname: str | None = None
    kind: str = "lines"
    score: float = 0.0


@dataclass
class Candidate:
    """One merged structural entry with its score, provenance and pruned lines."""

    qualname: str | None
    kind: str
    file: str
    start_line: int
    end_line: int
    signature: str
    text: str
    provenance: list[str] = field(default_factory=list)
    score: float = 0.0
    bm25_score: float = 0.0
    kept_lines: list[int] = field(default_factory=list)
    pruned: bool = False
    # The qualname relative to its module ("Class.method"; "<module>" for module-level
    # lines): how benchmarks and humans name a symbol inside a known file.
    symbol: str | None = None
    # The strongest traceback frame inside this entry: 1 / (1 + depth), depth 0 for the
    # innermost frame; 0 when no frame falls here.
    anchor: float = 0.0

    @property
    def sources(self) -> list[str]:
        return list(dict.fromkeys(p.split(":", 1)[0] for p in self.provenance))

    def to_dict(self) -> dict[str, object]:
        return {
            "qualname": self.qualname,
            "kind": self.kind,
            "file": self.file,
            "start_line": self.start_line,
            "end_line": self.end_line,
            "score": self.score,
            "bm25_score": self.bm25_score,
            "provenance": self.provenance,
            "kept_lines": self.kept_lines,
            "signature": self.signature,
            "symbol": self.symbol,
            "pruned": self.pruned,
        }
