"""The ``ctxfast`` command line. Each subcommand lives in its own ``register`` function."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from ctxfast import __version__
from ctxfast.errors import CtxfastError


def _read_input(path: str) -> str:
    if path == "-":
        return sys.stdin.read()
    with open(path, encoding="utf-8", errors="replace") as fh:
        return fh.read()


def _cmd_tokens(args: argparse.Namespace) -> int:
    from ctxfast.tokens import count_tokens

    print(count_tokens(_read_input(args.file), args.encoding))
    return 0


def _cmd_bench(args: argparse.Namespace) -> int:
    from ctxfast.bench import run_bench

    return run_bench(args.target, repeat=args.repeat)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ctxfast", description="Exact, fast context construction for coding agents."
    )
    parser.add_argument("--version", action="version", version=f"ctxfast {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("tokens", help="print the exact token count of a file or stdin")
    p.add_argument("file", nargs="?", default="-", help="file to count, or - for stdin")
    p.add_argument("--encoding", default="cl100k_base", help="cl100k_base, o200k_base or approx")
    p.set_defaults(func=_cmd_tokens)

    p = sub.add_parser("bench", help="measure ctxfast against the real alternatives")
    p.add_argument("target", choices=["tokens"], help="what to benchmark")
    p.add_argument("--repeat", type=int, default=3, help="timed repetitions (best is kept)")
    p.set_defaults(func=_cmd_bench)

    from ctxfast.eval.cli import register as register_eval

    register_eval(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args))
    except CtxfastError as exc:
        print(f"ctxfast: error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"ctxfast: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
