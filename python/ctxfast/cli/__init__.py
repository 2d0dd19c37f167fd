"""The ``ctxfast`` command line: one module per subcommand, each with ``register(sub)``.

Exit statuses are an enum, as ruff's: 0 success, 1 a result the user must look at (a
warning line on stderr says why: nothing matched, or the budget held no code), 2 a usage or
runtime error (one line on stderr), 130 interrupted by Ctrl-C. A reader that closes stdout
early (``| head``) ends the command quietly. ``ctxfast eval`` and ``ctxfast index-many`` are
registered from here but live beside the code they drive (``ctxfast.eval.cli``,
``ctxfast.batch.cli``).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from ctxfast._native import __version__
from ctxfast.batch import cli as batch_cli
from ctxfast.cli import (
    bench,
    compose,
    graph,
    index,
    manifest,
    mcp,
    retrieve,
    status,
    tokens,
)
from ctxfast.cli import map as map_
from ctxfast.cli.parser import EXAMPLES, Parser
from ctxfast.errors import CtxfastError
from ctxfast.eval import cli as eval_cli
from ctxfast.exitstatus import ExitStatus

#: Subcommands in the order ``--help`` lists them.
SUBCOMMANDS = (
    tokens,
    index,
    bench,
    manifest,
    mcp,
    compose,
    retrieve,
    map_,
    graph,
    status,
    batch_cli,
    eval_cli,
)


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="ctxfast",
        description=(
            "Build the context a coding agent sees: index a repository, find the code a task "
            "points at, and fit it into an exact token budget."
        ),
        epilog='example:\n  ctxfast compose . "fix the off-by-one in next_page"',
    )
    parser.add_argument("--version", action="version", version=f"ctxfast {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for command in SUBCOMMANDS:
        command.register(sub)
    return parser


def _quiet_stdout() -> None:
    """After the reader closed stdout: point it at /dev/null so the interpreter's final
    flush cannot fail again (and print an error) on the way out."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())


def main(argv: Sequence[str] | None = None) -> int:
    from ctxfast.logs import configure_cli_logging

    args = build_parser().parse_args(argv)
    configure_cli_logging()
    try:
        status_code = int(args.func(args))
        sys.stdout.flush()
        return status_code
    except KeyboardInterrupt:
        print("ctxfast: interrupted", file=sys.stderr)
        return ExitStatus.INTERRUPTED
    except BrokenPipeError:
        _quiet_stdout()
        return ExitStatus.BROKEN_PIPE
    except (CtxfastError, OSError) as exc:
        print(f"ctxfast: error: {exc}", file=sys.stderr)
        return ExitStatus.ERROR


__all__ = ["EXAMPLES", "build_parser", "main"]
