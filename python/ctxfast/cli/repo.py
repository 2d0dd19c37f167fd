"""Repository subcommands of the ``ctxfast`` CLI: compose, retrieve, map, graph, status.

Each one opens a :class:`~ctxfast.recon.Repository` and refreshes its index first (a full
build on first use), so ``ctxfast compose PATH "task"`` works on a fresh checkout and always
sees the files as they are on disk. Status/progress lines go to
stderr and only when stderr is a terminal: stdout carries exactly the requested output.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from collections import Counter
from typing import Any

from ctxfast.errors import InvalidArgumentError
from ctxfast.exitstatus import ExitStatus, warn
from ctxfast.progress import IndexBar
from ctxfast.repository import Repository


def _read(path: str) -> str:
    if path == "-":
        return sys.stdin.read()
    with open(path, encoding="utf-8", errors="replace") as fh:
        return fh.read()


def _status(msg: str) -> None:
    if sys.stderr.isatty():
        print(msg, file=sys.stderr, flush=True)


def open_repo(args: argparse.Namespace) -> Repository:
    """The repository of ``args.path`` with its index refreshed (built on first use, with a
    progress bar on a terminal); the command's own calls then pass ``refresh=False``."""
    repo = Repository(args.path, getattr(args, "index_dir", None))
    first = not repo.graph_db.exists()
    t0 = time.perf_counter()
    with IndexBar(f"indexing {repo.root.name}" + (" (first use)" if first else "")) as bar:
        stats = repo.index(progress=bar)
    if first or stats.files_parsed or stats.files_removed:
        _status(
            f"indexed {stats.files_parsed} files, {stats.nodes} nodes, {stats.edges} edges "
            f"in {time.perf_counter() - t0:.2f}s"
        )
    return repo


def _cmd_compose(args: argparse.Namespace) -> ExitStatus:
    from ctxfast.construct.compose import compose
    from ctxfast.construct.ranker import OpenAICompatibleRanker

    if bool(args.ranker_url) != bool(args.ranker_model):
        raise InvalidArgumentError("--ranker-url and --ranker-model must be given together")
    ranker = (
        OpenAICompatibleRanker(args.ranker_url, args.ranker_model, args.ranker_key_env)
        if args.ranker_url
        else None
    )
    repo = open_repo(args)
    ctx = compose(
        repo,
        args.task,
        patch=_read(args.patch) if args.patch else None,
        errors=[_read(p) for p in args.error],
        tracebacks=[_read(p) for p in args.traceback],
        test_outputs=[_read(p) for p in args.test_output],
        ceiling=args.ceiling,
        ranker=ranker,
        refresh=False,
    )
    _status(f"{ctx.token_count}/{ctx.ceiling} tokens · {ctx.model_calls} model calls")
    print(ctx.to_json() if args.json else ctx.render())
    if not ctx.text.strip():
        return warn(f"nothing fits in --ceiling {args.ceiling} tokens")
    if not any(e.file for e in ctx.window):
        return warn(f"no code fits in --ceiling {args.ceiling} tokens, only the task and plan")
    if ctx.stable_core_only:
        return warn(f"--ceiling {args.ceiling} holds only the window's core; code was left out")
    return ExitStatus.SUCCESS


def _cmd_retrieve(args: argparse.Namespace) -> ExitStatus:
    repo = open_repo(args)
    error = "\n\n".join(_read(p) for p in args.error) or None
    result = repo.retrieve(
        args.task, error=error, test=args.test, max_tokens=args.tokens, refresh=False
    )
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


def _cmd_map(args: argparse.Namespace) -> ExitStatus:
    repo = open_repo(args)
    text = repo.repo_map(args.query, max_tokens=args.tokens, refresh=False)
    print(text)
    if not text.strip():
        return warn(f"the map is empty: no indexed definitions, or --tokens {args.tokens} too few")
    return ExitStatus.SUCCESS


def _cmd_graph(args: argparse.Namespace) -> ExitStatus:
    repo = open_repo(args)
    ego = repo.ego_graph(args.symbol, refresh=False)
    if args.json:
        payload = {
            "root": {**dataclasses.asdict(ego.root), "signature": ego.root_signature},
            "edges": [
                {
                    "type": e.type,
                    "direction": e.direction,
                    "site": f"{e.site_file}:{e.site_line}",
                    "target": e.target.qualname,
                    "target_kind": e.target.kind,
                    "target_location": f"{e.target.file}:{e.target.line}",
                    "target_signature": e.target_signature,
                }
                for e in ego.edges
            ],
            "text": ego.render(),
        }
        print(json.dumps(payload, indent=1, ensure_ascii=False))
    else:
        print(ego.render())
    return ExitStatus.SUCCESS


def index_status(repo: Repository) -> dict[str, Any]:
    """The index state of ``repo`` as plain data (what ``ctxfast status`` prints)."""
    out: dict[str, Any] = {"root": str(repo.root), "index_dir": str(repo.index_dir)}
    sizes = {}
    for name in ("recon.db", "api.db", "repomap.json"):
        p = repo.index_dir / name
        sizes[name] = p.stat().st_size if p.exists() else None
    out["sizes_bytes"] = sizes
    out["indexed"] = repo.graph_db.exists()
    if out["indexed"]:
        graph = repo.graph
        files = graph.files()
        out["files"] = {
            "total": len(files),
            "by_language": dict(sorted(Counter(f.language or "-" for f in files).items())),
            "skipped": [
                {"path": f.path, "reason": f.parse_error} for f in files if f.sha256 is None
            ],
            "parse_errors": [
                {"path": f.path, "error": f.parse_error}
                for f in files
                if f.sha256 is not None and f.parse_error
            ],
        }
        meta = graph.meta()
        refresh = meta.get("last_refresh")
        out["last_refresh"] = float(refresh) if refresh else None
        out["last_refresh_utc"] = (
            time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(float(refresh))) if refresh else None
        )
        counts = graph.counts()
        out["nodes"] = sum(v for k, v in counts.items() if k.startswith("nodes."))
        out["edges"] = sum(v for k, v in counts.items() if k.startswith("edges."))
        out["counts"] = counts
    out["manifest_languages"] = [
        lang.get("name") for lang in repo.manifest().get("languages") or []
    ]
    return out


def _cmd_status(args: argparse.Namespace) -> ExitStatus:
    st = index_status(Repository(args.path, args.index_dir))
    if args.json:
        print(json.dumps(st, indent=1, sort_keys=True))
        return ExitStatus.SUCCESS
    print(f"repository  {st['root']}")
    print(f"index dir   {st['index_dir']}")
    for name, size in st["sizes_bytes"].items():
        print(f"  {name:<13}{'absent' if size is None else f'{size:,} bytes'}")
    if not st["indexed"]:
        print("not indexed (run `ctxfast index PATH`, or any command that indexes on first use)")
    else:
        f = st["files"]
        langs = ", ".join(f"{k} {v}" for k, v in f["by_language"].items())
        print(f"files       {f['total']} ({langs})")
        print(f"skipped     {len(f['skipped'])} · parse errors {len(f['parse_errors'])}")
        for e in f["skipped"]:  # the reason says "skipped: …" itself
            print(f"  {e['path']}: {e['reason']}")
        for e in f["parse_errors"]:
            print(f"  parse error {e['path']}: {e['error']}")
        print(f"graph       {st['nodes']} nodes · {st['edges']} edges")
        print(f"refreshed   {st['last_refresh_utc'] or 'unknown'}")
    print(f"languages   {', '.join(st['manifest_languages']) or '-'} (manifest)")
    return ExitStatus.SUCCESS


def register(sub: Any) -> None:
    """Adds the repository subcommands to the top-level parser's subparsers."""

    def common(p: argparse.ArgumentParser) -> None:
        p.add_argument("path", help="repository root")
        p.add_argument("--index-dir", default=None, help="index directory (default PATH/.ctxfast)")

    p = sub.add_parser("compose", help="build the budgeted context window for a task")
    common(p)
    p.add_argument("task", help="the task text (issue, instruction)")
    p.add_argument("--error", action="append", default=[], help="file with an error message")
    p.add_argument("--traceback", action="append", default=[], help="file with a traceback")
    p.add_argument("--patch", default=None, help="file with the current working diff")
    p.add_argument("--test-output", action="append", default=[], help="file with test output")
    p.add_argument("--ceiling", type=int, default=24_000, help="token ceiling of the window")
    p.add_argument("--json", action="store_true", help="print the window with its logs as JSON")
    p.add_argument("--ranker-url", default=None, help="OpenAI-compatible base URL (…/v1)")
    p.add_argument("--ranker-model", default=None, help="model name for the ranking call")
    p.add_argument("--ranker-key-env", default="OPENAI_API_KEY", help="env var with the API key")
    p.set_defaults(func=_cmd_compose)

    p = sub.add_parser("retrieve", help="find the code a task (and its error) points at")
    common(p)
    p.add_argument("task", help="the task text")
    p.add_argument("--error", action="append", default=[], help="file with an error/traceback")
    p.add_argument("--test", default=None, help="id of the failing test")
    p.add_argument("--tokens", type=int, default=4000, help="token cap of the slice")
    p.add_argument("--json", action="store_true", help="query, candidates, text, token_count")
    p.set_defaults(func=_cmd_retrieve)

    p = sub.add_parser("map", help="print the ranked repository map")
    common(p)
    p.add_argument("--query", default=None, help="personalise the ranking to this text")
    p.add_argument("--tokens", type=int, default=1024, help="token budget of the map")
    p.set_defaults(func=_cmd_map)

    p = sub.add_parser("graph", help="print a definition with what it calls and what calls it")
    common(p)
    p.add_argument("symbol", help="qualname or name of a definition")
    p.add_argument("--json", action="store_true", help="print edges as JSON")
    p.set_defaults(func=_cmd_graph)

    p = sub.add_parser("status", help="print the index state of a repository")
    common(p)
    p.add_argument("--json", action="store_true", help="print the state as JSON")
    p.set_defaults(func=_cmd_status)


__all__ = ["index_status", "open_repo", "register"]
