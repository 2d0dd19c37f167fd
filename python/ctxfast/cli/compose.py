"""``ctxfast compose``: the budgeted context window for a task, as text or JSON."""

from __future__ import annotations

import argparse
from typing import Any

from ctxfast.cli.common import add_repository_arguments, open_repo, read_input, status_line
from ctxfast.cli.parser import add_task_argument, read_task
from ctxfast.errors import InvalidArgumentError
from ctxfast.exitstatus import ExitStatus, warn


def run(args: argparse.Namespace) -> ExitStatus:
    from ctxfast.construct.compose import compose
    from ctxfast.construct.ranker import OpenAICompatibleRanker

    if bool(args.ranker_url) != bool(args.ranker_model):
        raise InvalidArgumentError("--ranker-url and --ranker-model must be given together")
    ranker = (
        OpenAICompatibleRanker(args.ranker_url, args.ranker_model, args.ranker_key_env)
        if args.ranker_url
        else None
    )
    task = read_task(args.task)
    repo = open_repo(args)
    ctx = compose(
        repo,
        task,
        patch=read_input(args.patch) if args.patch else None,
        errors=[read_input(p) for p in args.error],
        tracebacks=[read_input(p) for p in args.traceback],
        test_outputs=[read_input(p) for p in args.test_output],
        ceiling=args.ceiling,
        target=args.target,
        ranker=ranker,
        refresh=False,
    )
    status_line(f"{ctx.token_count}/{ctx.ceiling} tokens · {ctx.model_calls} model calls")
    print(ctx.to_json() if args.json else ctx.render())
    if not ctx.text.strip():
        return warn(f"nothing fits in --ceiling {args.ceiling} tokens")
    if not any(e.file for e in ctx.window):
        return warn(f"no code fits in --ceiling {args.ceiling} tokens, only the task and plan")
    if ctx.stable_core_only:
        return warn(f"--ceiling {args.ceiling} holds only the window's core; code was left out")
    return ExitStatus.SUCCESS


def register(sub: Any) -> None:
    p = sub.add_parser("compose", help="build the budgeted context window for a task")
    add_repository_arguments(p)
    add_task_argument(p)
    p.add_argument("--error", action="append", default=[], help="file with an error message")
    p.add_argument("--traceback", action="append", default=[], help="file with a traceback")
    p.add_argument("--patch", default=None, help="file with the current working diff")
    p.add_argument("--test-output", action="append", default=[], help="file with test output")
    p.add_argument("--ceiling", type=int, default=24_000, help="token ceiling of the window")
    p.add_argument(
        "--target",
        type=int,
        default=None,
        metavar="N",
        help="tokens the window fills toward with the next-best code, at most --ceiling "
        "(default: 8000, or the ceiling when smaller)",
    )
    p.add_argument("--json", action="store_true", help="print the window with its logs as JSON")
    p.add_argument("--ranker-url", default=None, help="OpenAI-compatible base URL (…/v1)")
    p.add_argument("--ranker-model", default=None, help="model name for the ranking call")
    p.add_argument("--ranker-key-env", default="OPENAI_API_KEY", help="env var with the API key")
    p.set_defaults(func=run)
