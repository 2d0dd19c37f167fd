"""Graph fidelity against an independent analyser (``jedi``).

On a seeded sample of call sites and function definitions of a tree, compare the code graph's
answers with jedi's: definitions (question Q2 — where the callee of a call site is defined; jedi
``goto``) and callers (Q3 — invoke edges into a definition; jedi ``get_references`` filtered to
call sites). The graph is reached through a small read API (:class:`GraphReadAPI`;
:class:`CodeGraphReader` wraps ctxfast's own graph), so this module does not depend on how
a graph is built. Sites are ``(file, line)`` of the ``def`` line and of the call's name.
"""

from __future__ import annotations

import ast
import random
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from ctxfast.eval.errors import EvalError

Site = tuple[str, int]  # (POSIX relative file, 1-based line)

JEDI_MISSING = (
    "graph fidelity needs the independent analyser jedi: pip install 'ctxfast[fidelity]' "
    "(or pip install jedi)"
)


class GraphReadAPI(Protocol):
    def definitions(self, file: str, line: int, name: str) -> Iterable[Site]:
        """Where the graph says the callee ``name`` called at ``file:line`` is defined."""
        ...

    def callers(self, file: str, line: int, name: str) -> Iterable[Site]:
        """Call sites whose invoke edge points at the definition ``name`` at ``file:line``."""
        ...


def require_jedi() -> Any:
    """The ``jedi`` module, or :class:`EvalError` saying how to install it."""
    try:
        import jedi
    except ImportError as exc:
        raise EvalError(JEDI_MISSING) from exc
    return jedi


class CodeGraphReader:
    """:class:`GraphReadAPI` over ctxfast's code graph (:class:`ctxfast.recon.graph.CodeGraph`).

    Definitions are the targets of the invoke edges leaving the reference site on the call's
    line (filtered to the called name: one site row covers every call of a line); callers are
    the sites of :meth:`CodeGraph.callers`. Graph definitions are reported at their ``def``
    line so decorated functions compare equal to jedi's name position.
    """

    def __init__(self, graph: Any, root: Path) -> None:
        self.graph = graph
        self.root = root
        self._def_lines: dict[str, dict[int, int]] = {}

    def _def_line(self, file: str, line: int) -> int:
        """Map a definition's first line (its first decorator) to its ``def`` line."""
        if file not in self._def_lines:
            table: dict[int, int] = {}
            try:
                tree = ast.parse((self.root / file).read_text(encoding="utf-8", errors="replace"))
            except (OSError, SyntaxError, ValueError):
                tree = None
            for node in ast.walk(tree) if tree is not None else ():
                if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                    for dec in node.decorator_list:
                        table.setdefault(dec.lineno, node.lineno)
            self._def_lines[file] = table
        return self._def_lines[file].get(line, line)

    def definitions(self, file: str, line: int, name: str) -> set[Site]:
        out: set[Site] = set()
        for site, edge in self.graph.file_edges(file, "invoke"):
            if site.line != line:
                continue
            target = self.graph.node(edge.dst)
            if target is not None and target.name == name:
                out.add((target.file, self._def_line(target.file, target.line)))
        return out

    def callers(self, file: str, line: int, name: str) -> set[Site]:
        found = [
            n
            for n in self.graph.nodes_in_file(file)
            if n.name == name and n.kind == "function" and n.line <= line <= n.end_line
        ]
        if not found:
            return set()
        node = max(found, key=lambda n: n.line)  # innermost: the def closest above the line
        return {(s.file, s.line) for s in self.graph.callers(node.id)}


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


def _site(s: Site) -> str:
    return f"{s[0]}:{s[1]}"


def _disagreement(
    key: str, where: str, name: str, graph: set[Site], jedi_sites: set[Site]
) -> dict[str, object]:
    """One disagreement row: what only the graph and what only jedi reported."""
    return {
        key: where,
        "name": name,
        "graph_only": sorted(map(_site, graph - jedi_sites)),
        "jedi_only": sorted(map(_site, jedi_sites - graph)),
    }


def _invoking_references(
    root: Path, refs: list[Any], name: str, text: Callable[[str], str]
) -> set[Site]:
    """The sites among jedi's references to ``name`` that invoke it. The graph's invoke edges
    are calls, while jedi's references also count imports, assignments and mentions, so only
    a reference followed by ``(`` or applied as a bare ``@decorator`` is a caller."""
    callers: set[Site] = set()
    for n in refs:
        r = _rel(root, n.module_path)
        # jedi lists overriding/overridden ``def``s of the same name among references.
        if r is None or not n.line or n.is_definition():
            continue
        lines = text(r).splitlines()
        src = lines[n.line - 1] if n.line <= len(lines) else ""
        after = src[n.column + len(name) :].lstrip()
        before = src[: n.column].strip()
        # ``name(`` calls it; so does ``@name`` (a decorator is invoked on the definition).
        if after.startswith("(") or before == "@":
            callers.add((r, n.line))
    return callers


def graph_fidelity(
    root: str | Path, graph: GraphReadAPI, sample: int = 50, seed: int = 0
) -> dict[str, Any]:
    """Precision/recall of the graph's definitions and invoke edges against jedi.

    Only call sites that jedi resolves to a function or class inside the tree are scored for
    definitions (an unresolvable dynamic call says nothing about either side). jedi's
    references count as callers when followed by ``(`` or applied as a bare ``@decorator``
    (both invoke the function). Every sampled
    definition is scored for callers. Each scored item where the two sides differ is listed
    under ``disagreements`` so a human can judge which side is wrong.
    """
    jedi = require_jedi()
    root = Path(root)
    project = jedi.Project(str(root))
    calls, defs = collect_sites(root)
    rng = random.Random(seed)
    call_sample = rng.sample(calls, min(sample, len(calls)))
    def_sample = rng.sample(defs, min(sample, len(defs)))
    texts: dict[str, str] = {}

    def text(rel: str) -> str:
        if rel not in texts:
            texts[rel] = (root / rel).read_text(encoding="utf-8", errors="replace")
        return texts[rel]

    def script(rel: str) -> Any:
        return jedi.Script(text(rel), path=str(root / rel), project=project)

    # jedi itself occasionally crashes on a query (e.g. a parso cache KeyError inside its
    # Django plugin); such an item has no reference answer, so it is listed, not scored.
    analyser_errors: list[dict[str, str]] = []

    def jedi_query(where: str, query: Callable[[Any], list[Any]], site: Any) -> list[Any] | None:
        try:
            return query(site)
        except Exception as exc:
            analyser_errors.append({"item": where, "error": f"{type(exc).__name__}: {exc}"})
            return None

    def goto(c: CallSite) -> list[Any]:
        return list(script(c.file).goto(c.line, c.column, follow_imports=True))

    def references(d: Definition) -> list[Any]:
        return list(script(d.file).get_references(d.line, d.column, include_builtins=False))

    d_pr, scored_calls, d_diff = PR(), 0, []
    for c in call_sample:
        names = jedi_query(f"goto {c.file}:{c.line}:{c.column}", goto, c)
        ref = {
            (r, n.line)
            for n in names or ()
            if n.type in ("function", "class") and n.line and (r := _rel(root, n.module_path))
        }
        if not ref:
            continue
        scored_calls += 1
        got = set(graph.definitions(c.file, c.line, c.name))
        d_pr.add(got, ref)
        if got != ref:
            d_diff.append(_disagreement("site", f"{c.file}:{c.line}", c.name, got, ref))

    e_pr, e_diff = PR(), []
    for d in def_sample:
        refs = jedi_query(f"get_references {d.file}:{d.line}:{d.column}", references, d)
        if refs is None:
            continue
        callers = _invoking_references(root, refs, d.name, text)
        got = set(graph.callers(d.file, d.line, d.name))
        e_pr.add(got, callers)
        if got != callers:
            e_diff.append(_disagreement("definition", f"{d.file}:{d.line}", d.name, got, callers))
    return {
        "analyser": f"jedi {jedi.__version__}",
        "sample": sample,
        "seed": seed,
        "definitions": {
            **d_pr.as_dict(),
            "sampled_calls": len(call_sample),
            "scored_calls": scored_calls,
        },
        "invoke_edges": {
            **e_pr.as_dict(),
            "sampled_definitions": len(def_sample),
            "scored_definitions": len(def_sample)
            - sum(e["item"].startswith("get_references") for e in analyser_errors),
        },
        "analyser_errors": analyser_errors,
        "disagreements": {"definitions": d_diff, "invoke_edges": e_diff},
    }


def format_fidelity(res: dict[str, Any]) -> str:
    """The two precision/recall lines a person reads (the JSON holds the rest), for a Python
    result (scored against jedi) and for another language's analyser result alike."""

    def f(x: Any) -> str:
        return "  -  " if x is None else f"{x:.3f}"

    d, e = res["definitions"], res["invoke_edges"]
    if "language" in res:  # :func:`ctxfast.eval.fidelity_langs.call_graph_fidelity`
        title = f"graph fidelity ({res['language']}) vs {res['analyser']}"
        ref = "analyser"
        calls = f"({d['sampled_calls']} sampled of {d['resolved_calls']} resolved calls)"
        defs = f"({e['sampled_definitions']} sampled definitions)"
    else:  # :func:`graph_fidelity`
        title = f"graph fidelity vs {res['analyser']}"
        ref = "jedi"
        calls = f"({d['scored_calls']} of {d['sampled_calls']} sampled calls resolved by jedi)"
        defs = (
            f"({e['scored_definitions']} of {e['sampled_definitions']} sampled definitions; "
            f"{len(res['analyser_errors'])} jedi crashes not scored)"
        )
    return "\n".join(
        [
            f"{title} (sample {res['sample']}, seed {res['seed']})",
            f"definitions (Q2)   precision {f(d['precision'])}  recall {f(d['recall'])}  "
            f"tp {d['tp']} graph {d['graph']} {ref} {d['reference']}  {calls}",
            f"invoke edges (Q3)  precision {f(e['precision'])}  recall {f(e['recall'])}  "
            f"tp {e['tp']} graph {e['graph']} {ref} {e['reference']}  {defs}",
        ]
    )


__all__ = [
    "CallSite",
    "CodeGraphReader",
    "Definition",
    "GraphReadAPI",
    "collect_sites",
    "format_fidelity",
    "graph_fidelity",
    "require_jedi",
]
