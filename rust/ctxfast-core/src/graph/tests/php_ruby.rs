//! PHP and Ruby end to end: definitions and their qualnames, call and import edges through
//! each language's own name rules, documentation, refreshes equal to cold builds, and
//! fail-soft parsing.

use super::*;

/// The qualnames (line dropped) that the reference sites inside `scope` point to.
fn callees(db: &Path, scope: &str) -> Vec<String> {
    let mut out: Vec<String> = pairs(
        db,
        &format!("SELECT src, dst FROM edges WHERE type = 'invoke' AND src LIKE '{scope}:%'"),
    )
    .into_iter()
    .map(|(_, d)| d.rsplit_once(':').map_or(d.clone(), |(q, _)| q.to_string()))
    .collect();
    out.sort();
    out.dedup();
    out
}

fn imports(db: &Path) -> Vec<(String, String)> {
    pairs(
        db,
        "SELECT n.file, e.dst FROM edges e JOIN nodes n ON n.id = e.src \
         WHERE e.type = 'import' ORDER BY n.file, e.dst",
    )
    .into_iter()
    .map(|(f, d)| {
        (
            f,
            d.rsplit_once(':').map_or(d.clone(), |(q, _)| q.to_string()),
        )
    })
    .collect()
}

/// Each invoke edge of `file` as (the call's line, "kind qualname:line" of its target), in
/// line order: which of two definitions sharing a qualname a call reached.
fn calls_by_line(db: &Path, file: &str) -> Vec<(String, String)> {
    pairs(
        db,
        &format!(
            "SELECT CAST(r.line AS TEXT), n.kind || ' ' || n.qualname || ':' || n.line \
             FROM edges e JOIN nodes r ON r.id = e.src JOIN nodes n ON n.id = e.dst \
             WHERE e.type = 'invoke' AND r.file = '{file}' ORDER BY r.line, n.line"
        ),
    )
}

/// The calls of `file` that reach a function or method, as [`calls_by_line`] lists them.
fn function_calls_by_line(db: &Path, file: &str) -> Vec<(String, String)> {
    calls_by_line(db, file)
        .into_iter()
        .filter(|(_, t)| t.starts_with("function "))
        .collect()
}

const PHP_KERNEL: &str = r"<?php
namespace App\Http;

use App\Util\Helper;
use App\Util\Missing as Gone;
use function App\Util\helper;
use Vendor\Lib\Client;

/**
 * The kernel.
 *
 * Long description.
 */
final class Kernel extends Base implements Contract
{
    use Greets;

    const VERSION = '1';
    private Bar $bar;

    public function __construct(private Clock $clock) {}

    /** Runs a request. */
    public function run(Request $r): Response
    {
        $this->handle();
        self::boot();
        static::handle();
        parent::start();
        Helper::assist();
        helper();
        \legacy_fn();
        $r->send();
        $this->bar->ping();
        $this->clock->tick();
        $this->greet();
        $made = new Request();
        $made->send();
        $c = new Client();
        $c->send();
        Gone::x();
        return new Response(self::VERSION);
    }

    private function handle() {}
}
";

fn php_repo() -> tempfile::TempDir {
    repo(&[
        ("src/Http/Kernel.php", PHP_KERNEL),
        (
            "src/Http/Base.php",
            "<?php\nnamespace App\\Http;\n\nabstract class Base\n{\n    public function start() {}\n    public static function boot() {}\n}\n",
        ),
        (
            "src/Http/Contract.php",
            "<?php\nnamespace App\\Http;\n\ninterface Contract\n{\n    public function run(Request $r): Response;\n}\n",
        ),
        (
            "src/Http/Greets.php",
            "<?php\nnamespace App\\Http;\n\ntrait Greets\n{\n    public function greet() {}\n}\n",
        ),
        (
            "src/Http/Request.php",
            "<?php\nnamespace App\\Http;\n\nclass Request\n{\n    public function send() {}\n}\n",
        ),
        (
            "src/Http/Response.php",
            "<?php\nnamespace App\\Http;\n\nclass Response {}\n",
        ),
        (
            "src/Http/Bar.php",
            "<?php\nnamespace App\\Http;\n\nclass Bar\n{\n    public function ping() {}\n}\n",
        ),
        (
            "src/Http/Clock.php",
            "<?php\nnamespace App\\Http;\n\nenum Clock: string\n{\n    case Utc = 'utc';\n    public function tick() {}\n}\n",
        ),
        (
            "src/Util/Helper.php",
            "<?php\nnamespace App\\Util;\n\nclass Helper\n{\n    public static function assist() {}\n}\n\nfunction helper() {}\n",
        ),
        ("lib/functions.php", "<?php\n\nfunction legacy_fn() {}\n"),
        // A dependency's class the project also happens to name: never a target.
        ("src/Other/Client.php", "<?php\nnamespace App\\Other;\n\nclass Client\n{\n    public function send() {}\n}\n"),
    ])
}

#[test]
fn php_definitions_are_qualified_by_namespace() {
    let (_d, db) = index_tree(php_repo());
    let defs = pairs(
        &db,
        "SELECT qualname, kind FROM nodes WHERE file = 'src/Http/Kernel.php' AND kind != 'ref' \
         ORDER BY line",
    );
    let defs: Vec<(&str, &str)> = defs.iter().map(|(q, k)| (q.as_str(), k.as_str())).collect();
    assert_eq!(
        defs,
        vec![
            ("src.Http.Kernel", "def"),
            ("App.Http.Kernel", "class"),
            ("App.Http.Kernel.VERSION", "var"),
            ("App.Http.Kernel.bar", "var"),
            ("App.Http.Kernel.__construct", "function"),
            ("App.Http.Kernel.run", "function"),
            ("App.Http.Kernel.handle", "function"),
        ]
    );
    let meta = pairs(
        &db,
        "SELECT n.qualname, m.signature || ' | ' || m.doc FROM defs_meta m \
         JOIN nodes n ON n.id = m.id WHERE n.qualname IN ('App.Http.Kernel', 'App.Http.Kernel.run')",
    );
    assert!(
        meta.contains(&(
            "App.Http.Kernel".into(),
            "final class Kernel extends Base implements Contract | The kernel.".into()
        )),
        "{meta:?}"
    );
    assert!(meta.contains(&(
        "App.Http.Kernel.run".into(),
        "public function run(Request $r): Response | Runs a request.".into()
    )));
    let enum_members = count(
        &db,
        "SELECT COUNT(*) FROM nodes WHERE qualname IN ('App.Http.Clock.Utc', 'App.Http.Clock.tick')",
    );
    assert_eq!(enum_members, 2);
}

#[test]
fn php_calls_resolve_through_namespaces_imports_and_ancestors() {
    let (_d, db) = index_tree(php_repo());
    assert_eq!(
        callees(&db, "App.Http.Kernel.run"),
        vec![
            "App.Http.Bar.ping",       // typed property
            "App.Http.Base.boot",      // self:: reaches an inherited static
            "App.Http.Base.start",     // parent::
            "App.Http.Clock.tick",     // promoted constructor property
            "App.Http.Greets.greet",   // a used trait's method
            "App.Http.Kernel.VERSION", // self::CONST
            "App.Http.Kernel.handle",  // $this-> and static::
            "App.Http.Request",        // new, in the namespace
            "App.Http.Request.send",   // typed parameter, and `$made = new Request`
            "App.Http.Response",       // new
            "App.Util.Helper.assist",  // use + static call
            "App.Util.helper",         // use function
            "lib.functions.legacy_fn", // global function, the only one of its name
        ]
    );
    // Imports reach what they name in the project, and nothing for a dependency's.
    assert_eq!(
        imports(&db),
        vec![
            ("src/Http/Kernel.php".into(), "App.Util.Helper".into()),
            ("src/Http/Kernel.php".into(), "App.Util.helper".into()),
        ]
    );
}

#[test]
fn php_calls_reach_the_method_where_a_property_shares_its_name() {
    // Composer's `Platform`: a static cache `$isDocker` beside the method `isDocker()`, one
    // qualname for both; a call reaches the method, a constant read the constant.
    let (_d, db) = indexed(&[(
        "src/Platform.php",
        "<?php\nnamespace App;\n\nclass Platform\n{\n    private static $isDocker = null;\n    \
         public function isWsl() {}\n    const isWsl = 1;\n\n    public static function isDocker()\n    {\n\
                 return self::$isDocker;\n    }\n\n    public function run()\n    {\n\
                 self::isDocker();\n        $this->isDocker();\n        return self::isWsl;\n    }\n}\n",
    )]);
    let targets = calls_by_line(&db, "src/Platform.php");
    assert_eq!(
        targets,
        vec![
            ("17".into(), "function App.Platform.isDocker:10".into()),
            ("18".into(), "function App.Platform.isDocker:10".into()),
            ("19".into(), "var App.Platform.isWsl:8".into()),
        ]
    );
}

#[test]
fn php_calls_run_bodies_and_never_reach_another_namespace_by_short_name() {
    let (_d, db) = indexed(&[
        (
            "src/Handler.php",
            "<?php\nnamespace App;\n\nclass Handler extends Base implements Formattable\n{\n    use FormatsTrait;\n\n    public function handle()\n    {\n        $this->format();\n        $this->compose();\n        throw new \\InvalidArgumentException('x');\n    }\n\n    public function check()\n    {\n        return time() + \\rmdir('d') + \\legacy();\n    }\n}\n",
        ),
        (
            "src/Formattable.php",
            "<?php\nnamespace App;\n\ninterface Formattable\n{\n    public function format();\n}\n",
        ),
        (
            "src/FormatsTrait.php",
            "<?php\nnamespace App;\n\ntrait FormatsTrait\n{\n    public function format() {}\n    abstract public function compose();\n}\n",
        ),
        (
            "src/Base.php",
            "<?php\nnamespace App;\n\nclass Base\n{\n    public function compose() {}\n}\n",
        ),
        // Same short names in other namespaces: a test double and a package's exception.
        (
            "src/Mock/functions.php",
            "<?php\nnamespace App\\Mock;\n\nfunction time() {}\nfunction rmdir($d) {}\n",
        ),
        (
            "src/Exception/InvalidArgumentException.php",
            "<?php\nnamespace App\\Exception;\n\nclass InvalidArgumentException extends \\InvalidArgumentException {}\n",
        ),
        ("lib/legacy.php", "<?php\n\nfunction legacy() {}\n"),
    ]);
    assert_eq!(
        callees(&db, "App.Handler.handle"),
        vec!["App.Base.compose", "App.FormatsTrait.format"]
    );
    assert_eq!(callees(&db, "App.Handler.check"), vec!["lib.legacy.legacy"]);
}

#[test]
fn php_each_namespace_block_has_its_own_namespace_and_imports() {
    // Flysystem's test doubles: one file, a braced block per namespace mocked; Twig's
    // extensions: a class in `namespace Twig\Extension { … }`, its helper functions in a
    // global `namespace { … }` after it. And the statement form, twice in a file.
    let (_d, db) = indexed(&[
        (
            "src/mocks.php",
            concat!(
                "<?php\n",                                                   // 1
                "\n",                                                        // 2
                "namespace App\\Local {\n",                                  // 3
                "    use App\\Util\\Clock;\n",                               // 4
                "\n",                                                        // 5
                "    function rmdir($d) { return Clock::now(); }\n",         // 6
                "}\n",                                                       // 7
                "\n",                                                        // 8
                "namespace App\\Ftp {\n",                                    // 9
                "    use App\\Util\\Other as Clock;\n",                      // 10
                "\n",                                                        // 11
                "    function ftp_raw() { return Clock::now() + helper(); }\n", // 12
                "}\n",                                                       // 13
                "\n",                                                        // 14
                "namespace {\n",                                             // 15
                "    function helper() { return \\App\\Local\\rmdir('d'); }\n", // 16
                "}\n",                                                       // 17
            ),
        ),
        (
            "src/two.php",
            "<?php\nnamespace App\\One;\n\nfunction a() { b(); }\n\nnamespace App\\Two;\n\n\
             function b() {}\nfunction c() { b(); }\n",
        ),
        (
            "src/Util/Clock.php",
            "<?php\nnamespace App\\Util;\n\nclass Clock\n{\n    public static function now() {}\n}\n",
        ),
        (
            "src/Util/Other.php",
            "<?php\nnamespace App\\Util;\n\nclass Other\n{\n    public static function now() {}\n}\n",
        ),
    ]);
    let defs = pairs(
        &db,
        "SELECT qualname, file FROM nodes WHERE kind = 'function' \
         AND file IN ('src/mocks.php', 'src/two.php') ORDER BY file, line",
    );
    let defs: Vec<&str> = defs.iter().map(|(q, _)| q.as_str()).collect();
    assert_eq!(
        defs,
        vec![
            "App.Local.rmdir",
            "App.Ftp.ftp_raw",
            "src.mocks.helper", // global: named as a file without a namespace
            "App.One.a",
            "App.Two.b",
            "App.Two.c",
        ]
    );
    assert_eq!(
        calls_by_line(&db, "src/mocks.php"),
        vec![
            ("6".into(), "function App.Util.Clock.now:6".into()),
            ("12".into(), "function App.Util.Other.now:6".into()),
            ("12".into(), "function src.mocks.helper:16".into()),
            ("16".into(), "function App.Local.rmdir:6".into()),
        ]
    );
    // `b()` in `App\One` is no call of `App\Two\b`.
    assert_eq!(
        calls_by_line(&db, "src/two.php"),
        vec![("9".into(), "function App.Two.b:8".into())]
    );
}

fn ruby_repo() -> tempfile::TempDir {
    repo(&[
        ("lib/shop.rb", "require \"shop/cart\"\n\nmodule Shop\n  def self.version\n    \"1\"\n  end\nend\n"),
        (
            "lib/shop/cart.rb",
            concat!(
                "require_relative \"base\"\n",
                "\n",
                "module Shop\n",
                "  # A cart of items.\n",
                "  # Holds them.\n",
                "  class Cart < Base\n",
                "    include Pricing\n",
                "    TAX = 2\n",
                "    attr_accessor :owner, \"note\"\n",
                "    define_method(:empty?) do |strict|\n",
                "      total\n",
                "    end\n",
                "\n",
                "    def initialize\n",
                "      @items = Item.new\n",
                "    end\n",
                "\n",
                "    # Adds one.\n",
                "    def add(x)\n",
                "      total\n",
                "      self.clear\n",
                "      Pricing.round(x)\n",
                "      Shop::Item.build\n",
                "      item = Item.new\n",
                "      item.weigh\n",
                "      @items.weigh\n",
                "      helper_fn\n",
                "      price\n",
                "      discount\n",
                "      x.unknown\n",
                "      TAX\n",
                "    end\n",
                "\n",
                "    def total; end\n",
                "\n",
                "    def clear\n",
                "    end\n",
                "  end\n",
                "end\n",
            ),
        ),
        ("lib/shop/base.rb", "module Shop\n  class Base\n    def price\n    end\n  end\nend\n"),
        (
            "lib/shop/pricing.rb",
            "module Shop\n  module Pricing\n    def self.round(x)\n    end\n\n    def discount\n    end\n  end\nend\n",
        ),
        (
            "lib/shop/item.rb",
            "module Shop\n  class Item\n    def self.build\n    end\n\n    def weigh\n    end\n  end\nend\n",
        ),
        // Reopened elsewhere: the conventional file still stands for `Shop::Item`.
        ("lib/shop/ext.rb", "class Shop::Item\n  def extra\n  end\nend\n"),
        ("lib/helpers.rb", "def helper_fn\nend\n"),
        (
            "spec/cart_spec.rb",
            "require_relative \"../lib/shop/cart\"\n\ndescribe Shop::Cart do\n  it \"adds\" do\n    Shop::Cart.new.add(1)\n  end\nend\n",
        ),
    ])
}

#[test]
fn ruby_definitions_calls_and_requires_resolve() {
    let (_d, db) = index_tree(ruby_repo());
    let defs = pairs(
        &db,
        "SELECT qualname, kind FROM nodes WHERE file = 'lib/shop/cart.rb' AND kind != 'ref' \
         ORDER BY line",
    );
    let defs: Vec<(&str, &str)> = defs.iter().map(|(q, k)| (q.as_str(), k.as_str())).collect();
    assert_eq!(
        defs,
        vec![
            ("shop.cart", "def"),
            ("shop.cart.Shop", "class"),
            ("shop.cart.Shop.Cart", "class"),
            ("shop.cart.Shop.Cart.TAX", "var"),
            ("shop.cart.Shop.Cart.owner", "function"),
            ("shop.cart.Shop.Cart.note", "function"),
            ("shop.cart.Shop.Cart.empty?", "function"),
            ("shop.cart.Shop.Cart.initialize", "function"),
            ("shop.cart.Shop.Cart.add", "function"),
            ("shop.cart.Shop.Cart.total", "function"),
            ("shop.cart.Shop.Cart.clear", "function"),
        ]
    );
    assert_eq!(
        count(
            &db,
            "SELECT COUNT(*) FROM nodes WHERE qualname = 'shop.ext.Shop.Item.extra'"
        ),
        1,
        "`class A::B` defines B inside A"
    );
    let docs = pairs(
        &db,
        "SELECT n.qualname, m.doc FROM defs_meta m JOIN nodes n ON n.id = m.id \
         WHERE n.qualname IN ('shop.cart.Shop.Cart', 'shop.cart.Shop.Cart.add') ORDER BY 1",
    );
    assert_eq!(
        docs,
        vec![
            (
                "shop.cart.Shop.Cart".into(),
                "A cart of items. Holds them.".into()
            ),
            ("shop.cart.Shop.Cart.add".into(), "Adds one.".into()),
        ]
    );
    assert_eq!(
        callees(&db, "shop.cart.Shop.Cart.add"),
        vec![
            "helpers.helper_fn",                  // top-level method
            "shop.base.Shop.Base.price",          // superclass
            "shop.cart.Shop.Cart.TAX",            // constant
            "shop.cart.Shop.Cart.clear",          // self.
            "shop.cart.Shop.Cart.total",          // implicit receiver
            "shop.item.Shop.Item",                // Item.new, in the lib/ file of Shop::Item
            "shop.item.Shop.Item.build",          // Shop::Item.build
            "shop.item.Shop.Item.weigh",          // through a local and an ivar
            "shop.pricing.Shop.Pricing.discount", // a mixin's method
            "shop.pricing.Shop.Pricing.round",    // a module's singleton method
        ]
    );
    // A `define_method` body is the method's: its calls are its own.
    assert_eq!(
        callees(&db, "shop.cart.Shop.Cart.empty?"),
        vec!["shop.cart.Shop.Cart.total"]
    );
    assert_eq!(
        imports(&db),
        vec![
            ("lib/shop.rb".into(), "shop.cart".into()),
            ("lib/shop/cart.rb".into(), "shop.base".into()),
            ("spec/cart_spec.rb".into(), "shop.cart".into()),
        ]
    );
}

#[test]
fn ruby_calls_reach_the_def_on_the_side_they_run_on() {
    // Sinatra's `def self.settings` beside `def settings`, Faraday's `attr_writer :conn`
    // beside `def conn`: one local qualname each, two definitions.
    let (_d, db) = indexed(&[(
        "lib/app.rb",
        "class App\n  attr_writer :conn\n\n  def self.settings\n    self\n  end\n\n  def settings\n    self.class.settings\n  end\n\n  def conn\n    @conn\n  end\n\n  def run\n    settings\n    conn\n  end\n\n  def self.boot\n    settings\n  end\nend\n\nApp.settings\n",
    )]);
    let targets = function_calls_by_line(&db, "lib/app.rb");
    assert_eq!(
        targets,
        vec![
            ("17".into(), "function app.App.settings:8".into()),
            ("18".into(), "function app.App.conn:12".into()),
            ("22".into(), "function app.App.settings:4".into()),
            ("26".into(), "function app.App.settings:4".into()),
        ]
    );
}

#[test]
fn ruby_class_self_blocks_define_singleton_methods() {
    // Sinatra's `Sinatra::Base`: most of its class methods sit in `class << self`, several
    // beside an instance method of the same name. Both orders, so that neither side wins by
    // coming first.
    let (_d, db) = indexed(&[(
        "lib/app.rb",
        concat!(
            "class Base\n",            // 1
            "  def settings; end\n",   // 2
            "\n",                      // 3
            "  class << self\n",       // 4
            "    def settings; end\n", // 5
            "\n",                      // 6
            "    def boot\n",          // 7
            "      settings\n",        // 8: the class's own
            "      self.settings\n",   // 9
            "    end\n",               // 10
            "  end\n",                 // 11
            "end\n",                   // 12
            "\n",                      // 13
            "class App\n",             // 14
            "  class << self\n",       // 15
            "    def settings; end\n", // 16
            "  end\n",                 // 17
            "\n",                      // 18
            "  def settings; end\n",   // 19
            "\n",                      // 20
            "  def run\n",             // 21
            "    settings\n",          // 22: an instance's
            "    self.settings\n",     // 23
            "  end\n",                 // 24
            "end\n",                   // 25
            "\n",                      // 26
            "Base.settings\n",         // 27
            "App.settings\n",          // 28
        ),
    )]);
    let targets = function_calls_by_line(&db, "lib/app.rb");
    assert_eq!(
        targets,
        vec![
            ("8".into(), "function app.Base.settings:5".into()),
            ("9".into(), "function app.Base.settings:5".into()),
            ("22".into(), "function app.App.settings:19".into()),
            ("23".into(), "function app.App.settings:19".into()),
            ("27".into(), "function app.Base.settings:5".into()),
            ("28".into(), "function app.App.settings:16".into()),
        ]
    );
    // What a reader is shown is the line as written.
    assert_eq!(
        pairs(
            &db,
            "SELECT id, signature FROM defs_meta WHERE id LIKE 'app.App.settings:%' ORDER BY id"
        ),
        vec![
            ("app.App.settings:16".into(), "def settings; end".into()),
            ("app.App.settings:19".into(), "def settings; end".into()),
        ]
    );
}

#[test]
fn ruby_dsl_blocks_named_by_a_symbol_are_definitions() {
    let (_d, db) = indexed(&[
        (
            "lib/kit/selectors.rb",
            concat!(
                "Kit.add_selector(:link, visible: true) do\n",
                "  xpath do |locator|\n",
                "    anchor_path(locator)\n",
                "  end\n",
                "end\n",
                "\n",
                "Kit.register_driver \"chrome\" do |app|\n",
                "  app\n",
                "end\n",
                "\n",
                "Pair = Struct.new(:left, :right) do\n",
                "  def swap; end\n",
                "end\n",
                "\n",
                "before(:each) do\n",
                "end\n",
                "\n",
                "describe \"two words\" do\n",
                "end\n",
                "\n",
                "def anchor_path(l)\n",
                "  each_item(:x) do\n",
                "  end\n",
                "end\n",
            ),
        ),
        (
            "lib/kit/tasks.rb",
            "module Kit\n  class Tasks\n    task :build do\n      compile\n    end\n\n    def compile; end\n  end\nend\n",
        ),
    ]);
    let defs = pairs(
        &db,
        "SELECT qualname, kind FROM nodes WHERE kind = 'function' ORDER BY file, line",
    );
    let defs: Vec<&str> = defs.iter().map(|(q, _)| q.as_str()).collect();
    assert_eq!(
        defs,
        vec![
            "kit.selectors.link", // a symbol names the block
            "kit.selectors.swap", // (a `Struct.new` block is no class here)
            // not "chrome" nor "two words" (a string is prose), `left` (a constructor),
            // `each` (a hook), nor a block passed inside a method (`each_item(:x)`)
            "kit.selectors.anchor_path",
            "kit.tasks.Kit.Tasks.build",
            "kit.tasks.Kit.Tasks.compile",
        ]
    );
    // The block's calls are the definition's own.
    assert_eq!(
        callees(&db, "kit.selectors.link"),
        vec!["kit.selectors.anchor_path"]
    );
    assert_eq!(
        callees(&db, "kit.tasks.Kit.Tasks.build"),
        vec!["kit.tasks.Kit.Tasks.compile"]
    );
}

#[test]
fn php_and_ruby_refreshes_match_a_cold_build_at_every_step() {
    let d = repo(&[
        ("src/A.php", "<?php\nnamespace P;\n\nclass A\n{\n    public function f() { b_fn(); }\n}\n"),
        ("src/b.php", "<?php\n\nfunction b_fn() {}\n"),
        ("src/C.php", "<?php\nnamespace P;\n\nclass C extends A\n{\n    public function g() { $this->f(); }\n}\n"),
        ("lib/a.rb", "class A\n  def f\n    b_fn\n  end\nend\n"),
        ("lib/b.rb", "def b_fn\nend\n"),
        ("lib/c.rb", "class C < A\n  def g\n    f\n  end\nend\n"),
    ]);
    let db = d.path().join(".ctxfast/recon.db");
    let opts = IndexOptions::default();
    index(d.path(), &db, &opts).unwrap();
    let w = |r: &Path, p: &str, t: &str| fs::write(r.join(p), t).unwrap();
    let steps: [&dyn Fn(&Path); 15] = [
        // A second `b_fn`: no longer the only one of its name.
        &|r| w(r, "src/d.php", "<?php\n\nfunction b_fn() {}\n"),
        &|r| w(r, "lib/d.rb", "def b_fn\nend\n"),
        &|r| fs::remove_file(r.join("src/d.php")).unwrap(),
        &|r| fs::remove_file(r.join("lib/d.rb")).unwrap(),
        // Lines move under the callees; the base moves to another namespace.
        &|r| {
            w(
                r,
                "lib/a.rb",
                "\n\nclass A\n  def f\n    b_fn\n  end\nend\n",
            );
        },
        &|r| {
            w(
                r,
                "src/A.php",
                "<?php\nnamespace Q;\n\nclass A\n{\n    public function f() { b_fn(); }\n}\n",
            );
        },
        &|r| {
            w(r, "src/C.php", "<?php\nnamespace P;\n\nuse Q\\A;\n\nclass C extends A\n{\n    public function g() { $this->f(); }\n}\n");
        },
        // A singleton `f` beside the instance one, then a file reading it unchanged: the
        // side is part of what a refresh keeps of the file.
        &|r| {
            w(
                r,
                "lib/a.rb",
                "class A\n  class << self\n    def f\n    end\n  end\n\n  def f\n    b_fn\n  end\nend\n",
            );
        },
        &|r| w(r, "lib/c.rb", "\nclass C < A\n  def g\n    f\n  end\nend\n"),
        // A global block after a namespaced one, then a file calling into it while it
        // stays unchanged.
        &|r| {
            w(r, "src/m.php", "<?php\nnamespace Q {\n    function m0() {}\n}\n\nnamespace {\n    function m1() {}\n}\n");
            w(r, "src/C.php", "<?php\nnamespace P;\n\nuse Q\\A;\n\nclass C extends A\n{\n    public function g() { $this->f(); m1(); }\n}\n");
        },
        &|r| {
            w(r, "src/C.php", "<?php\nnamespace P;\n\nuse Q\\A;\n\n\nclass C extends A\n{\n    public function g() { $this->f(); m1(); }\n}\n");
        },
        // Two definitions a call chooses between by their signatures (`attr_writer :f` or
        // `def f`; an interface's declaration or a trait's body), read from files that stay
        // unchanged while the caller is resolved again.
        &|r| {
            w(
                r,
                "lib/a.rb",
                "class A\n  attr_writer :f\n\n  def f\n    b_fn\n  end\nend\n",
            );
        },
        &|r| {
            w(
                r,
                "lib/c.rb",
                "\n\nclass C < A\n  def g\n    f\n  end\nend\n",
            );
        },
        &|r| {
            w(
                r,
                "src/I.php",
                "<?php\nnamespace Q;\n\ninterface I\n{\n    public function k();\n}\n",
            );
            w(
                r,
                "src/T.php",
                "<?php\nnamespace Q;\n\ntrait T\n{\n    public function k() {}\n}\n",
            );
            w(r, "src/E.php", "<?php\nnamespace Q;\n\nclass E implements I\n{\n    use T;\n\n    public function h() { $this->k(); }\n}\n");
        },
        &|r| {
            w(r, "src/E.php", "<?php\nnamespace Q;\n\n\nclass E implements I\n{\n    use T;\n\n    public function h() { $this->k(); }\n}\n");
        },
    ];
    for (n, step) in steps.iter().enumerate() {
        step(d.path());
        index(d.path(), &db, &opts).unwrap();
        assert!(matches_cold(d.path(), &db), "step {n}");
    }
    assert_eq!(callees(&db, "P.C.g"), vec!["Q.A.f", "src.m.m1"]);
    assert_eq!(callees(&db, "c.C.g"), vec!["a.A.f"]);
    assert_eq!(callees(&db, "a.A.f"), vec!["b.b_fn"]);
    assert_eq!(callees(&db, "Q.E.h"), vec!["Q.T.k"]);
}

#[test]
fn singleton_sides_and_later_namespaces_survive_the_stored_blobs() {
    let rb = lang::extract(
        Lang::Ruby,
        b"class A\n  class << self\n    def f; end\n  end\n\n  def g; end\nend\n",
        "a",
        7,
    )
    .raw;
    let sides: Vec<(&str, bool)> = rb
        .defs
        .iter()
        .skip(1)
        .map(|d| (d.local.as_str(), d.singleton))
        .collect();
    assert_eq!(sides, vec![("A", false), ("A.f", true), ("A.g", false)]);
    let php = lang::extract(
        Lang::Php,
        b"<?php\nnamespace A {\n    function f() {}\n}\nnamespace {\n    function g() {}\n}\n",
        "m",
        7,
    )
    .raw;
    assert_eq!(
        (php.package.as_str(), &php.namespaces[..]),
        ("A", &[(5, String::new())][..])
    );
    for raw in [rb, php] {
        assert_eq!(RawFile::decode(&raw.encode()).as_ref(), Some(&raw));
        assert_eq!(
            RawFile::decode_interface_blob(&raw.interface_blob(false), false),
            Some(raw.interface(false))
        );
    }
}

#[test]
fn php_and_ruby_syntax_errors_keep_what_parses() {
    let (_d, db) = indexed(&[
        (
            "src/Broken.php",
            "<?php\nnamespace P;\n\nclass Ok\n{\n    public function fine() {}\n}\n\nclass Bad {\n    public function (\n",
        ),
        ("lib/broken.rb", "class Ok\n  def fine\n  end\nend\n\nclass Bad\n  def oops(\n"),
    ]);
    assert_eq!(
        count(
            &db,
            "SELECT COUNT(*) FROM files WHERE parse_error LIKE 'syntax error%'"
        ),
        2
    );
    assert_eq!(
        count(
            &db,
            "SELECT COUNT(*) FROM nodes WHERE qualname IN ('P.Ok.fine', 'broken.Ok.fine')"
        ),
        2
    );
}

#[test]
fn php_and_ruby_module_names_and_test_files() {
    assert_eq!(Lang::from_path("src/A.php"), Some(Lang::Php));
    assert_eq!(Lang::from_path("lib/tasks/db.rake"), Some(Lang::Ruby));
    assert_eq!(
        module_qualname("lib/rack/utils.rb", Lang::Ruby),
        "rack.utils"
    );
    assert_eq!(
        module_qualname("app/models/user.rb", Lang::Ruby),
        "app.models.user"
    );
    assert_eq!(
        module_qualname("src/Http/Kernel.php", Lang::Php),
        "src.Http.Kernel"
    );
}

#[test]
fn minified_and_bundled_files_are_recorded_as_skipped_never_parsed() {
    let minified = format!("{}\n", "function a(b){return b+1};".repeat(200));
    let (_d, db) = indexed(&[
        ("src/App.php", "<?php\nnamespace P;\n\nclass App {}\n"),
        ("public/js/jquery.min.js", "function jQuery(s){return s}\n"),
        ("public/js/vendor.bundle.js", "function v(){}\n"),
        ("dist/scripts.js", "function page() {\n  return 1;\n}\n"),
        (
            "packages/ui/build/index.js",
            "function ui() {\n  return 1;\n}\n",
        ),
        ("assets/app.js", minified.as_str()),
        // Hand-written code under build/ in another language is source.
        ("build/tool.php", "<?php\nfunction tool() {}\n"),
        ("src/ok.js", "function ok() {\n  return 1;\n}\n"),
        // Long lines in another language are parsed (a generated table, deep nesting).
        (
            "src/table.php",
            &format!("<?php\n$t = [{}];\n", "1, ".repeat(600)),
        ),
    ]);
    let skipped = pairs(
        &db,
        "SELECT path, parse_error FROM files WHERE sha256 IS NULL ORDER BY path",
    );
    assert_eq!(
        skipped,
        vec![
            ("assets/app.js".into(), discover::MINIFIED_LINES.into()),
            ("dist/scripts.js".into(), discover::BUNDLE_DIR.into()),
            (
                "packages/ui/build/index.js".into(),
                discover::BUNDLE_DIR.into()
            ),
            (
                "public/js/jquery.min.js".into(),
                discover::MINIFIED_NAME.into()
            ),
            (
                "public/js/vendor.bundle.js".into(),
                discover::MINIFIED_NAME.into()
            ),
        ]
    );
    let parsed = pairs(
        &db,
        "SELECT path, language FROM files WHERE sha256 IS NOT NULL ORDER BY path",
    );
    assert_eq!(
        parsed,
        vec![
            ("build/tool.php".into(), "php".into()),
            ("src/App.php".into(), "php".into()),
            ("src/ok.js".into(), "javascript".into()),
            ("src/table.php".into(), "php".into()),
        ]
    );
}
