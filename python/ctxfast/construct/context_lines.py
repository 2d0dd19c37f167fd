"""The lines shown around a definition in the window, beyond its own span.

A body alone is not enough to edit it in place: a method needs its class's header, module
code needs the module's imports (:func:`with_context`); a definition needs its decorators and
comments and the blank lines an insertion before or after it goes between
(:func:`with_margins`, :func:`margins`); and a file holding a target is shown as a skeleton of
its definitions with their real line numbers so the model sees where else to look
(:func:`file_outline`). Each is sized by :class:`~ctxfast.construct.defaults.DefaultsConfig`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, ClassVar

from ctxfast.construct.schema import CodeCandidate, Origin
from ctxfast.construct.source_reader import SourceReader
from ctxfast.recon.graph import CodeGraph
from ctxfast.text import DECORATOR_PREFIXES, attached_above

if TYPE_CHECKING:
    from ctxfast.construct.defaults import DefaultsConfig


@dataclass(frozen=True)
class ContextSettings:
    """The lines shown around a definition (``DefaultsConfig.context``)."""

    FLAT_NAMES: ClassVar[Mapping[str, str]] = {}

    #: A change target is shown with its context: the enclosing class's header for a
    #: method, the module's imports for module-level code. On: a fix often needs both.
    target_context: bool = True
    #: At most this many (30) import lines are shown with a module-level target: what the
    #: value may be built from, without a module of hundreds of imports filling the window.
    max_import_lines: int = 30
    #: Blank lines (2) shown on each side of a definition, so an insertion just before or
    #: after it has lines to anchor on.
    margin_lines: int = 2
    #: Decorators, annotations and comments directly above a definition are shown with it,
    #: at most this many lines (10): ``@property`` or ``@classmethod`` belongs to the body.
    attached_lines: int = 10


@dataclass(frozen=True)
class OutlineSettings:
    """The file outlines (skeletons: definition lines with their real line numbers) a window
    shows so the model sees where else to look (``DefaultsConfig.outlines``)."""

    FLAT_NAMES: ClassVar[Mapping[str, str]] = {
        "enabled": "file_outlines",
        "files": "outline_files",
        "max_lines": "outline_max_lines",
        "header_lines": "outline_header_lines",
    }

    #: Outline each file holding a change target and the ``files`` best-ranked files.
    enabled: bool = True
    #: How many best-ranked files are outlined besides the targets' (1): outlines take room
    #: the window would give to code bodies.
    files: int = 1
    #: At most this many lines per outline (12), for the same reason.
    max_lines: int = 12
    #: An outline line whose definition header runs over several lines (a long parameter
    #: list) shows up to this many lines of it (8; 1: the first line only): a fix that adds
    #: or changes a parameter is made there.
    header_lines: int = 8


_IMPORT = re.compile(r"^\s*(?:from\s+\S+\s+import\b|import\s)")


def import_lines(lines: Sequence[str], limit: int) -> list[int]:
    """1-based numbers of a module's import statements above its first definition
    (parenthesised imports with their continuation lines), at most ``limit`` of them."""
    out: list[int] = []
    depth = 0
    for i, ln in enumerate(lines, 1):
        if len(out) >= limit:
            break
        if depth > 0:
            out.append(i)
            depth += ln.count("(") - ln.count(")")
            continue
        stripped = ln.lstrip()
        if stripped.startswith(("def ", "class ", "async def ", "@")):
            break
        if _IMPORT.match(ln):
            out.append(i)
            depth = max(0, ln.count("(") - ln.count(")"))
    return out


def _header_lines(lines: Sequence[str], start: int, limit: int = 4) -> list[int]:
    """A definition's header: its first line and continuation lines up to the one that
    opens the body (``:`` or ``{``), at most ``limit`` lines."""
    out = []
    for i in range(start, min(start + limit, len(lines) + 1)):
        out.append(i)
        text = lines[i - 1].split("#", 1)[0].rstrip()
        if text.endswith((":", "{")) or (text.endswith(")") and i == start):
            break
    return out


def with_context(
    graph: CodeGraph, reader: SourceReader, cand: CodeCandidate, cfg: DefaultsConfig
) -> CodeCandidate:
    """The change target with what a model needs to edit it in place: the header of the
    enclosing class for a method, the module's imports for module-level code. The result
    carries its exact line set (``lines``) since the context is not adjacent to the body."""
    if not cfg.context.target_context:
        return cand
    lines = reader.lines(cand.file)
    if not lines:
        return cand
    extra: list[int] = []
    if cand.kind in ("function", "method", "class"):
        for enc in graph.definitions_enclosing(cand.file, cand.start_line):
            if enc.kind == "class" and enc.line < cand.start_line:
                extra = _header_lines(lines, enc.line)
                break
    else:
        extra = import_lines(lines, cfg.context.max_import_lines)
    span = cand.lines or range(cand.start_line, min(cand.end_line, len(lines)) + 1)
    shown = sorted(set(extra) | set(span))
    if len(shown) == len(span):
        return cand
    text = "\n".join(lines[n - 1] for n in shown)
    return replace(cand, lines=tuple(shown), text=text)


# Lines that belong to the definition below them: decorators, annotations and attributes,
# and comments of every graph language.
_ATTACHED = (*DECORATOR_PREFIXES, "#", "//", "/*", "*")
_DEFINITION_KINDS = ("function", "method", "class")


def with_margins(reader: SourceReader, cand: CodeCandidate, cfg: DefaultsConfig) -> CodeCandidate:
    """A definition candidate widened over its attached lines (decorators, comments) and up
    to ``cfg.context.margin_lines`` blank lines on each side, so the model sees the decorators that
    change what the body means and the exact lines an insertion before or after it goes
    between. Other candidates (line ranges, outlines, config lines) are returned as given."""
    if cand.kind not in _DEFINITION_KINDS or cand.lines is not None:
        return cand
    lines = reader.lines(cand.file)
    if not lines or cand.end_line > len(lines):
        return cand
    start, end = margins(lines, cand.start_line, cand.end_line, cfg)
    if (start, end) == (cand.start_line, cand.end_line):
        return cand
    return replace(cand, start_line=start, end_line=end, text=reader.span(cand.file, start, end))


def margins(lines: Sequence[str], start: int, end: int, cfg: DefaultsConfig) -> tuple[int, int]:
    """The span ``start..end`` of a definition in ``lines`` widened over its attached lines
    above (at most ``cfg.context.attached_lines``; a decorator written over several lines
    whole) and up to ``cfg.context.margin_lines`` blank lines on each side."""
    most = cfg.context.attached_lines
    start = attached_above(lines, start - 1, _ATTACHED, most, block_comments=True) + 1
    taken = 0
    while start > 1 and taken < cfg.context.margin_lines and not lines[start - 2].strip():
        start -= 1
        taken += 1
    taken = 0
    while end < len(lines) and taken < cfg.context.margin_lines and not lines[end].strip():
        end += 1
        taken += 1
    return start, end


def header_lines(lines: Sequence[str], first: int, most: int) -> range:
    """The lines of the definition header starting at line ``first`` of ``lines``: up to
    ``most`` lines, while a bracket the header opened (its parameter list) is still open."""
    depth = 0
    last = first
    while last <= len(lines) and last < first + most:
        line = lines[last - 1]
        depth += sum(line.count(c) for c in "([") - sum(line.count(c) for c in ")]")
        if depth <= 0:
            break
        last += 1
    return range(first, min(last, len(lines), first + most - 1) + 1)


def file_outline(
    graph: CodeGraph, reader: SourceReader, path: str, score: float, cfg: DefaultsConfig
) -> CodeCandidate | None:
    """A skeleton of ``path``: the first line of each definition with its real line number,
    classes and top-level functions before methods when the cap bites, shown in file order."""
    lines = reader.lines(path)
    defs = [n for n in graph.nodes_in_file(path) if n.kind in ("function", "class")]
    if not lines or not defs:
        return None
    depth = {n.id: n.qualname.count(".") for n in defs}
    pick = sorted(defs, key=lambda n: (n.kind != "class", depth[n.id], n.line))
    firsts = [n.line for n in pick[: cfg.outlines.max_lines] if 0 < n.line <= len(lines)]
    chosen = sorted({k for n in firsts for k in header_lines(lines, n, cfg.outlines.header_lines)})
    if not chosen:
        return None
    return CodeCandidate(
        qualname=None,
        kind="outline",
        file=path,
        start_line=chosen[0],
        end_line=chosen[-1],
        score=score,
        signature=None,
        text="\n".join(lines[n - 1] for n in chosen),
        provenance=f"03: outline of {path} ({len(defs)} definitions, {len(lines)} lines)",
        origin=Origin.RECON,
        lines=tuple(chosen),
    )


__all__ = [
    "file_outline",
    "header_lines",
    "import_lines",
    "margins",
    "with_context",
    "with_margins",
]
