"""The retrieval state is built with the index (``ctxfast.retrieval.warm``): after
``index()``, a new process's first retrieval reads every piece instead of building it, the
process that indexed reuses what it built, and the window is the one a state built on first
use gives."""

from __future__ import annotations

import sqlite3
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
from recon_fixture import refuse_state_builds, write_project

import ctxfast
import ctxfast.repository
import ctxfast.retrieval.pipeline
from ctxfast.retrieval.apiindex import API_DB_NAME, refresh_api_index
from ctxfast.retrieval.repoindex import RepoIndex
from ctxfast.retrieval.text_state import Prebuild
from ctxfast.state_store import STATE_DIRNAME, StateStore

TASK = "connect should reject an empty database uri"
#: What a retrieval with the default configuration reads from the store (a Python tree).
PIECES = {
    "deftable",
    "file_bm25",
    "def_bm25-1.5-0.75-60",
    "api_where",
    "api_bm25",
    "literals-12-n40",
    "dispatch-prefixes-5",
    "included-1",
    "bundles-1",
    "line-sets-16",  # what the bundle scan compares, kept so a refresh hashes only its files
    "rows",  # each file's content hash: what a refresh carries the state over by
}


@pytest.fixture
def root(tmp_path):
    return write_project(tmp_path / "proj")


def _pieces(repo: ctxfast.Repository) -> dict[str, int]:
    """Each stored piece by name, with its modification time."""
    state = repo.index_dir / STATE_DIRNAME
    if not state.exists():
        return {}
    return {p.name.split(".", 2)[2]: p.stat().st_mtime_ns for p in state.iterdir()}


def test_index_stores_every_piece_a_retrieval_reads(root, monkeypatch):
    cold = ctxfast.Repository(root)
    cold.index(retrieval_state=False)
    assert _pieces(cold) == {}
    expected = ctxfast.compose(cold, TASK, refresh=False)  # the state built on first use
    other = root.parent / "other-index"
    ctxfast.Repository(root, other).index()
    assert set(_pieces(ctxfast.Repository(root, other))) == PIECES
    refuse_state_builds(monkeypatch)  # a new process: every piece must be read back
    again = ctxfast.compose(ctxfast.Repository(root, other), TASK)
    assert again.render() == expected.render() and again.to_json() == expected.to_json()


def test_the_state_stage_is_logged_with_the_native_stages(root, caplog):
    with caplog.at_level("DEBUG", logger="ctxfast"):
        ctxfast.Repository(root).index()
    stages = [r.getMessage() for r in caplog.records if r.getMessage().startswith("index: ")]
    assert any("parse done" in m for m in stages)
    assert stages[-1].startswith("index: retrieval state built in")


def test_the_indexing_process_keeps_the_state_it_built(root, monkeypatch):
    repo = ctxfast.Repository(root)
    repo.index()

    def no_rebuild(*args, **kwargs):
        raise AssertionError("the retriever was rebuilt after index()")

    monkeypatch.setattr(ctxfast.retrieval.pipeline, "Retriever", no_rebuild)
    assert repo.retrieve(TASK).candidates


def test_a_noop_refresh_builds_nothing_and_an_edit_builds_the_new_state(root):
    repo = ctxfast.Repository(root)
    repo.index()
    before = _pieces(repo)
    repo.index()
    assert _pieces(repo) == before
    state = repo.index_dir / STATE_DIRNAME
    old_files = {p.name for p in state.iterdir()}
    (root / "pkg" / "db.py").write_text("def connect(uri: str):\n    return uri or None\n")
    repo.index()
    new_files = {p.name for p in state.iterdir()}
    assert not new_files & old_files  # the old state's files went
    assert {n.split(".", 2)[2] for n in new_files} == PIECES


def test_api_db_synced_in_one_query_holds_the_rows_of_a_file_by_file_sync(root, tmp_path):
    repo = ctxfast.Repository(root)
    repo.index(retrieval_state=False)
    api = repo.index_dir / API_DB_NAME
    refresh_api_index(repo.graph_db, api)
    (root / "pkg" / "utils.py").write_text("def parse_args(argv, strict=False):\n    pass\n")
    (root / "pkg" / "cli.py").unlink()
    repo.index(retrieval_state=False)
    assert refresh_api_index(repo.graph_db, api) == 2  # one changed, one removed
    fresh = tmp_path / "fresh.db"
    refresh_api_index(repo.graph_db, fresh)

    def rows(db):
        con = sqlite3.connect(db)
        try:
            return sorted(con.execute("SELECT * FROM api_index")), sorted(
                con.execute("SELECT * FROM api_files")
            )
        finally:
            con.close()

    assert rows(api) == rows(fresh) and rows(api)[0]


def test_graph_readers_do_not_build_the_retrieval_state(root):
    """The repo map and the ego graph read the graph alone: their first call indexes
    without building the retrieval state (the map stores only what it reads of the graph);
    the first retrieval then builds it, beside the map's pieces (one key, no sweep)."""
    repo = ctxfast.Repository(root)
    assert repo.repo_map(max_tokens=256)
    repo.ego_graph("pkg.db.connect")
    map_pieces = {"repomap-edges", "repomap-ranks", "repomap-signatures"}
    assert set(_pieces(repo)) == map_pieces
    repo.retrieve(TASK)
    assert set(_pieces(repo)) >= {"deftable", "file_bm25", *map_pieces}


def test_the_api_index_is_built_once_whichever_thread_asks_first(root):
    """``build_state`` builds the API index on a thread of its own while a retrieval may
    ask for it: every caller gets the one index, built once."""
    repo = ctxfast.Repository(root)
    repo.index(retrieval_state=False)
    retriever = ctxfast.retrieval.pipeline.Retriever(root, repo.graph, repo.index_dir)
    with ThreadPoolExecutor(4) as pool:
        got = list(pool.map(lambda _: retriever.api(), range(8)))
    assert all(api is got[0] for api in got)
    assert got[0].search("connect database uri")


def _piece_bytes(index_dir) -> dict[str, bytes]:
    state = index_dir / STATE_DIRNAME
    return {p.name.split(".", 2)[2]: p.read_bytes() for p in state.iterdir()}


def test_a_cold_build_prebuilds_the_text_pieces_as_the_first_retrieval_builds_them(
    root, monkeypatch
):
    """The text pieces are made during the cold build (``text_state.Prebuild``), the rest
    after it; every stored piece is byte for byte the one a state built on first use holds,
    and ``build_state`` reads the prebuilt ones instead of making them again."""
    lazy = ctxfast.Repository(root, root.parent / "lazy")
    lazy.index(retrieval_state=False)
    ctxfast.compose(lazy, TASK, refresh=False)
    made: list[tuple[str, str]] = []
    get = StateStore.get

    def watch(self, name, build, dump, load):
        def counted():
            made.append((name, threading.current_thread().name))
            return build()

        return get(self, name, counted, dump, load)

    monkeypatch.setattr(StateStore, "get", watch)
    eager = ctxfast.Repository(root, root.parent / "eager")
    eager.index()
    early = {name for name, thread in made if thread == "ctxfast-prebuild"}
    assert early == {"file_bm25", "literals-12-n40", "line-sets-16", "bundles-1", "included-1"}
    assert sorted(name for name, _ in made) == sorted(PIECES)  # each built once
    assert _piece_bytes(eager.index_dir) == _piece_bytes(lazy.index_dir)


def test_a_refresh_prebuilds_nothing(root, monkeypatch):
    """Only a cold build publishes its content rows; a refresh's prebuild ends with the run
    (the state is then built after it, as before)."""
    repo = ctxfast.Repository(root)
    repo.index()
    finished = []

    class Recorded(Prebuild):
        def finish(self):
            finished.append(super().finish())
            return finished[-1]

    monkeypatch.setattr(ctxfast.repository, "Prebuild", Recorded)
    (root / "pkg" / "db.py").write_text("def connect(uri: str):\n    return uri or None\n")
    repo.index()
    assert finished == [None]
    assert repo.retrieve(TASK).candidates


def test_prebuilt_texts_of_other_content_are_not_adopted(root, tmp_path):
    """Pieces and texts read for other content rows (another key) are never used: the
    state of the index's own content reads its files itself."""
    repo = ctxfast.Repository(root)
    repo.index(retrieval_state=False)
    rows = [("pkg/db.py", "0" * 64, "python")]
    made = Prebuild(root, tmp_path / "elsewhere", lambda: rows).finish()
    assert made is not None and set(made.lines) == {"pkg/db.py"}
    ix = RepoIndex(root, repo.graph_db, repo.index_dir)
    forged = made._replace(lines={"pkg/db.py": ["forged"]}, texts={"pkg/db.py": "forged"})
    ix.adopt(forged)
    assert ix.lines("pkg/db.py") != ["forged"] and ix.text("pkg/db.py") != "forged"
    ix.adopt(forged._replace(key=ix.key))
    assert ix.lines("pkg/db.py") == ["forged"]
