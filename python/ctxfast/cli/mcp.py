"""``ctxfast mcp``: serve ctxfast's tools to an agent over the Model Context Protocol."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from ctxfast.exitstatus import ExitStatus

DESCRIPTION = """\
Serves ctxfast's tools to an agent over MCP, on stdin/stdout\n(streamable HTTP with --http).

Roots: a tool call may name a `root`; it must be PATH, the directory the server
was started in, a --root, or a directory inside one of them (links resolved).
Anything else, such as /etc or /proc/self, is refused.

HTTP: every request must send `Authorization: Bearer <token>`. The token comes
from the {env} environment variable, or is generated and printed once
to stderr. Only loopback addresses (127.0.0.1, ::1, localhost) are served
unless --allow-remote is given."""


def run(args: argparse.Namespace) -> ExitStatus:
    from ctxfast.mcp_server import serve

    serve(
        Path(args.path),
        Path(args.index_dir) if args.index_dir else None,
        roots=[Path.cwd(), *args.root],
        http=args.http,
        host=args.host,
        port=args.port,
        allow_remote=args.allow_remote,
        request_timeout_s=args.request_timeout,
        max_roots=args.max_roots,
    )
    return ExitStatus.SUCCESS


def register(sub: Any) -> None:
    from ctxfast.mcp_server import (
        DEFAULT_HTTP_HOST,
        DEFAULT_HTTP_PORT,
        DEFAULT_MAX_ROOTS,
        DEFAULT_REQUEST_TIMEOUT_S,
        TOKEN_ENV,
    )

    p = sub.add_parser(
        "mcp",
        help="serve ctxfast's tools to an agent over MCP (stdio)",
        description=DESCRIPTION.format(env=TOKEN_ENV),
    )
    p.add_argument("path", nargs="?", default=".", help="repository root the tools default to")
    p.add_argument("--index-dir", default=None, help="index directory (default PATH/.ctxfast)")
    p.add_argument(
        "--root",
        action="append",
        default=[],
        metavar="DIR",
        help="also allow tool calls on DIR and the directories inside it (repeatable)",
    )
    p.add_argument("--http", action="store_true", help="serve streamable HTTP instead of stdio")
    p.add_argument("--host", default=DEFAULT_HTTP_HOST, help="HTTP address")
    p.add_argument("--port", type=int, default=DEFAULT_HTTP_PORT, help="HTTP port")
    p.add_argument(
        "--allow-remote",
        action="store_true",
        help=f"serve a non-loopback --host (clients still need the {TOKEN_ENV} bearer token)",
    )
    p.add_argument(
        "--request-timeout",
        type=float,
        default=DEFAULT_REQUEST_TIMEOUT_S,
        metavar="SECONDS",
        help="a tool call running longer returns an error",
    )
    p.add_argument(
        "--max-roots",
        type=int,
        default=DEFAULT_MAX_ROOTS,
        help="repositories kept in memory at once",
    )
    p.set_defaults(func=run)
