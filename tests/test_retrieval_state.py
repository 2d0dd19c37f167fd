"""Retrieval state stored beside the index: a new process (here, a new ``Repository``) reads
it back instead of rebuilding, answers byte-identically, and never trusts a stale or
corrupt piece."""

from __future__ import annotations

import pytest
from recon_fixture import FILES, refuse_state_builds, write_project

import ctxfast
from ctxfast.bm25 import BM25Index
from ctxfast.errors import InvalidArgumentError
from ctxfast.state_store import STATE_DIRNAME

TASK = "connect should reject an empty database uri"


@pytest.fixture
def root(tmp_path):
    return write_project(tmp_path / "proj")


def _state_files(repo):
    return sorted(p.name for p in (repo.index_dir / STATE_DIRNAME).iterdir())


def test_a_new_repository_object_loads_the_state_and_answers_identically(root, monkeypatch):
    first = ctxfast.compose(ctxfast.Repository(root), TASK)
    names = _state_files(ctxfast.Repository(root))
    pieces = {n.split(".", 2)[2] for n in names}
    assert pieces >= {"deftable", "file_bm25", "api_where", "api_bm25", "literals-12-n40"}
    assert any(p.startswith("def_bm25") for p in pieces)
    stored = {p: p.stat().st_mtime_ns for p in (root / ".ctxfast" / STATE_DIRNAME).iterdir()}
    refuse_state_builds(monkeypatch)
    again = ctxfast.compose(ctxfast.Repository(root), TASK)
    assert again.render() == first.render() and again.to_json() == first.to_json()
    assert {p: p.stat().st_mtime_ns for p in stored} == stored  # read, not rewritten


def test_a_corrupt_piece_is_rebuilt_and_rewritten(root):
    expected = ctxfast.Repository(root).retrieve(TASK).render()
    state = root / ".ctxfast" / STATE_DIRNAME
    for p in state.iterdir():
        p.write_bytes(b"not what was stored")
    assert ctxfast.Repository(root).retrieve(TASK).render() == expected
    assert all(p.read_bytes() != b"not what was stored" for p in state.iterdir())


def test_an_edit_makes_a_new_state_and_the_old_files_go(root):
    repo = ctxfast.Repository(root)
    repo.retrieve(TASK)
    old = set(_state_files(repo))
    (root / "pkg" / "db.py").write_text(FILES["pkg/db.py"] + "\n\ndef disconnect(uri):\n    ...\n")
    fresh = ctxfast.Repository(root)
    assert "disconnect" in fresh.retrieve("disconnect a database uri").render()
    new = set(_state_files(fresh))
    assert new and not (new & old)


def test_an_unwritable_state_dir_only_costs_the_speed_up(root, tmp_path):
    idx = tmp_path / "idx"
    repo = ctxfast.Repository(root, idx)
    repo.index(retrieval_state=False)
    (idx / STATE_DIRNAME).write_text("a file where the directory should be")
    assert "def connect" in repo.retrieve(TASK).render()


def test_bm25_bytes_round_trip_scores_identically():
    docs = ["def connect(uri): return uri", "class Pool: size = 3", "", "connect pool uri uri"]
    ix = BM25Index(docs, 1.2, 0.6, symbol_weight=2.0, symbols=["connect", "Pool"])
    back = BM25Index.from_bytes(ix.to_bytes(), symbols=["connect", "Pool"])
    for q in ["connect", "pool uri", "nothing here", "Pool size"]:
        assert back.scores(q) == ix.scores(q)
        assert back.query(q) == ix.query(q)
    assert (back.num_docs, back.vocab_size, back.avgdl) == (ix.num_docs, ix.vocab_size, ix.avgdl)
    with pytest.raises(InvalidArgumentError):
        BM25Index.from_bytes(ix.to_bytes()[:-3])
    with pytest.raises(InvalidArgumentError):
        BM25Index.from_bytes(b"something else")


def test_api_hits_are_read_back_from_api_db_and_a_vanished_row_is_dropped(root):
    import sqlite3

    from ctxfast.retrieval.apiindex import ApiIndex

    repo = ctxfast.Repository(root)
    repo.retrieve(TASK)
    ix = ApiIndex(repo.index_dir / "api.db", ["connect"])
    hits = ix.search("open a database connection")
    assert hits and hits[0][0].qualname == "pkg.db.connect"
    assert hits[0][0].docstring == "Open a database connection."
    con = sqlite3.connect(repo.index_dir / "api.db")
    with con:
        con.execute("DELETE FROM api_index WHERE qualname = 'pkg.db.connect'")
    con.close()
    assert "pkg.db.connect" not in {r.qualname for r, _ in ix.search("open a database connection")}


def test_a_piece_of_another_format_version_is_never_read_and_goes(root):
    from ctxfast import state_store as state

    repo = ctxfast.Repository(root)
    expected = repo.retrieve(TASK).render()
    stored = repo.index_dir / STATE_DIRNAME
    key = next(stored.iterdir()).name.split(".", 1)[0]
    for p in stored.iterdir():
        p.unlink()
    old = stored / f"{key}.v{state.FORMAT - 1}.deftable"
    old.write_bytes(b"rows of an older layout")
    assert ctxfast.Repository(root).retrieve(TASK).render() == expected
    assert not old.exists() and any(".deftable" in p.name for p in stored.iterdir())


def test_retrieval_definitions_are_the_graphs_node_rows(root):
    """One row model for ``nodes``: what retrieval's tables hold is what the graph reads."""
    from ctxfast.recon.graph import Node
    from ctxfast.retrieval.repoindex import RepoIndex

    repo = ctxfast.Repository(root)
    repo.index()
    ix = RepoIndex(repo.root, repo.graph_db, repo.index_dir)
    again = RepoIndex(repo.root, repo.graph_db, repo.index_dir)  # read back from the store
    graph = repo.graph
    assert ix.defs and list(again.defs) == list(ix.defs)
    for d in ix.defs:
        assert type(d) is Node and graph.node(d.id) == d
        assert ix.signatures[d.id] == graph.signature(d.id).signature


def test_the_collector_is_paused_only_while_state_loads(root, monkeypatch):
    import gc
    import json

    ctxfast.Repository(root).retrieve(TASK)  # stores the state
    seen = []
    loads = json.loads

    def spy(data):
        seen.append(gc.isenabled())
        return loads(data)

    monkeypatch.setattr(json, "loads", spy)
    try:
        assert gc.isenabled()
        ctxfast.Repository(root).retrieve(TASK)
        assert seen and not any(seen) and gc.isenabled()
        gc.disable()  # a host that keeps the collector off finds it off afterwards
        ctxfast.Repository(root).retrieve(TASK)
        assert not gc.isenabled()
    finally:
        gc.enable()
