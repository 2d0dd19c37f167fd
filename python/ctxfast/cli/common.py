"""What the repository subcommands share: their two arguments, reading an input file, the
status line on a terminal, and opening a repository with its index refreshed.

Each repository command refreshes the index first (a full build on first use), so
``ctxfast compose PATH "task"`` works on a fresh checkout and always sees the files as they
are on disk. Status/progress lines go to stderr and only when stderr is a terminal: stdout
carries exactly the requested output.
"""

from __future__ import annotations

import argparse
import errno
import io
import sys
import time
from typing import BinaryIO

from ctxfast.confine import ConfinementError, read_regular
from ctxfast.errors import InvalidArgumentError
from ctxfast.progress import IndexBar
from ctxfast.repository import Repository

#: The most bytes one input file (``--error``, ``--traceback``, ``--patch``, ``--test-output``,
#: ``tokens FILE``, or stdin) may hold: far above any real traceback or diff, far below what
#: would exhaust memory. A larger input is refused, never cut, so no evidence is silently lost.
MAX_INPUT_BYTES = 4 * 1024 * 1024


def _too_large(label: str) -> InvalidArgumentError:
    return InvalidArgumentError(
        f"{label}: input larger than the {MAX_INPUT_BYTES // (1024 * 1024)} MiB "
        f"({MAX_INPUT_BYTES} bytes) cap on input files"
    )


def _capped(stream: BinaryIO, label: str) -> bytes:
    """At most :data:`MAX_INPUT_BYTES` of ``stream``: one byte more is read only to tell a
    file of exactly the cap from a larger one (``/dev/zero`` on stdin ends here too)."""
    data = stream.read(MAX_INPUT_BYTES + 1)
    if len(data) > MAX_INPUT_BYTES:
        raise _too_large(label)
    return data


def _regular_file_bytes(path: str) -> bytes:
    """The bytes of ``path`` if it is a regular file within the cap (``confine.read_regular``:
    the type checked on the opened descriptor, so a FIFO, ``/dev/zero`` or a directory is
    refused without a read; the size before reading, so a 1 GB file fails at once)."""
    try:
        return read_regular(path, max_bytes=MAX_INPUT_BYTES)
    except ConfinementError as exc:
        if exc.errno == errno.EFBIG:
            raise _too_large(path) from None
        raise InvalidArgumentError(
            f"{path}: not a regular file (a FIFO, device or directory)"
        ) from None


def read_input(path: str) -> str:
    """The text of ``path``, or of stdin for ``-``: undecodable bytes replaced, Windows and
    old Mac line endings read as newlines (as text-mode reading did). Only a regular file is
    read, and no input beyond :data:`MAX_INPUT_BYTES`: a FIFO, ``/dev/zero`` or a huge file
    is an error (exit status 2), never a hang or a memory blow-up."""
    data = _capped(sys.stdin.buffer, "stdin") if path == "-" else _regular_file_bytes(path)
    return io.TextIOWrapper(io.BytesIO(data), encoding="utf-8", errors="replace").read()


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
