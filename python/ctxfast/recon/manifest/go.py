"""``go.mod``: Go language and version, Go modules, ``require`` dependencies, module path, and
the implicit ``go test ./...`` / ``go build ./...`` / ``go vet ./...`` conventions."""

from __future__ import annotations

import re

from ctxfast.recon.manifest._common import Collector, ManifestParseError, Source

PM_GO = 6
_REQ = re.compile(r"^([^\s]+)\s+(v[^\s]+)(\s*//\s*indirect)?\s*$")


def parse_go_mod(col: Collector, src: Source, root_level: bool) -> None:
    module_line = None
    module = None
    in_block = None
    for i, raw in enumerate(src.lines, start=1):
        line = raw.split("//", 1)[0].strip() if "// indirect" not in raw else raw.strip()
        if not line:
            continue
        if in_block:
            if line == ")":
                in_block = None
                continue
            if in_block == "require":
                _require(col, src, line, i)
            continue
        m = re.match(
            r"^(module|go|toolchain|require|replace|exclude|retract|godebug|tool)\b\s*(.*)$", line
        )
        if not m:
            raise ManifestParseError(f"unparseable: unknown directive {line.split()[0]!r}", i)
        directive, rest = m.group(1), m.group(2).strip()
        if rest == "(":
            in_block = directive
            continue
        if directive == "module":
            module, module_line = rest.strip('"'), i
        elif directive == "go":
            col.language("go", rest, src.ev(i))
        elif directive == "require":
            _require(col, src, rest, i)
    if in_block:
        raise ManifestParseError(f"unparseable: unterminated {in_block} block")
    if module is None or module_line is None:
        raise ManifestParseError("unparseable: no module directive")
    if not any(lang["name"] == "go" for lang in col.languages):
        col.language("go", None, src.ev(module_line))
    if root_level:
        col.package_manager(PM_GO, "go", src.ev(module_line))
        col.runner(2, "test", "test", "go test ./...", src.ev(module_line))
        col.runner(2, "build", "build", "go build ./...", src.ev(module_line))
        col.runner(2, "lint", "lint", "go vet ./...", src.ev(module_line))
        col.test_framework("go test", src.ev(module_line))
    else:
        d = src.rel.rsplit("/", 1)[0]
        col.component(module, d, "package", src.ev(module_line))


def _require(col: Collector, src: Source, line: str, lineno: int) -> None:
    m = _REQ.match(line)
    if not m:
        raise ManifestParseError(f"unparseable: bad require line {line!r}", lineno)
    col.dependency(m.group(1), m.group(2), "runtime", src.ev(lineno))
