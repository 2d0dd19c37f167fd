"""The construct suite's two views of a window: against its baselines on the same
instances, and gold coverage against tokens as the window is allowed to grow.

Pure functions over what :func:`ctxfast.eval.runner.aggregate` returns and the per-instance
rows it aggregated, so the arithmetic is pinned by hand-made inputs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any


def summary(agg: Mapping[str, Any], rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The window metrics of one system: every-hunk coverage, gold-file presence, tokens p50
    and tokens per covered instance, with the counts behind the shares."""
    return {
        "instances": len(rows),
        "covered": sum(1 for r in rows if r["covered"]),
        "gold_coverage": agg["gold_coverage"],
        "gold_file_presence": agg["gold_file_presence"],
        "tokens_p50": agg["window_tokens_p50"],
        "tokens_per_covered": agg["tokens_per_covered"],
        "relevance_precision": agg["relevance_precision"],
    }


def _delta(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else a - b


def versus(window: Mapping[str, Any], other: Mapping[str, Any]) -> dict[str, float | None]:
    """The window against one baseline: coverage and file presence as differences of shares
    (window minus baseline; 0.20 = twenty points), tokens p50 as a multiple of the
    baseline's (0.33 = a third of its tokens)."""
    tw, tb = window["tokens_p50"], other["tokens_p50"]
    return {
        "gold_coverage_delta": _delta(window["gold_coverage"], other["gold_coverage"]),
        "gold_file_presence_delta": _delta(
            window["gold_file_presence"], other["gold_file_presence"]
        ),
        "tokens_p50_ratio": tw / tb if tw is not None and tb else None,
    }


def comparison(
    window_system: str, window: Mapping[str, Any], others: Mapping[str, Mapping[str, Any]]
) -> dict[str, Any]:
    """``construct_comparison``: the window's summary, each baseline's, and the window
    against each baseline."""
    return {
        "window_system": window_system,
        "systems": {"window": dict(window), **{k: dict(v) for k, v in others.items()}},
        "vs_window": {k: versus(window, v) for k, v in others.items()},
    }


def curve(
    targets: Sequence[int],
    window: Sequence[Mapping[str, Any]],
    stuffing: Sequence[Mapping[str, Any]],
    window_system: str,
    stuffing_system: str,
) -> dict[str, Any]:
    """``coverage_curve``: one point per target size for the window filled toward it and for
    whole-file stuffing cut at it (each point a :func:`summary` plus its target)."""
    return {
        "targets": list(targets),
        "window_system": window_system,
        "stuffing_system": stuffing_system,
        "window": [{"target_tokens": t, **p} for t, p in zip(targets, window, strict=True)],
        "stuffing": [{"target_tokens": t, **p} for t, p in zip(targets, stuffing, strict=True)],
    }


def instance_point(row: Mapping[str, Any]) -> dict[str, Any]:
    """One system's row reduced to what the curve plots, for ``per_instance``."""
    return {
        "covered": row["covered"],
        "gold_files_present": row["gold_files_present"],
        "tokens": row["tokens"],
    }


__all__ = ["comparison", "curve", "instance_point", "summary", "versus"]
