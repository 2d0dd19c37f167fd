"""Opening an unchanged index writes nothing.

Every read refreshes the index first, so an agent's loop, an MCP server and an eval worker
open the same index thousands of times. A refresh that found nothing to do still committed
its run record (a WAL append, a new ``recon.db.checked``): a write per read, paid in time and
seen by every other reader as a commit. Only the WAL index (``recon.db-shm``, shared memory
that readers mark) may change.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import ctxfast

#: A file over the test's size cap, recorded as skipped (its row must be kept as it is).
BIG = "x = 1\n" * 50

FRESH_OPEN = """
import sys, ctxfast
repo = ctxfast.Repository(sys.argv[1], max_file_bytes=100)
assert "def parse" in repo.retrieve("parse the text").render()
"""


def _project(root: Path) -> Path:
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "core.py").write_text("def parse(text):\n    return text.split()\n")
    (root / "pkg" / "cli.py").write_text(
        "from pkg.core import parse\n\ndef main():\n    parse('')\n"
    )
    (root / "big.py").write_text(BIG)
    # Written well before the first build, so no file is racy (re-read until a later run
    # start is recorded).
    past = time.time() - 30
    for p in root.rglob("*.py"):
        os.utime(p, (past, past))
    return root


def _files(repo: ctxfast.Repository) -> dict[str, tuple[int, int]]:
    """(mtime_ns, size) of every file of the index but the WAL index."""
    return {
        p.name: (p.stat().st_mtime_ns, p.stat().st_size)
        for p in repo.index_dir.iterdir()
        if p.is_file() and not p.name.endswith("-shm")
    }


def test_an_unchanged_index_is_opened_and_read_without_a_write(tmp_path: Path) -> None:
    repo = ctxfast.Repository(_project(tmp_path / "r"), max_file_bytes=100)
    stats = repo.index()
    assert [e["path"] for e in stats.errors] == ["big.py"]
    repo.retrieve("parse the text")
    before = _files(repo)
    for again in (repo, ctxfast.Repository(repo.root, max_file_bytes=100)):
        assert again.index().files_parsed == 0
        assert "def parse" in again.retrieve("parse the text").render()
        assert _files(again) == before
    # A fresh process has no cache of the last run: it reads the run record back.
    subprocess.run([sys.executable, "-c", FRESH_OPEN, str(repo.root)], check=True)
    assert _files(repo) == before


def test_a_refresh_that_changes_the_record_writes_once(tmp_path: Path) -> None:
    repo = ctxfast.Repository(_project(tmp_path / "r"), max_file_bytes=100)
    repo.index()
    wal = Path(f"{repo.graph_db}-wal")
    for change in (
        # A touched file (same bytes, new mtime): its stat is recorded, so it is trusted unread.
        lambda: os.utime(repo.root / "pkg" / "core.py", (time.time() - 20, time.time() - 20)),
        # A skipped file that grew: its row records the new size.
        lambda: (repo.root / "big.py").write_text(BIG * 2),
    ):
        before = _files(repo)
        change()
        assert repo.index().files_parsed == 0
        assert _files(repo).get(wal.name) != before.get(wal.name)
        after = _files(repo)
        repo.index()
        assert _files(repo) == after
    with ctxfast.recon.graph_db.reading(repo.graph_db) as con:
        assert con.row("SELECT bytes FROM files WHERE path = 'big.py'") == (len(BIG) * 2,)
