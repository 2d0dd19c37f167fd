"""The ``ctxfast`` command line. Each subcommand lives in its own ``register`` function.

Exit statuses are an enum, as ruff's: 0 success, 1 a result the user must look at (a
warning line on stderr says why: nothing matched, or the budget held no code), 2 a usage or
runtime error (one line on stderr), 130 interrupted by Ctrl-C. A reader that closes stdout
early (``| head``) ends the command quietly.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import Any

from ctxfast._native import __version__
from ctxfast.errors import CtxfastError
from ctxfast.exitstatus import ExitStatus, warn

#: One example per subcommand (``prog`` without the leading ``ctxfast``), shown by --help.
EXAMPLES = {
    "tokens": "ctxfast tokens README.md --encoding o200k_base",
    "index": "ctxfast index .",
    "index-many": "ctxfast index-many trees.txt --workers 2 --engine local",
    "bench": "ctxfast bench tokens --repeat 5",
    "manifest": "ctxfast manifest . --json",
    "mcp": "ctxfast mcp /path/to/repo",
    "compose": 'ctxfast compose . "fix the off-by-one in next_page" --ceiling 8000',
    "retrieve": 'ctxfast retrieve . "KeyError in parse_args" --error traceback.txt',
    "map": 'ctxfast map . --query "database connections" --tokens 512',
    "graph": "ctxfast graph . pkg.db.connect",
    "status": "ctxfast status .",
    "eval": "ctxfast eval retrieval bench.jsonl --trees trees/ --limit 20",
    "eval retrieval": "ctxfast eval retrieval bench.jsonl --trees trees/ --limit 20",
    "eval recon": "ctxfast eval recon bench.jsonl --trees trees/",
    "eval construct": "ctxfast eval construct bench.jsonl --trees trees/ --limit 20",
    "eval all": "ctxfast eval all bench.jsonl --pypi-sources sources.json --out results.json",
    "eval fidelity": "ctxfast eval fidelity path/to/repo --sample 200",
    "eval compare": "ctxfast eval compare current.json candidate.json",
    "eval mine": "ctxfast eval mine --mirror-root /work/.mirror --dev-set --out langs_dev.jsonl",
}


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Help that shows each option's default (when it has a meaningful one)."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help or ""
        default = action.default
        shown = default not in (None, False, argparse.SUPPRESS) and default != []
        if shown and "%(default)" not in text and (action.option_strings or action.nargs == "?"):
            text += " (default: %(default)s)"
        return text


class Parser(argparse.ArgumentParser):
    """Every ctxfast (sub)parser: defaults in --help and the command's example below it."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", HelpFormatter)
        super().__init__(*args, **kwargs)
        example = EXAMPLES.get(self.prog.removeprefix("ctxfast").strip())
        if example and self.epilog is None:
            self.epilog = f"example:\n  {example}"


def _read_input(path: str) -> str:
    if path == "-":
        return sys.stdin.read()
    with open(path, encoding="utf-8", errors="replace") as fh:
        return fh.read()


def _cmd_tokens(args: argparse.Namespace) -> ExitStatus:
    from ctxfast.tokens import count_tokens

    print(count_tokens(_read_input(args.file), args.encoding))
    return ExitStatus.SUCCESS


def _cmd_bench(args: argparse.Namespace) -> int:
    from ctxfast.bench import run_bench

    return run_bench(args.target, repeat=args.repeat)


def _cmd_manifest(args: argparse.Namespace) -> ExitStatus:
    from ctxfast.recon.manifest import build_manifest, render_manifest_json
    from ctxfast.recon.manifest.summary import render_summary

    manifest = build_manifest(args.path)
    print(render_manifest_json(manifest) if args.json else render_summary(manifest))
    return ExitStatus.SUCCESS


def _cmd_index(args: argparse.Namespace) -> ExitStatus:
    import dataclasses
    import json
    import time

    from ctxfast.progress import IndexBar
    from ctxfast.repository import Repository

    repo = Repository(args.path, args.index_dir)
    t0 = time.perf_counter()
    with IndexBar(f"indexing {repo.root.name}") as bar:
        stats = repo.index(progress=bar)
    if sys.stderr.isatty():
        print(f"done in {time.perf_counter() - t0:.2f}s", file=sys.stderr)
    if args.json:
        print(json.dumps(dataclasses.asdict(stats), indent=2))
    else:
        print(
            f"files seen {stats.files_seen} · parsed {stats.files_parsed} · removed "
            f"{stats.files_removed} · nodes {stats.nodes} · edges {stats.edges} · "
            f"{stats.seconds:.3f}s · errors {len(stats.errors)}"
        )
        for e in stats.errors:
            print(f"  {e['path']}: {e['error']}")
    if not stats.files_seen:
        return warn(f"no source files found under {repo.root}")
    return ExitStatus.SUCCESS


def _cmd_mcp(args: argparse.Namespace) -> ExitStatus:
    from pathlib import Path

    from ctxfast.mcp_server import serve

    serve(
        Path(args.path),
        Path(args.index_dir) if args.index_dir else None,
        http=args.http,
        host=args.host,
        port=args.port,
    )
    return ExitStatus.SUCCESS


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

    p = sub.add_parser("tokens", help="print the exact token count of a file or stdin")
    p.add_argument("file", nargs="?", default="-", help="file to count, or - for stdin")
    p.add_argument("--encoding", default="cl100k_base", help="cl100k_base, o200k_base or approx")
    p.set_defaults(func=_cmd_tokens)

    p = sub.add_parser("index", help="build or refresh the code graph of a repository")
    p.add_argument("path", help="repository root")
    p.add_argument("--index-dir", default=None, help="index directory (default PATH/.ctxfast)")
    p.add_argument("--json", action="store_true", help="print the stats as JSON")
    p.set_defaults(func=_cmd_index)

    p = sub.add_parser("bench", help="time ctxfast against the library it replaces")
    p.add_argument("target", choices=["tokens"], help="what to benchmark")
    p.add_argument("--repeat", type=int, default=3, help="timed repetitions (best is kept)")
    p.set_defaults(func=_cmd_bench)

    p = sub.add_parser("manifest", help="print the evidence-backed repository manifest")
    p.add_argument("path", help="repository root")
    p.add_argument("--json", action="store_true", help="print the full manifest as JSON")
    p.set_defaults(func=_cmd_manifest)

    from ctxfast.mcp_server import DEFAULT_HTTP_HOST, DEFAULT_HTTP_PORT

    p = sub.add_parser("mcp", help="serve ctxfast's tools to an agent over MCP (stdio)")
    p.add_argument("path", nargs="?", default=".", help="repository root the tools default to")
    p.add_argument("--index-dir", default=None, help="index directory (default PATH/.ctxfast)")
    p.add_argument("--http", action="store_true", help="serve streamable HTTP instead of stdio")
    p.add_argument("--host", default=DEFAULT_HTTP_HOST, help="HTTP address")
    p.add_argument("--port", type=int, default=DEFAULT_HTTP_PORT, help="HTTP port")
    p.set_defaults(func=_cmd_mcp)

    from ctxfast.batch.cli import register as register_batch
    from ctxfast.cli.repo import register as register_repo
    from ctxfast.eval.cli import register as register_eval

    register_repo(sub)
    register_batch(sub)

    register_eval(sub)
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
        status = int(args.func(args))
        sys.stdout.flush()
        return status
    except KeyboardInterrupt:
        print("ctxfast: interrupted", file=sys.stderr)
        return ExitStatus.INTERRUPTED
    except BrokenPipeError:
        _quiet_stdout()
        return ExitStatus.BROKEN_PIPE
    except (CtxfastError, OSError) as exc:
        print(f"ctxfast: error: {exc}", file=sys.stderr)
        return ExitStatus.ERROR
