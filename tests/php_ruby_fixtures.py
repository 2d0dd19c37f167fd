"""Small PHP and Ruby projects with known graphs: a class calling through `$this`,
`parent::`, a typed constructor property, a local holding `new`, an imported class and a
static call (PHP); an implicit receiver, `self.`, a superclass, a mixin, a local holding
`Foo.new` and a module method (Ruby)."""

from __future__ import annotations

import textwrap
from pathlib import Path


def write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(textwrap.dedent(text).lstrip("\n"))


PHP = {
    "composer.json": '{"autoload": {"psr-4": {"Shop\\\\": "src/"}}}\n',
    "src/Cart.php": """
        <?php
        namespace Shop;

        use Shop\\Pricing\\Rules;

        /** A shopping cart. */
        class Cart extends Basket
        {
            public function __construct(private Rules $rules) {}

            public function total(): int
            {
                $this->check();
                parent::clear();
                $line = new Line();
                $line->price();
                return Rules::apply($this->rules->base());
            }

            private function check() {}
        }
        """,
    "src/Basket.php": """
        <?php
        namespace Shop;

        abstract class Basket { public function clear() {} }
        """,
    "src/Line.php": """
        <?php
        namespace Shop;

        class Line { public function price() {} }
        """,
    "src/Pricing/Rules.php": """
        <?php
        namespace Shop\\Pricing;

        class Rules
        {
            public static function apply($x) { return $x; }
            public function base() { return 1; }
        }
        """,
}

RUBY = {
    "lib/shop.rb": """
        require "shop/cart"
        """,
    "lib/shop/cart.rb": """
        module Shop
          # A shopping cart.
          class Cart < Basket
            include Pricing

            def total
              check
              self.clear
              line = Line.new
              line.price
              Pricing.apply(base)
            end

            def self.build
              new
            end

            private

            def check; end
          end
        end
        """,
    "lib/shop/basket.rb": """
        module Shop
          class Basket
            def clear; end
          end
        end
        """,
    "lib/shop/line.rb": """
        module Shop
          class Line
            def price; end
          end
        end
        """,
    "lib/shop/pricing.rb": """
        module Shop
          module Pricing
            def self.apply(x) = x

            def base
              1
            end
          end
        end
        """,
}
