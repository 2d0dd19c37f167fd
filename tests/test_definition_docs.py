"""The definition-level BM25 documents are made natively (``DefTable.definition_docs``) and
are exactly the ones the Python loop they replaced made: the same slices of the same lines,
cut at the same character, so the stored index, and every ranking, is unchanged."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
from recon_fixture import indexed_repo

from ctxfast import _native
from ctxfast.bm25 import BM25Index
from ctxfast.retrieval.config import RetrievalConfig
from ctxfast.retrieval.localize import DefinitionBM25
from ctxfast.retrieval.repoindex import RepoIndex


def reference_docs(
    defs: list[tuple[str, str, int, int]],
    lines: dict[str, list[str]],
    python_lines: int,
    other_lines: int,
    cut: int,
) -> list[str]:
    """The Python loop the native builder replaced, over ``(qualname, file, line,
    end_line)`` rows."""
    out = []
    for qualname, file, line, end_line in defs:
        n = python_lines if file.endswith((".py", ".pyi")) else other_lines
        body = lines.get(file, [])[line - 1 : min(end_line, line + n)]
        out.append(qualname.replace(".", " ") + "\n" + "\n".join(x[:cut] for x in body))
    return out or [""]


def _table(defs: list[tuple[str, str, int, int]]) -> _native.DefTable:
    rows = [
        (f"id{i}", "function", q.rsplit(".", 1)[-1], q, f, line, 0, end)
        for i, (q, f, line, end) in enumerate(defs)
    ]
    return _native.DefTable.build(rows, [""] * len(rows), [], [])


LINE = st.text(st.sampled_from("ab _.é😀\t\r\x0c"), max_size=9).map(
    lambda s: s.replace("\r", "").replace("\x0c", "")
)
FILES = ("m.py", "s.pyi", "x.rs", "up.PY", "gone.py")


@settings(max_examples=300, deadline=None)
@given(
    texts=st.fixed_dictionaries({f: st.lists(LINE, max_size=8) for f in FILES[:4]}),
    defs=st.lists(
        st.tuples(
            st.sampled_from(("f", "pkg.mod.f", "A.b.c")),
            st.sampled_from(FILES),
            st.integers(-3, 10),
            st.integers(-3, 12),
        ),
        max_size=12,
    ).map(lambda ds: sorted(ds, key=lambda d: d[1])),
    python_lines=st.integers(-2, 6),
    other_lines=st.integers(-2, 6),
    cut=st.integers(-4, 6),
)
def test_native_documents_equal_the_python_loop(texts, defs, python_lines, other_lines, cut):
    table = _table(defs)
    known = {f: texts.get(f, []) for f in table.files()}
    docs = table.definition_docs(
        ["\n".join(known[f]) for f in table.files()], python_lines, other_lines, cut
    )
    assert docs == reference_docs(defs, known, python_lines, other_lines, cut)


def test_an_indexed_tree_gives_the_python_loop_documents(tmp_path):
    """Real line breaks (CRLF, a form feed, which ``splitlines`` breaks at and the parser
    does not), long non-ASCII lines, undecodable bytes and a minor language: the index over
    the native documents is the one over the Python loop's, byte for byte."""
    repo = indexed_repo(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/a.py": (
                "class Çache:\r\n    def get(self, ké):\r\n        return '" + "ñ" * 300 + "'\r\n"
                "\x0c\ndef after_feed():\n    pass\n"
            ),
            "pkg/b.py": "def long():\n" + "".join(f"    x{i} = {i}\n" for i in range(90)),
            "web/app.js": "function render(el) {\n  return el;\n}\n",
        },
    )
    (Path(repo.root) / "pkg" / "c.py").write_bytes(b"def raw():\n    return b'\xff\xfe'\n")
    repo.index()
    index = RepoIndex(Path(repo.root), repo.graph_db)
    defs = [(d.qualname, d.file, d.line, d.end_line) for d in index.defs]
    lines = {f: index.lines(f) for _, f, _, _ in defs}
    for cfg in (RetrievalConfig(), RetrievalConfig(def_line_max_chars=7)):
        want = reference_docs(
            defs,
            lines,
            DefinitionBM25.MAX_LINES,
            DefinitionBM25.MAX_LINES,
            cfg.files.def_line_max_chars,
        )
        # The 316-character line is kept whole under the default cut (500) and cut at 7.
        assert any("ñ" * 300 in d for d in want) == (cfg.files.def_line_max_chars == 500)
        expected = BM25Index(want, cfg.bm25.k1, cfg.bm25.b, symbols=index.symbol_set)
        assert DefinitionBM25(index, cfg).bm25.to_bytes() == expected.to_bytes()
