"""Which files a window shows whole: one value-per-token rule over retrieval's file ranks
(``construct.whole_files``)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from ctxfast.construct.schema import CodeCandidate
from ctxfast.construct.source_reader import SourceReader
from ctxfast.construct.whole_files import (
    WholeFileSettings,
    spare_files,
    with_whole_files,
    with_whole_targets,
)
from ctxfast.text import is_product_path


def _chars(text, limit):
    """A stand-in token count: characters, stopping at ``limit``."""
    return len(text) if len(text) <= limit else None


@pytest.fixture
def tree(tmp_path):
    files = {
        "a.py": "def first():\n" + "    x = 1\n" * 9,  # 103 characters
        "b.py": "def second():\n" + "    y = 2\n" * 9,  # 104
        "c.py": "def third():\n" + "    z = 3\n" * 9,  # 103
        "tests/test_a.py": "def test_first():\n    assert True\n",
        "docs/conf.py": "def setup(app):\n    return app\n",
        "vendor/dep.py": "def dep():\n    return 0\n",
        "lib.min.js": "function m(){return 1}\n",
        "lonely.py": "X = 1\n",
    }
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text, encoding="utf-8")
    return tmp_path


def _cand(qualname, file, score):
    return CodeCandidate(qualname, "function", file, 1, 2, score, None, "def", "r")


CANDS = [
    _cand("a.first", "a.py", 3.0),
    _cand("b.second", "b.py", 2.0),
    _cand("c.third", "c.py", 1.5),
    _cand("t.test_first", "tests/test_a.py", 2.5),
    _cand("d.setup", "docs/conf.py", 2.5),
    _cand("v.dep", "vendor/dep.py", 2.5),
    _cand("m", "lib.min.js", 2.5),
]


def _whole(tree, ranked, cfg=None, target=400, heads=("a.first",), guesses=True, cands=CANDS):
    out, log, used = with_whole_files(
        SourceReader(tree).lines,
        cands,
        list(heads),
        ranked,
        cfg or WholeFileSettings(),
        target,
        _chars,
        guesses=guesses,
    )
    assert sorted(c.file for c in out if c.whole_file) == sorted(e.subject for e in log)
    assert used == sum(len(c.text) for c in out if c.whole_file)
    return sorted(e.subject for e in log)


def test_the_cap_falls_with_the_rank(tree):
    # At a 400 target the best file may take .65 x 400 = 260 characters; with the prior
    # taken linearly the second .25/.6 of that (108), the third .12/.6 (52): a 103-character
    # file is whole at ranks 1 and 2 only. Its square root (the default) flattens the cut:
    # the third rank's cap is 116.
    linear = WholeFileSettings(prior_power=1.0)
    assert _whole(tree, ["a.py", "b.py", "c.py"], linear) == ["a.py", "b.py"]
    assert _whole(tree, ["c.py", "a.py", "b.py"], linear) == ["a.py", "c.py"]
    assert _whole(tree, ["a.py", "b.py", "c.py"]) == ["a.py", "b.py", "c.py"]
    assert _whole(tree, ["a.py", "b.py", "x.py", "y.py", "c.py"]) == ["a.py", "b.py"]
    flat = WholeFileSettings(prior=(0.5, 0.5, 0.5), prior_power=1.0)
    assert _whole(tree, ["a.py", "b.py", "c.py"], flat) == ["a.py", "b.py", "c.py"]
    assert _whole(tree, ["a.py", "b.py", "c.py"], linear, target=4000) == ["a.py", "b.py", "c.py"]
    # Past the prior's table a file is worth nothing.
    assert _whole(tree, ["a.py", "b.py", "c.py"], WholeFileSettings(prior=(0.6,))) == ["a.py"]


def test_never_tests_docs_vendored_or_generated(tree):
    ranked = ["tests/test_a.py", "docs/conf.py", "vendor/dep.py", "lib.min.js", "a.py"]
    flat = WholeFileSettings(prior=(0.6,) * 5)
    assert _whole(tree, ranked, flat, target=4000) == ["a.py"]
    for path in ranked[:4]:
        assert not is_product_path(path)
    assert is_product_path("a.py") and is_product_path("pkg/core.py")


def test_the_total_share_taken_most_likely_file_first(tree):
    (tree / "big.py").write_text("def big():\n" + "    w = 4\n" * 19, encoding="utf-8")  # 200
    (tree / "tiny.py").write_text("def t():\n    0\n", encoding="utf-8")  # 15 characters
    cands = [*CANDS, _cand("big.big", "big.py", 3.0), _cand("tiny.t", "tiny.py", 1.0)]
    # Room for 210 characters: the best-ranked file first, though the second is cheaper
    # per unit of its prior; then nothing else fits.
    cfg = WholeFileSettings(total_share=0.525)
    assert _whole(tree, ["big.py", "tiny.py"], cfg, cands=cands) == ["big.py"]
    assert _whole(tree, ["tiny.py", "big.py"], cfg, cands=cands) == ["tiny.py"]
    assert _whole(tree, ["big.py", "tiny.py"], cands=cands) == ["big.py", "tiny.py"]
    assert _whole(tree, ["a.py", "b.py"], WholeFileSettings(total_share=0.0)) == []
    assert _whole(tree, ["a.py", "b.py"], WholeFileSettings(share=0.0)) == []
    assert _whole(tree, ["a.py", "b.py"], WholeFileSettings(prior=())) == []


def test_without_guesses_only_the_change_targets_files(tree):
    assert _whole(tree, ["b.py", "a.py"], guesses=False) == ["a.py"]
    # A target's file outside retrieval's ranking counts at the last rank of the table.
    wide = WholeFileSettings(prior=(0.6, 0.6))
    assert _whole(tree, ["b.py"], wide, guesses=False) == ["a.py"]


def test_the_carrier_is_the_first_target_else_the_best_definition(tree):
    cands = [
        _cand("a.low", "a.py", 1.0),
        _cand("a.high", "a.py", 2.0),
        CodeCandidate(None, "lines", "lonely.py", 1, 1, 9.0, None, "X = 1", "r"),
    ]
    out, _, _ = with_whole_files(
        SourceReader(tree).lines, cands, [], ["a.py", "lonely.py"], WholeFileSettings(), 400, _chars
    )
    assert [c.qualname for c in out if c.whole_file] == ["a.high"]  # lonely.py: no entity
    out, _, _ = with_whole_files(
        SourceReader(tree).lines, cands, ["a.low"], ["a.py"], WholeFileSettings(), 400, _chars
    )
    (carrier,) = [c for c in out if c.whole_file]
    assert carrier.qualname == "a.low" and carrier.lines == tuple(range(1, 11))
    assert (carrier.start_line, carrier.end_line) == (1, 2)  # its span stays the definition's


def test_spare_files_take_the_best_ranked_product_files_scored_last(tree):
    ranked = ["tests/test_a.py", "a.py", "vendor/dep.py", "b.py", "c.py"]
    spare = spare_files(SourceReader(tree).lines, CANDS, ranked, WholeFileSettings(), 400, _chars)
    assert [c.file for c in spare] == ["a.py", "b.py", "c.py"]
    assert all(c.whole_file and c.score == 0.75 for c in spare)  # half the lowest score
    one = spare_files(
        SourceReader(tree).lines, CANDS, ranked, WholeFileSettings(spare_files=1), 400, _chars
    )
    assert [c.file for c in one] == ["a.py"]
    assert spare_files(SourceReader(tree).lines, [], ranked, WholeFileSettings(), 400, _chars) == []


def _long_target(tree, n_lines=60):
    body = "".join(f"    step_{i} = {i}\n" for i in range(n_lines))
    (tree / "long.py").write_text("import os\n\n\ndef long_fn():\n" + body, encoding="utf-8")
    return CodeCandidate(
        "long.long_fn", "function", "long.py", 4, 4 + n_lines, 2.0, None, "def long_fn():", "r"
    )


def test_a_long_change_target_is_shown_as_its_whole_definition(tree):
    cand = _long_target(tree)
    cut = replace(cand, lines=(1, 4, 5, 6))  # what a line window or a view would keep

    def whole(c, cfg=None, large=20, ranked=("long.py",), used=0):
        out, log = with_whole_targets(
            SourceReader(tree).lines,
            [c],
            ["long.long_fn"],
            list(ranked),
            cfg or WholeFileSettings(),
            4000,
            _chars,
            large,
            used,
        )
        return out[0], [e.decision for e in log]

    got, log = whole(cut)
    assert log == ["whole_definition"] and got.uncut
    assert got.lines == (1, *range(4, 65))  # the lines it carried (imports) and its span
    assert got.text.splitlines()[0] == "import os"
    # A body construction keeps whole anyway is left as it is.
    assert whole(cand, large=100) == (cand, [])
    # Over its rank's cap (a fourth-ranked file's), or with the room spent: as given.
    assert whole(cut, ranked=("a.py", "b.py", "c.py", "d.py", "e.py", "f.py", "long.py"))[1] == []
    assert whole(cut, used=int(4000 * WholeFileSettings().total_share))[1] == []
    assert whole(cut, WholeFileSettings(target_share=0.0))[1] == []


@pytest.mark.parametrize(
    "path",
    [
        "docs_src/security/tutorial003.py",
        "requests/_vendor/urllib3/contrib/ntlmpool.py",
        "examples/profiling/run.py",
        "tests/test_core.py",
        "dist/app.min.js",
    ],
)
def test_code_beside_the_product_is_never_a_change_target(path):
    assert not is_product_path(path)
