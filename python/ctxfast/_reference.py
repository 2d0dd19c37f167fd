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


def _segments(selected: list[bool], lo: int, hi: int) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    start: int | None = None
    for j in range(lo, hi):
        if selected[j] and start is None:
            start = j
        elif not selected[j] and start is not None:
            out.append((start, j))
            start = None
    if start is not None:
        out.append((start, hi))
    return out


def best_windows(
    line_tokens: list[int],
    line_scores: list[float],
    budget: int,
    max_windows: int,
    context: int,
) -> list[tuple[int, int]]:
    """The greedy window selection of ``ctxfast_core::window::best_windows``, spelled out.

    Each round every uncovered seed (score > 0) proposes its widest fitting window; the largest
    marginal score wins, then the smallest marginal cost, then the earliest start.
    """
    n = len(line_tokens)
    context = min(context, n)
    selected = [False] * n
    used = 0
    runs = 0
    if max_windows == 0:
        return []
    seeds = [i for i in range(n) if line_scores[i] > 0.0]
    while True:
        best: tuple[float, int, int, int, int] | None = None
        for i in seeds:
            if selected[i]:
                continue
            cand = None
            for r in range(context, -1, -1):
                start, end = max(0, i - r), min(n, i + r + 1)
                cost = 0
                gain = 0.0
                for j in range(start, end):
                    if not selected[j]:
                        cost += line_tokens[j]
                        gain += line_scores[j]
                if used + cost > budget:
                    continue
                new_runs = runs + 1 - len(_segments(selected, max(0, start - 1), min(n, end + 1)))
                if new_runs <= max_windows:
                    cand = (gain, cost, start, end, new_runs)
                    break
            if cand is None:
                continue
            if (
                best is None
                or cand[0] > best[0]
                or (
                    cand[0] == best[0]
                    and (cand[1] < best[1] or (cand[1] == best[1] and cand[2] < best[2]))
                )
            ):
                best = cand
        if best is None:
            break
        _, cost, start, end, runs = best
        for j in range(start, end):
            selected[j] = True
        used += cost
    return _segments(selected, 0, n)
