"""``ctxfast graph``: one definition with what it calls and what calls it."""

from __future__ import annotations

import argparse
import json
from typing import Any

from ctxfast.cli.common import add_repository_arguments, open_repo
from ctxfast.exitstatus import ExitStatus


def run(args: argparse.Namespace) -> ExitStatus:
    repo = open_repo(args)
    ego = repo.ego_graph(args.symbol, refresh=False)
    if args.json:
        payload = {
            "root": {**ego.root._asdict(), "signature": ego.root_signature},
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


def register(sub: Any) -> None:
    p = sub.add_parser("graph", help="print a definition with what it calls and what calls it")
    add_repository_arguments(p)
    p.add_argument("symbol", help="qualname or name of a definition")
    p.add_argument("--json", action="store_true", help="print edges as JSON")
    p.set_defaults(func=run)
