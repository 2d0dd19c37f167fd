"""The console script, run as a real subprocess."""

from __future__ import annotations

import subprocess
import sys

import ctxfast


def run(*args, stdin=None):
    return subprocess.run(
        [sys.executable, "-m", "ctxfast.cli", *args],
        input=stdin,
        capture_output=True,
        text=True,
        check=False,
    )


def test_version():
    out = run("--version")
    assert out.returncode == 0 and ctxfast.__version__ in out.stdout


def test_tokens_file_and_stdin(tmp_path):
    f = tmp_path / "a.txt"
    f.write_text("hello world, this is ctxfast", encoding="utf-8")
    out = run("tokens", str(f))
    assert out.returncode == 0
    assert int(out.stdout) == ctxfast.count_tokens(f.read_text())
    out = run("tokens", "--encoding", "o200k_base", "-", stdin="héllo 世界")
    assert int(out.stdout) == ctxfast.count_tokens("héllo 世界", "o200k_base")


def test_tokens_errors_are_clean(tmp_path):
    out = run("tokens", str(tmp_path / "missing.txt"))
    assert out.returncode == 2 and "error" in out.stderr and "Traceback" not in out.stderr
    out = run("tokens", "--encoding", "nope", "-", stdin="x")
    assert out.returncode == 2 and "unknown encoding" in out.stderr
