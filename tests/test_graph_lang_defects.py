"""Call edges of Go, Java, Rust and TypeScript that the compilers' own resolution disagreed
with (``ctxfast eval fidelity --language ...``): each test is one defect, in a small tree."""

from __future__ import annotations

import textwrap
from pathlib import Path

from recon_fixture import callees

from ctxfast import Repository


def write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(textwrap.dedent(text).lstrip("\n"))


def graph_of(root: Path, files: dict[str, str]):
    write(root, files)
    repo = Repository(root, index_dir=root / ".idx")
    repo.index()
    return repo.graph


def parse_errors(graph) -> dict[str, str | None]:
    return {f.path: f.parse_error for f in graph.files()}


def test_go_closures_fields_and_receivers_that_are_not_callees(tmp_path: Path) -> None:
    g = graph_of(
        tmp_path,
        {
            "go.mod": "module example.com/web\n",
            "util/box.go": """
                package util

                type Box struct{}

                func (b *Box) Set(v int) {}
                """,
            "engine.go": """
                package web

                import "example.com/web/util"

                const param = 3

                type Context struct{}

                func (c *Context) JSON(code int) {}

                type Base struct{}

                func (b *Base) Ping() {}

                type Engine struct {
                    Base
                    box    *util.Box
                    routes []string
                }

                func (e *Engine) GET(path string, h func(*Context)) {}

                func (e *Engine) Run() {
                    e.GET("/", func(c *Context) { c.JSON(200) })
                    e.box.Set(1)
                    e.Ping()
                }

                func reset() {
                    f := func(param *Context) { param.JSON(1) }
                    f(nil)
                }

                func colour(p *util.Box) { p.Set(2) }

                type Window interface {
                    Width() int
                }

                type Attr int

                type Term struct{ win Window }

                func (t *Term) Draw() Attr { t.win.Width(); return Attr(t.win.Width()) }
                """,
        },
    )
    # The closure's declared `*Context` parameter types `c`; the `box *util.Box` field types
    # `e.box`; the embedded `Base` lends its method.
    assert callees(g, "root.Engine.Run") == {
        "root.Engine.GET",
        "root.Context.JSON",
        "util.Box.Set",
        "root.Base.Ping",
    }
    # `param` is the closure's parameter, not the package constant of the same name.
    assert callees(g, "root.reset") == {"root.Context.JSON"}
    assert callees(g, "root.colour") == {"util.Box.Set"}
    # A call through an interface reaches its method; a conversion `Attr(x)` calls nothing.
    assert callees(g, "root.Term.Draw") == {"root.Window.Width"}


def test_go_receiver_prefix_is_never_the_callee(tmp_path: Path) -> None:
    g = graph_of(
        tmp_path,
        {
            "go.mod": "module example.com/p\n",
            "p.go": """
                package p

                var cfg = load()

                func load() int { return 1 }

                func use() { cfg.Reload() }
                """,
        },
    )
    assert callees(g, "root.use") == set()  # `Reload` is unknown; `cfg` is not called


def test_java_fields_bases_and_unknown_members(tmp_path: Path) -> None:
    g = graph_of(
        tmp_path,
        {
            "src/main/java/a/Parser.java": """
                package a;

                public interface Parser { Object parse(String s); }
                """,
            "src/main/java/a/Serializer.java": """
                package a;

                public class Serializer { public String serialize(Object o) { return ""; } }
                """,
            "src/main/java/a/Json.java": """
                package a;

                import java.util.List;

                public class Json implements Parser {
                    private Serializer serializer = new Serializer();
                    private List<String> names;

                    public Object parse(String s) { return serializer.serialize(s); }
                    public String dump(Object o) { return this.serializer.serialize(o); }
                    public int count() { return names.size(); }
                }
                """,
        },
    )
    # A typed field, bare or through `this`, reaches its class's method, never the field.
    assert callees(g, "a.Json.parse") == {"a.Serializer.serialize"}
    assert callees(g, "a.Json.dump") == {"a.Serializer.serialize"}
    assert callees(g, "a.Json.count") == set()  # a library type's member: no edge at all
    json_class = next(n for n in g.lookup("a.Json") if n.qualname == "a.Json")
    # `implements Parser` is a base, not a call.
    assert {n.qualname for n in g.callees(json_class.id)} == {"a.Serializer"}


def test_java_chained_calls_follow_declared_return_types(tmp_path: Path) -> None:
    g = graph_of(
        tmp_path,
        {
            "src/main/java/b/Builder.java": """
                package b;

                public class Builder {
                    public Builder name(String n) { return this; }
                    public Product build() { return new Product(); }
                    public static void use() { new Builder().name("x").build().ship(); }
                }
                class Product { void ship() {} }
                """,
        },
    )
    assert callees(g, "b.Builder.use") == {
        "b.Builder",
        "b.Builder.name",
        "b.Builder.build",
        "b.Product.ship",
    }


def test_java_overloads_are_kept_apart_by_argument_count(tmp_path: Path) -> None:
    g = graph_of(
        tmp_path,
        {
            "src/main/java/v/Validate.java": """
                package v;

                public class Validate {
                    public static void notNull(Object o) {}
                    public static void notNull(Object o, String msg) {}
                    public static void all(String... parts) {}
                    static void one() { notNull(null); }
                    static void two() { notNull(null, "m"); all("a", "b", "c"); }
                }
                class Node { String attr(String k) { return k; } }
                class Element extends Node {
                    private boolean open;
                    String attr(String k, String v) { return v; }
                    boolean open() { return open; }
                    void use() { attr("k"); open(); }
                }
                """,
        },
    )
    targets = {}
    for name in ("v.Validate.one", "v.Validate.two", "v.Element.use"):
        node = next(n for n in g.lookup(name) if n.qualname == name)
        targets[name] = sorted((t.name, t.line) for t in g.callees(node.id))
    assert targets == {
        "v.Validate.one": [("notNull", 4)],
        "v.Validate.two": [("all", 6), ("notNull", 5)],
        # One argument: the base's `attr(k)`; `open()` is the method, not the field `open`.
        "v.Element.use": [("attr", 10), ("open", 14)],
    }


def test_rust_crates_without_src_cargo_names_chains_and_try(tmp_path: Path) -> None:
    g = graph_of(
        tmp_path,
        {
            "Cargo.toml": '[workspace]\nmembers = ["crates/*"]\n',
            "crates/matcher/Cargo.toml": '[package]\nname = "grep-matcher"\nversion = "0.1.0"\n',
            "crates/matcher/src/lib.rs": """
                pub struct Matcher;
                impl Matcher {
                    pub fn new() -> Matcher { Matcher }
                    pub fn find(&self) -> usize { 0 }
                }
                pub struct Builder;
                impl Builder {
                    pub fn new() -> Self { Builder }
                    pub fn build(&self) -> Matcher { Matcher::new() }
                }
                """,
            "crates/core/Cargo.toml": '[package]\nname = "rg"\nversion = "0.1.0"\n',
            "crates/core/main.rs": """
                mod flags;
                use grep_matcher::Builder;
                fn main() {
                    let m = Builder::new().build();
                    crate::flags::parse();
                    flags::parse();
                }
                """,
            "crates/core/flags/mod.rs": """
                use crate::flags::defs::all;
                mod defs;
                pub fn parse() -> Result<(), ()> {
                    let n = try!(count());
                    all();
                    Ok(())
                }
                fn count() -> Result<usize, ()> { Ok(1) }
                """,
            "crates/core/flags/defs.rs": """
                pub fn all() {}
                """,
        },
    )
    errors = parse_errors(g)
    assert errors["crates/core/flags/mod.rs"] is None  # `try!` parses
    main = "crates.core.main"
    assert callees(g, main) == {
        "crates.matcher.Builder.new",  # the Cargo package name `grep-matcher`
        "crates.matcher.Builder.build",  # through `new`'s declared `-> Self`
        "crates.core.flags.parse",  # `crate::` in a crate without `src/`
    }
    assert callees(g, "crates.core.flags.parse") == {
        "crates.core.flags.count",  # inside `try!(...)`
        "crates.core.flags.defs.all",
    }


def test_typescript_reexports_and_variance(tmp_path: Path) -> None:
    g = graph_of(
        tmp_path,
        {
            "src/core/parse.ts": """
                export function parse(x: string): number { return check(x); }
                export function check(x: string): number { return 1; }
                """,
            "src/core/types.ts": """
                export interface ZodType<out O = unknown, in I = unknown> { _o: O; _i: I }
                export function make<T>(t: T): T { return helper(t); }
                export class Cell<in out T> { put(t: T): T { return helper(t); } }
                function helper<T>(t: T): T { return t; }
                """,
            "src/core/index.ts": """
                export * from './parse';
                export { make as build } from './types';
                export * as types from './types';
                """,
            "src/app.ts": """
                import { parse, build } from './core';
                import * as core from './core/index';
                export function run() { parse("1"); build(2); core.check("x"); core.types.make(3); }
                """,
            "src/db.ts": """
                export class Runner { query(q: string) {} }
                export class Conn {
                    readonly runner: Runner;
                    constructor(private other: Runner) {}
                    exec() { this.runner.query("a"); this.other.query("b"); }
                }
                export function each(rs: Runner[], f: (r: Runner) => void) {}
                export function main(conn: Conn, query: string) {
                    conn.exec();
                    each([], (r: Runner) => r.query(query));
                    const fresh = new Runner();
                    fresh.query("c");
                }
                export function query() {}
                """,
        },
    )
    # Parameter, field, parameter-property and `new` types of TypeScript.
    assert callees(g, "src.db.Conn.exec") == {"src.db.Runner.query"}
    assert callees(g, "src.db.main") == {
        "src.db.Conn.exec",
        "src.db.each",
        "src.db.Runner.query",
        "src.db.Runner",
    }
    errors = parse_errors(g)
    assert errors["src/core/types.ts"] is None  # variance annotations parse
    assert callees(g, "src.core.types.make") == {"src.core.types.helper"}
    assert callees(g, "src.core.types.Cell.put") == {"src.core.types.helper"}
    assert callees(g, "src.app.run") == {
        "src.core.parse.parse",
        "src.core.parse.check",
        "src.core.types.make",
    }


def sites(graph, qualname: str) -> list[tuple[str, int]]:
    """(callee name, line of the call) of every invoke edge out of ``qualname``."""
    node = next(n for n in graph.lookup(qualname) if n.qualname == qualname)
    out = []
    for site, edge in graph.file_edges(node.file, "invoke"):
        if site.qualname == qualname:
            out.append((graph.node(edge.dst).name, site.line))
    return sorted(out)


def test_java_inherited_members_super_constructors_and_loop_variables(tmp_path: Path) -> None:
    g = graph_of(
        tmp_path,
        {
            "src/main/java/n/Node.java": """
                package n;

                public class Node {
                    protected Attrs attrs = new Attrs();
                    void reparent(Node c) {}
                    Node after(String h) { return this; }
                }
                """,
            "src/main/java/n/Attrs.java": """
                package n;

                public class Attrs { String put(String k) { return k; } }
                """,
            "src/main/java/n/Element.java": """
                package n;

                import java.util.List;

                public class Element extends Node {
                    public Element() {}
                    public Element(String tag) {}
                    void add(Node c) { reparent(c); attrs.put("x"); }
                    Node after(String h) { return super.after(h); }
                    Element copy() { return new Element("p"); }
                    void each(List<Attrs> all) { for (Attrs a : all) { a.put("k"); } }
                }
                """,
        },
    )
    # A bare call or field of a base class, from a subclass.
    assert callees(g, "n.Element.add") == {"n.Node.reparent", "n.Attrs.put"}
    # `super.m()` is the base's method, never a call of `super`.
    assert callees(g, "n.Element.after") == {"n.Node.after"}
    # `new C()` inside `C` names the class, as it does everywhere else.
    assert callees(g, "n.Element.copy") == {"n.Element"}
    # The variable of `for (T x : xs)` holds a T.
    assert callees(g, "n.Element.each") == {"n.Attrs.put"}


def test_java_overloads_of_one_arity_are_picked_by_argument_types(tmp_path: Path) -> None:
    g = graph_of(
        tmp_path,
        {
            "src/main/java/t/Tokeniser.java": """
                package t;

                public class Tokeniser {
                    private Object held;
                    void emit(String s) {}
                    void emit(char c) {}
                    void emit(char c, int n) {}
                    void error(Tokeniser t) {}
                    void error(String m) {}
                    void run(char c) {
                        emit(c);
                        emit("</");
                        emit(held);
                        emit(c, 2);
                        error(this);
                        String m = "bad";
                        error(m);
                    }
                }
                """,
        },
    )
    # A parameter's, a literal's, a local's and `this`'s type pick the overload; a field of
    # unknown type leaves two one-argument `emit`s possible: no edge rather than a guess.
    assert sites(g, "t.Tokeniser.run") == [
        ("emit", 11),
        ("emit", 12),
        ("emit", 14),
        ("error", 15),
        ("error", 17),
    ]
    node = next(n for n in g.lookup("t.Tokeniser.run") if n.qualname == "t.Tokeniser.run")
    by_line = {}
    for site, edge in g.file_edges(node.file, "invoke"):
        if site.qualname == "t.Tokeniser.run":
            by_line[site.line] = g.node(edge.dst).line
    assert by_line == {11: 6, 12: 5, 14: 7, 15: 8, 17: 9}


def test_typescript_overload_signatures_reach_the_implementation(tmp_path: Path) -> None:
    g = graph_of(
        tmp_path,
        {
            "src/col.ts": """
                export function Column(): Function;
                export function Column(name: string): Function;
                export function Column(name?: string): Function { return () => name; }
                """,
            "src/use.ts": """
                import { Column } from './col';
                export function build() { return Column("x"); }
                """,
        },
    )
    node = next(n for n in g.lookup("src.use.build") if n.qualname == "src.use.build")
    assert [t.line for t in g.callees(node.id)] == [3]


def test_typescript_chains_fluent_builders_decorators_and_call_lines(tmp_path: Path) -> None:
    g = graph_of(
        tmp_path,
        {
            "src/qb.ts": """
                export class SelectQueryBuilder<T> {
                    where(w: string): this { return this; }
                    from(t: string, alias?: string): SelectQueryBuilder<T> { return this; }
                    getMany(): Promise<T[]> { return Promise.resolve([]); }
                }
                export class Manager {
                    createQueryBuilder<T>(alias?: string): SelectQueryBuilder<T> {
                        return new SelectQueryBuilder<T>();
                    }
                    find() {
                        return this.createQueryBuilder()
                            .from("post")
                            .where("x")
                            .getMany();
                    }
                    fresh() { return new SelectQueryBuilder().where("y"); }
                }
                """,
            "src/decorators.ts": """
                export function Entity(name?: string) { return (t: any) => t; }
                export function Column() { return (t: any, k: string) => {}; }
                export function Inject() { return (t: any, k: string, i: number) => {}; }
                """,
            "src/post.ts": """
                import { Entity, Column, Inject } from './decorators';

                @Entity("post")
                export class Post {
                    @Column()
                    title: string;
                    constructor(@Inject() private svc: string) {}
                }
                """,
        },
    )
    assert sites(g, "src.qb.Manager.find") == [
        ("createQueryBuilder", 11),
        ("from", 12),  # each call of a chain split over lines is on its own line
        ("getMany", 14),
        ("where", 13),  # `this`: a fluent method returns its own instance
    ]
    assert callees(g, "src.qb.Manager.fresh") == {
        "src.qb.SelectQueryBuilder",
        "src.qb.SelectQueryBuilder.where",
    }
    # Decorators are calls where they stand: the class's in the module, a field's in the class.
    assert callees(g, "src.post") == {"src.decorators.Entity"}
    assert callees(g, "src.post.Post") == {"src.decorators.Column"}
    assert callees(g, "src.post.Post.constructor") == {"src.decorators.Inject"}


def test_typescript_call_result_locals_and_names_past_the_first_star_export(tmp_path: Path) -> None:
    g = graph_of(
        tmp_path,
        {
            "src/repo.ts": """
                export class Repository<T> { save(x: T): void {} clear(): void {} }
                export class Connection {
                    getRepository<T>(t: string): Repository<T> { return new Repository<T>(); }
                    async load(): Promise<Repository<string>> { return new Repository(); }
                }
                """,
            "src/columns.ts": "export function Column() { return (t: any, k: string) => {}; }\n",
            "src/index.ts": """
                export * from './repo';
                export * from './columns';
                """,
            "sample/app.ts": """
                import { Column, Connection, Repository } from '../src/index';
                export class Post { @Column() title: string; }
                export async function main(connection: Connection) {
                    const repo = connection.getRepository<Post>("post");
                    repo.save(new Post());
                    const loaded = await connection.load();
                    loaded.clear();
                }
                export function wipe(r: Repository<string> | string) {
                    const repo = r instanceof Repository ? r : new Repository<string>();
                    repo.clear();
                }
                """,
        },
    )
    # `Column` is in the second module `index.ts` re-exports with `export *`.
    assert callees(g, "sample.app.Post") == {"src.columns.Column"}
    # `repo` holds what `getRepository` declares it returns; `loaded`, what `load`'s promise
    # resolves to.
    assert callees(g, "sample.app.main") == {
        "src.repo.Connection.getRepository",
        "src.repo.Repository.save",
        "sample.app.Post",
        "src.repo.Connection.load",
        "src.repo.Repository.clear",
    }
    # `x instanceof C ? x : …` is a C.
    assert callees(g, "sample.app.wipe") == {"src.repo.Repository", "src.repo.Repository.clear"}


def test_rust_calls_in_macros_lifetimed_self_and_use_self(tmp_path: Path) -> None:
    g = graph_of(
        tmp_path,
        {
            "Cargo.toml": '[package]\nname = "fd"\nversion = "0.1.0"\n',
            "src/exec/mod.rs": """
                pub struct Input<'a> { data: &'a str }
                impl<'a> Input<'a> {
                    pub fn new(data: &'a str) -> Input<'a> { Input { data } }
                    pub fn basename(&'a mut self) -> &'a mut Self { self }
                    pub fn get(&'a self) -> String { String::new() }
                }
                pub fn job() {}
                """,
            "src/main.rs": """
                mod exec;
                use exec::{self, Input};
                fn main() {
                    assert_eq!(Input::new("a").basename().get(), format!("{}", "a"));
                    exec::job();
                }
                """,
        },
    )
    # Inside `assert_eq!(...)`, through `-> &'a mut Self`, and `exec` bound by `use exec::{self}`.
    assert callees(g, "crate.main") == {
        "exec.Input.new",
        "exec.Input.basename",
        "exec.Input.get",
        "exec.job",
    }


def test_javascript_functions_assigned_to_members_are_definitions(tmp_path: Path) -> None:
    """The pre-class style defines a library's API by assignment (express's
    ``res.send = function send(body) {...}``, ``Router.prototype.route = …``, object
    properties): each is a function with its own span and callees, and the variables of
    those functions and of callbacks are their locals, not the module's definitions."""
    g = graph_of(
        tmp_path,
        {
            "lib/response.js": """
                var res = module.exports = {};

                /** Set the status. */
                res.status = function status(code) {
                  var loc = code;
                  return check(loc);
                };

                res.send = function (body) {
                  var chunk = body;
                  return check(chunk);
                };

                function Router() {}
                Router.prototype.route = (path) => check(path);
                module.exports.exports = function () {};

                var proto = { handle: function (req) { var x = req; return check(x); } };

                [1, 2].forEach(function (n) { var inner = n; });

                function check(x) { return x; }
                """,
        },
    )
    defs = {
        (n.kind, n.qualname, n.line, n.end_line)
        for n in g.nodes_in_file("lib/response.js")
        if n.kind in ("function", "var")
    }
    assert defs == {
        ("var", "lib.response.res", 1, 1),
        ("function", "lib.response.status", 4, 7),
        ("function", "lib.response.send", 9, 12),
        ("function", "lib.response.Router", 14, 14),
        ("function", "lib.response.route", 15, 15),
        ("var", "lib.response.proto", 18, 18),
        ("function", "lib.response.handle", 18, 18),
        ("function", "lib.response.check", 22, 22),
    }
    for fn in ("status", "send", "route", "handle"):
        assert callees(g, f"lib.response.{fn}") == {"lib.response.check"}
    status = g.lookup("lib.response.status")[0]
    sig = g.signature(status.id)
    assert sig is not None
    assert sig.signature.startswith("res.status = function status(code)")
    assert sig.doc == "Set the status."


def test_javascript_require_bindings_and_this_outside_classes(tmp_path: Path) -> None:
    """CommonJS: ``require`` binds names as ``import`` does, in its three forms, and makes no
    definition of its own (markdown-it's ``var escapeHtml = require('./utils').escapeHtml``
    had every call reach the ``var`` line itself); a required module called or constructed
    is the function it exports whole; ``this`` in a method of an exported object (Koa), of a
    prototype or in a constructor function (markdown-it) reaches the module's methods."""
    g = graph_of(
        tmp_path,
        {
            "lib/utils.js": """
                function escapeHtml(s) { return s; }
                function isSpace(c) { return c === 32; }
                exports.escapeHtml = escapeHtml;
                exports.isSpace = isSpace;
                """,
            "lib/renderer.js": """
                var utils = require('./utils');
                var escapeHtml = require('./utils').escapeHtml;
                const { isSpace, escapeHtml: esc } = require('./utils');
                const path = require('path');

                function render(x) {
                  utils.isSpace(x);
                  isSpace(x);
                  esc(x);
                  path.join(x);
                  return escapeHtml(x);
                }
                module.exports = render;
                """,
            "lib/response.js": """
                module.exports = {
                  get(field) { return this.set(field); },
                  set(field) { return field; },
                };
                """,
            "lib/ruler.js": """
                function Ruler() { this.rules = []; this.compile(); }
                Ruler.prototype.compile = function () { return 1; };
                Ruler.prototype.at = function (name) { return this.compile(); };
                module.exports = Ruler;
                """,
            "lib/parse_link.js": """
                module.exports = function parseLink(s) { return s; };
                """,
            "lib/parser.js": """
                var Ruler = require('./ruler');
                var parseLink = require('./parse_link');
                var utils = require('./utils');
                function parse(s) { new Ruler(); utils(); return parseLink(s); }
                """,
        },
    )
    assert callees(g, "lib.renderer.render") == {"lib.utils.escapeHtml", "lib.utils.isSpace"}
    names = {n.name for n in g.nodes_in_file("lib/renderer.js") if n.kind in ("function", "var")}
    assert names == {"render"}  # no `var` for a require
    assert callees(g, "lib.response.get") == {"lib.response.set"}
    assert callees(g, "lib.ruler.at") == {"lib.ruler.compile"}
    assert callees(g, "lib.ruler.Ruler") == {"lib.ruler.compile"}  # a constructor function
    # A module called or constructed is the definition named for its file; `utils` exports
    # several, so calling it reaches the module, as a default import's call does.
    assert callees(g, "lib.parser.parse") == {
        "lib.ruler.Ruler",
        "lib.parse_link.parseLink",
        "lib.utils",
    }


def test_typescript_class_fields_holding_functions_are_methods(tmp_path: Path) -> None:
    """``onClick = () => {...}`` in a class body is a method written as a field (React
    components, bound handlers): a function of the class whose ``this`` is the class."""
    g = graph_of(
        tmp_path,
        {
            "src/button.ts": """
                export class Button {
                    count = 0;
                    onClick = (e: Event) => {
                        this.bump();
                    };
                    bump() { this.count += 1; }
                }
                """,
        },
    )
    fns = {
        (n.qualname, n.line, n.end_line)
        for n in g.nodes_in_file("src/button.ts")
        if n.kind == "function"
    }
    assert fns == {("src.button.Button.onClick", 3, 5), ("src.button.Button.bump", 6, 6)}
    assert callees(g, "src.button.Button.onClick") == {"src.button.Button.bump"}
