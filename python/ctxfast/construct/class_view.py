"""A large class candidate shown as a view of its members, not as one window of lines.

Retrieval often ranks a class first because its body as a whole matches the task, while the
code to change is one of its methods (a constructor that should validate an argument, the
accessor that fetches the wrong element). Construction cuts any body over
``large_item_lines`` to its best 40-line window by term overlap, which for a class of
several hundred lines is usually the class docstring: the methods are lost. The view keeps,
in file order and with real line numbers, in this order of priority:

* the constructor in full, when it fits in ``class_view_max_lines`` lines;
* the class header (its lines up to the first member, at most ``class_view_header_lines``);
* the ``class_view_methods`` members that score best for the task (BM25 among the members) in
  full while the view stays within ``class_view_max_lines`` (the first line of one that
  does not fit).

Everything comes from the code graph's spans; no language parsing happens here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, ClassVar

from ctxfast.bm25 import BM25Index
from ctxfast.construct.context_lines import margins
from ctxfast.construct.schema import CodeCandidate
from ctxfast.construct.source_reader import SourceReader
from ctxfast.recon.graph import CodeGraph, Node

if TYPE_CHECKING:
    from ctxfast.construct.defaults import DefaultsConfig


@dataclass(frozen=True)
class ClassViewSettings:
    """How a large class is shown (``DefaultsConfig.class_view``): a class longer than
    ``ConstructConfig.compress.large_item_lines`` as a view of its members instead of one window of
    40 lines, which would show a few lines of one method."""

    FLAT_NAMES: ClassVar[Mapping[str, str]] = {
        "enabled": "class_view",
        "methods": "class_view_methods",
        "header_lines": "class_view_header_lines",
        "max_lines": "class_view_max_lines",
    }

    #: Show large classes as a view of their members. On.
    enabled: bool = True
    #: The view holds the constructor and the this many (3) members scoring best for the task.
    methods: int = 3
    #: ... and the first this many lines (10) of the class: its header, docstring, attributes.
    header_lines: int = 10
    #: At most this many lines in all (80).
    max_lines: int = 80


# Member names that construct an instance: their body is where arguments are checked.
# Python's, JavaScript's and TypeScript's, PHP's ``__construct`` and Ruby's ``initialize``;
# Java, C# and C++ name the constructor after its class (the view checks that too).
CONSTRUCTOR_NAMES = ("__init__", "__new__", "constructor", "__construct", "initialize")


def _members(graph: CodeGraph, cand: CodeCandidate) -> list[Node]:
    """The class's direct member definitions (methods and nested classes), in line order."""
    prefix = f"{cand.qualname}."
    return [
        n
        for n in graph.nodes_in_file(cand.file)
        if n.kind in ("function", "class")
        and n.qualname.startswith(prefix)
        and "." not in n.qualname[len(prefix) :]
        and cand.start_line < n.line <= cand.end_line
    ]


def _scores(members: Sequence[Node], lines: Sequence[str], task: str) -> dict[str, float]:
    """Each member's BM25 score for the task among the class's members: a word rare among
    them counts most, and a long member does not win by length alone."""
    docs = ["\n".join(lines[m.line - 1 : max(m.line, m.end_line)]) for m in members]
    scores = BM25Index(docs).scores(task)
    return {m.id: s for m, s in zip(members, scores, strict=True)}


def margins_of(lines: Sequence[str], m: Node, cfg: DefaultsConfig) -> tuple[int, int]:
    """The ``range`` bounds of member ``m`` with its decorators and blank margins."""
    start, end = margins(lines, m.line, max(m.line, m.end_line), cfg)
    return start, end + 1


def _add(
    shown: set[int], members: Sequence[Node], lines: Sequence[str], cfg: DefaultsConfig
) -> None:
    """Each member's body (with its margins) into ``shown`` when it fits the view's cap."""
    for m in members:
        body = set(range(*margins_of(lines, m, cfg)))
        if len(shown | body) <= cfg.class_view.max_lines:
            shown |= body


def class_view(
    graph: CodeGraph,
    reader: SourceReader,
    cand: CodeCandidate,
    task: str,
    cfg: DefaultsConfig,
    large_item_lines: int,
) -> CodeCandidate:
    """``cand`` (a class) with the exact line set of its view when its span is over
    ``large_item_lines``; any other candidate, or a class the graph holds no members for, as
    given."""
    span = cand.end_line - cand.start_line + 1
    if (
        not cfg.class_view.enabled
        or cand.kind != "class"
        or not cand.qualname
        or cand.lines is not None
        or span <= large_item_lines
    ):
        return cand
    lines = reader.lines(cand.file)
    members = [m for m in _members(graph, cand) if m.end_line <= len(lines)]
    if not members:
        return cand
    first = members[0].line
    header = range(cand.start_line, min(first, cand.start_line + cfg.class_view.header_lines))
    scores = _scores(members, lines, task)
    ctor = [m for m in members if m.name in (*CONSTRUCTOR_NAMES, cand.qualname.rsplit(".", 1)[-1])]
    ranked = sorted(
        (m for m in members if m not in ctor and scores[m.id] > 0),
        key=lambda m: (-scores[m.id], m.line),
    )
    best = ranked[: cfg.class_view.methods]
    shown = {m.line for m in (*ctor, *best)}
    # The constructor's body first (where arguments are checked), then the header, then the
    # best members while the view stays within its line cap.
    _add(shown, ctor, lines, cfg)
    shown |= set(header)
    _add(shown, best, lines, cfg)
    chosen = tuple(sorted(shown))
    return replace(cand, lines=chosen, text="\n".join(lines[n - 1] for n in chosen))


__all__ = ["CONSTRUCTOR_NAMES", "class_view"]
