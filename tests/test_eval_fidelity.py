"""Graph fidelity vs jedi: the scoring on the fixture repo with a simple name-index graph,
and ctxfast's own graph (indexed for real) through the CLI on a tree built here."""

import ast
import json
import sys
from pathlib import Path

import pytest

from ctxfast.cli import main
from ctxfast.eval.fidelity import CodeGraphReader, collect_sites, graph_fidelity
from ctxfast.repository import Repository

ALPHA = Path(__file__).parent / "fixtures" / "eval" / "repos" / "alpha"


class NameIndexGraph:
    """A deliberately simple graph: functions and classes by bare name, callers = same-name
    call sites."""

    def __init__(self, root: Path):
        self.calls, self.defs = collect_sites(root)
        self.classes = {
            (p.relative_to(root).as_posix(), n.lineno, n.name)
            for p in root.rglob("*.py")
            for n in ast.walk(ast.parse(p.read_text()))
            if isinstance(n, ast.ClassDef)
        }

    def definitions(self, file, line, name):
        defs = {(d.file, d.line) for d in self.defs if d.name == name}
        return defs | {(f, n) for f, n, cls in self.classes if cls == name}

    def callers(self, file, line, name):
        return {(c.file, c.line) for c in self.calls if c.name == name}


class EmptyGraph:
    def definitions(self, file, line, name):
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
    # split_tokens, parse_token, parse_all, escape_html, TokenParser (a class), ...
    assert d["scored_calls"] >= 5
    assert d["precision"] == 1.0 and d["recall"] == 1.0
    # callers: jedi finds e.g. render.py's escape_html(...) and parse_all's parse_token(...)
    assert e["reference"] >= 3
    assert e["recall"] == 1.0


def test_empty_graph_has_zero_recall():
    res = graph_fidelity(ALPHA, EmptyGraph(), sample=100, seed=0)
    assert res["definitions"]["recall"] == 0.0
    assert res["definitions"]["precision"] is None
    assert res["invoke_edges"]["recall"] == 0.0


# A decorated definition (graph rows start at the decorator, jedi at the name), a method
# called through ``self``, and a same-named function in another module that a name-only
# lookup would confuse with the imported one.
PKG = {
    "pkg/__init__.py": "",
    "pkg/util.py": (
        "import functools\n"
        "\n"
        "\n"
        "def deco(f):\n"
        "    @functools.wraps(f)\n"
        "    def inner(*a):\n"
        "        return f(*a)\n"
        "\n"
        "    return inner\n"
        "\n"
        "\n"
        "@deco\n"
        "def helper(x):\n"
        "    return x + 1\n"
        "\n"
        "\n"
        "def other(x):\n"
        "    return helper(x) * 2\n"
    ),
    "pkg/main.py": (
        "from pkg.util import helper, other\n"
        "\n"
        "\n"
        "class Runner:\n"
        "    def step(self, x):\n"
        "        return helper(x)\n"
        "\n"
        "    def run(self, x):\n"
        "        return self.step(other(x))\n"
        "\n"
        "\n"
        "def make():\n"
        "    return Runner()\n"
    ),
    "pkg/dup.py": "def helper(x):\n    return x\n",
}


@pytest.fixture
def pkg(tmp_path):
    root = tmp_path / "tree"
    for rel, text in PKG.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def test_ctxfast_graph_reader(pkg, tmp_path):
    repo = Repository(pkg, tmp_path / "idx")
    repo.index()
    g = CodeGraphReader(repo.graph, pkg)
    # Call sites resolve to the imported helper (at its def line, not the decorator's).
    assert g.definitions("pkg/main.py", 6, "helper") == {("pkg/util.py", 13)}
    assert g.definitions("pkg/util.py", 18, "helper") == {("pkg/util.py", 13)}
    assert g.definitions("pkg/main.py", 9, "step") == {("pkg/main.py", 5)}
    assert g.definitions("pkg/main.py", 9, "other") == {("pkg/util.py", 17)}
    assert g.definitions("pkg/main.py", 13, "Runner") == {("pkg/main.py", 4)}
    assert g.callers("pkg/util.py", 13, "helper") == {("pkg/util.py", 18), ("pkg/main.py", 6)}
    assert g.callers("pkg/dup.py", 1, "helper") == set()


def test_cli_fidelity_on_ctxfast_graph(pkg, tmp_path, capsys):
    out = tmp_path / "fid.json"
    idx = tmp_path / "idx"
    args = ["eval", "fidelity", str(pkg), "--sample", "100", "--out", str(out)]
    assert main([*args, "--index-dir", str(idx)]) == 0
    assert (idx / "recon.db").exists() and not (pkg / ".ctxfast").exists()
    res = json.loads(out.read_text())
    d, e = res["definitions"], res["invoke_edges"]
    # jedi resolves the five in-tree calls (helper x2, other, self.step, the class Runner);
    # both sides agree.
    assert d["scored_calls"] == 5 and d["tp"] == 5
    assert d["precision"] == 1.0 and d["recall"] == 1.0
    # Callers: helper <- util:18, main:6; other <- main:9; step <- main:9; and the decorator
    # deco <- util:12 (``@deco`` invokes it: counted on both sides).
    assert e["reference"] == 5 and e["recall"] == 1.0 and e["precision"] == 1.0
    assert res["disagreements"] == {"definitions": [], "invoke_edges": []}
    text = capsys.readouterr().out
    assert "definitions (Q2)   precision 1.000  recall 1.000" in text
    assert "invoke edges (Q3)" in text


def test_cli_fidelity_without_jedi(pkg, tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "jedi", None)  # what an environment without jedi sees
    rc = main(["eval", "fidelity", str(pkg), "--index-dir", str(tmp_path / "idx")])
    assert rc == 2
    assert "pip install 'ctxfast[fidelity]'" in capsys.readouterr().err
    assert not (tmp_path / "idx").exists()  # refused before indexing
