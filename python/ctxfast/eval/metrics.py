"""The evaluation metrics, as pure functions over plain data.

Every function takes lists/tuples/dicts only (no trees, no systems), so the arithmetic is pinned
by hand-computed tests. Conventions: ranks are 1-based; a metric that cannot be scored for an
instance returns ``None`` and is left out of the mean (and the scored count is reported).
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass

from ctxfast.eval.instances import Region

Span = tuple[str, int, int]  # (file, start, end), 1-based inclusive

KS_FILE = (1, 3, 5, 10)
KS_FUNCTION = (5, 10)
REGION_TOP = 5
LINE_BUDGET = 100


def _dedup(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(items))


def file_acc_at_k(ranked_files: Sequence[str], gold_files: Sequence[str], k: int) -> float | None:
    """1.0 iff every gold file is within the top ``k`` of the ranking (None without gold)."""
    gold = set(gold_files)
    if not gold:
        return None
    return 1.0 if gold <= set(_dedup(ranked_files)[:k]) else 0.0


def file_recall_at_k(
    ranked_files: Sequence[str], gold_files: Sequence[str], k: int
) -> float | None:
    """Share of gold files within the top ``k``."""
    gold = set(gold_files)
    if not gold:
        return None
    return len(gold & set(_dedup(ranked_files)[:k])) / len(gold)


def reciprocal_rank(ranked_files: Sequence[str], gold_files: Sequence[str]) -> float | None:
    """1/rank of the first gold file in the ranking; 0.0 when none is ranked."""
    gold = set(gold_files)
    if not gold:
        return None
    for rank, f in enumerate(_dedup(ranked_files), 1):
        if f in gold:
            return 1.0 / rank
    return 0.0


def _covered(
    gold: tuple[str, str], shown: set[tuple[str, str]], functions: Collection[tuple[str, str]]
) -> bool:
    """A gold symbol is delivered by a candidate of that symbol, or by a candidate *function*
    that encloses it (``f`` delivers ``f.inner``): the structural merge folds a nested function into
    its enclosing function, so a closure is never a separate candidate, and function-level
    localisation is conventionally scored on top-level functions and methods. A class does
    not deliver its methods (the merge keeps methods apart)."""
    if gold in shown:
        return True
    file, qualname = gold
    parts = qualname.split(".")
    for n in range(len(parts) - 1, 0, -1):
        outer = (file, ".".join(parts[:n]))
        if outer in shown and outer in functions:
            return True
    return False


#: How far a candidate function's first or last line may sit from a gold function's and still
#: be that function (a decorator or doc comment one parser includes and the other does not).
SPAN_SLACK = 2


def aligned_to_gold(
    candidates: Sequence[tuple[str, str | None, int, int, bool]],
    spans: Sequence[tuple[str, str, int, int]],
) -> tuple[list[tuple[str, str | None]], set[tuple[str, str]]]:
    """The ``(file, qualname)`` of each candidate ``(file, qualname, start, end, is_function)``
    and the set of those that are functions, with a candidate function renamed to the gold
    function ``(file, qualname, start, end)`` it is: the same file and both ends within
    ``SPAN_SLACK`` lines, or a function enclosing the gold one (which delivers it, as
    :func:`_covered` lets an enclosing function deliver a nested one). Without spans the
    names are kept as they are."""
    syms: list[tuple[str, str | None]] = []
    fns: set[tuple[str, str]] = set()
    for file, qual, start, end, is_fn in candidates:
        name = qual
        if is_fn and qual:
            for g_file, g_qual, g_start, g_end in spans:
                same = abs(start - g_start) <= SPAN_SLACK and abs(end - g_end) <= SPAN_SLACK
                if g_file == file and (same or (start <= g_start and g_end <= end)):
                    name = g_qual
                    break
        syms.append((file, name))
        if is_fn and name:
            fns.add((file, name))
    return syms, fns


def symbol_ranks(
    candidate_symbols: Sequence[tuple[str, str | None]],
    gold_symbols: Sequence[tuple[str, str]],
    functions: Collection[tuple[str, str]] = (),
) -> list[int | None]:
    """For each gold ``(file, qualname)`` (sorted), the 1-based place among the distinct
    named candidates of the first one that delivers it — the symbol itself, or a function in
    ``functions`` that encloses it (see :func:`_covered`) — None when none does: how far a
    miss at k was from the cut. Candidates without a qualname (whole files, windows) do not
    take a place: they name no function."""
    named = [
        tuple(s.split("\0", 1)) for s in _dedup(f"{f}\0{q}" for f, q in candidate_symbols if q)
    ]
    fn = set(functions)
    return [
        next((n for n, s in enumerate(named, 1) if _covered(g, {s}, fn)), None)  # type: ignore[arg-type]
        for g in sorted(set(gold_symbols))
    ]


def function_acc_at_k(
    candidate_symbols: Sequence[tuple[str, str | None]],
    gold_symbols: Sequence[tuple[str, str]],
    k: int,
    functions: Collection[tuple[str, str]] = (),
) -> float | None:
    """1.0 iff every gold ``(file, qualname)`` is delivered among the first ``k`` distinct
    named candidates (:func:`symbol_ranks`). None when the instance has no gold symbol."""
    ranks = symbol_ranks(candidate_symbols, gold_symbols, functions)
    if not ranks:
        return None
    return 1.0 if all(r is not None and r <= k for r in ranks) else 0.0


def required_file_recall(surfaced_files: Iterable[str], gold_files: Sequence[str]) -> float | None:
    """Share of gold files that the delivered result surfaces at all."""
    gold = set(gold_files)
    if not gold:
        return None
    return len(gold & set(surfaced_files)) / len(gold)


def gold_files_present(surfaced_files: Iterable[str], gold_files: Sequence[str]) -> bool | None:
    """True iff every gold file shows up in the delivered context (a few of its lines, an
    outline or a cut-off prefix are enough): the model was at least pointed at each file."""
    recall = required_file_recall(surfaced_files, gold_files)
    return None if recall is None else recall == 1.0


def required_symbol_recall(
    candidate_symbols: Iterable[tuple[str, str | None]],
    gold_symbols: Sequence[tuple[str, str]],
    functions: Collection[tuple[str, str]] = (),
) -> float | None:
    """Share of gold symbols surfaced as a candidate ``(file, qualname)`` (or nested in a
    surfaced candidate function, as in :func:`function_acc_at_k`)."""
    ranks = symbol_ranks(list(candidate_symbols), gold_symbols, functions)
    return sum(r is not None for r in ranks) / len(ranks) if ranks else None


def _in_gold(file: str, line: int, gold: Sequence[Region]) -> bool:
    return any(g.file == file and g.start <= line <= g.end for g in gold)


def shows_gold(file: str | None, lines: Iterable[int], gold: Sequence[Region]) -> bool:
    """True iff one of the lines a piece actually shows lies inside a gold hunk."""
    return file is not None and any(_in_gold(file, n, gold) for n in lines)


def irrelevant_context_ratio(
    rendered_tokens: int,
    delivered_lines: Sequence[tuple[str, int]],
    line_tokens: Mapping[tuple[str, int], int],
    gold: Sequence[Region],
) -> float | None:
    """Rendered tokens outside gold hunks ÷ rendered tokens (lower is better).

    ``delivered_lines`` are the ``(file, line)`` pairs the rendering carries, ``line_tokens``
    their token counts; everything else in the rendering (headers, separators) counts as
    outside. None when nothing was rendered or no gold region is known.
    """
    if not gold or rendered_tokens <= 0:
        return None
    inside = sum(line_tokens.get(fl, 0) for fl in set(delivered_lines) if _in_gold(*fl, gold))
    inside = min(inside, rendered_tokens)
    return (rendered_tokens - inside) / rendered_tokens


def budget_lines(
    ranked_regions: Sequence[Span], budget: int = LINE_BUDGET
) -> list[tuple[str, int]]:
    """Walk ranked regions in order, taking their lines until ``budget`` lines are spent.

    A line already taken by an earlier region is not paid twice."""
    taken: list[tuple[str, int]] = []
    seen: set[tuple[str, int]] = set()
    for f, s, e in ranked_regions:
        for line in range(s, e + 1):
            if len(taken) >= budget:
                return taken
            if (f, line) not in seen:
                seen.add((f, line))
                taken.append((f, line))
    return taken


def region_recall_at_k(
    ranked_regions: Sequence[Span], gold: Sequence[Region], k: int = REGION_TOP
) -> float | None:
    """|gold regions overlapped by one of the top-k ranked regions| ÷ |gold regions|."""
    if not gold:
        return None
    top = list(ranked_regions)[:k]
    hit = sum(1 for g in gold if any(g.overlaps(f, s, e) for f, s, e in top))
    return hit / len(gold)


def context_efficiency(
    ranked_regions: Sequence[Span], gold: Sequence[Region], budget: int = LINE_BUDGET
) -> float | None:
    """Lines within the ``budget``-line prefix of the ranking lying inside gold ÷ ``budget``."""
    if not gold:
        return None
    lines = budget_lines(ranked_regions, budget)
    return sum(1 for f, line in lines if _in_gold(f, line, gold)) / budget


def covers_all_gold(window_lines: Iterable[tuple[str, int]], gold: Sequence[Region]) -> bool | None:
    """True iff every line of every gold region is in the window (None without gold)."""
    if not gold:
        return None
    have = set(window_lines)
    return all((g.file, line) in have for g in gold for line in range(g.start, g.end + 1))


@dataclass(frozen=True)
class WindowItem:
    """One item of a constructed window, as the metrics see it."""

    file: str | None
    qualname: str | None
    start: int
    end: int
    tokens: int
    #: the lines the item shows when they are not the whole ``start..end`` (an outline)
    lines: tuple[int, ...] | None = None

    def shown(self) -> Sequence[int]:
        return self.lines if self.lines is not None else range(self.start, self.end + 1)


def relevance_precision(
    items: Sequence[WindowItem],
    window_tokens: int,
    gold: Sequence[Region],
    gold_symbols: Sequence[tuple[str, str]],
) -> float | None:
    """Window tokens inside items showing a line of a gold hunk or naming a gold symbol ÷
    window tokens. None for an empty window or when the instance has neither located hunks
    nor gold symbols (nothing to be relevant to)."""
    if window_tokens <= 0 or (not gold and not gold_symbols):
        return None
    syms = set(gold_symbols)
    rel = 0
    for it in items:
        if it.file is None:
            continue
        if (it.file, it.qualname) in syms or shows_gold(it.file, it.shown(), gold):
            rel += it.tokens
    return min(rel, window_tokens) / window_tokens


def tokens_per_covered(total_tokens: int, covered: int) -> float | None:
    """Total window tokens of the run ÷ instances fully covered — the offline stand-in for
    tokens-per-solved (lower is better). None when nothing is covered (infinitely bad)."""
    if covered <= 0:
        return None
    return total_tokens / covered


SET_QUESTIONS = frozenset({"Q3", "Q6"})


def question_correct(qid: str, answer: Iterable[str] | None, expected: Iterable[str]) -> bool:
    """Question-battery grading: Q3/Q6 need exact set equality of ``file:line`` pointers; the
    other questions are correct iff the answer's first evidence pointer is the expected one."""
    got = list(answer or [])
    want = list(expected)
    if qid in SET_QUESTIONS:
        return set(got) == set(want)
    return bool(got) and bool(want) and got[0] == want[0]


def question_accuracy(results: Sequence[bool]) -> float | None:
    """``correct / asked`` (``correct / 6`` for the full battery)."""
    return sum(1 for r in results if r) / len(results) if results else None


def mean(values: Iterable[float | None]) -> float | None:
    vals = [v for v in values if v is not None]
    return sum(vals) / len(vals) if vals else None


def p50(values: Iterable[float | None]) -> float | None:
    """Median (mean of the two middle values for an even count)."""
    vals = sorted(v for v in values if v is not None)
    if not vals:
        return None
    n = len(vals)
    mid = n // 2
    return float(vals[mid]) if n % 2 else (vals[mid - 1] + vals[mid]) / 2


def share(values: Iterable[bool | None]) -> float | None:
    vals = [v for v in values if v is not None]
    return sum(1 for v in vals if v) / len(vals) if vals else None


def is_finite(x: float | None) -> bool:
    return x is not None and math.isfinite(x)


__all__ = [
    "KS_FILE",
    "KS_FUNCTION",
    "LINE_BUDGET",
    "WindowItem",
    "budget_lines",
    "context_efficiency",
    "covers_all_gold",
    "file_acc_at_k",
    "file_recall_at_k",
    "function_acc_at_k",
    "gold_files_present",
    "irrelevant_context_ratio",
    "mean",
    "p50",
    "question_accuracy",
    "question_correct",
    "reciprocal_rank",
    "region_recall_at_k",
    "relevance_precision",
    "required_file_recall",
    "required_symbol_recall",
    "share",
    "shows_gold",
    "symbol_ranks",
    "tokens_per_covered",
]
