"""Short gaps in a file's listing, closed while the window has room.

The blocks of one file show separate runs of its lines: a class view's members, a target with
its margins, the bodies the fill admitted. Between two runs the model reads a marker such as
``⋮ [13 lines elided: 235-247]``. A short gap costs little more than its marker, the model
cannot read what it hides, and it is often the very code to change: the one short method a
class view left out, the lines between two admitted methods, the last imports above a target.
So, with room left under the target, the shortest gaps between lines shown in full are
filled from the file itself, shortest first, each costing only the tokens it adds.

Only gaps next to a line of a verbatim code block are closed; the lines of a skeleton or of
signatures stay apart (closing those would turn an outline into the file).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import pairwise

from ctxfast.construct.compress import Block, with_lines
from ctxfast.construct.represent import Rendering, Role
from ctxfast.construct.schema import LogEntry
from ctxfast.numbered import gap_line, render_numbered

#: The repository's lines of a file (1-based line n is ``lines[n - 1]``).
Source = Callable[[str], Sequence[str]]


def _full(b: Block) -> bool:
    return b.is_code and b.rendering is Rendering.VERBATIM and b.role is not Role.FILE_OUTLINE


def find_gaps(blocks: Sequence[Block], max_lines: int) -> list[tuple[str, int, int, str]]:
    """``(file, first, last, block id)`` of every run of at most ``max_lines`` unshown lines
    between two shown lines of one file, at least one of them shown by a verbatim block.
    The gap goes to the verbatim block of the innermost definition that holds it (a class
    view around a method it left out), else to the one showing the line above it, else
    below. Sorted shortest first, then by place."""
    shown: dict[str, set[int]] = {}
    full: dict[tuple[str, int], str] = {}
    spans: dict[str, list[tuple[int, int, str]]] = {}
    for b in blocks:
        if not b.is_code or not b.item.meta.file:
            continue
        f = b.item.meta.file
        lines = shown.setdefault(f, set())
        lines.update(n for n, _ in b.shown)
        if _full(b):
            for n, _ in b.shown:
                full.setdefault((f, n), b.id)
            meta = b.item.meta
            if meta.start_line is not None and meta.end_line is not None:
                spans.setdefault(f, []).append((meta.start_line, meta.end_line, b.id))
    out = []
    for f, lines in shown.items():
        ordered = sorted(lines)
        for a, z in pairwise(ordered):
            if not 0 < z - a - 1 <= max_lines:
                continue
            holders = [(e - s, bid) for s, e, bid in spans.get(f, ()) if s <= a + 1 and z - 1 <= e]
            owner = min(holders)[1] if holders else full.get((f, a)) or full.get((f, z))
            if owner and ((f, a) in full or (f, z) in full):
                out.append((f, a + 1, z - 1, owner))
    return sorted(out, key=lambda g: (g[2] - g[1], g[0], g[1]))


def close_gaps(
    blocks: Sequence[Block],
    source: Source,
    room: int,
    max_lines: int,
    sizes: Callable[[Sequence[str]], list[int]],
) -> tuple[list[Block], int, list[LogEntry]]:
    """``blocks`` with the shortest gaps filled while their cost fits ``room`` tokens;
    returns the blocks, the tokens spent and one log entry per closed gap. A gap's cost is
    the tokens of its lines, less those of the marker they replace inside one block. A file
    whose current text no longer has the gap's lines is left as it is."""
    state = {b.id: b for b in blocks}
    spent = 0
    log: list[LogEntry] = []
    for f, first, last, bid in find_gaps(blocks, max_lines):
        text = source(f)
        if last > len(text):
            continue
        b = state[bid]
        pairs = tuple((n, text[n - 1]) for n in range(first, last + 1))
        add, marker = sizes([render_numbered(pairs), gap_line(first, last)])
        inside = {first - 1, last + 1} <= {n for n, _ in b.shown}  # a marker goes, else none
        cost = max(add - marker, 0) if inside else add
        if spent + cost > room:
            continue
        lines = dict(pairs) | dict(b.shown)
        state[bid] = with_lines(b, tuple(sorted(lines.items())))
        spent += cost
        log.append(LogEntry("fill", bid, "gap_closed", f"lines {first}-{last}, ~{cost} tokens", f))
    return [state[b.id] for b in blocks], spent, log


__all__ = ["Source", "close_gaps", "find_gaps"]
