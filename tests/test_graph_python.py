"""Python name resolution in the code graph: imports, attributes, self/cls, nesting, filters."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from ctxfast import Repository


def write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(textwrap.dedent(text).lstrip("\n"))


FILES = {
    "pkg/__init__.py": """
        from .utils import parse_args as pa
        """,
    "pkg/utils.py": '''
        import os
        import requests

        LIMIT = 3


        def parse_args(argv):
            """Parse the command line.

            More text.
            """
            return os.path.join(*argv)


        def helper():
            return requests.get("x")
        ''',
    "pkg/models.py": """
        class Base:
            def save(self):
                return self.validate()

            def validate(self):
                return True


        class Child(Base):
            def run(self):
                self.save()
                return self.extra()

            @classmethod
            def build(cls):
                return cls.make()

            @classmethod
            def make(cls):
                return cls()
        """,
    "pkg/cli.py": """
        import pkg.utils
        from pkg import utils
        from pkg.utils import parse_args as parse
        from . import models
        from .models import Child
        from .missing_mod import nothing


        def main(argv):
            parse(argv)
            utils.helper()
            pkg.utils.parse_args(argv)
            print("done")
            len(argv)
            c = Child()
            c.run()
            models.Base().save()
            undefined_thing()
            utils.not_there()

            def inner():
                return outer_helper()

            def outer_helper():
                return 1

            return inner()
        """,
}


@pytest.fixture()
def graph(tmp_path: Path):
    write(tmp_path, FILES)
    repo = Repository(tmp_path)
    stats = repo.index()
    assert stats.files_parsed == 4
    return repo.graph


def one(graph, qualname: str):
    hits = [n for n in graph.lookup(qualname) if n.qualname == qualname]
    assert len(hits) == 1, (qualname, hits)
    return hits[0]


def callee_qualnames(graph, qualname: str) -> set[str]:
    return {n.qualname for n in graph.callees(one(graph, qualname).id)}


def test_node_schema_and_kinds(graph) -> None:
    pa = one(graph, "pkg.utils.parse_args")
    assert (pa.kind, pa.name, pa.file, pa.line, pa.col) == (
        "function",
        "parse_args",
        "pkg/utils.py",
        7,
        0,
    )
    assert pa.id == "pkg.utils.parse_args:7"
    assert pa.end_line == 12
    assert one(graph, "pkg.models.Child").kind == "class"
    assert one(graph, "pkg.models.Child.run").kind == "function"
    assert one(graph, "pkg.utils.LIMIT").kind == "var"
    mod = one(graph, "pkg.utils")
    assert (mod.kind, mod.line, mod.id) == ("def", 1, "pkg.utils:1")


def test_signature_and_docstring(graph) -> None:
    sig = graph.signature("pkg.utils.parse_args:7")
    assert sig.signature == "def parse_args(argv):"
    assert sig.doc == "Parse the command line."


def test_contain_edges(graph) -> None:
    run = one(graph, "pkg.models.Child.run")
    assert [e.dst for e in graph.edges_from(run.id, "contain")] == ["pkg.models.Child:9"]
    child = one(graph, "pkg.models.Child")
    assert [e.dst for e in graph.edges_from(child.id, "contain")] == ["pkg.models:1"]


def test_import_forms_resolve(graph) -> None:
    main = one(graph, "pkg.cli.main")
    callees = callee_qualnames(graph, "pkg.cli.main")
    # from x import y as z; module attribute; dotted absolute import
    assert "pkg.utils.parse_args" in callees
    assert "pkg.utils.helper" in callees
    # class instantiation via relative `from .models import Child` and `models.Base()`
    assert {"pkg.models.Child", "pkg.models.Base"} <= callees
    # nested function
    assert "pkg.cli.main.inner" in callees
    assert main.kind == "function"


def test_import_edges(graph) -> None:
    dsts = {
        e.dst for n in graph.nodes_in_file("pkg/cli.py") for e in graph.edges_from(n.id, "import")
    }
    assert {"pkg.utils:1", "pkg.utils.parse_args:7", "pkg.models:1", "pkg.models.Child:9"} <= dsts
    # __init__ re-export: `from .utils import parse_args as pa`
    init_dsts = {
        e.dst for n in graph.nodes_in_file("pkg/__init__.py") for e in graph.edges_from(n.id)
    }
    assert "pkg.utils.parse_args:7" in init_dsts


def test_self_and_cls_methods_including_base_class(graph) -> None:
    assert callee_qualnames(graph, "pkg.models.Base.save") == {"pkg.models.Base.validate"}
    # self.save() is inherited from the project-internal base class
    assert "pkg.models.Base.save" in callee_qualnames(graph, "pkg.models.Child.run")
    assert callee_qualnames(graph, "pkg.models.Child.build") == {"pkg.models.Child.make"}


def test_nested_function_resolves_sibling(graph) -> None:
    assert callee_qualnames(graph, "pkg.cli.main.inner") == {"pkg.cli.main.outer_helper"}


def test_builtins_stdlib_third_party_have_no_edges(graph) -> None:
    dsts = {e.dst for n in graph.nodes_in_file("pkg/utils.py") for e in graph.edges_from(n.id)}
    assert all(d.startswith("pkg.") for d in dsts)
    names = {u.name for u in graph.unresolved()}
    assert not names & {"print", "len", "os.path.join", "requests.get", "c.run", "self.extra"}


def test_unresolved_names_are_recorded(graph) -> None:
    names = {(u.name, u.file) for u in graph.unresolved()}
    assert ("undefined_thing", "pkg/cli.py") in names
    assert ("utils.not_there", "pkg/cli.py") in names
    assert (".missing_mod.nothing", "pkg/cli.py") in names
    u = next(u for u in graph.unresolved() if u.name == "undefined_thing")
    assert u.line == 18 and u.node_id == "pkg.cli.main:18"
    assert graph.node(u.node_id).kind == "ref"


def test_callers_and_enclosing(graph) -> None:
    callers = graph.callers("pkg.utils.parse_args:7")
    assert {c.qualname for c in callers} == {"pkg.cli.main"}
    assert {c.line for c in callers} == {10, 12}
    inner = graph.definitions_enclosing("pkg/cli.py", 22)
    assert [n.qualname for n in inner] == ["pkg.cli.main.inner", "pkg.cli.main", "pkg.cli"]


def test_batched_neighbour_queries_equal_the_per_row_lookups(graph, monkeypatch) -> None:
    """scope_edge_targets / edge_targets / scope_definitions are the per-edge and per-site
    lookups in one query each: same nodes, same order, for every definition of the fixture;
    and they stay correct when the keys span several batches."""
    defs = [n for f in graph.files() for n in graph.nodes_in_file(f.path) if n.is_definition]
    assert defs
    checked_sites = 0
    for batch in (500, 1):
        monkeypatch.setattr("ctxfast.recon.graph._BATCH", batch)
        for d in defs:
            by_edge = [graph.node(e.dst) for _, e in graph.scope_edges(d)]
            assert graph.scope_edge_targets(d) == [n for n in by_edge if n is not None]
            contained = [graph.node(e.dst) for e in graph.edges_from(d.id, "contain")]
            assert graph.edge_targets(d.id, "contain") == [n for n in contained if n]
            sites = graph.callers(d.id)
            assert graph.scope_definitions(sites) == [graph.scope_definition(s) for s in sites]
            checked_sites += sum(1 for s in sites if not s.is_definition)
    all_refs = [n for f in graph.files() for n in graph.nodes_in_file(f.path)]
    assert graph.scope_definitions(all_refs) == [graph.scope_definition(s) for s in all_refs]
    assert checked_sites > 0 and graph.scope_definitions([]) == []


def test_lookup_by_name_and_qualname(graph) -> None:
    assert [n.qualname for n in graph.lookup("parse_args")] == ["pkg.utils.parse_args"]
    assert [n.qualname for n in graph.lookup("models.Child")] == ["pkg.models.Child"]
    assert graph.lookup("nope") == []


def test_absolute_import_of_stdlib_name_is_not_a_project_module(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "lib/__init__.py": "",
            "lib/json.py": "def loads(s):\n    return s\n",
            "lib/user.py": "import json\n\n\ndef f():\n    return json.loads('1')\n",
            # script-style: tests/ is a sys.path root (no __init__.py)
            "tests/helpers.py": "def make():\n    return 1\n",
            "tests/test_a.py": "from helpers import make\n\n\ndef test_x():\n    make()\n",
        },
    )
    repo = Repository(tmp_path)
    repo.index()
    g = repo.graph
    assert g.callees("lib.user.f:4") == []
    assert g.unresolved() == []
    assert [n.qualname for n in g.callees("tests.test_a.test_x:4")] == ["tests.helpers.make"]
