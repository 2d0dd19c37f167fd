"""Call-graph fidelity scoring for the graph languages beside Python, and the analysers
themselves where their toolchains are installed (go/types, tsc, javac, rust-analyzer,
PHP-Parser, Ripper)."""

from __future__ import annotations

import shutil
import subprocess
import textwrap
from pathlib import Path

import pytest

from ctxfast import Repository
from ctxfast.eval.errors import EvalError
from ctxfast.eval.fidelity_langs import (
    ANALYSERS_ENV,
    DEBIAN_PHP_PARSER,
    DEBIAN_TYPESCRIPT,
    RefSite,
    analyser_command,
    analysers_dir,
    call_graph_fidelity,
    reference_sites,
)

#: The analysers stay in the source repository, out of the wheel; the suite runs against an
#: installed package too, so it names them.
ANALYSERS = Path(__file__).resolve().parent.parent / "benches" / "analysers"


@pytest.fixture(autouse=True)
def _analysers(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ANALYSERS_ENV, str(ANALYSERS))


def test_analysers_are_found_through_the_environment() -> None:
    assert analysers_dir() == ANALYSERS
    programs = {
        "go_calls.go",
        "ts_calls.js",
        "JavaCalls.java",
        "rust_calls.py",
        "php_calls.php",
        "ruby_calls.rb",
    }
    assert programs <= {p.name for p in ANALYSERS.iterdir()}


def test_an_unknown_language_has_no_analyser(tmp_path: Path) -> None:
    with pytest.raises(EvalError, match="no independent analyser"):
        analyser_command("cobol", tmp_path)


def _runs(tool: str) -> bool:
    """Whether ``tool`` is installed and starts: rustup puts a ``rust-analyzer`` proxy on
    PATH that fails until the component is added, so being on PATH is not enough."""
    if shutil.which(tool) is None:
        return False
    try:
        done = subprocess.run([tool, "--version"], capture_output=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


GO = {
    "go.mod": "module example.com/m\n",
    "m.go": """
        package m

        type T struct{}

        func (t *T) Run() { t.step(); helper() }
        func (t *T) step() {}
        func helper() { other() }
        func other() {}
        """,
}


def _graph(root: Path, files: dict[str, str]):
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(textwrap.dedent(text).lstrip("\n"))
    repo = Repository(root, index_dir=root / ".idx")
    repo.index()
    return repo.graph


def test_scores_sites_against_the_reference(tmp_path: Path) -> None:
    g = _graph(tmp_path, GO)
    sites = [
        RefSite("m.go", 5, "step", (("m.go", 6),), True),  # graph agrees
        RefSite("m.go", 5, "helper", (("m.go", 9),), True),  # reference says another def
        RefSite("m.go", 7, "other", (), True),  # resolved outside the tree: edge is wrong
        RefSite("m.go", 7, "nothing", (), False),  # unresolved: not scored
    ]
    res = call_graph_fidelity(tmp_path, g, "go", sample=10, sites=sites, analyser="test")
    d = res["definitions"]
    assert (d["tp"], d["graph"], d["reference"]) == (1, 3, 2)
    assert d["sampled_calls"] == 3 and d["resolved_calls"] == 3
    assert len(res["disagreements"]["definitions"]) == 2
    e = res["invoke_edges"]
    # Callers are judged for the definitions the reference saw called inside the graph:
    # `step`, called from m.go:5 on both sides.
    assert (e["tp"], e["graph"], e["reference"], e["sampled_definitions"]) == (1, 1, 1, 1)


def test_callers_at_sites_the_analyser_could_not_bind_are_not_judged(tmp_path: Path) -> None:
    # PHP's `$x->m()` or Ruby's `x.m`: the analyser sees the call but not the value's type.
    # The graph's edge there is neither confirmed nor refuted, so it is left out of Q3.
    g = _graph(
        tmp_path,
        {
            "go.mod": "module example.com/m\n",
            "m.go": "package m\n\nfunc a() { helper() }\nfunc b() { helper() }\nfunc helper() {}\n",
        },
    )
    sites = [
        RefSite("m.go", 3, "helper", (("m.go", 5),), True),
        RefSite("m.go", 4, "helper", (), False),
    ]
    res = call_graph_fidelity(tmp_path, g, "go", sample=10, sites=sites, analyser="test")
    e = res["invoke_edges"]
    assert (e["tp"], e["graph"], e["reference"]) == (1, 1, 1)
    # Bound there too, the same graph caller is judged.
    sites[1] = RefSite("m.go", 4, "helper", (("m.go", 5),), True)
    res = call_graph_fidelity(tmp_path, g, "go", sample=10, sites=sites, analyser="test")
    e = res["invoke_edges"]
    assert (e["tp"], e["graph"], e["reference"]) == (2, 2, 2)
    # Bound elsewhere (outside the tree), the graph's caller there counts against it.
    sites[1] = RefSite("m.go", 4, "helper", (), True)
    res = call_graph_fidelity(tmp_path, g, "go", sample=10, sites=sites, analyser="test")
    e = res["invoke_edges"]
    assert (e["tp"], e["graph"], e["reference"]) == (1, 2, 1)


@pytest.mark.skipif(
    shutil.which("php") is None or not Path(DEBIAN_PHP_PARSER).exists(),
    reason="needs php-cli and php-parser",
)
def test_php_analyser_binds_names_traits_and_ancestors(tmp_path: Path) -> None:
    _graph(
        tmp_path,
        {
            "src/A.php": """
                <?php
                namespace App;

                use App\\Util\\Helper as H;

                trait Greets
                {
                    public function hello() { return $this->name(); }
                }

                class Base
                {
                    public function name() { return 'b'; }
                    public static function make() { return new static(); }
                }

                class A extends Base
                {
                    use Greets;

                    public function run($x)
                    {
                        H::assist();
                        helper();
                        strlen('x');
                        $this->hello();
                        parent::name();
                        self::make();
                        $x->unknown();
                    }
                }

                function helper() { return 1; }
                """,
            "src/Util/Helper.php": """
                <?php
                namespace App\\Util;

                class Helper
                {
                    public static function assist() { return new \\DateTime(); }
                }
                """,
        },
    )
    sites, name = reference_sites("php", tmp_path)
    assert name == "PHP-Parser names"
    got = {(s.file, s.line, s.name): (s.targets, s.resolved) for s in sites}
    a = "src/A.php"
    assert got[(a, 8, "name")] == ((), False)  # `$this` of a trait: any class using it
    assert got[(a, 14, "Base")] == (((a, 11),), True)  # `new static` in Base
    assert got[(a, 23, "assist")] == ((("src/Util/Helper.php", 6),), True)  # `use ... as`
    assert got[(a, 24, "helper")] == (((a, 33),), True)  # namespaced function
    assert got[(a, 25, "strlen")] == ((), True)  # a built-in: resolved, outside the tree
    assert got[(a, 26, "hello")] == (((a, 8),), True)  # through the used trait
    assert got[(a, 27, "name")] == (((a, 13),), True)  # parent::
    assert got[(a, 28, "make")] == (((a, 14),), True)  # self:: reaches an inherited static
    assert got[(a, 29, "unknown")] == ((), False)  # a value of unstated type
    assert got[("src/Util/Helper.php", 6, "DateTime")] == ((), True)


@pytest.mark.skipif(shutil.which("ruby") is None, reason="needs Ruby")
def test_ruby_analyser_follows_nesting_mixins_and_singletons(tmp_path: Path) -> None:
    _graph(
        tmp_path,
        {
            "lib/m.rb": """
                module M
                  module Helpers
                    def assist; end
                  end

                  class Base
                    def self.build; end
                    def name; end
                  end

                  class C < Base
                    include Helpers

                    def initialize(a); end

                    def run(a)
                      helper(1)
                      assist
                      self.name
                      C.build
                      Util.go(2)
                      a.thing
                      puts "hi"
                      C.new(1)
                      top
                    end

                    class << self
                      def make; build; end
                    end

                    private

                    def helper(n); end
                  end
                end

                def top; end
                """,
            "lib/m/util.rb": """
                module M
                  module Util
                    extend self
                    def go(n); end
                  end
                end
                """,
        },
    )
    sites, name = reference_sites("ruby", tmp_path)
    assert name == "Ripper lookup"
    got = {(s.line, s.name): (s.targets, s.resolved) for s in sites if s.file == "lib/m.rb"}
    m = "lib/m.rb"
    assert got[(17, "helper")] == (((m, 34),), True)  # a private method, implicit receiver
    assert got[(18, "assist")] == (((m, 3),), True)  # an included module's method
    assert got[(19, "name")] == (((m, 8),), True)  # `self.` reaches the superclass
    assert got[(20, "build")] == (((m, 7),), True)  # a class method, constant in the nesting
    assert got[(21, "go")] == ((("lib/m/util.rb", 4),), True)  # `extend self` in another file
    assert got[(22, "thing")] == ((), False)  # a value of unstated type
    assert got[(23, "puts")] == ((), False)  # Kernel: no method in the tree answers
    assert got[(24, "C")] == (((m, 11),), True)  # `C.new`: the class
    assert got[(25, "top")] == (((m, 38),), True)  # a top-level method
    assert got[(29, "build")] == (((m, 7),), True)  # inside `class << self`: the singleton


@pytest.mark.skipif(shutil.which("go") is None, reason="needs the Go toolchain")
def test_go_analyser_resolves_module_calls(tmp_path: Path) -> None:
    _graph(tmp_path, GO)
    sites, name = reference_sites("go", tmp_path)
    assert name == "go/types"
    by = {(s.line, s.name): s.targets for s in sites}
    assert by[(5, "step")] == (("m.go", 6),)
    assert by[(7, "other")] == (("m.go", 8),)


#: The TypeScript and JavaScript analysers run on node with Debian's node-typescript.
needs_tsc = pytest.mark.skipif(
    shutil.which("node") is None or not Path(DEBIAN_TYPESCRIPT).exists(),
    reason="needs node and node-typescript",
)


@needs_tsc
def test_typescript_analyser_follows_imports(tmp_path: Path) -> None:
    _graph(
        tmp_path,
        {
            "a.ts": "export function f(): number { return 1; }\n",
            "b.ts": "import { f } from './a';\nexport const g = () => f();\n",
        },
    )
    sites, _ = reference_sites("typescript", tmp_path)
    assert [(s.file, s.line, s.name, s.targets) for s in sites] == [
        ("b.ts", 2, "f", (("a.ts", 1),))
    ]


@needs_tsc
def test_javascript_analyser_follows_require_and_prototypes(tmp_path: Path) -> None:
    _graph(
        tmp_path,
        {
            "lib/utils.js": "function esc(s) { return s; }\nexports.esc = esc;\n",
            "lib/ruler.js": """
                const { esc } = require('./utils');
                function Ruler() {}
                Ruler.prototype.compile = function () { return esc('x'); };
                Ruler.prototype.at = function () { return this.compile(); };
                module.exports = Ruler;
                """,
            "lib/ruler.test.js": "require('./ruler')().at();\n",  # a test: not read
            "dist/bundle.js": "function esc(s) { return s; }\nesc(1);\n",  # built output
        },
    )
    sites, name = reference_sites("javascript", tmp_path)
    assert name == "tsc checker (JavaScript)"
    bound = {(s.file, s.line, s.name): s.targets for s in sites if s.targets}
    assert bound == {
        ("lib/ruler.js", 3, "esc"): (("lib/utils.js", 1),),
        ("lib/ruler.js", 4, "compile"): (("lib/ruler.js", 3),),
    }


@needs_tsc
def test_javascript_analyser_follows_a_variable_naming_another_value(tmp_path: Path) -> None:
    """``var dQuote = utils.dQuote; dQuote(x)`` calls ``utils.dQuote``, as the compiler
    resolves the call: the variable's own declaration is no function to score."""
    _graph(
        tmp_path,
        {
            "lib/utils.js": "exports.dQuote = function (s) { return s; };\n",
            "lib/runner.js": """
                var utils = require('./utils');
                var dQuote = utils.dQuote;
                var quote = dQuote;
                function run(x) { return quote(dQuote(x)); }
                """,
        },
    )
    sites, _ = reference_sites("javascript", tmp_path)
    bound = {(s.file, s.line, s.name): s.targets for s in sites if s.targets}
    assert bound == {
        ("lib/runner.js", 4, "quote"): (("lib/utils.js", 1),),
        ("lib/runner.js", 4, "dQuote"): (("lib/utils.js", 1),),
    }


@pytest.mark.skipif(shutil.which("java") is None, reason="needs a JDK")
def test_java_analyser_binds_overloads(tmp_path: Path) -> None:
    _graph(
        tmp_path,
        {
            "src/a/A.java": """
                package a;
                class A {
                    void f(int x) {}
                    void f(String s) {}
                    void g() { f("x"); f(1); new A(); }
                }
                """,
        },
    )
    sites, _ = reference_sites("java", tmp_path)
    assert [(s.name, s.targets) for s in sites] == [
        ("f", (("src/a/A.java", 4),)),
        ("f", (("src/a/A.java", 3),)),
        ("A", (("src/a/A.java", 2),)),
    ]


@pytest.mark.skipif(not _runs("rust-analyzer"), reason="needs a working rust-analyzer")
def test_rust_analyser_binds_calls_in_macros_and_methods(tmp_path: Path) -> None:
    _graph(
        tmp_path,
        {
            "Cargo.toml": '[package]\nname = "m"\nversion = "0.1.0"\nedition = "2021"\n',
            "src/main.rs": """
                struct S;
                impl S {
                    fn new() -> S { S }
                    fn get(&self) -> u8 { 1 }
                }
                fn main() {
                    let n = S::new().get();
                    println!("{}", helper(n));
                }
                fn helper(x: u8) -> u8 { x }
                """,
        },
    )
    sites, name = reference_sites("rust", tmp_path)
    assert name == "rust-analyzer lsif"
    assert sorted((s.line, s.name, s.targets) for s in sites if s.targets) == [
        (7, "get", (("src/main.rs", 4),)),
        (7, "new", (("src/main.rs", 3),)),
        (8, "helper", (("src/main.rs", 10),)),
    ]
    assert not (tmp_path / "target").exists()  # build products stay out of the tree
