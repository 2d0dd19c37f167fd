"""First-party components, in-tree third-party code, and module-layout conventions, read from
the directory structure; each claim points at a file that proves it (an ``__init__.py``, a
``package main`` line, a ``.gitmodules`` ``path =`` line, ...)."""

from __future__ import annotations

import re
from pathlib import Path

from ctxfast.recon.manifest._common import Collector, read_lines

_NOT_COMPONENT_MODULES = frozenset({"setup.py", "conftest.py", "noxfile.py", "fabfile.py"})
_PROOF_FILES = (
    "setup.py",
    "pyproject.toml",
    "package.json",
    "go.mod",
    "Cargo.toml",
    "pom.xml",
    "__init__.py",
    "LICENSE",
    "LICENSE.txt",
    "README.md",
    "README.rst",
    "README",
)


def _dirs(path: Path, col: Collector) -> list[Path]:
    try:
        return sorted(
            p
            for p in path.iterdir()
            if p.is_dir()
            and not p.is_symlink()
            and not p.name.startswith(".")
            and p.name not in col.config.skipped_dirs
        )
    except OSError:
        return []


def _line_of(col: Collector, path: Path, pattern: str) -> int:
    for i, line in enumerate(read_lines(col, path)[:2000], start=1):
        if re.search(pattern, line):
            return i
    return 1


def scan_layout(col: Collector) -> None:
    root = col.root
    vendored = set(col.config.vendored_dirs)
    packages: list[tuple[Path, str]] = []
    for d in _dirs(root, col):
        if d.name in vendored:
            continue
        if (d / "__init__.py").is_file():
            packages.append((d, d.name))
    src = root / "src"
    if src.is_dir():
        for d in _dirs(src, col):
            if (d / "__init__.py").is_file():
                packages.append((d, d.name))
                col.convention("src-layout", f"src/{d.name}/__init__.py:1")
    for d, name in packages:
        rel = d.relative_to(root).as_posix()
        col.component(name, rel, "package", f"{rel}/__init__.py:1")
    try:
        top = sorted(p for p in root.iterdir() if p.is_file() and p.suffix == ".py")
    except OSError:
        top = []
    for f in top:
        if f.name not in _NOT_COMPONENT_MODULES:
            col.component(f.stem, f.name, "module", f"{f.name}:1")
    _tests(col, packages)
    _go(col)
    _external(col)


def _tests(col: Collector, packages: list[tuple[Path, str]]) -> None:
    root = col.root
    for tdir in ("tests", "test"):
        t = root / tdir
        if not t.is_dir():
            continue
        test_files = sorted(t.rglob("test_*.py"))[:500]
        modules = {p.stem for d, _ in packages for p in d.rglob("*.py")} if packages else set()
        for f in test_files:
            if f.stem.removeprefix("test_") in modules:
                src_dir = packages[0][0].relative_to(root).as_posix()
                col.convention(f"{tdir}/ mirrors {src_dir}/", f"{f.relative_to(root).as_posix()}:1")
                break
        if test_files:
            col.convention(f"tests-dir: {tdir}/", f"{test_files[0].relative_to(root).as_posix()}:1")


def _go(col: Collector) -> None:
    root = col.root
    cmd = root / "cmd"
    if (root / "go.mod").is_file() and cmd.is_dir():
        for d in _dirs(cmd, col):
            main = d / "main.go"
            if main.is_file():
                rel = main.relative_to(root).as_posix()
                col.component(
                    d.name,
                    d.relative_to(root).as_posix(),
                    "app",
                    f"{rel}:{_line_of(col, main, r'^package main')}",
                )
        if (root / "internal").is_dir():
            first = next(iter(sorted((root / "internal").rglob("*.go"))), None)
            if first:
                col.convention("go internal/ packages", f"{first.relative_to(root).as_posix()}:1")


def _external(col: Collector) -> None:
    root = col.root
    for vname in col.config.vendored_dirs:
        for base in [root / vname, *(d / vname for d in _dirs(root, col))]:
            if not base.is_dir() or base.is_symlink():
                continue
            modules_txt = base / "modules.txt"
            if modules_txt.is_file():
                _go_vendor(col, modules_txt)
                continue
            for d in _dirs(base, col):
                proof = next((d / p for p in _PROOF_FILES if (d / p).is_file()), None)
                if proof is None:
                    proof = next(iter(sorted(p for p in d.rglob("*") if p.is_file())), None)
                if proof is not None:
                    rel = d.relative_to(root).as_posix()
                    col.external_package(rel, rel, f"{proof.relative_to(root).as_posix()}:1")
    gm = root / ".gitmodules"
    if gm.is_file():
        name = None
        for i, line in enumerate(read_lines(col, gm), start=1):
            m = re.match(r'^\s*\[submodule\s+"([^"]+)"\]', line)
            if m:
                name = m.group(1)
            m = re.match(r"^\s*path\s*=\s*(\S+)", line)
            if m:
                col.external_package(name or m.group(1), m.group(1), f".gitmodules:{i}")


def _go_vendor(col: Collector, modules_txt: Path) -> None:
    rel_base = modules_txt.parent.relative_to(col.root).as_posix()
    for i, line in enumerate(read_lines(col, modules_txt), start=1):
        m = re.match(r"^# (\S+) (v\S+)", line)
        if m:
            col.external_package(
                m.group(1),
                f"{rel_base}/{m.group(1)}",
                f"{modules_txt.relative_to(col.root).as_posix()}:{i}",
            )
