"""Concurrent writers and kill -9, with real processes and threads on one index.

Two refreshers of one index used to fail with ``database is locked`` (a deferred write
transaction upgraded late), two threads shared one ``recon.db.building-<pid>`` side file, and
a killed build must never leave a half-written or unusable index behind. Processes reading
one index while refreshing it used to die of SIGBUS: Python read ``recon.db`` through a second
copy of SQLite, and the core's close of its connection dropped the POSIX locks the other copy
held on the WAL index, so another process re-initialised ``recon.db-shm`` under its mapping.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from hostile_guard import run_guarded
from hostile_repos import cold_dump, dump, pager_repo

import ctxfast

WRITER = """
import sys, ctxfast
name, rounds = sys.argv[1], int(sys.argv[2])
repo = ctxfast.Repository(".")
for i in range(rounds):
    with open(name, "w") as fh:
        fh.write(f"def {name[:-3]}_{i}():\\n    return {i}\\n")
    repo.index()
print("ok")
"""


# A long-lived process (an MCP server, an eval worker): one Repository, a refreshing
# retrieve per call, so the core's connection opens and closes while Python's stays open.
READER = """
import sys, faulthandler, ctxfast
faulthandler.enable()
repo = ctxfast.Repository(".")
for _ in range(int(sys.argv[1])):
    assert repo.retrieve("fix next_page when the pager advances").candidates
print("ok")
"""


def many_files(root: Path, n: int) -> None:
    pager_repo(root)
    for i in range(n):
        (root / f"mod{i}.py").write_text(
            f"from pager import next_page\n\nclass C{i}:\n"
            f"    def run(self, p):\n        return next_page(p) + {i}\n"
        )


def all_succeed(cwd: Path, commands: list[list[str]]) -> None:
    """Runs the scripts at once, each in its own process; every one must exit 0 with "ok"."""
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", *command],
            cwd=cwd,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for command in commands
    ]
    for p in procs:
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0, err[-3000:]
        assert out.strip() == "ok"


def test_two_processes_refreshing_one_index_both_succeed(tmp_path: Path) -> None:
    many_files(tmp_path, 300)
    ctxfast.Repository(tmp_path).index()
    all_succeed(tmp_path, [[WRITER, f"w{k}.py", "8"] for k in range(2)])
    ctxfast.Repository(tmp_path).index()
    assert dump(tmp_path / ".ctxfast" / "recon.db") == cold_dump(tmp_path, tmp_path.parent / "c")


def test_three_processes_refreshing_and_reading_one_index_never_crash(tmp_path: Path) -> None:
    # With Python reading through the stdlib sqlite3, 11 of 11 runs of this test had a
    # reader killed by SIGBUS (return code -7).
    many_files(tmp_path, 50)
    ctxfast.Repository(tmp_path).index()
    all_succeed(tmp_path, [[READER, "60"]] * 3)
    assert dump(tmp_path / ".ctxfast" / "recon.db") == cold_dump(tmp_path, tmp_path.parent / "c")


def test_two_threads_building_one_index_at_once_both_succeed(tmp_path: Path) -> None:
    many_files(tmp_path, 200)
    errors: list[BaseException] = []

    def build() -> None:
        try:
            ctxfast.Repository(tmp_path).index()
        except BaseException as exc:  # the test reports any failure of either thread
            errors.append(exc)

    threads = [threading.Thread(target=build) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert not [p for p in (tmp_path / ".ctxfast").iterdir() if ".building-" in p.name]


def test_two_first_use_composes_in_threads_both_succeed(tmp_path: Path) -> None:
    many_files(tmp_path, 100)
    out = run_guarded(
        """
        import threading, ctxfast
        results, errors = [], []
        def go():
            try:
                repo = ctxfast.Repository(".")
                results.append(ctxfast.compose(repo, "fix next_page", ceiling=3000).token_count)
            except BaseException as exc:
                errors.append(repr(exc))
        ts = [threading.Thread(target=go) for _ in range(2)]
        [t.start() for t in ts]
        [t.join() for t in ts]
        print(len(results), errors)
        """,
        cwd=tmp_path,
    )
    assert out.strip() == "2 []"


def test_kill_9_at_any_point_leaves_an_index_equal_to_a_cold_build(tmp_path: Path) -> None:
    repo_dir = tmp_path / "repo"
    many_files(repo_dir, 1500)
    db = repo_dir / ".ctxfast" / "recon.db"
    # Kill points spread over a cold build and over refreshes (a file edited each round).
    for round_, delay in enumerate((0.05, 0.15, 0.3, 0.5, 0.8, 0.05, 0.2, 0.4)):
        (repo_dir / "mod0.py").write_text(f"def edited_{round_}():\n    return {round_}\n")
        child = subprocess.Popen(
            [sys.executable, "-c", "import ctxfast; ctxfast.Repository('.').index()"],
            cwd=repo_dir,
            start_new_session=True,
        )
        time.sleep(delay)
        os.killpg(child.pid, signal.SIGKILL)
        child.wait()
        if round_ == 4:
            db.unlink(missing_ok=True)  # the second half kills cold builds again
    ctxfast.Repository(repo_dir).index()
    assert dump(db) == cold_dump(repo_dir, tmp_path / "cold")
    assert not [p for p in db.parent.iterdir() if ".building-" in p.name]
