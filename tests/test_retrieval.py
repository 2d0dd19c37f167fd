"""The retrieval pipeline end to end on a fixture repository."""

from __future__ import annotations

import os
import shutil
import sqlite3
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from recon_fixture import write_project

from ctxfast import Repository, count_tokens
from ctxfast.errors import ConfigError
from ctxfast.retrieval.apiindex import refresh_api_index
from ctxfast.retrieval.config import RetrievalConfig
from ctxfast.retrieval.render import PREAMBLE
from ctxfast.retrieval.statements import statement_end


@pytest.fixture(scope="module")
def repo(tmp_path_factory):
    root = write_project(tmp_path_factory.mktemp("retrieval"))
    (root / "pkg" / "latin1.py").write_bytes(b"# caf\xe9\ndef legacy_parse_args():\n    pass\n")
    r = Repository(root)
    r.index()
    return r


def test_switches_are_the_boolean_stages_and_unknown_keys_an_error():
    c = RetrievalConfig()
    assert sorted(c.switches()) == sorted(
        [
            "lexical",
            "api_desc",
            "callgraph",
            "traceback",
            "dispatch",
            "prune",
            "file_bm25",
            "definition_match",
            "path_mentions",
            "def_bm25",
            "path_words",
            "goal_signals",
            "path_compounds",
            "literals",
            "literal_defs",
            "literal_names",
            "literal_names_flags",
            "literal_names_quoted",
            "drop_html_comments",
            "tested_modules",
            "infile_defs",
            "demote_tests",
            "demote_minor_languages",
            "traceback_decay",
            "class_own_lines",
            "module_header",
            "platform_code",
        ]
    )
    with pytest.raises(ConfigError, match="unknown retrieval config keys: nope"):
        RetrievalConfig.from_mapping({"nope": 1})
    with pytest.raises(ConfigError, match="unknown retrieval config 'files' settings: nope"):
        RetrievalConfig.from_mapping({"files": {"nope": 1}})


#: Every field of the flat ``RetrievalConfig`` before its settings were grouped.
FLAT_RETRIEVAL_NAMES = [
    "lexical",
    "api_desc",
    "callgraph",
    "traceback",
    "lexical_max_hits",
    "api_desc_k",
    "callgraph_k",
    "dispatch",
    "dispatch_family_min",
    "dispatch_bonus",
    "query_stopwords",
    "k1",
    "b",
    "symbol_weight",
    "top_k",
    "prune",
    "tau",
    "line_floor",
    "max_tokens",
    "encoding",
    "file_bm25",
    "definition_match",
    "path_mentions",
    "def_bm25",
    "path_words",
    "goal_signals",
    "goal_candidate_weight",
    "goal_rest_min",
    "path_compounds",
    "literals",
    "literal_min_chars",
    "literal_max_files",
    "literal_defs",
    "literal_bonus",
    "literal_names",
    "literal_names_flags",
    "literal_names_quoted",
    "literal_name_max_chars",
    "listing_min_lines",
    "drop_html_comments",
    "signal_weights",
    "def_bm25_top",
    "tested_modules",
    "tested_modules_weight",
    "tested_modules_files",
    "def_bm25_k",
    "def_line_max_chars",
    "def_bm25_lines_other",
    "def_bm25_b_other",
    "infile_defs",
    "infile_files",
    "infile_k",
    "infile_next_files",
    "infile_next_k",
    "same_file_decay",
    "demote_tests",
    "test_penalty",
    "example_penalty",
    "generated_penalty",
    "bundle_min_files",
    "bundle_penalty",
    "demote_minor_languages",
    "minor_language_share",
    "minor_language_penalty",
    "traceback_bonus",
    "traceback_decay",
    "class_own_lines",
    "named_callee_bonus",
    "second_callee_bonus",
    "module_header",
    "module_header_rank",
    "module_header_lines",
    "second_file_rank",
    "rank_fill",
    "include_lending",
    "platform_code",
    "ranker",
    "ranker_model",
    "keep_features",
    "query",
]


def test_every_flat_name_still_sets_its_one_nested_setting():
    from ctxfast.settings import flat_names, flat_value

    assert set(flat_names(RetrievalConfig)) == set(FLAT_RETRIEVAL_NAMES)
    default = RetrievalConfig()
    for name in FLAT_RETRIEVAL_NAMES:
        value = flat_value(default, name)
        if isinstance(value, bool):
            changed = not value
        elif isinstance(value, (int, float)):
            changed = value + 1
        else:
            continue
        by_mapping = RetrievalConfig.from_mapping({name: changed})
        by_keyword = RetrievalConfig(**{name: changed})
        assert by_mapping == by_keyword
        assert flat_value(by_mapping, name) == changed
        # exactly one setting moved
        moved = [
            n for n in FLAT_RETRIEVAL_NAMES if flat_value(by_mapping, n) != flat_value(default, n)
        ]
        assert moved == [name]
    nested = RetrievalConfig.from_mapping({"demotions": {"test_penalty": 2.0}, "literals": False})
    assert nested.demotions.test_penalty == 2.0 and nested.files.literals is False
    assert nested == RetrievalConfig(test_penalty=2.0, literals=False)
    assert RetrievalConfig(prune=False).prune.enabled is False


def test_task_reaches_the_right_definitions(repo):
    res = repo.retrieve("main() crashes when parse_args gets None")
    assert res.ranked_files()[0] == "pkg/cli.py"
    top = res.candidates[0]
    assert top.qualname == "pkg.cli.main" and (top.start_line, top.end_line) == (5, 8)
    assert {"ripgrep", "api-desc", "callgraph"} <= set(top.sources)
    qualnames = [c.qualname for c in res.candidates if c.qualname]
    assert "pkg.utils.parse_args" in qualnames[:3]
    assert len(qualnames) == len(set(qualnames))  # collapsed by structural identity


def test_render_shape_and_cap(repo):
    res = repo.retrieve("main() crashes when parse_args gets None")
    text = res.render()
    assert text.startswith(PREAMBLE + "\n### pkg.cli.main [pkg/cli.py:5, ")
    assert "]\n```\ndef main(argv: list[str]) -> int:\n" in text
    assert res.token_count == count_tokens(text) <= 4000


@settings(max_examples=25)
@given(st.integers(min_value=0, max_value=400))
def test_cap_never_exceeded_and_blocks_whole(repo, cap):
    full = repo.retrieve("main() crashes when parse_args gets None").render()
    res = repo.retrieve("main() crashes when parse_args gets None", max_tokens=cap)
    assert res.token_count <= cap
    for block in res.render().split("\n### ")[1:]:
        assert block in full  # whole blocks only, never cut mid-entry


def test_traceback_anchors_enclosing_definition(repo):
    tb = (
        "Traceback (most recent call last):\n"
        '  File "/home/u/proj/pkg/cli.py", line 16, in step\n'
        '  File "/home/u/proj/pkg/db.py", line 8, in connect\n'
        "ValueError: bad uri\n"
    )
    res = repo.retrieve("the runner fails", error=tb)
    assert res.candidates[0].qualname in ("pkg.db.connect", "pkg.cli.Runner.step")
    assert {c.qualname for c in res.candidates[:2]} == {"pkg.db.connect", "pkg.cli.Runner.step"}
    assert res.ranked_files()[0] in ("pkg/db.py", "pkg/cli.py")


def test_a_frame_of_a_renamed_module_maps_to_the_one_file_defining_its_function(tmp_path):
    from recon_fixture import indexed_repo

    files = {
        "shop/__init__.py": "",
        "shop/_oldcore.py": "def _lookup(key):\n    return TABLE[key]\n",
        "shop/report.py": "def summary(items):\n    return len(items)\n",
        "shop/views.py": "def render(items):\n    return str(items)\n",
        "shop/html.py": "def render(items):\n    return repr(items)\n",
    }
    repo = indexed_repo(tmp_path, files)

    def frames(path, func):
        tb = "Traceback (most recent call last):\n"
        tb += f'  File "/env/lib/python3.9/site-packages/{path}", line 2, in {func}\n'
        return repo.retrieve("the summary breaks", error=tb + "KeyError: 'x'\n")

    # the release printed shop/_core.py; the module is shop/_oldcore.py now
    res = frames("shop/_core.py", "_lookup")
    assert res.signals["traceback"] == {"shop/_oldcore.py": 1.0}
    assert res.candidates[0].qualname == "shop._oldcore._lookup"
    assert frames("numpy/_core.py", "_lookup").signals["traceback"] == {}  # another package
    assert frames("shop/_render.py", "render").signals["traceback"] == {}  # two files define it


def test_a_frame_is_resolved_once_per_index(tmp_path, monkeypatch):
    """The file signal and the traceback source both ask for every frame's file; the file
    list is scanned for it once."""
    from recon_fixture import indexed_repo

    from ctxfast.retrieval.repoindex import RepoIndex

    repo = indexed_repo(tmp_path, {"shop/__init__.py": "", "shop/core.py": "def f():\n    pass\n"})
    ix = RepoIndex(Path(repo.root), repo.graph_db)
    scans: list[str] = []
    plain = RepoIndex.resolve_path
    monkeypatch.setattr(
        RepoIndex, "resolve_path", lambda self, p: scans.append(p) or plain(self, p)
    )
    for _ in range(3):
        assert ix.resolve_frame("/env/site-packages/shop/core.py", "f") == "shop/core.py"
        assert ix.resolve_frame("/env/site-packages/numpy/core.py", "g") is None
    assert scans == ["/env/site-packages/shop/core.py", "/env/site-packages/numpy/core.py"]


def _scan_resolve(files: list[str], printed: str) -> str | None:
    """Path resolution as a scan of every file: the printed path, or a file ending with
    ``/`` + it (the longest, the first in path order on a tie); then the same for what
    follows an installed copy's last ``site-packages/``; then the longest file the printed
    path ends with after a ``/``."""
    p = printed.replace("\\", "/").lstrip("./")
    tries = [p]
    if "site-packages/" in p:
        tries.append(p[p.rfind("site-packages/") + len("site-packages/") :])
    for q in tries:
        if q in files:
            return q
        ends = [f for f in files if f.endswith("/" + q)]
        if ends:
            return max(ends, key=len)
    inside = [f for f in files if p.endswith("/" + f)]
    return max(inside, key=len) if inside else None


_path_part = st.sampled_from(["a", "b", "pkg", "core.py", "x.py", "."])
_rel_path = st.lists(_path_part, min_size=1, max_size=4).map("/".join)


@given(st.lists(_rel_path, max_size=12), st.lists(_rel_path, min_size=1, max_size=6))
def test_path_resolution_equals_the_scan_of_every_file(files, printed):
    """The tail lookups answer exactly as scanning the file list per printed path."""
    from ctxfast.retrieval.repoindex import RepoIndex

    ix = RepoIndex.__new__(RepoIndex)
    ix.files = sorted(set(files))
    ix.languages = dict.fromkeys(ix.files, "python")
    ix._tails = None
    installed = ["/env/site-packages/" + p for p in printed]
    for p in printed + installed + ["./" + printed[0]]:
        assert ix.resolve_path(p) == _scan_resolve(ix.files, p)


def test_an_installed_copy_resolves_to_a_src_layout_checkout(tmp_path):
    """A traceback from an installed release prints ``site-packages/shop/core.py``; the
    checkout keeps the package under ``src/``."""
    from recon_fixture import indexed_repo

    from ctxfast.retrieval.repoindex import RepoIndex

    files = {"src/shop/__init__.py": "", "src/shop/core.py": "def f():\n    pass\n"}
    repo = indexed_repo(tmp_path, files)
    ix = RepoIndex(Path(repo.root), repo.graph_db)
    assert ix.resolve_path("/env/lib/site-packages/shop/core.py") == "src/shop/core.py"
    assert ix.resolve_path("C:\\Py\\Lib\\site-packages\\shop\\core.py") == "src/shop/core.py"
    assert ix.resolve_path("/env/lib/site-packages/other/core.py") is None


def test_stages_switch_off(repo):
    res = repo.retrieve("main crashes", config={"lexical": False, "callgraph": False})
    for c in res.candidates:
        assert not {"ripgrep", "callgraph"} & set(c.sources)
    off = repo.retrieve("main crashes", config={"prune": False})
    cand = next(c for c in off.candidates if c.qualname == "pkg.cli.main")
    assert cand.kept_lines == [5, 6, 7, 8]


def test_prune_keeps_signature_and_goal_lines(repo):
    res = repo.retrieve("DATABASE_URL is passed to connect by main")
    main = next(c for c in res.candidates if c.qualname == "pkg.cli.main")
    assert main.kept_lines[0] == 5 and 7 in main.kept_lines


def test_statement_end_balances_brackets():
    lines = ["x = f(", "    1,", ")", "y = 2"]
    assert statement_end(lines, 1) == 3
    assert statement_end(lines, 4) == 4


def test_api_index_table_and_per_file_refresh(repo, tmp_path):
    api = tmp_path / "api.db"
    assert refresh_api_index(repo.graph_db, api) > 0
    con = sqlite3.connect(api)
    cols = [r[1] for r in con.execute("PRAGMA table_info(api_index)")]
    assert cols == ["qualname", "kind", "signature", "docstring", "desc_text", "file", "line"]
    row = con.execute(
        "SELECT kind, signature, docstring, desc_text FROM api_index WHERE qualname = ?",
        ("pkg.cli.Runner.run",),
    ).fetchone()
    assert row == ("method", "def run(self):", "", "def run(self):")
    doc = con.execute(
        "SELECT docstring FROM api_index WHERE qualname = 'pkg.db.connect'"
    ).fetchone()
    assert doc == ("Open a database connection.",)
    con.close()
    assert refresh_api_index(repo.graph_db, api) == 0  # nothing changed


def test_bad_inputs_are_harmless(repo):
    assert repo.retrieve("").candidates == [] or repo.retrieve("").token_count <= 4000
    prose = repo.retrieve("it is slow and I am sad about it")
    assert prose.token_count <= 4000
    log = "INFO something happened (.*)[ $(rm -rf /) `x` \\d+\n" * 20_000  # ~1 MB
    res = repo.retrieve("weird $(echo hi) [a-z]+ .* term", error=log)
    assert res.token_count <= 4000


def test_index_on_demand(tmp_path):
    r = Repository(write_project(tmp_path))
    assert not r.graph_db.exists()
    res = r.retrieve("parse_args")
    assert r.graph_db.exists() and res.candidates


def test_state_is_reused_until_the_index_changes(tmp_path, monkeypatch):
    """The per-index state (definitions, BM25 indexes, lexical corpus) is built once and kept
    while the index is unchanged — without re-hashing the index on every query — and rebuilt
    after a refresh that changed content, by this or another Repository object, or after the
    index was deleted and rebuilt. With ``refresh=False`` (no refresh before the query) it is
    a snapshot of the files between refreshes."""
    root = write_project(tmp_path / "proj")
    past = time.time() - 60
    for f in root.rglob("*.py"):  # not racy: a refresh that finds no change records nothing
        os.utime(f, (past, past))
    r = Repository(root)
    r.index()
    keys = []
    real_key = Repository._index_key
    monkeypatch.setattr(Repository, "_index_key", lambda self: keys.append(1) or real_key(self))

    def found(task: str) -> set[str]:
        return {c.qualname or "" for c in r.retrieve(task, refresh=False).candidates}

    assert "pkg.utils.parse_args" in found("parse_args")
    state = r._retriever
    for _ in range(3):
        found("parse_args")
    assert r._retriever is state and keys == []  # no content hash per query

    widgets = root / "pkg" / "widgets.py"
    widgets.write_text("def brand_new_widget():\n    return 1\n")
    os.utime(widgets, (past, past))
    assert "pkg.widgets.brand_new_widget" not in found("brand_new_widget")  # snapshot
    assert r._retriever is state

    Repository(root).index()  # another object (its own connection) refreshes the index
    assert "pkg.widgets.brand_new_widget" in found("brand_new_widget")
    assert r._retriever is not state and len(keys) == 1
    state = r._retriever

    r.index()  # a refresh that changed nothing commits nothing: no key computed, state kept
    found("parse_args")
    assert r._retriever is state and len(keys) == 1

    (root / "pkg" / "widgets.py").unlink()
    shutil.rmtree(r.index_dir)
    r.index()
    assert "pkg.widgets.brand_new_widget" not in found("brand_new_widget")
    assert r._retriever is not state


def _absorb_reference(cands):
    """The span absorption as first written (hosts searched among all entries): the
    per-file lookup of ``merge._absorb_line_spans`` must give exactly this."""
    defs = [c for c in cands if c.qualname]
    spans = [c for c in cands if not c.qualname]
    kept = []
    for span in sorted(spans, key=lambda c: (c.file, c.start_line)):
        host = next(
            (
                d
                for d in defs
                if d.file == span.file
                and d.start_line <= span.start_line
                and span.end_line <= d.end_line
            ),
            None,
        )
        if host is not None:
            host.provenance.extend(p for p in span.provenance if p not in host.provenance)
            continue
        if kept and kept[-1].file == span.file and span.start_line <= kept[-1].end_line + 1:
            kept[-1].end_line = max(kept[-1].end_line, span.end_line)
            kept[-1].provenance.extend(p for p in span.provenance if p not in kept[-1].provenance)
            continue
        kept.append(span)
    out = []
    for c in defs:
        host = next(
            (
                d
                for d in defs
                if d is not c
                and d.kind == "function"
                and d.file == c.file
                and d.start_line <= c.start_line
                and c.end_line <= d.end_line
                and (d.start_line, d.end_line) != (c.start_line, c.end_line)
            ),
            None,
        )
        if host is not None:
            host.provenance.extend(p for p in c.provenance if p not in host.provenance)
            continue
        out.append(c)
    return out + kept


_cand = st.tuples(
    st.sampled_from(["a.py", "b.py"]),
    st.integers(1, 30),
    st.integers(0, 12),
    st.sampled_from([None, "f", "g", "C"]),
    st.sampled_from(["function", "class"]),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_cand, max_size=25))
def test_span_absorption_equals_the_all_entries_scan(rows):
    from ctxfast.retrieval.candidates import Candidate
    from ctxfast.retrieval.merge import _absorb_line_spans

    def build():
        return [
            Candidate(q and f"{q}{i}", kind, f, s, s + n, "", "", [f"p:{i}", "p:shared"])
            for i, (f, s, n, q, kind) in enumerate(rows)
        ]

    got = [c.to_dict() for c in _absorb_line_spans(build())]
    assert got == [c.to_dict() for c in _absorb_reference(build())]
