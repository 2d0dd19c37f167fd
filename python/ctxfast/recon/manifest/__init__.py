"""The repository manifest: one evidence-backed JSON per repository.

Every claim carries a ``file:line`` pointer to the line that states it; runners are
canonicalized Makefile/justfile > CI ``run:`` steps > package-manager conventions and omitted
when nothing evidences them; unparseable files land in ``errors``; the rendering fits 5,000
tokens.
"""

from typing import Any

from ctxfast.recon.manifest._common import ManifestConfig
from ctxfast.recon.manifest.build import (
    build_manifest,
    enforce_cap,
    render_manifest_json,
)
from ctxfast.recon.manifest.header import manifest_header, render_manifest_header

SCHEMA_RESOURCE = "manifest.schema.json"


def load_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) every manifest validates against."""
    import json
    from importlib import resources

    text = resources.files("ctxfast.recon").joinpath(SCHEMA_RESOURCE).read_text("utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema


__all__ = [
    "ManifestConfig",
    "build_manifest",
    "enforce_cap",
    "load_schema",
    "manifest_header",
    "render_manifest_header",
    "render_manifest_json",
]
