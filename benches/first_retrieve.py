"""The first ``retrieve`` after a cold index, in the indexing process and in a new one.

Usage: python benches/first_retrieve.py TREE TASK_FILE [TREE TASK_FILE ...]

For each tree: a fresh index directory, ``index()``, then the first and the second
``retrieve`` of the task in the same process, and the first ``retrieve`` in a new process
that reads the state the index stored (the time of importing ctxfast there is printed
apart). An agent that clones a repository and asks at once pays the first two; a tool that
indexes in one process and answers in another pays the last.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

_CHILD = """
import sys, time
t0 = time.perf_counter()
from ctxfast.repository import Repository
imported = time.perf_counter() - t0
task = open(sys.argv[3]).read()
t0 = time.perf_counter()
Repository(sys.argv[1], index_dir=sys.argv[2]).retrieve(task, refresh=False)
print(imported, time.perf_counter() - t0)
"""


def measure(tree: str, task_file: str) -> str:
    from ctxfast.repository import Repository

    task = Path(task_file).read_text()
    idx = tempfile.mkdtemp(prefix="ctxfast-first-retrieve-")
    try:
        repo = Repository(tree, index_dir=idx)
        t0 = time.perf_counter()
        repo.index()
        cold = time.perf_counter() - t0
        t0 = time.perf_counter()
        repo.retrieve(task, refresh=False)
        first = time.perf_counter() - t0
        t0 = time.perf_counter()
        repo.retrieve(task, refresh=False)
        second = time.perf_counter() - t0
        out = subprocess.run(
            [sys.executable, "-c", _CHILD, tree, idx, task_file],
            capture_output=True,
            text=True,
            check=True,
        )
        imported, fresh = (float(x) for x in out.stdout.split())
    finally:
        shutil.rmtree(idx, ignore_errors=True)
    return (
        f"{Path(tree).name}: cold index {cold:.2f} s, first retrieve {first:.3f} s, "
        f"second {second:.3f} s, first in a new process {fresh:.3f} s "
        f"(import {imported:.2f} s apart)"
    )


def main(argv: list[str]) -> int:
    if not argv or len(argv) % 2:
        print(__doc__, file=sys.stderr)
        return 2
    for tree, task_file in zip(argv[::2], argv[1::2], strict=True):
        print(measure(tree, task_file), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
