"""Rank rules: after the re-rank, place what the best candidates imply but nothing in the
task names — the module header of the best file, and a second file when one file fills the
first ranks.

Each rule moves or inserts one candidate at a fixed rank with the score of the one before
it, so the list stays sorted, and says why in that candidate's provenance. The header is no
definition the scorer could weigh (the module's own lines, built here), and the second file
is a statement about the whole list, not about one candidate, so neither is a feature
column. Rules that were measured to place nothing that mattered on the issue corpus and on
SWE-bench Lite (operator and protocol twins, a shared base class, the enclosing class and
constructor, the whole-file BM25 floor) were removed; ``benches/README.md`` has the figures.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from ctxfast.retrieval.candidates import Candidate
from ctxfast.retrieval.repoindex import RepoIndex

if TYPE_CHECKING:
    from ctxfast.retrieval.config import RetrievalConfig


@dataclass(frozen=True)
class RankRules:
    """The rank rules (``RetrievalConfig.rules``); a rank is 1-based, 0 switches a rule off."""

    FLAT_NAMES: ClassVar[Mapping[str, str]] = {}

    #: The best file's module-level code (imports, constants) as one candidate: fixes often
    #: add an import or change a constant beside the function they change, and no function
    #: candidate shows those lines.
    module_header: bool = True
    #: The rank it takes (5): after the best few definitions, before the long tail.
    module_header_rank: int = 5
    #: At most this many of its lines (80).
    module_header_lines: int = 80
    #: When the first this many candidates (10) all come from one file, the best candidate
    #: of another file takes that rank: the best file is the right one for about two tasks
    #: in three, and a list whose top ten shows one file bets everything on it.
    second_file_rank: int = 10


def apply_rank_rules(
    ranked: list[Candidate], ix: RepoIndex, top_file: str | None, cfg: RetrievalConfig
) -> None:
    """Every enabled rule over ``ranked`` (best first, changed in place), in this order: the
    header (rank 5), then the second file (10). ``top_file`` is the best file that is not
    demoted (None: no header)."""
    if cfg.rules.module_header and top_file is not None:
        _insert_module_header(ranked, ix, top_file, cfg)
    if cfg.rules.second_file_rank:
        _ensure_second_file(ranked, cfg.rules.second_file_rank)


def _insert_module_header(
    ranked: list[Candidate], ix: RepoIndex, path: str, cfg: RetrievalConfig
) -> None:
    """Put ``path``'s module header (line 1 up to its first definition, at most
    ``module_header_lines``) at rank ``module_header_rank``, unless module-level lines of that
    file already rank there."""
    pos = max(cfg.rules.module_header_rank - 1, 0)
    if any(c.file == path and c.qualname is None for c in ranked[: pos + 1]):
        return
    defs = ix.defs_by_file.get(path, [])
    last = len(ix.lines(path))
    end = min(defs[0].line - 1 if defs else last, cfg.rules.module_header_lines)
    if end < 1:
        return
    header = Candidate(None, "lines", path, 1, end, "", ix.span_text(path, 1, end))
    header.provenance.append(f"module-header:{path}")
    header.symbol = ix.local_symbol(path, None)
    header.score = ranked[min(pos, len(ranked)) - 1].score if pos and ranked else 0.0
    ranked.insert(min(pos, len(ranked)), header)


def _place(ranked: list[Candidate], moved: Candidate, rank: int, why: str) -> None:
    """Insert ``moved`` (taken out of ``ranked`` or new) at ``rank`` with the score of the
    candidate before it, noting ``why`` in its provenance."""
    moved.provenance.append(why)
    pos = min(rank - 1, len(ranked))
    moved.score = ranked[pos - 1].score if pos else moved.score
    ranked.insert(pos, moved)


def _ensure_second_file(ranked: list[Candidate], rank: int) -> None:
    """When the first ``rank`` candidates all come from one file, move the best candidate of
    another file to ``rank`` (its provenance says which file filled the ones before it)."""
    if rank < 2 or len(ranked) <= rank or len({c.file for c in ranked[:rank]}) > 1:
        return
    other = next((j for j in range(rank, len(ranked)) if ranked[j].file != ranked[0].file), None)
    if other is not None:
        _place(ranked, ranked.pop(other), rank, f"second-file:{ranked[0].file}")
