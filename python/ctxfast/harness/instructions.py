"""Project instructions (AGENTS.md and friends), loaded in priority order and path-gated.

Three choices matter for small models:

* A README is badges, install steps and marketing prose, not instructions; it is only loaded
  when the caller opts in (``include_readme=True``).
* The budget (12,000 bytes total, 4,000 per file) is checked *after* accounting for the file
  just added, so the total can never overshoot.
* Files are de-duplicated by their resolved path relative to the repository, not by
  lowercased basename, so ``.ctxfast/AGENTS.md`` layers under the root ``AGENTS.md`` instead
  of shadowing it, while a ``CLAUDE.md`` symlinked to ``AGENTS.md`` is loaded once.

Path gating: a file whose front matter says ``paths: pkg/**/*.go, cmd/**`` — or a section whose
heading carries ``<!-- paths: web/**/*.tsx -->`` — is dropped unless a file in ``scope``
matches one of its globs. Content without ``paths:`` always applies, and an empty scope
disables gating (a caller that does not know its files yet loses nothing).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from ctxfast.confine import decode, read_confined
from ctxfast.errors import ConfigError

#: Candidate files in priority order; directories contribute their files in sorted order.
INSTRUCTION_FILES: tuple[str, ...] = (
    "AGENTS.md",
    "CLAUDE.md",
    "AGENT.md",
    ".cursorrules",
    ".cursor/rules",
    ".ctxfast/AGENTS.md",
    ".ctxfast/PROJECT.md",
)
README_FILES: tuple[str, ...] = ("README.md", "README.rst", "README.txt", "README")
TOTAL_BUDGET_BYTES = 12_000
FILE_BUDGET_BYTES = 4_000
TRUNCATION_MARKER = "\n[… truncated]"

_FRONT_MATTER_RE = re.compile(r"\A---[ \t]*\r?\n(.*?)\r?\n---[ \t]*(?:\r?\n|\Z)", re.S)
_PATHS_LINE_RE = re.compile(r"^paths:[ \t]*(.*)$", re.M)
_HEADING_RE = re.compile(r"^(#{1,6})\s")
_SECTION_PATHS_RE = re.compile(r"<!--\s*paths:\s*(.*?)\s*-->")


@dataclass(frozen=True)
class Instructions:
    """The joined instruction text and which files (relative paths) went into it."""

    text: str
    files: list[str] = field(default_factory=list)
    truncated: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # gated out entirely or over budget


@lru_cache(maxsize=512)
def _glob_regex(glob: str) -> re.Pattern[str]:
    """``**`` spans directories, ``*`` and ``?`` stay within one path segment."""
    out = []
    i = 0
    while i < len(glob):
        if glob.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif glob.startswith("**", i):
            out.append(".*")
            i += 2
        elif glob[i] == "*":
            out.append("[^/]*")
            i += 1
        elif glob[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(glob[i]))
            i += 1
    return re.compile("".join(out) + r"\Z")


def glob_match(path: str, glob: str) -> bool:
    """True when the repo-relative ``path`` matches ``glob`` (a trailing ``/`` means a dir)."""
    path = path.replace("\\", "/").removeprefix("./")
    glob = glob.strip().lstrip("/")
    if glob.endswith("/"):
        glob += "**"
    return bool(_glob_regex(glob).match(path))


def _parse_globs(spec: str) -> list[str]:
    spec = spec.strip().strip("[]")
    return [g.strip().strip("'\"") for g in spec.split(",") if g.strip().strip("'\"")]


def _in_scope(globs: Sequence[str], scope: Sequence[str]) -> bool:
    return any(glob_match(f, g) for f in scope for g in globs)


def gate(text: str, scope: Sequence[str]) -> str:
    """``text`` with front matter removed and out-of-scope content dropped.

    Returns ``""`` when the front matter's ``paths:`` matches nothing in ``scope``. A gated
    section runs from its heading to the next heading of the same or a higher level.
    """
    m = _FRONT_MATTER_RE.match(text)
    if m:
        pm = _PATHS_LINE_RE.search(m.group(1))
        text = text[m.end() :]
        if pm and scope and not _in_scope(_parse_globs(pm.group(1)), scope):
            return ""
    out: list[str] = []
    drop_level: int | None = None
    for line in text.splitlines(keepends=True):
        h = _HEADING_RE.match(line)
        if h:
            level = len(h.group(1))
            if drop_level is not None and level <= drop_level:
                drop_level = None
            sm = _SECTION_PATHS_RE.search(line)
            if drop_level is None and sm:
                if scope and not _in_scope(_parse_globs(sm.group(1)), scope):
                    drop_level = level
                    continue
                line = _SECTION_PATHS_RE.sub("", line).rstrip() + "\n"
        if drop_level is None:
            out.append(line)
    return "".join(out).strip()


def _candidates(root: Path, include_readme: bool) -> list[Path]:
    names = list(INSTRUCTION_FILES) + (list(README_FILES) if include_readme else [])
    found: list[Path] = []
    for name in names:
        p = root / name
        if p.is_dir():
            found.extend(sorted(c for c in p.iterdir() if c.is_file()))
        elif p.is_file():
            found.append(p)
    return found


def _cut_utf8(text: str, max_bytes: int) -> str:
    """The longest prefix of ``text`` within ``max_bytes`` UTF-8 bytes, preferring a line end."""
    raw = text.encode("utf-8")
    if len(raw) <= max_bytes:
        return text
    head = raw[: max(max_bytes, 0)].decode("utf-8", errors="ignore")
    nl = head.rfind("\n")
    return head[:nl] if nl > len(head) // 2 else head


def load_instructions(
    repo_root: str | Path,
    scope: Iterable[str] = (),
    include_readme: bool = False,
    *,
    total_budget: int = TOTAL_BUDGET_BYTES,
    file_budget: int = FILE_BUDGET_BYTES,
) -> Instructions:
    """Loads the project's instruction files for a task touching the files in ``scope``.

    Each file is gated (see :func:`gate`), cut to ``file_budget`` bytes, and appended under a
    ``## <relative path>`` header; after each file the total is checked, the last file is cut
    so the total stays within ``total_budget`` bytes, and loading stops there.
    """
    root = Path(repo_root)
    if not root.is_dir():
        raise ConfigError(f"repository root {root} is not a directory")
    if total_budget < 0 or file_budget < 0:
        raise ConfigError("instruction budgets must be >= 0")
    scope_list = [s.replace(os.sep, "/").removeprefix("./") for s in scope]
    real_root = root.resolve()
    seen: set[str] = set()
    parts: list[str] = []
    files: list[str] = []
    truncated: list[str] = []
    skipped: list[str] = []
    used = 0
    for path in _candidates(root, include_readme):
        rel_shown = path.relative_to(root).as_posix()
        try:
            key = path.resolve().relative_to(real_root).as_posix()
        except ValueError:  # a symlink out of the repository: key on the link itself
            key = rel_shown
        if key in seen:
            continue
        seen.add(key)
        if used >= total_budget:
            skipped.append(rel_shown)
            continue
        try:
            text = decode(read_confined(root, rel_shown, links_inside=True))
            body = gate(text, scope_list)
        except OSError:
            skipped.append(rel_shown)
            continue
        if not body:
            skipped.append(rel_shown)
            continue
        block = f"## {rel_shown}\n{body}"
        sep = "\n\n" if parts else ""
        cut = False
        if len(block.encode("utf-8")) > file_budget:
            block = _cut_utf8(block, file_budget - len(TRUNCATION_MARKER.encode())) + (
                TRUNCATION_MARKER
            )
            cut = True
        size = len((sep + block).encode("utf-8"))
        if used + size > total_budget:
            room = total_budget - used - len(sep.encode()) - len(TRUNCATION_MARKER.encode())
            if room <= len(f"## {rel_shown}\n".encode()):
                skipped.append(rel_shown)
                used = total_budget
                continue
            block = _cut_utf8(block.removesuffix(TRUNCATION_MARKER), room) + TRUNCATION_MARKER
            cut = True
            size = len((sep + block).encode("utf-8"))
        parts.append(sep + block)
        files.append(rel_shown)
        if cut:
            truncated.append(rel_shown)
        used += size
    return Instructions("".join(parts), files, truncated, skipped)


__all__ = [
    "FILE_BUDGET_BYTES",
    "INSTRUCTION_FILES",
    "README_FILES",
    "TOTAL_BUDGET_BYTES",
    "Instructions",
    "gate",
    "glob_match",
    "load_instructions",
]
