"""Section assembly, recall ordering: the notes' worked example and the budget invariants."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctxfast import (
    BudgetError,
    ContextSection,
    assemble_context,
    count_tokens,
    order_for_recall,
)


def worked_example():
    system = ContextSection("system", "You are a careful billing assistant.", 100, pinned=True)
    task = ContextSection("task", "Explain the duplicate charge on my card.", 95, pinned=True)
    policy = ContextSection(
        "policy", "Refunds are issued within five business days. " * 6, 60, truncatable=True
    )
    chit_chat = ContextSection("chit_chat", "By the way, lovely weather today!! " * 8, 10)
    return [system, task, policy, chit_chat]


@pytest.mark.parametrize("encoding", ["approx", "cl100k_base", "o200k_base"])
def test_notes_worked_example(encoding):
    ordered = order_for_recall(worked_example())
    assert [s.name for s in ordered] == ["system", "policy", "chit_chat", "task"]
    out = assemble_context(ordered, 60, encoding=encoding)
    assert out.included == ["system", "policy", "task"]
    assert out.truncated == ["policy"]
    assert out.dropped == ["chit_chat"]
    assert out.token_count == count_tokens(out.text, encoding) <= 60
    assert out.text.startswith("### system\nYou are a careful billing assistant.\n\n### policy\n")
    assert out.text.endswith("### task\nExplain the duplicate charge on my card.")


def test_pinned_over_budget_fails_closed():
    big = ContextSection("system", "word " * 500, 100, pinned=True)
    with pytest.raises(BudgetError):
        assemble_context([big], 50)


def test_value_equal_sections_get_separate_decisions():
    a = ContextSection("doc", "alpha beta gamma", 5)
    b = ContextSection("doc", "alpha beta gamma", 5)
    out = assemble_context([a, b], 100)
    assert out.included == ["doc", "doc"]
    assert out.text.count("### doc") == 2
    one = count_tokens("### doc\nalpha beta gamma")
    tight = assemble_context([a, b], one)
    assert tight.included == ["doc"] and tight.dropped == ["doc"]


def test_stable_priority_ties_keep_caller_order():
    secs = [ContextSection(f"s{i}", "x " * 30, 1) for i in range(5)]
    per = count_tokens("### s0\n" + "x " * 30) + count_tokens("\n\n")
    out = assemble_context(secs, per * 2)
    assert out.included == ["s0", "s1"]


def test_token_count_includes_headers_and_separators():
    secs = [ContextSection(f"n{i}", "body", 1) for i in range(10)]
    out = assemble_context(secs, 10_000)
    assert out.token_count == count_tokens(out.text)
    assert out.token_count > sum(count_tokens("body") for _ in secs)


section_strategy = st.builds(
    ContextSection,
    name=st.text(alphabet="abcxyz_", min_size=1, max_size=8),
    text=st.text(max_size=120),
    priority=st.integers(min_value=0, max_value=5),
    pinned=st.booleans(),
    truncatable=st.booleans(),
)


@given(st.lists(section_strategy, max_size=10), st.integers(min_value=0, max_value=200))
def test_assembly_never_exceeds_budget_and_never_drops_pins(sections, budget):
    try:
        out = assemble_context(sections, budget, encoding="cl100k_base")
    except BudgetError:
        pinned = [s for s in sections if s.pinned]
        rendered = "\n\n".join(f"### {s.name}\n{s.text}" for s in pinned)
        assert count_tokens(rendered) > budget
        return
    assert out.token_count == count_tokens(out.text) <= budget
    pinned_names = [s.name for s in sections if s.pinned]
    for name in pinned_names:
        assert name in out.included
    assert len(out.included) + len(out.dropped) == len(sections)


@given(st.lists(section_strategy, max_size=12))
def test_order_for_recall_is_permutation_with_top_at_ends(sections):
    ordered = order_for_recall(sections)
    assert sorted(map(id, ordered)) == sorted(map(id, sections))
    if len(sections) >= 2:
        top = max(s.priority for s in sections)
        assert ordered[0].priority == top
        ranked = sorted(sections, key=lambda s: -s.priority)
        assert ordered[-1] is ranked[1]
