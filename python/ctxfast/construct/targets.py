"""The change targets a window is built around, when the caller names none.

A caller with a localizer passes the entities to change; without one ``compose`` takes them
from retrieval: the best-scored distinct retrieved definitions, as many as the score
distribution says are close to the best (:func:`confident_localization`), else the
best-ranked library file when retrieval found no definition (:func:`best_file_fallback`).
Whoever named a target, its own source must be in the window (:func:`target_sources`), and
:func:`window_candidates` sizes how many retrieved candidates the window draws on.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from ctxfast.construct.impact import Derived, definition_candidate, resolve
from ctxfast.construct.schema import CodeCandidate, LogEntry, Origin
from ctxfast.construct.source_reader import SourceReader
from ctxfast.recon.graph import CodeGraph
from ctxfast.text import is_product_path, is_test_code

if TYPE_CHECKING:
    from ctxfast.construct.defaults import DefaultsConfig


@dataclass(frozen=True)
class TargetSettings:
    """Which definitions a window treats as the ones to change when the caller names none
    (``DefaultsConfig.targets``), and how many retrieved candidates it draws on."""

    FLAT_NAMES: ClassVar[Mapping[str, str]] = {}

    #: With ``confidence_localization`` off: the best this many (1) distinct retrieved
    #: definitions are the change targets. One: more cost tokens without covering more.
    localized_definitions: int = 1
    #: Size the targets by confidence: every retrieved definition scoring within
    #: ``localization_margin`` of the best, between ``localization_min`` and
    #: ``localization_max`` of them. On: the lines a window needs are in its targets' files.
    confidence_localization: bool = True
    #: A definition scoring at least (1 − this) × the best score (0.25: within a quarter of
    #: it) is a target too.
    localization_margin: float = 0.25
    #: At least this many targets (3): a near miss of the best is then still shown.
    localization_min: int = 3
    #: At most this many targets (5).
    localization_max: int = 5
    #: Retrieved candidates a window draws on (40, where retrieval's own list has 20): the
    #: window fills its target with the next-best ones, and drawing on more puts the file
    #: to change in more windows. A caller's own ``RetrievalConfig.top_k`` wins.
    retrieval_candidates: int = 40
    #: A larger window draws on this many (5) per thousand tokens of its target when that is
    #: more: a 16k window runs out of the best 40.
    candidates_per_1k_tokens: int = 5


def window_candidates(cfg: DefaultsConfig, target_tokens: int) -> int:
    """How many retrieved candidates a window filled toward ``target_tokens`` draws on."""
    return max(
        cfg.targets.retrieval_candidates,
        target_tokens * cfg.targets.candidates_per_1k_tokens // 1000,
    )


def default_localization(candidates: Sequence[CodeCandidate], k: int) -> tuple[str, ...]:
    """The ``k`` best-scored distinct retrieved definitions (ties keep retrieval order)."""
    return _ranked_definitions(candidates)[:k]


def _ranked_definitions(candidates: Sequence[CodeCandidate]) -> tuple[str, ...]:
    ranked = sorted(
        (c for c in candidates if c.qualname and c.kind != "def"),
        key=lambda c: -c.score,
    )
    return tuple(dict.fromkeys(c.qualname for c in ranked if c.qualname))


def best_file_fallback(
    graph: CodeGraph, reader: SourceReader, ranked_files: Sequence[str]
) -> CodeCandidate | None:
    """The best-ranked library file as a stand-in change target, for a task whose words
    retrieval found in no definition: the window then shows the code most likely to change
    instead of the task alone. Its text is the whole file; the whole-file rule and the line
    window decide how much of it fits. None when no library file is ranked."""
    path = next((f for f in ranked_files if is_product_path(f)), None)
    lines = reader.lines(path) if path else []
    if path is None or not lines:
        return None
    return CodeCandidate(
        qualname=graph.module_qualname(path) or path,
        kind="module",
        file=path,
        start_line=1,
        end_line=len(lines),
        score=0.0,
        signature=None,
        text="\n".join(lines),
        provenance="04: no retrieved definition; the best-ranked file",
        origin=Origin.RETRIEVAL,
    )


def confident_localization(
    candidates: Sequence[CodeCandidate], cfg: DefaultsConfig
) -> tuple[str, ...]:
    """Change targets sized by the retrieval score distribution, not a fixed count.

    When one definition clearly leads, it alone is the target; when several score close to
    the best (the task is ambiguous between them), each of them is: every distinct retrieved
    definition scoring at least ``(1 - localization_margin)`` × the best score, at least
    ``localization_min`` and at most ``localization_max`` of them, in score order. Falls back
    to the fixed ``localized_definitions`` when ``confidence_localization`` is off.
    """
    if not cfg.targets.confidence_localization:
        return default_localization(candidates, cfg.targets.localized_definitions)
    best: dict[str, float] = {}
    for c in candidates:
        if c.qualname and c.kind != "def":
            best[c.qualname] = max(best.get(c.qualname, float("-inf")), c.score)
    order = _ranked_definitions(candidates)
    files = {c.qualname: c.file for c in candidates if c.qualname}
    library = tuple(q for q in order if is_product_path(files[q]) and not is_test_code(files[q], q))
    # Tests, examples, documentation, vendored or generated code are change targets only
    # when nothing else is.
    order = library or order
    if not order:
        return ()
    top = best[order[0]]
    floor = top - abs(top) * cfg.targets.localization_margin
    chosen = [q for q in order if best[q] >= floor]
    n = min(max(len(chosen), cfg.targets.localization_min), cfg.targets.localization_max)
    return order[:n]


def target_sources(
    graph: CodeGraph, root: Path, heads: Sequence[str], known: set[str], cfg: DefaultsConfig
) -> Derived:
    """The source of each change entity retrieval did not return: the edit target's own code
    must be in the window, whoever named it (planner, localizer or the default plan)."""
    out = Derived()
    reader = SourceReader(root)
    for head in dict.fromkeys(heads):
        if head in known:
            continue
        node = resolve(graph, head)
        if node is None or node.kind == "def":
            continue
        known.add(head)
        prov = f"03: definition of change entity {head}"
        cand = definition_candidate(graph, node, reader, cfg, prov)
        out.candidates.append(replace(cand, qualname=head))
        out.log.append(LogEntry("defaults", head, "target_source", "read from the code graph span"))
    return out


__all__ = [
    "best_file_fallback",
    "confident_localization",
    "default_localization",
    "target_sources",
    "window_candidates",
]
