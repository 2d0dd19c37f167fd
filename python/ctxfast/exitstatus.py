"""Exit statuses of the ``ctxfast`` command line, as an enum (the model is ruff's).

0 success; 1 a result the user must look at, with a warning line on stderr saying why (no
match, a budget that held no code); 2 a usage or runtime error, with one line on stderr;
130 interrupted by Ctrl-C; 141 stdout closed by its reader (``| head``).
"""

from __future__ import annotations

import sys
from enum import IntEnum


class ExitStatus(IntEnum):
    SUCCESS = 0
    #: The command ran, but its result is degenerate (empty, or too small to be useful).
    WARNING = 1
    #: Bad usage (argparse exits with it too) or a runtime error.
    ERROR = 2
    #: Ctrl-C: 128 + SIGINT, what a shell reports for a process killed by it.
    INTERRUPTED = 130
    #: stdout was closed by its reader: 128 + SIGPIPE, as for a process killed by it.
    BROKEN_PIPE = 141


def warn(message: str) -> ExitStatus:
    """One warning line on stderr; the command's status becomes :attr:`ExitStatus.WARNING`."""
    print(f"ctxfast: warning: {message}", file=sys.stderr)
    return ExitStatus.WARNING


__all__ = ["ExitStatus", "warn"]
