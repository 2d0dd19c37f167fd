//! PHP extraction: classes, interfaces, traits and enums (`class`), methods and functions
//! (`function`), class constants, enum cases and properties (`var`), `use` imports and call
//! references. Definitions are qualified by the file's `namespace` (`App\Http\Kernel` →
//! `App.Http.Kernel`, in `RawFile::package`; each block's own in a file of several,
//! `RawFile::namespaces`), as Java's are by their package: the namespace,
//! not the file's path, is how PHP code names a class, and under PSR-4 autoloading the
//! two agree anyway.
//!
//! Reference paths (resolved by `resolve::php`) start with what the call goes through:
//! `$this`/`$x` (an instance), `self`/`static`/`parent`, `new` (a class instantiated), a class
//! name as written (`Foo\Bar::m()` → `["Foo\Bar", "m"]`) or, alone, a function name.

use super::{first_paragraph, Builder, Fields};
use crate::graph::raw::{DefKind, Target};
use tree_sitter::Node;

pub fn walk(b: &mut Builder<'_>, root: Node<'_>) {
    visit(b, root);
}

/// The `/** … */` comment right above `n` (attributes may stand between).
fn doc(b: &Builder<'_>, n: Node<'_>) -> String {
    let mut p = n.prev_named_sibling();
    while let Some(c) = p.filter(|c| c.kind() == "attribute_list") {
        p = c.prev_named_sibling();
    }
    match p {
        Some(c) if c.kind() == "comment" => {
            let t = b.text(c);
            if !t.starts_with("/**") {
                return String::new();
            }
            // Each line's leading `*` goes first, so a ` *` line ends the first paragraph.
            let body: Vec<&str> = t
                .trim_start_matches("/**")
                .trim_end_matches("*/")
                .lines()
                .map(|l| l.trim().trim_start_matches('*').trim())
                .collect();
            first_paragraph(&body.join("\n"))
        }
        _ => String::new(),
    }
}

/// A namespace or class name as written (`\Foo\Bar`, `Bar`), whitespace removed.
fn name_text(b: &Builder<'_>, n: Node<'_>) -> String {
    b.text(n).split_whitespace().collect()
}

/// A namespace as the graph writes it: `App\Http` → `App.Http`.
pub fn dotted_namespace(ns: &str) -> String {
    ns.trim_matches('\\').replace('\\', ".")
}

/// `$name` → `name`.
fn var_name(b: &Builder<'_>, n: Node<'_>) -> String {
    b.text(n).trim_start_matches('$').to_string()
}

/// The class a declared type names (`Foo`, `?Foo`, `\App\Foo`), `None` for builtin types,
/// unions and intersections.
fn class_of(b: &Builder<'_>, t: Node<'_>) -> Option<String> {
    match t.kind() {
        "named_type" => {
            let c = t.named_child(0)?;
            matches!(c.kind(), "name" | "qualified_name").then(|| name_text(b, c))
        }
        "optional_type" => class_of(b, t.named_child(0)?),
        _ => None,
    }
}

fn visit(b: &mut Builder<'_>, n: Node<'_>) {
    b.nested(n, |b| visit_node(b, n));
}

fn visit_node(b: &mut Builder<'_>, n: Node<'_>) {
    match n.kind() {
        "namespace_definition" => visit_namespace(b, n),
        "namespace_use_declaration" => use_declaration(b, n),
        "class_declaration"
        | "interface_declaration"
        | "trait_declaration"
        | "enum_declaration" => visit_class(b, n),
        "method_declaration" | "function_definition" => visit_function(b, n),
        "const_declaration" => visit_const(b, n),
        "enum_case" => {
            if let Some(nm) = b.field_text(n, "name") {
                let sig = b.first_line(n);
                b.def(DefKind::Var, nm, n, sig);
            }
            if let Some(v) = n.field("value") {
                visit(b, v);
            }
        }
        "property_declaration" => visit_property(b, n),
        "assignment_expression" => visit_assignment(b, n),
        "member_call_expression" | "nullsafe_member_call_expression" => visit_member_call(b, n),
        "scoped_call_expression" | "class_constant_access_expression" => visit_scoped(b, n),
        "function_call_expression" => visit_function_call(b, n),
        "object_creation_expression" => visit_new(b, n),
        "comment" => {}
        _ => b.children(n, visit),
    }
}

/// A `namespace` declaration: the namespace of what follows it (a braced block's body, or
/// the statements after `namespace X;`), then its body. The file's first gives its
/// `package`; each later one is recorded from its line on (`RawFile::namespaces`).
fn visit_namespace(b: &mut Builder<'_>, n: Node<'_>) {
    let ns = n
        .field("name")
        .map(|name| dotted_namespace(&name_text(b, name)))
        .unwrap_or_default();
    let mut before = n.prev_named_sibling();
    while let Some(p) = before.filter(|p| p.kind() != "namespace_definition") {
        before = p.prev_named_sibling();
    }
    if before.is_none() {
        b.out.package = ns;
    } else {
        let line = n.start_position().row as u32 + 1;
        b.out.namespaces.push((line, ns));
    }
    if let Some(body) = n.field("body") {
        visit(b, body);
    }
}

/// A class, interface, trait or enum: its definition, bases (used traits too) and body.
fn visit_class(b: &mut Builder<'_>, n: Node<'_>) {
    let Some(name) = b.field_text(n, "name") else {
        return;
    };
    let body = n.field("body");
    let sig = b.header(n, body);
    let mut bases = vec![];
    b.children(n, |b, k| {
        if matches!(k.kind(), "base_clause" | "class_interface_clause") {
            b.children(k, |b, t| {
                if matches!(t.kind(), "name" | "qualified_name") {
                    bases.push(name_text(b, t));
                }
            });
        }
    });
    let idx = b.def(DefKind::Class, name, n, sig);
    b.out.defs[idx as usize].doc = doc(b, n);
    if let Some(body) = body {
        // `use SomeTrait;` in the body: the trait's methods are the class's own.
        b.children(body, |b, k| {
            if k.kind() == "use_declaration" {
                b.children(k, |b, t| {
                    if matches!(t.kind(), "name" | "qualified_name") {
                        bases.push(name_text(b, t));
                    }
                });
            }
        });
    }
    b.out.defs[idx as usize].bases = bases;
    if let Some(body) = body {
        b.within(idx, |b| visit(b, body));
    }
}

/// A method or function: its definition, parameters and body.
fn visit_function(b: &mut Builder<'_>, n: Node<'_>) {
    let Some(name) = b.field_text(n, "name") else {
        return;
    };
    let body = n.field("body");
    let sig = b.header(n, body);
    let class = b.scope;
    let idx = b.def(DefKind::Function, name, n, sig);
    b.out.defs[idx as usize].doc = doc(b, n);
    if n.kind() == "method_declaration" {
        b.out.defs[idx as usize].self_names = vec!["this".into()];
    }
    if let Some(ps) = n.field("parameters") {
        b.within(idx, |b| params(b, ps, class));
    }
    if let Some(body) = body {
        b.within(idx, |b| visit(b, body));
    }
}

/// A `const` declaration: each constant it defines, then its value.
fn visit_const(b: &mut Builder<'_>, n: Node<'_>) {
    let sig = b.first_line(n);
    b.children(n, |b, k| {
        if k.kind() == "const_element" {
            let name = k.named_children(&mut k.walk()).find(|c| c.kind() == "name");
            if let Some(nm) = name {
                let nm = b.text(nm);
                b.def(DefKind::Var, nm, k, sig.clone());
            }
            b.children(k, |b, v| {
                if v.kind() != "name" {
                    visit(b, v);
                }
            });
        }
    });
}

/// A property declaration: each property it defines, typed by its declared class.
fn visit_property(b: &mut Builder<'_>, n: Node<'_>) {
    // `private Bar $bar;`: a member, and instances hold a Bar in it.
    let class = b.scope;
    let declared = n.field("type").and_then(|t| class_of(b, t));
    let sig = b.first_line(n);
    b.children(n, |b, k| {
        if k.kind() != "property_element" {
            return;
        }
        if let Some(v) = k.field("name") {
            let nm = var_name(b, v);
            b.def(DefKind::Var, nm.clone(), k, sig.clone());
            if b.out.defs[class as usize].kind == DefKind::Class {
                b.attr_assigned(class, nm, declared.clone());
            }
        }
        if let Some(v) = k.field("default_value") {
            visit(b, v);
        }
    });
}

/// An assignment: the local or `$this` attribute it types, then both sides.
fn visit_assignment(b: &mut Builder<'_>, n: Node<'_>) {
    let (Some(l), Some(r)) = (n.field("left"), n.field("right")) else {
        return b.children(n, visit);
    };
    let made = (r.kind() == "object_creation_expression")
        .then(|| created_class(b, r))
        .flatten();
    match l.kind() {
        // `$x = new Foo()`: $x holds a Foo in this function.
        "variable_name" if b.cur_def().kind == DefKind::Function => match made {
            Some(c) => b.typed_local(var_name(b, l), c),
            None => b.local(var_name(b, l)),
        },
        // `$this->x = new Foo()` in a method: instances hold a Foo in `x`.
        "member_access_expression" => {
            let this = l
                .field("object")
                .is_some_and(|o| o.kind() == "variable_name" && b.text(o) == "$this");
            let class = b.cur_def().parent;
            let in_method = b.cur_def().kind == DefKind::Function
                && b.out.defs[class as usize].kind == DefKind::Class
                && class != 0;
            if let (true, true, Some(nm)) = (this, in_method, l.field("name")) {
                if nm.kind() == "name" {
                    b.attr_assigned(class, b.text(nm), made);
                }
            }
            visit(b, l);
        }
        _ => visit(b, l),
    }
    visit(b, r);
}

/// `$x->m()` / `$x?->m()`: a reference through its receiver, then its arguments.
fn visit_member_call(b: &mut Builder<'_>, n: Node<'_>) {
    let obj = n.field("object");
    let name = n.field("name").filter(|k| k.kind() == "name");
    match (obj.and_then(|o| receiver(b, o)), name) {
        (Some(mut p), Some(nm)) => {
            p.push(b.text(nm));
            b.call_reference(p, nm, n);
        }
        _ => {
            if let Some(o) = obj {
                visit(b, o);
            }
        }
    }
    if let Some(a) = n.field("arguments") {
        visit(b, a);
    }
}

/// `Foo::bar()` / `Foo::BAR`: a reference through its class, then its arguments.
fn visit_scoped(b: &mut Builder<'_>, n: Node<'_>) {
    // `Foo::bar()`, `self::bar()`, `parent::bar()`, `Foo::BAR`, `Foo::class`.
    let (scope, name) = if n.kind() == "scoped_call_expression" {
        (n.field("scope"), n.field("name"))
    } else {
        (n.named_child(0), n.named_child(1))
    };
    let class = scope.and_then(|s| class_ref(b, s));
    match (class, name.filter(|k| k.kind() == "name")) {
        (Some(c), Some(nm)) => {
            let member = b.text(nm);
            let mut p = vec![c];
            if member != "class" {
                p.push(member);
            }
            b.call_reference(p, nm, n);
        }
        _ => {
            if let Some(s) = scope {
                visit(b, s);
            }
        }
    }
    if let Some(a) = n.field("arguments") {
        visit(b, a);
    }
}

/// A call of a function by name: a reference to it, then its arguments.
fn visit_function_call(b: &mut Builder<'_>, n: Node<'_>) {
    match n.field("function") {
        Some(f) if matches!(f.kind(), "name" | "qualified_name") => {
            b.call_reference(vec![name_text(b, f)], f, n);
        }
        Some(f) => visit(b, f),
        None => {}
    }
    if let Some(a) = n.field("arguments") {
        visit(b, a);
    }
}

/// `new Foo(...)`: a reference to the class instantiated, then the rest.
fn visit_new(b: &mut Builder<'_>, n: Node<'_>) {
    if let Some(c) = n
        .named_child(0)
        .filter(|c| matches!(c.kind(), "name" | "qualified_name"))
    {
        b.call_reference(vec!["new".into(), name_text(b, c)], c, n);
    }
    b.children(n, |b, k| {
        if !matches!(k.kind(), "name" | "qualified_name") {
            visit(b, k);
        }
    });
}

/// `use A\B;`, `use A\B as C, D\E;`, `use function A\f;`, `use A\{B, C\D as E};`: each
/// binds its alias (or last segment) to the named class or function.
fn use_declaration(b: &mut Builder<'_>, n: Node<'_>) {
    let mut group_prefix = String::new();
    let mut clauses = vec![];
    let mut cur = n.walk();
    for k in n.named_children(&mut cur) {
        match k.kind() {
            "namespace_name" | "qualified_name" | "name" => group_prefix = name_text(b, k),
            "namespace_use_clause" => clauses.push(k),
            "namespace_use_group" => {
                let mut gc = k.walk();
                clauses.extend(
                    k.named_children(&mut gc)
                        .filter(|c| c.kind() == "namespace_use_clause"),
                );
            }
            _ => {}
        }
    }
    for c in clauses {
        let Some(path) = c
            .named_children(&mut c.walk())
            .find(|k| matches!(k.kind(), "qualified_name" | "name"))
        else {
            continue;
        };
        let mut full = name_text(b, path);
        if !group_prefix.is_empty() {
            full = format!("{}\\{}", group_prefix.trim_end_matches('\\'), full);
        }
        let full = dotted_namespace(&full);
        let alias = c.field("alias").map(|a| b.text(a)).or_else(|| {
            // Grammars without the `alias` field keep it as another `name` of the clause.
            let mut cur = c.walk();
            let others: Vec<Node<'_>> = c
                .named_children(&mut cur)
                .filter(|k| k.kind() == "name" && k.id() != path.id())
                .collect();
            (others.len() == 1).then(|| b.text(others[0]))
        });
        let (module, name) = match full.rsplit_once('.') {
            Some((m, nm)) => (m.to_string(), nm.to_string()),
            None => (String::new(), full.clone()),
        };
        let bound = alias.unwrap_or_else(|| name.clone());
        b.bind(
            bound,
            Target::Symbol {
                module,
                level: 0,
                name,
            },
            c,
        );
    }
}

/// Parameters become locals of the current (function) scope, typed when they declare a
/// class; a promoted constructor parameter (`private Foo $foo`) is also a typed property of
/// the enclosing `class`.
fn params(b: &mut Builder<'_>, ps: Node<'_>, class: u32) {
    b.children(ps, |b, p| {
        let Some(v) = p.field("name") else {
            return;
        };
        let nm = var_name(b, v);
        let declared = p.field("type").and_then(|t| class_of(b, t));
        if p.kind() == "property_promotion_parameter"
            && b.out.defs[class as usize].kind == DefKind::Class
            && class != 0
        {
            b.attr_assigned(class, nm.clone(), declared.clone());
        }
        match declared {
            Some(c) => b.typed_local(nm, c),
            None => b.local(nm),
        }
        if let Some(d) = p.field("default_value") {
            visit(b, d);
        }
    });
}

/// The class `new X(...)` instantiates, as written; `None` for `new $x` and `new class`.
fn created_class(b: &Builder<'_>, n: Node<'_>) -> Option<String> {
    let c = n.named_child(0)?;
    matches!(c.kind(), "name" | "qualified_name").then(|| name_text(b, c))
}

/// The head of a path through a `::` scope: `self`/`static`/`parent` or a class name.
fn class_ref(b: &Builder<'_>, s: Node<'_>) -> Option<String> {
    match s.kind() {
        "relative_scope" => Some(b.text(s).to_ascii_lowercase()),
        "name" | "qualified_name" => Some(name_text(b, s)),
        _ => None,
    }
}

/// The path of a method call's receiver: `$this`, `$x`, `$this->x`; `None` when dynamic.
fn receiver(b: &Builder<'_>, o: Node<'_>) -> Option<Vec<String>> {
    match o.kind() {
        "variable_name" => Some(vec![b.text(o)]),
        "member_access_expression" | "nullsafe_member_access_expression" => {
            let inner = o.field("object")?;
            let name = o.field("name").filter(|k| k.kind() == "name")?;
            if inner.kind() != "variable_name" || b.text(inner) != "$this" {
                return None;
            }
            Some(vec!["$this".into(), b.text(name)])
        }
        _ => None,
    }
}
