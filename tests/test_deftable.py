"""The native definition table answers every lookup as the Python dictionaries it replaced:
the reference below is that code (rows grouped by file, by name and by qualname, a
qualname's longest definition in its first file winning, the last signature of an id, a
file's first module), run on the same rows."""

from __future__ import annotations

from itertools import groupby

import pytest
from recon_fixture import write_project

import ctxfast
from ctxfast import _native
from ctxfast.errors import InvalidArgumentError
from ctxfast.recon import graph_db
from ctxfast.recon.graph import NODE_COLUMNS, Node
from ctxfast.retrieval.deftable import (
    DefByQualname,
    Definitions,
    DefsByFile,
    DefsByName,
    ModuleOf,
    NameIndex,
    Signatures,
    build_table,
)

# Same names in several files, a qualname defined twice, an id repeated, a file whose module
# is given twice, a file without definitions but with a module, non-ASCII names.
ROWS = [
    ("a.f:1", "function", "f", "a.f", "a.py", 1, 0, 2),
    ("a.f:1", "function", "g", "a.g", "a.py", 3, 0, 4),
    ("a.f:9", "function", "f", "a.f", "a.py", 9, 4, 12),
    ("b.C:1", "class", "C", "b.C", "b.py", 1, 0, 30),
    ("b.C.f:2", "function", "f", "b.C.f", "b.py", 2, 4, 5),
    ("é.π:1", "function", "π", "é.π", "é.py", 1, 0, 1),
]
SIGS = ["def f():", "def g():", "def f(x):", "class C:", "def f(self):", "def π():"]
NAMES = ["a.f", "a", "b", "b.C", "b.C.f", "a", "é.π"]
MODULES = [("a.py", "a"), ("a.py", "a2"), ("b.py", "b"), ("c.py", "c"), ("é.py", "é")]
PROBES = [
    "f",
    "g",
    "C",
    "π",
    "a.f",
    "a.g",
    "b.C",
    "b.C.f",
    "a",
    "b",
    "c",
    "é.π",
    "zz",
    "",
    "a.py",
    "b.py",
    "c.py",
    "é.py",
    "a.f:1",
    "a.f:9",
    "b.C:1",
    "x\udcff",
]


def reference(rows, sigs, names, modules):
    defs = [Node(*r) for r in rows]
    by_name: dict[str, list[Node]] = {}
    for d in defs:
        by_name.setdefault(d.name, []).append(d)
    by_qualname: dict[str, Node] = {}
    for d in defs:  # the longest of the first file's rows of a qualname, the earliest of equals
        best = by_qualname.get(d.qualname)
        if best is None or (
            d.file == best.file and d.end_line - d.line > best.end_line - best.line
        ):
            by_qualname[d.qualname] = d
    module_of: dict[str, str] = {}
    for file, qualname in modules:
        module_of.setdefault(file, qualname)
    return {
        "defs": defs,
        "signatures": dict(zip([d.id for d in defs], sigs, strict=True)),
        "by_file": {f: list(g) for f, g in groupby(defs, key=lambda d: d.file)},
        "by_name": by_name,
        "by_qualname": by_qualname,
        "module_of": module_of,
        "names": frozenset(set(names) | set(by_name)),
    }


def assert_same(table, ref):
    defs = Definitions(table)
    assert list(defs) == ref["defs"] and len(defs) == len(ref["defs"])
    assert [defs[i] for i in range(len(defs))] == ref["defs"]
    assert all(type(d) is Node for d in defs)
    if ref["defs"]:
        assert defs[-1] == ref["defs"][-1] and defs[1:3] == ref["defs"][1:3]
    with pytest.raises(IndexError):
        defs[len(ref["defs"])]
    by_file, by_name = DefsByFile(table), DefsByName(table)
    by_qualname, sigs = DefByQualname(table), Signatures(table)
    module_of, names = ModuleOf(table), NameIndex(table)
    keys = set(PROBES) | {d.id for d in ref["defs"]} | {d.file for d in ref["defs"]}
    for k in keys:
        assert by_file.get(k, ()) == ref["by_file"].get(k, ())
        assert (k in by_file) == (k in ref["by_file"])
        assert list(by_file.positions(k)) == [
            i for i, d in enumerate(ref["defs"]) if k in ref["by_file"] and d.file == k
        ]
        assert by_name.get(k, []) == ref["by_name"].get(k, [])
        assert (k in by_name) == (k in ref["by_name"])
        assert (k in by_qualname) == (k in ref["by_qualname"])
        assert by_qualname.get(k) == ref["by_qualname"].get(k)
        assert sigs.get(k) == ref["signatures"].get(k)
        assert module_of.get(k, "") == ref["module_of"].get(k, "")
        assert (k in names) == (k in ref["names"])
    for f, group in ref["by_file"].items():
        for line in range(max(d.end_line for d in group) + 2):
            inside = [d for d in group if d.line <= line <= d.end_line]
            want = min(inside, key=lambda d: d.end_line - d.line) if inside else None
            assert by_file.innermost(f, line) == want
    assert by_file.innermost("zz", 1) is None
    for d in ref["defs"]:
        assert sigs[d.id] == ref["signatures"][d.id]
        assert by_qualname[d.qualname] == ref["by_qualname"][d.qualname]
    with pytest.raises(KeyError):
        sigs["zz"]
    with pytest.raises(KeyError):
        by_qualname["zz"]
    assert len(table.symbol_set()) == len({n.lower() for n in ref["by_name"]})


def test_lookups_equal_the_python_reference_and_survive_bytes():
    table = _native.DefTable.build(ROWS, SIGS, NAMES, MODULES)
    ref = reference(ROWS, SIGS, NAMES, MODULES)
    assert_same(table, ref)
    assert_same(_native.DefTable.from_bytes(table.to_bytes()), ref)
    empty = _native.DefTable.build([], [], [], [])
    assert_same(_native.DefTable.from_bytes(empty.to_bytes()), reference([], [], [], []))


def test_damaged_bytes_are_refused():
    data = _native.DefTable.build(ROWS, SIGS, NAMES, MODULES).to_bytes()
    for bad in (b"", b"something else", data[:-1], data + b"\0", data[: len(data) // 2]):
        with pytest.raises(InvalidArgumentError):
            _native.DefTable.from_bytes(bad)
    with pytest.raises(ValueError):
        _native.DefTable.build(ROWS, SIGS[:-1], NAMES, MODULES)


def test_a_real_index_table_equals_the_reference_built_from_its_rows(tmp_path):
    root = write_project(tmp_path / "proj")
    repo = ctxfast.Repository(root)
    repo.index()
    con = graph_db.connect(repo.graph_db)
    try:
        table = build_table(con)
        rows, sigs = [], []
        for *row, sig in con.rows(
            f"SELECT {NODE_COLUMNS}, COALESCE(m.signature, '') FROM nodes n "
            "LEFT JOIN defs_meta m ON m.id = n.id WHERE n.kind IN ('function', 'class') "
            "ORDER BY n.file, n.line, 1"
        ):
            rows.append(tuple(row))
            sigs.append(sig)
        names = [q for (q,) in con.rows("SELECT qualname FROM name_index")]
        modules = con.rows(
            "SELECT file, qualname FROM nodes WHERE kind = 'def' ORDER BY qualname || ':' || line"
        )
    finally:
        con.close()
    assert len(rows) >= 6
    assert_same(table, reference(rows, sigs, names, modules))
