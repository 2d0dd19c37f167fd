"""A warm repo map (a second call on the same ``Repository``) reads nothing of the index again
while its content is unchanged, and is byte for byte the map a cold call gives; an edit, a
rebuilt index or another process's refresh between two calls is what the next call shows."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from recon_fixture import FILES, write_project

import ctxfast
from ctxfast import count_tokens
from ctxfast.recon import repomap
from ctxfast.recon.repomap import RepoMap, build_repo_map
from ctxfast.text import identifiers

QUERIES = (None, "the DATABASE_URL handling in connect", "Runner.run calls main in pkg/cli.py")
BUDGETS = (20, 60, 1024)
ADDED = "\n\ndef reconnect(uri: str, retries: int = 3):\n    return connect(uri)\n"


def _project(root: Path) -> Path:
    write_project(root)
    # Written well before the first build, so no file is racy (re-read by a later refresh).
    past = time.time() - 30
    for p in root.rglob("*"):
        if p.is_file():
            os.utime(p, (past, past))
    return root


@pytest.fixture
def repo(tmp_path: Path) -> ctxfast.Repository:
    return ctxfast.Repository(_project(tmp_path / "proj"), index_dir=tmp_path / "idx")


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every read of the file graph or the signatures from the index, by name."""
    seen: list[str] = []
    file_edges, signatures = repomap._file_edges, repomap._signatures

    def counted_edges(db: Path) -> list[tuple[str, str, int]]:
        seen.append("edges")
        return file_edges(db)

    def counted_signatures(db: Path) -> dict[str, list[tuple[int, str, str]]]:
        seen.append("signatures")
        return signatures(db)

    monkeypatch.setattr(repomap, "_file_edges", counted_edges)
    monkeypatch.setattr(repomap, "_signatures", counted_signatures)
    return seen


def _cold(repo: ctxfast.Repository, query: str | None, budget: int) -> str:
    """The map as a first call builds it, from nothing kept (the ranks' disk cache aside)."""
    return build_repo_map(repo.graph, repo.index_dir, query, budget)


def test_a_warm_map_reads_nothing_again_and_equals_the_cold_one(
    repo: ctxfast.Repository, reads: list[str]
) -> None:
    first = repo.repo_map(QUERIES[1], max_tokens=1024)
    assert first.startswith("pkg/db.py:")
    assert sorted(reads) == ["edges", "signatures"]
    reads.clear()
    warm = {(q, b): repo.repo_map(q, max_tokens=b) for q in QUERIES for b in BUDGETS}
    warm_in_prompt = repo.repo_map(QUERIES[2], 1024, files_in_prompt=("pkg/cli.py",))
    assert reads == []  # every query and budget, from what the first call read
    assert warm[QUERIES[1], 1024] == first
    for (q, b), text in warm.items():
        assert text == _cold(repo, q, b)
        assert count_tokens(text) <= b
    assert warm_in_prompt == build_repo_map(
        repo.graph, repo.index_dir, QUERIES[2], 1024, ("pkg/cli.py",)
    )
    assert "pkg/cli.py:" not in warm_in_prompt


def test_a_warm_map_shows_an_edit_made_between_two_calls(
    repo: ctxfast.Repository, reads: list[str]
) -> None:
    before = repo.repo_map(max_tokens=1024)
    assert "reconnect" not in before
    db = repo.root / "pkg" / "db.py"
    db.write_text(FILES["pkg/db.py"] + ADDED)
    reads.clear()
    after = repo.repo_map(max_tokens=1024)
    assert "  def reconnect(uri: str, retries: int = 3):" in after
    assert sorted(reads) == ["edges", "signatures"]  # the new content, read once
    assert after == _cold(repo, None, 1024)
    # A definition removed is gone from the next map too.
    db.write_text(FILES["pkg/db.py"].split("def connect", 1)[0])
    gone = repo.repo_map(max_tokens=1024)
    assert "def connect" not in gone and gone == _cold(repo, None, 1024)


def test_refresh_false_keeps_the_map_until_the_next_refresh(repo: ctxfast.Repository) -> None:
    before = repo.repo_map(max_tokens=1024)
    (repo.root / "pkg" / "db.py").write_text(FILES["pkg/db.py"] + ADDED)
    assert repo.repo_map(max_tokens=1024, refresh=False) == before  # opted out
    assert "def reconnect" in repo.repo_map(max_tokens=1024)


def test_a_refresh_by_another_repository_object_is_seen_without_a_refresh(
    repo: ctxfast.Repository,
) -> None:
    repo.repo_map(max_tokens=1024)
    (repo.root / "pkg" / "db.py").write_text(FILES["pkg/db.py"] + ADDED)
    ctxfast.Repository(repo.root, index_dir=repo.index_dir).index(retrieval_state=False)
    # This object did not refresh, but the index changed under it: its kept map is stale.
    assert "def reconnect" in repo.repo_map(max_tokens=1024, refresh=False)


def test_a_rebuilt_index_is_read_again(repo: ctxfast.Repository) -> None:
    repo.repo_map(max_tokens=1024)
    for p in list(repo.index_dir.iterdir()):
        if p.is_file():
            p.unlink()
    (repo.root / "pkg" / "db.py").write_text(FILES["pkg/db.py"] + ADDED)
    assert "def reconnect" in repo.repo_map(max_tokens=1024)


def test_a_touched_file_keeps_the_map(repo: ctxfast.Repository, reads: list[str]) -> None:
    before = repo.repo_map(max_tokens=1024)
    reads.clear()
    # Same bytes, new mtime: the refresh records the new stat (a commit), the content is
    # unchanged, so the kept map serves the next call.
    past = time.time() - 20
    os.utime(repo.root / "pkg" / "db.py", (past, past))
    assert repo.repo_map(max_tokens=1024) == before
    assert reads == []


def _reference_personalization(rmap: RepoMap, query: str) -> dict[int, float]:
    """The personalisation as it was written: every path mention against every file."""
    weights: dict[int, float] = {}
    for m in repomap._PATHLIKE.finditer(query):
        for path, i in rmap.index.items():
            if path == m.group(0) or path.endswith("/" + m.group(0)):
                weights[i] = weights.get(i, 0.0) + 10.0
    for ident in dict.fromkeys(identifiers(query, min_len=3)):
        defs = [n for n in rmap.graph.lookup(ident) if n.is_definition and n.kind != "def"]
        if not defs or len(defs) > 20:
            continue
        for n in defs:
            if n.file in rmap.index:
                weights[rmap.index[n.file]] = weights.get(rmap.index[n.file], 0.0) + 1 / len(defs)
    return weights


def test_path_mentions_weigh_the_files_they_name_as_a_scan_of_every_file_does(
    tmp_path: Path,
) -> None:
    root = _project(tmp_path / "proj")
    for rel in ("db.py", "x/pkg/db.py", "x/pkg/cli.py", "a/b/c/d.py", "tests/pkg/db.py"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("def connect(uri):\n    return uri\n")
    repo = ctxfast.Repository(root, index_dir=tmp_path / "idx")
    repo.index(retrieval_state=False)
    rmap = RepoMap(repo.graph, repo.index_dir)
    for query in (
        "see pkg/db.py and db.py, then ./db.py, /pkg/db.py, x/pkg/cli.py and cli.py twice: cli.py",
        "c/d.py b/c/d.py a/b/c/d.py /d.py d.py b/c d.py.py connect parse_args main",
        "nothing named here",
    ):
        assert rmap.personalization(query) == _reference_personalization(rmap, query)
    assert rmap.named_by()["db.py"] == sorted(
        rmap.index[p] for p in ("db.py", "pkg/db.py", "tests/pkg/db.py", "x/pkg/db.py")
    )


@given(
    st.lists(st.sampled_from(["pkg/db.py:", "  def connect(uri: str):", "é€", " ", "\n"])),
    st.integers(min_value=-1, max_value=40),
)
def test_the_budget_test_is_the_exact_count(parts: list[str], budget: int) -> None:
    text = "\n".join(parts)
    assert repomap._within(text, budget, "cl100k_base") == (count_tokens(text) <= budget)
