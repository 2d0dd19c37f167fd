"""``ctxfast index-many LIST_FILE``: the command-line face of :func:`ctxfast.batch.index_many`."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from ctxfast.batch import (
    DEFAULT_THREADS_PER_WORKER,
    DEFAULT_WORKERS,
    ENGINES,
    index_many,
    read_list_file,
)


def _cmd_index_many(args: argparse.Namespace) -> int:
    trees = read_list_file(args.list_file, args.index_root)
    summary = index_many(
        trees,
        workers=args.workers,
        threads_per_worker=args.threads_per_worker,
        cache_dir=args.cache_dir,
        no_cache=args.no_cache,
        engine=args.engine,
        recheck=args.recheck,
        seed=not args.no_seed,
        tree_timeout_s=args.tree_timeout,
        ray_address=args.ray_address,
    )
    out = summary.to_json()
    text = json.dumps(out, indent=2)
    if args.summary:
        Path(args.summary).write_text(text + "\n")
    else:
        print(text)
    print(
        f"{out['indexed']} indexed ({out['seeded']} seeded) · {out['skipped']} skipped · "
        f"{out['failed']} failed · "
        f"{out['seconds']:.1f}s · {out['trees_per_minute']} trees/min",
        file=sys.stderr,
    )
    return 1 if out["failed"] else 0


def register(sub: Any) -> None:
    p = sub.add_parser("index-many", help="index many trees (resumable, local or Ray)")
    p.add_argument("list_file", help="trees, one per line: ROOT or ROOT<TAB>INDEX_DIR")
    p.add_argument(
        "--index-root",
        default=None,
        help="put indexes of trees listed without INDEX_DIR under this directory "
        "(default ROOT/.ctxfast)",
    )
    p.add_argument("--workers", type=int, default=DEFAULT_WORKERS, help="trees at a time")
    p.add_argument(
        "--threads-per-worker",
        type=int,
        default=DEFAULT_THREADS_PER_WORKER,
        help="Rust threads per tree",
    )
    p.add_argument("--cache-dir", default=None, help="parse cache (default: user cache dir)")
    p.add_argument("--no-cache", action="store_true", help="do not use the parse cache")
    p.add_argument("--engine", choices=ENGINES, default="local", help="where trees run")
    p.add_argument("--ray-address", default=None, help="ray.init(address=...) for --engine ray")
    p.add_argument("--recheck", action="store_true", help="refresh trees already indexed")
    p.add_argument(
        "--no-seed",
        action="store_true",
        help="build every new index cold instead of from the finished index sharing most files",
    )
    p.add_argument("--tree-timeout", type=float, default=None, help="seconds per tree")
    p.add_argument("--summary", default=None, help="write the JSON summary here, not stdout")
    p.set_defaults(func=_cmd_index_many)
