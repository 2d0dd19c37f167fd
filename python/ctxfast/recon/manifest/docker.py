"""``Dockerfile``: base-image languages, the final ``CMD``/``ENTRYPOINT`` command, and the
``WORKDIR`` module-layout hint."""

from __future__ import annotations

import json
import re

from ctxfast.recon.manifest._common import Collector, ManifestParseError, Source

#: Base-image repository name → language.
IMAGE_LANGUAGES = (
    (r"^(python|pypy)$", "python"),
    (r"^(node|bun|deno)$", "javascript"),
    (r"^(golang|go)$", "go"),
    (r"^rust$", "rust"),
    (r"^(openjdk|eclipse-temurin|amazoncorretto|maven|gradle)$", "java"),
    (r"^ruby$", "ruby"),
    (r"^php$", "php"),
)


def _logical_lines(src: Source) -> list[tuple[str, int]]:
    out: list[tuple[str, int]] = []
    pending, start = "", 0
    for i, raw in enumerate(src.lines, start=1):
        s = raw.strip()
        if not s or s.startswith("#"):
            continue
        if pending:
            s, ln = pending + " " + s, start
        else:
            ln = i
        if s.endswith("\\"):
            pending, start = s[:-1].strip(), ln
            continue
        pending = ""
        out.append((s, ln))
    return out


def parse_dockerfile(col: Collector, src: Source) -> None:
    lines = _logical_lines(src)
    if not any(re.match(r"^FROM\s", s, re.I) for s, _ in lines):
        raise ManifestParseError("unparseable: no FROM instruction")
    final: tuple[str, int] | None = None
    for s, ln in lines:
        instr, _, rest = s.partition(" ")
        instr = instr.upper()
        rest = rest.strip()
        if instr == "FROM":
            image = " ".join(w for w in rest.split() if not w.startswith("--")).split()[0]
            repo, _, tag = image.rpartition("/")[-1].partition(":")
            for pattern, lang in IMAGE_LANGUAGES:
                if re.match(pattern, repo):
                    ver = re.match(r"^\d+(\.\d+)*", tag)
                    col.language(lang, ver.group(0) if ver else None, src.ev(ln))
        elif instr in ("CMD", "ENTRYPOINT"):
            final = (_command(rest), ln)
        elif instr == "WORKDIR" and rest:
            col.convention(f"container workdir: {rest}", src.ev(ln))
    if final and final[0]:
        col.entry_point(final[0], "main", src.ev(final[1]), src.rel)
        col.runner(3, None, "docker", final[0], src.ev(final[1]))


def _command(rest: str) -> str:
    if rest.startswith("["):
        try:
            parts = json.loads(rest)
        except json.JSONDecodeError:
            return rest
        if isinstance(parts, list):
            return " ".join(str(p) for p in parts)
    return rest
