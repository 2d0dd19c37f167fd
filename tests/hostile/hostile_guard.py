"""The watchdog of the hostile suite: each hostile case runs in its own Python process.

A case that overflows the native stack kills its process with SIGSEGV, one that hangs in
``open`` on a FIFO never returns, one that runs away in memory is OOM-killed: in-process, any
of them takes the whole pytest run down or stalls it. Here the child is killed after
``timeout`` seconds (its whole process group), may be given an address-space cap, and a
signal, a hang or a non-zero exit fails just that test with the child's output.
"""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

#: Seconds a hostile case may run before the watchdog calls it a hang.
CASE_TIMEOUT_S = 60


def run_guarded(
    code: str,
    *,
    cwd: Path,
    timeout: float = CASE_TIMEOUT_S,
    max_memory_bytes: int | None = None,
    env: dict[str, str] | None = None,
) -> str:
    """Runs ``code`` in a fresh interpreter under ``cwd`` (``env`` added to this process's
    environment); returns its stdout. Fails the test on a hang (after ``timeout`` s), a fatal
    signal, or a non-zero exit."""

    def limits() -> None:
        os.setsid()
        if max_memory_bytes is not None:
            resource.setrlimit(resource.RLIMIT_AS, (max_memory_bytes, max_memory_bytes))

    proc = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(code)],
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=limits,
        env={**os.environ, **(env or {})},
    )
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        pytest.fail(f"hung: no exit after {timeout} s\nstdout:\n{out}\nstderr:\n{err[-4000:]}")
    if proc.returncode < 0:
        name = signal.Signals(-proc.returncode).name
        pytest.fail(f"crashed: killed by {name}\nstdout:\n{out}\nstderr:\n{err[-4000:]}")
    if proc.returncode != 0:
        pytest.fail(f"failed: exit {proc.returncode}\nstdout:\n{out}\nstderr:\n{err[-4000:]}")
    return out
