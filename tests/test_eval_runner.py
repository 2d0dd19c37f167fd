"""End to end on the synthetic benchmark: CLI, results.json keys, caching, compare verdicts."""

import json
import shutil

import pytest
from eval_fixtures import BENCH, copy_eval_trees

from ctxfast.cli import main
from ctxfast.eval.compare import compare
from ctxfast.eval.instances import load_bench, sample
from ctxfast.eval.runner import TOP_KEYS
from ctxfast.eval.systems import identifier_tokens, source_files


@pytest.fixture
def trees(tmp_path):
    return copy_eval_trees(tmp_path / "trees")


def _run(tmp_path, trees, *extra):
    out = tmp_path / "results.json"
    rc = main(
        [
            "eval",
            "all",
            str(BENCH),
            "--trees",
            str(trees),
            "--out",
            str(out),
            "--cache",
            str(tmp_path / "cache"),
            "--no-progress",
            *extra,
            *(() if "--system" in extra else ("--system", "bm25")),
        ]
    )
    assert rc == 0
    return json.loads(out.read_text())


def test_identifier_tokens_split():
    assert identifier_tokens("getUserName x_y") == [
        "getusername",
        "get",
        "user",
        "name",
        "x_y",
        "x",
        "y",
    ]
    assert identifier_tokens("HTTPServer") == ["httpserver", "http", "server"]
    assert identifier_tokens("a_b", split=False) == ["a_b"]


def test_source_files_skip_symlinks(tmp_path):
    # A broken link (a submodule not checked out) made the BM25 baselines fail the task; a
    # link may also point outside the tree. The index's walk skips both, so do the baselines.
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "real.py").write_text("x = 1\n")
    (tmp_path / "pkg" / "broken.py").symlink_to("../vendor/missing.py")
    outside = tmp_path.parent / f"{tmp_path.name}_outside.py"
    outside.write_text("secret = 1\n")
    (tmp_path / "pkg" / "out.py").symlink_to(outside)
    assert source_files(tmp_path) == ["pkg/real.py"]


def test_sample_is_stratified_and_reproducible():
    insts = load_bench(BENCH)
    two = sample(insts, 2, seed=1)
    assert {i.repo for i in two} == {"alpha/alpha", "beta/beta"}
    assert [i.instance_id for i in two] == [i.instance_id for i in sample(insts, 2, seed=1)]
    assert [i.repo for i in sample(insts, None, 0, ["beta/beta"])] == ["beta/beta"]


def test_all_suite_end_to_end(tmp_path, trees, capsys):
    res = _run(tmp_path, trees)
    assert tuple(res) == TOP_KEYS
    assert res["instances"] == 3 and res["skipped"] == []
    per = {r["instance_id"]: r["bm25"] for r in res["per_instance"]}
    # Hand-checked rankings on the fixtures.
    assert per["alpha__alpha-1"]["top_files"][0] == "alpha/parser.py"
    assert per["beta__beta-1"]["top_files"][0] == "beta/db/query.py"
    assert set(per["alpha__alpha-2"]["top_files"][:2]) == {"alpha/render.py", "alpha/parser.py"}
    assert res["file_acc"]["1"] == pytest.approx(2 / 3)  # alpha-2 has two gold files
    assert res["file_acc"]["5"] == 1.0 and res["mrr"] == 1.0
    # File-level system: function metrics are not applicable, never a fake 0.
    assert res["function_acc"] == {"5": None, "10": None}
    assert res["required_symbol_recall"] is None
    # Every fixture file fits in 4000 tokens: all gold lines delivered.
    assert res["gold_coverage"] == 1.0 and res["required_file_recall"] == 1.0
    assert 0.0 < res["irrelevant_context_ratio"] < 1.0
    assert res["suite"]["scored"]["located_hunks"] == 4
    assert res["suite"]["probes"]["lost_in_the_middle_bury"]["status"] == "skipped"
    assert set(res["baseline"]) == {"stuff_everything"}
    assert (
        res["baseline"]["stuff_everything"]["tokens_retrieved_p50"] >= res["tokens_retrieved_p50"]
    )
    assert set(res["per_repo"]) == {"alpha/alpha", "beta/beta"}
    assert set(res["per_language"]) == {"python"}  # by the gold files' extension
    assert res["per_language"]["python"]["instances"] == 3
    assert "bm25" in capsys.readouterr().out


def test_second_run_reuses_index(tmp_path, trees):
    _run(tmp_path, trees)
    idx = tmp_path / "cache" / "index"
    before = {p: p.stat().st_mtime_ns for p in idx.rglob("*") if p.is_file()}
    assert before
    _run(tmp_path, trees)
    after = {p: p.stat().st_mtime_ns for p in idx.rglob("*") if p.is_file()}
    assert after == before


def test_ablation_and_missing_tree(tmp_path, trees):
    shutil.rmtree(trees / "beta__beta-1")
    res = _run(tmp_path, trees, "--ablate")
    assert res["instances"] == 2
    assert res["skipped"][0]["instance_id"] == "beta__beta-1"
    switches = {e["switch"]: e for e in res["ablation"]["switches"]}
    assert set(switches) == {"path", "identifier_split"}
    assert all(e["verdict"] in {"KEEP", "DELETE"} for e in switches.values())


def test_report(tmp_path, trees):
    pytest.importorskip("matplotlib")
    _run(tmp_path, trees, "--report", str(tmp_path / "rep"))
    assert "file Acc@5" in (tmp_path / "rep/report.html").read_text()
    assert (tmp_path / "rep/recall_at_k.png").stat().st_size > 0


def _res(**kw):
    base = {
        "file_recall_mean": {"1": 0.4, "3": 0.6, "5": 0.7, "10": 0.8},
        "mrr": 0.5,
        "required_file_recall": 0.8,
        "required_symbol_recall": None,
        "irrelevant_context_ratio": 0.9,
        "tokens_retrieved_p50": 3900,
        "region_recall_at_5": 0.5,
        "context_efficiency": 0.1,
        "question_accuracy": None,
        "gold_coverage": 0.3,
        "relevance_precision": 0.2,
        "tokens_per_covered": 9000,
        "file_acc": {},
        "baseline": {},
    }
    base.update(kw)
    return base


def test_compare_verdicts(tmp_path, capsys):
    a = _res()
    better = _res(
        mrr=0.6,
        region_recall_at_5=0.6,
        relevance_precision=0.3,
        baseline={"stuff_everything": _res(tokens_per_covered=20000)},
    )
    rules = {r["rule"]: r for r in compare(a, better)}
    assert rules["retrieval"]["verdict"].startswith("WIN")
    assert rules["reconnaissance"]["verdict"].startswith("WIN")
    assert rules["construction"]["verdict"].startswith("WIN")
    worse_tokens = _res(mrr=0.6, tokens_retrieved_p50=4000)
    assert compare(a, worse_tokens)[0]["verdict"] == "LOSE"
    same = _res()
    assert compare(a, same)[0]["verdict"] == "LOSE"  # nothing strictly improved
    assert compare(a, same)[2]["verdict"] == "NOT EVALUABLE"  # no stuff-everything baseline
    pa, pb = tmp_path / "a.json", tmp_path / "b.json"
    pa.write_text(json.dumps(a))
    pb.write_text(json.dumps(better))
    assert main(["eval", "compare", str(pa), str(pb)]) == 0
    out = capsys.readouterr().out
    assert "== retrieval: WIN" in out and "resolve: not measured offline" in out
    bad = tmp_path / "bad.json"
    bad.write_text("[]")
    assert main(["eval", "compare", str(bad), str(pb)]) == 2


def test_ctxfast_system_end_to_end(tmp_path, trees):
    res = _run(tmp_path, trees, "--system", "ctxfast")
    assert tuple(res) == TOP_KEYS
    assert res["instances"] == 3 and res["skipped"] == []
    assert res["file_acc"]["5"] == 1.0
    # A symbol-level system reports function metrics (numbers, not None).
    assert isinstance(res["function_acc"]["10"], float)
    assert res["tokens_retrieved_p50"] <= 24_000


def test_named_variants_of_ctxfast_run_beside_it(tmp_path, trees):
    """``variants`` in --config: ctxfast with other settings, scored in the same run."""
    cfg = tmp_path / "cfg.json"
    cfg.write_text(json.dumps({"variants": {"ctxfast_no_prune": {"prune": False}}}))
    res = _run(tmp_path, trees, "--system", "ctxfast", "--config", str(cfg))
    variant = res["baseline"]["ctxfast_no_prune"]
    assert isinstance(variant["function_acc"]["10"], float)
    assert variant["file_acc"]["5"] == res["file_acc"]["5"]  # pruning never reorders files
    assert all("ctxfast_no_prune" in row for row in res["per_instance"])


def test_workers_are_spawned_and_score_as_one_process(tmp_path, trees, monkeypatch):
    """``--jobs 2`` runs the groups in spawned interpreters (a forked child would inherit
    the native threads' locks in whatever state they were) and scores exactly as one
    process does."""
    import multiprocessing

    from ctxfast.eval import runner

    methods = []
    real = multiprocessing.get_context

    def recording(method=None):
        methods.append(method)
        return real(method)

    monkeypatch.setattr(runner.multiprocessing, "get_context", recording)

    def untimed(value):
        if isinstance(value, dict):
            return {k: untimed(v) for k, v in value.items() if k != "ms"}
        return value

    def rows(res):
        return [untimed(r) for r in res["per_instance"]]

    one = _run(tmp_path / "one", trees, "--system", "ctxfast")
    two = _run(tmp_path / "two", trees, "--system", "ctxfast", "--jobs", "2")
    assert methods == ["spawn"]
    assert two["instances"] == one["instances"] == 3
    assert rows(two) == rows(one)
