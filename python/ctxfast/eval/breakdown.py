"""The window against BM25 stuffing at the same tokens, slice by slice of the benchmark.

One overall figure hides where a window fails: a language whose files the ranking misses,
multi-file fixes whose second file never makes it in, or a gain carried by a few
repositories. ``window_breakdown`` gives every-hunk coverage, gold-file presence and tokens
p50 of both systems overall, per language group, for single- and multi-file fixes and for
two fixed halves of the repositories (a change that helps on one half only is noise), with
the miss taxonomy and the largest-block kinds of :mod:`ctxfast.eval.window_misses`. Pure
functions over ``results.json``'s ``per_instance`` entries.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ctxfast.eval import metrics as M
from ctxfast.eval import window_misses as W

#: Language groups of the table: C and C++ together (one project's headers are parsed as
#: either), JavaScript and TypeScript together (a JS repository may hold .ts gold files).
LANGUAGE_GROUPS = {
    "python": "python",
    "go": "go",
    "rust": "rust",
    "c": "c/cpp",
    "cpp": "c/cpp",
    "java": "java",
    "javascript": "js/ts",
    "typescript": "js/ts",
}
GROUP_ORDER = ("python", "go", "rust", "c/cpp", "java", "js/ts")
HALF_RULE = (
    "repositories of the benchmark file sorted by the sha256 hex digest of 'owner/name'; "
    "the first ceil(n/2) are half A, the others half B"
)
#: The two systems the breakdown compares, by role.
ROLES = ("window", "bm25_same_tokens")
TASK_FIELDS = (
    "covered",
    "gold_files_present",
    "tokens",
    "missed_hunks",
    "largest_block",
    "blocks",
)


def language_group(language: str) -> str:
    """The table's group of a record's language (an unlisted language is its own group)."""
    return LANGUAGE_GROUPS.get(language, language)


def repo_halves(repos: Iterable[str]) -> dict[str, str]:
    """``repo -> "A" | "B"`` by :data:`HALF_RULE`: fixed by the names alone, so every run on
    the same benchmark file splits it the same way, whatever subset it scores."""
    order = sorted(set(repos), key=lambda r: hashlib.sha256(r.encode()).hexdigest())
    cut = (len(order) + 1) // 2
    return {r: ("A" if n < cut else "B") for n, r in enumerate(order)}


def groups_of(entry: Mapping[str, Any], halves: Mapping[str, str]) -> list[str]:
    """The slices one ``per_instance`` entry counts in."""
    out = ["all", f"lang {language_group(entry['language'])}"]
    out.append("multi-file" if entry.get("multi_file") else "single-file")
    if entry["repo"] in halves:
        out.append(f"half {halves[entry['repo']]}")
    return out


def _group_rank(name: str) -> tuple[int, int, str]:
    kind, _, value = name.partition(" ")
    kinds = ("all", "lang", "single-file", "multi-file", "half")
    known = GROUP_ORDER.index(value) if value in GROUP_ORDER else len(GROUP_ORDER)
    return kinds.index(kind) if kind in kinds else len(kinds), known, value


def slice_metrics(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Every-hunk coverage, gold-file presence and tokens p50 of one system on one slice."""
    return {
        "instances": len(rows),
        "covered": sum(1 for r in rows if r["covered"]),
        "gold_coverage": M.share(r["covered"] for r in rows),
        "gold_file_presence": M.share(r["gold_files_present"] for r in rows),
        "tokens_p50": M.p50(r["tokens"] for r in rows),
    }


def _roles(entries: Sequence[Mapping[str, Any]], systems: Mapping[str, str]) -> dict[str, Any]:
    return {role: slice_metrics([e[s] for e in entries]) for role, s in systems.items()}


def breakdown(
    per_instance: Sequence[Mapping[str, Any]],
    systems: Mapping[str, str],
    halves: Mapping[str, str],
) -> dict[str, Any]:
    """``window_breakdown``: per slice, each role's :func:`slice_metrics` (``systems`` maps a
    role to the system name its rows are filed under), then the miss taxonomy and the
    largest-block kinds of each role over all instances."""
    slices: dict[str, list[Mapping[str, Any]]] = {}
    for e in per_instance:
        for g in groups_of(e, halves):
            slices.setdefault(g, []).append(e)
    groups = {
        g: {"instances": len(es), **_roles(es, systems)}
        for g, es in sorted(slices.items(), key=lambda kv: _group_rank(kv[0]))
    }
    every = {role: [e[s] for e in per_instance] for role, s in systems.items()}
    return {
        "systems": dict(systems),
        "half_rule": HALF_RULE,
        "halves": {h: sorted(r for r, x in halves.items() if x == h) for h in ("A", "B")},
        "groups": groups,
        "misses": {role: W.miss_counts(rows) for role, rows in every.items()},
        "largest_block_unrelated": {
            role: W.unrelated_largest(rows) for role, rows in every.items()
        },
        "token_accounts": {role: W.token_accounts(rows) for role, rows in every.items()},
        "curve": {g: curve_points(slices[g]) for g in groups},
    }


def curve_points(entries: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, float | None]]:
    """Every-hunk coverage of one slice at each curve target: ``{target: {"window": share,
    "stuffing": share}}`` over the entries that carry the curve (empty without one)."""
    out: dict[str, dict[str, float | None]] = {}
    with_curve = [e["curve"] for e in entries if e.get("curve")]
    for target in with_curve[0]["window"] if with_curve else ():
        out[target] = {
            side: M.share(c[side][target]["covered"] for c in with_curve)
            for side in ("window", "stuffing")
        }
    return out


def format_curve(bd: Mapping[str, Any]) -> str:
    """The curve per slice as a Markdown table (window / stuffing at each target), or
    nothing when the run had no curve."""
    curve = {g: pts for g, pts in (bd.get("curve") or {}).items() if pts}
    if not curve:
        return ""
    targets = list(next(iter(curve.values())))
    head = "| slice | " + " | ".join(f"{t} window / stuffing" for t in targets) + " |"
    lines = [head, "|" + "---|" * (1 + len(targets))]
    for g, pts in curve.items():
        cells = " | ".join(
            f"{_pct(pts[t]['window'])} / {_pct(pts[t]['stuffing'])}" for t in targets
        )
        lines.append(f"| {g} | {cells} |")
    return "\n".join(lines)


def _pct(x: float | None) -> str:
    return "–" if x is None else f"{x:.3f}"


def _tok(x: float | None) -> str:
    return "–" if x is None else f"{x:.0f}"


def format_table(bd: Mapping[str, Any]) -> str:
    """The slices as a Markdown table, one column pair per role (coverage, files, tokens)."""
    roles = list(bd["systems"])
    head = "| slice | n | " + " | ".join(
        f"{r} every-hunk | {r} gold files | {r} tokens p50" for r in roles
    )
    lines = [head + " |", "|" + "---|" * (2 + 3 * len(roles))]
    for g, m in bd["groups"].items():
        cells = " | ".join(
            f"{_pct(m[r]['gold_coverage'])} | {_pct(m[r]['gold_file_presence'])} | "
            f"{_tok(m[r]['tokens_p50'])}"
            for r in roles
        )
        lines.append(f"| {g} | {m['instances']} | {cells} |")
    return "\n".join(lines)


def format_misses(bd: Mapping[str, Any]) -> str:
    """The miss taxonomy and the most common unrelated largest blocks, per role."""
    lines = []
    for role, c in bd["misses"].items():
        forms = ", ".join(
            f"{k} {v} ({c['present_form_tasks'][k]} tasks)" for k, v in c["present_forms"].items()
        )
        tasks = ", ".join(f"{k} {v}" for k, v in c["tasks"].items())
        lines.append(
            f"- {role}: tasks {tasks}; {c['hunks_missed']} of {c['hunks']} hunks missed: "
            f"file absent {c[W.FILE_ABSENT]}, file present {c[W.FILE_PRESENT]} ({forms}); "
            f"present-file gap to the nearest shown line, quartiles "
            f"{c['present_gap_quartiles']} lines"
        )
    for role, u in bd["largest_block_unrelated"].items():
        lines.append(
            f"- {role}: largest block shows no gold line in {u['unrelated']} of "
            f"{u['windows']} windows (their tokens p50 {_tok(u['unrelated_tokens_p50'])}); "
            "most common kinds:"
        )
        lines.extend(f"  - {k['windows']} × {k['kind']}" for k in u["top_kinds"])
    for role, a in (bd.get("token_accounts") or {}).items():
        shares = ", ".join(f"{k} {v:.3f}" for k, v in a["relation_share"].items())
        lines.append(
            f"- {role}: block tokens by file relation: {shares}; files shown whole: "
            f"{a['whole_file_blocks']} blocks, {a['whole_file_tokens']} tokens, of which "
            f"{a['whole_file_blocks_with_gold']} blocks ({a['whole_file_tokens_with_gold']} "
            "tokens) show a gold line"
        )
    return "\n".join(lines)


def format_markdown(bd: Mapping[str, Any]) -> str:
    """The whole breakdown as Markdown (the ``--summary-md`` file)."""
    names = ", ".join(f"{r} = `{s}`" for r, s in bd["systems"].items())
    return (
        f"Systems: {names}.\n\nHalves: {bd['half_rule']}.\n\n{format_table(bd)}\n\n"
        f"Misses and largest blocks:\n\n{format_misses(bd)}\n"
        + (
            f"\nEvery-hunk coverage by target size:\n\n{curve}\n"
            if (curve := format_curve(bd))
            else ""
        )
    )


def task_records(
    per_instance: Sequence[Mapping[str, Any]],
    systems: Mapping[str, str],
    halves: Mapping[str, str],
) -> list[dict[str, Any]]:
    """One compact record per task (the ``--tasks-jsonl`` file): its slices, and per role
    whether it covered, what it missed and why, and its largest block."""
    out = []
    for e in per_instance:
        rec: dict[str, Any] = {
            "instance_id": e["instance_id"],
            "repo": e["repo"],
            "language": e["language"],
            "language_group": language_group(e["language"]),
            "multi_file": bool(e.get("multi_file")),
            "half": halves.get(e["repo"]),
            "gold_files": e["gold_files"],
            "hunks": e["located_hunks"],
        }
        for role, s in systems.items():
            rec[role] = {k: e[s].get(k) for k in TASK_FIELDS}
        out.append(rec)
    return out


__all__ = [
    "GROUP_ORDER",
    "HALF_RULE",
    "LANGUAGE_GROUPS",
    "ROLES",
    "breakdown",
    "curve_points",
    "format_curve",
    "format_markdown",
    "format_misses",
    "format_table",
    "groups_of",
    "language_group",
    "repo_halves",
    "slice_metrics",
    "task_records",
]
