"""The ≤500-token manifest header (the no-retrieval payload and the injection's first line).

Only facts already in the manifest appear; an absent runner is omitted, never filled in."""

from __future__ import annotations

from typing import Any

from ctxfast.tokens import count_tokens, fits, truncate_to_tokens

MAX_HEADER_LANGUAGES = 8


def manifest_header(manifest: dict[str, Any]) -> dict[str, Any]:
    """The ``manifest_header`` object: languages, package manager, build/test/lint."""
    runners = {r["name"]: r["command"] for r in manifest.get("runners", [])}
    return {
        "languages": [lang["name"] for lang in manifest.get("languages", [])],
        "package_manager": (manifest.get("package_manager") or {}).get("name"),
        "build": runners.get("build"),
        "test": runners.get("test"),
        "lint": runners.get("lint"),
    }


def render_manifest_header(
    manifest: dict[str, Any], max_tokens: int = 500, encoding: str = "cl100k_base"
) -> str:
    """One line in the injection's shape
    (``languages: python · package_manager: poetry · build: `…` ``), exactly within
    ``max_tokens``: long commands are shortened first, then the line itself."""
    if max_tokens <= 0:
        return ""
    head = manifest_header(manifest)

    def line(cmd_cap: int | None) -> str:
        parts = []
        langs = head["languages"][:MAX_HEADER_LANGUAGES]
        if langs:
            more = len(head["languages"]) - len(langs)
            parts.append("languages: " + ", ".join(langs) + (f" (+{more})" if more > 0 else ""))
        if head["package_manager"]:
            parts.append(f"package_manager: {head['package_manager']}")
        for key in ("build", "test", "lint"):
            cmd = head[key]
            if cmd:
                if cmd_cap is not None:
                    cmd = truncate_to_tokens(cmd, cmd_cap, encoding=encoding, cut="token")
                parts.append(f"{key}: `{cmd}`")
        return " · ".join(parts) if parts else "no manifest evidence found"

    for cap in (None, 96, 48, 24, 12):
        text = line(cap)
        if fits(text, max_tokens, encoding):
            return text
    text = truncate_to_tokens(line(12), max_tokens, encoding=encoding, cut="token")
    assert count_tokens(text, encoding) <= max_tokens
    return text


__all__ = ["manifest_header", "render_manifest_header"]
