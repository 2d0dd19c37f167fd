"""Incremental refresh == cold build, over random repositories and random edit sequences.

A refresh re-resolves only the files that could see a change; the rule is right only if the
graph it leaves is row-for-row the graph a cold build of the same tree gives. Hypothesis
builds small Python packages whose classes inherit across files, hold typed attributes,
import each other (plain, aliased, star) and call through all of that, then edits them
(rewrite, delete, add, change a base list) and compares after every step.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hostile_repos import cold_dump, dump
from hypothesis import given, settings
from hypothesis import strategies as st
from php_ruby_fixtures import PHP, RUBY, write

import ctxfast

MODULES = ["m0", "m1", "m2", "m3", "m4"]


def some(pool: list[str], max_size: int, unique: bool = False) -> st.SearchStrategy[list[str]]:
    """Up to ``max_size`` picks from ``pool`` (none when it is empty)."""
    if not pool:
        return st.just([])
    return st.lists(st.sampled_from(pool), max_size=max_size, unique=unique)


CLASSES = ["A", "B", "C"]
METHODS = ["diff", "run", "size"]


@st.composite
def module_source(draw: st.DrawFn, name: str) -> str:
    """One module: imports of other modules' classes, classes with bases and methods, typed
    attributes and functions calling through typed parameters."""
    others = [m for m in MODULES if m != name]
    lines: list[str] = []
    imported: list[str] = []
    for m in draw(st.lists(st.sampled_from(others), max_size=3, unique=True)):
        kind = draw(st.sampled_from(["symbol", "alias", "star", "module"]))
        cls = draw(st.sampled_from(CLASSES))
        if kind == "symbol":
            lines.append(f"from pkg.{m} import {cls}")
            imported.append(cls)
        elif kind == "alias":
            lines.append(f"from pkg.{m} import {cls} as {cls}{m}")
            imported.append(f"{cls}{m}")
        elif kind == "star":
            lines.append(f"from pkg.{m} import *")
        else:
            lines.append(f"from pkg import {m}")
            imported.append(f"{m}.{cls}")
    local: list[str] = []
    for cls in draw(st.lists(st.sampled_from(CLASSES), max_size=3, unique=True)):
        bases = draw(some(imported + local, 2, unique=True))
        lines.append(f"class {cls}({', '.join(bases)}):" if bases else f"class {cls}:")
        body = []
        for meth in draw(st.lists(st.sampled_from(METHODS), max_size=2, unique=True)):
            body.append(f"    def {meth}(self):\n        return super().{meth}()")
        if imported and draw(st.booleans()):
            held = draw(st.sampled_from(imported))
            body.append(f"    def __init__(self):\n        self.held = {held}()")
        lines.extend(body or ["    pass"])
        local.append(cls)
    for i, target in enumerate(draw(some(imported + local, 3))):
        meth = draw(st.sampled_from(METHODS))
        via = draw(st.sampled_from(["param", "local", "attr"]))
        if via == "param":
            lines.append(f"def use{i}(x: {target}):\n    return x.{meth}()")
        elif via == "local":
            lines.append(f"def use{i}():\n    x = {target}()\n    return x.{meth}()")
        else:
            lines.append(f"def use{i}(x: {target}):\n    return x.held.{meth}()")
    return "\n".join(lines) + "\n"


@st.composite
def edit(draw: st.DrawFn) -> tuple[str, str | None]:
    """(module, new source) — ``None`` deletes the module."""
    name = draw(st.sampled_from(MODULES))
    if draw(st.integers(0, 4)) == 0:
        return name, None
    return name, draw(module_source(name))


def write_tree(root: Path, files: dict[str, str]) -> None:
    pkg = root / "pkg"
    pkg.mkdir(parents=True, exist_ok=True)
    (pkg / "__init__.py").write_text("")
    for p in pkg.glob("m*.py"):
        if p.stem not in files:
            p.unlink()
    for name, src in files.items():
        (pkg / f"{name}.py").write_text(src)


@settings(max_examples=40)
@given(
    start=st.fixed_dictionaries({m: module_source(m) for m in MODULES}),
    edits=st.lists(edit(), min_size=1, max_size=6),
)
def test_refresh_after_every_edit_equals_a_cold_build(
    tmp_path_factory, start: dict[str, str], edits: list[tuple[str, str | None]]
) -> None:
    base = tmp_path_factory.mktemp("prop")
    tree, scratch = base / "tree", base / "cold"
    files = dict(start)
    write_tree(tree, files)
    repo = ctxfast.Repository(tree)
    repo.index()
    for step, (name, src) in enumerate(edits):
        if src is None:
            files.pop(name, None)
        else:
            files[name] = src
        write_tree(tree, files)
        repo.index()
        assert dump(tree / ".ctxfast" / "recon.db") == cold_dump(tree, scratch), (
            f"step {step}: {name} -> {src!r}"
        )


#: The chain the issue found: ``x.held.diff()`` in m3 resolves to ``Expr.diff`` in m0 only
#: through ``class Function(Expr)`` in m1, a module the caller never imports.
CHAIN = {
    "m1": "from pkg.m0 import Expr\nclass Function(Expr):\n    pass\n",
    "m2": "from pkg.m1 import Function\nclass Holder:\n"
    "    def __init__(self):\n        self.held = Function()\n",
    "m3": "from pkg.m2 import Holder\ndef use(x: Holder):\n    return x.held.diff()\n",
}
EXPR = "class Expr:\n    def diff(self):\n        return 1\n"
INHERITED_EDGE = "('pkg.m3.use:3', 'pkg.m0.Expr.diff:2', 'invoke')"


@pytest.mark.parametrize(
    ("start", "changed", "edge_before", "edge_after"),
    [
        # Removing the base must remove the edge on refresh.
        (
            {"m0": EXPR, **CHAIN},
            {"m1": "from pkg.m0 import Expr\nclass Function:\n    pass\n"},
            True,
            False,
        ),
        # The transitive case: the base module does not exist yet, so the caller's lookup
        # stopped there; when m0 appears the caller gains the edge.
        (CHAIN, {"m0": EXPR}, False, True),
    ],
    ids=["dropping-a-base-class-drops-the-edge", "a-new-base-module-adds-the-edge"],
)
def test_an_inherited_edge_follows_a_base_change_made_in_a_third_file(
    tmp_path: Path,
    start: dict[str, str],
    changed: dict[str, str],
    edge_before: bool,
    edge_after: bool,
) -> None:
    """Refreshing after an edit to the base chain gives the cold build's graph, with the
    inherited edge present exactly when the chain holds."""
    files = dict(start)
    write_tree(tmp_path / "tree", files)
    repo = ctxfast.Repository(tmp_path / "tree")
    repo.index()
    db = tmp_path / "tree" / ".ctxfast" / "recon.db"
    assert (INHERITED_EDGE in dump(db)) is edge_before
    files.update(changed)
    write_tree(tmp_path / "tree", files)
    repo.index()
    assert (INHERITED_EDGE in dump(db)) is edge_after
    assert dump(db) == cold_dump(tmp_path / "tree", tmp_path / "cold")


@pytest.mark.parametrize(
    ("files", "edits"),
    [
        (
            PHP,
            [
                (
                    "src/Line.php",
                    "<?php\nnamespace Shop;\n\n\nclass Line { public function price() {} }\n",
                ),
                ("src/Basket.php", None),
                (
                    "src/Other.php",
                    "<?php\nnamespace Shop;\n\nclass Basket { public function clear() {} }\n",
                ),
                ("src/Pricing/Rules.php", "<?php\nnamespace Shop\\Pricing;\n\nclass Rules {}\n"),
            ],
        ),
        (
            RUBY,
            [
                (
                    "lib/shop/line.rb",
                    "\nmodule Shop\n  class Line\n    def price; end\n  end\nend\n",
                ),
                ("lib/shop/basket.rb", None),
                ("lib/other.rb", "module Shop\n  class Basket\n    def clear; end\n  end\nend\n"),
                ("lib/helpers.rb", "def check; end\n"),
                ("lib/shop/pricing.rb", "module Shop\n  module Pricing\n  end\nend\n"),
            ],
        ),
    ],
    ids=["php", "ruby"],
)
def test_php_and_ruby_refresh_after_every_edit_equals_a_cold_build(
    tmp_path: Path, files: dict[str, str], edits: list[tuple[str, str | None]]
) -> None:
    tree, scratch = tmp_path / "tree", tmp_path / "cold"
    write(tree, files)
    repo = ctxfast.Repository(tree)
    repo.index()
    for step, (rel, text) in enumerate(edits):
        if text is None:
            (tree / rel).unlink()
        else:
            (tree / rel).parent.mkdir(parents=True, exist_ok=True)
            (tree / rel).write_text(text)
        repo.index()
        assert dump(tree / ".ctxfast" / "recon.db") == cold_dump(tree, scratch), f"step {step}"
