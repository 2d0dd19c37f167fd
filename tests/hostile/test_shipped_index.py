"""A repository that ships its own ``.ctxfast/``: at most a rebuild, never trusted.

The attacker is another user: they index the tree with their own ctxfast (their own key, a
configuration directory of their own here), then edit what it wrote, link its entries out of
the tree, and commit the result. The victim's ctxfast (this test process's key) must run
nothing of it, touch nothing outside the tree through it, and show none of its rows.
"""

from __future__ import annotations

import hashlib
import json
import os
import pickle
import shutil
import sqlite3
from pathlib import Path

import pytest
from hostile_guard import run_guarded

import ctxfast
from ctxfast.errors import IndexUntrustedError
from ctxfast.recon import graph_db
from ctxfast.state_store import STATE_DIRNAME

TASK = "next_page skips a page when the pager wraps"


def _tree(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "pager.py").write_text(
        "def next_page(p):\n    '''Advance the pager by one page.'''\n    return p + 1\n\n"
        "def wrap(p, n):\n    return next_page(p) % n\n"
    )
    (root / "util.py").write_text("def helper():\n    return 0\n")
    return root


def _as_attacker(root: Path, tmp: Path, code: str = "") -> None:
    """Indexes ``root`` and composes once with another user's key (a directory of its own),
    then runs ``code`` with ``root`` and ``index`` bound."""
    run_guarded(
        f"""
        from pathlib import Path
        import ctxfast
        root = Path({str(root)!r}); index = root / ".ctxfast"
        ctxfast.compose(ctxfast.Repository(root), {TASK!r})
        {code}
        """,
        cwd=tmp,
        env={"CTXFAST_CONFIG_DIR": str(tmp / "attacker-config")},
    )


def _compose(root: Path) -> str:
    return ctxfast.compose(ctxfast.Repository(root), TASK).render()


def test_a_state_piece_holding_a_pickle_is_never_loaded(tmp_path: Path) -> None:
    root = _tree(tmp_path / "repo")
    _as_attacker(root, tmp_path)
    marker = tmp_path / "pwned"
    payload = pickle.dumps(_Boom(str(marker)))
    pieces = list((root / ".ctxfast" / STATE_DIRNAME).iterdir())
    assert pieces, "the attacker's run stored retrieval state"
    for p in pieces:
        p.write_bytes(payload)
    out = _compose(root)
    assert not marker.exists()
    assert "def next_page" in out
    # The pieces were rebuilt under this user's key: the next process reads them back.
    for p in (root / ".ctxfast" / STATE_DIRNAME).iterdir():
        assert p.read_bytes() != payload


class _Boom:
    """A pickle whose load would create a file (what an attacker's piece would do)."""

    def __init__(self, path: str) -> None:
        self.path = path

    def __reduce__(self) -> tuple[object, ...]:
        return (open, (self.path, "w"))


def test_a_piece_changed_by_one_byte_is_rebuilt_not_read(tmp_path: Path) -> None:
    root = _tree(tmp_path / "repo")
    clean = _compose(root)
    state = root / ".ctxfast" / STATE_DIRNAME
    table = next(p for p in state.iterdir() if p.name.endswith(".deftable"))
    data = bytearray(table.read_bytes())
    data[-5] ^= 0x01  # a u32 of the native table, as the mutation did
    table.write_bytes(bytes(data))
    assert _compose(root) == clean
    assert table.read_bytes() != bytes(data)


def test_a_shipped_repo_map_cache_forges_no_entry_of_the_map(tmp_path: Path) -> None:
    """The map's file graph and ranks are state pieces under the user's key: a ``.ctxfast/``
    shipping the old cache (``repomap.json``, keyed by a hash anyone computes from the tree)
    or a ranks piece under an attacker's key names no file of theirs and changes no rank."""
    clean_repo = ctxfast.Repository(_tree(tmp_path / "clean"))
    clean = clean_repo.repo_map()
    # The old cache's key: every file's path and content hash, as any ctxfast records them.
    old_key = "\n".join(f"{f.path}:{f.sha256}" for f in clean_repo.graph.files())
    forged = {"../../outside.py": 9.0, "FORGED.py": 5.0, "util.py": 1.0, "pager.py": 0.0}
    root = _tree(tmp_path / "repo")
    _as_attacker(root, tmp_path, "ctxfast.Repository(root).repo_map()")
    pieces = [p for p in (root / ".ctxfast" / STATE_DIRNAME).iterdir() if "repomap" in p.name]
    shipped = {p.name: p.read_bytes() for p in pieces}
    shutil.rmtree(root / ".ctxfast")  # no index: the victim's first call builds one
    (root / ".ctxfast" / STATE_DIRNAME).mkdir(parents=True)
    for name, data in shipped.items():  # the attacker's own pieces, forged ranks inside
        head = data[: len(b"ctxfast-state\x00") + 32]
        body = json.dumps(forged).encode() if name.endswith("ranks") else data[len(head) :]
        (root / ".ctxfast" / STATE_DIRNAME / name).write_bytes(head + body)
    cache = {"key": hashlib.sha256(old_key.encode()).hexdigest(), "ranks": forged}
    (root / ".ctxfast" / "repomap.json").write_text(json.dumps(cache))
    shown = ctxfast.Repository(root).repo_map()
    assert shown == clean
    assert "FORGED" not in shown and "outside" not in shown


def test_a_forged_graph_is_rebuilt_and_its_rows_never_shown(tmp_path: Path) -> None:
    root = _tree(tmp_path / "repo")
    _as_attacker(
        root,
        tmp_path,
        """
        import sqlite3
        con = sqlite3.connect(index / "recon.db")
        con.execute("UPDATE node_rows SET name = 'forged_fn', qualname = 'pager.forged_fn'"
                    " WHERE name = 'next_page'")
        con.commit(); con.close()
        """,
    )
    with pytest.raises(IndexUntrustedError):
        graph_db.connect(root / ".ctxfast" / "recon.db")
    repo = ctxfast.Repository(root)
    # A read that skips the refresh still does not read the shipped rows.
    out = ctxfast.compose(repo, TASK, refresh=False).render()
    assert "forged_fn" not in out and "def next_page" in out
    names = {n.name for n in repo.graph.nodes_in_file("pager.py")}
    assert "forged_fn" not in names and "next_page" in names


def test_the_rebuild_says_why(tmp_path: Path) -> None:
    root = _tree(tmp_path / "repo")
    _as_attacker(root, tmp_path)
    stats = ctxfast.Repository(root).index()
    assert "not written by this user's ctxfast" in stats.errors[0]["error"]
    assert ctxfast.Repository(root).index().errors == []


def test_a_shipped_index_is_never_a_seed(tmp_path: Path) -> None:
    shipped = _tree(tmp_path / "v1")
    _as_attacker(shipped, tmp_path)
    clean = _tree(tmp_path / "v2")
    stats = ctxfast.Repository(clean, seed=shipped / ".ctxfast").index()
    assert stats.seeded_from is None
    assert "not written by this user's ctxfast" in (stats.seed_note or "")
    # Once the victim rebuilt it, the same index is a fine seed.
    ctxfast.Repository(shipped).index()
    again = _tree(tmp_path / "v3")
    assert ctxfast.Repository(again, seed=shipped / ".ctxfast").index().seeded_from


def test_a_moved_index_is_rebuilt(tmp_path: Path) -> None:
    root = _tree(tmp_path / "repo")
    ctxfast.Repository(root).index()
    moved = tmp_path / "moved"
    root.rename(moved)
    stats = ctxfast.Repository(moved).index()
    assert "not written by this user's ctxfast" in stats.errors[0]["error"]


@pytest.mark.parametrize("damage", [b"garbage" * 100, b""])
def test_a_damaged_api_db_is_rebuilt(tmp_path: Path, damage: bytes) -> None:
    root = _tree(tmp_path / "repo")
    clean = _compose(root)
    (root / ".ctxfast" / "api.db").write_bytes(damage)
    assert _compose(root) == clean
    con = sqlite3.connect(root / ".ctxfast" / "api.db")
    assert con.execute("SELECT COUNT(*) FROM api_index").fetchone()[0] > 0


def test_a_shipped_api_db_is_rebuilt(tmp_path: Path) -> None:
    root = _tree(tmp_path / "repo")
    _as_attacker(
        root,
        tmp_path,
        """
        import sqlite3
        con = sqlite3.connect(index / "api.db")
        con.execute("UPDATE api_index SET desc_text = 'forged description', "
                    "signature = 'def forged_api()'")
        con.commit(); con.close()
        """,
    )
    _compose(root)
    con = sqlite3.connect(root / ".ctxfast" / "api.db")
    assert "forged" not in repr(con.execute("SELECT * FROM api_index").fetchall())


# ---- links in the index path ----------------------------------------------------------------


def _outside(tmp: Path) -> Path:
    out = tmp / "outside"
    out.mkdir()
    (out / "id_rsa").write_text("PRIVATE KEY\n")
    return out


def _snapshot(d: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(d.iterdir())}


def test_a_linked_state_dir_is_neither_swept_nor_written(tmp_path: Path) -> None:
    root = _tree(tmp_path / "repo")
    outside = _outside(tmp_path)
    before = _snapshot(outside)
    (root / ".ctxfast").mkdir()
    (root / ".ctxfast" / STATE_DIRNAME).symlink_to(outside)
    assert "def next_page" in _compose(root)
    assert _snapshot(outside) == before
    assert not (root / ".ctxfast" / STATE_DIRNAME).is_symlink()


def test_a_dangling_gitignore_link_creates_nothing_outside(tmp_path: Path) -> None:
    root = _tree(tmp_path / "repo")
    target = tmp_path / "created-outside"
    (root / ".ctxfast").mkdir()
    (root / ".ctxfast" / ".gitignore").symlink_to(target)
    ctxfast.Repository(root).index()
    assert not target.exists()
    assert (root / ".ctxfast" / ".gitignore").read_text().endswith("*\n")


@pytest.mark.parametrize("name", ["recon.db", "recon.db.checked", "recon.db-wal", "recon.db.lock"])
def test_a_linked_index_file_leaves_its_target_alone(tmp_path: Path, name: str) -> None:
    root = _tree(tmp_path / "repo")
    other = tmp_path / "other.db"
    con = sqlite3.connect(other)
    con.execute("CREATE TABLE precious(x)")
    con.execute("INSERT INTO precious VALUES (42)")
    con.commit()
    con.close()
    before = other.read_bytes()
    (root / ".ctxfast").mkdir()
    (root / ".ctxfast" / name).symlink_to(other)
    assert "def next_page" in _compose(root)
    assert other.read_bytes() == before
    assert not (root / ".ctxfast" / name).is_symlink()


def test_a_linked_index_dir_is_replaced_by_one_in_the_tree(tmp_path: Path) -> None:
    root = _tree(tmp_path / "repo")
    outside = _outside(tmp_path)
    before = _snapshot(outside)
    (root / ".ctxfast").symlink_to(outside, target_is_directory=True)
    assert "def next_page" in _compose(root)
    assert _snapshot(outside) == before
    assert (root / ".ctxfast").is_dir() and not (root / ".ctxfast").is_symlink()
    assert (root / ".ctxfast" / "recon.db").is_file()


def test_an_index_dir_the_caller_chose_may_be_a_link(tmp_path: Path) -> None:
    root = _tree(tmp_path / "repo")
    real = tmp_path / "real-index"
    real.mkdir()
    chosen = tmp_path / "index-link"
    chosen.symlink_to(real, target_is_directory=True)
    assert "def next_page" in ctxfast.compose(ctxfast.Repository(root, chosen), TASK).render()
    assert (real / "recon.db").is_file()


def test_a_fifo_among_the_state_pieces_does_not_hang(tmp_path: Path) -> None:
    root = _tree(tmp_path / "repo")
    _compose(root)
    state = root / ".ctxfast" / STATE_DIRNAME
    for p in list(state.iterdir()):
        p.unlink()
        os.mkfifo(p)
    run_guarded(
        f"""
        import ctxfast
        r = ctxfast.Repository({str(root)!r})
        assert "def next_page" in ctxfast.compose(r, {TASK!r}).render()
        """,
        cwd=tmp_path,
        timeout=60,
    )


def test_temporary_state_files_of_a_dead_process_are_swept(tmp_path: Path) -> None:
    root = _tree(tmp_path / "repo")
    _compose(root)
    state = root / ".ctxfast" / STATE_DIRNAME
    dead = state / ".tmp-999999999-abc"  # no such pid
    live = state / f".tmp-{os.getpid()}-abc"
    dead.write_bytes(b"x")
    live.write_bytes(b"x")
    (root / "util.py").write_text("def helper():\n    return 1\n")  # a new state: a sweep
    _compose(root)
    assert not dead.exists() and live.exists()


# ---- a read-only index directory ------------------------------------------------------------


def test_a_read_only_index_dir_holding_a_current_index_is_read(tmp_path: Path) -> None:
    root = _tree(tmp_path / "repo")
    # Files older than a second: a file written just before indexing is re-checked (and its
    # stat recorded) by a later refresh, which is a write; this index is current as it is.
    for p in root.iterdir():
        os.utime(p, (os.path.getmtime(p) - 10, os.path.getmtime(p) - 10))
    clean = _compose(root)
    index = root / ".ctxfast"
    script = tmp_path / "read.py"
    script.write_text(
        "import sys, ctxfast\n"
        f"r = ctxfast.Repository({str(root)!r})\n"
        f"sys.stdout.write(ctxfast.compose(r, {TASK!r}).render())\n"
        "r.graph\n"
        f"r.retrieve({TASK!r})\n"
        "r.repo_map()\n"
    )
    import subprocess
    import sys

    # A read-only bind mount in a private mount namespace: permission bits do not bind root.
    proc = subprocess.run(
        [
            "unshare",
            "--mount",
            "--map-root-user",
            "sh",
            "-c",
            f'mount --bind "{index}" "{index}" && mount -o remount,bind,ro "{index}" && '
            f'exec "{sys.executable}" "{script}"',
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    if proc.returncode != 0 and "mount" in proc.stderr and "Traceback" not in proc.stderr:
        pytest.skip(f"no read-only mount here: {proc.stderr.strip()}")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == clean


def test_no_loader_in_the_package_can_build_code() -> None:
    """Stored data is read back with JSON or a bounds-checked native decoder only: pickle can
    run code on load, and marshal can build code objects from bytes."""
    package = Path(ctxfast.__file__).parent
    found = [
        f"{p.relative_to(package)}: {word}"
        for p in package.rglob("*.py")
        for word in ("pickle.load", "marshal.load", "allow_pickle=True", "import pickle")
        if word in p.read_text(encoding="utf-8")
    ]
    assert found == []
