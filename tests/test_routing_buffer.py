"""Intent router gates and the rolling compaction buffer (the notes' worked examples)."""

from __future__ import annotations

import math

import pytest

from ctxfast import IntentRouter, RollingBuffer, Turn

PROTOTYPES = {
    "billing": {"refund", "charge", "invoice", "payment", "money"},
    "cancel": {"cancel", "charge", "subscription", "stop", "account"},
    "support": {"help", "broken", "error", "login", "bug"},
}


def test_tie_falls_back():
    d = IntentRouter(PROTOTYPES).route("cancel and refund charge")
    assert d.fallback and d.reason == "ambiguous_tie" and d.intent is None
    assert d.score == pytest.approx(2 / (2 * math.sqrt(5)))
    assert d.second == pytest.approx(d.score)


def test_clean_match():
    d = IntentRouter(PROTOTYPES).route("I need a refund for my invoice payment")
    assert not d.fallback and d.intent == "billing" and d.reason == "match"
    assert d.score == pytest.approx(3 / (math.sqrt(8) * math.sqrt(5)))
    assert d.second == 0.0


def test_below_threshold_and_empty():
    r = IntentRouter(PROTOTYPES)
    assert r.route("").reason == "below_threshold"
    assert r.route("the weather is nice and sunny today").fallback


def test_margin_is_configurable():
    d = IntentRouter(PROTOTYPES, margin=0.0).route("cancel and refund charge")
    assert d.intent == "billing"  # deterministic name tie-break once the gate is off


def test_rolling_buffer_summary_is_function_of_log():
    def summarize(turns):
        return " | ".join(t.content for t in turns)

    buf = RollingBuffer(2, summarize)
    for i in range(4):
        buf.add_turn(Turn("user", f"t{i}"))
    assert [t.content for t in buf.turns()] == ["t2", "t3"]
    assert buf.summary == "t0 | t1"
    assert [t.content for t in buf.evicted] == ["t0", "t1"]


def test_incremental_folds_previous_summary():
    calls = []

    def summarize(turns):
        calls.append(len(turns))
        return "+".join(t.content for t in turns)

    buf = RollingBuffer(1, summarize, incremental=True)
    for i in range(5):
        buf.add_turn(Turn("user", f"t{i}"))
    assert buf.summary == "t0+t1+t2+t3"
    assert max(calls) == 2  # never the whole log


def test_buffer_size_validated():
    with pytest.raises(ValueError):
        RollingBuffer(0, lambda t: "")
