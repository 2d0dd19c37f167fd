"""Native line-window selection: parity with the pure-Python reference and its invariants."""

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from oracles import reference as _reference

from ctxfast import _native
from ctxfast.errors import ConfigError, InvalidArgumentError
from ctxfast.harness.excerpt import best_windows

lines = st.integers(min_value=0, max_value=40).flatmap(
    lambda n: st.tuples(
        st.lists(st.integers(0, 30), min_size=n, max_size=n),
        st.lists(st.sampled_from([0.0, 0.0, 0.0, 0.5, 1.0, 2.0, 3.25]), min_size=n, max_size=n),
    )
)


@settings(max_examples=300, deadline=None)
@given(lines, st.integers(0, 300), st.integers(0, 5), st.integers(0, 6))
def test_native_matches_reference(data, budget, max_windows, context):
    tokens, scores = data
    native = best_windows(tokens, scores, budget, max_windows=max_windows, context=context)
    ref = _reference.best_windows(tokens, scores, budget, max_windows, context)
    assert native == ref


@settings(max_examples=200, deadline=None)
@given(lines, st.integers(0, 300), st.integers(0, 5), st.integers(0, 6))
def test_invariants(data, budget, max_windows, context):
    tokens, scores = data
    windows = best_windows(tokens, scores, budget, max_windows=max_windows, context=context)
    assert len(windows) <= max_windows
    assert sum(sum(tokens[s:e]) for s, e in windows) <= budget
    for (_s1, e1), (s2, _e2) in itertools.pairwise(windows):
        assert e1 < s2  # disjoint and not adjacent (adjacent windows merge)
    for s, e in windows:
        assert 0 <= s < e <= len(tokens)
        assert any(scores[s:e])  # every window covers a hit


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.integers(0, 6), max_size=60),
    st.integers(0, 70),
    st.integers(0, 4),
)
def test_fixed_windows_match_the_python_reference(scores, window, k):
    native = [tuple(w) for w in _native.best_fixed_windows(scores, window, k)]
    assert native == _reference.best_fixed_windows(scores, window, k)


def test_windows_center_on_hits_with_context():
    scores = [0.0] * 50
    scores[20] = 1.0
    assert best_windows([1] * 50, scores, 100, context=3) == [(17, 24)]


def test_bad_input_raises_library_errors():
    with pytest.raises(InvalidArgumentError):
        best_windows([1, 2], [1.0], 10)
    with pytest.raises(InvalidArgumentError):
        best_windows([1], [float("nan")], 10)
    with pytest.raises(ConfigError):
        best_windows([1], [1.0], -1)
