"""``ctxfast status``: the index state of a repository (also what the MCP ``status`` tool
returns, through :func:`index_status`)."""

from __future__ import annotations

import argparse
import json
import time
from collections import Counter
from typing import Any

from ctxfast.cli.common import add_repository_arguments
from ctxfast.exitstatus import ExitStatus
from ctxfast.repository import Repository
from ctxfast.state_store import STATE_DIRNAME


def index_status(repo: Repository) -> dict[str, Any]:
    """The index state of ``repo`` as plain data (what ``ctxfast status`` prints)."""
    out: dict[str, Any] = {"root": str(repo.root), "index_dir": str(repo.index_dir)}
    sizes: dict[str, int | None] = {}
    for name in ("recon.db", "api.db"):
        p = repo.index_dir / name
        sizes[name] = p.stat().st_size if p.exists() else None
    # The derived state (retrieval's pieces, the repo map's file graph and ranks), together.
    state = repo.index_dir / STATE_DIRNAME
    pieces = [p for p in state.iterdir() if p.is_file()] if state.is_dir() else None
    sizes[STATE_DIRNAME] = sum(p.stat().st_size for p in pieces) if pieces is not None else None
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


def run(args: argparse.Namespace) -> ExitStatus:
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
    p = sub.add_parser("status", help="print the index state of a repository")
    add_repository_arguments(p)
    p.add_argument("--json", action="store_true", help="print the state as JSON")
    p.set_defaults(func=run)
