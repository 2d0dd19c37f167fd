"""Gold functions derived from a record's hunks (``eval/gold_functions.py``), by ctxfast's
own parser, and scored end to end when a record names none."""

import json
import os

from eval_fixtures import BENCH, copy_eval_trees

from ctxfast.cli import main
from ctxfast.eval.gold_functions import definitions_of, derived_function_spans, function_spans

PY = b"""import os

LIMIT = 3


class Reader:
    def read(self, path):
        with open(path) as fh:
            return fh.read()

    def close(self):
        def inner():
            return 1

        return inner()


def helper(x):
    return x + LIMIT
"""

GO = b"""package store

func Get(key string) string {
\treturn key
}

func Put(key string) {
\t_ = key
}
"""


def _spans(files, hunks):
    return sorted(function_spans(definitions_of(files), hunks))


def test_innermost_function_around_each_changed_line():
    hunks = [
        {"file": "pkg/reader.py", "start_line": 8, "end_line": 9, "kind": "modify"},
        {"file": "pkg/reader.py", "start_line": 13, "end_line": 13, "kind": "modify"},
        {"file": "pkg/reader.py", "start_line": 3, "end_line": 3, "kind": "modify"},
    ]
    assert _spans({"pkg/reader.py": PY}, hunks) == [
        ("pkg/reader.py", "Reader.close.inner", 12, 13),
        ("pkg/reader.py", "Reader.read", 7, 9),
    ]


def test_an_insertion_names_the_function_holding_both_lines_around_it():
    inside = {"file": "pkg/reader.py", "start_line": 18, "end_line": 19, "kind": "insert"}
    between = {"file": "pkg/reader.py", "start_line": 9, "end_line": 10, "kind": "insert"}
    assert _spans({"pkg/reader.py": PY}, [inside]) == [("pkg/reader.py", "helper", 18, 19)]
    assert _spans({"pkg/reader.py": PY}, [between]) == []
    lite = {"file": "pkg/reader.py", "start": 9, "end": 10, "blocks": [[9, 10, "insert"]]}
    assert _spans({"pkg/reader.py": PY}, [lite]) == []  # the Lite format's kind is its block's


def test_any_parsed_language_and_the_lite_hunk_format():
    hunks = [{"file": "store/store.go", "start": 8, "end": 8, "blocks": [[8, 8, "change"]]}]
    # Go qualifies a function by its package; matching to candidates is by span.
    [(file, qualname, start, end)] = _spans({"store/store.go": GO}, hunks)
    assert (file, qualname.rsplit(".", 1)[-1], start, end) == ("store/store.go", "Put", 7, 9)


def test_files_outside_the_tree_or_missing_name_nothing(tmp_path):
    root = tmp_path / "tree"
    root.mkdir()
    outside = tmp_path / "secret.py"
    outside.write_bytes(PY)
    os.symlink(outside, root / "link.py")
    hunks = [
        {"file": "link.py", "start_line": 8, "end_line": 8, "kind": "modify"},
        {"file": "missing.py", "start_line": 1, "end_line": 1, "kind": "modify"},
        {"file": "../secret.py", "start_line": 8, "end_line": 8, "kind": "modify"},
    ]
    assert derived_function_spans(root, hunks) == []
    (root / "real.py").write_bytes(PY)
    hunks.append({"file": "real.py", "start_line": 19, "end_line": 19, "kind": "modify"})
    assert derived_function_spans(root, hunks) == [("real.py", "helper", 18, 19)]


def _retrieval(tmp_path, bench, trees, name):
    out = tmp_path / f"{name}.json"
    rc = main(
        [
            *("eval", "retrieval", str(bench), "--trees", str(trees), "--out", str(out)),
            *("--cache", str(tmp_path / "cache"), "--no-progress", "--system", "ctxfast"),
        ]
    )
    assert rc == 0
    return json.loads(out.read_text())


def test_a_record_naming_no_function_scores_function_ranks_from_its_hunks(tmp_path):
    trees = copy_eval_trees(tmp_path / "trees")
    bare = tmp_path / "bare.jsonl"
    with open(BENCH) as src, open(bare, "w") as dst:
        for line in src:
            rec = json.loads(line)
            rec.pop("gold_symbols", None)
            for h in rec["gold_hunks"]:
                h.pop("symbols", None)
            dst.write(json.dumps(rec) + "\n")
    named = _retrieval(tmp_path, BENCH, trees, "named")
    derived = _retrieval(tmp_path, bare, trees, "derived")
    assert isinstance(derived["function_acc"]["10"], float)
    ranks = {r["instance_id"]: r["ctxfast"]["symbol_ranks"] for r in derived["per_instance"]}
    assert ranks == {r["instance_id"]: r["ctxfast"]["symbol_ranks"] for r in named["per_instance"]}
