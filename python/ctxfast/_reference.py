"""Small pure-Python reference implementations of the native algorithms.

They are slow on purpose: each is the most obvious correct version, and the test suite checks
the native code against them with hypothesis. Nothing in the library calls them.
"""

from __future__ import annotations

from ctxfast.tokens import count_tokens


def is_rust_whitespace(ch: str) -> bool:
    """Rust's ``char::is_whitespace`` (Unicode White_Space), which differs from
    ``str.isspace`` on the four ASCII information separators."""
    return ch.isspace() and ch not in "\x1c\x1d\x1e\x1f"


def cut_points(text: str, cut: str) -> list[int]:
    """Character offsets where a word- or line-cut head may end (0 included)."""
    points = [0]
    if cut == "word":
        points += [
            i
            for i in range(1, len(text))
            if is_rust_whitespace(text[i]) and not is_rust_whitespace(text[i - 1])
        ]
    elif cut == "line":
        points += [i for i in range(1, len(text)) if text[i] == "\n"]
    else:
        raise ValueError(f"the reference covers 'word' and 'line' cuts, not {cut!r}")
    return points


def truncate_to_tokens(text: str, max_tokens: int, *, encoding: str, elision: str, cut: str) -> str:
    """Linear scan from the longest cut point down: the first head that fits wins."""
    if count_tokens(text, encoding) <= max_tokens:
        return text
    for end in reversed(cut_points(text, cut)):
        candidate = text[:end] + elision
        if count_tokens(candidate, encoding) <= max_tokens:
            return candidate
    return ""
