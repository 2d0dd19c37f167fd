"""Lookups the retrieval state answers from tables built once per index answer as the
straightforward computation they replace."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from recon_fixture import indexed_repo

from ctxfast.bm25 import BM25Index, tokenize_code
from ctxfast.recon.graph import CodeGraph
from ctxfast.retrieval.config import RetrievalConfig
from ctxfast.retrieval.prune import line_scores
from ctxfast.retrieval.repoindex import RepoIndex
from ctxfast.retrieval.signals.path_words import path_words
from ctxfast.retrieval.sources import CallNeighbours
from ctxfast.retrieval.statements import statement_end
from ctxfast.retrieval.task import parse_task
from ctxfast.text import in_test_module

FILES = {
    "shop/__init__.py": "",
    "shop/cart.py": (
        "from shop.money import format_price\n"
        "\n"
        "class Cart:\n"
        "    def total(self):\n"
        "        return format_price(sum(\n"
        "            self.prices))\n"
        "\n"
        "    def describe(self):\n"
        "        return self.total()\n"
    ),
    "shop/money.py": "def format_price(value):\n    return f'{value:.2f}'\n",
    "shop/money_format/price_cart.py": "X = 1\n",
    "tests/test_cart.py": "from shop.cart import Cart\n\ndef test_total():\n    Cart().total()\n",
}


@pytest.fixture(scope="module")
def repo(tmp_path_factory):
    return indexed_repo(tmp_path_factory.mktemp("lookups"), FILES)


@pytest.fixture(scope="module")
def ix(repo):
    return RepoIndex(Path(repo.root), repo.graph_db)


@pytest.mark.parametrize(
    "task", ["the cart price is wrong in money format", "shop test", "nothing here"]
)
def test_path_words_count_the_task_words_among_each_path_s_components(ix, task):
    cfg = RetrievalConfig()
    tq = parse_task(task, None, None, cfg.query, cfg.task.stopwords)
    assert tq.path_words or task == "nothing here"
    want = {}
    for f in ix.files:
        n = len(tq.path_words & frozenset(re.split(r"[/._]", f.lower())))
        if n:
            want[f] = float(n)
    got = path_words(ix, tq)
    assert got == want and list(got) == list(want)


def test_remembered_lookups_answer_as_the_tables(ix):
    for f in ix.files:
        lines = ix.lines(f)
        for line in range(1, len(lines) + 2):
            for _ in range(2):  # the second answer is the remembered one
                assert ix.innermost(f, line) == ix.defs_by_file.innermost(f, line)
                assert ix.statement_end(f, line) == statement_end(lines, line)
    assert ix.statement_end("shop/cart.py", 5) == 6


def test_call_neighbours_are_the_graph_s_one_hop(repo, ix):
    graph = CodeGraph(repo.graph_db)
    hop = CallNeighbours(graph)
    for d in ix.defs:
        node = graph.node(d.id)
        want = list(graph.scope_edge_targets(node))
        want += graph.scope_definitions(graph.callers(node.id))
        want += graph.edge_targets(node.id, "contain")
        assert list(hop.of(d.id)) == want == list(hop.of(d.id))
    total = next(d for d in ix.defs if d.qualname.endswith("Cart.total"))
    assert any(n is not None and n.name == "format_price" for n in hop.of(total.id))
    assert hop.of("no-such-node") is None


@pytest.mark.parametrize(
    "qualname, inside",
    [(None, False), ("a.b", False), ("pkg.tests.f", True), ("m.io_tests.f", True),
     ("m.tests", False), ("m.contests.f", False), ("m.f_tests.g", True)],
)  # fmt: skip
def test_in_test_module_reads_the_segments_before_the_name(qualname, inside):
    assert in_test_module(qualname) is inside


def test_line_scores_sum_each_line_s_goal_tokens_as_the_plain_loop():
    lines = [
        "def total_price(self, items):",
        "    return sum(p.price for p in items)  # total price",
        "",
        "    return sum(p.price for p in items)  # total price",
        "class PriceError(ValueError): pass",
    ]
    ix = BM25Index([*lines, "unrelated words"], symbols=["total_price", "PriceError"])
    goal = {"total_price", "price", "items", "priceerror", "sum", "absent"}
    want = []
    for line in lines:
        toks = set(tokenize_code(line)) & goal
        want.append(sum((ix.idf(t) or 0.0) * ix.term_weight(t) for t in toks))
    for _ in range(2):  # the second time from remembered token sets
        assert line_scores(lines, goal, ix) == want
    assert want[0] > 0 and want[2] == 0.0
