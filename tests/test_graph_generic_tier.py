"""The generic tier (languages read through their grammar's tags query) and plain files (no
grammar) through the public API: their definitions in the graph and the repo map, their
files in retrieval, and a repository in a language without a grammar ranked no worse than
plain BM25 over the same files."""

from __future__ import annotations

from pathlib import Path

from php_ruby_fixtures import write
from recon_fixture import callees

from ctxfast import BM25Index, Repository

#: One file per language of the tier, each calling into a second file of its language.
TAGGED = {
    "cs/Cart.cs": (
        "namespace Shop\n{\n    public class Cart\n    {\n"
        "        public void Checkout() { var p = new Pricing(); p.ApplyCoupon(); }\n    }\n}\n"
    ),
    "cs/Pricing.cs": (
        "namespace Shop\n{\n    public class Pricing\n    {\n"
        "        public void ApplyCoupon() { }\n    }\n}\n"
    ),
    "swift/Cart.swift": "class Basket {\n    func settle() {\n        computeTax()\n    }\n}\n",
    "swift/Tax.swift": "func computeTax() -> Int { return 1 }\n",
    "lua/cart.lua": "function refill_stock(item)\n  return reorder_level(item)\nend\n",
    "lua/stock.lua": "function reorder_level(item)\n  return 3\nend\n",
    "elixir/cart.ex": (
        "defmodule Shop.Orders do\n  def place(order), do: Shop.Ledger.record(order)\nend\n"
    ),
    "elixir/ledger.ex": "defmodule Shop.Ledger do\n  def record(entry), do: entry\nend\n",
    "dart/cart.dart": "class Wallet {\n  void pay() {\n    chargeCard();\n  }\n}\n",
    "dart/card.dart": "void chargeCard() {}\n",
    "ocaml/cart.ml": "let ship parcel = Post.dispatch_parcel parcel\n",
    "ocaml/post.ml": "let dispatch_parcel p = p\n",
    "r/cart.R": "summarise_sales <- function(x) {\n  tally_rows(x)\n}\n",
    "r/tally.R": "tally_rows <- function(x) nrow(x)\n",
    "elm/Cart.elm": (
        "module Cart exposing (view)\n\nimport Render\n\n\nview m =\n    Render.drawBadge m\n"
    ),
    "elm/Render.elm": "module Render exposing (drawBadge)\n\n\ndrawBadge m =\n    m\n",
    "kotlin/Cart.kt": (
        "class Checkout {\n    fun confirm() {\n        Mailer().sendReceipt()\n    }\n}\n"
    ),
    "kotlin/Mailer.kt": "class Mailer {\n    fun sendReceipt() {}\n}\n",
    "scala/Cart.scala": "object Shelf {\n  def restock(): Unit = replenishBin(3)\n}\n",
    "scala/Bins.scala": "def replenishBin(n: Int): Unit = ()\n",
    "solidity/Vault.sol": (
        "contract Vault {\n    function withdraw() public {\n        Treasury.releaseFunds(1);\n"
        "    }\n}\n"
    ),
    "solidity/Treasury.sol": (
        "library Treasury {\n    function releaseFunds(uint256 n) internal {}\n}\n"
    ),
}


def test_generic_tier_languages_are_in_the_graph_and_the_repo_map(tmp_path: Path) -> None:
    write(tmp_path, TAGGED)
    repo = Repository(tmp_path)
    repo.index()
    g = repo.graph
    defined = {(n.file, n.qualname, n.kind) for f in TAGGED for n in g.nodes_in_file(f)}
    for file, qualname, kind in [
        ("cs/Pricing.cs", "cs.Pricing.Shop.Pricing.ApplyCoupon", "function"),
        ("swift/Cart.swift", "swift.Cart.Basket", "class"),
        ("lua/stock.lua", "lua.stock.reorder_level", "function"),
        ("elixir/ledger.ex", "elixir.ledger.Ledger.record", "function"),
        ("dart/cart.dart", "dart.cart.Wallet.pay", "function"),
        ("ocaml/post.ml", "ocaml.post.dispatch_parcel", "function"),
        ("r/tally.R", "r.tally.tally_rows", "function"),
        ("elm/Render.elm", "elm.Render.drawBadge", "function"),
        ("kotlin/Mailer.kt", "kotlin.Mailer.Mailer.sendReceipt", "function"),
        ("scala/Cart.scala", "scala.Cart.Shelf", "class"),
        ("solidity/Treasury.sol", "solidity.Treasury.Treasury.releaseFunds", "function"),
    ]:
        assert (file, qualname, kind) in defined, qualname
    assert callees(g, "cs.Cart.Shop.Cart.Checkout") == {
        "cs.Pricing.Shop.Pricing",
        "cs.Pricing.Shop.Pricing.ApplyCoupon",
    }
    assert callees(g, "swift.Cart.Basket.settle") == {"swift.Tax.computeTax"}
    assert callees(g, "lua.cart.refill_stock") == {"lua.stock.reorder_level"}
    assert "elixir.ledger.Ledger.record" in callees(g, "elixir.cart.Orders.place")
    assert callees(g, "dart.cart.Wallet.pay") == {"dart.card.chargeCard"}
    assert callees(g, "ocaml.cart.ship") == {"ocaml.post.dispatch_parcel"}
    assert callees(g, "r.cart.summarise_sales") == {"r.tally.tally_rows"}
    assert callees(g, "elm.Cart.view") == {"elm.Render.drawBadge"}
    assert callees(g, "kotlin.Cart.Checkout.confirm") == {
        "kotlin.Mailer.Mailer",
        "kotlin.Mailer.Mailer.sendReceipt",
    }
    assert callees(g, "scala.Cart.Shelf.restock") == {"scala.Bins.replenishBin"}
    assert callees(g, "solidity.Vault.Vault.withdraw") == {
        "solidity.Treasury.Treasury.releaseFunds"
    }
    text = repo.repo_map(max_tokens=4000)
    for file in TAGGED:
        assert file in text, file
    for name in (
        *("ApplyCoupon", "computeTax", "reorder_level", "record", "chargeCard"),
        *("sendReceipt", "replenishBin", "releaseFunds"),
    ):
        assert name in text, name


#: A made-up ledger system in COBOL (no grammar): each program about one thing, the one the
#: issue is about sharing its vocabulary with a few others. A Python report script, the only
#: file a grammar parses, mentions the issue's words too.
COBOL = {
    f"src/{name}.cob": (
        "       IDENTIFICATION DIVISION.\n"
        f"       PROGRAM-ID. {name.upper()}.\n"
        "       PROCEDURE DIVISION.\n"
        + "".join(f"           PERFORM {line}.\n" for line in lines)
        + "           STOP RUN.\n"
    )
    for name, lines in {
        "interest": ["COMPUTE-MONTHLY-INTEREST", "ROUND-INTEREST-RATE", "POST-INTEREST-ENTRY"],
        "overdraft": ["CHECK-OVERDRAFT-LIMIT", "CHARGE-OVERDRAFT-FEE", "NOTIFY-ACCOUNT-HOLDER"],
        "statement": ["PRINT-STATEMENT-HEADER", "LIST-ACCOUNT-ENTRIES", "PRINT-BALANCE"],
        "transfer": ["DEBIT-SOURCE-ACCOUNT", "CREDIT-TARGET-ACCOUNT", "LOG-TRANSFER"],
        "payroll": ["READ-EMPLOYEE-RECORD", "COMPUTE-NET-PAY", "WRITE-PAYSLIP"],
        "audit": ["SCAN-LEDGER", "FLAG-LARGE-ENTRY", "WRITE-AUDIT-TRAIL"],
        "rates": ["LOAD-RATE-TABLE", "LOOKUP-RATE", "ROUND-RATE"],
        "closing": ["CLOSE-ACCOUNT", "COMPUTE-FINAL-INTEREST", "ARCHIVE-ACCOUNT"],
    }.items()
}
COBOL["tools/report.py"] = (
    "def monthly_report(ledger):\n"
    '    """Prints the monthly interest and overdraft totals of the ledger."""\n'
    "    return [entry for entry in ledger if entry.interest or entry.overdraft]\n"
)
ISSUE = (
    "Monthly interest is rounded twice: COMPUTE-MONTHLY-INTEREST rounds the rate and "
    "ROUND-INTEREST-RATE rounds it again, so the posted interest entry is off by a cent."
)
TARGET = "src/interest.cob"


def bm25_ranking(root: Path, files: list[str], query: str) -> list[str]:
    """Plain BM25 over whole files (path + content), as the evaluation's baseline does."""
    docs = [f + "\n" + (root / f).read_text(encoding="utf-8") for f in files]
    index = BM25Index(docs)
    return [files[i] for i, _ in index.query(query, k=len(files))]


def test_a_language_without_grammar_ranks_no_worse_than_bm25(tmp_path: Path) -> None:
    write(tmp_path, COBOL)
    repo = Repository(tmp_path)
    repo.index()
    files = sorted(COBOL)
    assert {f.path for f in repo.graph.files() if f.sha256} == set(files)
    baseline = bm25_ranking(tmp_path, files, ISSUE)
    ranked = repo.retrieve(ISSUE).ranked_files()
    assert TARGET in baseline and TARGET in ranked
    assert ranked.index(TARGET) <= baseline.index(TARGET), (ranked, baseline)
    assert ranked[0] == TARGET
    # The file is read whole through the lexical recall too, not only by its path.
    assert any(c.file == TARGET for c in repo.retrieve(ISSUE).candidates)
