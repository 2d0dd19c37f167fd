"""Progress reporting: polled counters of a native index run, and the CLI's stderr bar."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
import threading

import pytest

from ctxfast import Repository
from ctxfast.progress import IndexBar, run_polled

STAGES = {"discover", "parse", "resolve", "write", "done"}


def _repo(tmp_path, n=12):
    tmp_path.mkdir()
    for i in range(n):
        (tmp_path / f"m{i}.py").write_text(f"def f{i}():\n    return {i}\n")
    (tmp_path / "notes.txt").write_text("not source\n")
    return tmp_path


def test_run_polled_reports_while_work_runs_and_once_at_the_end():
    seen: list[tuple[str, int, int]] = []
    polled_twice = threading.Event()
    state = ["parse", 0, 5]

    def report(stage, done, total):
        seen.append((stage, done, total))
        state[1] = min(state[1] + 1, 5)
        if len(seen) >= 2:
            polled_twice.set()

    def work():
        assert polled_twice.wait(timeout=60), "the poller never reported"
        state[0] = "done"
        return "result"

    out = run_polled(work, lambda: (state[0], state[1], state[2]), report, interval=0.01)
    assert out == "result"
    assert len(seen) >= 3
    assert seen[-1][0] == "done"  # the final snapshot is always reported


def test_run_polled_reraises_a_failing_callback_after_the_work():
    finished = []

    def report(*_):
        raise RuntimeError("bad callback")

    def work():
        threading.Event().wait(0.05)
        finished.append(True)

    with pytest.raises(RuntimeError, match="bad callback"):
        run_polled(work, lambda: ("parse", 0, 1), report, interval=0.001)
    assert finished == [True]  # the run was not interrupted


def test_repository_index_reports_every_file(tmp_path):
    root = _repo(tmp_path / "r")
    seen: list[tuple[str, int, int]] = []
    stats = Repository(root, index_dir=tmp_path / "idx").index(progress=lambda *a: seen.append(a))
    assert stats.files_seen == 12
    assert seen[-1] == ("done", 12, 12)
    assert {s for s, _, _ in seen} <= STAGES
    dones = [d for _, d, _ in seen]
    assert dones == sorted(dones)


def test_index_bar_tracks_total_and_done():
    bar = IndexBar("indexing", enabled=True)
    bar("parse", 3, 10)
    assert (bar._bar.n, bar._bar.total) == (3, 10)
    bar("done", 10, 10)
    assert bar._bar.n == 10
    bar.close()


def test_a_disabled_index_bar_is_no_bar_at_all():
    """Off a terminal there is nothing to draw: no tqdm object (nor its import) is made."""
    bar = IndexBar("indexing", enabled=False)
    bar("parse", 3, 10)
    bar.close()
    assert bar._bar is None


def _cli_index(root, idx, stderr_tty: bool) -> tuple[int, str, str]:
    args = [sys.executable, "-m", "ctxfast.cli", "index", str(root), "--index-dir", str(idx)]
    if not stderr_tty:
        p = subprocess.run(args, capture_output=True, text=True, timeout=120)
        return p.returncode, p.stdout, p.stderr
    master, slave = pty.openpty()
    p = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=slave, text=True)
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 4096)
        except OSError:  # EIO: the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    out = p.stdout.read()
    p.wait(timeout=120)
    os.close(master)
    return p.returncode, out, b"".join(chunks).decode("utf-8", "replace")


def test_cli_index_shows_a_bar_on_a_terminal_only(tmp_path):
    root = _repo(tmp_path / "r")
    rc, out, err = _cli_index(root, tmp_path / "a", stderr_tty=True)
    assert rc == 0 and "files seen 12" in out
    assert "indexing r" in err and "file" in err
    rc, out, err = _cli_index(root, tmp_path / "b", stderr_tty=False)
    assert rc == 0 and "files seen 12" in out
    assert err == ""
