"""The mechanical ablation rule shared by the reconnaissance, retrieval and construction suites.

A mechanism is DELETED iff switching it off changes none of the measured metrics beyond noise
(Δ = 0, or |Δ| ≤ 5 % of the full system's value for continuous metrics), or if the only changes
beyond noise are *improvements* (its presence is a demonstrated harm). It is KEPT iff its
removal degrades at least one metric beyond noise.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

NOISE = 0.05

#: Metrics where a smaller value is better; every other metric is higher-is-better.
LOWER_IS_BETTER = frozenset(
    {
        "irrelevant_context_ratio",
        "tokens_retrieved_p50",
        "retrieve_ms_p50",
        "tokens_per_covered",
        "window_tokens_p50",
    }
)


def beyond_noise(base: float, ablated: float, noise: float = NOISE) -> bool:
    """True iff the change exceeds ``noise`` relative to ``base`` (absolute when base is 0)."""
    delta = ablated - base
    if delta == 0:
        return False
    scale = abs(base) if base != 0 else 1.0
    return abs(delta) > noise * scale


@dataclass(frozen=True)
class MetricDelta:
    metric: str
    base: float | None
    ablated: float | None
    delta: float | None
    change: str  # "none", "better", "worse", "unmeasured"


def metric_deltas(
    base: Mapping[str, float | None],
    ablated: Mapping[str, float | None],
    metrics: Sequence[str],
    noise: float = NOISE,
) -> list[MetricDelta]:
    out = []
    for m in metrics:
        b, a = base.get(m), ablated.get(m)
        if b is None or a is None:
            out.append(MetricDelta(m, b, a, None, "unmeasured"))
            continue
        d = a - b
        if not beyond_noise(b, a, noise):
            change = "none"
        else:
            better = d < 0 if m in LOWER_IS_BETTER else d > 0
            change = "better" if better else "worse"
        out.append(MetricDelta(m, b, a, d, change))
    return out


def verdict(deltas: Sequence[MetricDelta]) -> str:
    """KEEP if removal makes any metric worse beyond noise, else DELETE."""
    if any(d.change == "worse" for d in deltas):
        return "KEEP"
    if all(d.change == "unmeasured" for d in deltas):
        return "UNMEASURED"
    return "DELETE"


def ablation_entry(
    switch: str,
    base: Mapping[str, float | None],
    ablated: Mapping[str, float | None],
    metrics: Sequence[str],
    noise: float = NOISE,
) -> dict[str, Any]:
    deltas = metric_deltas(base, ablated, metrics, noise)
    v = verdict(deltas)
    harmful = v == "DELETE" and any(d.change == "better" for d in deltas)
    return {
        "switch": switch,
        "verdict": v,
        "reason": "removal improves the metrics (demonstrated harm)" if harmful else None,
        "deltas": {
            d.metric: {"base": d.base, "ablated": d.ablated, "delta": d.delta, "change": d.change}
            for d in deltas
        },
    }


__all__ = ["LOWER_IS_BETTER", "NOISE", "ablation_entry", "beyond_noise", "metric_deltas", "verdict"]
