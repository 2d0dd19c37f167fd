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
    return Transitions(n, edges).pagerank(
        personalization, damping=damping, tol=tol, max_iter=max_iter
    )


class Transitions:
    """The graph's normalised edge weights, computed once: a caller ranking the same graph
    under many personalisations (the repo map, one per query) pays only the iterations."""

    def __init__(self, n: int, edges: Sequence[tuple[int, int, float]]) -> None:
        import numpy as np

        self.n = n
        self.src = np.fromiter((e[0] for e in edges), dtype=np.int64, count=len(edges))
        self.dst = np.fromiter((e[1] for e in edges), dtype=np.int64, count=len(edges))
        w = np.fromiter((e[2] for e in edges), dtype=np.float64, count=len(edges))
        out_weight = np.zeros(n)
        np.add.at(out_weight, self.src, w)
        self.dangling = out_weight == 0
        src_out = out_weight[self.src]
        self.norm_w = np.where(src_out > 0, w / np.where(src_out > 0, src_out, 1), 0)

    def pagerank(
        self,
        personalization: Mapping[int, float] | None = None,
        *,
        damping: float = 0.85,
        tol: float = 1e-10,
        max_iter: int = 200,
    ) -> np.ndarray:
        """:func:`pagerank` of this graph. ``np.bincount`` sums each node's incoming mass in
        edge order, as ``np.add.at`` does, only without its per-element dispatch."""
        import numpy as np

        n = self.n
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
        src, dst, norm_w, dangling = self.src, self.dst, self.norm_w, self.dangling
        x = p.copy()
        for _ in range(max_iter):
            spread = np.bincount(dst, weights=x[src] * norm_w, minlength=n)
            new = damping * (spread + x[dangling].sum() * p) + (1 - damping) * p
            if np.abs(new - x).sum() < tol * n:
                x = new
                break
            x = new
        ranks: np.ndarray = x / x.sum()
        return ranks
