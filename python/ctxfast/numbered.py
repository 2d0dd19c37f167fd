"""Code shown with its real line numbers: the one rendering rule every window and excerpt uses.

A model that sees ``120 | def area(self):`` can cite or edit line 120 exactly; a gap marker
says how many lines were left out, so it never mistakes two distant lines for neighbours.
"""

from __future__ import annotations

from collections.abc import Sequence

GAP_MARK = "⋮"


def number_width(last_line: int) -> int:
    """Digits of the largest line number shown (the column the numbers are aligned to)."""
    return max(len(str(max(last_line, 1))), 1)


def numbered_line(number: int, text: str, width: int) -> str:
    """``  42 | text`` — the number right-aligned to ``width``."""
    return f"{number:>{width}} | {text}"


def gap_line(first: int, last: int, width: int) -> str:
    """The marker standing for the elided lines ``first..last`` (1-based, inclusive)."""
    n = last - first + 1
    return f"{GAP_MARK:>{width}} [{n} line{'s' if n != 1 else ''} elided: {first}-{last}]"


def render_numbered(lines: Sequence[tuple[int, str]], width: int | None = None) -> str:
    """Numbered lines in ascending order with a gap marker wherever numbers skip."""
    if not lines:
        return ""
    w = width if width is not None else number_width(lines[-1][0])
    out: list[str] = []
    prev: int | None = None
    for n, text in lines:
        if prev is not None and n > prev + 1:
            out.append(gap_line(prev + 1, n - 1, w))
        out.append(numbered_line(n, text, w))
        prev = n
    return "\n".join(out)


__all__ = ["GAP_MARK", "gap_line", "number_width", "numbered_line", "render_numbered"]
