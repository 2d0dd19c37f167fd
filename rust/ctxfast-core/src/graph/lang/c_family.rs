//! C and C++ extraction: function definitions (C++ methods as `Class.method`, in the class
//! body or out of it as `Class::method`, with `this` as the self name), struct/union/enum/
//! class definitions and typedefs (`class`), file-scope variables (`var`), function-like
//! macros (`function`, so calls to them resolve through the header that defines them),
//! `#include`s (star bindings: the resolver maps them to project files and makes them
//! `import` edges) and call references. Prototypes are not definitions: a call to a function
//! declared in a header resolves to its one definition in the project (see the resolver).
//!
//! Namespaces add no scope of their own (their members are qualified by the file's module);
//! `static` linkage is read back from the signature by the resolver.
//!
//! The walk is iterative (an explicit stack of `(node, scope)`), so deeply nested input —
//! generated code, long `else if` chains — cannot overflow the thread's stack.

use super::{Builder, Fields};
use crate::graph::raw::{DefKind, Target};
use tree_sitter::Node;

/// Declarator wrappers between a declaration and the declared name.
const WRAPPERS: &[&str] = &[
    "pointer_declarator",
    "reference_declarator",
    "array_declarator",
    "parenthesized_declarator",
    "attributed_declarator",
    "init_declarator",
    "function_declarator",
];

/// Type bodies that open a class scope.
const TYPES: &[&str] = &[
    "struct_specifier",
    "union_specifier",
    "enum_specifier",
    "class_specifier",
];

pub fn walk(b: &mut Builder<'_>, root: Node<'_>) {
    let mut stack: Vec<(Node<'_>, u32)> = vec![(root, 0)];
    while let Some((n, scope)) = stack.pop() {
        b.scope = scope;
        visit(b, n, &mut stack);
    }
    b.scope = 0;
}

/// Schedules `n`'s named children (in source order) under `scope`.
fn push_children<'t>(stack: &mut Vec<(Node<'t>, u32)>, n: Node<'t>, scope: u32) {
    let mut cur = n.walk();
    let kids: Vec<Node<'t>> = n.named_children(&mut cur).collect();
    stack.extend(kids.into_iter().rev().map(|k| (k, scope)));
}

/// The comment block above `n`, as Go reads its own (`//` and `/* */` alike).
fn doc(b: &Builder<'_>, n: Node<'_>) -> String {
    let text = super::go::doc(b, n).replace("/*", "").replace("*/", "");
    super::collapse(&text)
}

/// The declared name of a declarator, as path segments (`A::B::f` → `["A","B","f"]`), and
/// whether a function declarator was on the way (a prototype or a function definition).
fn declared(b: &Builder<'_>, d: Node<'_>) -> Option<(Vec<String>, bool)> {
    let mut d = d;
    let mut function = false;
    for _ in 0..64 {
        let k = d.kind();
        if WRAPPERS.contains(&k) {
            function |= k == "function_declarator";
            d = d.field("declarator").or_else(|| d.named_child(0))?;
            continue;
        }
        return match k {
            "identifier" | "field_identifier" | "type_identifier" | "destructor_name"
            | "operator_name" | "primitive_type" => Some((vec![b.text(d)], function)),
            "qualified_identifier" => Some((qualified(b, d)?, function)),
            "template_function" => Some((vec![b.field_text(d, "name")?], function)),
            _ => None,
        };
    }
    None
}

/// `a::b::c` (a `qualified_identifier`, possibly nested) → `["a","b","c"]`; template
/// arguments are dropped.
fn qualified(b: &Builder<'_>, n: Node<'_>) -> Option<Vec<String>> {
    let mut out = vec![];
    let mut n = n;
    for _ in 0..64 {
        if let Some(s) = n.field("scope") {
            let t = b.text(s);
            out.push(t.split('<').next().unwrap_or("").trim().to_string());
        }
        let name = n.field("name")?;
        if name.kind() == "qualified_identifier" {
            n = name;
            continue;
        }
        let t = match name.kind() {
            "template_function" | "template_type" => b.field_text(name, "name")?,
            _ => b.text(name),
        };
        out.push(t);
        return (!out.iter().any(String::is_empty)).then_some(out);
    }
    None
}

/// The type a declaration names, when it is a plain (possibly qualified) type name. A
/// qualified name keeps its last segment: namespaces add no scope (`geo::Square` is the
/// class `Square` of whichever file defines it).
fn type_name(b: &Builder<'_>, t: Option<Node<'_>>) -> Option<String> {
    let t = t?;
    match t.kind() {
        "type_identifier" => Some(b.text(t)),
        "qualified_identifier" => qualified(b, t).and_then(|p| p.last().cloned()),
        "template_type" => b.field_text(t, "name"),
        _ => None,
    }
}

/// The callee of a call as a dotted path, or `None` for anything dynamic.
fn callee(b: &Builder<'_>, f: Node<'_>) -> Option<Vec<String>> {
    match f.kind() {
        "identifier" => Some(vec![b.text(f)]),
        "qualified_identifier" => qualified(b, f),
        "template_function" => Some(vec![b.field_text(f, "name")?]),
        "field_expression" => {
            let obj = f.field("argument")?;
            let field = b.field_text(f, "field")?;
            match obj.kind() {
                "identifier" | "this" => Some(vec![b.text(obj), field]),
                _ => None,
            }
        }
        _ => None,
    }
}

fn is_class_scope(b: &Builder<'_>) -> bool {
    b.scope != 0 && b.cur_def().kind == DefKind::Class
}

fn visit<'t>(b: &mut Builder<'_>, n: Node<'t>, stack: &mut Vec<(Node<'t>, u32)>) {
    let scope = b.scope;
    let kind = n.kind();
    match kind {
        "function_definition" => visit_function(b, n, stack, scope),
        k if TYPES.contains(&k) => visit_type(b, n, stack, scope),
        "type_definition" => visit_typedef(b, n, stack, scope),
        "declaration" => visit_declaration(b, n, stack, scope),
        "preproc_function_def" => {
            if let Some(name) = b.field_text(n, "name") {
                let sig = b.first_line(n);
                b.def(DefKind::Function, name, n, sig);
            }
        }
        "preproc_include" => visit_include(b, n),
        "call_expression" => visit_call(b, n, stack, scope),
        "comment" | "string_literal" | "raw_string_literal" | "char_literal" | "number_literal"
        | "preproc_def" => {}
        _ => push_children(stack, n, scope),
    }
}

/// A function definition (a C++ method, in or out of its class): its definition, parameters
/// and body.
fn visit_function<'t>(
    b: &mut Builder<'_>,
    n: Node<'t>,
    stack: &mut Vec<(Node<'t>, u32)>,
    scope: u32,
) {
    let Some((segs, _)) = n.field("declarator").and_then(|d| declared(b, d)) else {
        push_children(stack, n, scope);
        return;
    };
    let body = n.field("body");
    // A body holding a definition no body can hold is tree-sitter's recovery from a header
    // it could not close (see `misplaced`): the function ends before that definition, and
    // what follows belongs to the enclosing scope.
    let split = body.and_then(|body| misplaced(body).map(|path| (body, path)));
    let mut end_row = None;
    if let Some((body, path)) = &split {
        end_row = last_statement_end(*body, path);
        if end_row.is_none() {
            // Nothing of its own before the first misplaced definition: not a function at
            // all (`MACRO namespace x {`, the first of two headers written in `#if`/`#else`
            // branches). Its body is read in the enclosing scope.
            stack.push((*body, scope));
            return;
        }
    }
    let sig = b.header(n, body);
    let in_class = is_class_scope(b);
    let name = segs.last().cloned().unwrap_or_default();
    let idx = b.def(DefKind::Function, name, n, sig);
    if segs.len() > 1 {
        // `void A::f() {...}` outside the class body.
        let owner = segs[..segs.len() - 1].join(".");
        let pos = b
            .out
            .defs
            .iter()
            .position(|x| x.kind == DefKind::Class && x.local == owner);
        let d = &mut b.out.defs[idx as usize];
        d.local = segs.join(".");
        d.self_class = owner;
        d.self_names.push("this".into());
        if let Some(p) = pos {
            b.out.defs[idx as usize].parent = p as u32;
        }
    } else if in_class {
        b.out.defs[idx as usize].self_names.push("this".into());
    }
    let docs = doc(b, n);
    b.out.defs[idx as usize].doc = docs;
    if let Some(params) = n.field("declarator").and_then(|d| find_params(d)) {
        b.scope = idx;
        declare_locals(b, params, "parameter_declaration");
        b.scope = scope;
    }
    if let Some(row) = end_row {
        b.out.defs[idx as usize].end_line = row as u32 + 1;
    }
    match (split, body) {
        (Some((body, path)), _) => schedule_split(stack, body, &path, idx, scope),
        (None, Some(body)) => stack.push((body, idx)),
        (None, None) => {}
    }
}

/// Definitions that C and C++ allow only outside a function body. Finding one inside a body
/// means tree-sitter misread the function's extent: typically two headers in the branches
/// of an `#if`/`#else` (`#ifdef X void f() { #else void f() try { #endif`) or one brace
/// opened in each branch (`#if A if (a) { #else if (b) { #endif`), so one `{` is never
/// closed and the function swallows the rest of the file; or a macro in front of a
/// namespace (`MACRO namespace x {`), read as a function named `namespace`. A definition
/// inside a class body (a local class's methods) is not misplaced; GNU C's nested
/// functions are the one legitimate case read as misplaced, and cost only a shorter span.
const MISPLACED: &[&str] = &[
    "function_definition",
    "template_declaration",
    "namespace_definition",
    "linkage_specification",
];

/// True when the function definition `n` has a return type and a function declarator parsed
/// without error: what a definition at file scope has, and what a statement misread as one
/// lacks (`FOREACH(x, v) { ... }` has no type; `MACRO\n if (c) { ... }` has an error in its
/// declarator; `static T x { #if ... }`, a variable's braced initialiser, declares no
/// function), so such a statement in a well-formed body does not cut it.
fn whole(n: Node<'_>) -> bool {
    n.field("type").is_some()
        && n.field("declarator")
            .is_some_and(|d| !d.has_error() && find_params(d).is_some())
}

/// True for the nodes that hold statements (blocks, control flow, preprocessor branches,
/// error recovery), the only places a misplaced definition can appear in a body; searching
/// only them leaves expressions and declarations unvisited.
fn holds_statements(kind: &str) -> bool {
    kind.ends_with("_statement")
        || matches!(
            kind,
            "preproc_if"
                | "preproc_ifdef"
                | "preproc_else"
                | "preproc_elif"
                | "preproc_elifdef"
                | "else_clause"
                | "catch_clause"
                | "for_range_loop"
                | "ERROR"
        )
}

/// The path from `body` down to the first (in source order) definition of a [`MISPLACED`]
/// kind among its statements: the nodes from `body`'s child down to that definition, or
/// `None` when the body is well formed.
fn misplaced(body: Node<'_>) -> Option<Vec<Node<'_>>> {
    let mut path = vec![];
    let mut cur = body.walk();
    if !cur.goto_first_child() {
        return None;
    }
    loop {
        let n = cur.node();
        if n.is_named() {
            if MISPLACED.contains(&n.kind()) && (n.kind() != "function_definition" || whole(n)) {
                path.push(n);
                return Some(path);
            }
            if holds_statements(n.kind()) && cur.goto_first_child() {
                path.push(n);
                continue;
            }
        }
        while !cur.goto_next_sibling() {
            if !cur.goto_parent() || cur.node() == body {
                return None;
            }
            path.pop();
        }
    }
}

/// Named children of `n` that start before `before` (all of them when `None`).
fn kids_before<'t>(n: Node<'t>, before: Option<Node<'t>>) -> Vec<Node<'t>> {
    let mut cur = n.walk();
    let end = before.map_or(usize::MAX, |b| b.start_byte());
    n.named_children(&mut cur)
        .filter(|k| k.start_byte() < end)
        .collect()
}

/// The last row of the statements of `body` before the misplaced definition at the end of
/// `path` (comments and preprocessor lines do not count), or `None` when there are none.
fn last_statement_end(body: Node<'_>, path: &[Node<'_>]) -> Option<usize> {
    let mut parent = body;
    let mut last = None;
    for &step in path {
        for k in kids_before(parent, Some(step)) {
            if k.kind() != "comment" && !k.kind().starts_with("preproc") && !k.is_error() {
                last = Some(k.end_position().row);
            }
        }
        parent = step;
    }
    last
}

/// Schedules a misread body: what comes before the first misplaced definition (on every
/// level of `path`) under the function `idx`, the definition and everything after it under
/// the enclosing `scope`, all in source order.
fn schedule_split<'t>(
    stack: &mut Vec<(Node<'t>, u32)>,
    body: Node<'t>,
    path: &[Node<'t>],
    idx: u32,
    scope: u32,
) {
    let mut order: Vec<(Node<'t>, u32)> = vec![];
    let mut after: Vec<Vec<Node<'t>>> = vec![];
    let mut parent = body;
    for (i, &step) in path.iter().enumerate() {
        let mut cur = parent.walk();
        let kids: Vec<Node<'t>> = parent.named_children(&mut cur).collect();
        let at = kids.iter().position(|k| *k == step).unwrap_or(kids.len());
        order.extend(kids[..at].iter().map(|k| (*k, idx)));
        if i + 1 == path.len() {
            // The misplaced definition itself and its following siblings.
            order.extend(kids[at..].iter().map(|k| (*k, scope)));
        } else {
            after.push(kids[at + 1..].to_vec());
        }
        parent = step;
    }
    for rest in after.into_iter().rev() {
        order.extend(rest.into_iter().map(|k| (k, scope)));
    }
    stack.extend(order.into_iter().rev());
}

/// A named struct, union, enum or class with a body: its definition, bases and members.
fn visit_type<'t>(b: &mut Builder<'_>, n: Node<'t>, stack: &mut Vec<(Node<'t>, u32)>, scope: u32) {
    let body = n.field("body");
    match (b.field_text(n, "name"), body) {
        (Some(name), Some(body)) => {
            let sig = b.header(n, Some(body));
            let idx = b.def(DefKind::Class, type_base(&name), n, sig);
            b.out.defs[idx as usize].doc = doc(b, n);
            b.out.defs[idx as usize].bases = bases(b, n);
            if n.kind() != "enum_specifier" {
                push_children(stack, body, idx);
            }
        }
        _ => push_children(stack, n, scope),
    }
}

/// A `typedef`: each name it defines, owning the members of an anonymous body.
fn visit_typedef<'t>(
    b: &mut Builder<'_>,
    n: Node<'t>,
    stack: &mut Vec<(Node<'t>, u32)>,
    scope: u32,
) {
    let ty = n.field("type");
    let mut cur = n.walk();
    let names: Vec<String> = n
        .children_by_field_name("declarator", &mut cur)
        .filter_map(|d| declared(b, d))
        .filter(|(_, function)| !function)
        .filter_map(|(segs, _)| segs.last().cloned())
        .collect();
    let sig = b.first_line(n);
    let anonymous_body = ty.filter(|t| {
        TYPES.contains(&t.kind()) && t.field("name").is_none() && t.field("body").is_some()
    });
    let mut first = None;
    for name in names {
        let idx = b.def(DefKind::Class, name, n, sig.clone());
        b.out.defs[idx as usize].doc = doc(b, n);
        first.get_or_insert(idx);
    }
    match (anonymous_body, first) {
        // `typedef struct { ... } Foo;`: the members belong to Foo.
        (Some(t), Some(idx)) => {
            if t.kind() != "enum_specifier" {
                if let Some(body) = t.field("body") {
                    push_children(stack, body, idx);
                }
            }
        }
        _ => {
            if let Some(t) = ty {
                stack.push((t, scope));
            }
        }
    }
}

/// A declaration: its file-scope variables or typed locals; its type body and initial values
/// are scheduled.
fn visit_declaration<'t>(
    b: &mut Builder<'_>,
    n: Node<'t>,
    stack: &mut Vec<(Node<'t>, u32)>,
    scope: u32,
) {
    let ty = n.field("type");
    if let Some(t) = ty.filter(|t| TYPES.contains(&t.kind())) {
        stack.push((t, scope));
    }
    let class = type_name(b, ty);
    let top = scope == 0 || is_class_scope(b);
    let mut cur = n.walk();
    let decls: Vec<Node<'t>> = n.children_by_field_name("declarator", &mut cur).collect();
    for d in decls {
        if let Some((segs, function)) = declared(b, d) {
            let name = segs.last().cloned().unwrap_or_default();
            if function {
                // A prototype declares; the definition is elsewhere.
            } else if top && segs.len() == 1 {
                let sig = b.first_line(n);
                b.def(DefKind::Var, name, n, sig);
            } else if !top {
                match &class {
                    Some(c) => b.typed_local(name, c.clone()),
                    None => b.local(name),
                }
            }
        }
        if d.kind() == "init_declarator" {
            if let Some(v) = d.field("value") {
                stack.push((v, scope));
            }
        }
    }
}

/// An `#include`: a star binding of the included file.
fn visit_include(b: &mut Builder<'_>, n: Node<'_>) {
    let Some(p) = n.field("path") else {
        return;
    };
    let text = b.text(p);
    // `"x.h"` searches next to the includer first (level 1); `<x.h>` does not.
    let (module, level) = match p.kind() {
        "system_lib_string" => (text.trim_matches(['<', '>']).to_string(), 0),
        _ => (text.trim_matches('"').to_string(), 1),
    };
    if !module.is_empty() {
        b.bind("*".into(), Target::Star { module, level }, n);
    }
}

/// A call: a reference to its callee, then its arguments.
fn visit_call<'t>(b: &mut Builder<'_>, n: Node<'t>, stack: &mut Vec<(Node<'t>, u32)>, scope: u32) {
    if let Some(f) = n.field("function") {
        match callee(b, f) {
            Some(p) => b.call_reference(p, f, n),
            None => stack.push((f, scope)),
        }
    }
    if let Some(a) = n.field("arguments") {
        stack.push((a, scope));
    }
}

/// A type's name without template arguments.
fn type_base(name: &str) -> String {
    name.split('<').next().unwrap_or(name).trim().to_string()
}

/// C++ base classes (`class A : public B, C`), dotted.
fn bases(b: &Builder<'_>, n: Node<'_>) -> Vec<String> {
    let mut cur = n.walk();
    let Some(clause) = n
        .named_children(&mut cur)
        .find(|c| c.kind() == "base_class_clause")
    else {
        return vec![];
    };
    let mut cur = clause.walk();
    let out = clause
        .named_children(&mut cur)
        .filter_map(|c| type_name(b, Some(c)))
        .collect();
    out
}

/// The parameter list of a function declarator (through pointer/reference wrappers).
fn find_params(d: Node<'_>) -> Option<Node<'_>> {
    let mut d = d;
    for _ in 0..64 {
        if d.kind() == "function_declarator" {
            return d.field("parameters");
        }
        d = d.field("declarator").or_else(|| d.named_child(0))?;
    }
    None
}

/// Declares every name of `list`'s `item_kind` children as a local of the current scope.
fn declare_locals(b: &mut Builder<'_>, list: Node<'_>, item_kind: &str) {
    let mut cur = list.walk();
    let items: Vec<Node<'_>> = list
        .named_children(&mut cur)
        .filter(|c| c.kind() == item_kind)
        .collect();
    for p in items {
        let class = type_name(b, p.field("type"));
        let Some((segs, _)) = p.field("declarator").and_then(|d| declared(b, d)) else {
            continue;
        };
        let name = segs.last().cloned().unwrap_or_default();
        match class {
            Some(c) => b.typed_local(name, c),
            None => b.local(name),
        }
    }
}
