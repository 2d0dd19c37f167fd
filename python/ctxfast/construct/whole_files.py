"""Which files a window shows whole: one value-per-token rule over the best-ranked files.

A file shown whole holds every line an edit in it could touch, so what it is worth is the
chance that the fix is in it, and what it costs is its tokens. Retrieval's file rank says
how likely that is: the best-ranked file holds the fix far more often than the second, the
second more than the third (``WholeFileSettings.prior``). A file at rank ``r`` is
shown whole, as a change target, when its tokens are at most ``share`` of the
window's target scaled by ``prior(r) / prior(1)``: the best file may take most of the
window, a fourth-ranked one an eighth of it. The files that qualify are taken most likely
first, all of them within ``total_share`` of the target (taken cheapest per unit of
prior first, two small third- and fourth-ranked files pushed the best-ranked one out).

A file not worth its tokens as a target can still fill the room the window has left: the
best-ranked library files are offered whole to the fill, scored below every retrieved
candidate (:func:`spare_files`), so they take only what nothing retrieved wanted.

Neither ever shows a test, documentation, an example, a benchmark, vendored or generated
code (:func:`~ctxfast.text.is_product_path`): a fix is made in the product's own source.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import ClassVar

from ctxfast.construct.schema import CodeCandidate, LogEntry, Origin
from ctxfast.text import is_product_path

CountWithin = Callable[[str, int], int | None]


@dataclass(frozen=True)
class WholeFileSettings:
    """Which files and definitions a window shows whole (``DefaultsConfig.whole_files``).
    A share is of the window's target size (``ConstructConfig.target_tokens``)."""

    FLAT_NAMES: ClassVar[Mapping[str, str]] = {
        "prior": "whole_file_prior",
        "share": "whole_file_share",
        "total_share": "whole_files_share",
        "prior_power": "whole_file_prior_power",
        "target_share": "whole_target_share",
    }

    #: The chance that the file retrieval ranks first, second, ... holds the fix, as
    #: measured on real issues: the best-ranked file far more often than the second. A file
    #: ranked past the table is never shown whole; an empty table switches the rule off.
    prior: tuple[float, ...] = (0.60, 0.25, 0.12, 0.12, 0.09, 0.06, 0.06, 0.05)
    #: The best-ranked file is shown whole when it takes at most this share (0.65) of the
    #: target; a file further down the ranking gets its rank's part of that (see
    #: ``prior_power``). Most of the window, since the best file holds most fixes, while
    #: room is left for what the fix calls and what calls it.
    share: float = 0.65
    #: All whole files together take at most this share (0.8) of the target.
    total_share: float = 0.8
    #: How a file's cap shrinks with its rank: ``share`` × (prior(rank) / prior(1)) to this
    #: power. The square root (0.5): a smaller, lower-ranked file still fits, where a linear
    #: cap left out the small files that held a fix.
    prior_power: float = 0.5
    #: A change target whose file is not shown whole is shown as its whole definition (a long
    #: function, a whole class) when it takes at most this share (0.35) of the target, scaled
    #: by its file's rank as above; 0: never.
    target_share: float = 0.35
    #: The room a window has left after everything else goes to the best-ranked files not
    #: yet shown whole, up to this many (3), each at most ``share`` of the target: a small
    #: repository's window otherwise ends far below its target.
    spare_files: int = 3


def as_whole_file(cand: CodeCandidate, text: str, n_lines: int) -> CodeCandidate:
    """``cand`` carrying its whole file (``text``, ``n_lines`` lines) as its lines; its span
    stays the definition's, so the window can say where in the file it is. Construction
    never cuts such a candidate."""
    return replace(cand, lines=tuple(range(1, n_lines + 1)), text=text, whole_file=True)


def _prior(prior: Sequence[float], rank: int) -> float:
    """The chance that the file at 0-based ``rank`` holds the fix (0 past the table)."""
    return prior[rank] if rank < len(prior) else 0.0


def _rank_cap(cfg: WholeFileSettings, share: float, target_tokens: int, p: float) -> int:
    """The tokens a unit may take when its file's prior is ``p``: ``share`` of the target
    scaled by ``(p / prior(1)) ** prior_power``."""
    return int(target_tokens * share * (p / cfg.prior[0]) ** cfg.prior_power)


def _carrier(candidates: Sequence[CodeCandidate], path: str, heads: Sequence[str]) -> int | None:
    """The candidate that carries ``path`` whole: its first change target in ``heads``
    order, else its best-scored retrieved definition (a change target is named by its
    entity); None when the file has neither."""
    order = {h: i for i, h in enumerate(heads)}
    targets = [
        (order[c.qualname], i)
        for i, c in enumerate(candidates)
        if c.file == path and c.qualname in order
    ]
    if targets:
        return min(targets)[1]
    picks = [
        (-c.score, i)
        for i, c in enumerate(candidates)
        if c.file == path and c.origin == Origin.RETRIEVAL and c.qualname
    ]
    return min(picks)[1] if picks else None


def with_whole_files(
    read_lines: Callable[[str], list[str]],
    candidates: Sequence[CodeCandidate],
    heads: Sequence[str],
    ranked_files: Sequence[str],
    cfg: WholeFileSettings,
    target_tokens: int,
    count_within: CountWithin,
    *,
    guesses: bool = True,
) -> tuple[list[CodeCandidate], list[LogEntry], int]:
    """The files worth showing whole (see the module doc), each carried by one of its
    candidates as the whole file. Candidates are the change targets' files and, with
    ``guesses``, the best-ranked files without one (their best retrieved definition becomes
    a change target). ``count_within(text, limit)`` is the token count of ``text`` when it
    is at most ``limit``, else ``None`` (it stops counting there: a huge file costs no full
    count). Also returns the tokens the whole files take."""
    prior = cfg.prior
    room = int(target_tokens * cfg.total_share)
    top = prior[0] if prior else 0.0
    if room <= 0 or top <= 0 or cfg.share <= 0:
        return list(candidates), [], 0
    head_files = {c.file for c in candidates if c.qualname in set(heads)}
    rank = {f: n for n, f in enumerate(ranked_files)}
    files = [f for f in ranked_files[: len(prior)] if guesses or f in head_files]
    files += sorted(head_files - set(files), key=lambda f: rank.get(f, len(rank)))
    offers: list[tuple[float, int, str, int, str, int]] = []
    for path in files:
        # A change target's file retrieval did not rank counts as the table's last rank.
        r = rank.get(path, len(prior) - 1)
        p = _prior(prior, r)
        if p <= 0 or not is_product_path(path):
            continue
        carrier = _carrier(candidates, path, heads)
        lines = read_lines(path) if carrier is not None else []
        if not lines:
            continue
        text = "\n".join(lines)
        cap = _rank_cap(cfg, cfg.share, target_tokens, p)
        tokens = count_within(text, min(cap, room))
        if tokens is None:
            continue
        offers.append((-p, r, path, tokens, text, len(lines)))
    out = list(candidates)
    log: list[LogEntry] = []
    used = 0
    for _, r, path, tokens, text, n_lines in sorted(offers):
        i = _carrier(out, path, heads)
        if tokens > room or i is None:  # every offer had a carrier; the check is for types
            continue
        room -= tokens
        used += tokens
        c = out[i]
        out[i] = as_whole_file(c, text, n_lines)
        log.append(
            LogEntry(
                "defaults",
                c.qualname or path,
                "whole_file",
                f"{n_lines} lines, {tokens} tokens, ranked {r + 1}: the file shown whole as "
                "a change target (worth its tokens at its rank)",
                path,
            )
        )
    return out, log, used


def with_whole_targets(
    read_lines: Callable[[str], list[str]],
    candidates: Sequence[CodeCandidate],
    heads: Sequence[str],
    ranked_files: Sequence[str],
    cfg: WholeFileSettings,
    target_tokens: int,
    count_within: CountWithin,
    large_item_lines: int,
    used: int = 0,
) -> tuple[list[CodeCandidate], list[LogEntry]]:
    """Change targets shown as their whole definition when their file is not shown whole:
    a long function construction would cut to a window of lines, a class it would show as
    a view of some members. The next unit down from the file, under the same value-per-
    token cap (the file's rank), in ``heads`` order, within what ``total_share``
    leaves after ``used`` tokens of whole files. The definition keeps the lines it already
    carried (its class's header, its imports)."""
    prior = cfg.prior
    room = int(target_tokens * cfg.total_share) - used
    top = prior[0] if prior else 0.0
    if room <= 0 or top <= 0 or cfg.target_share <= 0:
        return list(candidates), []
    rank = {f: n for n, f in enumerate(ranked_files)}
    order = {h: i for i, h in enumerate(heads)}
    out = list(candidates)
    log: list[LogEntry] = []
    targets = sorted(
        (order[c.qualname], i)
        for i, c in enumerate(out)
        if c.qualname in order and not c.whole_file and not c.uncut
    )
    for _, i in targets:
        c = out[i]
        lines = read_lines(c.file)
        span = range(c.start_line, min(c.end_line, len(lines)) + 1)
        shown = set(c.lines) if c.lines is not None else set(span)
        if set(span) <= shown and len(span) <= large_item_lines:
            continue  # shown whole already, and construction keeps a body this long whole
        p = _prior(prior, rank.get(c.file, len(prior) - 1))
        if p <= 0 or not is_product_path(c.file):
            continue
        keep = tuple(sorted(shown | set(span)))
        text = "\n".join(lines[n - 1] for n in keep)
        cap = _rank_cap(cfg, cfg.target_share, target_tokens, p)
        tokens = count_within(text, min(cap, room))
        if tokens is None:
            continue
        room -= tokens
        out[i] = replace(c, lines=keep, text=text, uncut=True)
        log.append(
            LogEntry(
                "defaults",
                c.qualname or c.file,
                "whole_definition",
                f"{len(span)} lines, {tokens} tokens: the change target shown whole, "
                "not cut to a window or a view of its members",
                c.file,
            )
        )
    return out, log


def spare_files(
    read_lines: Callable[[str], list[str]],
    candidates: Sequence[CodeCandidate],
    ranked_files: Sequence[str],
    cfg: WholeFileSettings,
    target_tokens: int,
    count_within: CountWithin,
) -> list[CodeCandidate]:
    """The best-ranked product files as whole-file candidates scored below every retrieved
    one, so the fill shows each only in the room left after all of them.

    A small repository's window often ends far below its target: the retrieved definitions
    are few and short, and the rest are tests the gate turns away, while the file to change
    was ranked among the first by retrieval and never shown. Each of the ``spare_files``
    best-ranked product files not already whole is read whole or not at all, at most
    ``share`` of the target."""
    positive = [c.score for c in candidates if c.origin == Origin.RETRIEVAL and c.score > 0]
    room = int(target_tokens * cfg.share)
    if not positive or room <= 0 or cfg.spare_files <= 0:
        return []
    whole = {c.file for c in candidates if c.whole_file}
    files = [f for f in ranked_files if is_product_path(f) and f not in whole]
    score = min(positive) / 2
    out = []
    for path in files[: cfg.spare_files]:
        lines = read_lines(path)
        text = "\n".join(lines)
        if not lines or count_within(text, room) is None:
            continue
        out.append(
            CodeCandidate(
                qualname=None,
                kind="module",
                file=path,
                start_line=1,
                end_line=len(lines),
                score=score,
                signature=None,
                text=text,
                provenance="a best-ranked file, shown whole in the room the window has left",
                origin=Origin.RETRIEVAL,
                lines=tuple(range(1, len(lines) + 1)),
                whole_file=True,
            )
        )
    return out


__all__ = [
    "as_whole_file",
    "spare_files",
    "with_whole_files",
    "with_whole_targets",
]
