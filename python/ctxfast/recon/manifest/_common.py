"""Shared pieces of the manifest parsers: configuration, safe file reading, and the collector.

Every parser reads files through :func:`read_source`, which refuses binary, oversized,
non-UTF-8 and out-of-tree (symlinked) files by recording a fail-soft error instead of raising,
so one bad file can never stop the manifest from being emitted.
Every claim a parser makes goes through :class:`Collector`, whose methods demand a
``file:line`` evidence pointer, so a claim without evidence cannot be constructed.
"""

from __future__ import annotations

import os
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ctxfast.confine import ConfinementError, read_confined
from ctxfast.errors import CtxfastError
from ctxfast.text import VENDORED_DIR_NAMES

#: Directories that are never descended into: VCS metadata, caches, build outputs, installs.
SKIPPED_DIRS = (
    ".git",
    ".hg",
    ".svn",
    "node_modules",
    ".venv",
    "venv",
    "env",
    ".tox",
    ".nox",
    "__pycache__",
    ".mypy_cache",
    ".pytest_cache",
    ".ruff_cache",
    "build",
    "dist",
    "target",
    ".ctxfast",
    ".idea",
    ".vscode",
)

#: Canonical runner name for a command, decided by regex on the command text (CI ``run:``
#: steps) — order matters: the first matching kind wins.
RUNNER_PATTERNS: tuple[tuple[str, str], ...] = (
    (
        "test",
        r"\b(pytest|py\.test|tox|nox|python -m unittest|cargo test|cargo nextest|go test|"
        r"(npm|yarn|pnpm)( run)? test|jest|vitest|mocha|mvn[^\n]*\b(test|verify)\b|"
        r"gradlew?[^\n]*\btest\b|make test|just test|ctest)\b",
    ),
    (
        "lint",
        r"\b(ruff|flake8|pylint|mypy|black --check|isort --check|eslint|prettier --check|"
        r"cargo clippy|cargo fmt --check|golangci-lint|go vet|checkstyle|"
        r"(npm|yarn|pnpm)( run)? lint|make lint|make check|just lint|pre-commit run)\b",
    ),
    (
        "build",
        r"\b(python -m build|pip wheel|maturin build|cargo build|go build|"
        r"(npm|yarn|pnpm)( run)? build|tsc|mvn[^\n]*\b(package|install|compile)\b|"
        r"gradlew?[^\n]*\bbuild\b|make build|just build|docker build)\b",
    ),
)

#: Makefile/justfile target-name regex per canonical runner (``^build|^test|^lint|^check``);
#: an exact name beats a prefix match.
TARGET_PATTERNS: tuple[tuple[str, str], ...] = (
    ("build", r"^build"),
    ("test", r"^test"),
    ("lint", r"^(lint|check)"),
)

CANONICAL_RUNNERS = ("build", "test", "lint")


@dataclass(frozen=True)
class ManifestConfig:
    """Every cap and threshold of the manifest."""

    max_tokens: int = 5000
    header_tokens: int = 500
    encoding: str = "cl100k_base"
    max_depth: int = 3
    max_file_bytes: int = 1_000_000
    max_field_chars: int = 400
    max_walk_entries: int = 50_000
    # Third-party code living in the tree: reported as ``external-packages``, never parsed
    # for claims.
    vendored_dirs: tuple[str, ...] = VENDORED_DIR_NAMES
    skipped_dirs: tuple[str, ...] = SKIPPED_DIRS
    runner_patterns: tuple[tuple[str, str], ...] = RUNNER_PATTERNS
    target_patterns: tuple[tuple[str, str], ...] = TARGET_PATTERNS


class ManifestParseError(CtxfastError):
    """Malformed manifest content, raised inside a parser; the builder always catches it and
    records an ``errors`` entry, so it never reaches the caller."""

    def __init__(self, reason: str, line: int | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.line = line


@dataclass
class Source:
    """A decoded manifest file with its repository-relative POSIX path."""

    rel: str
    text: str
    lines: list[str]

    def ev(self, line: int) -> str:
        """Evidence pointer ``path:line`` (1-based, clamped into the file)."""
        line = max(1, min(line, max(1, len(self.lines))))
        return f"{self.rel}:{line}"

    def find_line(
        self, pattern: str, start: int = 1, end: int | None = None, flags: int = 0
    ) -> int | None:
        """1-based number of the first line in ``[start, end]`` matching regex ``pattern``."""
        rx = re.compile(pattern, flags)
        stop = len(self.lines) if end is None else min(end, len(self.lines))
        for i in range(max(1, start), stop + 1):
            if rx.search(self.lines[i - 1]):
                return i
        return None


@dataclass
class RunnerCandidate:
    """A command that could fill a runner slot; ``level`` is its priority (0 best)."""

    level: int
    canonical: str | None
    name: str
    command: str
    evidence: str
    framework: str | None = None


@dataclass
class Collector:
    """Accumulates claims from all parsers; the builder turns it into the schema."""

    root: Path
    config: ManifestConfig
    languages: list[dict[str, Any]] = field(default_factory=list)
    package_managers: list[tuple[int, str, str]] = field(default_factory=list)
    components: list[dict[str, Any]] = field(default_factory=list)
    dependencies: list[dict[str, Any]] = field(default_factory=list)
    external: list[dict[str, Any]] = field(default_factory=list)
    runners: list[RunnerCandidate] = field(default_factory=list)
    entry_points: list[dict[str, Any]] = field(default_factory=list)
    layout: list[tuple[str, str]] = field(default_factory=list)
    errors: list[dict[str, Any]] = field(default_factory=list)
    test_frameworks: list[tuple[str, str]] = field(default_factory=list)

    def clip(self, text: str) -> str:
        text = " ".join(text.split())
        limit = self.config.max_field_chars
        return text if len(text) <= limit else text[: limit - 1] + "…"

    def language(self, name: str, version_hint: str | None, evidence: str) -> None:
        self.languages.append({"name": name, "version_hint": version_hint, "evidence": evidence})

    def package_manager(self, priority: int, name: str, evidence: str) -> None:
        self.package_managers.append((priority, name, evidence))

    def component(self, name: str, path: str, kind: str, evidence: str) -> None:
        self.components.append({"name": name, "path": path, "kind": kind, "evidence": evidence})

    def dependency(self, name: str, version: str | None, kind: str, evidence: str) -> None:
        version = self.clip(version) if version else None
        self.dependencies.append(
            {"name": self.clip(name), "version": version, "kind": kind, "evidence": evidence}
        )

    def external_package(self, name: str, path: str, evidence: str) -> None:
        self.external.append({"name": name, "path": path, "evidence": evidence})

    def runner(
        self,
        level: int,
        canonical: str | None,
        name: str,
        command: str,
        evidence: str,
        framework: str | None = None,
    ) -> None:
        self.runners.append(
            RunnerCandidate(
                level, canonical, self.clip(name), self.clip(command), evidence, framework
            )
        )

    def entry_point(self, name: str, kind: str, evidence: str, target: str | None = None) -> None:
        item: dict[str, Any] = {"name": self.clip(name), "kind": kind, "evidence": evidence}
        if target:
            item["target"] = self.clip(target)
        self.entry_points.append(item)

    def convention(self, text: str, evidence: str) -> None:
        self.layout.append((text, evidence))

    def test_framework(self, framework: str, evidence: str) -> None:
        self.test_frameworks.append((framework, evidence))

    def error(self, file: str, reason: str, line: int | None = None) -> None:
        self.errors.append({"file": file, "reason": self.clip(reason), "line": line})


def load_toml(src: Source) -> dict[str, Any]:
    """Parses a TOML manifest; a syntax error becomes a fail-soft ``ManifestParseError``
    carrying the line tomllib reports."""
    try:
        return tomllib.loads(src.text)
    except tomllib.TOMLDecodeError as exc:
        m = re.search(r"line (\d+)", str(exc))
        raise ManifestParseError(f"unparseable: {exc}", int(m.group(1)) if m else None) from exc


def rel_posix(root: Path, path: Path) -> str:
    """Repository-relative POSIX path of ``path``."""
    return path.relative_to(root).as_posix()


def read_source(col: Collector, path: Path) -> Source | None:
    """Read a manifest file fail-soft: ``None`` (and an ``errors`` entry) unless it is a small,
    UTF-8, non-binary regular file inside the repository."""
    rel = rel_posix(col.root, path)
    try:
        data = read_confined(col.root, rel, max_bytes=col.config.max_file_bytes, links_inside=True)
    except ConfinementError as exc:
        col.error(rel, f"skipped: {exc.strerror}")
        return None
    except OSError as exc:
        col.error(rel, f"unreadable: {exc.strerror or exc}")
        return None
    if b"\x00" in data[:8192]:
        col.error(rel, "unparseable: binary content (NUL byte)")
        return None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        col.error(rel, f"unparseable: invalid UTF-8 at byte {exc.start}")
        return None
    return Source(rel=rel, text=text, lines=text.splitlines())


def read_lines(col: Collector, path: Path) -> list[str]:
    """The lines of a repository file read through ``confine.read_confined`` (never a FIFO,
    never a link out of the repository); none when it cannot be read."""
    try:
        data = read_confined(
            col.root, rel_posix(col.root, path), max_bytes=col.config.max_file_bytes
        )
    except OSError:
        return []
    return data.decode("utf-8", errors="replace").splitlines()


def walk_files(col: Collector) -> list[str]:
    """Repository-relative POSIX paths of the files up to ``max_depth`` levels deep, skipping
    caches/installs and vendored trees (those are reported separately), sorted by path
    components for determinism; never follows directory symlinks. Paths stay strings: a
    large tree has thousands of files and only the few manifest files become ``Path``s."""
    root = os.fspath(col.root)
    cut = len(root) + 1
    out: list[str] = []
    seen = 0
    skip = set(col.config.skipped_dirs) | set(col.config.vendored_dirs)
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        rel_dir = dirpath[cut:]
        depth = rel_dir.count(os.sep) + 1 if rel_dir else 0
        prefix = rel_dir.replace(os.sep, "/") + "/" if rel_dir else ""
        keep = []
        for d in sorted(dirnames):
            if (
                d in skip
                or (d.startswith(".") and d != ".github")
                or depth + 1 > col.config.max_depth
            ):
                continue
            keep.append(d)
        dirnames[:] = keep
        for f in sorted(filenames):
            seen += 1
            if seen > col.config.max_walk_entries:
                col.error(".", f"scan stopped after {col.config.max_walk_entries} files")
                return sorted(out, key=_components)
            out.append(prefix + f)
    return sorted(out, key=_components)


def _components(rel: str) -> list[str]:
    """The sort key ``Path`` objects had: their parts, not the string."""
    return rel.split("/")


def split_requirement(spec: str) -> tuple[str, str | None] | None:
    """``("requests", ">=2.28")`` from a PEP 508 string; ``None`` when it names no package."""
    m = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(\[[^\]]*\])?\s*(.*)$", spec)
    if not m:
        return None
    rest = m.group(3).split(";", 1)[0].strip()
    if rest.startswith("@"):
        rest = rest[1:].strip()
    rest = rest.strip("()").strip()
    return m.group(1), (rest or None)
