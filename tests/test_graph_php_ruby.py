"""PHP and Ruby in the graph (definitions, calls, imports, refresh == cold build, bad input),
their test files, and minified or bundled JavaScript kept out of retrieval: a PHP project's
bundled assets used to be its only parsed files, and ranked first."""

from __future__ import annotations

from pathlib import Path

from php_ruby_fixtures import PHP, RUBY, write
from recon_fixture import callees, indexed_repo

from ctxfast import Repository
from ctxfast.text import is_test_path


def test_php_namespaces_imports_and_members(tmp_path: Path) -> None:
    write(tmp_path, PHP)
    repo = Repository(tmp_path)
    repo.index()
    g = repo.graph
    kinds = {n.qualname: n.kind for n in g.nodes_in_file("src/Cart.php") if n.kind != "ref"}
    assert kinds["Shop.Cart"] == "class"
    assert kinds["Shop.Cart.total"] == "function"
    assert callees(g, "Shop.Cart.total") == {
        "Shop.Cart.check",
        "Shop.Basket.clear",
        "Shop.Line",
        "Shop.Line.price",
        "Shop.Pricing.Rules.apply",
        "Shop.Pricing.Rules.base",
    }


def test_ruby_constants_mixins_and_requires(tmp_path: Path) -> None:
    write(tmp_path, RUBY)
    repo = Repository(tmp_path)
    repo.index()
    g = repo.graph
    kinds = {n.qualname: n.kind for n in g.nodes_in_file("lib/shop/cart.rb") if n.kind != "ref"}
    assert kinds["shop.cart.Shop.Cart"] == "class"
    assert kinds["shop.cart.Shop.Cart.build"] == "function"
    assert callees(g, "shop.cart.Shop.Cart.total") == {
        "shop.cart.Shop.Cart.check",
        "shop.basket.Shop.Basket.clear",
        "shop.line.Shop.Line",
        "shop.line.Shop.Line.price",
        "shop.pricing.Shop.Pricing.apply",
        "shop.pricing.Shop.Pricing.base",
    }


def test_bad_php_and_ruby_are_recorded_never_fatal(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "a.php": "<?php\nclass A { public function f( {\n",
            "b.rb": "class B\n  def f(\n",
            "deep.rb": "X = " + "[" * 3000 + "]" * 3000 + "\n",
            "deep.php": "<?php\n$x = " + "f(" * 3000 + "1" + ")" * 3000 + ";\n",
        },
    )
    repo = Repository(tmp_path)
    repo.index()
    errors = {f.path: f.parse_error or "" for f in repo.graph.files()}
    assert errors["a.php"].startswith("syntax error")
    assert errors["b.rb"].startswith("syntax error")
    assert "nesting deeper" in errors["deep.rb"] and "nesting deeper" in errors["deep.php"]


def test_php_and_ruby_test_files() -> None:
    for path in (
        "tests/Unit/CartTest.php",
        "src/Tests/Fixtures/Dummy.php",
        "spec/cart_spec.rb",
        "spec/support/helpers.rb",
        "test/cart_test.rb",
        "lib/shop/cart_test.rb",
    ):
        assert is_test_path(path), path
    for path in ("src/Cart.php", "lib/shop/spec.rb", "app/models/spec/x.py", "lib/Tests.php"):
        assert not is_test_path(path), path


def test_minified_and_bundled_files_never_outrank_product_code(tmp_path: Path) -> None:
    words = "cart total discount coupon apply"
    minified = ";".join(
        f"function {w}{i}(a){{return a.{w}}}" for i in range(300) for w in words.split()
    )
    repo = indexed_repo(
        tmp_path,
        {
            "src/Coupon.php": (
                "<?php\nnamespace Shop;\n\nclass Coupon\n{\n"
                "    public function apply($cart) { return $cart; }\n}\n"
            ),
            "public/js/jquery.min.js": f"{minified}\n",
            "public/js/app.js": f"{minified}\n",
            "dist/scripts.js": "\n".join(
                f"function applyCoupon{i}(cart) {{\n  return cart.total - discount;\n}}"
                for i in range(50)
            )
            + "\n",
            "composer.lock": '{"packages": [{"name": "coupon/apply"}]}\n',
            "package-lock.json": '{"name": "cart", "lockfileVersion": 3}\n',
        },
    )
    ranked = repo.retrieve(
        "Applying a coupon to the cart gives the wrong total discount"
    ).ranked_files()
    assert ranked and ranked[0] == "src/Coupon.php"
    generated = {
        "public/js/jquery.min.js",
        "public/js/app.js",
        "dist/scripts.js",
        "composer.lock",
        "package-lock.json",
    }
    assert not generated & set(ranked)
