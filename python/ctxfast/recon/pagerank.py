"""Personalised PageRank over a small weighted file graph, in numpy.

The repo map ranks files by how central they are to the file-level reference graph
(which file mentions symbols defined in which other file), personalised toward the files
and identifiers a query names. Power iteration on a dense matrix is exact and fast for the
few thousand files of a real repository; no networkx.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np


def pagerank(
    n: int,
    edges: Sequence[tuple[int, int, float]],
    personalization: Mapping[int, float] | None = None,
    *,
    damping: float = 0.85,
    tol: float = 1e-10,
    max_iter: int = 200,
) -> np.ndarray:
    """Scores (summing to 1) for ``n`` nodes given weighted directed ``edges`` (src, dst, w).

    Dangling nodes redistribute their mass by the personalisation vector, as networkx does,
    so results match the textbook definition. Deterministic for identical input. numpy is
    imported here so ``import ctxfast`` works where only the pure-Python paths are used.
    """
    import numpy as np

    if n == 0:
        return np.zeros(0)
    p = np.full(n, 1.0 / n)
    if personalization:
        p = np.zeros(n)
        for node, weight in personalization.items():
            if 0 <= node < n and weight > 0:
                p[node] += weight
        total = p.sum()
        p = p / total if total > 0 else np.full(n, 1.0 / n)
    src = np.fromiter((e[0] for e in edges), dtype=np.int64, count=len(edges))
    dst = np.fromiter((e[1] for e in edges), dtype=np.int64, count=len(edges))
    w = np.fromiter((e[2] for e in edges), dtype=np.float64, count=len(edges))
    out_weight = np.zeros(n)
    np.add.at(out_weight, src, w)
    dangling = out_weight == 0
    norm_w = np.where(out_weight[src] > 0, w / np.where(out_weight[src] > 0, out_weight[src], 1), 0)
    x = p.copy()
    for _ in range(max_iter):
        spread = np.zeros(n)
        np.add.at(spread, dst, x[src] * norm_w)
        new = damping * (spread + x[dangling].sum() * p) + (1 - damping) * p
        if np.abs(new - x).sum() < tol * n:
            x = new
            break
        x = new
    ranks: np.ndarray = x / x.sum()
    return ranks
