"""Each defect of issue 19 as a hostile case, run under the watchdog
(``hostile_guard.run_guarded``): a crash, a hang or a runaway fails the one test, never the
whole run."""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

import pytest
from hostile_guard import run_guarded
from hostile_repos import (
    SECRET,
    corrupt,
    deeply_nested,
    fifo,
    minified_js,
    outside_file,
    pager_repo,
)

import ctxfast
from ctxfast.confine import ConfinementError, read_confined, read_many_confined
from ctxfast.errors import InvalidArgumentError

COMPOSE = """
import ctxfast
repo = ctxfast.Repository(".")
ctx = ctxfast.compose(repo, {task!r}, ceiling=4000)
print(ctx.render())
"""

STATUS = """
import json, ctxfast
from ctxfast.cli.status import index_status
repo = ctxfast.Repository(".")
repo.index()
print(json.dumps({"status": index_status(repo), "manifest": bool(repo.manifest())}))
"""


# 1 -- deep nesting ---------------------------------------------------------------------------


def test_deeply_nested_files_index_with_a_recorded_entry(tmp_path: Path) -> None:
    deeply_nested(tmp_path)
    out = run_guarded(
        """
        import json, ctxfast
        s = ctxfast.Repository(".").index()
        print(json.dumps(s.errors))
        """,
        cwd=tmp_path,
    )
    errors = {e["path"]: e["error"] for e in json.loads(out)}
    for name in ("deep.py", "calls.py", "arrays.js"):
        assert "nesting deeper than 256 levels" in errors[name], errors


# 2 -- outside content ------------------------------------------------------------------------


def test_instructions_never_follow_a_link_out_of_the_repository(tmp_path: Path) -> None:
    secret = outside_file(tmp_path)
    repo = tmp_path / "repo"
    pager_repo(repo)
    (repo / "CLAUDE.md").symlink_to(secret)
    (repo / "AGENTS.md").write_text("Run the tests.\n")
    loaded = ctxfast.load_instructions(repo)
    assert SECRET not in loaded.text
    assert "Run the tests." in loaded.text


def test_instructions_follow_a_link_that_stays_inside(tmp_path: Path) -> None:
    pager_repo(tmp_path)
    (tmp_path / "AGENTS.md").write_text("Run the tests.\n")
    (tmp_path / "CLAUDE.md").symlink_to("AGENTS.md")
    assert "Run the tests." in ctxfast.load_instructions(tmp_path).text


def test_skills_never_follow_a_link_out_of_their_directory(tmp_path: Path) -> None:
    secret = outside_file(tmp_path)
    skills_dir = tmp_path / "skills"
    (skills_dir / "evil").mkdir(parents=True)
    (skills_dir / "evil" / "SKILL.md").symlink_to(secret)
    (skills_dir / "ok").mkdir()
    (skills_dir / "ok" / "SKILL.md").write_text("---\nname: ok\n---\nfine\n")
    assert [s.name for s in ctxfast.skills.load_skills(skills_dir)] == ["ok"]


def test_an_indexed_file_swapped_for_an_outside_link_never_reaches_the_window(
    tmp_path: Path,
) -> None:
    secret = outside_file(tmp_path)
    repo = tmp_path / "repo"
    target = pager_repo(repo)
    ctxfast.Repository(repo).index()
    target.unlink()
    target.symlink_to(secret)
    window = run_guarded(COMPOSE.format(task="fix next_page in pager.py"), cwd=repo)
    assert SECRET not in window


def test_read_confined_refuses_links_fifos_and_escapes(tmp_path: Path) -> None:
    secret = outside_file(tmp_path)
    repo = tmp_path / "repo"
    pager_repo(repo)
    (repo / "link.py").symlink_to(secret)
    (repo / "dir").symlink_to(secret.parent, target_is_directory=True)
    fifo(repo / "pipe.py")
    for rel in ("link.py", "dir/secret.txt", "pipe.py", "../outside/secret.txt", "/etc/passwd"):
        with pytest.raises(ConfinementError):
            read_confined(repo, rel)
    assert read_confined(repo, "pager.py").startswith(b"def next_page")
    with pytest.raises(ConfinementError):
        read_confined(repo, "pager.py", max_bytes=10)


def test_read_many_confined_refuses_what_read_confined_refuses(tmp_path: Path) -> None:
    """The batch reader (directories opened once per batch) refuses each hostile path with
    the one-file reader's error, and goes on reading the files after it."""
    secret = outside_file(tmp_path)
    repo = tmp_path / "repo"
    pager_repo(repo)
    (repo / "sub").mkdir()
    (repo / "sub" / "ok.py").write_text("x = 1\n")
    (repo / "link.py").symlink_to(secret)
    (repo / "dir").symlink_to(secret.parent, target_is_directory=True)
    fifo(repo / "pipe.py")
    hostile = ["link.py", "dir/secret.txt", "pipe.py", "../outside/secret.txt", "/etc/passwd"]
    rels = [*hostile, "missing.py", "pager.py", "sub/ok.py", "dir/secret.txt", "sub/ok.py"]
    got = list(read_many_confined(repo, rels))
    assert [rel for rel, _ in got] == rels
    for rel, data in got[: len(hostile)] + got[-2:-1]:
        assert isinstance(data, ConfinementError), rel
    assert isinstance(got[len(hostile)][1], FileNotFoundError)
    for rel, data in got:
        if isinstance(data, bytes):
            assert data == read_confined(repo, rel)
    read = [rel for rel, data in got if isinstance(data, bytes)]
    assert read == ["pager.py", "sub/ok.py", "sub/ok.py"]
    gone = list(read_many_confined(tmp_path / "no-such-root", ["a.py", "b.py"]))
    assert [rel for rel, _ in gone] == ["a.py", "b.py"]
    assert all(isinstance(err, FileNotFoundError) for _, err in gone)


# 3 -- long lines -----------------------------------------------------------------------------


def test_a_minified_file_under_the_size_cap_composes_in_bounded_memory(tmp_path: Path) -> None:
    # 900 KB on one line: a MemoryError at 6 GB before the per-line cap; here the child may
    # use at most 3 GB of address space (the interpreter, rayon and tokenizers included).
    minified_js(tmp_path, 900_000)
    window = run_guarded(
        COMPOSE.format(task="render_page returns the wrong page"),
        cwd=tmp_path,
        max_memory_bytes=3 << 30,
    )
    assert "render_page" in window


# 4 -- FIFOs ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name", ["x.py", "pyproject.toml", "package.json", "CLAUDE.md", "go.mod", "Cargo.toml"]
)
def test_a_fifo_never_hangs_index_status_or_compose(tmp_path: Path, name: str) -> None:
    pager_repo(tmp_path)
    fifo(tmp_path / name)
    out = json.loads(run_guarded(STATUS, cwd=tmp_path))
    if name == "x.py":
        skipped = {s["path"]: s["reason"] for s in out["status"]["files"]["skipped"]}
        assert "not a regular file" in skipped["x.py"]
    run_guarded(COMPOSE.format(task="fix next_page"), cwd=tmp_path)


def test_a_file_swapped_for_a_fifo_after_indexing_never_hangs_compose(tmp_path: Path) -> None:
    target = pager_repo(tmp_path)
    ctxfast.Repository(tmp_path).index()
    target.unlink()
    fifo(target)
    run_guarded(COMPOSE.format(task="fix next_page in pager.py"), cwd=tmp_path)


# 5 -- paths the system cannot open -----------------------------------------------------------


def test_a_path_longer_than_path_max_is_recorded_not_dropped(tmp_path: Path) -> None:
    pager_repo(tmp_path)
    # Made one level at a time from each directory's descriptor: no path call could reach it.
    fd = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for _ in range(40):
            os.mkdir("d" * 200, dir_fd=fd)
            nxt = os.open("d" * 200, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = nxt
        leaf = os.open("deep.py", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd)
        os.write(leaf, b"def deep():\n    return 1\n")
        os.close(leaf)
    finally:
        os.close(fd)
    stats = ctxfast.Repository(tmp_path).index()
    deep = [e for e in stats.errors if e["path"].startswith("d" * 200)]
    assert deep and all("unreadable" in e["error"] for e in deep), stats.errors
    window = ctxfast.compose(ctxfast.Repository(tmp_path), "fix next_page").render()
    assert "def next_page" in window


def test_a_deleted_tree_is_an_error_and_is_not_made_again(tmp_path: Path) -> None:
    import shutil

    pager_repo(tmp_path / "repo")
    repo = ctxfast.Repository(tmp_path / "repo")
    repo.index()
    shutil.rmtree(tmp_path / "repo")
    for call in (repo.index, lambda: ctxfast.compose(repo, "fix next_page")):
        with pytest.raises(InvalidArgumentError, match="no longer a directory"):
            call()
    assert not (tmp_path / "repo").exists()


def test_the_parse_cache_is_private_to_its_user(tmp_path: Path) -> None:
    pager_repo(tmp_path / "repo")
    cache = ctxfast.ParseCache(tmp_path / "cache" / "parse")
    ctxfast.Repository(tmp_path / "repo", parse_cache=cache).index()
    assert (tmp_path / "cache" / "parse").stat().st_mode & 0o077 == 0


# 7 -- corruption -----------------------------------------------------------------------------


@pytest.mark.parametrize("how", ["truncate", "random", "zero-pages", "drop-edges"])
def test_a_damaged_index_is_rebuilt_with_a_logged_reason(tmp_path: Path, how: str) -> None:
    repo_dir = tmp_path / "repo"
    pager_repo(repo_dir)
    for i in range(200):
        (repo_dir / f"mod{i}.py").write_text(
            f"from pager import next_page\n\ndef use{i}(p):\n    return next_page(p) + {i}\n"
        )
    repo = ctxfast.Repository(repo_dir)
    cold = repo.index()
    corrupt(repo.graph_db, how)
    out = run_guarded(
        """
        import json, ctxfast
        repo = ctxfast.Repository(".")
        s = repo.index()
        ctx = ctxfast.compose(repo, "fix next_page in pager.py", ceiling=4000)
        print(json.dumps({"edges": s.edges, "errors": s.errors, "window": ctx.render()}))
        """,
        cwd=repo_dir,
    )
    got = json.loads(out)
    assert got["edges"] == cold.edges
    assert "rebuilt from scratch" in got["errors"][0]["error"]
    assert "next_page" in got["window"]
    con = sqlite3.connect(repo.graph_db)
    assert con.execute("SELECT COUNT(*) FROM edges").fetchone()[0] == cold.edges
    con.close()


def test_an_index_dir_that_cannot_be_created_is_named(tmp_path: Path) -> None:
    pager_repo(tmp_path / "repo")
    blocker = tmp_path / "blocker"
    blocker.write_text("a file where the index directory should be\n")
    repo = ctxfast.Repository(tmp_path / "repo", index_dir=blocker / "idx")
    with pytest.raises(ctxfast.errors.IndexError, match="blocker") as caught:
        repo.index()
    # The kind survives the binding: an OSError that is neither "not found" nor "denied".
    assert isinstance(caught.value, ctxfast.errors.IndexOSError)
    assert isinstance(caught.value, OSError)
    assert not isinstance(caught.value, FileNotFoundError | PermissionError)


def test_a_dangling_link_in_place_of_the_lock_is_removed_not_followed(tmp_path: Path) -> None:
    pager_repo(tmp_path / "repo")
    idx = tmp_path / "idx"
    idx.mkdir()
    (tmp_path / "gone").mkdir()
    target = tmp_path / "gone" / "lock"
    (idx / "recon.db.lock").symlink_to(target)
    repo = ctxfast.Repository(tmp_path / "repo", index_dir=idx)
    assert repo.index().files_parsed > 0
    assert not target.exists()
    assert (idx / "recon.db.lock").is_file() and not (idx / "recon.db.lock").is_symlink()


# 9 -- undecodable names and text -------------------------------------------------------------


def test_an_undecodable_file_name_is_recorded_escaped_and_breaks_nothing(tmp_path: Path) -> None:
    pager_repo(tmp_path)
    with open(os.path.join(os.fsencode(tmp_path), b"b_\xe9.py"), "wb") as fh:
        fh.write(b"def odd():\n    return 1\n")
    out = json.loads(run_guarded(STATUS, cwd=tmp_path))
    skipped = {s["path"]: s["reason"] for s in out["status"]["files"]["skipped"]}
    assert skipped["b_\\xe9.py"] == "skipped: file name is not valid UTF-8"
    run_guarded(COMPOSE.format(task="fix next_page"), cwd=tmp_path)


def test_a_lone_surrogate_in_task_or_error_is_an_invalid_argument(tmp_path: Path) -> None:
    repo = ctxfast.Repository(pager_repo(tmp_path).parent)
    with pytest.raises(InvalidArgumentError, match="task"):
        repo.retrieve("fix \udce9 next_page")
    with pytest.raises(InvalidArgumentError, match="error"):
        repo.retrieve("fix next_page", error="Traceback \ud800")
    with pytest.raises(InvalidArgumentError):
        ctxfast.compose(repo, "fix \udce9 next_page")
