"""``ctxfast bench``: time ctxfast against the library it replaces."""

from __future__ import annotations

import argparse
from typing import Any


def run(args: argparse.Namespace) -> int:
    from ctxfast.bench import run_bench

    return run_bench(args.target, repeat=args.repeat)


def register(sub: Any) -> None:
    p = sub.add_parser("bench", help="time ctxfast against the library it replaces")
    p.add_argument("target", choices=["tokens"], help="what to benchmark")
    p.add_argument("--repeat", type=int, default=3, help="timed repetitions (best is kept)")
    p.set_defaults(func=run)
