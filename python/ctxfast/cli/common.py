"""What the repository subcommands share: their two arguments, reading an input file, the
status line on a terminal, and opening a repository with its index refreshed.

Each repository command refreshes the index first (a full build on first use), so
``ctxfast compose PATH "task"`` works on a fresh checkout and always sees the files as they
are on disk. Status/progress lines go to stderr and only when stderr is a terminal: stdout
carries exactly the requested output.
"""

from __future__ import annotations

import argparse
import sys
import time

from ctxfast.progress import IndexBar
from ctxfast.repository import Repository


def read_input(path: str) -> str:
    """The text of ``path``, or of stdin for ``-`` (undecodable bytes replaced)."""
    if path == "-":
        return sys.stdin.read()
    with open(path, encoding="utf-8", errors="replace") as fh:
        return fh.read()


def status_line(msg: str) -> None:
    """One progress/status line on stderr, only when stderr is a terminal."""
    if sys.stderr.isatty():
        print(msg, file=sys.stderr, flush=True)


def add_repository_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("path", help="repository root")
    p.add_argument("--index-dir", default=None, help="index directory (default PATH/.ctxfast)")


def open_repo(args: argparse.Namespace) -> Repository:
    """The repository of ``args.path`` with its index refreshed (built on first use, with a
    progress bar on a terminal); the command's own calls then pass ``refresh=False``."""
    repo = Repository(args.path, getattr(args, "index_dir", None))
    first = not repo.graph_db.exists()
    t0 = time.perf_counter()
    with IndexBar(f"indexing {repo.root.name}" + (" (first use)" if first else "")) as bar:
        stats = repo.index(progress=bar)
    if first or stats.files_parsed or stats.files_removed:
        status_line(
            f"indexed {stats.files_parsed} files, {stats.nodes} nodes, {stats.edges} edges "
            f"in {time.perf_counter() - t0:.2f}s"
        )
    return repo
