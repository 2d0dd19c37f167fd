"""Hand-computed arithmetic of every eval metric, including the edge cases."""

import pytest

from ctxfast.eval import metrics as M
from ctxfast.eval.ablation import ablation_entry, beyond_noise
from ctxfast.eval.instances import Region

GOLD2 = ["a.py", "b.py"]


def test_file_acc_and_recall_at_k():
    ranked = ["x.py", "a.py", "y.py", "b.py"]
    assert M.file_acc_at_k(ranked, GOLD2, 1) == 0.0
    assert M.file_acc_at_k(ranked, GOLD2, 3) == 0.0  # b.py is 4th: not *all* gold in top 3
    assert M.file_acc_at_k(ranked, GOLD2, 5) == 1.0
    assert M.file_recall_at_k(ranked, GOLD2, 1) == 0.0
    assert M.file_recall_at_k(ranked, GOLD2, 3) == 0.5
    assert M.file_recall_at_k(ranked, GOLD2, 10) == 1.0


def test_duplicates_in_ranking_do_not_take_slots():
    assert M.file_acc_at_k(["x.py", "x.py", "a.py"], ["a.py"], 2) == 1.0
    assert M.reciprocal_rank(["x.py", "x.py", "a.py"], ["a.py"]) == 0.5


def test_mrr_uses_first_gold_file():
    assert M.reciprocal_rank(["x.py", "a.py", "b.py"], GOLD2) == 0.5
    assert M.reciprocal_rank(["x.py", "y.py", "z.py", "b.py"], GOLD2) == 0.25
    assert M.reciprocal_rank(["x.py"], GOLD2) == 0.0


def test_empty_retrieval_scores_zero_not_none():
    assert M.file_acc_at_k([], GOLD2, 5) == 0.0
    assert M.file_recall_at_k([], GOLD2, 5) == 0.0
    assert M.reciprocal_rank([], GOLD2) == 0.0
    assert M.required_file_recall([], GOLD2) == 0.0
    assert M.function_acc_at_k([], [("a.py", "f")], 5) == 0.0
    assert M.region_recall_at_k([], [Region("a.py", 1, 2)]) == 0.0
    assert M.context_efficiency([], [Region("a.py", 1, 2)]) == 0.0
    assert M.irrelevant_context_ratio(0, [], {}, [Region("a.py", 1, 2)]) is None


def test_no_gold_is_unscored():
    assert M.file_acc_at_k(["a.py"], [], 1) is None
    assert M.function_acc_at_k([("a.py", "f")], [], 5) is None
    assert M.required_symbol_recall([("a.py", "f")], []) is None
    assert M.region_recall_at_k([("a.py", 1, 5)], []) is None
    assert M.context_efficiency([("a.py", 1, 5)], []) is None
    assert M.covers_all_gold([("a.py", 1)], []) is None
    assert M.relevance_precision([M.WindowItem("a.py", None, 1, 5, 10)], 10, [], []) is None
    assert M.mean([None, None]) is None


def test_ties_in_ranking_are_positional():
    # A system that ties two files must still order them; the metric reads positions only.
    assert M.file_acc_at_k(["b.py", "a.py"], ["a.py"], 1) == 0.0
    assert M.file_acc_at_k(["a.py", "b.py"], ["a.py"], 1) == 1.0


def test_function_acc_skips_unnamed_candidates():
    cands = [("a.py", None), ("a.py", "f"), ("a.py", "f"), ("b.py", "g"), ("c.py", "h")]
    gold = [("a.py", "f"), ("c.py", "h")]
    assert M.function_acc_at_k(cands, gold, 2) == 0.0  # top-2 named: f, g
    assert M.function_acc_at_k(cands, gold, 3) == 1.0
    assert M.required_symbol_recall(cands[:3], gold) == 0.5


def test_symbol_ranks_are_places_among_named_candidates():
    cands = [("a.py", None), ("a.py", "f"), ("a.py", "f"), ("b.py", "g"), ("c.py", "h")]
    # Sorted gold: (a.py, f) first at 1, (c.py, h) at 3, (d.py, k) never; a method nested in
    # a surfaced function is delivered at that function's place.
    gold = [("c.py", "h"), ("a.py", "f"), ("d.py", "k")]
    assert M.symbol_ranks(cands, gold) == [1, 3, None]
    assert M.symbol_ranks(cands, [("b.py", "g.inner")], {("b.py", "g")}) == [2]
    assert M.symbol_ranks(cands, [("b.py", "g.inner")]) == [None]
    assert M.symbol_ranks(cands, []) == []


def test_irrelevant_context_ratio():
    gold = [Region("a.py", 10, 12)]
    lines = [("a.py", n) for n in range(8, 15)]
    toks = {("a.py", 10): 5, ("a.py", 11): 3, ("a.py", 12): 2, ("a.py", 8): 100}
    # 10 gold tokens out of 40 rendered → 30/40 outside.
    assert M.irrelevant_context_ratio(40, lines, toks, gold) == pytest.approx(0.75)
    assert M.irrelevant_context_ratio(10, lines, toks, gold) == 0.0
    assert M.irrelevant_context_ratio(40, [("b.py", 10)], {("b.py", 10): 5}, gold) == 1.0


def test_region_recall_and_context_efficiency():
    gold = [Region("a.py", 50, 59), Region("b.py", 1, 4)]
    ranked = [
        ("a.py", 1, 60),
        ("c.py", 1, 30),
        ("d.py", 1, 10),
        ("e.py", 1, 1),
        ("f.py", 1, 1),
        ("b.py", 1, 4),
    ]
    assert M.region_recall_at_k(ranked, gold, 5) == 0.5  # b.py is 6th
    assert M.region_recall_at_k(ranked, gold, 6) == 1.0
    # 100-line budget: a.py 1..60 (10 gold lines: 50..59), c.py 1..30, d.py 1..10 → 100 lines.
    assert M.context_efficiency(ranked, gold) == pytest.approx(0.10)
    # Gold region first: b.py 1..4 → 4 gold lines; then a.py 1..60 has 10 more within budget.
    assert M.context_efficiency([("b.py", 1, 4), ("a.py", 1, 60)], gold) == pytest.approx(0.14)
    # A line already paid for is not paid twice.
    assert len(M.budget_lines([("a.py", 1, 10), ("a.py", 5, 20)], 100)) == 20


def test_gold_coverage_relevance_precision_tokens_per_covered():
    gold = [Region("a.py", 3, 4)]
    assert M.covers_all_gold([("a.py", 3), ("a.py", 4), ("b.py", 1)], gold) is True
    assert M.covers_all_gold([("a.py", 3)], gold) is False
    items = [
        M.WindowItem("a.py", None, 1, 10, 30),  # overlaps gold
        M.WindowItem("b.py", "g", 1, 5, 50),  # names a gold symbol
        M.WindowItem("c.py", None, 1, 5, 20),  # irrelevant
    ]
    assert M.relevance_precision(items, 100, gold, [("b.py", "g")]) == pytest.approx(0.8)
    assert M.relevance_precision(items, 100, gold, []) == pytest.approx(0.3)
    assert M.tokens_per_covered(3000, 2) == 1500
    assert M.tokens_per_covered(3000, 0) is None


def test_p50_and_share():
    assert M.p50([3, 1, 2]) == 2
    assert M.p50([4, 1, 2, 3]) == 2.5
    assert M.p50([None]) is None
    assert M.share([True, False, None, True]) == pytest.approx(2 / 3)


def test_five_percent_rule():
    assert not beyond_noise(0.50, 0.52)  # 4% relative
    assert beyond_noise(0.50, 0.53)  # 6% relative
    assert not beyond_noise(0.0, 0.0)
    assert beyond_noise(0.0, 0.06)  # base 0: absolute tolerance
    metrics = ["mrr", "tokens_retrieved_p50"]
    keep = ablation_entry(
        "x",
        {"mrr": 0.5, "tokens_retrieved_p50": 1000},
        {"mrr": 0.4, "tokens_retrieved_p50": 1000},
        metrics,
    )
    assert keep["verdict"] == "KEEP"
    noop = ablation_entry(
        "x",
        {"mrr": 0.5, "tokens_retrieved_p50": 1000},
        {"mrr": 0.49, "tokens_retrieved_p50": 1040},
        metrics,
    )
    assert noop["verdict"] == "DELETE" and noop["reason"] is None
    harm = ablation_entry(
        "x",
        {"mrr": 0.5, "tokens_retrieved_p50": 1000},
        {"mrr": 0.5, "tokens_retrieved_p50": 500},
        metrics,
    )
    assert harm["verdict"] == "DELETE" and "harm" in harm["reason"]
    assert harm["deltas"]["tokens_retrieved_p50"]["change"] == "better"


def test_question_battery_grading():
    assert M.question_correct("Q2", ["a.py:3", "b.py:9"], ["a.py:3"])
    assert not M.question_correct("Q2", [], ["a.py:3"])
    assert M.question_correct("Q3", ["b.py:2", "a.py:1"], ["a.py:1", "b.py:2"])
    assert not M.question_correct("Q3", ["a.py:1"], ["a.py:1", "b.py:2"])  # subset ≠ equal
    assert M.question_correct("Q6", [], [])  # no neighbours is a checkable answer
    assert M.question_accuracy([True, False, True, True, False, False]) == 0.5
    assert M.question_accuracy([]) is None


def test_enclosing_function_delivers_its_nested_definitions():
    gold = [("a.py", "Resp.iter_content.generate")]
    cands = [("a.py", "Resp"), ("a.py", "Resp.iter_content"), ("b.py", "g")]
    fns = {("a.py", "Resp.iter_content"), ("b.py", "g")}
    assert M.function_acc_at_k(cands, gold, 2, fns) == 1.0
    assert M.function_acc_at_k(cands, gold, 1, fns) == 0.0  # the enclosing one is 2nd
    assert M.function_acc_at_k(cands, gold, 2) == 0.0  # without kinds: exact names only
    assert M.required_symbol_recall(cands, gold, fns) == 1.0
    # Only candidates marked as functions deliver what is nested in them (the class `Resp`
    # is not one); a prefix must end on a name boundary; the file must be the same.
    assert M.function_acc_at_k(cands, [("a.py", "Resp.close")], 3, fns | {("a.py", "Resp")})
    assert not M.function_acc_at_k(cands, [("a.py", "Resp.close")], 3, fns)
    assert not M.function_acc_at_k([("a.py", "Resp.iter")], gold, 1, {("a.py", "Resp.iter")})
    assert not M.function_acc_at_k([("b.py", "Resp.iter_content")], gold, 1, fns)


def test_hunk_past_the_last_line_is_cut_at_it(tmp_path):
    """An insertion after a file's last line names the line after it; with the tree at
    hand the region ends at the last line, so a window showing the whole file covers it."""
    from ctxfast.eval.instances import Instance

    (tmp_path / "a.py").write_text("x = 1\ny = 2\n")
    inst = Instance(
        instance_id="i",
        repo="o/r",
        version="1",
        problem_statement="t",
        gold_files=["a.py"],
        gold_hunks=[
            {"file": "a.py", "start": 2, "end": 3},
            {"file": "a.py", "start": 1, "end": 1},
            {"file": "gone.py", "start": 4, "end": 9},
        ],
    )
    given = [Region("a.py", 2, 3), Region("a.py", 1, 1), Region("gone.py", 4, 9)]
    assert inst.hunk_regions() == given
    cut = inst.hunk_regions(tmp_path)
    assert cut == [Region("a.py", 2, 2), Region("a.py", 1, 1), Region("gone.py", 4, 9)]
    assert M.covers_all_gold([("a.py", 1), ("a.py", 2)], cut[:2])
    assert not M.covers_all_gold([("a.py", 1), ("a.py", 2)], given[:2])


def test_candidate_function_matched_to_gold_function_by_span():
    gold = [("a.go", "Server.Serve", 10, 30)]
    cands = [
        ("a.go", "(*Server).Serve", 11, 30, True),  # same function, spelled otherwise
        ("a.go", "Server", 5, 60, False),  # a type enclosing it is not the function
        ("b.go", "Serve", 10, 30, True),  # same span in another file
    ]
    syms, fns = M.aligned_to_gold(cands, gold)
    assert syms == [("a.go", "Server.Serve"), ("a.go", "Server"), ("b.go", "Serve")]
    assert fns == {("a.go", "Server.Serve"), ("b.go", "Serve")}
    assert M.function_acc_at_k(syms, [("a.go", "Server.Serve")], 1, fns) == 1.0
    far = [("a.go", "Serve", 14, 30, True)]  # starts four lines off: another function
    assert M.function_acc_at_k(*_acc_args(far, gold)) == 0.0


def _acc_args(cands, gold):
    syms, fns = M.aligned_to_gold(cands, gold)
    return syms, [(f, q) for f, q, _, _ in gold], 10, fns
