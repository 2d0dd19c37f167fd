"""Code shown with its real line numbers: the one rendering rule every window and excerpt uses.

A model that sees ``120<TAB>def area(self):`` can cite or edit line 120 exactly; a gap marker
says how many lines were left out, so it never mistakes two distant lines for neighbours.

The number and a tab, as ``cat -n`` prints them without its padding: the form agents' file
readers show, and the cheapest one measured. The earlier ``  120 | `` (number right-aligned,
space, bar, space) took a fifth of a window's tokens; the tab form takes about a tenth, so
the same budget holds about 10 % more code (benches/README.md, "Line numbers at half the
tokens").
"""

from __future__ import annotations

from collections.abc import Sequence

GAP_MARK = "⋮"


def numbered_line(number: int, text: str) -> str:
    """``42<TAB>text``."""
    return f"{number}\t{text}"


def gap_line(first: int, last: int) -> str:
    """The marker standing for the elided lines ``first..last`` (1-based, inclusive)."""
    n = last - first + 1
    return f"{GAP_MARK} [{n} line{'s' if n != 1 else ''} elided: {first}-{last}]"


def render_numbered(lines: Sequence[tuple[int, str]]) -> str:
    """Numbered lines in ascending order with a gap marker wherever numbers skip."""
    out: list[str] = []
    prev: int | None = None
    for n, text in lines:
        if prev is not None and n > prev + 1:
            out.append(gap_line(prev + 1, n - 1))
        out.append(numbered_line(n, text))
        prev = n
    return "\n".join(out)


__all__ = ["GAP_MARK", "gap_line", "numbered_line", "render_numbered"]
