"""GitHub Actions workflows (``.github/workflows/*.yml``): every ``run:`` step command.

A careful line-based reader instead of a YAML library (none is a dependency): it understands
``run:`` plain/quoted scalars and ``|``/``>`` block scalars, tracks the job id and step name,
and gives every command the line it is written on. Tab indentation (illegal in YAML) and
unterminated quotes are reported as fail-soft errors."""

from __future__ import annotations

import re

from ctxfast.recon.manifest._common import Collector, ManifestParseError, Source

_RUN = re.compile(r"^(\s*)(-\s+)?run:\s*(.*)$")
_NAME = re.compile(r"^(\s*)(-\s+)?name:\s*(.*)$")
_ITEM = re.compile(r"^(\s*)-\s")
_SETUP = re.compile(
    r"^\s*(sudo\s+)?(\S*pip3?\s+install|python\S*\s+-m\s+pip|uv\s+(pip|sync|venv|tool)|"
    r"poetry\s+install|(npm|yarn|pnpm)\s+(ci|install|i)\b|apt(-get)?\s|brew\s|cargo\s+install|"
    r"go\s+(install|mod)|echo\s|cd\s|export\s|source\s|git\s|mkdir\s|rm\s|curl\s|wget\s)"
)


def _unquote(value: str, lineno: int) -> str:
    v = value.strip()
    if v[:1] in ("'", '"'):
        q = v[0]
        end = v.rfind(q)
        if end <= 0:
            raise ManifestParseError("unparseable: unterminated quoted scalar", lineno)
        inner = v[1:end]
        return inner.replace("''", "'") if q == "'" else inner.replace('\\"', '"')
    return re.sub(r"\s+#.*$", "", v)


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _check_shape(src: Source) -> None:
    """Refuse, before reading any step, a file the line reader would misread: tab indentation
    (illegal in YAML, and it breaks the indent-based nesting) or no top-level ``jobs:``."""
    for i, raw in enumerate(src.lines, start=1):
        if re.match(r"^ *\t", raw):
            raise ManifestParseError("unparseable: tab character used for indentation", i)
    if src.find_line(r"^jobs\s*:") is None:
        raise ManifestParseError("unparseable: no top-level 'jobs:' mapping")


def _block_scalar(lines: list[str], i: int, key_indent: int) -> tuple[list[tuple[str, int]], int]:
    """The non-blank lines (stripped, with their line numbers) of the ``|``/``>`` block scalar
    starting at index ``i``: every following line indented deeper than its ``run:`` key, or
    blank. Also returns the index of the first line after the block."""
    block: list[tuple[str, int]] = []
    while i < len(lines) and (not lines[i].strip() or _indent(lines[i]) > key_indent):
        if lines[i].strip():
            block.append((lines[i].strip(), i + 1))
        i += 1
    return block, i


def _block_commands(
    col: Collector, src: Source, label: str, style: str, block: list[tuple[str, int]]
) -> None:
    """Record the commands of a block scalar. A folded (``>``) block is one command; a literal
    (``|``) block is one per line, comments skipped and ``\\``-continued lines joined, each
    at the line it starts on."""
    if style == ">" and block:
        _command(col, src, label, " ".join(c for c, _ in block), block[0][1])
        return
    pending, start = "", 0
    for cmd, ln in block:
        if cmd.startswith("#"):
            continue
        if pending:
            cmd, ln = pending + " " + cmd, start
        if cmd.endswith("\\"):
            pending, start = cmd[:-1].strip(), ln
            continue
        pending = ""
        _command(col, src, label, cmd, ln)


def parse_workflow(col: Collector, src: Source) -> None:
    _check_shape(src)
    workflow = src.rel.rsplit("/", 1)[-1].rsplit(".", 1)[0]
    job = None
    job_indent = None
    step_name: str | None = None
    step_no = 0
    in_jobs = False
    lines = src.lines
    i = 0
    while i < len(lines):
        raw = lines[i]
        lineno = i + 1
        i += 1
        if not raw.strip() or raw.lstrip().startswith("#"):
            continue
        ind = _indent(raw)
        if ind == 0:
            in_jobs = raw.startswith("jobs")
            continue
        if (
            in_jobs
            and (job_indent is None or ind == job_indent)
            and re.match(r"^\s*[\w.-]+\s*:\s*$", raw)
        ):
            job_indent, job, step_no, step_name = ind, raw.strip()[:-1].strip(), 0, None
            continue
        item = _ITEM.match(raw)
        if item:
            step_no += 1
            step_name = None
        nm = _NAME.match(raw)
        if nm:
            step_name = _unquote(nm.group(3), lineno) or None
            continue
        m = _RUN.match(raw)
        if not m or job is None:
            continue
        key_indent = len(m.group(1)) + len(m.group(2) or "")
        value = m.group(3).strip()
        label = f"ci:{workflow}:{job}:{step_name or f'step-{step_no}'}"
        if value[:1] in ("|", ">"):
            block, i = _block_scalar(lines, i, key_indent)
            _block_commands(col, src, label, value[0], block)
        elif value:
            _command(col, src, label, _unquote(value, lineno), lineno)


def _command(col: Collector, src: Source, label: str, cmd: str, line: int) -> None:
    cmd = cmd.strip()
    if not cmd:
        return
    col.runner(1, classify(col, cmd), label, cmd, src.ev(line))


def classify(col: Collector, cmd: str) -> str | None:
    """Canonical runner (``build``/``test``/``lint``) a command performs, or ``None``;
    installs and shell plumbing are never classified."""
    if _SETUP.match(cmd):
        return None
    for canonical, pattern in col.config.runner_patterns:
        if re.search(pattern, cmd):
            return canonical
    return None
