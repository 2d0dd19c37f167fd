"""``ctxfast manifest``: the evidence-backed repository manifest, as a summary or JSON."""

from __future__ import annotations

import argparse
from typing import Any

from ctxfast.exitstatus import ExitStatus


def run(args: argparse.Namespace) -> ExitStatus:
    from ctxfast.recon.manifest import build_manifest, render_manifest_json
    from ctxfast.recon.manifest.summary import render_summary

    manifest = build_manifest(args.path)
    print(render_manifest_json(manifest) if args.json else render_summary(manifest))
    return ExitStatus.SUCCESS


def register(sub: Any) -> None:
    p = sub.add_parser("manifest", help="print the evidence-backed repository manifest")
    p.add_argument("path", help="repository root")
    p.add_argument("--json", action="store_true", help="print the full manifest as JSON")
    p.set_defaults(func=run)
