"""The re-rank's candidate index, assembled from term counts kept per index, is the BM25
index built from the candidates' documents (qualname, newline, text; a class's own lines)."""

from __future__ import annotations

from pathlib import Path

import pytest
from recon_fixture import indexed_repo

from ctxfast.bm25 import BM25Index, BM25Settings
from ctxfast.retrieval.candidate_docs import CandidateDocs
from ctxfast.retrieval.candidates import Candidate
from ctxfast.retrieval.repoindex import RepoIndex

SOURCE = (
    "class Cart:\n"  # 1
    '    """A basket of priced items."""\n'
    "    currency = 'EUR'\n"
    "\n"
    "    def add_item(self, name, price):\n"  # 5
    "        self.items.append((name, price))\n"
    "\n"
    "    def total_price(self):\n"  # 8
    "        return sum(p for _, p in self.items)\n"
    "\n"
    "TAX = 0.2  # tax rate of the cart total\n"  # 11
)


@pytest.fixture(scope="module")
def ix(tmp_path_factory):
    repo = indexed_repo(tmp_path_factory.mktemp("candocs"), {"shop/cart.py": SOURCE})
    return RepoIndex(Path(repo.root), repo.graph_db)


def _cands() -> list[Candidate]:
    def cand(qualname: str | None, kind: str, start: int, end: int) -> Candidate:
        return Candidate(qualname, kind, "shop/cart.py", start, end, "", "")

    return [
        cand("shop.cart.Cart", "class", 1, 9),
        cand("shop.cart.Cart.total_price", "function", 8, 9),
        cand(None, "lines", 11, 11),
        cand("shop.cart.Cart.add_item", "function", 5, 6),
    ]


def _plain_docs(class_own_lines: bool) -> list[str]:
    """The documents written out by hand: the class without its methods' bodies."""
    lines = SOURCE.splitlines()
    own_class = "\n".join(lines[0:4]) if class_own_lines else "\n".join(lines[0:9])
    return [
        f"shop.cart.Cart\n{own_class}",
        "shop.cart.Cart.total_price\n" + "\n".join(lines[7:9]),
        "\n" + lines[10],
        "shop.cart.Cart.add_item\n" + "\n".join(lines[4:6]),
    ]


@pytest.mark.parametrize("class_own_lines", [True, False])
def test_candidate_index_is_the_index_of_the_documents(ix, class_own_lines):
    docs = CandidateDocs(ix)
    settings = BM25Settings(k1=1.2, b=0.6, symbol_weight=2.5)
    want = BM25Index(
        _plain_docs(class_own_lines), 1.2, 0.6, symbol_weight=2.5, symbols=ix.symbol_set
    )
    query = ["cart", "total_price", "price", "items", "tax", "currency", "eur"]
    for _ in range(2):  # the second time from the stored counts
        cands = _cands()
        got = docs.index(cands, settings, class_own_lines)
        assert got.scores(query) == want.scores(query)
        assert [c.text for c in cands] == [
            "\n".join(SOURCE.splitlines()[c.start_line - 1 : c.end_line]) for c in cands
        ]
    # A selection in another order reads the same stored documents.
    sub = _cands()[::-2]
    got = docs.index(sub, settings, class_own_lines)
    plain = _plain_docs(class_own_lines)[::-2]
    assert got.scores(query) == BM25Index(
        plain, 1.2, 0.6, symbol_weight=2.5, symbols=ix.symbol_set
    ).scores(query)
