"""Human-readable rendering of a manifest for ``ctxfast manifest PATH`` (one claim per line,
each followed by its evidence pointer, so a reader can check it)."""

from __future__ import annotations

from typing import Any


def render_summary(manifest: dict[str, Any]) -> str:
    out = [f"repository: {manifest['repo']}"]
    pm = manifest["package_manager"]
    out.append(
        f"package manager: {pm['name']} [{pm['evidence']}]"
        if pm["name"]
        else "package manager: (none evidenced)"
    )
    sections = (
        ("languages", lambda x: f"{x['name']} {x['version_hint'] or ''}".rstrip()),
        ("runners", lambda x: f"{x['name']}: {x['command']}"),
        ("tests", lambda x: f"{x['framework'] or '?'}: {x['command']}"),
        ("entry-points", lambda x: f"{x['name']} ({x['kind']})"),
        ("components", lambda x: f"{x['path']} ({x['kind']})"),
        ("dependencies", lambda x: f"{x['name']} {x['version'] or ''} ({x['kind']})"),
        ("external-packages", lambda x: x["path"]),
    )
    for key, fmt in sections:
        items = manifest[key]
        out.append(f"{key} ({len(items)}):")
        out.extend(f"  {fmt(x)}  [{x['evidence']}]" for x in items)
    layout = manifest["layout"]
    evs = layout.get("evidence_list") or [layout["evidence"]] * len(layout["conventions"])
    out.append(f"layout ({len(layout['conventions'])}):")
    out.extend(f"  {c}  [{e}]" for c, e in zip(layout["conventions"], evs, strict=False))
    out.append(f"errors ({len(manifest['errors'])}):")
    out.extend(
        f"  {e['file']}{':' + str(e['line']) if e['line'] else ''}: {e['reason']}"
        for e in manifest["errors"]
    )
    return "\n".join(out)


__all__ = ["render_summary"]
