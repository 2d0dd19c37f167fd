"""``Makefile`` and ``justfile`` targets: the highest-priority runner source.

Each target becomes a runner whose command is its recipe (prefix characters ``@ - +``
stripped, lines joined with ``&&``); variables are left unexpanded rather than guessed."""

from __future__ import annotations

import re

from ctxfast.recon.manifest._common import Collector, Source

_ASSIGN = re.compile(r"^\s*(export\s+)?[A-Za-z0-9_.-]+\s*(\?|::|:|!|\+)?=")
_MAKE_TARGET = re.compile(
    r"^([A-Za-z0-9_][A-Za-z0-9_./-]*(?:[ \t]+[A-Za-z0-9_][A-Za-z0-9_./-]*)*)\s*::?(.*)$"
)
_JUST_RECIPE = re.compile(r"^@?([A-Za-z_][A-Za-z0-9_-]*)((?:\s+[^:=]*)?):(?!=)(.*)$")


def _clean(cmd: str) -> str:
    return cmd.lstrip("@-+ \t").strip()


def _emit(
    col: Collector, src: Source, targets: list[tuple[str, int, list[tuple[str, int]]]], tool: str
) -> None:
    for name, line, recipe in targets:
        canonical = canonical_target(col, name)
        command = " && ".join(c for c, _ in recipe) or f"{tool} {name}"
        evidence = src.ev(recipe[0][1] if recipe else line)
        col.runner(0, canonical, name, command, evidence)


def canonical_target(col: Collector, name: str) -> str | None:
    """``build``/``test``/``lint`` for a target named or prefixed so (``check`` → lint)."""
    for canonical, pattern in col.config.target_patterns:
        if re.search(pattern, name):
            return canonical
    return None


def parse_makefile(col: Collector, src: Source) -> None:
    targets: list[tuple[str, int, list[tuple[str, int]]]] = []
    current: list[tuple[str, int]] | None = None
    pending = ""
    pending_line = 0
    for i, raw in enumerate(src.lines, start=1):
        if raw.startswith("\t") and current is not None:
            body = raw[1:]
            if pending:
                body, start = pending + " " + body.strip(), pending_line
            else:
                start = i
            if body.rstrip().endswith("\\"):
                pending, pending_line = body.rstrip()[:-1].strip(), start
                continue
            pending = ""
            cmd = _clean(body)
            if cmd and not cmd.startswith("#"):
                current.append((cmd, start))
            continue
        if not raw.strip() or raw.lstrip().startswith("#"):
            continue
        current = None
        if _ASSIGN.match(raw) or raw.startswith((" ", "\t")):
            continue
        m = _MAKE_TARGET.match(raw)
        if not m or m.group(2).startswith("="):
            continue
        recipe: list[tuple[str, int]] = []
        inline = m.group(2).split(";", 1)
        if len(inline) == 2 and _clean(inline[1]):
            recipe.append((_clean(inline[1]), i))
        for name in m.group(1).split():
            if not name.startswith(".") and "%" not in name:
                targets.append((name, i, recipe))
        current = recipe
    _emit(col, src, targets, "make")


def parse_justfile(col: Collector, src: Source) -> None:
    targets: list[tuple[str, int, list[tuple[str, int]]]] = []
    current: list[tuple[str, int]] | None = None
    for i, raw in enumerate(src.lines, start=1):
        if raw[:1] in (" ", "\t") and current is not None:
            cmd = _clean(raw)
            if cmd and not cmd.startswith("#"):
                current.append((cmd, i))
            continue
        current = None
        s = raw.strip()
        if not s or s.startswith(("#", "[")) or re.match(r"^(set|alias|export|import|mod)\s", s):
            continue
        if ":=" in s:
            continue  # variable assignment
        m = _JUST_RECIPE.match(s)
        if m:
            recipe: list[tuple[str, int]] = []
            targets.append((m.group(1), i, recipe))
            current = recipe
    _emit(col, src, targets, "just")
