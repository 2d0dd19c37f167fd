"""Where a statement ends: spans of hits and pruned lines extend to whole statements."""

from __future__ import annotations

_OPEN, _CLOSE = "([{", ")]}"


def statement_end(lines: list[str], start: int) -> int:
    """1-based last line of the statement starting at ``start`` (bracket balance)."""
    depth = 0
    i = start
    while i <= len(lines):
        text = lines[i - 1].split("#", 1)[0]
        for ch in text:
            if ch in _OPEN:
                depth += 1
            elif ch in _CLOSE:
                depth = max(depth - 1, 0)
        if depth == 0 and not text.rstrip().endswith("\\"):
            return i
        i += 1
        if i - start > 50:
            break
    return min(start, len(lines)) if lines else start
