"""The ranked repo map (PageRank, budget, shrink) and the six-question battery (6/6)."""

from __future__ import annotations

import pytest
from recon_fixture import write_project

from ctxfast import Repository, count_tokens
from ctxfast.errors import InvalidArgumentError
from ctxfast.recon import repomap
from ctxfast.recon.pagerank import pagerank
from ctxfast.recon.repomap import effective_budget
from ctxfast.state_store import STATE_DIRNAME


@pytest.fixture()
def repo(tmp_path):
    r = Repository(write_project(tmp_path))
    r.index()
    return r


def test_pagerank_known_values():
    assert pagerank(2, [(0, 1, 1.0), (1, 0, 1.0)]) == pytest.approx([0.5, 0.5])
    # Star into node 0: hand-solved stationary vector for damping 0.85 with dangling node 0.
    scores = pagerank(3, [(1, 0, 1.0), (2, 0, 1.0)])
    a = (0.15 / 3 + 0.85 * 2 * (1 / 3)) / 1
    assert scores[0] > scores[1] == pytest.approx(scores[2])
    assert sum(scores) == pytest.approx(1.0)
    assert a > 0  # the closed form favours the hub
    pers = pagerank(3, [(0, 1, 1.0), (1, 2, 1.0), (2, 0, 1.0)], {2: 1.0})
    assert max(range(3), key=pers.__getitem__) == 2
    assert pagerank(0, []) == []


def test_repo_map_ranks_hubs_and_fits_budget(repo):
    text = repo.repo_map(max_tokens=1024)
    files = [line[:-1] for line in text.splitlines() if not line.startswith(" ")]
    assert files[0] in ("pkg/utils.py", "pkg/db.py", "pkg/cli.py")
    assert "  def parse_args(argv):" in text
    assert "    def run(self):" in text  # methods nest under their class
    for budget in (5, 20, 40, 80):
        assert count_tokens(repo.repo_map(max_tokens=budget)) <= budget


def test_repo_map_personalised_and_shrinking(repo):
    text = repo.repo_map(query="the DATABASE_URL handling in connect", max_tokens=1024)
    assert text.splitlines()[0] == "pkg/db.py:"
    full = repo.repo_map(max_tokens=120)
    fewer = repo.repo_map(max_tokens=120, files_in_prompt=("pkg/cli.py", "pkg/db.py"))
    assert "pkg/cli.py:" not in fewer and count_tokens(fewer) <= effective_budget(120, 2)
    assert count_tokens(fewer) < count_tokens(full)
    assert effective_budget(1000, 0) == 1000 and effective_budget(1000, 1) == 500
    assert effective_budget(1000, 10) == 250


def test_a_new_process_reads_what_the_map_read_from_the_stored_state(repo, monkeypatch):
    maps = [repo.repo_map(), repo.repo_map("parse_args fails")]
    pieces = {p.name.rsplit(".", 1)[-1] for p in (repo.index_dir / STATE_DIRNAME).iterdir()}
    assert {"repomap-edges", "repomap-ranks", "repomap-signatures"} <= pieces

    def refuse(*_args):
        raise AssertionError("the map read the index's graph or signatures again")

    monkeypatch.setattr(repomap, "_file_edges", refuse)
    monkeypatch.setattr(repomap, "_signatures", refuse)
    fresh = Repository(repo.root)  # a new object keeps nothing: what a new process sees
    assert [fresh.repo_map(), fresh.repo_map("parse_args fails")] == maps


GROUND_TRUTH = {
    ("Q1", "main"): ["Makefile:5", "pyproject.toml:9"],
    ("Q2", "parse_args"): ["pkg/utils.py:1"],
    ("Q3", "main"): ["pkg/cli.py:16", "tests/test_cli.py:5"],
    ("Q4", None): ["Makefile:2"],
    ("Q5", None): ["pkg/db.py:3"],
    ("Q6", "main"): ["pkg/cli.py:15", "pkg/db.py:6", "pkg/utils.py:1", "tests/test_cli.py:4"],
}


def test_question_battery_six_of_six(repo):
    correct = 0
    for (qid, subject), truth in GROUND_TRUTH.items():
        ans = repo.answer(qid, subject)
        correct += sorted(ans.evidence) == sorted(truth)
    assert correct / 6 == 1.0
    assert repo.answer("Q4").answer == "python -m build"
    assert repo.answer("Q1", "main").answer["test_files"] == ["tests/test_cli.py"]
    assert repo.answer("Q2", "parse_args").answer["module"] == "pkg.utils"


def test_question_errors(repo):
    with pytest.raises(InvalidArgumentError):
        repo.answer("Q9", "x")
    with pytest.raises(InvalidArgumentError):
        repo.answer("Q3")
