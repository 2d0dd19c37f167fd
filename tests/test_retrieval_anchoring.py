"""Traceback anchoring and class scoring in the re-rank, each on a fixture built to show it."""

from __future__ import annotations

from pathlib import Path

import pytest
from recon_fixture import indexed_repo

from ctxfast.retrieval.config import RetrievalConfig
from ctxfast.retrieval.query import Frame, innermost_depths, parse_frames
from ctxfast.retrieval.repoindex import RepoIndex
from ctxfast.retrieval.sources import frame_definition

FILES = {
    "app/__init__.py": "",
    "app/runner.py": (
        "from app.store import save\n"
        "\n\n"
        "def run(job):\n"
        "    prepared = prepare(job)\n"
        "    return save(prepared)\n"
        "\n\n"
        "def prepare(job):\n"
        "    return dict(job)\n"
    ),
    "app/store.py": (
        "import json\n"
        "\n\n"
        "def helper():\n"
        "    return 1\n"
        "\n\n"
        "def save(record):\n"
        "    text = json.dumps(record)\n"
        "    return text.encode()\n"
    ),
    "app/report.py": (
        "class Report:\n"
        '    """A printable summary."""\n'
        "\n"
        "    title = 'summary'\n"
        "\n"
        "    def render_rows(self, rows):\n"
        "        return [f'{r.name}: {r.amount} amount negative rows totals' for r in rows]\n"
        "\n"
        "    def render_totals(self, rows):\n"
        "        totals = sum(r.amount for r in rows)\n"
        "        return f'totals: {totals}'\n"
        "\n"
        "    def render_footer(self, rows):\n"
        "        return f'{len(rows)} rows, amount totals, negative amount rows'\n"
    ),
}
# The trace was printed by an installed release: the line of the `save` frame points at
# `helper` in this checkout.
TRACE = (
    "Traceback (most recent call last):\n"
    '  File "/usr/lib/python3/site-packages/app/runner.py", line 6, in run\n'
    '  File "/usr/lib/python3/site-packages/app/store.py", line 5, in save\n'
    "TypeError: Object of type set is not JSON serializable\n"
)
ONLY_TRACEBACK = {"lexical": False, "api_desc": False, "callgraph": False, "def_bm25_k": 0}
REPORT_TASK = "the totals line is wrong for rows with a negative amount"


@pytest.fixture(scope="module")
def repo(tmp_path_factory):
    return indexed_repo(tmp_path_factory.mktemp("anchoring"), FILES)


def test_stale_frame_line_resolves_by_function_name(repo):
    res = repo.retrieve("saving a job fails", error=TRACE, config=ONLY_TRACEBACK)
    anchored = {c.qualname: c.anchor for c in res.candidates if c.anchor}
    # Innermost frame weighs 1, the one above it 1/2; `helper` (at the printed line) is
    # not blamed because the frame names `save`.
    assert anchored == {"app.store.save": 1.0, "app.runner.run": 0.5}
    # Qualified frame names (Java, Go) match on their last component.
    ix = RepoIndex(Path(repo.root), repo.graph_db)
    d = frame_definition(ix, "app/store.py", Frame("store.py", 5, "app.store.save", "java"))
    assert d is not None and d.qualname == "app.store.save"
    d = frame_definition(ix, "app/store.py", Frame("store.py", 5, "<module>", "python"))
    assert d is not None and d.qualname == "app.store.helper"  # no name to go by: the line


def test_a_link_to_a_line_anchors_the_definition_there(repo):
    """An issue linking to a line (``blob/<ref>/<path>#L5``) anchors the definition holding
    that line, as a traceback frame does, though the task names no function."""
    link = "https://github.com/acme/app/blob/0123abc/app/store.py#L9"
    res = repo.retrieve(f"saving a job fails, see {link}", config=ONLY_TRACEBACK)
    assert [(c.qualname, c.anchor) for c in res.candidates if c.anchor] == [("app.store.save", 1.0)]
    plain = repo.retrieve("saving a job fails, see app/store.py", config=ONLY_TRACEBACK)
    assert not any(c.anchor for c in plain.candidates)


def test_innermost_frame_ranks_first_with_decay(repo):
    on = repo.retrieve("saving a job fails", error=TRACE, config=ONLY_TRACEBACK)
    assert [c.qualname for c in on.candidates[:2]] == ["app.store.save", "app.runner.run"]
    flat = repo.retrieve(
        "saving a job fails", error=TRACE, config={**ONLY_TRACEBACK, "traceback_decay": False}
    )
    gap = {}
    for name, res in (("on", on), ("flat", flat)):
        by = {c.qualname: c.score for c in res.candidates}
        gap[name] = by["app.store.save"] - by["app.runner.run"]
    assert gap["on"] == pytest.approx(gap["flat"] + RetrievalConfig().rerank.traceback_bonus * 0.5)


def test_class_is_scored_on_its_own_lines(repo):
    def order(**cfg):
        res = repo.retrieve(REPORT_TASK, config=cfg)
        return [c.symbol for c in res.candidates if c.file == "app/report.py"]

    on = order()
    assert on.index("Report.render_totals") < on.index("Report")
    off = order(class_own_lines=False)
    # Scored on every method's text, the class outranks the method the task names.
    assert off.index("Report") < off.index("Report.render_totals")


def test_innermost_frame_per_trace_format():
    py = parse_frames(TRACE)
    assert innermost_depths(py) == [1, 0]  # Python prints the innermost frame last
    java = parse_frames(
        "java.lang.NullPointerException\n"
        "\tat com.acme.Store.save(Store.java:12)\n"
        "\tat com.acme.Runner.run(Runner.java:40)\n"
        "\tat com.acme.Main.main(Main.java:7)\n"
    )
    assert java[0].func == "com.acme.Store.save"
    assert innermost_depths(java) == [0, 1, 2]  # Java prints it first
    assert innermost_depths(py + java) == [1, 0, 0, 1, 2]


def test_functions_called_by_a_named_function_are_lifted(repo):
    task = "run() drops the job fields"

    def scores(**cfg):
        res = repo.retrieve(task, config=cfg)
        return {c.qualname: c.score for c in res.candidates if c.qualname}

    on, off, more = scores(), scores(named_callee_bonus=0.0), scores(named_callee_bonus=0.5)
    bonus = RetrievalConfig().rerank.named_callee_bonus
    assert bonus > 0  # on by default
    # `run` calls `prepare` and `save` by name; `helper` is not called from it.
    assert on["app.runner.prepare"] - off["app.runner.prepare"] == pytest.approx(bonus)
    assert on["app.store.save"] - off["app.store.save"] == pytest.approx(bonus)
    assert more["app.store.save"] - off["app.store.save"] == pytest.approx(0.5)
    assert on["app.runner.run"] == pytest.approx(off["app.runner.run"])
    assert on.get("app.store.helper") == off.get("app.store.helper")


CHAIN_FILES = {
    "calc/__init__.py": "",
    "calc/entry.py": (
        "from calc.parser import Parser\n"
        "\n\n"
        "def parse_text(text):\n"
        "    return Parser().parse(text)\n"
    ),
    "calc/parser.py": (
        "class Parser:\n"
        "    def parse(self, text):\n"
        "        tokens = self.tokenize(text)\n"
        "        return self.build(tokens)\n"
        "\n"
        "    def tokenize(self, text):\n"
        "        return text.split()\n"
        "\n"
        "    def build(self, tokens):\n"
        "        return list(tokens)\n"
        "\n"
        "    def unused(self, text):\n"
        "        return text\n"
    ),
}


def test_callees_of_lifted_callees_are_lifted_one_hop_further(tmp_path):
    chain = indexed_repo(tmp_path, CHAIN_FILES)
    task = "parse_text() splits the text wrongly"

    def scores(**cfg):
        res = chain.retrieve(task, config={"top_k": 40, **cfg})
        return {c.symbol: c.score for c in res.candidates if c.qualname}

    on, off = scores(), scores(second_callee_bonus=0.0)
    bonus = RetrievalConfig().rerank.second_callee_bonus
    assert bonus > 0  # on by default
    # `parse_text` calls `parse` (first hop, lifted either way); `parse` calls `tokenize`
    # and `build` (second hop); `unused` is called by nobody, `parse_text` is named.
    assert on["Parser.parse"] == pytest.approx(off["Parser.parse"])
    assert on["Parser.tokenize"] - off["Parser.tokenize"] == pytest.approx(bonus)
    assert on["Parser.build"] - off["Parser.build"] == pytest.approx(bonus)
    assert on["Parser.unused"] == pytest.approx(off["Parser.unused"])
    assert on["parse_text"] == pytest.approx(off["parse_text"])
