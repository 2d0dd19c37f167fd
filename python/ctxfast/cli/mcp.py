"""``ctxfast mcp``: serve ctxfast's tools to an agent over the Model Context Protocol."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from ctxfast.exitstatus import ExitStatus


def run(args: argparse.Namespace) -> ExitStatus:
    from ctxfast.mcp_server import serve

    serve(
        Path(args.path),
        Path(args.index_dir) if args.index_dir else None,
        http=args.http,
        host=args.host,
        port=args.port,
    )
    return ExitStatus.SUCCESS


def register(sub: Any) -> None:
    from ctxfast.mcp_server import DEFAULT_HTTP_HOST, DEFAULT_HTTP_PORT

    p = sub.add_parser("mcp", help="serve ctxfast's tools to an agent over MCP (stdio)")
    p.add_argument("path", nargs="?", default=".", help="repository root the tools default to")
    p.add_argument("--index-dir", default=None, help="index directory (default PATH/.ctxfast)")
    p.add_argument("--http", action="store_true", help="serve streamable HTTP instead of stdio")
    p.add_argument("--host", default=DEFAULT_HTTP_HOST, help="HTTP address")
    p.add_argument("--port", type=int, default=DEFAULT_HTTP_PORT, help="HTTP port")
    p.set_defaults(func=run)
