//! Java extraction: classes/interfaces/enums/records (`class`), methods and constructors
//! (`function`), fields (`var`), `import` declarations and method-invocation / `new`
//! references. Definitions are qualified by the `package` clause (see `RawFile::package`).

use super::{dotted, first_paragraph, Builder, Fields};
use crate::graph::raw::{DefKind, Target, ARG_TYPES_OPEN};
use tree_sitter::Node;

const MEMBER: &[&str] = &["field_access"];
const IDENT: &[&str] = &["identifier", "this", "super", "type_identifier"];

pub fn walk(b: &mut Builder<'_>, root: Node<'_>) {
    visit(b, root);
}

fn doc(b: &Builder<'_>, n: Node<'_>) -> String {
    match n.prev_sibling() {
        Some(c) if c.kind() == "block_comment" => {
            let t = b.text(c);
            first_paragraph(
                t.trim_start_matches("/**")
                    .trim_start_matches("/*")
                    .trim_end_matches("*/"),
            )
        }
        _ => String::new(),
    }
}

fn visit(b: &mut Builder<'_>, n: Node<'_>) {
    b.nested(n, |b| visit_node(b, n));
}

fn visit_node(b: &mut Builder<'_>, n: Node<'_>) {
    match n.kind() {
        "package_declaration" => {
            if let Some(p) = n.named_child(0) {
                b.out.package = b.text(p);
            }
        }
        "import_declaration" => visit_import(b, n),
        "class_declaration"
        | "interface_declaration"
        | "enum_declaration"
        | "record_declaration"
        | "annotation_type_declaration" => visit_class(b, n),
        "method_declaration" | "constructor_declaration" => visit_method(b, n),
        "field_declaration" => visit_field(b, n),
        "local_variable_declaration" => visit_local(b, n),
        // `for (Comment c : comments)`: the loop variable holds its declared class.
        "enhanced_for_statement" => visit_enhanced_for(b, n),
        "method_invocation" => visit_invocation(b, n),
        "object_creation_expression" => visit_new(b, n),
        _ => b.children(n, visit),
    }
}

/// An `import` (single-type or on demand): the name or `*` it binds.
fn visit_import(b: &mut Builder<'_>, n: Node<'_>) {
    let text = b.text(n);
    let star = text.contains('*');
    let Some(p) = n
        .named_children(&mut n.walk())
        .find(|k| k.kind() == "scoped_identifier" || k.kind() == "identifier")
    else {
        return;
    };
    let full = b.text(p);
    if star {
        b.bind(
            "*".into(),
            Target::Star {
                module: full,
                level: 0,
            },
            n,
        );
    } else if let Some((m, name)) = full.rsplit_once('.') {
        let t = Target::Symbol {
            module: m.to_string(),
            level: 0,
            name: name.to_string(),
        };
        b.bind(name.to_string(), t, n);
    }
}

/// A class, interface, enum, record or annotation type: its definition, bases and body.
fn visit_class(b: &mut Builder<'_>, n: Node<'_>) {
    let Some(name) = b.field_text(n, "name") else {
        return;
    };
    let body = n.field("body");
    let sig = b.header(n, body);
    let mut bases = vec![];
    for f in ["superclass", "interfaces"] {
        if let Some(s) = n.field(f) {
            collect_types(b, s, &mut bases);
        }
    }
    let idx = b.def(DefKind::Class, name, n, sig);
    b.out.defs[idx as usize].doc = doc(b, n);
    // `extends`/`implements` are recorded as bases (member lookup), never as calls.
    b.out.defs[idx as usize].bases = bases;
    if let Some(body) = body {
        b.within(idx, |b| visit(b, body));
    }
}

/// A method or constructor: its definition, typed parameters and body.
fn visit_method(b: &mut Builder<'_>, n: Node<'_>) {
    let Some(name) = b.field_text(n, "name") else {
        return;
    };
    let body = n.field("body");
    let sig = b.header(n, body);
    let idx = b.def(DefKind::Function, name, n, sig);
    b.out.defs[idx as usize].doc = doc(b, n);
    b.out.defs[idx as usize].self_names.push("this".into());
    b.within(idx, |b| {
        if let Some(ps) = n.field("parameters") {
            b.children(ps, |b, p| {
                if let Some(nm) = b.field_text(p, "name") {
                    declare(b, &nm, p.field("type"));
                    match p.field("type").and_then(|t| class_of(b, t)) {
                        Some(c) => b.typed_local(nm, c),
                        None => b.local(nm),
                    }
                }
            });
        }
    });
    if let Some(body) = body {
        b.within(idx, |b| visit(b, body));
    }
}

/// A field declaration: each field it defines, typed by its declared class, and its value.
fn visit_field(b: &mut Builder<'_>, n: Node<'_>) {
    // `Foo x;` in a class body: instances hold a Foo in `x` (`x.m()`, `this.x.m()`).
    let class = b.scope;
    let declared = n.field("type").and_then(|t| class_of(b, t));
    b.children(n, |b, k| {
        if k.kind() == "variable_declarator" {
            if let Some(nm) = b.field_text(k, "name") {
                let sig = b.first_line(n);
                b.def(DefKind::Var, nm.clone(), n, sig);
                if b.out.defs[class as usize].kind == DefKind::Class {
                    b.attr_assigned(class, nm, declared.clone());
                }
            }
            if let Some(v) = k.field("value") {
                visit(b, v);
            }
        }
    });
}

/// A local variable declaration: each local it binds, typed where the class shows.
fn visit_local(b: &mut Builder<'_>, n: Node<'_>) {
    // `Foo x = ...` (or `var x = new Foo()`): x holds a Foo.
    let declared = n.field("type").and_then(|t| class_of(b, t));
    b.children(n, |b, k| {
        if k.kind() == "variable_declarator" {
            if let Some(nm) = b.field_text(k, "name") {
                declare(b, &nm, n.field("type"));
                let class = declared.clone().or_else(|| {
                    let v = k.field("value")?;
                    (v.kind() == "object_creation_expression")
                        .then(|| class_of(b, v.field("type")?))
                        .flatten()
                });
                match class {
                    Some(c) => b.typed_local(nm, c),
                    None => b.local(nm),
                }
            }
        }
        visit(b, k);
    });
}

/// An enhanced `for`: its loop variable as a typed local, then the value and body.
fn visit_enhanced_for(b: &mut Builder<'_>, n: Node<'_>) {
    if let Some(nm) = b.field_text(n, "name") {
        declare(b, &nm, n.field("type"));
        match n.field("type").and_then(|t| class_of(b, t)) {
            Some(c) => b.typed_local(nm, c),
            None => b.local(nm),
        }
    }
    for f in ["value", "body"] {
        if let Some(k) = n.field(f) {
            visit(b, k);
        }
    }
}

/// A method invocation: a reference to the method, then chained receivers and arguments.
fn visit_invocation(b: &mut Builder<'_>, n: Node<'_>) {
    let name = n.field("name");
    let obj = n.field("object");
    let p = match (obj, name) {
        (None, Some(nm)) => Some(vec![b.text(nm)]),
        (Some(o), Some(nm)) => dotted(b, o, MEMBER, "object", "field", IDENT)
            .or_else(|| returned(b, o))
            .map(|mut p| {
                p.push(b.text(nm));
                p
            }),
        _ => None,
    };
    match (p, name) {
        (Some(mut p), Some(nm)) => {
            if let Some(t) = arg_types(b, n) {
                p.push(t);
            }
            b.reference(p, nm);
            // A chained receiver (`a.b().c()`, `new A().c()`) is a call of its own.
            if let Some(o) = obj.filter(|o| returned(b, *o).is_some()) {
                visit(b, o);
            }
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

/// `new Foo(...)`: a reference to the class instantiated, then the rest.
fn visit_new(b: &mut Builder<'_>, n: Node<'_>) {
    if let Some(t) = n.field("type") {
        let name = b.text(t);
        let name = name.split('<').next().unwrap_or("").trim().to_string();
        let mut p: Vec<String> = name.split('.').map(str::to_string).collect();
        if let Some(t) = arg_types(b, n) {
            p.push(t);
        }
        b.reference(p, t);
    }
    b.children(n, |b, k| {
        if k.kind() != "type_identifier" && k.kind() != "generic_type" {
            visit(b, k);
        }
    });
}

/// The path of a call whose result is the receiver of another, ending in `()` (the resolver
/// follows the callee's declared return type): `a.b()` → `a.b.()`, `new A()` → `A.()`.
fn returned(b: &Builder<'_>, o: Node<'_>) -> Option<Vec<String>> {
    let mut p = match o.kind() {
        "method_invocation" => {
            let name = b.text(o.field("name")?);
            let mut p = match o.field("object") {
                None => vec![],
                Some(inner) => dotted(b, inner, MEMBER, "object", "field", IDENT)
                    .or_else(|| returned(b, inner))?,
            };
            p.push(name);
            p
        }
        "object_creation_expression" => {
            let t = b.text(o.field("type")?);
            let t = t.split('<').next().unwrap_or("").trim().to_string();
            t.split('.').map(str::to_string).collect()
        }
        "parenthesized_expression" => return returned(b, o.named_child(0)?),
        _ => return None,
    };
    p.push("()".into());
    Some(p)
}

/// The class a declared type names: `Foo`, `pkg.Foo`, `Foo<T>` → `Foo`; `None` for `var`,
/// primitives and arrays.
fn class_of(b: &Builder<'_>, t: Node<'_>) -> Option<String> {
    let mut t = t;
    loop {
        match t.kind() {
            "type_identifier" | "scoped_type_identifier" => {
                let name = b.text(t);
                return (name != "var").then_some(name);
            }
            "generic_type" => t = t.named_child(0)?,
            _ => return None,
        }
    }
}

/// Every `type_identifier` under `n`, in source order (an explicit stack: generics nested
/// thousands deep cost no call stack).
fn collect_types(b: &Builder<'_>, n: Node<'_>, out: &mut Vec<String>) {
    let mut stack = vec![n];
    while let Some(n) = stack.pop() {
        if n.kind() == "type_identifier" {
            out.push(b.text(n));
            continue;
        }
        let mut c = n.walk();
        let kids: Vec<Node<'_>> = n.named_children(&mut c).collect();
        stack.extend(kids.into_iter().rev());
    }
}

/// Remembers the declared type of parameter or local `name` in the current scope.
fn declare(b: &mut Builder<'_>, name: &str, ty: Option<Node<'_>>) {
    if let Some(t) = ty.map(|t| type_name(&b.text(t))) {
        b.declared.insert((b.scope, name.to_string()), t);
    }
}

/// A written type without generics or package: `java.util.List<Node>` → `List`,
/// `final char[]` → `char[]`.
pub fn type_name(t: &str) -> String {
    let mut out = String::new();
    let mut depth = 0;
    for c in t.chars() {
        match c {
            '<' => depth += 1,
            '>' => depth -= 1,
            c if depth == 0 && !c.is_whitespace() => out.push(c),
            _ => {}
        }
    }
    let out = out
        .strip_prefix("final")
        .filter(|r| !r.is_empty())
        .unwrap_or(&out);
    out.rsplit('.').next().unwrap_or(out).to_string()
}

/// The argument-type segment of call `n` (see `RawRef::path`), `None` without arguments or
/// when no argument's type shows.
fn arg_types(b: &Builder<'_>, n: Node<'_>) -> Option<String> {
    let args = n.field("arguments")?;
    let mut c = args.walk();
    let types: Vec<String> = args
        .named_children(&mut c)
        .filter(|k| !k.kind().contains("comment"))
        .map(|a| arg_type(b, a).unwrap_or_else(|| "?".into()))
        .collect();
    types
        .iter()
        .any(|t| t != "?")
        .then(|| format!("{ARG_TYPES_OPEN}{})", types.join(",")))
}

/// The static type an argument's syntax shows: a literal's, a `new`'s or a cast's class, the
/// enclosing class for `this`, a parameter's or local's declared type.
fn arg_type(b: &Builder<'_>, a: Node<'_>) -> Option<String> {
    Some(match a.kind() {
        "string_literal" => "String".into(),
        "character_literal" => "char".into(),
        "decimal_integer_literal"
        | "hex_integer_literal"
        | "octal_integer_literal"
        | "binary_integer_literal" => "int".into(),
        "decimal_floating_point_literal" | "hex_floating_point_literal" => "double".into(),
        "true" | "false" => "boolean".into(),
        "object_creation_expression" | "cast_expression" => type_name(&b.text(a.field("type")?)),
        "parenthesized_expression" => return arg_type(b, a.named_child(0)?),
        "this" => {
            let mut p = a.parent();
            while let Some(n) = p {
                if matches!(
                    n.kind(),
                    "class_declaration" | "enum_declaration" | "record_declaration"
                ) {
                    return b.field_text(n, "name");
                }
                p = n.parent();
            }
            return None;
        }
        "identifier" => {
            let name = b.text(a);
            let mut s = b.scope;
            loop {
                if let Some(t) = b.declared.get(&(s, name.clone())) {
                    return Some(t.clone());
                }
                let d = &b.out.defs[s as usize];
                if s == 0 || d.kind != DefKind::Function {
                    return None;
                }
                s = d.parent;
            }
        }
        _ => return None,
    })
}
