"""The command line as a user meets it, through real subprocesses: exit statuses, one-line
errors and warnings, Ctrl-C, a closed stdout, --help, ``python -m ctxfast``."""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import time

import pytest
from recon_fixture import write_project

from ctxfast import Repository, _native
from ctxfast.cli import EXAMPLES, build_parser
from ctxfast.exitstatus import ExitStatus
from ctxfast.retrieval.repoindex import content_key

TASK = "connect should reject an empty database uri"


def ctxfast(*args, **kw):
    return subprocess.run(
        [sys.executable, "-m", "ctxfast", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=120,
        **kw,
    )


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    root = write_project(tmp_path_factory.mktemp("cli") / "proj")
    (root / "blob.py").write_bytes(b"x = 1\x00\x01\x02\n")
    return root


def test_success_warning_and_error_statuses(project, tmp_path):
    ok = ctxfast("compose", project, TASK)
    assert ok.returncode == ExitStatus.SUCCESS == 0, ok.stderr
    assert "def connect" in ok.stdout and ok.stderr == ""

    small = ctxfast("compose", project, TASK, "--ceiling", "60")
    assert small.returncode == ExitStatus.WARNING == 1
    assert small.stderr.startswith("ctxfast: warning: no code fits in --ceiling 60")

    none = ctxfast("compose", project, TASK, "--ceiling", "0")
    assert none.returncode == 1
    assert none.stderr == "ctxfast: warning: nothing fits in --ceiling 0 tokens\n"

    empty = ctxfast("retrieve", project, "zzqx wvvy")
    assert empty.returncode == 1
    assert empty.stderr == "ctxfast: warning: nothing in the repository matched the task\n"

    usage = ctxfast("compose", project)  # the task is missing
    assert usage.returncode == ExitStatus.ERROR == 2 and "usage:" in usage.stderr

    missing = ctxfast("retrieve", tmp_path / "nowhere", TASK)
    assert missing.returncode == 2
    assert missing.stderr.startswith("ctxfast: error: repository path is not a directory")
    assert missing.stderr.count("\n") == 1 and "Traceback" not in missing.stderr


def test_a_closed_stdout_ends_quietly(project):
    proc = subprocess.Popen(
        [sys.executable, "-m", "ctxfast", "map", str(project), "--tokens", "2000"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    proc.stdout.close()  # the reader is gone before the command writes anything
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == ExitStatus.BROKEN_PIPE
    assert err == ""


def test_status_names_each_skip_once(project):
    out = ctxfast("status", project)
    assert out.returncode == 0
    assert "  blob.py: skipped: binary file" in out.stdout
    assert "skipped: skipped" not in out.stdout


def test_the_index_directory_ignores_itself_in_git(project):
    repo = Repository(project)
    repo.index()
    assert (repo.index_dir / ".gitignore").read_text().splitlines()[-1] == "*"
    git = subprocess.run(["git", "--version"], capture_output=True)
    if git.returncode == 0:
        subprocess.run(["git", "init", "-q", str(project)], check=True)
        st = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=all"],
            cwd=project,
            capture_output=True,
            text=True,
            check=True,
        )
        assert ".ctxfast" not in st.stdout and "pkg/db.py" in st.stdout


def test_help_shows_defaults_and_an_example_for_every_command():
    parser = build_parser()
    seen = []

    def walk(p: argparse.ArgumentParser) -> None:
        for action in p._actions:
            if isinstance(action, argparse._SubParsersAction):
                for sub in action.choices.values():
                    seen.append(sub.prog.removeprefix("ctxfast ").strip())
                    assert "example:\n  ctxfast " in sub.format_help(), sub.prog
                    walk(sub)

    walk(parser)
    assert set(seen) == set(EXAMPLES)
    text = ctxfast("compose", "--help").stdout
    assert "--ceiling CEILING" in text and "(default: 24000)" in text
    assert "spec" not in ctxfast("--help").stdout.lower()


def test_python_dash_m_runs_the_cli():
    out = ctxfast("--version")
    assert out.returncode == 0 and out.stdout.startswith("ctxfast ")


def test_a_cancelled_index_run_leaves_the_index_as_it_was(tmp_path):
    root = write_project(tmp_path / "proj")
    repo = Repository(root, tmp_path / "idx")
    db = str(repo.graph_db)

    cancelled = _native.IndexProgress()
    cancelled.cancel()
    with pytest.raises(KeyboardInterrupt):
        _native.index_graph(str(root), db, 1_000_000, cancelled)
    assert _written(repo.index_dir) == []  # no index, no side file left

    repo.index()
    before = content_key(repo.graph_db)
    (root / "pkg" / "utils.py").write_text("def helper():\n    return 2\n")
    again = _native.IndexProgress()
    again.cancel()
    with pytest.raises(KeyboardInterrupt):
        _native.index_graph(str(root), db, 1_000_000, again)
    assert content_key(repo.graph_db) == before  # the refresh was rolled back
    assert repo.index().files_parsed == 1  # and the next one does it


def _big_repo(root, n_files=2400):
    for d in range(25):
        pkg = root / f"p{d}"
        pkg.mkdir(parents=True)
        (pkg / "__init__.py").write_text("")
        for i in range(n_files // 25):
            body = "".join(
                f"def f{i}_{k}(x):\n    return f{i}_{k - 1}(x) + {k}\n\n" for k in range(1, 60)
            )
            (pkg / f"m{i}.py").write_text(f"def f{i}_0(x):\n    return x\n\n{body}")
    return root


def _written(idx):
    """What a run left in the index directory besides its ``.gitignore`` and the build lock
    (an empty file that only serialises builds)."""
    keep = {".gitignore", "recon.db.lock"}
    return [p.name for p in idx.iterdir() if p.name not in keep] if idx.exists() else []


@pytest.mark.skipif(os.name != "posix", reason="SIGINT delivery to a child is POSIX here")
def test_ctrl_c_during_index_exits_130_without_a_traceback(tmp_path):
    root = _big_repo(tmp_path / "big")
    idx = tmp_path / "idx"
    env = {**os.environ, "CTXFAST_THREADS": "1"}  # a slow run, so the signal lands inside it
    proc = subprocess.Popen(
        [sys.executable, "-m", "ctxfast", "index", str(root), "--index-dir", str(idx)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        # A suite started as a background job (`cmd &` in a script) inherits SIGINT ignored,
        # and so would the child: give it the default a terminal's Ctrl-C meets.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    # The native run has started once it has written anything beside the .gitignore.
    deadline = time.monotonic() + 60
    while not _written(idx) and proc.poll() is None:
        assert time.monotonic() < deadline, "the index run never started"
        time.sleep(0.01)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == ExitStatus.INTERRUPTED == 130, err
    assert err.decode() == "ctxfast: interrupted\n"
    assert out == b""
    assert _written(idx) == []  # no index, no half-written side file


def test_missing_optional_packages_are_one_clear_line(monkeypatch, capsys):
    import importlib.util

    from ctxfast import _tiktoken_ref
    from ctxfast.cli import main

    def no_tiktoken(name):
        raise RuntimeError("no tiktoken here")

    monkeypatch.setattr(_tiktoken_ref, "get_encoding", no_tiktoken)
    assert main(["bench", "tokens"]) == ExitStatus.ERROR
    assert capsys.readouterr().err == (
        "ctxfast: error: ctxfast bench tokens times ctxfast against tiktoken: "
        "pip install 'ctxfast[bench]'\n"
    )

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda n, *a: None if n == "bm25s" else real(n, *a)
    )
    assert main(["eval", "retrieval", "bench.jsonl", "--trees", "."]) == ExitStatus.ERROR
    err = capsys.readouterr().err
    assert err.endswith("pip install 'ctxfast[eval]'\n") and err.count("\n") == 1


def test_ctxfast_threads_caps_the_native_pool():
    code = "import ctxfast._native as n; print(n.native_threads())"
    for value, expected in (("1", "1"), ("3", "3")):
        out = subprocess.run(
            [sys.executable, "-c", code],
            env={**os.environ, "CTXFAST_THREADS": value},
            capture_output=True,
            text=True,
            check=True,
        )
        assert out.stdout.strip() == expected
