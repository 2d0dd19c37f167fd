"""The native PageRank ranks bit for bit as the numpy code it replaced: every stored map was
ranked by that code, and a map is only byte-identical if every score is. The numpy
reference below is that code, kept here alone; graphs cross the sizes where numpy's pairwise
sum changes shape (8 values, 128-value blocks, their halves) and include dangling nodes,
zero and negative weights, repeated edges and personalisations that weigh nothing."""

from __future__ import annotations

import random
from collections.abc import Mapping

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctxfast import _native
from ctxfast.errors import InvalidArgumentError
from ctxfast.recon.pagerank import Transitions, pagerank

Edges = list[tuple[int, int, float]]


def _numpy_pagerank(
    n: int,
    edges: Edges,
    personalization: Mapping[int, float] | None = None,
    *,
    damping: float = 0.85,
    tol: float = 1e-10,
    max_iter: int = 200,
) -> list[float]:
    """``recon/pagerank.py`` as it was in numpy, operation for operation."""
    src = np.fromiter((e[0] for e in edges), dtype=np.int64, count=len(edges))
    dst = np.fromiter((e[1] for e in edges), dtype=np.int64, count=len(edges))
    w = np.fromiter((e[2] for e in edges), dtype=np.float64, count=len(edges))
    out_weight = np.zeros(n)
    np.add.at(out_weight, src, w)
    dangling = out_weight == 0
    src_out = out_weight[src]
    norm_w = np.where(src_out > 0, w / np.where(src_out > 0, src_out, 1), 0)
    if n == 0:
        return []
    p = np.full(n, 1.0 / n)
    if personalization:
        p = np.zeros(n)
        for node, weight in personalization.items():
            if 0 <= node < n and weight > 0:
                p[node] += weight
        total = p.sum()
        p = p / total if total > 0 else np.full(n, 1.0 / n)
    x = p.copy()
    for _ in range(max_iter):
        spread = np.bincount(dst, weights=x[src] * norm_w, minlength=n)
        new = damping * (spread + x[dangling].sum() * p) + (1 - damping) * p
        if np.abs(new - x).sum() < tol * n:
            x = new
            break
        x = new
    ranks: list[float] = (x / x.sum()).tolist()
    return ranks


def _graph(rnd: random.Random, n: int) -> Edges:
    """Random edges over ``n`` nodes: some nodes never a source (dangling), weights mostly
    reference counts, a few fractional, zero or negative, and repeated pairs."""
    if n == 0:
        return []
    sources = rnd.sample(range(n), max(1, int(n * rnd.uniform(0.3, 1.0))))
    edges: Edges = []
    for _ in range(rnd.randint(0, 4 * n)):
        roll = rnd.random()
        if roll < 0.8:
            w = float(rnd.randint(1, 40))
        elif roll < 0.95:
            w = rnd.random() * 10 ** rnd.randint(-6, 3)
        elif roll < 0.98:
            w = 0.0
        else:
            w = -float(rnd.randint(1, 3))
        edges.append((rnd.choice(sources), rnd.randrange(n), w))
    return edges


def _personalisations(rnd: random.Random, n: int) -> list[dict[int, float] | None]:
    named = {rnd.randrange(max(n, 1)): rnd.choice([10.0, 1.0, rnd.random()]) for _ in range(5)}
    return [
        None,
        {},
        {n + 3: 1.0, -1: 2.0},  # names no node: uniform
        {0: 0.0},
        named,
        {i: 1.0 / (1 + i % 7) for i in range(0, n, 3)},
    ]


SIZES = (0, 1, 2, 5, 7, 8, 9, 15, 16, 17, 127, 128, 129, 255, 256, 257, 1000, 1031, 2600)


@pytest.mark.parametrize("n", SIZES)
def test_native_ranks_equal_numpys_exactly(n: int) -> None:
    rnd = random.Random(n)
    edges = _graph(rnd, n)
    prepared = Transitions(n, edges)
    for pers in _personalisations(rnd, n):
        expected = _numpy_pagerank(n, edges, pers)
        assert prepared.pagerank(pers) == expected, (n, pers)
        assert pagerank(n, edges, pers) == expected


@pytest.mark.parametrize("n", (9, 130, 300))
def test_other_parameters_also_round_as_numpy(n: int) -> None:
    rnd = random.Random(1000 + n)
    edges = _graph(rnd, n)
    pers = {rnd.randrange(n): 1.0 for _ in range(3)}
    for damping, tol, max_iter in (
        (0.85, 1e-10, 0),
        (0.85, 1e-10, 1),
        (0.5, 1e-6, 200),
        (1.0, 1e-10, 200),
        (0.0, 1e-10, 200),
        (0.85, 0.0, 500),
    ):
        expected = _numpy_pagerank(n, edges, pers, damping=damping, tol=tol, max_iter=max_iter)
        got = pagerank(n, edges, pers, damping=damping, tol=tol, max_iter=max_iter)
        assert got == expected, (damping, tol, max_iter)


@given(
    st.integers(min_value=0, max_value=40).flatmap(
        lambda n: st.tuples(
            st.just(n),
            st.lists(
                st.tuples(
                    st.integers(0, max(n - 1, 0)),
                    st.integers(0, max(n - 1, 0)),
                    st.floats(min_value=0.0, max_value=1e6, allow_nan=False),
                ),
                max_size=0 if n == 0 else 120,
            ),
            st.dictionaries(st.integers(-2, n + 2), st.floats(-1.0, 100.0), max_size=6),
        )
    )
)
def test_small_graphs_rank_as_numpy(case: tuple[int, Edges, dict[int, float]]) -> None:
    n, edges, pers = case
    assert pagerank(n, edges, pers) == _numpy_pagerank(n, edges, pers)


def test_the_repo_map_graph_shape_ranks_as_numpy() -> None:
    """A graph shaped like a real repository's (a few hubs, a long tail of leaves) ranked
    globally and under many small personalisations, on one prepared graph."""
    rnd = random.Random(43)
    n = 1800
    edges: Edges = []
    for a in range(n):
        for _ in range(rnd.randint(0, 6)):
            b = rnd.randrange(40) if rnd.random() < 0.6 else rnd.randrange(n)
            if b != a:
                edges.append((a, b, float(rnd.randint(1, 30))))
    prepared = Transitions(n, edges)
    assert prepared.pagerank() == _numpy_pagerank(n, edges)
    for _ in range(8):
        pers = {rnd.randrange(n): rnd.choice([10.0, 1.0, 0.5, 1 / 3]) for _ in range(4)}
        assert prepared.pagerank(pers) == _numpy_pagerank(n, edges, pers)


def test_scores_are_a_plain_list_and_bad_edges_are_refused() -> None:
    scores = pagerank(2, [(0, 1, 1.0), (1, 0, 1.0)])
    assert scores == [0.5, 0.5] and type(scores) is list
    assert pagerank(0, []) == []
    assert _native.Transitions(3, []).pagerank([], max_iter=0) == [1 / 3] * 3
    with pytest.raises(InvalidArgumentError):
        Transitions(2, [(0, 2, 1.0)])
