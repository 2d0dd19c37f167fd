//! The generic tier (`lang/tags.rs`, `resolve/tags.rs`) and the plain tier end to end: per
//! language, definitions with their kinds and line spans and a call edge into another file;
//! conservative resolution of names defined more than once; refreshes equal to cold
//! builds; fail-soft parsing; plain files recorded with their module alone.

use super::*;

/// `file qualname kind line-end_line` of every definition under `dir`, by file and line.
fn defs_under(db: &Path, dir: &str) -> Vec<String> {
    pairs(
        db,
        &format!(
            "SELECT file || ' ' || qualname || ' ' || kind, line || '-' || end_line FROM nodes \
             WHERE kind != 'ref' AND file LIKE '{dir}/%' ORDER BY file, line, qualname"
        ),
    )
    .into_iter()
    .map(|(a, b)| format!("{a} {b}"))
    .collect()
}

/// `src_qualname -> dst_qualname` of every invoke edge from files under `dir` (lines dropped).
fn calls_under(db: &Path, dir: &str) -> Vec<String> {
    let strip = |s: &str| {
        s.rsplit_once(':')
            .map_or(s.to_string(), |(q, _)| q.to_string())
    };
    let mut out: Vec<String> = pairs(
        db,
        &format!(
            "SELECT e.src, e.dst FROM edges e JOIN nodes n ON n.id = e.src \
             WHERE e.type = 'invoke' AND n.file LIKE '{dir}/%'"
        ),
    )
    .into_iter()
    .map(|(s, d)| format!("{} -> {}", strip(&s), strip(&d)))
    .collect();
    out.sort();
    out.dedup();
    out
}

/// Two files per language: a cart calling into pricing.
const CARTS: &[(&str, &str)] = &[
    (
        "cs/Cart.cs",
        "using System;\n\nnamespace Shop\n{\n    public class Cart : Base\n    {\n        \
         public void Add(Item item)\n        {\n            var p = new Pricing();\n            \
         p.Round(item);\n            Log.Write(\"added\");\n        }\n    }\n}\n",
    ),
    (
        "cs/Pricing.cs",
        "namespace Shop\n{\n    public class Pricing\n    {\n        public decimal \
         Round(Item item) { return 0; }\n    }\n\n    public static class Log\n    {\n        \
         public static void Write(string s) { }\n        public static void Write(string s, \
         int n) { }\n    }\n}\n",
    ),
    (
        "swift/Cart.swift",
        "import Foundation\n\nclass Cart {\n    var items: [Int] = []\n\n    init() {\n        \
         items = []\n    }\n\n    func add(_ item: Int) {\n        let total = price(item)\n        \
         let p = Pricing()\n        p.round(total)\n    }\n}\n",
    ),
    (
        "swift/Pricing.swift",
        "struct Pricing {\n    func round(_ x: Int) -> Int { return x }\n}\n\nfunc price(_ item: \
         Int) -> Int { return item }\n",
    ),
    (
        "lua/cart.lua",
        "local M = {}\n\nfunction M.add(cart, item)\n  local p = pricing.round(item)\n  \
         log_total(p)\nend\n\nreturn M\n",
    ),
    (
        "lua/pricing.lua",
        "pricing = {}\n\nfunction pricing.round(item)\n  return item\nend\n\nfunction \
         log_total(x)\n  print(x)\nend\n",
    ),
    (
        "elixir/cart.ex",
        "defmodule Shop.Cart do\n  alias Shop.Pricing\n\n  def add(cart, item) do\n    \
         Pricing.round(item) |> total()\n  end\n\n  defp total(x), do: x\n  defp total(x, y), \
         do: x + y\nend\n",
    ),
    (
        "elixir/pricing.ex",
        "defmodule Shop.Pricing do\n  def round(item), do: item\nend\n",
    ),
    (
        "dart/cart.dart",
        "import 'pricing.dart';\n\nclass Cart {\n  int count = 0;\n\n  void add(int item) {\n    \
         final p = Pricing();\n    p.round(item);\n    logTotal(1);\n  }\n}\n",
    ),
    (
        "dart/pricing.dart",
        "class Pricing {\n  int round(int i) => i;\n}\n\nvoid logTotal(int x) {}\n",
    ),
    (
        "ocaml/cart.ml",
        "(** Adds an item. *)\nlet add cart item =\n  let p = Pricing.round item in\n  \
         Pricing.log_total p\n",
    ),
    (
        "ocaml/pricing.ml",
        "let round item = item\nlet log_total x = print_int x\n",
    ),
    (
        "r/cart.R",
        "add_item <- function(cart, item) {\n  p <- round_price(item)\n  log_total(p)\n}\n",
    ),
    (
        "r/pricing.R",
        "round_price <- function(item) item\nlog_total <- function(x) print(x)\n",
    ),
    (
        "elm/Cart.elm",
        "module Cart exposing (add)\n\nimport Pricing\n\n\nadd : Int -> Int\nadd item =\n    \
         Pricing.roundPrice item\n",
    ),
    (
        "elm/Pricing.elm",
        "module Pricing exposing (roundPrice)\n\n\nroundPrice : Int -> Int\nroundPrice item \
         =\n    item\n",
    ),
    (
        "kt/Cart.kt",
        "package shop\n\nclass Cart(val owner: String) : Base() {\n    val items = \
         mutableListOf<Int>()\n\n    fun add(item: Int) {\n        val p = Pricing()\n        \
         p.round(item)\n        logTotal(item)\n    }\n}\n",
    ),
    (
        "kt/Pricing.kt",
        "package shop\n\ninterface Priced {\n    fun total(): Int\n}\n\nclass Pricing : Priced \
         {\n    override fun total(): Int = 0\n\n    fun round(item: Int): Int = item\n}\n\n\
         object Log {\n    fun write(s: String) {}\n}\n\nfun logTotal(x: Int) {\n    \
         Log.write(\"total\")\n}\n",
    ),
    (
        "scala/Cart.scala",
        "package shop\n\nclass Cart(val owner: String) extends Base {\n  val items = List(1, \
         2)\n\n  def add(item: Int): Unit = {\n    val p = new Pricing()\n    p.round(item)\n    \
         logTotal(item)\n  }\n}\n",
    ),
    (
        "scala/Pricing.scala",
        "package shop\n\ntrait Priced {\n  def total: Int\n}\n\nclass Pricing extends Priced \
         {\n  def total: Int = 0\n\n  def round(item: Int): Int = item\n}\n\nobject Log {\n  \
         def write(s: String): Unit = ()\n}\n\ndef logTotal(x: Int): Unit = \
         Log.write(\"total\")\n",
    ),
    (
        "sol/Cart.sol",
        "// SPDX-License-Identifier: MIT\npragma solidity ^0.8.20;\n\nimport \"./Pricing.sol\";\n\n\
         contract Cart is Owned {\n    uint256 public total;\n\n    function add(uint256 item) \
         public onlyOwner {\n        Pricing p = new Pricing();\n        total += p.round(item);\n\
         \x20       logTotal(total);\n        if (total == 0) revert Empty();\n    }\n}\n",
    ),
    (
        "sol/Pricing.sol",
        "pragma solidity ^0.8.20;\n\ninterface Priced {\n    function total() external view \
         returns (uint256);\n}\n\ncontract Owned {\n    address owner;\n\n    modifier \
         onlyOwner() {\n        require(msg.sender == owner);\n        _;\n    }\n}\n\n\
         contract Pricing is Priced {\n    error Empty();\n    event Rounded(uint256 item);\n\n\
         \x20   function total() external view returns (uint256) {\n        return 0;\n    }\n\n\
         \x20   function round(uint256 item) public returns (uint256) {\n        emit \
         Rounded(item);\n        return item;\n    }\n}\n\nlibrary Log {\n    function \
         write(uint256 x) internal pure returns (uint256) {\n        return x;\n    }\n}\n\n\
         function logTotal(uint256 x) pure returns (uint256) {\n    return Log.write(x);\n}\n",
    ),
];

#[test]
// One index of the fixture, then its checks language by language: split, each part would
// index the same repository again.
#[allow(clippy::too_many_lines)]
fn every_generic_tier_language_gives_definitions_and_cross_file_calls() {
    let d = repo(CARTS);
    let db = d.path().join(".ctxfast/recon.db");
    index(d.path(), &db, &IndexOptions::default()).unwrap();
    let languages = pairs(&db, "SELECT path, language FROM files ORDER BY path");
    let expected: Vec<(String, String)> = CARTS
        .iter()
        .map(|(p, _)| (p.to_string(), Lang::from_path(p).unwrap().as_str().into()))
        .collect();
    let mut expected = expected;
    expected.sort();
    assert_eq!(languages, expected);
    assert_eq!(
        count(
            &db,
            "SELECT COUNT(*) FROM files WHERE parse_error IS NOT NULL"
        ),
        0
    );
    let cases: &[(&str, &[&str], &[&str])] = &[
        (
            "cs",
            &[
                "cs/Cart.cs cs.Cart def 1-15",
                "cs/Cart.cs cs.Cart.Shop class 3-14",
                "cs/Cart.cs cs.Cart.Shop.Cart class 5-13",
                "cs/Cart.cs cs.Cart.Shop.Cart.Add function 7-12",
                "cs/Pricing.cs cs.Pricing def 1-14",
                "cs/Pricing.cs cs.Pricing.Shop class 1-13",
                "cs/Pricing.cs cs.Pricing.Shop.Pricing class 3-6",
                "cs/Pricing.cs cs.Pricing.Shop.Pricing.Round function 5-5",
                "cs/Pricing.cs cs.Pricing.Shop.Log class 8-12",
                "cs/Pricing.cs cs.Pricing.Shop.Log.Write function 10-10",
                "cs/Pricing.cs cs.Pricing.Shop.Log.Write function 11-11",
            ],
            &[
                // `new Pricing()`, `p.Round()`, and the first of `Write`'s overloads.
                "cs.Cart.Shop.Cart.Add -> cs.Pricing.Shop.Log.Write",
                "cs.Cart.Shop.Cart.Add -> cs.Pricing.Shop.Pricing",
                "cs.Cart.Shop.Cart.Add -> cs.Pricing.Shop.Pricing.Round",
            ],
        ),
        (
            "swift",
            &[
                "swift/Cart.swift swift.Cart def 1-16",
                "swift/Cart.swift swift.Cart.Cart class 3-15",
                "swift/Cart.swift swift.Cart.Cart.items var 4-4",
                // Tagged by its class only: narrowed to its own declaration.
                "swift/Cart.swift swift.Cart.Cart.init function 6-8",
                "swift/Cart.swift swift.Cart.Cart.add function 10-14",
                "swift/Pricing.swift swift.Pricing def 1-6",
                "swift/Pricing.swift swift.Pricing.Pricing class 1-3",
                "swift/Pricing.swift swift.Pricing.Pricing.round function 2-2",
                "swift/Pricing.swift swift.Pricing.price function 5-5",
            ],
            &[
                "swift.Cart.Cart.add -> swift.Pricing.Pricing",
                "swift.Cart.Cart.add -> swift.Pricing.Pricing.round",
                "swift.Cart.Cart.add -> swift.Pricing.price",
            ],
        ),
        (
            "lua",
            &[
                "lua/cart.lua lua.cart def 1-9",
                "lua/cart.lua lua.cart.add function 3-6",
                "lua/pricing.lua lua.pricing def 1-10",
                "lua/pricing.lua lua.pricing.round function 3-5",
                "lua/pricing.lua lua.pricing.log_total function 7-9",
            ],
            &[
                "lua.cart.add -> lua.pricing.log_total",
                "lua.cart.add -> lua.pricing.round",
            ],
        ),
        (
            "elixir",
            &[
                "elixir/cart.ex elixir.cart def 1-11",
                "elixir/cart.ex elixir.cart.Cart class 1-10",
                "elixir/cart.ex elixir.cart.Cart.add function 4-6",
                "elixir/cart.ex elixir.cart.Cart.total function 8-8",
                "elixir/cart.ex elixir.cart.Cart.total function 9-9",
                "elixir/pricing.ex elixir.pricing def 1-4",
                "elixir/pricing.ex elixir.pricing.Pricing class 1-3",
                "elixir/pricing.ex elixir.pricing.Pricing.round function 2-2",
            ],
            &[
                // The alias names the module; `total`'s clauses are one function.
                "elixir.cart.Cart -> elixir.pricing.Pricing",
                "elixir.cart.Cart.add -> elixir.cart.Cart.total",
                "elixir.cart.Cart.add -> elixir.pricing.Pricing",
                "elixir.cart.Cart.add -> elixir.pricing.Pricing.round",
            ],
        ),
        (
            "dart",
            &[
                "dart/cart.dart dart.cart def 1-12",
                "dart/cart.dart dart.cart.Cart class 3-11",
                // The query tags the signature; the span takes the body in.
                "dart/cart.dart dart.cart.Cart.add function 6-10",
                "dart/pricing.dart dart.pricing def 1-6",
                "dart/pricing.dart dart.pricing.Pricing class 1-3",
                "dart/pricing.dart dart.pricing.Pricing.round function 2-2",
                "dart/pricing.dart dart.pricing.logTotal function 5-5",
            ],
            &[
                "dart.cart.Cart.add -> dart.pricing.Pricing",
                "dart.cart.Cart.add -> dart.pricing.Pricing.round",
                "dart.cart.Cart.add -> dart.pricing.logTotal",
            ],
        ),
        (
            "ocaml",
            &[
                "ocaml/cart.ml ocaml.cart def 1-5",
                "ocaml/cart.ml ocaml.cart.add function 2-4",
                "ocaml/pricing.ml ocaml.pricing def 1-3",
                "ocaml/pricing.ml ocaml.pricing.round function 1-1",
                "ocaml/pricing.ml ocaml.pricing.log_total function 2-2",
            ],
            &[
                "ocaml.cart.add -> ocaml.pricing.log_total",
                "ocaml.cart.add -> ocaml.pricing.round",
            ],
        ),
        (
            "r",
            &[
                "r/cart.R r.cart def 1-5",
                "r/cart.R r.cart.add_item function 1-4",
                "r/pricing.R r.pricing def 1-3",
                "r/pricing.R r.pricing.round_price function 1-1",
                "r/pricing.R r.pricing.log_total function 2-2",
            ],
            &[
                "r.cart.add_item -> r.pricing.log_total",
                "r.cart.add_item -> r.pricing.round_price",
            ],
        ),
        (
            "elm",
            &[
                "elm/Cart.elm elm.Cart def 1-9",
                "elm/Cart.elm elm.Cart.Cart class 1-1",
                "elm/Cart.elm elm.Cart.add function 7-8",
                "elm/Pricing.elm elm.Pricing def 1-7",
                "elm/Pricing.elm elm.Pricing.Pricing class 1-1",
                "elm/Pricing.elm elm.Pricing.roundPrice function 5-6",
            ],
            &["elm.Cart.add -> elm.Pricing.roundPrice"],
        ),
        (
            "kt",
            &[
                "kt/Cart.kt kt.Cart def 1-12",
                "kt/Cart.kt kt.Cart.Cart class 3-11",
                // A constructor parameter declaring a property is one.
                "kt/Cart.kt kt.Cart.Cart.owner var 3-3",
                "kt/Cart.kt kt.Cart.Cart.items var 4-4",
                "kt/Cart.kt kt.Cart.Cart.add function 6-10",
                "kt/Pricing.kt kt.Pricing def 1-20",
                "kt/Pricing.kt kt.Pricing.Priced class 3-5",
                "kt/Pricing.kt kt.Pricing.Priced.total function 4-4",
                "kt/Pricing.kt kt.Pricing.Pricing class 7-11",
                "kt/Pricing.kt kt.Pricing.Pricing.total function 8-8",
                "kt/Pricing.kt kt.Pricing.Pricing.round function 10-10",
                "kt/Pricing.kt kt.Pricing.Log class 13-15",
                "kt/Pricing.kt kt.Pricing.Log.write function 14-14",
                "kt/Pricing.kt kt.Pricing.logTotal function 17-19",
            ],
            &[
                // `Pricing()`, `p.round()`, a top-level function; a supertype; a member call.
                "kt.Cart.Cart.add -> kt.Pricing.Pricing",
                "kt.Cart.Cart.add -> kt.Pricing.Pricing.round",
                "kt.Cart.Cart.add -> kt.Pricing.logTotal",
                "kt.Pricing.Pricing -> kt.Pricing.Priced",
                "kt.Pricing.logTotal -> kt.Pricing.Log.write",
            ],
        ),
        (
            "scala",
            &[
                "scala/Cart.scala scala.Cart def 1-12",
                "scala/Cart.scala scala.Cart.Cart class 3-11",
                "scala/Cart.scala scala.Cart.Cart.owner var 3-3",
                "scala/Cart.scala scala.Cart.Cart.items var 4-4",
                "scala/Cart.scala scala.Cart.Cart.add function 6-10",
                "scala/Pricing.scala scala.Pricing def 1-18",
                "scala/Pricing.scala scala.Pricing.Priced class 3-5",
                // An abstract `def`: a pattern added to the crate's query.
                "scala/Pricing.scala scala.Pricing.Priced.total function 4-4",
                "scala/Pricing.scala scala.Pricing.Pricing class 7-11",
                "scala/Pricing.scala scala.Pricing.Pricing.total function 8-8",
                "scala/Pricing.scala scala.Pricing.Pricing.round function 10-10",
                "scala/Pricing.scala scala.Pricing.Log class 13-15",
                "scala/Pricing.scala scala.Pricing.Log.write function 14-14",
                "scala/Pricing.scala scala.Pricing.logTotal function 17-17",
            ],
            &[
                // `new Pricing()`, `p.round()` (added to the query), a top-level function; a
                // supertype; a member call on an object.
                "scala.Cart.Cart.add -> scala.Pricing.Pricing",
                "scala.Cart.Cart.add -> scala.Pricing.Pricing.round",
                "scala.Cart.Cart.add -> scala.Pricing.logTotal",
                "scala.Pricing.Pricing -> scala.Pricing.Priced",
                "scala.Pricing.logTotal -> scala.Pricing.Log.write",
            ],
        ),
        (
            "sol",
            &[
                "sol/Cart.sol sol.Cart def 1-16",
                "sol/Cart.sol sol.Cart.Cart class 6-15",
                "sol/Cart.sol sol.Cart.Cart.total var 7-7",
                "sol/Cart.sol sol.Cart.Cart.add function 9-14",
                "sol/Pricing.sol sol.Pricing def 1-39",
                "sol/Pricing.sol sol.Pricing.Priced class 3-5",
                // An interface's function, a modifier, a state variable, a custom error, a
                // library's function: patterns added to the crate's query.
                "sol/Pricing.sol sol.Pricing.Priced.total function 4-4",
                "sol/Pricing.sol sol.Pricing.Owned class 7-14",
                "sol/Pricing.sol sol.Pricing.Owned.owner var 8-8",
                "sol/Pricing.sol sol.Pricing.Owned.onlyOwner function 10-13",
                "sol/Pricing.sol sol.Pricing.Pricing class 16-28",
                "sol/Pricing.sol sol.Pricing.Pricing.Empty class 17-17",
                "sol/Pricing.sol sol.Pricing.Pricing.Rounded class 18-18",
                "sol/Pricing.sol sol.Pricing.Pricing.total function 20-22",
                "sol/Pricing.sol sol.Pricing.Pricing.round function 24-27",
                "sol/Pricing.sol sol.Pricing.Log class 30-34",
                "sol/Pricing.sol sol.Pricing.Log.write function 31-33",
                "sol/Pricing.sol sol.Pricing.logTotal function 36-38",
            ],
            &[
                // Base contracts (`is`), calls (`p.round()`, `logTotal()`, `Log.write()`) and
                // `emit` through the crate's query; a modifier, `new Pricing()` and
                // `revert Empty()` through the patterns added to it.
                "sol.Cart.Cart -> sol.Pricing.Owned",
                "sol.Cart.Cart.add -> sol.Pricing.Owned.onlyOwner",
                "sol.Cart.Cart.add -> sol.Pricing.Pricing",
                "sol.Cart.Cart.add -> sol.Pricing.Pricing.Empty",
                "sol.Cart.Cart.add -> sol.Pricing.Pricing.round",
                "sol.Cart.Cart.add -> sol.Pricing.logTotal",
                "sol.Pricing.Pricing -> sol.Pricing.Priced",
                "sol.Pricing.Pricing.round -> sol.Pricing.Pricing.Rounded",
                "sol.Pricing.logTotal -> sol.Pricing.Log.write",
            ],
        ),
    ];
    for (dir, defs, calls) in cases {
        let defs: Vec<String> = defs.iter().map(ToString::to_string).collect();
        assert_eq!(defs_under(&db, dir), defs, "{dir} definitions");
        let got = calls_under(&db, dir);
        for c in *calls {
            assert!(got.iter().any(|g| g == c), "{dir}: no {c} in {got:?}");
        }
    }
    let doc = pairs(
        &db,
        "SELECT n.qualname, m.doc FROM defs_meta m JOIN nodes n ON n.id = m.id \
         WHERE n.qualname = 'ocaml.cart.add'",
    );
    assert_eq!(doc, vec![("ocaml.cart.add".into(), "Adds an item.".into())]);
    let sig = pairs(
        &db,
        "SELECT n.qualname, m.signature FROM defs_meta m JOIN nodes n ON n.id = m.id \
         WHERE n.qualname = 'cs.Pricing.Shop.Pricing.Round'",
    );
    assert_eq!(
        sig[0].1, "public decimal Round(Item item) { return 0; }",
        "the line holding the name"
    );
}

#[test]
fn a_name_defined_more_than_once_resolves_to_the_nearest_or_not_at_all() {
    let d = repo(&[
        (
            "app/a/caller.lua",
            "function go()\n  helper()\n  shared()\n  mine()\nend\n\nfunction mine()\nend\n",
        ),
        ("app/a/helper.lua", "function helper()\nend\n"),
        ("app/b/helper.lua", "function helper()\nend\n"),
        ("app/c/one.lua", "function shared()\nend\n"),
        ("app/d/two.lua", "function shared()\nend\n"),
        ("app/d/mine.lua", "function mine()\nend\n"),
    ]);
    let db = d.path().join(".ctxfast/recon.db");
    index(d.path(), &db, &IndexOptions::default()).unwrap();
    assert_eq!(
        calls_under(&db, "app"),
        vec![
            // Same file first, then same directory; `shared` is ambiguous: no edge.
            "app.a.caller.go -> app.a.caller.mine",
            "app.a.caller.go -> app.a.helper.helper",
        ]
    );
}

#[test]
fn generic_tier_refreshes_match_a_cold_build_at_every_step() {
    let d = repo(&[
        ("src/a.ex", "defmodule A do\n  def f, do: B.g()\nend\n"),
        ("src/b.ex", "defmodule B do\n  def g, do: 1\nend\n"),
        ("src/c.lua", "function c()\n  helper()\nend\n"),
    ]);
    let db = d.path().join(".ctxfast/recon.db");
    let opts = IndexOptions::default();
    index(d.path(), &db, &opts).unwrap();
    let w = |r: &Path, p: &str, t: &str| {
        let path = r.join(p);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, t).unwrap();
    };
    let steps: [&dyn Fn(&Path); 5] = [
        // The callee appears, in another directory; then a second one makes it ambiguous.
        &|r| w(r, "lib/h.lua", "function helper()\nend\n"),
        &|r| w(r, "other/h.lua", "function helper()\nend\n"),
        &|r| fs::remove_file(r.join("other/h.lua")).unwrap(),
        // Lines move under the callee; the callee is renamed away.
        &|r| w(r, "src/b.ex", "\n\ndefmodule B do\n  def g, do: 1\nend\n"),
        &|r| w(r, "src/b.ex", "defmodule B do\n  def h, do: 1\nend\n"),
    ];
    for (n, step) in steps.iter().enumerate() {
        step(d.path());
        index(d.path(), &db, &opts).unwrap();
        assert!(matches_cold(d.path(), &db), "step {n}");
    }
    assert_eq!(
        calls_under(&db, "src"),
        vec!["src.a.A.f -> src.b.B", "src.c.c -> lib.h.helper"]
    );
}

#[test]
fn generic_tier_bad_input_fails_soft() {
    let minified = format!("{}\n", "local t = {1, 2, 3} ".repeat(200));
    let d = repo(&[
        (
            "bad/broken.cs",
            "namespace N {\n  class Ok { void Fine() {} }\n}\nclass {{{{ \n",
        ),
        (
            "bad/deep.lua",
            &format!("x = {}1{}\n", "(\n".repeat(5000), ")\n".repeat(5000)),
        ),
        ("bad/table.lua", minified.as_str()),
        ("bad/empty.swift", ""),
        (
            "bad/unclosed.kt",
            "class Ok {\n    fun fine() {}\n}\nclass {{{{ (\n",
        ),
        ("bad/empty.kts", ""),
        (
            "bad/unfinished.scala",
            "object Ok {\n  def fine(): Unit = ()\n}\nclass [[[[ {\n",
        ),
        ("bad/empty.sc", ""),
        (
            "bad/unterminated.sol",
            "contract Ok {\n    function fine() public {}\n}\ncontract {{{{ (\n",
        ),
        ("bad/empty.sol", ""),
    ]);
    fs::write(
        d.path().join("bad/latin1.lua"),
        b"-- caf\xe9\nfunction ok()\nend\n",
    )
    .unwrap();
    let db = d.path().join(".ctxfast/recon.db");
    index(d.path(), &db, &IndexOptions::default()).unwrap();
    let files = pairs(
        &db,
        "SELECT path, coalesce(substr(parse_error, 1, 22), '') FROM files ORDER BY path",
    );
    assert_eq!(
        files,
        vec![
            ("bad/broken.cs".into(), "syntax error: syntax e".into()),
            ("bad/deep.lua".into(), String::new()),
            ("bad/empty.kts".into(), String::new()),
            ("bad/empty.sc".into(), String::new()),
            ("bad/empty.sol".into(), String::new()),
            ("bad/empty.swift".into(), String::new()),
            ("bad/latin1.lua".into(), String::new()),
            ("bad/table.lua".into(), "skipped: minified (lin".into()),
            ("bad/unclosed.kt".into(), "syntax error: syntax e".into()),
            (
                "bad/unfinished.scala".into(),
                "syntax error: syntax e".into()
            ),
            (
                "bad/unterminated.sol".into(),
                "syntax error: syntax e".into()
            ),
        ]
    );
    assert_eq!(
        count(
            &db,
            "SELECT COUNT(*) FROM nodes WHERE qualname = 'bad.broken.N.Ok.Fine'"
        ),
        1,
        "the partial graph is kept"
    );
    for kept in [
        "bad.unclosed.Ok.fine",
        "bad.unfinished.Ok.fine",
        "bad.unterminated.Ok.fine",
    ] {
        assert_eq!(
            count(
                &db,
                &format!("SELECT COUNT(*) FROM nodes WHERE qualname = '{kept}'")
            ),
            1,
            "{kept}: the partial graph is kept"
        );
    }
    assert_eq!(
        count(
            &db,
            "SELECT COUNT(*) FROM nodes WHERE qualname = 'bad.latin1.ok'"
        ),
        1,
        "a file that is not UTF-8 is parsed as bytes"
    );
}

#[test]
fn plain_files_are_recorded_with_their_module_alone() {
    let d = repo(&[
        (
            "src/ledger.cob",
            "       IDENTIFICATION DIVISION.\n       PROGRAM-ID. LEDGER.\n",
        ),
        (
            "src/solver.f90",
            "subroutine solve(x)\n  real :: x\nend subroutine solve\n",
        ),
        ("scripts/build.sh", "#!/bin/sh\nmake all\n"),
        ("notes.txt", "not source\n"),
    ]);
    let db = d.path().join(".ctxfast/recon.db");
    index(d.path(), &db, &IndexOptions::default()).unwrap();
    assert_eq!(
        pairs(
            &db,
            "SELECT path, language FROM files WHERE sha256 IS NOT NULL ORDER BY path"
        ),
        vec![
            ("scripts/build.sh".into(), "shell".into()),
            ("src/ledger.cob".into(), "cobol".into()),
            ("src/solver.f90".into(), "fortran".into()),
        ]
    );
    assert_eq!(
        pairs(
            &db,
            "SELECT qualname, kind FROM nodes WHERE file = 'src/solver.f90'"
        ),
        vec![("src.solver".into(), "def".into())]
    );
}

#[test]
fn generic_tier_languages_by_extension_and_name() {
    for (path, name) in [
        ("a/B.cs", "csharp"),
        ("a/b.swift", "swift"),
        ("a/b.lua", "lua"),
        ("a/b.ex", "elixir"),
        ("a/b_test.exs", "elixir"),
        ("a/b.dart", "dart"),
        ("a/b.ml", "ocaml"),
        ("a/b.R", "r"),
        ("a/b.elm", "elm"),
        ("a/b.kt", "kotlin"),
        ("a/build.gradle.kts", "kotlin"),
        ("a/B.scala", "scala"),
        ("a/b.sc", "scala"),
        ("a/Token.sol", "solidity"),
        // Perl stays in the plain tier: its grammar crate does not build with ours.
        ("a/b.pl", "perl"),
        ("a/B.pm", "perl"),
        ("a/b.f90", "fortran"),
    ] {
        let lang = Lang::from_path(path).unwrap();
        assert_eq!(lang.as_str(), name);
        assert_eq!(Lang::from_name(name), Some(lang));
    }
    assert_eq!(Lang::from_path("a/b.txt"), None);
    let names: Vec<&str> = Lang::all().map(Lang::as_str).collect();
    let mut unique = names.clone();
    unique.sort_unstable();
    unique.dedup();
    assert_eq!(unique.len(), names.len(), "one name per language");
}

#[test]
fn generated_files_of_the_generic_tier_are_skipped_by_name() {
    let d = repo(&[
        ("lib/user.dart", "class User {}\n"),
        (
            "lib/user.g.dart",
            "User _$UserFromJson(Map json) => User();\n",
        ),
        ("lib/user.freezed.dart", "mixin _$User {}\n"),
        (
            "Forms/Main.Designer.cs",
            "partial class Main { void InitializeComponent() {} }\n",
        ),
        ("Api/Client.g.cs", "class Client {}\n"),
    ]);
    let db = d.path().join(".ctxfast/recon.db");
    index(d.path(), &db, &IndexOptions::default()).unwrap();
    assert_eq!(
        pairs(
            &db,
            "SELECT path, coalesce(parse_error, '') FROM files ORDER BY path"
        ),
        vec![
            ("Api/Client.g.cs".into(), discover::GENERATED_NAME.into()),
            (
                "Forms/Main.Designer.cs".into(),
                discover::GENERATED_NAME.into()
            ),
            ("lib/user.dart".into(), String::new()),
            (
                "lib/user.freezed.dart".into(),
                discover::GENERATED_NAME.into()
            ),
            ("lib/user.g.dart".into(), discover::GENERATED_NAME.into()),
        ]
    );
}
