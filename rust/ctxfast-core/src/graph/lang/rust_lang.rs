//! Rust extraction: `fn` items (methods in `impl`/`trait` blocks as `Type.method`, with
//! `self`/`Self` as self names), structs/enums/unions/traits/type aliases (`class`), inline
//! `mod` blocks (`def`), `const`/`static` (`var`), `use` trees and call references.

use super::{first_paragraph, Builder, Fields};
use crate::graph::raw::{DefKind, Target};
use tree_sitter::Node;

pub fn walk(b: &mut Builder<'_>, root: Node<'_>) {
    visit(b, root, None);
}

fn doc(b: &Builder<'_>, n: Node<'_>) -> String {
    let mut lines = vec![];
    let mut p = n.prev_sibling();
    while let Some(c) = p.filter(|c| c.kind() == "line_comment" || c.kind() == "attribute_item") {
        if c.kind() == "line_comment" {
            lines.push(b.text(c));
        }
        p = c.prev_sibling();
    }
    lines.reverse();
    first_paragraph(&lines.join("\n"))
}

/// `a::b::<T>::c` → `["a","b","c"]`.
fn split_path(s: &str) -> Vec<String> {
    s.split("::")
        .map(|x| x.split('<').next().unwrap_or("").trim().to_string())
        .filter(|x| !x.is_empty())
        .collect()
}

/// The callee path of a call (`a.b.c`, `m::f`, `x.f::<T>`), walked in a loop so a hostile
/// chain thousands deep costs no call stack.
fn call_path(b: &Builder<'_>, f: Node<'_>) -> Option<Vec<String>> {
    let mut fields = vec![];
    let mut f = f;
    let mut head = loop {
        match f.kind() {
            "identifier" | "self" => break vec![b.text(f)],
            "scoped_identifier" => break split_path(&b.text(f)),
            "field_expression" => {
                fields.push(b.field_text(f, "field")?);
                f = f.field("value")?;
            }
            "generic_function" => f = f.field("function")?,
            // `Type::new(p).build()`: the call's result, marked `()`, is the receiver (the
            // resolver follows the callee's declared return type).
            "call_expression" => {
                fields.push("()".into());
                f = f.field("function")?;
            }
            _ => return None,
        }
    };
    head.extend(fields.into_iter().rev());
    Some(head)
}

/// Expands a `use` tree into (bound name, full path) pairs, in source order (an explicit
/// stack: a hostile `use a::{b::{c::{…}}}` thousands deep costs no call stack).
fn use_tree(b: &Builder<'_>, n: Node<'_>, prefix: &[String], out: &mut Vec<(String, Vec<String>)>) {
    let mut stack: Vec<(Node<'_>, Vec<String>)> = vec![(n, prefix.to_vec())];
    while let Some((n, prefix)) = stack.pop() {
        let with =
            |extra: Vec<String>| -> Vec<String> { prefix.iter().cloned().chain(extra).collect() };
        match n.kind() {
            "identifier" | "scoped_identifier" | "self" | "crate" | "super" => {
                let mut full = with(split_path(&b.text(n)));
                // `use exec::{self, Job}` binds `exec` itself.
                if full.len() > 1 && full.last().is_some_and(|l| l == "self") {
                    full.pop();
                }
                if let Some(last) = full.last().cloned() {
                    out.push((last, full));
                }
            }
            "use_as_clause" => {
                if let (Some(p), Some(a)) = (n.field("path"), b.field_text(n, "alias")) {
                    out.push((a, with(split_path(&b.text(p)))));
                }
            }
            "scoped_use_list" => {
                let p = n
                    .field("path")
                    .map_or_else(|| prefix.clone(), |p| with(split_path(&b.text(p))));
                if let Some(list) = n.field("list") {
                    stack.push((list, p));
                }
            }
            "use_list" => {
                let mut c = n.walk();
                let kids: Vec<Node<'_>> = n.named_children(&mut c).collect();
                stack.extend(kids.into_iter().rev().map(|k| (k, prefix.clone())));
            }
            "use_wildcard" => {
                let p = n
                    .named_child(0)
                    .map_or_else(|| prefix.clone(), |p| with(split_path(&b.text(p))));
                out.push(("*".into(), p));
            }
            _ => {}
        }
    }
}

fn visit(b: &mut Builder<'_>, n: Node<'_>, impl_ty: Option<&str>) {
    b.nested(n, |b| visit_node(b, n, impl_ty));
}

fn visit_node(b: &mut Builder<'_>, n: Node<'_>, impl_ty: Option<&str>) {
    match n.kind() {
        "function_item" | "function_signature_item" => visit_function(b, n, impl_ty),
        "struct_item" | "enum_item" | "union_item" | "trait_item" | "type_item" => visit_type(b, n),
        "impl_item" => visit_impl(b, n),
        "mod_item" => visit_mod(b, n),
        "const_item" | "static_item" => {
            if let Some(name) = b.field_text(n, "name") {
                let sig = b.first_line(n);
                let idx = b.def(DefKind::Var, name, n, sig);
                b.out.defs[idx as usize].doc = doc(b, n);
            }
            if let Some(v) = n.field("value") {
                visit(b, v, None);
            }
        }
        "use_declaration" => visit_use(b, n),
        "let_declaration" => {
            if let Some(p) = n.field("pattern") {
                if p.kind() == "identifier" {
                    b.local(b.text(p));
                }
            }
            if let Some(v) = n.field("value") {
                visit(b, v, None);
            }
        }
        "call_expression" => visit_call(b, n),
        "declaration_list" => {
            let mut c = n.walk();
            let kids: Vec<Node<'_>> = n.named_children(&mut c).collect();
            for k in kids {
                visit(b, k, impl_ty);
            }
        }
        _ => b.children(n, |b, k| visit(b, k, None)),
    }
}

/// A function or signature (`Type.method` in an `impl` of `impl_ty`): its definition and body.
fn visit_function(b: &mut Builder<'_>, n: Node<'_>, impl_ty: Option<&str>) {
    let Some(name) = b.field_text(n, "name") else {
        return;
    };
    let body = n.field("body");
    let sig = b.header(n, body);
    let idx = b.def(DefKind::Function, name.clone(), n, sig);
    let d = &mut b.out.defs[idx as usize];
    if let Some(t) = impl_ty {
        d.local = if d.parent == 0 {
            format!("{t}.{name}")
        } else {
            d.local.clone()
        };
        d.self_names = vec!["self".into(), "Self".into()];
        d.self_class = t.to_string();
    }
    b.out.defs[idx as usize].doc = doc(b, n);
    if let Some(body) = body {
        b.within(idx, |b| visit(b, body, None));
    }
}

/// A struct, enum, union, trait or type alias: its definition (and a trait's methods).
fn visit_type(b: &mut Builder<'_>, n: Node<'_>) {
    let Some(name) = b.field_text(n, "name") else {
        return;
    };
    let body = n.field("body");
    let sig = b.header(n, body);
    let idx = b.def(DefKind::Class, name.clone(), n, sig);
    b.out.defs[idx as usize].doc = doc(b, n);
    if n.kind() == "trait_item" {
        if let Some(body) = body {
            b.within(idx, |b| visit(b, body, Some(&name)));
        }
    }
}

/// An `impl` block: its items, under the type it implements when this file defines it.
fn visit_impl(b: &mut Builder<'_>, n: Node<'_>) {
    let ty = n.field("type").map(|t| {
        let s = b.text(t);
        s.split('<').next().unwrap_or("").trim().to_string()
    });
    let owner = ty.as_deref().and_then(|t| {
        b.out
            .defs
            .iter()
            .position(|d| d.local == t && d.kind == DefKind::Class)
    });
    if let Some(body) = n.field("body") {
        match owner {
            Some(o) => b.within(o as u32, |b| visit(b, body, ty.as_deref())),
            None => visit(b, body, ty.as_deref()),
        }
    }
}

/// A `mod`: an inline module definition, or a binding of a file module.
fn visit_mod(b: &mut Builder<'_>, n: Node<'_>) {
    let Some(name) = b.field_text(n, "name") else {
        return;
    };
    let Some(body) = n.field("body") else {
        // `mod x;` declares a file module: bind it like a `use self::x`.
        let t = Target::Module {
            module: format!("self::{name}"),
            level: 0,
        };
        b.bind(name, t, n);
        return;
    };
    let sig = b.header(n, Some(body));
    let idx = b.def(DefKind::Module, name, n, sig);
    b.within(idx, |b| visit(b, body, None));
}

/// A `use` declaration: each name (or `*`) it binds.
fn visit_use(b: &mut Builder<'_>, n: Node<'_>) {
    let Some(arg) = n.field("argument") else {
        return;
    };
    let mut out = vec![];
    use_tree(b, arg, &[], &mut out);
    for (name, full) in out {
        let module = full.join("::");
        let t = if name == "*" {
            Target::Star { module, level: 0 }
        } else {
            Target::Module { module, level: 0 }
        };
        b.bind(name, t, n);
    }
}

/// A call: a reference to its callee, then the receiver's calls and the arguments.
fn visit_call(b: &mut Builder<'_>, n: Node<'_>) {
    if let Some(f) = n.field("function") {
        match call_path(b, f) {
            Some(p) => {
                b.call_reference(p, f, n);
                // The receiver's own calls (`a(x).b()` calls `a` too).
                if let Some(v) = f.field("value").filter(|v| v.kind() == "call_expression") {
                    visit(b, v, None);
                }
            }
            None => visit(b, f, None),
        }
    }
    if let Some(a) = n.field("arguments") {
        visit(b, a, None);
    }
}
