"""``ctxfast map``: the ranked repository map within a token budget."""

from __future__ import annotations

import argparse
from typing import Any

from ctxfast.cli.common import add_repository_arguments, open_repo
from ctxfast.exitstatus import ExitStatus, warn


def run(args: argparse.Namespace) -> ExitStatus:
    repo = open_repo(args)
    text = repo.repo_map(args.query, max_tokens=args.tokens, refresh=False)
    print(text)
    if not text.strip():
        return warn(f"the map is empty: no indexed definitions, or --tokens {args.tokens} too few")
    return ExitStatus.SUCCESS


def register(sub: Any) -> None:
    p = sub.add_parser("map", help="print the ranked repository map")
    add_repository_arguments(p)
    p.add_argument("--query", default=None, help="personalise the ranking to this text")
    p.add_argument("--tokens", type=int, default=1024, help="token budget of the map")
    p.set_defaults(func=run)
