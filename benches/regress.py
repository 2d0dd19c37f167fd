"""Measures the same-run ratios of the asv suite and reports a slowdown beyond noise against
the committed previous figures, ``benches/previous.json`` (``.ci/run`` runs it; it never
fails the build).

Only ratios are compared — ctxfast's time over its alternative's, both measured in the same
round (a ``track_*`` ratio of ``FirstWindow``, or two benchmarks of one suite such as
count_tokens and tiktoken) — since on a shared machine absolute seconds move with the load,
while a ratio moves only when one side's code does. The benchmarks are the asv suite's own
classes, run here directly: ``asv run --quick`` takes one sample and saves no results, while
this takes the median of ``--rounds`` rounds, the two sides alternating, and a ratio counts
as slower only beyond ``--tolerance`` (25 % by default) of the previous one::

    python benches/regress.py             # report against benches/previous.json
    python benches/regress.py --update    # measure and store the figures as the previous ones
"""

from __future__ import annotations

import argparse
import contextlib
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
PREVIOUS = HERE / "previous.json"
#: A benchmark is called until its calls add up to this many seconds; its best call counts.
BEST_OF_SECONDS = 0.2

#: label → (module, ctxfast's benchmark, the alternative's), each ``Class.method``; without
#: an alternative, the benchmark is a ``track_`` method that returns the ratio itself.
RATIOS: dict[str, tuple[str, str, str | None]] = {
    "first window / ast walk": (
        "bench_first_window",
        "FirstWindow.track_first_window_over_ast_walk",
        None,
    ),
    "cold index / ast walk": (
        "bench_first_window",
        "FirstWindow.track_cold_index_over_ast_walk",
        None,
    ),
    "first compose / cold index": (
        "bench_first_window",
        "FirstWindow.track_first_compose_over_cold_index",
        None,
    ),
    "count_tokens / tiktoken (one string)": (
        "bench_tokens",
        "CountTokens.time_ctxfast_single_string",
        "CountTokens.time_tiktoken_single_string",
    ),
    "count_tokens / tiktoken (batch)": (
        "bench_tokens",
        "CountTokens.time_ctxfast_batch",
        "CountTokens.time_tiktoken_batch",
    ),
    "BM25 build / bm25s": ("bench_bm25", "BM25.time_ctxfast_build", "BM25s.time_bm25s_build"),
    "BM25 queries / bm25s": (
        "bench_bm25",
        "BM25.time_ctxfast_query_batch",
        "BM25s.time_bm25s_retrieve",
    ),
}


class Skip(Exception):
    """The benchmark cannot run here (asv's ``NotImplementedError``: an optional package)."""


def _bench(module: str, cls: str) -> tuple[Any, tuple[Any, ...]]:
    """An instance of the suite class with asv's ``setup_cache`` value, if it has one."""
    mod = __import__(f"benchmarks.{module}", fromlist=[cls])
    bench = getattr(mod, cls)()
    try:
        args = (bench.setup_cache(),) if hasattr(bench, "setup_cache") else ()
    except NotImplementedError as exc:
        raise Skip(str(exc)) from exc
    return bench, args


def _once(bench: Any, args: tuple[Any, ...], name: str) -> tuple[float, Any]:
    """Seconds of benchmark ``name`` between its setup and teardown (the best of as many
    calls as fit in ``BEST_OF_SECONDS``: a call of microseconds is timed more than once),
    and what its last call returned."""
    try:
        if hasattr(bench, "setup"):
            bench.setup(*args)
    except NotImplementedError as exc:
        raise Skip(str(exc)) from exc
    try:
        best, spent, out = float("inf"), 0.0, None
        while spent < BEST_OF_SECONDS:
            start = time.perf_counter()
            out = getattr(bench, name)(*args)
            took = time.perf_counter() - start
            best, spent = min(best, took), spent + took
            if name.startswith("track_"):
                break
        return best, out
    finally:
        if hasattr(bench, "teardown"):
            bench.teardown(*args)


def measure(rounds: int, say: Callable[[str], None]) -> dict[str, float]:
    """The median of each ratio over ``rounds`` rounds, run as asv runs a suite: in a
    temporary working directory, where the ``setup_cache`` fixtures are built and which is
    removed afterwards."""
    with tempfile.TemporaryDirectory(prefix="ctxfast-regress-") as work, contextlib.chdir(work):
        return _measure(rounds, say)


def _measure(rounds: int, say: Callable[[str], None]) -> dict[str, float]:
    sys.path.insert(0, str(HERE))
    out: dict[str, float] = {}
    made: dict[tuple[str, str], tuple[Any, tuple[Any, ...]]] = {}

    def once(module: str, bench: str) -> tuple[float, Any]:
        cls, name = bench.split(".")
        if (module, cls) not in made:
            made[module, cls] = _bench(module, cls)
        return _once(*made[module, cls], name)

    for label, (module, ours, theirs) in RATIOS.items():
        values = []
        try:
            for _ in range(rounds):
                if theirs is None:
                    values.append(float(once(module, ours)[1]))
                else:
                    values.append(once(module, ours)[0] / once(module, theirs)[0])
        except Skip as exc:
            say(f"  {label:40s} skipped: {exc}")
            continue
        out[label] = statistics.median(values)
    return out


def report(now: dict[str, float], before: dict[str, float], tolerance: float) -> list[str]:
    """One line per ratio; a ratio beyond ``tolerance`` of its previous value says so."""
    lines = []
    for label, value in now.items():
        was = before.get(label)
        if not was:
            lines.append(f"  {label:40s} {value:7.3f}  (no previous figure)")
            continue
        change = value / was
        flag = "  SLOWER beyond noise" if change > 1 + tolerance else ""
        lines.append(f"  {label:40s} {value:7.3f}  previous {was:7.3f}  x{change:.2f}{flag}")
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--update", action="store_true", help="store the figures as the previous")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--tolerance", type=float, default=0.25)
    a = ap.parse_args()
    print("same-run ratios, ctxfast over the alternative (lower is faster), median of rounds:")
    now = measure(a.rounds, print)
    before = json.loads(PREVIOUS.read_text()) if PREVIOUS.exists() else {}
    print("\n".join(report(now, before, a.tolerance)))
    if a.update:
        figures = {label: round(value, 3) for label, value in now.items()}
        PREVIOUS.write_text(json.dumps(figures, indent=1) + "\n")
        print(f"stored in {PREVIOUS}")


if __name__ == "__main__":
    main()
