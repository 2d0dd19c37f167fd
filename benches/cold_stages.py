"""Wall and CPU time per stage of one fresh-process ``ctxfast compose`` (the stage table of
benches/README.md, "Fresh-process compose").

Run it as a new process on an indexed tree whose stored retrieval state exists (run the same
compose once before)::

    python benches/cold_stages.py TREE TASK_FILE --index-dir DIR

Each stage is timed by wrapping the function that does it, so nested stages are listed
inside the one that calls them; CPU is ``process_time`` (every thread of the process).
"""

from __future__ import annotations

import time

T0 = (time.perf_counter(), time.process_time())

import argparse  # noqa: E402
import contextlib  # noqa: E402
import importlib  # noqa: E402
import io  # noqa: E402
from collections.abc import Callable  # noqa: E402
from typing import Any  # noqa: E402

ROWS: list[tuple[str, float, float]] = []

#: (module, class or "", function, label) of every timed stage.
STAGES = [
    ("ctxfast.repository", "Repository", "retrieve", "retrieval"),
    ("ctxfast.retrieval.pipeline", "Retriever", "__init__", "  retrieval state (tables, api.db)"),
    ("ctxfast.retrieval.repoindex", "RepoIndex", "__init__", "    definition table"),
    ("ctxfast.retrieval.sources", "LexicalRecall", "search", "  lexical search"),
    ("ctxfast.retrieval.localize", "DefinitionBM25", "__init__", "  definition BM25 (stored)"),
    ("ctxfast.retrieval.repoindex", "RepoIndex", "file_bm25", "  file BM25 (stored)"),
    ("ctxfast.repository", "Repository", "manifest", "manifest"),
    ("ctxfast.construct.compose", "", "construct", "construction"),
]


def _mark(label: str, since: tuple[float, float]) -> tuple[float, float]:
    now = (time.perf_counter(), time.process_time())
    ROWS.append((label, now[0] - since[0], now[1] - since[1]))
    return now


def _timed(f: Callable[..., Any], label: str) -> Callable[..., Any]:
    def run(*args: Any, **kwargs: Any) -> Any:
        since = (time.perf_counter(), time.process_time())
        try:
            return f(*args, **kwargs)
        finally:
            _mark(label, since)

    return run


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("tree")
    p.add_argument("task_file")
    p.add_argument("--index-dir", required=True)
    a = p.parse_args()
    import ctxfast.cli
    import ctxfast.construct.compose

    t = _mark("imports on the compose path", T0)
    for module, cls, name, label in STAGES:
        mod = importlib.import_module(module)
        owner = getattr(mod, cls) if cls else mod
        setattr(owner, name, _timed(getattr(owner, name), label))
    with open(a.task_file, encoding="utf-8") as fh:
        task = fh.read()
    with contextlib.redirect_stdout(io.StringIO()):
        ctxfast.cli.main(["compose", a.tree, task, "--index-dir", a.index_dir])
    _mark("the command after its imports", t)
    _mark("the whole process after startup", T0)
    for label, wall, cpu in ROWS:
        print(f"{label:40s} wall {wall * 1000:7.1f} ms  cpu {cpu * 1000:7.1f} ms")


if __name__ == "__main__":
    main()
