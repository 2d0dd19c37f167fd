//! Python extraction: functions/methods (`function`), classes (`class`), module- and
//! class-level assignments (`var`), call/decorator/base-class references, imports (absolute,
//! relative, aliased, star) and function-local names.

use super::{dotted, first_paragraph, Builder, Fields};
use crate::graph::raw::{DefKind, Target};
use rustc_hash::FxHashSet;
use tree_sitter::Node;

const MEMBER: &[&str] = &["attribute"];
const IDENT: &[&str] = &["identifier"];

pub fn walk(b: &mut Builder<'_>, root: Node<'_>) {
    let mut seen = FxHashSet::default();
    visit(b, root, &mut seen);
}

fn path(b: &Builder<'_>, n: Node<'_>) -> Option<Vec<String>> {
    dotted(b, n, MEMBER, "object", "attribute", IDENT)
}

/// Identifiers bound by an assignment/loop target pattern.
/// (An explicit stack, so nested tuples thousands deep cost no call stack.)
fn target_names(b: &Builder<'_>, n: Node<'_>, out: &mut Vec<String>) {
    let mut stack = vec![n];
    while let Some(n) = stack.pop() {
        match n.kind() {
            "identifier" => out.push(b.text(n)),
            "pattern_list"
            | "tuple_pattern"
            | "list_pattern"
            | "tuple"
            | "list"
            | "list_splat_pattern"
            | "parenthesized_expression"
            | "as_pattern_target" => {
                let mut c = n.walk();
                let kids: Vec<Node<'_>> = n.named_children(&mut c).collect();
                stack.extend(kids.into_iter().rev());
            }
            _ => {}
        }
    }
}

/// Parameter names, each with the dotted class of its annotation when that is a plain name
/// or attribute path (`x: Foo`, `x: mod.Foo = None`; not `Optional[Foo]` or strings).
fn params(b: &Builder<'_>, params: Node<'_>) -> Vec<(String, Option<String>)> {
    let mut out = vec![];
    let mut c = params.walk();
    for p in params.named_children(&mut c) {
        let name = match p.kind() {
            "identifier" => Some(p),
            "default_parameter" | "typed_default_parameter" => p.field("name"),
            "typed_parameter" | "list_splat_pattern" | "dictionary_splat_pattern" => {
                let mut c2 = p.walk();
                let first = p.named_children(&mut c2).next();
                first.and_then(|f| {
                    if f.kind() == "identifier" {
                        Some(f)
                    } else {
                        f.named_child(0)
                    }
                })
            }
            _ => None,
        };
        let class = match p.kind() {
            "typed_parameter" | "typed_default_parameter" => annotation_class(b, p),
            _ => None,
        };
        if let Some(n) = name.filter(|n| n.kind() == "identifier") {
            out.push((b.text(n), class));
        }
    }
    out
}

/// The dotted class an annotation names, for `typed_parameter`/`assignment` nodes.
fn annotation_class(b: &Builder<'_>, n: Node<'_>) -> Option<String> {
    let ty = n.field("type")?;
    let inner = if ty.kind() == "type" {
        ty.named_child(0)?
    } else {
        ty
    };
    path(b, inner).map(|p| p.join("."))
}

/// The dotted callee of `right` when it is a call (`Foo(...)`, `mod.Foo(...)`): the class an
/// assignment may bind (the resolver keeps it only if the callee resolves to a class).
fn constructed_class(b: &Builder<'_>, right: Node<'_>) -> Option<String> {
    if right.kind() != "call" {
        return None;
    }
    path(b, right.field("function")?).map(|p| p.join("."))
}

fn docstring(b: &Builder<'_>, body: Option<Node<'_>>) -> String {
    let Some(body) = body else {
        return String::new();
    };
    let Some(first) = body.named_child(0) else {
        return String::new();
    };
    if first.kind() != "expression_statement" {
        return String::new();
    }
    let Some(s) = first.named_child(0).filter(|s| s.kind() == "string") else {
        return String::new();
    };
    let mut c = s.walk();
    let content: String = s
        .named_children(&mut c)
        .filter(|k| k.kind() == "string_content")
        .map(|k| b.text(k))
        .collect();
    first_paragraph(&content)
}

fn is_def_scope(b: &Builder<'_>) -> bool {
    matches!(b.cur_def().kind, DefKind::Module | DefKind::Class)
}

fn bind_targets(
    b: &mut Builder<'_>,
    stmt: Node<'_>,
    left: Node<'_>,
    seen: &mut FxHashSet<(u32, String)>,
) {
    let mut names = vec![];
    target_names(b, left, &mut names);
    // `x = Foo(...)` / `x: Foo = ...` inside a function: x may hold a Foo.
    let class = (left.kind() == "identifier" && stmt.kind() == "assignment")
        .then(|| annotation_class(b, stmt).or_else(|| constructed_class(b, stmt.field("right")?)))
        .flatten();
    for n in names {
        if is_def_scope(b) {
            if seen.insert((b.scope, n.clone())) {
                let sig = b.first_line(stmt);
                b.def(DefKind::Var, n, stmt, sig);
            }
        } else if let Some(c) = &class {
            b.typed_local(n, c.clone());
        } else {
            b.local(n);
        }
    }
}

/// `super().name` / `super(C, self).name` as the reference path `["super", name]` (the
/// resolver maps it to the base-class member).
fn super_call(b: &Builder<'_>, f: Node<'_>) -> Option<Vec<String>> {
    if f.kind() != "attribute" {
        return None;
    }
    let obj = f.field("object")?;
    let callee = obj.field("function")?;
    let attr = f.field("attribute")?;
    (obj.kind() == "call" && callee.kind() == "identifier" && b.text(callee) == "super")
        .then(|| vec!["super".to_string(), b.text(attr)])
}

/// Feeds `RawFile::typed_attrs`: `self.x = Foo()` in a method (or any other assignment to
/// `self.x`, which makes `x` untyped), and `x = Foo()` / `x: Foo` in a class body.
fn note_attr_assignment(b: &mut Builder<'_>, stmt: Node<'_>, left: Node<'_>) {
    let class = || {
        if stmt.kind() != "assignment" {
            return None;
        }
        annotation_class(b, stmt).or_else(|| constructed_class(b, stmt.field("right")?))
    };
    let cur = b.cur_def();
    match left.kind() {
        "attribute" if cur.kind == DefKind::Function => {
            let (Some(obj), Some(attr)) = (left.field("object"), left.field("attribute")) else {
                return;
            };
            let parent = cur.parent;
            let on_self = obj.kind() == "identifier" && cur.self_names.contains(&b.text(obj));
            if on_self && b.out.defs[parent as usize].kind == DefKind::Class {
                let c = class();
                b.attr_assigned(parent, b.text(attr), c);
            }
        }
        "identifier" if cur.kind == DefKind::Class => {
            let c = class();
            b.attr_assigned(b.scope, b.text(left), c);
        }
        _ => {}
    }
}

fn visit(b: &mut Builder<'_>, n: Node<'_>, seen: &mut FxHashSet<(u32, String)>) {
    b.nested(n, |b| visit_node(b, n, seen));
}

fn visit_node(b: &mut Builder<'_>, n: Node<'_>, seen: &mut FxHashSet<(u32, String)>) {
    match n.kind() {
        "function_definition" => visit_function(b, n, seen),
        "class_definition" => visit_class(b, n, seen),
        "decorator" => {
            b.children(n, |b, k| match path(b, k) {
                Some(p) => b.reference(p, k),
                None => visit(b, k, seen),
            });
        }
        "import_statement" => visit_import(b, n),
        "import_from_statement" => visit_import_from(b, n),
        "call" => visit_call(b, n, seen),
        "assignment" | "augmented_assignment" => visit_assignment(b, n, seen),
        "for_statement" | "for_in_clause" => visit_for(b, n, seen),
        "as_pattern" => visit_as_pattern(b, n, seen),
        "named_expression" => {
            if let Some(nm) = b.field_text(n, "name") {
                b.local(nm);
            }
            if let Some(v) = n.field("value") {
                visit(b, v, seen);
            }
        }
        "lambda" => {
            if let Some(p) = n.field("parameters") {
                for (x, _) in params(b, p) {
                    b.local(x);
                }
            }
            if let Some(body) = n.field("body") {
                visit(b, body, seen);
            }
        }
        "except_clause" => visit_except(b, n, seen),
        "global_statement" | "nonlocal_statement" => {}
        _ => b.children(n, |b, k| visit(b, k, seen)),
    }
}

/// A function or method: its definition, parameters (typed locals of its body) and body.
fn visit_function(b: &mut Builder<'_>, n: Node<'_>, seen: &mut FxHashSet<(u32, String)>) {
    let Some(name) = b.field_text(n, "name") else {
        return;
    };
    let body = n.field("body");
    let sig = b.header(n, body);
    let in_class = b.cur_def().kind == DefKind::Class;
    let idx = b.def(DefKind::Function, name, n, sig);
    b.out.defs[idx as usize].doc = docstring(b, body);
    if let Some(ps) = n.field("parameters") {
        let names = params(b, ps);
        if in_class {
            if let Some((first, _)) = names.first() {
                b.out.defs[idx as usize].self_names.push(first.clone());
            }
        }
        // Default values are evaluated in the enclosing scope.
        visit(b, ps, seen);
        b.within(idx, |b| {
            for (p, class) in names {
                match class {
                    Some(c) => b.typed_local(p, c),
                    None => b.local(p),
                }
            }
        });
    }
    if let Some(body) = body {
        b.within(idx, |b| visit(b, body, seen));
    }
}

/// A class: its base-class references, definition and body.
fn visit_class(b: &mut Builder<'_>, n: Node<'_>, seen: &mut FxHashSet<(u32, String)>) {
    let Some(name) = b.field_text(n, "name") else {
        return;
    };
    let body = n.field("body");
    let sig = b.header(n, body);
    let mut bases = vec![];
    if let Some(sup) = n.field("superclasses") {
        let mut c = sup.walk();
        let kids: Vec<Node<'_>> = sup.named_children(&mut c).collect();
        for k in kids {
            match path(b, k) {
                Some(p) => {
                    bases.push(p.join("."));
                    b.reference(p, k);
                }
                None => visit(b, k, seen),
            }
        }
    }
    let idx = b.def(DefKind::Class, name, n, sig);
    b.out.defs[idx as usize].bases = bases;
    b.out.defs[idx as usize].doc = docstring(b, body);
    if let Some(body) = body {
        b.within(idx, |b| visit(b, body, seen));
    }
}

/// `import a.b` / `import a.b as c`: the modules it binds.
fn visit_import(b: &mut Builder<'_>, n: Node<'_>) {
    b.children(n, |b, k| match k.kind() {
        "dotted_name" => {
            let full = b.text(k);
            b.bind(
                full.clone(),
                Target::Module {
                    module: full,
                    level: 0,
                },
                n,
            );
        }
        "aliased_import" => {
            if let (Some(m), Some(a)) = (b.field_text(k, "name"), b.field_text(k, "alias")) {
                b.bind(
                    a,
                    Target::Module {
                        module: m,
                        level: 0,
                    },
                    n,
                );
            }
        }
        _ => {}
    });
}

/// `from m import a, b as c, *` (also relative): the names it binds from module `m`.
fn visit_import_from(b: &mut Builder<'_>, n: Node<'_>) {
    let Some(m) = n.field("module_name") else {
        return;
    };
    let (module, level) = if m.kind() == "relative_import" {
        let mut level = 0;
        let mut module = String::new();
        b.children(m, |b, k| match k.kind() {
            "import_prefix" => level = b.text(k).matches('.').count() as u32,
            "dotted_name" => module = b.text(k),
            _ => {}
        });
        (module, level)
    } else {
        (b.text(m), 0)
    };
    let mut c = n.walk();
    let kids: Vec<Node<'_>> = n.named_children(&mut c).collect();
    for k in kids {
        if k.id() == m.id() {
            continue;
        }
        match k.kind() {
            "wildcard_import" => b.bind(
                "*".into(),
                Target::Star {
                    module: module.clone(),
                    level,
                },
                n,
            ),
            "dotted_name" => {
                let name = b.text(k);
                let t = Target::Symbol {
                    module: module.clone(),
                    level,
                    name: name.clone(),
                };
                b.bind(name, t, n);
            }
            "aliased_import" => {
                if let (Some(nm), Some(a)) = (b.field_text(k, "name"), b.field_text(k, "alias")) {
                    b.bind(
                        a,
                        Target::Symbol {
                            module: module.clone(),
                            level,
                            name: nm,
                        },
                        n,
                    );
                }
            }
            _ => {}
        }
    }
}

/// A call: a reference to its callee, then its arguments.
fn visit_call(b: &mut Builder<'_>, n: Node<'_>, seen: &mut FxHashSet<(u32, String)>) {
    if let Some(f) = n.field("function") {
        match path(b, f).or_else(|| super_call(b, f)) {
            Some(p) => b.call_reference(p, f, n),
            None => visit(b, f, seen),
        }
    }
    if let Some(a) = n.field("arguments") {
        visit(b, a, seen);
    }
}

/// An assignment: the attributes it types, the names it binds, then its value.
fn visit_assignment(b: &mut Builder<'_>, n: Node<'_>, seen: &mut FxHashSet<(u32, String)>) {
    if let Some(left) = n.field("left") {
        note_attr_assignment(b, n, left);
        bind_targets(b, n, left, seen);
    }
    for f in ["right", "type"] {
        if let Some(r) = n.field(f) {
            visit(b, r, seen);
        }
    }
}

/// A `for` loop or comprehension clause: its target names as locals, then the rest.
fn visit_for(b: &mut Builder<'_>, n: Node<'_>, seen: &mut FxHashSet<(u32, String)>) {
    if let Some(left) = n.field("left") {
        let mut names = vec![];
        target_names(b, left, &mut names);
        for x in names {
            b.local(x);
        }
    }
    b.children(n, |b, k| {
        if Some(k) != n.field("left") {
            visit(b, k, seen);
        }
    });
}

/// `… as x` (`except`, `with`): the names bound after `as`, then the value.
fn visit_as_pattern(b: &mut Builder<'_>, n: Node<'_>, seen: &mut FxHashSet<(u32, String)>) {
    // `except E as e`: e holds an E (a tuple of classes, or a `with`, gives no type).
    let caught = n
        .parent()
        .filter(|p| p.kind() == "except_clause")
        .and_then(|_| n.named_child(0))
        .and_then(|v| path(b, v))
        .map(|p| p.join("."));
    if let Some(a) = n.field("alias") {
        let mut names = vec![];
        target_names(b, a, &mut names);
        for x in names {
            match &caught {
                Some(c) if !is_def_scope(b) => b.typed_local(x, c.clone()),
                _ => b.local(x),
            }
        }
    }
    if let Some(v) = n.named_child(0) {
        visit(b, v, seen);
    }
}

/// An `except` clause: the name after `as` as a local, then the rest.
fn visit_except(b: &mut Builder<'_>, n: Node<'_>, seen: &mut FxHashSet<(u32, String)>) {
    // `except E as e`: the name after `as` is a local binding.
    let mut c = n.walk();
    let kids: Vec<Node<'_>> = n.children(&mut c).collect();
    for (i, k) in kids.iter().enumerate() {
        if k.kind() == "identifier" && i > 0 && kids[i - 1].kind() == "as" {
            b.local(b.text(*k));
        } else if k.is_named() {
            visit(b, *k, seen);
        }
    }
}
