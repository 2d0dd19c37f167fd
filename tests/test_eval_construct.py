"""The construct suite's measurement: delivered lines from what a window shows,
gold-file presence, BM25 stuffing at the window's own tokens, the coverage-versus-tokens
curve, the constructor's ablation switches and one prepared handle per tree."""

import json
from dataclasses import dataclass
from typing import ClassVar

import pytest
from eval_fixtures import BENCH, copy_eval_trees

from ctxfast.cli import main
from ctxfast.construct.schema import WindowEntry
from ctxfast.eval import metrics as M
from ctxfast.eval.cli import curve_targets
from ctxfast.eval.coverage import summary, versus
from ctxfast.eval.errors import EvalError
from ctxfast.eval.instances import Region, load_bench
from ctxfast.eval.runner import CURVE_TARGETS, TOP_KEYS, RunConfig, RunPlan, execute, resolve_jobs
from ctxfast.eval.systems import (
    BM25Files,
    CtxfastConstruct,
    CtxfastRetrieval,
    RetrievalOutput,
    SameTokens,
    render_files,
    window_candidates,
)
from ctxfast.eval.trees import DirTrees, Tree

SWITCHES = [
    "confidence_localization",
    "target_context",
    "file_outlines",
    "whole_files",
    "whole_definitions",
    "evidence_ranker",
    "fill",
    "spare_files",
]


@pytest.fixture
def trees(tmp_path):
    return copy_eval_trees(tmp_path / "trees")


def _entry(lines=None, start=3, end=11, file="a.py"):
    return WindowEntry(
        item_id="E1",
        kind="source_code",
        role="target",
        rendering="full",
        tier="working_set",
        critical=True,
        text="x",
        file=file,
        start_line=start,
        end_line=end,
        lines=lines,
    )


def test_window_delivers_shown_lines_not_the_extent():
    """An outline spans its file but shows only definition lines: a hunk between them is
    not delivered (scoring start..end would call it covered)."""
    outline, body = _entry(lines=(3, 10, 11)), _entry(file="b.py")
    cands = window_candidates([outline, body], [7, 9], lambda f, e: None)
    assert cands[0].lines() == [("a.py", 3), ("a.py", 10), ("a.py", 11)]
    assert cands[1].lines() == [("b.py", n) for n in range(3, 12)]
    assert (cands[0].start, cands[0].end, cands[0].tokens) == (3, 11, 7)
    delivered = {fl for c in cands for fl in c.lines()}
    assert M.covers_all_gold(delivered, [Region("a.py", 10, 11)]) is True
    assert M.covers_all_gold(delivered, [Region("a.py", 4, 5)]) is False
    assert M.covers_all_gold(delivered, [Region("b.py", 4, 11)]) is True


def test_relevance_counts_shown_lines_only():
    gold = [Region("a.py", 20, 22)]
    outline = M.WindowItem("a.py", None, 1, 100, 30, lines=(1, 50, 90))
    body = M.WindowItem("a.py", None, 18, 25, 10)
    assert M.relevance_precision([outline, body], 40, gold, []) == pytest.approx(10 / 40)
    assert M.relevance_precision([M.WindowItem("a.py", None, 1, 100, 30)], 40, gold, []) == 0.75


def test_gold_files_present():
    assert M.gold_files_present(["a.py", "b.py"], ["a.py"]) is True
    assert M.gold_files_present(["a.py"], ["a.py", "c.py"]) is False
    assert M.gold_files_present(["a.py"], []) is None


def test_summary_and_versus_arithmetic():
    rows = [{"covered": True}, {"covered": False}, {"covered": None}, {"covered": True}]
    agg = {
        "gold_coverage": 2 / 3,
        "gold_file_presence": 1.0,
        "window_tokens_p50": 6000.0,
        "tokens_per_covered": 9000.0,
        "relevance_precision": 0.2,
    }
    win = summary(agg, rows)
    assert (win["instances"], win["covered"], win["tokens_p50"]) == (4, 2, 6000.0)
    stuff = {**win, "gold_coverage": 0.5, "gold_file_presence": 0.75, "tokens_p50": 24000.0}
    got = versus(win, stuff)
    assert got["gold_coverage_delta"] == pytest.approx(2 / 3 - 0.5)
    assert got["gold_file_presence_delta"] == pytest.approx(0.25)
    assert got["tokens_p50_ratio"] == 0.25
    assert versus(win, {**stuff, "tokens_p50": None})["tokens_p50_ratio"] is None


def test_same_tokens_cuts_bm25_at_the_reference_count(tmp_path, trees):
    inst = load_bench(BENCH)[1]
    tree = DirTrees(trees).tree_for_instance(inst.instance_id)
    bm25 = BM25Files()
    same = SameTokens(bm25, reference="window")
    handle = same.prepare(tree, tmp_path / "cache")
    ranked = bm25.rank(handle, inst.problem_statement)
    for budget in (0, 25, 120, 400, 100_000):
        ref = RetrievalOutput([], [], "", budget, 0.0)
        out = same.retrieve_matched(handle, inst, ref)
        assert out.token_count <= budget
        assert out.rendered_text == render_files(tree.path, ranked, budget)[0]
    assert same.retrieve_matched(handle, inst, RetrievalOutput([], [], "", 120, 0.0)).token_count


def test_constructor_switches_and_curve_points():
    c = CtxfastConstruct()
    assert c.switches() == SWITCHES
    for switch in SWITCHES:
        config, defaults = c.without(switch).settings()
        off = {
            "confidence_localization": not defaults.targets.confidence_localization,
            "target_context": not defaults.context.target_context,
            "file_outlines": not defaults.outlines.enabled,
            "whole_files": defaults.whole_files.total_share == 0,
            "whole_definitions": defaults.whole_files.target_share == 0,
            "evidence_ranker": not config.ranking.evidence_ranker,
            "fill": config.target_tokens == 0,
            "spare_files": defaults.whole_files.spare_files == 0,
        }
        assert [k for k, v in off.items() if v] == [switch]
        assert c.without(switch).name == f"ctxfast_construct-without-{switch}"
    with pytest.raises(KeyError):
        c.without("nope")
    assert c.settings()[0].target_tokens == 8000
    assert c.at_target(2000).settings()[0].target_tokens == 2000
    assert c.at_target(2000).name == "ctxfast_construct@2000"


def test_curve_targets_defaults_and_flag():
    assert CURVE_TARGETS == (2000, 4000, 8000, 16000, 24000)
    assert RunConfig().curve_targets == CURVE_TARGETS
    assert curve_targets(None, None) == CURVE_TARGETS
    assert curve_targets("500, 1000,500", None) == (500, 1000)
    assert curve_targets("", [300]) == ()
    assert curve_targets(None, [300, 900]) == (300, 900)
    for bad in ("x", "0", "-5"):
        with pytest.raises(EvalError):
            curve_targets(bad, None)


def test_run_plan_runs_equal_systems_once():
    plan = RunPlan()
    assert plan.add(BM25Files()) == "bm25"
    assert plan.add(BM25Files(name="bm25@4000")) == "bm25"  # equal but for the name
    assert plan.add(BM25Files(max_tokens=2000)) == "bm25~2"  # a different system, same name
    assert plan.add(CtxfastConstruct().at_target(8000)) == "ctxfast_construct@8000"
    assert plan.add(CtxfastConstruct()) == "ctxfast_construct@8000"
    assert [s.name for s in plan.systems] == ["bm25", "bm25~2", "ctxfast_construct@8000"]


@dataclass(frozen=True)
class CountingBM25(BM25Files):
    """The real BM25 baseline, recording each prepare (per process)."""

    prepared: ClassVar[list[str]] = []

    def prepare(self, tree: Tree, cache_dir):
        self.prepared.append(tree.key)
        return super().prepare(tree, cache_dir)


def test_one_prepared_handle_per_tree(tmp_path, trees):
    CountingBM25.prepared.clear()
    insts = load_bench(BENCH)
    dt = DirTrees(trees)
    jobs, skipped = resolve_jobs(insts, lambda i: dt.tree_for_instance(i.instance_id), None, False)
    assert not skipped
    systems = [CountingBM25(name="a"), CountingBM25(name="b", max_tokens=50)]
    systems.append(SameTokens(CountingBM25(name="pool"), reference="b"))
    rows, errors = execute(systems, jobs, RunConfig(cache_dir=tmp_path / "cache", progress=False))
    assert errors == []
    assert sorted(CountingBM25.prepared) == sorted(j.tree.key for j in jobs)
    for j in jobs:
        iid = j.instance.instance_id
        assert rows["bm25_same_tokens"][iid]["tokens"] <= rows["b"][iid]["tokens"] <= 50


def _construct(tmp_path, trees, *extra):
    out = tmp_path / "results.json"
    args = ["eval", "construct", str(BENCH), "--trees", str(trees), "--out", str(out)]
    args += ["--cache", str(tmp_path / "cache"), "--no-progress", "--system", "ctxfast", *extra]
    assert main(args) == 0
    return json.loads(out.read_text())


def test_construct_suite_end_to_end(tmp_path, trees, capsys):
    pytest.importorskip("matplotlib")
    res = _construct(
        tmp_path, trees, "--curve-targets", "300,1000", "--ablate", "--report", str(tmp_path / "r")
    )
    assert tuple(res) == TOP_KEYS
    assert res["instances"] == 3 and res["skipped"] == []
    assert res["suite"]["baselines"] == ["bm25", "stuff_everything", "bm25_same_tokens"]
    comp = res["construct_comparison"]
    assert comp["window_system"] == "ctxfast_construct"
    systems = comp["systems"]
    assert set(systems) == {"window", "retrieval_slice", "bm25", "stuff_everything",
                            "bm25_same_tokens"}  # fmt: skip
    assert systems["retrieval_slice"]["system"] == "ctxfast"
    win = systems["window"]
    assert win["instances"] == 3
    for key, top in (("gold_coverage", "gold_coverage"), ("tokens_p50", "window_tokens_p50"),
                     ("gold_file_presence", "gold_file_presence")):  # fmt: skip
        assert win[key] == res[top]
    assert set(comp["vs_window"]) == set(systems) - {"window"}
    by_repo = {r["repo"]: r for r in res["per_instance"]}
    beta = res["per_repo"]["beta/beta"]  # one instance: its window's own figures
    assert beta["window_tokens_p50"] == by_repo["beta/beta"]["ctxfast_construct"]["tokens"]
    assert beta["gold_coverage"] == float(by_repo["beta/beta"]["ctxfast_construct"]["covered"])
    for row in res["per_instance"]:
        window = row["ctxfast_construct"]
        assert row["bm25_same_tokens"]["tokens"] <= window["tokens"]
        assert row["stuff_everything"]["tokens"] <= 24_000
        assert set(row["curve"]["window"]) == {"300", "1000"}
        for t, point in row["curve"]["stuffing"].items():
            assert point["tokens"] <= int(t)
    same = res["baseline"]["bm25_same_tokens"]
    assert same["window_tokens_p50"] <= res["window_tokens_p50"]
    curve = res["coverage_curve"]
    assert curve["targets"] == [300, 1000] and res["suite"]["curve_targets"] == [300, 1000]
    assert [p["target_tokens"] for p in curve["window"]] == [300, 1000]
    assert (curve["window_system"], curve["stuffing_system"]) == ("ctxfast_construct", "bm25")
    assert all(p["instances"] == 3 and p["tokens_p50"] <= p["target_tokens"]
               for p in curve["stuffing"])  # fmt: skip
    abl = res["ablation"]
    assert [e["switch"] for e in abl["switches"]] == SWITCHES
    assert {e["system"] for e in abl["switches"]} == {"ctxfast_construct"}
    assert all(e["verdict"] in {"KEEP", "DELETE", "UNMEASURED"} for e in abl["switches"])
    assert all(0 <= e["unchanged_instances"] <= 3 for e in abl["switches"])
    assert "window_tokens_p50" in abl["metrics"] and "gold_file_presence" in abl["metrics"]
    page = (tmp_path / "r" / "report.html").read_text()
    assert "Window versus baselines" in page and "coverage_curve.png" in page
    assert (tmp_path / "r" / "coverage_curve.png").stat().st_size > 0
    assert "curve @300" in capsys.readouterr().out


def test_construct_suite_without_curve(tmp_path, trees):
    res = _construct(tmp_path, trees, "--curve-targets", "")
    assert res["coverage_curve"] == {} and res["suite"]["curve_targets"] == []
    assert res["construct_comparison"]["systems"]["window"]["instances"] == 3
    assert "curve" not in res["per_instance"][0]


def test_bad_construct_config_fails_before_the_run(tmp_path, trees):
    cfg = tmp_path / "cfg.json"
    cfg.write_text(json.dumps({"construct": {"no_such_field": 1}}))
    out = tmp_path / "r.json"
    args = ["eval", "construct", str(BENCH), "--trees", str(trees), "--out", str(out)]
    args += ["--cache", str(tmp_path / "c"), "--no-progress", "--system", "ctxfast"]
    assert main([*args, "--config", str(cfg)]) == 2
    assert not out.exists()


def test_a_config_key_at_the_wrong_level_fails_before_the_run(tmp_path, trees, capsys):
    # A construction setting at the top level would be ignored and the defaults scored.
    cfg = tmp_path / "cfg.json"
    cfg.write_text(json.dumps({"target_tokens": 12000}))
    out = tmp_path / "r.json"
    args = ["eval", "construct", str(BENCH), "--trees", str(trees), "--out", str(out)]
    args += ["--cache", str(tmp_path / "c"), "--no-progress", "--system", "ctxfast"]
    assert main([*args, "--config", str(cfg)]) == 2
    assert "'target_tokens'" in capsys.readouterr().err
    assert not out.exists()


def test_retrieval_slice_delivers_only_what_its_text_holds(tmp_path, trees):
    """The result lists the ranked top-k; the token cap drops some of them whole, and a
    dropped candidate — like one line pruning emptied — delivers no line."""
    inst = load_bench(BENCH)[1]
    tree = DirTrees(trees).tree_for_instance(inst.instance_id)
    handle = CtxfastRetrieval().prepare(tree, tmp_path / "cache")
    full = CtxfastRetrieval().retrieve(handle, inst)
    delivered = [c for c in full.candidates if c.lines()]
    assert len(delivered) > 2
    capped = CtxfastRetrieval(max_tokens=120).retrieve(handle, inst)
    assert [c.qualname for c in capped.candidates] == [c.qualname for c in full.candidates]
    kept = [c for c in capped.candidates if c.lines()]
    assert 0 < len(kept) < len(delivered)
    for res in (full, capped):
        for c in res.candidates:
            header = f" [{c.file}:{c.start}, "  # where the slice's block header names it
            assert (header in res.rendered_text) == bool(c.lines())
