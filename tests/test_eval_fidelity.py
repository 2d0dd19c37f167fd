"""Graph fidelity vs jedi on the fixture repo, with a real (ast name-index) graph."""

import ast
from pathlib import Path

from ctxfast.eval.fidelity import collect_sites, graph_fidelity

ALPHA = Path(__file__).parent / "fixtures" / "eval" / "repos" / "alpha"


class NameIndexGraph:
    """A deliberately simple graph: defs by bare name, callers = same-name call sites."""

    def __init__(self, root: Path):
        self.calls, self.defs = collect_sites(root)

    def definitions(self, name):
        return {(d.file, d.line) for d in self.defs if d.name == name.rsplit(".", 1)[-1]}

    def callers(self, file, line, name):
        return {(c.file, c.line) for c in self.calls if c.name == name}


class EmptyGraph:
    def definitions(self, name):
        return set()

    def callers(self, file, line, name):
        return set()


def test_collect_sites():
    calls, defs = collect_sites(ALPHA)
    assert {d.name for d in defs} >= {"split_tokens", "parse_token", "render_html"}
    assert ("alpha/render.py", "escape_html") in {(c.file, c.name) for c in calls}
    src = (ALPHA / "alpha/parser.py").read_text()
    assert any(isinstance(n, ast.FunctionDef) for n in ast.walk(ast.parse(src)))


def test_name_index_graph_agrees_with_jedi_on_unambiguous_fixture():
    res = graph_fidelity(ALPHA, NameIndexGraph(ALPHA), sample=100, seed=0)
    d, e = res["definitions"], res["invoke_edges"]
    assert d["scored_calls"] >= 4  # split_tokens, parse_token, parse_all, escape_html, ...
    assert d["precision"] == 1.0 and d["recall"] == 1.0
    # callers: jedi finds e.g. render.py's escape_html(...) and parse_all's parse_token(...)
    assert e["reference"] >= 3
    assert e["recall"] == 1.0


def test_empty_graph_has_zero_recall():
    res = graph_fidelity(ALPHA, EmptyGraph(), sample=100, seed=0)
    assert res["definitions"]["recall"] == 0.0
    assert res["definitions"]["precision"] is None
    assert res["invoke_edges"]["recall"] == 0.0
