//! Go extraction: functions, methods (`Type.Method`, receiver name as the self name), type
//! specs (`class`), package-level `var`/`const`, imports and call references. Go definitions
//! are qualified by their package directory (see `RawFile::package`).

use super::{dotted, first_paragraph, Builder, Fields};
use crate::graph::raw::{DefKind, Target};
use tree_sitter::Node;

const MEMBER: &[&str] = &["selector_expression"];
const IDENT: &[&str] = &["identifier", "field_identifier", "package_identifier"];

pub fn walk(b: &mut Builder<'_>, root: Node<'_>) {
    visit(b, root);
}

/// The first paragraph of the `comment` siblings right above `n` (shared with C/C++).
pub(super) fn doc(b: &Builder<'_>, n: Node<'_>) -> String {
    let mut lines = vec![];
    let mut p = n.prev_sibling();
    while let Some(c) = p.filter(|c| c.kind() == "comment") {
        lines.push(b.text(c));
        p = c.prev_sibling();
    }
    lines.reverse();
    first_paragraph(&lines.join("\n"))
}

fn type_name(b: &Builder<'_>, t: Node<'_>) -> Option<String> {
    match t.kind() {
        "type_identifier" => Some(b.text(t)),
        // `pkg.Type`: resolved through the package's import binding.
        "qualified_type" => {
            let pkg = b.field_text(t, "package")?;
            let name = b.field_text(t, "name")?;
            Some(format!("{pkg}.{name}"))
        }
        "pointer_type" | "generic_type" => t.named_child(0).and_then(|c| type_name(b, c)),
        _ => t.field("type").and_then(|c| type_name(b, c)),
    }
}

fn visit(b: &mut Builder<'_>, n: Node<'_>) {
    b.nested(n, |b| visit_node(b, n));
}

fn visit_node(b: &mut Builder<'_>, n: Node<'_>) {
    match n.kind() {
        "function_declaration" | "method_declaration" => visit_function(b, n),
        "type_spec" | "type_alias" => visit_type(b, n),
        "func_literal" => {
            // A closure's declared parameter types hold in the enclosing function's scope
            // (closures are not definitions): `func(c *Context) { c.JSON(...) }`.
            if let Some(ps) = n.field("parameters") {
                params(b, ps);
            }
            if let Some(body) = n.field("body") {
                visit(b, body);
            }
        }
        "var_spec" | "const_spec" => visit_var(b, n),
        "short_var_declaration" => visit_short_var(b, n),
        "import_spec" => visit_import(b, n),
        "call_expression" => visit_call(b, n),
        _ => b.children(n, visit),
    }
}

/// A function or method (`Type.Method`, under its receiver type): its definition,
/// parameters and body.
fn visit_function(b: &mut Builder<'_>, n: Node<'_>) {
    let Some(name) = b.field_text(n, "name") else {
        return;
    };
    let body = n.field("body");
    let sig = b.header(n, body);
    let mut recv: Option<(String, String)> = None;
    if let Some(r) = n.field("receiver") {
        if let Some(pd) = r.named_child(0) {
            let rn = b.field_text(pd, "name").unwrap_or_default();
            if let Some(t) = pd.field("type").and_then(|t| type_name(b, t)) {
                recv = Some((rn, t));
            }
        }
    }
    let idx = b.def(DefKind::Function, name.clone(), n, sig);
    let d = &mut b.out.defs[idx as usize];
    if let Some((rn, t)) = recv {
        d.local = format!("{t}.{name}");
        if !rn.is_empty() {
            d.self_names.push(rn);
        }
        d.self_class.clone_from(&t);
        if let Some(p) = b
            .out
            .defs
            .iter()
            .position(|x| x.local == t && x.kind == DefKind::Class)
        {
            b.out.defs[idx as usize].parent = p as u32;
        }
    }
    b.out.defs[idx as usize].doc = doc(b, n);
    b.within(idx, |b| {
        if let Some(ps) = n.field("parameters") {
            params(b, ps);
        }
    });
    if let Some(body) = body {
        b.within(idx, |b| visit(b, body));
    }
}

/// A type spec or alias: its definition, with struct fields or interface methods as members.
fn visit_type(b: &mut Builder<'_>, n: Node<'_>) {
    let Some(name) = b.field_text(n, "name") else {
        return;
    };
    let sig = cap_type(b, n);
    let idx = b.def(DefKind::Class, name, n, sig);
    if let Some(parent) = n.parent() {
        b.out.defs[idx as usize].doc = doc(b, parent);
    }
    // Struct fields with a named type: `recv.field.Method()` resolves through them;
    // an interface's methods are its members, so calls through it have a target.
    match n.field("type") {
        Some(st) if st.kind() == "struct_type" => struct_fields(b, idx, st),
        Some(it) if it.kind() == "interface_type" => interface_methods(b, idx, it),
        _ => {}
    }
}

/// A `var`/`const` spec: package-level definitions or typed locals, then the value.
fn visit_var(b: &mut Builder<'_>, n: Node<'_>) {
    let top = b.scope == 0;
    let mut c = n.walk();
    let names: Vec<Node<'_>> = n.children_by_field_name("name", &mut c).collect();
    let class = n.field("type").and_then(|t| type_name(b, t));
    for k in &names {
        if top {
            let sig = b.first_line(n);
            b.def(DefKind::Var, b.text(*k), n, sig);
        } else if let Some(t) = &class {
            b.typed_local(b.text(*k), t.clone());
        } else {
            b.local(b.text(*k));
        }
    }
    if let Some(v) = n.field("value") {
        visit(b, v);
    }
}

/// `x := …`: its names as locals, typed by a composite literal, then the value.
fn visit_short_var(b: &mut Builder<'_>, n: Node<'_>) {
    // `x := Foo{...}` / `x := &Foo{...}`: x holds a Foo (one name, one value only).
    let class = match (n.field("left"), n.field("right")) {
        (Some(l), Some(r)) if l.named_child_count() == 1 && r.named_child_count() == 1 => {
            r.named_child(0).and_then(|v| literal_type(b, v))
        }
        _ => None,
    };
    if let Some(l) = n.field("left") {
        b.children(l, |b, k| match &class {
            Some(t) => b.typed_local(b.text(k), t.clone()),
            None => b.local(b.text(k)),
        });
    }
    if let Some(r) = n.field("right") {
        visit(b, r);
    }
}

/// An import spec: the package name (or alias, or `.`) it binds.
fn visit_import(b: &mut Builder<'_>, n: Node<'_>) {
    let Some(p) = n.field("path") else {
        return;
    };
    let module = b.text(p).trim_matches(|c| c == '"' || c == '`').to_string();
    let alias = b.field_text(n, "name");
    match alias.as_deref() {
        Some("_") => {}
        Some(".") => b.bind("*".into(), Target::Star { module, level: 0 }, n),
        _ => {
            let name =
                alias.unwrap_or_else(|| module.rsplit('/').next().unwrap_or(&module).to_string());
            b.bind(name, Target::Module { module, level: 0 }, n);
        }
    }
}

/// A call: a reference to its callee, then its arguments.
fn visit_call(b: &mut Builder<'_>, n: Node<'_>) {
    if let Some(f) = n.field("function") {
        match dotted(b, f, MEMBER, "operand", "field", IDENT) {
            Some(p) => b.call_reference(p, f, n),
            None => visit(b, f),
        }
    }
    if let Some(a) = n.field("arguments") {
        visit(b, a);
    }
}

/// Parameters of a function or closure become locals of the current scope, typed when
/// their declared type names one.
fn params(b: &mut Builder<'_>, ps: Node<'_>) {
    b.children(ps, |b, pd| {
        let class = pd.field("type").and_then(|t| type_name(b, t));
        let mut c = pd.walk();
        let names: Vec<Node<'_>> = pd.children_by_field_name("name", &mut c).collect();
        for k in names {
            match &class {
                Some(t) => b.typed_local(b.text(k), t.clone()),
                None => b.local(b.text(k)),
            }
        }
    });
}

/// `name T` / `name *T` / `name pkg.T` fields of a struct type, as typed attributes of the
/// struct's class definition; an embedded field is named after its type.
fn struct_fields(b: &mut Builder<'_>, class: u32, st: Node<'_>) {
    let Some(list) = st.named_child(0) else {
        return;
    };
    let mut c = list.walk();
    let fields: Vec<Node<'_>> = list
        .named_children(&mut c)
        .filter(|f| f.kind() == "field_declaration")
        .collect();
    for f in fields {
        let Some(t) = f.field("type").and_then(|t| type_name(b, t)) else {
            continue;
        };
        let mut c = f.walk();
        let names: Vec<String> = f
            .children_by_field_name("name", &mut c)
            .map(|k| b.text(k))
            .collect();
        if names.is_empty() {
            // Embedding promotes the embedded type's methods: it is a base, as in a class.
            let embedded = t.rsplit('.').next().unwrap_or(&t).to_string();
            b.attr_assigned(class, embedded, Some(t.clone()));
            b.out.defs[class as usize].bases.push(t.clone());
        }
        for nm in names {
            b.attr_assigned(class, nm, Some(t.clone()));
        }
    }
}

/// `Name(args) results` elements of an interface type, as methods of its class definition.
fn interface_methods(b: &mut Builder<'_>, class: u32, it: Node<'_>) {
    let mut c = it.walk();
    let elems: Vec<Node<'_>> = it
        .named_children(&mut c)
        .filter(|e| e.kind() == "method_elem")
        .collect();
    for e in elems {
        if let Some(name) = b.field_text(e, "name") {
            let sig = b.first_line(e);
            b.within(class, |b| {
                b.def(DefKind::Function, name, e, sig);
            });
        }
    }
}

/// The type of a composite literal, possibly behind `&`: `Foo{}`, `&Foo{}` → `Foo`.
fn literal_type(b: &Builder<'_>, v: Node<'_>) -> Option<String> {
    match v.kind() {
        "composite_literal" => v.field("type").and_then(|t| type_name(b, t)),
        "unary_expression" => v.field("operand").and_then(|o| literal_type(b, o)),
        _ => None,
    }
}

fn cap_type(b: &Builder<'_>, n: Node<'_>) -> String {
    format!("type {}", b.first_line(n))
}
