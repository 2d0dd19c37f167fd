"""``ctxfast index``: build or refresh the code graph of a repository, and print what it did."""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from typing import Any

from ctxfast.exitstatus import ExitStatus, warn


def run(args: argparse.Namespace) -> ExitStatus:
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


def register(sub: Any) -> None:
    p = sub.add_parser("index", help="build or refresh the code graph of a repository")
    p.add_argument("path", help="repository root")
    p.add_argument("--index-dir", default=None, help="index directory (default PATH/.ctxfast)")
    p.add_argument("--json", action="store_true", help="print the stats as JSON")
    p.set_defaults(func=run)
