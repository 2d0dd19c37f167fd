"""Why a window misses a gold hunk, and what its largest block spends the tokens on.

Every-hunk coverage says *that* a window failed; improving it needs *how*: was the hunk's
file never put in the window (a ranking problem), or was the file there but shown without
those lines — cut short, as a skeleton, or as other parts of it (a representation
problem)? And when a window misses, is its biggest block at least about the fix? These are
pure functions over a system's delivered pieces (:class:`~ctxfast.eval.systems.Candidate`),
the gold regions and the files' line counts, so the taxonomy is pinned by hand-made tests.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ctxfast.eval.instances import Region, language_of_path
from ctxfast.eval.metrics import p50, shows_gold

FILE_ABSENT = "file_absent"
FILE_PRESENT = "file_present"

#: How a present file is shown when one of its hunks is missed, first that applies:
#: some of the hunk's lines are shown but not all; the file is shown from its top and cut
#: before the hunk (stuffing's last file, a truncated block); only signatures or a skeleton
#: of it are shown; other parts of it are shown (other definitions, module-level lines).
PARTLY_SHOWN = "hunk_partly_shown"
CUT = "whole_file_cut"
SKELETON = "signature_or_skeleton"
OTHER_PARTS = "other_parts"
FORMS = (PARTLY_SHOWN, CUT, SKELETON, OTHER_PARTS)

TASK_OUTCOMES = ("covered", "some_file_absent", "only_present_misses")

#: A block showing at least this share of its file's lines counts as the whole file.
WHOLE_SHARE = 0.9

_SKELETON_RENDERINGS = ("signature", "digest")
_CUT_VIEWS = ("file:prefix",)

LineCount = Callable[[str], int | None]


def _role(view: str | None) -> str:
    return (view or "").split(":", 1)[0]


def _rendering(view: str | None) -> str:
    return (view or "").rsplit(":", 1)[-1]


def is_skeleton(view: str | None) -> bool:
    """A block that shows a file's shape, not its code: a file outline, or a signature or
    digest rendering (``Candidate.view`` is ``role:rendering``)."""
    return _role(view) == "file_outline" or _rendering(view) in _SKELETON_RENDERINGS


def is_cut(view: str | None) -> bool:
    """A block that is a file (or body) cut at the budget: stuffing's last, partly fitting
    file, or a window block rendered ``truncated``."""
    return view in _CUT_VIEWS or _rendering(view) == "truncated"


def shown_by_file(cands: Sequence[Any]) -> dict[str, set[int]]:
    """The lines each file has in front of the model, over all its pieces."""
    out: dict[str, set[int]] = {}
    for c in cands:
        out.setdefault(c.file, set()).update(n for _, n in c.lines())
    return out


def present_form(pieces: Sequence[Any], hunk: Region, shown: set[int]) -> str:
    """How a present file shows a hunk it does not show whole (see :data:`FORMS`)."""
    if any(hunk.start <= n <= hunk.end for n in shown):
        return PARTLY_SHOWN
    if any(is_cut(p.view) for p in pieces):
        return CUT
    if pieces and all(is_skeleton(p.view) for p in pieces):
        return SKELETON
    return OTHER_PARTS


def _gap(hunk: Region, shown: set[int]) -> int | None:
    """Lines between the hunk and the nearest shown line of its file (None: none shown)."""
    if not shown:
        return None
    return min(max(hunk.start - n, n - hunk.end, 0) for n in shown)


def missed_hunks(
    cands: Sequence[Any], gold: Sequence[Region], line_count: LineCount
) -> list[dict[str, Any]]:
    """Every gold hunk not shown whole, with why: its file absent from the window, or
    present and in what form (:func:`present_form`), the blocks' views, how many of the
    file's lines are shown and how far the nearest one is from the hunk."""
    shown = shown_by_file(cands)
    out = []
    for h in gold:
        have = shown.get(h.file)
        if have is not None and all(n in have for n in range(h.start, h.end + 1)):
            continue
        miss: dict[str, Any] = {"file": h.file, "start": h.start, "end": h.end}
        if have is None:
            out.append({**miss, "status": FILE_ABSENT})
            continue
        pieces = [c for c in cands if c.file == h.file]
        out.append(
            {
                **miss,
                "status": FILE_PRESENT,
                "form": present_form(pieces, h, have),
                "views": sorted({p.view or "?" for p in pieces}),
                "shown_lines": len(have),
                "file_lines": line_count(h.file),
                "gap": _gap(h, have),
            }
        )
    return out


def file_relation(path: str, gold_files: Sequence[str]) -> str:
    """What a file is to the task: a gold file, a test, an example, other source code of
    the project, or not code at all (docs, configuration, data)."""
    from ctxfast.text import is_example_path, is_test_path

    if path in gold_files:
        return "gold file"
    if is_test_path(path):
        return "test file"
    if is_example_path(path):
        return "example file"
    if language_of_path(path) is not None:
        return "non-gold source"
    return "non-code file"


def block_kind(piece: Any, file_lines: int | None, gold_files: Sequence[str]) -> str:
    """A short label of what a block is: its view, whole file or part, and its file's
    relation to the task (``change_target:verbatim, whole file, non-gold source``)."""
    n = len(piece.lines())
    whole = bool(file_lines) and n >= WHOLE_SHARE * file_lines  # type: ignore[operator]
    extent = "whole file" if whole else "part"
    return f"{piece.view or '?'}, {extent}, {file_relation(piece.file, gold_files)}"


def largest_block(
    cands: Sequence[Any],
    gold: Sequence[Region],
    gold_files: Sequence[str],
    line_count: LineCount,
) -> dict[str, Any] | None:
    """The block costing the most tokens (first of equals), whether it shows a gold hunk
    line, and its :func:`block_kind`. None when no piece says what it costs."""
    priced = [c for c in cands if c.tokens > 0]
    if not priced:
        return None
    big = max(priced, key=lambda c: c.tokens)
    lines = [n for _, n in big.lines()]
    n_file = line_count(big.file)
    return {
        "file": big.file,
        "tokens": big.tokens,
        "view": big.view,
        "shown_lines": len(lines),
        "file_lines": n_file,
        "holds_gold": shows_gold(big.file, lines, gold),
        "gold_file": big.file in gold_files,
        "kind": block_kind(big, n_file, gold_files),
    }


def block_summaries(
    cands: Sequence[Any],
    gold: Sequence[Region],
    gold_files: Sequence[str],
    line_count: LineCount,
) -> list[dict[str, Any]]:
    """Every priced block in window order: its file, view, tokens, how many lines it shows
    of how many, whether that is the whole file, the file's relation to the task and how
    many gold hunk lines it shows. What the window spends where, for the whole-file and
    per-relation token accounts of :func:`token_accounts`."""
    out = []
    for c in cands:
        if c.tokens <= 0:
            continue
        lines = [n for _, n in c.lines()]
        n_file = line_count(c.file)
        golden = {n for n in lines for g in gold if g.file == c.file and g.start <= n <= g.end}
        out.append(
            {
                "file": c.file,
                "view": c.view,
                "tokens": c.tokens,
                "shown_lines": len(lines),
                "file_lines": n_file,
                "whole": bool(n_file) and len(lines) >= WHOLE_SHARE * n_file,  # type: ignore[operator]
                "relation": file_relation(c.file, gold_files),
                "gold_lines": len(golden),
            }
        )
    return out


def token_accounts(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Where a system's block tokens go over all windows: per file relation (gold file,
    test, other source, ...) the tokens and their share; and the blocks showing a file
    whole: how many, their tokens, and how many of them (and of their tokens) show a gold
    line. Rows without ``blocks`` count nothing."""
    blocks = [b for r in rows for b in r.get("blocks") or []]
    total = sum(b["tokens"] for b in blocks) or 1
    by_relation: dict[str, int] = {}
    for b in blocks:
        by_relation[b["relation"]] = by_relation.get(b["relation"], 0) + b["tokens"]
    whole = [b for b in blocks if b["whole"]]
    golden = [b for b in whole if b["gold_lines"]]
    return {
        "tokens": sum(b["tokens"] for b in blocks),
        "relation_share": {
            k: round(v / total, 3) for k, v in sorted(by_relation.items(), key=lambda kv: -kv[1])
        },
        "whole_file_blocks": len(whole),
        "whole_file_tokens": sum(b["tokens"] for b in whole),
        "whole_file_blocks_with_gold": len(golden),
        "whole_file_tokens_with_gold": sum(b["tokens"] for b in golden),
    }


def task_outcome(missed: Sequence[Mapping[str, Any]]) -> str:
    """A task by its worst miss: ``covered``, ``some_file_absent`` (a ranking problem
    first) or ``only_present_misses`` (every gold file is in, some lines are not)."""
    if not missed:
        return "covered"
    if any(m["status"] == FILE_ABSENT for m in missed):
        return "some_file_absent"
    return "only_present_misses"


def _quartiles(values: Sequence[int]) -> list[int] | None:
    """Lower quartile, median and upper quartile (nearest rank), None without values."""
    if not values:
        return None
    v = sorted(values)
    return [v[min(len(v) - 1, (len(v) * q) // 4)] for q in (1, 2, 3)]


def miss_counts(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The taxonomy over a system's rows. Hunks are counted, but one large multi-file fix
    holds dozens of them, so the tasks are counted too: by :func:`task_outcome`, and per
    form, the tasks with at least one present-file miss of that form. The gap quartiles
    say how far the missed lines of a present file are from its nearest shown line."""
    misses = [m for r in rows for m in r.get("missed_hunks") or []]
    present = [m for m in misses if m["status"] == FILE_PRESENT]
    outcomes = [task_outcome(r.get("missed_hunks") or []) for r in rows]

    def tasks_with(form: str) -> int:
        return sum(
            1 for r in rows if any(m.get("form") == form for m in r.get("missed_hunks") or [])
        )

    return {
        "instances": len(rows),
        "instances_missing": sum(1 for r in rows if r.get("missed_hunks")),
        "tasks": {k: outcomes.count(k) for k in TASK_OUTCOMES},
        "hunks": sum(r.get("hunks", 0) for r in rows),
        "hunks_missed": len(misses),
        FILE_ABSENT: len(misses) - len(present),
        FILE_PRESENT: len(present),
        "present_forms": {f: sum(1 for m in present if m["form"] == f) for f in FORMS},
        "present_form_tasks": {f: tasks_with(f) for f in FORMS},
        "present_gap_quartiles": _quartiles(
            [m["gap"] for m in present if m.get("gap") is not None]
        ),
    }


def unrelated_largest(rows: Sequence[Mapping[str, Any]], top: int = 5) -> dict[str, Any]:
    """Windows whose largest block shows no gold line, and the ``top`` most common kinds
    of that block (ties by name, for a stable order)."""
    blocks = [r["largest_block"] for r in rows if r.get("largest_block")]
    unrelated = [b for b in blocks if not b["holds_gold"]]
    counts: dict[str, int] = {}
    for b in unrelated:
        counts[b["kind"]] = counts.get(b["kind"], 0) + 1
    ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    return {
        "windows": len(blocks),
        "unrelated": len(unrelated),
        "unrelated_tokens_p50": p50(b["tokens"] for b in unrelated),
        "top_kinds": [{"kind": k, "windows": n} for k, n in ranked[:top]],
    }


__all__ = [
    "CUT",
    "FILE_ABSENT",
    "FILE_PRESENT",
    "FORMS",
    "OTHER_PARTS",
    "PARTLY_SHOWN",
    "SKELETON",
    "TASK_OUTCOMES",
    "block_kind",
    "block_summaries",
    "file_relation",
    "is_cut",
    "is_skeleton",
    "largest_block",
    "miss_counts",
    "missed_hunks",
    "present_form",
    "shown_by_file",
    "task_outcome",
    "token_accounts",
    "unrelated_largest",
]
