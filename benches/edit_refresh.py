"""One file edited, then ``index()`` in a fresh process: two builds side by side, alternating.

What an agent pays between an edit and its next window. Each build indexes its own copy of
each tree cold once; then, per round, a line is appended to the named file of both copies
and each build's ``index()`` runs in a new Python process (the order alternates per round).
Prints the median wall and CPU seconds of ``index()`` and of the whole process.

    python benches/edit_refresh.py --build old=/path/to/old/python --build new=python \\
        --tree sympy=/src/sympy-1.12:sympy/core/basic.py --rounds 5
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CHILD = r"""
import sys, time, ctxfast
t, c = time.perf_counter(), time.process_time()
ctxfast.Repository(sys.argv[1]).index()
print(time.perf_counter() - t, time.process_time() - c)
"""


def _run(pythonpath: str, root: Path) -> tuple[float, float, float]:
    env = dict(os.environ, PYTHONPATH=pythonpath)
    start = time.perf_counter()
    cmd = [sys.executable, "-c", CHILD, str(root)]
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True).stdout.split()
    return float(out[0]), float(out[1]), time.perf_counter() - start


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", action="append", required=True, help="NAME=PYTHONPATH")
    ap.add_argument("--tree", action="append", required=True, help="NAME=SOURCE_DIR:FILE")
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    builds = dict(b.split("=", 1) for b in args.build)
    work = Path(tempfile.mkdtemp(prefix="ctxfast-edit-refresh-"))
    try:
        for spec in args.tree:
            name, rest = spec.split("=", 1)
            src, rel = rest.rsplit(":", 1)
            times: dict[str, list[tuple[float, float, float]]] = {b: [] for b in builds}
            for b, path in builds.items():
                shutil.copytree(src, work / f"{name}-{b}")
                _run(path, work / f"{name}-{b}")
            order = list(builds)
            for r in range(args.rounds):
                for b in order if r % 2 == 0 else order[::-1]:
                    root = work / f"{name}-{b}"
                    with open(root / rel, "a") as f:
                        f.write(f"\n# edit {r}\n")
                    times[b].append(_run(builds[b], root))
            for b, ts in times.items():
                wall, cpu, proc = (statistics.median(t[i] for t in ts) for i in range(3))
                print(f"{name} {b}: index() {wall:.3f} s wall, {cpu:.3f} s CPU; {proc:.3f} s whole")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
