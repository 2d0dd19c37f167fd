"""The warm, same-process repo map of two ctxfast builds, alternated on the same trees (issue 43).

Usage: python benches/warm_map.py --before PYTHONPATH --after PYTHONPATH [--trees DIR]
       [--tasks JSONL] [--instances ID ...] [--budgets 1024 4096] [--repeat 5] [--json OUT]
       (defaults: the SWE-bench Lite exact trees under /work/bench-lite/trees/<instance_id>
       and the tasks of /work/shared/bench/swebench_lite_dev.jsonl)

Each tree is indexed once into a temporary directory (by the ``--after`` build), which both
builds then read. Per tree and budget, each build runs in its own fresh subprocess, the two
alternating which goes first (tree i even: ``--before`` first): ``Repository(tree,
index_dir=<that index>)`` makes one map for the task's issue text (the first call: a no-op
refresh and the map), then ``--repeat`` more with the same text (``warm``, the figure issue 43
compares with Aider's warm map) and ``--repeat`` with the issue texts of other instances of
the same repository (``warm, new query``). Seconds are medians of the repeats. Every map's
SHA-256 is compared between the builds: the report says whether all were byte-identical.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

WORKER = r"""
import hashlib, json, sys, time
spec = json.loads(sys.argv[1])
from ctxfast import Repository

def timed(repo, query):
    t = time.perf_counter()
    text = repo.repo_map(query=query, max_tokens=spec["budget"])
    return time.perf_counter() - t, hashlib.sha256(text.encode()).hexdigest()

repo = Repository(spec["tree"], index_dir=spec["index"])
out = {"first": [timed(repo, spec["task"])], "warm": [], "new_query": []}
for _ in range(spec["repeat"]):
    out["warm"].append(timed(repo, spec["task"]))
for other in spec["others"]:
    out["new_query"].append(timed(repo, other))
print(json.dumps(out))
"""


def tasks_of(path: Path) -> dict[str, str]:
    with path.open(encoding="utf-8") as fh:
        rows = [json.loads(line) for line in fh if line.strip()]
    return {r["instance_id"]: r["problem_statement"] for r in rows}


def run_worker(pythonpath: str, spec: dict[str, object]) -> dict[str, list[list[object]]]:
    env = {**os.environ, "PYTHONPATH": pythonpath}
    proc = subprocess.run(
        [sys.executable, "-c", WORKER, json.dumps(spec)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    result: dict[str, list[list[object]]] = json.loads(proc.stdout.splitlines()[-1])
    return result


def index_tree(pythonpath: str, tree: Path, index: Path) -> None:
    code = "import sys; from ctxfast import Repository; "
    code += "Repository(sys.argv[1], index_dir=sys.argv[2]).index(retrieval_state=False)"
    env = {**os.environ, "PYTHONPATH": pythonpath}
    subprocess.run([sys.executable, "-c", code, str(tree), str(index)], env=env, check=True)


def median(rows: list[list[object]]) -> float:
    return statistics.median(float(str(r[0])) for r in rows)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", required=True, help="PYTHONPATH of the build before")
    ap.add_argument("--after", required=True, help="PYTHONPATH of the build after")
    ap.add_argument("--trees", type=Path, default=Path("/work/bench-lite/trees"))
    ap.add_argument(
        "--tasks", type=Path, default=Path("/work/shared/bench/swebench_lite_dev.jsonl")
    )
    ap.add_argument(
        "--instances",
        nargs="+",
        default=["sympy__sympy-11400", "astropy__astropy-12907", "psf__requests-2148"],
    )
    ap.add_argument("--budgets", nargs="+", type=int, default=[1024, 4096])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    tasks = tasks_of(args.tasks)
    builds = {"before": args.before, "after": args.after}
    rows = []
    identical = True
    started = time.time()
    with tempfile.TemporaryDirectory(prefix="ctxfast-warm-map-") as tmp:
        for i, iid in enumerate(args.instances):
            repo_name = iid.rsplit("-", 1)[0]
            others = [t for k, t in sorted(tasks.items()) if k.startswith(repo_name) and k != iid]
            tree, index = args.trees / iid, Path(tmp) / iid
            index_tree(args.after, tree, index)
            order = ["before", "after"] if i % 2 == 0 else ["after", "before"]
            for budget in args.budgets:
                spec = {
                    "tree": str(tree),
                    "index": str(index),
                    "task": tasks[iid],
                    "others": others[: args.repeat],
                    "budget": budget,
                    "repeat": args.repeat,
                }
                got = {b: run_worker(builds[b], spec) for b in order}
                same = all(
                    [r[1] for r in got["before"][phase]] == [r[1] for r in got["after"][phase]]
                    for phase in ("first", "warm", "new_query")
                )
                identical &= same
                row = {"instance": iid, "budget": budget, "identical": same}
                for b in ("before", "after"):
                    for phase in ("first", "warm", "new_query"):
                        row[f"{b}_{phase}"] = median(got[b][phase])
                rows.append(row)
                print(
                    f"{iid:28} {budget:5}  warm {row['before_warm']:.3f} → "
                    f"{row['after_warm']:.3f} s ({row['before_warm'] / row['after_warm']:.1f}×)"
                    f"  new query {row['before_new_query']:.3f} → {row['after_new_query']:.3f} s"
                    f"  first {row['before_first']:.3f} → {row['after_first']:.3f} s"
                    f"  {'identical' if same else 'MAPS DIFFER'}",
                    flush=True,
                )
    print(
        f"{len(rows)} tree × budget runs in {time.time() - started:.0f} s; maps identical: "
        f"{identical}; load {os.getloadavg()[0]:.1f}"
    )
    if args.json:
        args.json.write_text(json.dumps({"rows": rows, "identical": identical}, indent=1))
    return 0 if identical else 1


if __name__ == "__main__":
    sys.exit(main())
