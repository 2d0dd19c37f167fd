"""Graph fidelity against an independent analyser (``jedi``).

On a seeded sample of call sites and function definitions of a tree, compare the code graph's
answers with jedi's: definitions (spec-03 Q2, jedi ``goto``) and callers (Q3 — invoke edges,
jedi ``get_references`` filtered to call sites). The graph is passed in as a small read API so
this module does not depend on how the graph is built.
"""

from __future__ import annotations

import ast
import random
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

Site = tuple[str, int]  # (POSIX relative file, 1-based line)


class GraphReadAPI(Protocol):
    def definitions(self, name: str) -> Iterable[Site]:
        """Where ``name`` (a bare or dotted name) is defined."""
        ...

    def callers(self, file: str, line: int, name: str) -> Iterable[Site]:
        """Call sites whose invoke edge points at the definition at ``file:line``."""
        ...


@dataclass(frozen=True)
class CallSite:
    file: str
    line: int
    column: int
    name: str


@dataclass(frozen=True)
class Definition:
    file: str
    line: int
    column: int
    name: str


def _py_files(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*.py"))


def collect_sites(root: Path) -> tuple[list[CallSite], list[Definition]]:
    """Every simple call site (``f(...)``/``x.f(...)``) and function definition."""
    calls, defs = [], []
    for rel in _py_files(root):
        try:
            tree = ast.parse((root / rel).read_text(encoding="utf-8", errors="replace"))
        except (SyntaxError, ValueError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                fn = node.func
                if isinstance(fn, ast.Name):
                    calls.append(CallSite(rel, fn.lineno, fn.col_offset, fn.id))
                elif isinstance(fn, ast.Attribute) and fn.end_col_offset is not None:
                    col = fn.end_col_offset - len(fn.attr)
                    calls.append(CallSite(rel, fn.end_lineno or fn.lineno, col, fn.attr))
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                col = node.col_offset + (6 if isinstance(node, ast.AsyncFunctionDef) else 0) + 4
                defs.append(Definition(rel, node.lineno, col, node.name))
    return calls, defs


@dataclass
class PR:
    """Micro-averaged precision/recall counts."""

    tp: int = 0
    graph: int = 0
    reference: int = 0

    def add(self, graph: set[Site], ref: set[Site]) -> None:
        self.tp += len(graph & ref)
        self.graph += len(graph)
        self.reference += len(ref)

    def as_dict(self) -> dict[str, float | int | None]:
        return {
            "precision": self.tp / self.graph if self.graph else None,
            "recall": self.tp / self.reference if self.reference else None,
            "tp": self.tp,
            "graph": self.graph,
            "reference": self.reference,
        }


def _rel(root: Path, path: object) -> str | None:
    if path is None:
        return None
    try:
        return Path(str(path)).resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return None  # outside the tree (stdlib, site-packages): not part of the graph


def graph_fidelity(
    root: str | Path, graph: GraphReadAPI, sample: int = 50, seed: int = 0
) -> dict[str, object]:
    """Precision/recall of the graph's definitions and invoke edges against jedi.

    Only call sites that jedi resolves inside the tree are scored for definitions (an
    unresolvable dynamic call says nothing about either side).
    """
    import jedi

    root = Path(root)
    project = jedi.Project(str(root))
    calls, defs = collect_sites(root)
    rng = random.Random(seed)
    call_sample = rng.sample(calls, min(sample, len(calls)))
    def_sample = rng.sample(defs, min(sample, len(defs)))
    texts: dict[str, str] = {}

    def script(rel: str) -> jedi.Script:
        if rel not in texts:
            texts[rel] = (root / rel).read_text(encoding="utf-8", errors="replace")
        return jedi.Script(texts[rel], path=str(root / rel), project=project)

    d_pr, scored_calls = PR(), 0
    for c in call_sample:
        ref = {
            (r, n.line)
            for n in script(c.file).goto(c.line, c.column, follow_imports=True)
            if n.type == "function" and n.line and (r := _rel(root, n.module_path))
        }
        if not ref:
            continue
        scored_calls += 1
        d_pr.add(set(graph.definitions(c.name)), ref)

    e_pr = PR()
    for d in def_sample:
        refs = script(d.file).get_references(d.line, d.column, include_builtins=False)
        callers: set[Site] = set()
        for n in refs:
            r = _rel(root, n.module_path)
            if r is None or (r == d.file and n.line == d.line) or not n.line:
                continue
            script(r)
            lines = texts[r].splitlines()
            src = lines[n.line - 1] if n.line <= len(lines) else ""
            after = src[n.column + len(d.name) :].lstrip() if src else ""
            if after.startswith("("):
                callers.add((r, n.line))
        e_pr.add(set(graph.callers(d.file, d.line, d.name)), callers)
    return {
        "definitions": {
            **d_pr.as_dict(),
            "sampled_calls": len(call_sample),
            "scored_calls": scored_calls,
        },
        "invoke_edges": {**e_pr.as_dict(), "sampled_definitions": len(def_sample)},
    }


__all__ = ["CallSite", "Definition", "GraphReadAPI", "collect_sites", "graph_fidelity"]
