"""Which lines of a long code body to show: its best fixed-length window for the task.

A line scores by how many of its identifier parts are the task's terms, and the window of
``window_lines`` contiguous lines with the highest total is kept (the selection itself is
native); the lines around a line naming one of the task's identifiers whole are kept
beside it. With it are the two line filters the choice rests on: which rows are code rather
than docstring or comment, and which lines belong to the definition itself.

It is separate from ``compress`` because two stages choose lines this way: compression
cuts a long body to its window, and the budget's eviction ladder narrows a change target
with the same selection when the window is over its ceiling. Its settings
(``window_lines``, ``large_item_lines``, ``window_code_only``, ``named_line_uses``,
``named_line_context``) are compression's
(``CompressSettings``).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING

from ctxfast import _native
from ctxfast.construct.schema import EvidenceItem
from ctxfast.construct.terms import line_tokens
from ctxfast.text import IDENTIFIER, split_identifier

if TYPE_CHECKING:
    from ctxfast.construct.config import ConstructConfig

#: Code lines as ``(real line number, text)`` pairs.
Numbered = tuple[tuple[int, str], ...]


def best_line_windows(
    lines: Sequence[str], terms: Collection[str], window: int, k: int = 1, min_len: int = 3
) -> list[tuple[int, int, int]]:
    """The ``k`` best non-overlapping windows of ``window`` contiguous lines.

    A line scores the number of its identifier parts (with repetition) that are decision
    terms; a window scores the sum (RepoCoder's sliding window, made deterministic: ties go
    to the earliest window). Returns ``(start, end_exclusive, score)`` sorted by ``start``.
    The selection is native (``ctxfast_core::window``, beside the excerpts' budgeted one).
    """
    if not lines or window <= 0 or k <= 0:
        return []
    wanted = set(terms)
    line_scores = [sum(1 for t in line_tokens(ln, min_len) if t in wanted) for ln in lines]
    return _native.best_fixed_windows(line_scores, window, k)


def code_rows(lines: Sequence[str]) -> list[bool]:
    """Which lines are code: not a docstring line (triple-quoted prose) nor a comment."""
    out = []
    in_doc: str | None = None
    for ln in lines:
        code = ln.strip()
        if in_doc is not None:
            if in_doc in code:
                in_doc = None
            out.append(False)
            continue
        for quote in ('"""', "'''"):
            if code.startswith(quote) and code.count(quote) == 1:
                in_doc = quote
        out.append(in_doc is None and not code.startswith(("#", "//", '"""', "'''")))
    return out


def own_lines(item: EvidenceItem, pairs: Numbered) -> Numbered:
    """The lines of ``pairs`` inside the item's own definition span (``start_line`` to
    ``end_line``), or all of ``pairs`` when the item names no definition or none lie there.

    A definition may carry more lines than its own: its whole file, its class's header, the
    module's imports. The window's header names the definition, so a cheaper form of the item
    (its signature, a line window) is cut from the definition's lines: cut from the whole
    file, it showed the file's first ``def`` or its imports under the definition's name."""
    meta = item.meta
    if not meta.entity or meta.start_line is None or meta.end_line is None:
        return pairs
    own = tuple(p for p in pairs if meta.start_line <= p[0] <= meta.end_line)
    return own or pairs


def named_rows(texts: Sequence[str], terms: Collection[str], max_uses: int) -> list[int]:
    """Rows of ``texts`` holding a several-part identifier the decision writes whole
    (``MB_ONIGURUMA_VERSION``, ``flow_run_id``: the lower-cased whole name is a term) that
    the body uses at most ``max_uses`` times. Such a name is where the task points; its
    parts alone (``version``, ``run``) recur all over a long body and outvote it."""
    if max_uses <= 0:
        return []
    rows: dict[str, list[int]] = {}
    for i, text in enumerate(texts):
        for word in IDENTIFIER.findall(text):
            low = word.lower()
            if low in terms and len(split_identifier(word)) > 1:
                rows.setdefault(low, []).append(i)
    return sorted({i for found in rows.values() if len(found) <= max_uses for i in found})


def window_rows(
    texts: Sequence[str], wanted: Collection[str], window: int, config: ConstructConfig, head: int
) -> list[int]:
    """The rows of ``texts`` a cut body shows: its best ``window``-line window by term
    overlap, the first ``head`` rows above that window, and the lines around each row
    naming one of the decision's identifiers whole (:func:`named_rows`)."""
    cfg = config.compress
    st, en, _ = best_line_windows(texts, wanted, window, min_len=config.min_term_len)[0]
    keep = set(range(min(head, st))) | set(range(st, en))
    c = cfg.named_line_context
    for row in named_rows(texts, wanted, cfg.named_line_uses):
        keep.update(range(max(0, row - c), min(len(texts), row + c + 1)))
    return sorted(keep)


def best_window(
    pairs: Numbered, terms: Collection[str], config: ConstructConfig, keep_tail: bool = False
) -> tuple[Numbered, bool]:
    """A large code body cut to its best ``window_lines`` window (term overlap; the tail for
    an insertion point) after its first ``window_head_lines`` lines, with the lines around
    each row naming one of the decision's identifiers whole (:func:`window_rows`); returns
    ``(pairs, was_cut)``. Bodies up to ``large_item_lines`` lines stay whole."""
    cfg = config.compress
    if len(pairs) <= cfg.large_item_lines:
        return pairs, False
    if keep_tail:
        return pairs[-cfg.window_lines :], True
    texts = [t for _, t in pairs]
    if cfg.window_code_only:
        # A docstring repeats the task's words without being what changes: score code.
        texts = [t if c else "" for t, c in zip(texts, code_rows(texts), strict=True)]
    rows = window_rows(texts, set(terms), cfg.window_lines, config, cfg.window_head_lines)
    return tuple(pairs[i] for i in rows), True


def body_window(
    item: EvidenceItem,
    pairs: Numbered,
    terms: Collection[str],
    config: ConstructConfig,
    keep_tail: bool = False,
) -> tuple[Numbered, bool]:
    """:func:`best_window` of ``item``'s lines ``pairs``, the window taken from the
    definition's own lines (:func:`own_lines`) when the body is cut: a window of a whole file
    or of a class header plus a method must still show the definition its header names."""
    if len(pairs) <= config.compress.large_item_lines:
        return pairs, False
    own = own_lines(item, pairs)
    if len(own) <= config.compress.large_item_lines:
        return own, True
    return best_window(own, terms, config, keep_tail)


__all__ = [
    "Numbered",
    "best_line_windows",
    "best_window",
    "body_window",
    "code_rows",
    "own_lines",
    "window_rows",
]
