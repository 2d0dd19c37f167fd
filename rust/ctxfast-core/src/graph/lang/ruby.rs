//! Ruby extraction: modules and classes (`class`; `class A::B` is local `A.B`), methods and
//! singleton methods (`def self.x`, `class << self`; `function`), the methods a class body
//! makes with `attr_reader`/`attr_writer`/`attr_accessor` and `define_method(:x) do … end`
//! (`function`), the blocks a DSL call names at a class's or file's top level
//! (`add_selector(:link) do … end`, `task :build do … end`: `function`), constants (`var`),
//! `require`/`require_relative` (module imports), `include`/`extend`/`prepend` and the
//! superclass (bases: method lookup), and call references.
//!
//! Reference paths (resolved by `resolve::ruby`): `["m"]` an implicit-receiver call or a bare
//! name, `["self", "m"]`, a constant path with its method (`Foo::Bar.baz` →
//! `["Foo", "Bar", "baz"]`, `Foo.new` → `["Foo", "new"]`), `["x", "m"]` through a local and
//! `["@x", "m"]` through an instance variable. A bare identifier that the method assigned or
//! took as a parameter is a local, never a reference.

use super::{first_paragraph, Builder, Fields};
use crate::graph::raw::{DefKind, Target};
use rustc_hash::FxHashSet;
use tree_sitter::Node;

/// Walk state: the locals bound so far in each scope (a bare identifier is a local variable
/// once assigned, otherwise a method call), and whether the walk is in a `class << self`
/// body, where every method defined is the class's own (a singleton method).
#[derive(Default)]
struct St {
    locals: FxHashSet<(u32, String)>,
    singleton: bool,
}

pub fn walk(b: &mut Builder<'_>, root: Node<'_>) {
    let mut st = St::default();
    visit(b, &mut st, root);
}

/// The `#` comment lines right above `n` (a class's first member's comments sit in the class
/// node, before its body), first paragraph.
fn doc(b: &Builder<'_>, n: Node<'_>) -> String {
    let mut p = n.prev_sibling();
    if p.is_none() {
        p = n
            .parent()
            .filter(|q| q.kind() == "body_statement")
            .and_then(|q| q.prev_sibling());
    }
    let mut lines = vec![];
    let mut next_row = n.start_position().row;
    while let Some(c) = p.filter(|c| c.kind() == "comment") {
        if c.end_position().row + 1 < next_row {
            break;
        }
        lines.push(b.text(c));
        next_row = c.start_position().row;
        p = c.prev_sibling();
    }
    lines.reverse();
    let text: Vec<String> = lines
        .iter()
        .map(|l| l.trim_start_matches('#').to_string())
        .collect();
    first_paragraph(&text.join("\n"))
}

/// A constant path as segments: `Foo` → `[Foo]`, `A::B` → `[A, B]`, `::A` → `[A]`; `None`
/// when a segment is no constant (`x::Y`).
fn const_path(b: &Builder<'_>, n: Node<'_>) -> Option<Vec<String>> {
    let mut segs = vec![];
    let mut cur = n;
    loop {
        match cur.kind() {
            "constant" => {
                segs.push(b.text(cur));
                break;
            }
            "scope_resolution" => {
                segs.push(b.text(cur.field("name")?));
                match cur.field("scope") {
                    Some(s) => cur = s,
                    None => break,
                }
            }
            _ => return None,
        }
    }
    segs.reverse();
    Some(segs)
}

fn is_local(b: &Builder<'_>, st: &St, name: &str) -> bool {
    st.locals.contains(&(b.scope, name.to_string()))
}

fn bind_local(b: &mut Builder<'_>, st: &mut St, name: String) {
    if st.locals.insert((b.scope, name.clone())) {
        b.local(name);
    }
}

/// Runs `f` with [`St::singleton`] set to `on`: a `class << self` body turns it on, a class
/// or module body inside one turns it off again.
fn with_singleton(st: &mut St, on: bool, f: impl FnOnce(&mut St)) {
    let outer = std::mem::replace(&mut st.singleton, on);
    f(st);
    st.singleton = outer;
}

fn visit(b: &mut Builder<'_>, st: &mut St, n: Node<'_>) {
    b.nested(n, |b| visit_node(b, st, n));
}

fn visit_children(b: &mut Builder<'_>, st: &mut St, n: Node<'_>) {
    let mut cur = n.walk();
    let kids: Vec<Node<'_>> = n.named_children(&mut cur).collect();
    for k in kids {
        visit(b, st, k);
    }
}

fn visit_node(b: &mut Builder<'_>, st: &mut St, n: Node<'_>) {
    match n.kind() {
        "module" | "class" => visit_class(b, st, n),
        "singleton_class" => {
            // `class << self`: its methods are the enclosing class's singleton methods.
            if let Some(body) = n.field("body") {
                with_singleton(st, true, |st| visit(b, st, body));
            }
        }
        "method" | "singleton_method" => visit_method(b, st, n),
        "block" | "do_block" | "lambda" => {
            // Blocks are no definitions: their parameters are locals of the enclosing scope.
            if let Some(ps) = n.field("parameters") {
                params(b, st, ps);
            }
            if let Some(body) = n.field("body") {
                visit(b, st, body);
            }
        }
        "assignment" | "operator_assignment" => visit_assignment(b, st, n),
        "call" => call(b, st, n),
        "identifier" => {
            let nm = b.text(n);
            if !is_local(b, st, &nm) {
                b.reference(vec![nm], n);
            }
        }
        "constant" | "scope_resolution" => match const_path(b, n) {
            Some(p) => b.reference(p, n),
            None => visit_children(b, st, n),
        },
        "exception_variable" => visit_exception_variable(b, st, n),
        "for" => visit_for(b, st, n),
        "comment" | "string_content" | "simple_symbol" | "hash_key_symbol" => {}
        _ => visit_children(b, st, n),
    }
}

/// A module or class: its definition (nested under `A` for `class A::B`), superclass and body.
fn visit_class(b: &mut Builder<'_>, st: &mut St, n: Node<'_>) {
    let Some(segs) = n.field("name").and_then(|k| const_path(b, k)) else {
        return visit_children(b, st, n);
    };
    let body = n.field("body");
    let sig = b.header(n, body);
    let name = segs.last().cloned().unwrap_or_default();
    let parent_local = b.cur_def().local.clone();
    let idx = b.def(DefKind::Class, name, n, sig);
    if segs.len() > 1 {
        // `class A::B` defines `B` inside `A`, wherever it is written.
        let joined = segs.join(".");
        b.out.defs[idx as usize].local = if parent_local.is_empty() {
            joined
        } else {
            format!("{parent_local}.{joined}")
        };
    }
    b.out.defs[idx as usize].doc = doc(b, n);
    if let Some(sc) = n.field("superclass") {
        if let Some(p) = sc.named_child(0).and_then(|k| const_path(b, k)) {
            b.out.defs[idx as usize].bases.push(p.join("."));
        }
    }
    if let Some(body) = body {
        with_singleton(st, false, |st| b.within(idx, |b| visit(b, st, body)));
    }
}

/// A method or singleton method: its definition, parameters and body.
fn visit_method(b: &mut Builder<'_>, st: &mut St, n: Node<'_>) {
    let Some(name) = b.field_text(n, "name") else {
        return;
    };
    let body = n.field("body");
    let sig = b.header(n, body);
    let idx = b.def(DefKind::Function, name, n, sig);
    b.out.defs[idx as usize].doc = doc(b, n);
    b.out.defs[idx as usize].self_names = vec!["self".into()];
    b.out.defs[idx as usize].singleton = n.kind() == "singleton_method" || st.singleton;
    b.within(idx, |b| {
        if let Some(ps) = n.field("parameters") {
            params(b, st, ps);
        }
        if let Some(body) = body {
            visit(b, st, body);
        }
    });
}

/// An assignment: the constant, local or instance variable it binds, then its value.
fn visit_assignment(b: &mut Builder<'_>, st: &mut St, n: Node<'_>) {
    let (Some(l), r) = (n.field("left"), n.field("right")) else {
        return visit_children(b, st, n);
    };
    let made = r.and_then(|r| created_class(b, r));
    match l.kind() {
        "constant" if b.cur_def().kind != DefKind::Function => {
            let sig = b.first_line(n);
            b.def(DefKind::Var, b.text(l), n, sig);
        }
        "identifier" => {
            let nm = b.text(l);
            match made {
                Some(c) if b.cur_def().kind == DefKind::Function => {
                    st.locals.insert((b.scope, nm.clone()));
                    b.typed_local(nm, c);
                }
                _ => bind_local(b, st, nm),
            }
        }
        "instance_variable" => {
            let class = b.cur_def().parent;
            if b.cur_def().kind == DefKind::Function
                && class != 0
                && b.out.defs[class as usize].kind == DefKind::Class
            {
                b.attr_assigned(class, b.text(l), made);
            }
        }
        "left_assignment_list" => {
            let mut cur = l.walk();
            let names: Vec<String> = l
                .named_children(&mut cur)
                .filter(|k| k.kind() == "identifier")
                .map(|k| b.text(k))
                .collect();
            for nm in names {
                bind_local(b, st, nm);
            }
        }
        _ => visit(b, st, l),
    }
    if let Some(r) = r {
        visit(b, st, r);
    }
}

/// `rescue E => e`: the exception variable as a local.
fn visit_exception_variable(b: &mut Builder<'_>, st: &mut St, n: Node<'_>) {
    let mut cur = n.walk();
    let kids: Vec<Node<'_>> = n.named_children(&mut cur).collect();
    for k in kids {
        if k.kind() == "identifier" {
            bind_local(b, st, b.text(k));
        }
    }
}

/// A `for` loop: its variable as a local, then the value and body.
fn visit_for(b: &mut Builder<'_>, st: &mut St, n: Node<'_>) {
    if let Some(p) = n.field("pattern").filter(|p| p.kind() == "identifier") {
        bind_local(b, st, b.text(p));
    }
    for f in ["value", "body"] {
        if let Some(k) = n.field(f) {
            visit(b, st, k);
        }
    }
}

/// Parameters (of a method, a block or a lambda) become locals of the current scope.
fn params(b: &mut Builder<'_>, st: &mut St, ps: Node<'_>) {
    let mut cur = ps.walk();
    let kids: Vec<Node<'_>> = ps.named_children(&mut cur).collect();
    for p in kids {
        match p.kind() {
            "identifier" => bind_local(b, st, b.text(p)),
            "destructured_parameter" => params(b, st, p),
            _ => {
                if let Some(nm) = p.field("name") {
                    bind_local(b, st, b.text(nm));
                }
                if let Some(v) = p.field("value") {
                    visit(b, st, v);
                }
            }
        }
    }
}

/// `Foo.new(...)` / `Foo::Bar.new` → the class path, dotted.
fn created_class(b: &Builder<'_>, r: Node<'_>) -> Option<String> {
    if r.kind() != "call" || b.field_text(r, "method").as_deref() != Some("new") {
        return None;
    }
    Some(const_path(b, r.field("receiver")?)?.join("."))
}

/// The literal path a `require`/`require_relative` names, when it is a plain string.
fn required(b: &Builder<'_>, args: Node<'_>) -> Option<String> {
    let s = args.named_child(0).filter(|s| s.kind() == "string")?;
    if s.named_child_count() != 1 {
        return None;
    }
    let c = s.named_child(0).filter(|c| c.kind() == "string_content")?;
    Some(b.text(c))
}

/// The names an argument list spells as symbols or plain strings (`:a, "b"`), in order.
fn symbols(b: &Builder<'_>, args: Node<'_>) -> Vec<String> {
    let mut cur = args.walk();
    let kids: Vec<Node<'_>> = args.named_children(&mut cur).collect();
    kids.into_iter().filter_map(|k| symbol(b, k)).collect()
}

/// The name a symbol or plain string spells (`:a`, `"b"`), if `k` is one and it is not empty.
fn symbol(b: &Builder<'_>, k: Node<'_>) -> Option<String> {
    let s = match k.kind() {
        "simple_symbol" => Some(b.text(k).trim_start_matches(':').to_string()),
        "string" if k.named_child_count() == 1 => k
            .named_child(0)
            .filter(|c| c.kind() == "string_content")
            .map(|c| b.text(c)),
        _ => None,
    };
    s.filter(|s| !s.is_empty())
}

fn call(b: &mut Builder<'_>, st: &mut St, n: Node<'_>) {
    let method = n.field("method");
    let recv = n.field("receiver");
    let args = n.field("arguments");
    let name = method.map(|m| b.text(m)).unwrap_or_default();
    if recv.is_none() {
        match name.as_str() {
            "require" | "require_relative" | "load" => {
                if let Some(path) = args.and_then(|a| required(b, a)) {
                    let level = u32::from(name == "require_relative");
                    let module = path.trim_end_matches(".rb").to_string();
                    b.bind(module.clone(), Target::Module { module, level }, n);
                    return;
                }
            }
            // `attr_accessor :a, :b` defines methods `a` (and `a=`) of the class.
            "attr_reader" | "attr_writer" | "attr_accessor"
                if b.cur_def().kind == DefKind::Class =>
            {
                if let Some(a) = args {
                    let sig = b.first_line(n);
                    for name in symbols(b, a) {
                        let idx = b.def(DefKind::Function, name, n, sig.clone());
                        b.out.defs[idx as usize].singleton = st.singleton;
                    }
                    return;
                }
            }
            // `define_method(:x) do |y| … end`: a method `x` whose body is the block.
            "define_method" | "define_singleton_method" if b.cur_def().kind == DefKind::Class => {
                let singleton = st.singleton || name == "define_singleton_method";
                let name = args.and_then(|a| symbols(b, a).into_iter().next());
                if let (Some(name), Some(blk)) = (name, n.field("block")) {
                    let sig = b.first_line(n);
                    let idx = b.def(DefKind::Function, name, n, sig);
                    b.out.defs[idx as usize].doc = doc(b, n);
                    b.out.defs[idx as usize].self_names = vec!["self".into()];
                    b.out.defs[idx as usize].singleton = singleton;
                    b.within(idx, |b| visit(b, st, blk));
                    return;
                }
            }
            // Mixins: their methods are the class's (or module's) own for lookup.
            "include" | "extend" | "prepend" if b.cur_def().kind == DefKind::Class => {
                if let Some(a) = args {
                    let mut cur = a.walk();
                    let mixins: Vec<String> = a
                        .named_children(&mut cur)
                        .filter_map(|k| const_path(b, k))
                        .map(|p| p.join("."))
                        .collect();
                    let s = b.scope as usize;
                    b.out.defs[s].bases.extend(mixins);
                    return;
                }
            }
            _ => {}
        }
    }
    let path = match (recv, method) {
        (_, None) => None,
        (None, Some(_)) => Some(vec![name.clone()]),
        (Some(r), Some(_)) => match r.kind() {
            "self" => Some(vec!["self".into(), name.clone()]),
            "identifier" | "instance_variable" => Some(vec![b.text(r), name.clone()]),
            "constant" | "scope_resolution" => const_path(b, r).map(|mut p| {
                p.push(name.clone());
                p
            }),
            _ => None,
        },
    };
    match (path, method) {
        (Some(p), Some(m)) => {
            b.call_reference(p, m, n);
            // `x.m` through an unknown local still reads x; nothing else to visit there.
            if let Some(r) = recv.filter(|r| r.kind() == "identifier") {
                let rn = b.text(r);
                if !is_local(b, st, &rn) {
                    b.reference(vec![rn], r);
                }
            }
        }
        _ => {
            if let Some(r) = recv {
                visit(b, st, r);
            }
        }
    }
    if let Some(a) = args {
        visit(b, st, a);
    }
    let Some(blk) = n.field("block") else {
        return;
    };
    match dsl_name(b, &name, args) {
        Some(named) => {
            let sig = b.first_line(n);
            let idx = b.def(DefKind::Function, named, n, sig);
            b.out.defs[idx as usize].doc = doc(b, n);
            b.within(idx, |b| visit(b, st, blk));
        }
        None => visit(b, st, blk),
    }
}

/// Calls that take a block and a leading symbol at a class's or file's top level without
/// defining anything by that name: constructors (`Struct.new(:a) do`), and hooks whose symbol
/// says when they run (`before(:each) do`).
const NOT_DSL: &[&str] = &["new", "define", "before", "after", "around", "configure"];

/// The name a DSL block defines, when the call is one: a call written at a class's, module's
/// or file's top level (not inside a method) that passes a block and leads with a symbol
/// (`Capybara.add_selector(:link) do`, `task :build do`, `register_driver :chrome do`). Ruby
/// libraries declare their behaviour this way; such a block is the code that runs under that
/// name, and a file made of them otherwise holds no definition at all. A leading string is
/// prose (`describe "when empty" do`, `context "Options" do`), not a name.
fn dsl_name(b: &Builder<'_>, method: &str, args: Option<Node<'_>>) -> Option<String> {
    if b.cur_def().kind == DefKind::Function || NOT_DSL.contains(&method) {
        return None;
    }
    let first = args?
        .named_child(0)
        .filter(|k| k.kind() == "simple_symbol")?;
    let name = symbol(b, first)?;
    let word = name.trim_end_matches(['?', '!']);
    let identifier = !word.is_empty()
        && !word.starts_with(|c: char| c.is_ascii_digit())
        && word.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    identifier.then_some(name)
}
