"""``ctxfast tokens``: the exact token count of a file or stdin."""

from __future__ import annotations

import argparse
from typing import Any

from ctxfast.cli.common import read_input
from ctxfast.exitstatus import ExitStatus


def run(args: argparse.Namespace) -> ExitStatus:
    from ctxfast.tokens import count_tokens

    print(count_tokens(read_input(args.file), args.encoding))
    return ExitStatus.SUCCESS


def register(sub: Any) -> None:
    p = sub.add_parser("tokens", help="print the exact token count of a file or stdin")
    p.add_argument("file", nargs="?", default="-", help="file to count, or - for stdin")
    p.add_argument("--encoding", default="cl100k_base", help="cl100k_base, o200k_base or approx")
    p.set_defaults(func=run)
