"""The window judged per slice and its misses explained: the issue corpus's hunk fields, the
miss taxonomy (file absent / present and how shown), the largest block, the language groups,
the repository halves and the per-task records of ``ctxfast eval construct``."""

import hashlib
import json

import pytest
from eval_fixtures import BENCH, copy_eval_trees

from ctxfast.cli import main
from ctxfast.construct.schema import WindowEntry
from ctxfast.eval import window_misses as W
from ctxfast.eval.breakdown import (
    breakdown,
    format_markdown,
    format_table,
    groups_of,
    language_group,
    repo_halves,
    task_records,
)
from ctxfast.eval.errors import EvalError
from ctxfast.eval.instances import Instance, Region, hunk_span, load_bench
from ctxfast.eval.systems import FILE_PREFIX, WHOLE_FILE, Candidate, window_candidates


def _cand(file, start, end, view, tokens=10, lines=None):
    return Candidate(file, None, start, end, kept_lines=lines, tokens=tokens, view=view)


def _lines(counts):
    return lambda f: counts.get(f)


# --------------------------------------------------------------------------- gold fields


def test_hunk_span_reads_both_benchmarks():
    assert hunk_span({"file": "a.py", "start": 3, "end": 5}) == (3, 5)
    assert hunk_span({"file": "a.py", "start_line": 7, "end_line": 9}) == (7, 9)
    with pytest.raises(EvalError):
        hunk_span({"file": "a.py"})


def test_corpus_hunks_are_cut_at_the_last_line(tmp_path):
    (tmp_path / "a.py").write_text("x\ny\nz\n")
    hunks = [
        {"file": "a.py", "start_line": 1, "end_line": 1},
        {"file": "a.py", "start_line": 3, "end_line": 4},
    ]
    inst = Instance("i", "o/r", "", "t", ["a.py"], gold_hunks=hunks)
    assert inst.hunk_regions(tmp_path) == [Region("a.py", 1, 1), Region("a.py", 3, 3)]


def test_an_insertion_before_the_first_line_starts_at_line_one(tmp_path):
    """``[0, 1]`` names the place before line 1: a window showing line 1 shows it."""
    (tmp_path / "a.py").write_text("x\ny\n")
    inst = Instance(
        "i", "o/r", "", "t", ["a.py"], gold_hunks=[{"file": "a.py", "start": 0, "end": 1}]
    )
    assert inst.hunk_regions() == [Region("a.py", 1, 1)]
    assert inst.hunk_regions(tmp_path) == [Region("a.py", 1, 1)]


def test_multi_file_from_the_record_else_the_gold_files():
    two = Instance("i", "o/r", "", "t", ["a.py", "b.py"])
    assert two.multi_file
    assert not Instance("i", "o/r", "", "t", ["a.py", "b.py"], raw={"multi_file": False}).multi_file
    assert not Instance("i", "o/r", "", "t", ["a.py"]).multi_file


# --------------------------------------------------------------------------- miss taxonomy


def test_file_absent_and_covered_hunks():
    gold = [Region("a.py", 3, 4), Region("b.py", 1, 2)]
    cands = [_cand("a.py", 1, 10, WHOLE_FILE)]
    assert W.missed_hunks(cands, gold, _lines({})) == [
        {"file": "b.py", "start": 1, "end": 2, "status": W.FILE_ABSENT}
    ]


@pytest.mark.parametrize(
    ("pieces", "form"),
    [
        ([_cand("a.py", 1, 20, FILE_PREFIX)], W.CUT),  # stuffing's last file, cut before
        ([_cand("a.py", 1, 31, "change_target:verbatim")], W.PARTLY_SHOWN),  # stops inside
        ([_cand("a.py", 1, 9, "related_symbol:truncated")], W.CUT),
        ([_cand("a.py", 1, 50, "file_outline:verbatim", lines=(1, 5, 9))], W.SKELETON),
        ([_cand("a.py", 5, 6, "impact_direct:signature")], W.SKELETON),
        (
            [
                _cand("a.py", 5, 6, "impact_direct:signature"),
                _cand("a.py", 40, 45, "change_target:verbatim"),
            ],
            W.OTHER_PARTS,
        ),
    ],
)
def test_present_file_forms(pieces, form):
    (miss,) = W.missed_hunks(pieces, [Region("a.py", 30, 32)], _lines({"a.py": 50}))
    assert miss["status"] == W.FILE_PRESENT and miss["form"] == form
    assert miss["file_lines"] == 50 and miss["views"] == sorted({p.view for p in pieces})


def test_present_miss_reports_shown_lines_and_gap():
    pieces = [_cand("a.py", 1, 5, "change_target:verbatim"), _cand("a.py", 40, 41, "x:verbatim")]
    (miss,) = W.missed_hunks(pieces, [Region("a.py", 30, 32)], _lines({"a.py": 50}))
    assert miss["shown_lines"] == 7 and miss["gap"] == 8  # line 40 is 8 past line 32


def test_largest_block_kind_and_gold():
    gold = [Region("pkg/core.py", 30, 32)]
    cands = [
        _cand("pkg/core.py", 28, 35, "change_target:verbatim", tokens=50),
        _cand("tests/test_core.py", 1, 100, "related_test:verbatim", tokens=900),
        _cand("pkg/util.py", 1, 10, "related_symbol:signature", tokens=0),
    ]
    counts = _lines({"pkg/core.py": 80, "tests/test_core.py": 100})
    big = W.largest_block(cands, gold, ["pkg/core.py"], counts)
    assert big["file"] == "tests/test_core.py" and big["tokens"] == 900
    assert not big["holds_gold"] and not big["gold_file"]
    assert big["kind"] == "related_test:verbatim, whole file, test file"
    small = W.largest_block(cands[:1], gold, ["pkg/core.py"], counts)
    assert small["holds_gold"] and small["kind"].endswith("part, gold file")
    assert W.largest_block([cands[2]], gold, [], counts) is None  # nothing priced


def test_block_summaries_and_token_accounts():
    gold = [Region("pkg/core.py", 30, 32)]
    cands = [
        _cand("pkg/core.py", 1, 80, "change_target:verbatim", tokens=400),
        _cand("pkg/util.py", 1, 20, "change_target:verbatim", tokens=100),
        _cand("pkg/big.py", 5, 9, "related_symbol:verbatim", tokens=50),
        _cand("pkg/none.py", 1, 3, "related_symbol:signature", tokens=0),
    ]
    counts = _lines({"pkg/core.py": 80, "pkg/util.py": 20, "pkg/big.py": 300})
    blocks = W.block_summaries(cands, gold, ["pkg/core.py"], counts)
    assert [b["file"] for b in blocks] == ["pkg/core.py", "pkg/util.py", "pkg/big.py"]
    assert [b["whole"] for b in blocks] == [True, True, False]
    assert [b["gold_lines"] for b in blocks] == [3, 0, 0]
    assert blocks[0]["relation"] == "gold file" and blocks[1]["relation"] == "non-gold source"
    a = W.token_accounts([{"blocks": blocks}, {"blocks": None}])
    assert a["tokens"] == 550
    assert a["relation_share"] == {"gold file": round(400 / 550, 3), "non-gold source": 0.273}
    assert (a["whole_file_blocks"], a["whole_file_tokens"]) == (2, 500)
    assert (a["whole_file_blocks_with_gold"], a["whole_file_tokens_with_gold"]) == (1, 400)


def test_task_outcome_and_gap_quartiles():
    absent = {"status": W.FILE_ABSENT}
    near = {"status": W.FILE_PRESENT, "form": W.OTHER_PARTS, "gap": 3}
    far = {"status": W.FILE_PRESENT, "form": W.OTHER_PARTS, "gap": 40}
    assert W.task_outcome([]) == "covered"
    assert W.task_outcome([near, absent]) == "some_file_absent"
    assert W.task_outcome([near, far]) == "only_present_misses"
    rows = [{"hunks": 4, "missed_hunks": [near, far, far, near]}]
    assert W.miss_counts(rows)["present_gap_quartiles"] == [3, 40, 40]


def test_file_relation():
    assert W.file_relation("a.py", ["a.py"]) == "gold file"
    assert W.file_relation("src/x_test.go", []) == "test file"
    assert W.file_relation("examples/demo/run.py", []) == "example file"
    assert W.file_relation("src/lib.rs", []) == "non-gold source"
    assert W.file_relation("README.md", []) == "non-code file"


def test_miss_counts_and_unrelated_kinds():
    rows = [
        {"hunks": 2, "missed_hunks": [{"status": W.FILE_ABSENT}], "largest_block": None},
        {
            "hunks": 3,
            "missed_hunks": [
                {"status": W.FILE_PRESENT, "form": W.SKELETON},
                {"status": W.FILE_PRESENT, "form": W.OTHER_PARTS},
            ],
            "largest_block": {"holds_gold": False, "kind": "b", "tokens": 10},
        },
        {
            "hunks": 1,
            "missed_hunks": [],
            "largest_block": {"holds_gold": True, "kind": "c", "tokens": 5},
        },
        {
            "hunks": 1,
            "missed_hunks": [],
            "largest_block": {"holds_gold": False, "kind": "a", "tokens": 30},
        },
    ]
    c = W.miss_counts(rows)
    assert (c["hunks"], c["hunks_missed"], c["instances_missing"]) == (7, 3, 2)
    assert (c[W.FILE_ABSENT], c[W.FILE_PRESENT]) == (1, 2)
    assert c["present_forms"] == {W.PARTLY_SHOWN: 0, W.CUT: 0, W.SKELETON: 1, W.OTHER_PARTS: 1}
    assert c["present_form_tasks"][W.SKELETON] == 1 and c["present_form_tasks"][W.CUT] == 0
    assert c["tasks"] == {"covered": 2, "some_file_absent": 1, "only_present_misses": 1}
    assert c["present_gap_quartiles"] is None  # no gap recorded in these rows
    u = W.unrelated_largest(rows)
    assert (u["windows"], u["unrelated"], u["unrelated_tokens_p50"]) == (3, 2, 20.0)
    assert u["top_kinds"] == [{"kind": "a", "windows": 1}, {"kind": "b", "windows": 1}]


def test_window_candidates_carry_role_and_rendering():
    entry = WindowEntry(
        item_id="E1",
        kind="symbol",
        role="file_outline",
        rendering="verbatim",
        tier="working_set",
        critical=False,
        text="x",
        file="a.py",
        start_line=1,
        end_line=40,
        lines=(1, 7),
    )
    (cand,) = window_candidates([entry], [12], lambda f, e: None)
    assert cand.view == "file_outline:verbatim" and W.is_skeleton(cand.view)


# --------------------------------------------------------------------------- slices


def test_language_groups():
    assert [language_group(x) for x in ("c", "cpp", "javascript", "typescript", "go")] == [
        "c/cpp",
        "c/cpp",
        "js/ts",
        "js/ts",
        "go",
    ]
    assert language_group("kotlin") == "kotlin"


def test_repo_halves_follow_the_hash_order():
    repos = ["o/a", "o/b", "o/c", "o/d", "o/e"]
    halves = repo_halves([*repos, "o/a"])
    order = sorted(repos, key=lambda r: hashlib.sha256(r.encode()).hexdigest())
    assert [halves[r] for r in order] == ["A", "A", "A", "B", "B"]
    assert repo_halves(reversed(repos)) == halves


def _entry(iid, repo, lang, multi, window, bm25):
    return {
        "instance_id": iid,
        "repo": repo,
        "language": lang,
        "multi_file": multi,
        "gold_files": ["a.py"],
        "located_hunks": 1,
        "win": window,
        "bm": bm25,
    }


def _row(covered, present, tokens):
    return {
        "covered": covered,
        "gold_files_present": present,
        "tokens": tokens,
        "hunks": 1,
        "missed_hunks": [] if covered else [{"status": W.FILE_ABSENT}],
        "largest_block": None,
    }


def test_breakdown_slices_and_records():
    entries = [
        _entry("p1", "o/py", "python", False, _row(True, True, 100), _row(False, False, 90)),
        _entry("c1", "o/c", "c", True, _row(False, True, 300), _row(True, True, 280)),
        _entry("c2", "o/cc", "cpp", False, _row(True, True, 200), _row(True, True, 190)),
    ]
    halves = {"o/py": "A", "o/c": "B", "o/cc": "B"}
    assert groups_of(entries[1], halves) == ["all", "lang c/cpp", "multi-file", "half B"]
    bd = breakdown(entries, {"window": "win", "bm25_same_tokens": "bm"}, halves)
    assert list(bd["groups"]) == [
        "all",
        "lang python",
        "lang c/cpp",
        "single-file",
        "multi-file",
        "half A",
        "half B",
    ]
    allw = bd["groups"]["all"]["window"]
    assert (allw["instances"], allw["covered"], allw["tokens_p50"]) == (3, 2, 200.0)
    cpp = bd["groups"]["lang c/cpp"]
    assert cpp["window"]["gold_coverage"] == 0.5 and cpp["bm25_same_tokens"]["gold_coverage"] == 1
    assert bd["groups"]["half A"]["bm25_same_tokens"]["gold_file_presence"] == 0.0
    assert bd["halves"] == {"A": ["o/py"], "B": ["o/c", "o/cc"]}
    assert bd["misses"]["window"]["file_absent"] == 1
    table = format_table(bd)
    assert "| lang c/cpp | 2 | 0.500 | 1.000 | 250 | 1.000 | 1.000 | 235 |" in table
    assert "half_rule" not in format_markdown(bd) and "sha256" in format_markdown(bd)
    recs = task_records(entries, bd["systems"], halves)
    assert recs[1]["language_group"] == "c/cpp" and recs[1]["half"] == "B"
    assert recs[1]["multi_file"] and recs[1]["window"]["covered"] is False
    assert set(recs[0]["window"]) == {
        "covered",
        "gold_files_present",
        "tokens",
        "missed_hunks",
        "largest_block",
        "blocks",
    }


# --------------------------------------------------------------------------- end to end


def _corpus_bench(tmp_path):
    """The fixture benchmark in the issue corpus's format: ``start_line``/``end_line``
    hunks, a ``language`` and a ``multi_file`` flag."""
    out = tmp_path / "dev.jsonl"
    lines = []
    for inst in load_bench(BENCH):
        rec = dict(inst.raw)
        rec["gold_hunks"] = [
            {"file": h["file"], "start_line": h["start"], "end_line": h["end"], "kind": "modify"}
            for h in rec["gold_hunks"]
        ]
        rec["language"] = "python"
        rec["multi_file"] = len(rec["gold_files"]) > 1
        lines.append(json.dumps(rec))
    out.write_text("\n".join(lines) + "\n")
    return out


def test_construct_run_writes_breakdown_and_tasks(tmp_path, capsys):
    trees = copy_eval_trees(tmp_path / "trees")
    bench = _corpus_bench(tmp_path)
    tasks, md, out = tmp_path / "tasks.jsonl", tmp_path / "summary.md", tmp_path / "r.json"
    args = [
        "eval",
        "construct",
        str(bench),
        "--trees",
        str(trees),
        "--out",
        str(out),
        "--cache",
        str(tmp_path / "cache"),
        "--no-progress",
        "--system",
        "ctxfast",
        "--curve-targets",
        "",
        "--tasks-jsonl",
        str(tasks),
        "--summary-md",
        str(md),
    ]
    assert main(args) == 0
    res = json.loads(out.read_text())
    bd = res["window_breakdown"]
    assert bd["systems"] == {"window": "ctxfast_construct", "bm25_same_tokens": "bm25_same_tokens"}
    groups = bd["groups"]
    assert groups["all"]["instances"] == 3 and groups["multi-file"]["instances"] == 1
    assert groups["all"]["window"]["gold_coverage"] == res["gold_coverage"]
    same = res["construct_comparison"]["systems"]["bm25_same_tokens"]
    assert groups["all"]["bm25_same_tokens"]["gold_coverage"] == same["gold_coverage"]
    assert sum(groups[f"half {h}"]["instances"] for h in "AB" if f"half {h}" in groups) == 3
    recs = [json.loads(line) for line in tasks.read_text().splitlines()]
    assert [r["instance_id"] for r in recs] == [r["instance_id"] for r in res["per_instance"]]
    for rec, row in zip(recs, res["per_instance"], strict=True):
        window = row["ctxfast_construct"]
        assert rec["window"]["covered"] == window["covered"]
        assert (not rec["window"]["missed_hunks"]) == window["covered"]
        assert rec["window"]["largest_block"]["tokens"] > 0
    assert "| all | 3 |" in md.read_text()
    assert "every-hunk" in capsys.readouterr().out


def test_tasks_jsonl_needs_the_window(tmp_path):
    trees = copy_eval_trees(tmp_path / "trees")
    out = tmp_path / "r.json"
    args = [
        "eval",
        "construct",
        str(BENCH),
        "--trees",
        str(trees),
        "--out",
        str(out),
        "--cache",
        str(tmp_path / "cache"),
        "--no-progress",
        "--system",
        "bm25",
        "--tasks-jsonl",
        str(tmp_path / "t.jsonl"),
    ]
    assert main(args) == 2
    assert not out.exists()


def _point(covered):
    return {"covered": covered, "gold_files_present": covered, "tokens": 10}


def test_the_curve_per_slice():
    entries = [
        _entry("p1", "o/py", "python", False, _row(True, True, 100), _row(False, False, 90)),
        _entry("c1", "o/c", "c", True, _row(False, True, 300), _row(True, True, 280)),
    ]
    entries[0]["curve"] = {
        "window": {"2000": _point(False), "8000": _point(True)},
        "stuffing": {"2000": _point(False), "8000": _point(False)},
    }
    entries[1]["curve"] = {
        "window": {"2000": _point(False), "8000": _point(False)},
        "stuffing": {"2000": _point(True), "8000": _point(True)},
    }
    bd = breakdown(entries, {"window": "win", "bm25_same_tokens": "bm"}, {"o/py": "A"})
    assert bd["curve"]["all"] == {
        "2000": {"window": 0.0, "stuffing": 0.5},
        "8000": {"window": 0.5, "stuffing": 0.5},
    }
    assert bd["curve"]["lang python"]["8000"] == {"window": 1.0, "stuffing": 0.0}
    assert bd["curve"]["multi-file"]["2000"] == {"window": 0.0, "stuffing": 1.0}
    md = format_markdown(bd)
    assert "| slice | 2000 window / stuffing | 8000 window / stuffing |" in md
    assert "| lang c/cpp | 0.000 / 1.000 | 0.000 / 1.000 |" in md
    # A run without the curve prints no curve table.
    del entries[0]["curve"], entries[1]["curve"]
    plain = breakdown(entries, {"window": "win", "bm25_same_tokens": "bm"}, {})
    assert all(not pts for pts in plain["curve"].values())
    assert "by target size" not in format_markdown(plain)
