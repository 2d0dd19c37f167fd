"""The keep-or-revert decision rules of retrieval, reconnaissance and construction, applied
to two results files (where the rules come from: ARCHITECTURE.md, "Sources").

``A`` is the current system, ``B`` the candidate. Each rule lists its inputs and a verdict.
Conditions that need a model run (resolve rate, $ cost, end-to-end tokens) cannot be measured
offline: they are printed as unmeasured and the verdict says it covers the offline conditions
only — they are never assumed to pass silently.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ctxfast.eval.errors import EvalError

RETRIEVAL_UP = (
    "recall@1",
    "recall@3",
    "recall@5",
    "mrr",
    "required_file_recall",
    "required_symbol_recall",
)
MODEL_CONDITIONS = ("resolve", "cost ≤ 1.5×", "tokens ≤ 1.5×")


def flat(metrics: Mapping[str, Any]) -> dict[str, float | None]:
    """The scalar metrics of a results dict (top level, or one ``baseline`` entry)."""
    recall = metrics.get("file_recall_mean") or {}
    out: dict[str, float | None] = {f"recall@{k}": recall.get(str(k)) for k in (1, 3, 5, 10)}
    for key in (
        "mrr",
        "required_file_recall",
        "required_symbol_recall",
        "irrelevant_context_ratio",
        "tokens_retrieved_p50",
        "region_recall_at_5",
        "context_efficiency",
        "question_accuracy",
        "gold_coverage",
        "relevance_precision",
        "tokens_per_covered",
        "gold_file_presence",
        "window_tokens_p50",
    ):
        out[key] = metrics.get(key)
    return out


def _cond(name: str, a: float | None, b: float | None, op: str) -> dict[str, Any]:
    if a is None or b is None:
        ok = None
    elif op == ">":
        ok = b > a
    elif op == ">=":
        ok = b >= a
    elif op == "<=":
        ok = b <= a
    elif op == "<":
        ok = b < a
    else:  # pragma: no cover - internal table
        raise ValueError(op)
    return {"condition": f"{name}: B {op} A", "A": a, "B": b, "ok": ok}


def _verdict(conds: list[dict[str, Any]], required: set[int]) -> str:
    """WIN iff every evaluable condition holds and every ``required`` one is evaluable."""
    if any(conds[i]["ok"] is None for i in required):
        return "NOT EVALUABLE"
    if any(c["ok"] is False for c in conds):
        return "LOSE"
    return "WIN (offline conditions; resolve/cost/tokens need a model run)"


def retrieval_rule(a: Mapping[str, Any], b: Mapping[str, Any]) -> dict[str, Any]:
    """Retrieval: ≥1 retrieval metric strictly up, none down, noise metrics not up."""
    fa, fb = flat(a), flat(b)
    measured = [m for m in RETRIEVAL_UP if fa[m] is not None and fb[m] is not None]
    ups = [m for m in measured if fb[m] > fa[m]]  # type: ignore[operator]
    conds = [
        {
            "condition": "at least one retrieval metric strictly improves",
            "A": None,
            "B": ups,
            "ok": bool(ups) if measured else None,
        }
    ]
    conds += [_cond(m, fa[m], fb[m], ">=") for m in measured]
    conds.append(
        _cond(
            "irrelevant_context_ratio",
            fa["irrelevant_context_ratio"],
            fb["irrelevant_context_ratio"],
            "<=",
        )
    )
    conds.append(
        _cond("tokens_retrieved_p50", fa["tokens_retrieved_p50"], fb["tokens_retrieved_p50"], "<=")
    )
    return {
        "rule": "retrieval",
        "conditions": conds,
        "unmeasured": list(MODEL_CONDITIONS),
        "verdict": _verdict(conds, {0}),
    }


def recon_rule(a: Mapping[str, Any], b: Mapping[str, Any]) -> dict[str, Any]:
    """Reconnaissance: recall@5 strictly up, Context Efficiency and question accuracy not down."""
    fa, fb = flat(a), flat(b)
    conds = [
        _cond("region_recall_at_5", fa["region_recall_at_5"], fb["region_recall_at_5"], ">"),
        _cond("context_efficiency", fa["context_efficiency"], fb["context_efficiency"], ">="),
    ]
    if fa["question_accuracy"] is not None or fb["question_accuracy"] is not None:
        conds.append(
            _cond("question_accuracy", fa["question_accuracy"], fb["question_accuracy"], ">=")
        )
    return {
        "rule": "reconnaissance",
        "conditions": conds,
        "unmeasured": list(MODEL_CONDITIONS),
        "verdict": _verdict(conds, set(range(len(conds)))),
    }


def construction_rule(
    a: Mapping[str, Any], b: Mapping[str, Any], stuff: Mapping[str, Any] | None
) -> dict[str, Any]:
    """Construction: tokens-per-covered strictly beats stuff-everything, relevance precision
    strictly up versus the current system."""
    fa, fb = flat(a), flat(b)
    fs = flat(stuff or {})
    conds = [
        _cond(
            "tokens_per_covered (A = stuff-everything baseline)",
            fs["tokens_per_covered"],
            fb["tokens_per_covered"],
            "<",
        ),
        _cond("relevance_precision", fa["relevance_precision"], fb["relevance_precision"], ">"),
    ]
    return {
        "rule": "construction",
        "conditions": conds,
        "unmeasured": list(MODEL_CONDITIONS),
        "verdict": _verdict(conds, {0, 1}),
    }


def compare(a: Mapping[str, Any], b: Mapping[str, Any]) -> list[dict[str, Any]]:
    stuff = (b.get("baseline") or {}).get("stuff_everything")
    return [retrieval_rule(a, b), recon_rule(a, b), construction_rule(a, b, stuff)]


def load_results(path: str | Path) -> dict[str, Any]:
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise EvalError(f"cannot read results file {path}: {exc}") from exc
    if not isinstance(data, dict) or "file_acc" not in data:
        raise EvalError(f"{path} is not a ctxfast eval results file")
    return data


def format_rules(rules: list[dict[str, Any]]) -> str:
    lines = []
    for r in rules:
        lines.append(f"== {r['rule']}: {r['verdict']}")
        for c in r["conditions"]:
            mark = {True: "ok  ", False: "FAIL", None: "n/a "}[c["ok"]]
            lines.append(f"  [{mark}] {c['condition']}   A={c['A']!r}  B={c['B']!r}")
        for u in r["unmeasured"]:
            lines.append(f"  [----] {u}: not measured offline")
    return "\n".join(lines)


__all__ = [
    "compare",
    "construction_rule",
    "flat",
    "format_rules",
    "load_results",
    "recon_rule",
    "retrieval_rule",
]
