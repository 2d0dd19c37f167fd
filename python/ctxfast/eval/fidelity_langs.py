"""Graph fidelity for Go, TypeScript, JavaScript, Java, Rust, PHP and Ruby against
independent analysers.

jedi is the reference for Python (:mod:`ctxfast.eval.fidelity`). For the other graph
languages the reference is the compiler's own name resolution, run as a small program that
writes every call site with the declaration the compiler binds it to (the analysers, in the
source repository's ``benches/analysers/``; see :func:`analysers_dir`):

* Go — ``go/types`` (the standard library's type checker; Debian ``golang-go``), module
  packages type-checked from source;
* TypeScript — the TypeScript compiler's type checker (Debian ``node-typescript``), and for
  JavaScript the same checker reading the ``.js`` files as it reads JavaScript (``require``,
  ``module.exports`` and prototype assignments bound, no types declared);
* Java — javac's attribution through the Compiler Tree API (the JDK's ``jdk.compiler``);
* Rust — rust-analyzer's LSIF export (the rustup component ``rust-analyzer``): Cargo
  workspaces loaded as the editor loads them, macros expanded, traits resolved;
* PHP — nikic/PHP-Parser's name resolution (Debian ``php-parser`` on ``php-cli``): names
  qualified by namespace and ``use`` imports, methods looked up through traits and parents;
* Ruby — Ripper, Ruby's own parser (Debian ``ruby``), with Ruby's constant lookup by lexical
  nesting and its method lookup through prepended, included and extended modules and
  superclasses. Neither language states a value's type, so for both only the calls whose
  receiver the code names (``$this``, ``self``, a class, an implicit receiver) are bound.

Each is installable from Debian (or rustup) and independent of tree-sitter and of ctxfast's
resolver: the language's own implementation of name binding where it has a static one, and
for Ruby, which has none, Ruby's own parser with the lookup order the language documents.
Calls into libraries that are not in the tree (not downloadable here) resolve to nothing in
the tree; a site the analyser could not resolve at all is not scored.

Scored, on a seeded sample of resolved call sites: **definitions** (Q2) — the graph's invoke
targets of the call's name on that line against the analyser's in-tree declaration, both mapped
to the graph definition whose span holds them (a constructor counts as its class); and, on a
seeded sample of declarations the analyser saw called, **invoke edges** (Q3) — the graph's
caller sites of that definition against the analyser's call sites of it, as ``(file, line)``.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ctxfast.eval.errors import EvalError
from ctxfast.eval.fidelity import PR

#: Where an installed package finds the analysers (a source checkout finds them by itself).
ANALYSERS_ENV = "CTXFAST_ANALYSERS_DIR"
#: Where Debian's node-typescript installs the compiler (``require`` path).
DEBIAN_TYPESCRIPT = "/usr/share/nodejs/typescript"
#: Where Debian's php-parser installs nikic/PHP-Parser's autoloader.
DEBIAN_PHP_PARSER = "/usr/share/php/PhpParser/autoload.php"
#: Seconds one analyser run may take on a large tree before it is abandoned.
DEFAULT_ANALYSER_TIMEOUT = 1800.0


@dataclass(frozen=True)
class RefSite:
    """One call site as the analyser saw it; ``targets`` are in-tree ``(file, line)``."""

    file: str
    line: int
    name: str
    targets: tuple[tuple[str, int], ...]
    resolved: bool


def analysers_dir() -> Path:
    """The directory holding the analyser programs.

    They are programs of the evaluation lab, not of the library, so they stay in the source
    repository (``benches/analysers/``) and out of the wheel: ``$CTXFAST_ANALYSERS_DIR`` names
    them for an installed package, and a source checkout (an editable install) finds its own.
    """
    named = os.environ.get(ANALYSERS_ENV)
    if named:
        return Path(named)
    checkout = Path(__file__).resolve().parents[3] / "benches" / "analysers"
    if checkout.is_dir():
        return checkout
    raise EvalError(
        "the call-graph analysers are in the ctxfast source repository (benches/analysers/): "
        f"run from a source checkout (pip install -e .) or set {ANALYSERS_ENV} to that directory"
    )


def _tool(name: str, need: str) -> str:
    """The path of program ``name``, or an error saying what to install (``need``)."""
    found = shutil.which(name)
    if found is None:
        raise EvalError(need)
    return found


def analyser_command(language: str, root: Path) -> tuple[list[str], str]:
    """The command printing ``language``'s call sites of ``root``, and the analyser's name."""
    if language == "go":
        go = _tool("go", "Go fidelity needs the Go toolchain: apt-get install golang-go")
        return [go, "run", str(analysers_dir() / "go_calls.go"), str(root)], "go/types"
    if language in ("typescript", "tsx", "javascript"):
        node = _tool("node", "TypeScript fidelity needs node and node-typescript (Debian)")
        ts = DEBIAN_TYPESCRIPT if Path(DEBIAN_TYPESCRIPT).exists() else "typescript"
        cmd = [node, str(analysers_dir() / "ts_calls.js"), str(root), ts]
        if language == "javascript":
            return [*cmd, "js"], "tsc checker (JavaScript)"
        return cmd, "tsc checker"
    if language == "java":
        java = _tool("java", "Java fidelity needs a JDK 17+ (apt-get install openjdk-17-jdk)")
        return [java, str(analysers_dir() / "JavaCalls.java"), str(root)], "javac attribution"
    if language == "rust":
        _tool("rust-analyzer", "Rust fidelity needs the rustup component rust-analyzer")
        cmd = [sys.executable, str(analysers_dir() / "rust_calls.py"), str(root)]
        return cmd, "rust-analyzer lsif"
    if language == "php":
        need = "PHP fidelity needs php-cli and php-parser (apt-get install both)"
        php = _tool("php", need)
        if not Path(DEBIAN_PHP_PARSER).exists():
            raise EvalError(need)
        cmd = [php, str(analysers_dir() / "php_calls.php"), str(root), DEBIAN_PHP_PARSER]
        return cmd, "PHP-Parser names"
    if language == "ruby":
        ruby = _tool("ruby", "Ruby fidelity needs Ruby (apt-get install ruby)")
        return [ruby, str(analysers_dir() / "ruby_calls.rb"), str(root)], "Ripper lookup"
    raise EvalError(
        f"no independent analyser for {language!r}"
        " (go, typescript, javascript, java, rust, php, ruby)"
    )


def reference_sites(
    language: str, root: Path, timeout: float = DEFAULT_ANALYSER_TIMEOUT
) -> tuple[list[RefSite], str]:
    cmd, name = analyser_command(language, root)
    try:
        out = subprocess.run(
            cmd, capture_output=True, text=True, timeout=timeout, check=False, cwd=str(root)
        )
    except subprocess.TimeoutExpired as exc:
        raise EvalError(f"{name} did not finish on {root} in {timeout:.0f} s") from exc
    if out.returncode != 0 and not out.stdout:
        raise EvalError(f"{name} failed on {root}: {out.stderr.strip()[-400:]}")
    sites = []
    for line in out.stdout.splitlines():
        if not line.strip():
            continue
        r = json.loads(line)
        if not r.get("file"):
            continue
        targets = tuple(
            (t["file"], int(t["line"])) for t in r["targets"] if t.get("file") and t["callable"]
        )
        sites.append(RefSite(r["file"], int(r["line"]), r["name"], targets, bool(r["resolved"])))
    return sites, name


def _definition_key(graph: Any, file: str, line: int) -> str:
    """The graph definition holding ``file:line`` (a constructor stands for its class), or a
    marker naming the place when the graph has no definition there."""
    found = [n for n in graph.definitions_enclosing(file, line) if n.kind != "def"]
    if not found:
        return f"missing:{file}:{line}"
    node = found[0]
    if len(found) > 1 and found[1].kind == "class" and node.name in (found[1].name, "constructor"):
        node = found[1]
    return str(node.id)


def _graph_targets(graph: Any, file: str, line: int, name: str) -> set[str]:
    """Invoke targets of the call of ``name`` on ``file:line`` (a site row covers a line)."""
    out = set()
    for site, edge in graph.file_edges(file, "invoke"):
        if site.line != line:
            continue
        target = graph.node(edge.dst)
        if target is not None and target.name in (name, "constructor", "new"):
            out.add(_normalise(graph, target))
    return out


def _normalise(graph: Any, node: Any) -> str:
    return _definition_key(graph, node.file, node.line)


def call_graph_fidelity(
    root: str | Path,
    graph: Any,
    language: str,
    sample: int = 200,
    seed: int = 0,
    sites: list[RefSite] | None = None,
    analyser: str = "",
) -> dict[str, Any]:
    """Precision/recall of the graph's definitions (Q2) and callers (Q3) for one language."""
    root = Path(root)
    if sites is None:
        sites, analyser = reference_sites(language, root)
    resolved = [s for s in sites if s.resolved]
    rng = random.Random(seed)
    call_sample = rng.sample(resolved, min(sample, len(resolved)))
    d_pr, d_diff = PR(), []
    for s in call_sample:
        ref = {_definition_key(graph, f, ln) for f, ln in s.targets}
        got = _graph_targets(graph, s.file, s.line, s.name)
        d_pr.add(got, ref)  # type: ignore[arg-type]  # definition ids, not sites
        if got != ref:
            d_diff.append(
                {
                    "site": f"{s.file}:{s.line}",
                    "name": s.name,
                    "graph_only": sorted(got - ref),
                    "analyser_only": sorted(ref - got),
                }
            )
    callers_of: dict[str, set[tuple[str, int]]] = defaultdict(set)
    names_of: dict[str, set[str]] = defaultdict(set)
    for s in resolved:
        for f, ln in s.targets:
            key = _definition_key(graph, f, ln)
            if not key.startswith("missing:"):
                callers_of[key].add((s.file, s.line))
                names_of[key].add(s.name)
    # The analysers read non-test sources only: graph callers elsewhere are not judged. Nor
    # is a graph caller where the analyser met a call of that name it could not bind (PHP's
    # and Ruby's `$x->m()`, `x.m` on a value of unstated type): no reference to judge it by.
    covered = {s.file for s in sites}
    unbound = {(s.file, s.line, s.name) for s in sites if not s.resolved} - {
        (s.file, s.line, s.name) for s in resolved
    }
    defs = sorted(callers_of)
    def_sample = rng.sample(defs, min(sample, len(defs)))
    e_pr, e_diff = PR(), []
    for key in def_sample:
        g_sites = {
            (n.file, n.line)
            for n in graph.callers(key)
            if n.file in covered
            and not any((n.file, n.line, name) in unbound for name in names_of[key])
        }
        r_sites = callers_of[key]
        e_pr.add(g_sites, r_sites)
        if g_sites != r_sites:
            e_diff.append(
                {
                    "definition": key,
                    "graph_only": sorted(f"{f}:{n}" for f, n in g_sites - r_sites),
                    "analyser_only": sorted(f"{f}:{n}" for f, n in r_sites - g_sites),
                }
            )
    return {
        "analyser": analyser,
        "language": language,
        "sample": sample,
        "seed": seed,
        "definitions": {
            **d_pr.as_dict(),
            "sampled_calls": len(call_sample),
            "resolved_calls": len(resolved),
            "all_calls": len(sites),
        },
        "invoke_edges": {**e_pr.as_dict(), "sampled_definitions": len(def_sample)},
        "disagreements": {"definitions": d_diff, "invoke_edges": e_diff},
    }


__all__ = [
    "ANALYSERS_ENV",
    "DEBIAN_PHP_PARSER",
    "RefSite",
    "analyser_command",
    "analysers_dir",
    "call_graph_fidelity",
    "reference_sites",
]
