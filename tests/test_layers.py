"""The package's layers import downward only, and nothing inside the package imports its root.

The layers, top to bottom, are the ones ARCHITECTURE.md draws: the command line and the MCP
server; eval, batch and bench; construct; the ``Repository`` façade; retrieval; recon; the
harness toolkit; and the base modules (tokens, text rules, errors, the native binding). An
import from a lower layer into a higher one is what made ``Repository.retrieve`` untyped and
the import graph circular, so every import in every module is checked, lazy ones included.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import ctxfast

PACKAGE = Path(ctxfast.__file__).parent

#: Top layer first, as module names under the package. A module belongs to the first layer
#: one of whose names it is or lies under; everything unlisted is the base layer.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("__main__", "cli", "mcp_server"),
    ("eval", "batch", "bench"),
    ("construct",),
    ("repository",),
    ("retrieval",),
    ("recon",),
    ("harness",),
)


def layer_of(module: str) -> int:
    """Depth of ``module`` (a name relative to the package root): 0 is the top layer."""
    for depth, names in enumerate(LAYERS):
        if any(module == n or module.startswith(n + ".") for n in names):
            return depth
    return len(LAYERS)


def module_files(package: Path) -> dict[str, Path]:
    """Dotted module name → source file, for every ``.py`` under ``package``."""
    out = {}
    for path in package.rglob("*.py"):
        parts = [package.name, *path.relative_to(package).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def imports_of(module: str, path: Path, known: set[str]) -> list[tuple[int, str]]:
    """``(line, imported module)`` for every import in the file, resolved to absolute names;
    ``from pkg import name`` counts as importing ``pkg.name`` when that is a module."""
    is_package = path.name == "__init__.py"
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".")[: None if is_package else -1]
                base = base[: len(base) - node.level + 1]
                source = ".".join([*base, *([node.module] if node.module else [])])
            else:
                source = node.module or ""
            for alias in node.names:
                sub = f"{source}.{alias.name}"
                found.append((node.lineno, sub if sub in known else source))
    return found


def violations(package: Path) -> list[str]:
    files = module_files(package)
    known = set(files) | {f"{package.name}._native"}
    root = package.name
    out = []
    for module, path in sorted(files.items()):
        if module == root:
            continue  # the root re-exports the public API from every layer
        here = layer_of(module.removeprefix(root + "."))
        for line, target in imports_of(module, path, known):
            if target != root and not target.startswith(root + "."):
                continue
            where = f"{path.relative_to(package.parent)}:{line}"
            if target == root:
                out.append(f"{where}: {module} imports the package root")
            elif layer_of(target.removeprefix(root + ".")) < here:
                out.append(f"{where}: {module} imports {target}, a layer above it")
    return out


def test_no_module_imports_upward_or_the_package_root():
    assert violations(PACKAGE) == []


@pytest.mark.parametrize(
    ("module", "source", "expected"),
    [
        ("recon/graph.py", "from pkg.retrieval import query\n", "a layer above"),
        ("recon/graph.py", "def f():\n    from pkg import repository\n", "a layer above"),
        ("harness/skills.py", "from pkg import count_tokens\n", "the package root"),
        ("tokens.py", "import pkg\n", "the package root"),
        ("recon/graph.py", "from ..retrieval import query\n", "a layer above"),
    ],
)
def test_the_check_catches_upward_and_root_imports(tmp_path, module, source, expected):
    pkg = tmp_path / "pkg"
    for sub in ("recon", "retrieval", "harness"):
        (pkg / sub).mkdir(parents=True)
        (pkg / sub / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("")
    (pkg / "retrieval" / "query.py").write_text("")
    (pkg / "repository.py").write_text("")
    (pkg / module).write_text(source)
    found = violations(pkg)
    assert len(found) == 1 and expected in found[0], found


def test_downward_and_submodule_imports_pass(tmp_path):
    pkg = tmp_path / "ctxfast"
    (pkg / "recon").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "recon" / "__init__.py").write_text("from ctxfast import tokens\n")
    (pkg / "tokens.py").write_text("")
    (pkg / "repository.py").write_text("from ctxfast.recon import graph\nfrom . import tokens\n")
    assert violations(pkg) == []
