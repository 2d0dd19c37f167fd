"""``ctxfast retrieve``: the ranked slice of code a task (and its error) points at."""

from __future__ import annotations

import argparse
import json
from typing import Any

from ctxfast.cli.common import add_repository_arguments, open_repo, read_input
from ctxfast.cli.parser import add_task_argument, read_task
from ctxfast.exitstatus import ExitStatus, warn


def run(args: argparse.Namespace) -> ExitStatus:
    task = read_task(args.task)
    repo = open_repo(args)
    error = "\n\n".join(read_input(p) for p in args.error) or None
    result = repo.retrieve(task, error=error, test=args.test, max_tokens=args.tokens, refresh=False)
    if args.json:
        payload = {
            "query": result.query.to_dict(),
            "candidates": [c.to_dict() for c in result.candidates],
            "text": result.render(),
            "token_count": result.token_count,
        }
        print(json.dumps(payload, indent=1, ensure_ascii=False))
    else:
        print(result.render())
    if not result.candidates:
        return warn("nothing in the repository matched the task")
    if not result.text.strip():
        return warn(f"code matched, but none of it fits in --tokens {args.tokens}")
    return ExitStatus.SUCCESS


def register(sub: Any) -> None:
    p = sub.add_parser("retrieve", help="find the code a task (and its error) points at")
    add_repository_arguments(p)
    add_task_argument(p)
    p.add_argument("--error", action="append", default=[], help="file with an error/traceback")
    p.add_argument("--test", default=None, help="id of the failing test")
    p.add_argument("--tokens", type=int, default=4000, help="token cap of the slice")
    p.add_argument("--json", action="store_true", help="query, candidates, text, token_count")
    p.set_defaults(func=run)
