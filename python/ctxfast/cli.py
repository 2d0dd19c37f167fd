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


def _cmd_manifest(args: argparse.Namespace) -> int:
    from ctxfast.recon.manifest import build_manifest, render_manifest_json
    from ctxfast.recon.manifest.summary import render_summary

    manifest = build_manifest(args.path)
    print(render_manifest_json(manifest) if args.json else render_summary(manifest))
    return 0


def _cmd_index(args: argparse.Namespace) -> int:
    import dataclasses
    import json
    import time

    from ctxfast.progress import IndexBar
    from ctxfast.recon import Repository

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
    return 0


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

    p = sub.add_parser("index", help="build or refresh the code graph of a repository")
    p.add_argument("path", help="repository root")
    p.add_argument("--index-dir", default=None, help="index directory (default PATH/.ctxfast)")
    p.add_argument("--json", action="store_true", help="print the stats as JSON")
    p.set_defaults(func=_cmd_index)

    p = sub.add_parser("bench", help="measure ctxfast against the real alternatives")
    p.add_argument("target", choices=["tokens"], help="what to benchmark")
    p.add_argument("--repeat", type=int, default=3, help="timed repetitions (best is kept)")
    p.set_defaults(func=_cmd_bench)

    p = sub.add_parser("manifest", help="print the evidence-backed repository manifest")
    p.add_argument("path", help="repository root")
    p.add_argument("--json", action="store_true", help="print the full manifest as JSON")
    p.set_defaults(func=_cmd_manifest)

    from ctxfast.batch.cli import register as register_batch
    from ctxfast.cli_repo import register as register_repo
    from ctxfast.eval.cli import register as register_eval

    register_repo(sub)
    register_batch(sub)

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
