"""Every Python read of ``recon.db`` checks the schema version the Rust core stamped, and an
index of another schema fails with one clear re-index message instead of a bare SQL error."""

from __future__ import annotations

import os
import re
import sqlite3
from pathlib import Path

import pytest

from ctxfast import _native
from ctxfast.errors import CtxfastError, IndexSchemaError
from ctxfast.recon import graph_db
from ctxfast.recon.graph import CodeGraph
from ctxfast.recon.repomap import build_repo_map
from ctxfast.retrieval.apiindex import refresh_api_index
from ctxfast.retrieval.repoindex import IndexWatch, RepoIndex, content_key
from tests.recon_fixture import indexed_repo

FILES = {
    "pkg/__init__.py": "",
    "pkg/core.py": "def parse(text):\n    return text.split()\n",
    "pkg/cli.py": "from pkg.core import parse\n\n\ndef main():\n    return parse('a b')\n",
}


def _set_version(db: Path, version: str | None) -> None:
    con = sqlite3.connect(db)
    with con:
        if version is None:
            con.execute("DELETE FROM meta WHERE key = 'schema_version'")
        else:
            con.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (version,))
    con.close()


def test_the_version_is_the_cores_and_a_current_index_reads(tmp_path: Path) -> None:
    repo = indexed_repo(tmp_path / "r", FILES)
    assert graph_db.SCHEMA_VERSION == _native.GRAPH_SCHEMA_VERSION
    with graph_db.reading(repo.graph_db) as con:
        stamped = con.row("SELECT value FROM meta WHERE key = 'schema_version'")
        assert stamped == (graph_db.SCHEMA_VERSION,)
    assert CodeGraph(repo.graph_db).lookup("parse")


def test_every_reader_refuses_an_index_of_another_schema(tmp_path: Path) -> None:
    repo = indexed_repo(tmp_path / "r", FILES)
    db = repo.graph_db
    _set_version(db, "0")
    want = f"index at {db} has schema 0, this ctxfast needs {graph_db.SCHEMA_VERSION}: re-index"
    readers = {
        "connect": lambda: graph_db.connect(db),
        "graph": lambda: CodeGraph(db).lookup("parse"),
        "content key": lambda: content_key(db),
        "retrieval tables": lambda: RepoIndex(repo.root, db),
        "api index": lambda: refresh_api_index(db, tmp_path / "api.db"),
    }
    for name, read in readers.items():
        with pytest.raises(IndexSchemaError, match=re.escape(want)) as caught:
            read()
        assert isinstance(caught.value, CtxfastError), name
        assert str(db.parent) in str(caught.value), name
    # The repo map degrades to empty (it never fails a caller) rather than misreading.
    assert build_repo_map(CodeGraph(db), tmp_path / "idx", None, 512, ()) == ""
    # The watch counts an unreadable index as changed, so the next read reports it.
    assert IndexWatch(db).changed()
    # A read through the repository that skips the refresh rebuilds it instead of failing.
    assert "def parse" in repo.retrieve("parse the text", refresh=False).render()


def test_an_index_without_a_version_is_refused_and_reindexing_heals_it(tmp_path: Path) -> None:
    repo = indexed_repo(tmp_path / "r", FILES)
    _set_version(repo.graph_db, None)
    with pytest.raises(IndexSchemaError, match="has schema none"):
        graph_db.connect(repo.graph_db)
    # The core rebuilds an index of another schema when it indexes: readers work again.
    repo.index()
    assert CodeGraph(repo.graph_db).lookup("parse")


def test_no_module_but_graph_db_opens_recon_db() -> None:
    # The other SQLite files (api.db, state stores) are Python-owned; recon.db is the core's,
    # read only through the core's SQLite (a second copy in the process loses its locks).
    package = Path(graph_db.__file__).parent.parent
    opening = sorted(
        str(p.relative_to(package))
        for p in package.rglob("*.py")
        if "sqlite3.connect(" in p.read_text(encoding="utf-8")
    )
    assert opening == ["retrieval/apiindex.py"]
    readers = sorted(
        str(p.relative_to(package))
        for p in package.rglob("*.py")
        if "_native.GraphReader" in p.read_text(encoding="utf-8")
    )
    assert readers == ["recon/graph_db.py"]
    api = (package / "retrieval" / "apiindex.py").read_text(encoding="utf-8")
    assert re.findall(r"sqlite3\.connect\(([^,)]*)", api) == [
        'f"file:{api_db}?mode=ro"',
        "api_db",
        'f"file:{api_db}?mode=ro"',
        'f"file:{self.api_db}?mode=ro"',
    ]


def test_the_reader_waits_five_seconds_on_a_busy_index_by_default(tmp_path: Path) -> None:
    assert graph_db.BUSY_TIMEOUT_S == 5.0
    repo = indexed_repo(tmp_path / "r", FILES)
    with pytest.raises(ValueError, match="busy_timeout"):
        graph_db.connect(repo.graph_db, busy_timeout=-1.0)


def test_the_reader_binds_and_returns_every_sqlite_type(tmp_path: Path) -> None:
    repo = indexed_repo(tmp_path / "r", FILES)
    with graph_db.reading(repo.graph_db) as con:
        row = con.row("SELECT ?, ?, ?, ?, ?", (None, 7, 2.5, "text", b"\x00\xff"))
        assert row == (None, 7, 2.5, "text", b"\x00\xff")
        assert con.row("SELECT path FROM files WHERE path = ?", ("missing.py",)) is None
        assert con.rows("SELECT path FROM files WHERE path LIKE ? ORDER BY path", ["pkg/c%"]) == [
            ("pkg/cli.py",),
            ("pkg/core.py",),
        ]
        with pytest.raises(TypeError, match="unsupported SQL parameter"):
            con.rows("SELECT ?", (object(),))
        with pytest.raises(CtxfastError, match="no such table"):
            con.rows("SELECT * FROM nothing_here")
        # Read-only: the core alone writes the index.
        with pytest.raises(CtxfastError, match="readonly"):
            con.rows("DELETE FROM files")
    with pytest.raises(CtxfastError, match="closed"):
        con.rows("SELECT 1")
    con.close()


def test_a_reader_of_a_missing_index_fails_with_the_path(tmp_path: Path) -> None:
    missing = tmp_path / "none" / "recon.db"
    with pytest.raises(CtxfastError, match=re.escape(f"cannot open {missing}")):
        graph_db.connect(missing)
    assert not missing.exists()


@pytest.mark.skipif(not Path("/proc/locks").exists(), reason="reads the locks in /proc/locks")
def test_the_cores_refresh_leaves_an_open_readers_locks_in_place(tmp_path: Path) -> None:
    # Two SQLite copies in one process lost them: the core's close dropped every POSIX lock
    # the process held on recon.db-shm, so another process re-initialised it under the
    # reader's mapping (SIGBUS). /proc/locks shows this process's locks on the WAL index.
    repo = indexed_repo(tmp_path / "r", FILES)
    shm = Path(f"{repo.graph_db}-shm")

    def my_shm_locks() -> list[str]:
        ino = shm.stat().st_ino
        pid = str(os.getpid())
        out = []
        for line in Path("/proc/locks").read_text().splitlines():
            f = line.replace("->", "").split()
            if f[4] == pid and int(f[5].split(":")[2]) == ino:
                out.append(" ".join(f[3:4] + f[6:8]))
        return sorted(out)

    with graph_db.reading(repo.graph_db) as con:
        con.rows("SELECT path FROM files")
        held = my_shm_locks()
        assert held
        repo.index()
        assert my_shm_locks() == held
