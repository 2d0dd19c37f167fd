//! JavaScript / TypeScript / TSX extraction: functions, classes (and TS interfaces, type
//! aliases, enums as `class`), methods, top-level `const`/`let`/`var` (arrow functions and
//! function expressions become `function`), ES imports and call/`new` references.

use super::{dotted, first_paragraph, Builder, Fields};
use crate::graph::raw::{DefKind, Target};
use tree_sitter::Node;

const MEMBER: &[&str] = &["member_expression"];
const IDENT: &[&str] = &["identifier", "this", "property_identifier"];

pub fn walk(b: &mut Builder<'_>, root: Node<'_>) {
    visit(b, root);
}

fn path(b: &Builder<'_>, n: Node<'_>) -> Option<Vec<String>> {
    dotted(b, n, MEMBER, "object", "property", IDENT)
}

/// The callee path of a call: [`path`], or through the results of calls in the chain, each
/// marked `()` (`this.qb().where(x).limit()` → `this.qb.().where.().limit`; the resolver
/// follows each callee's declared return type). A loop: a hostile chain thousands deep
/// costs no call stack.
fn call_path(b: &Builder<'_>, n: Node<'_>) -> Option<Vec<String>> {
    let mut props = vec![];
    let mut cur = n;
    loop {
        match cur.kind() {
            k if IDENT.contains(&k) => {
                props.push(b.text(cur));
                props.reverse();
                return Some(props);
            }
            "member_expression" => {
                props.push(b.text(cur.field("property")?));
                cur = cur.field("object")?;
            }
            "call_expression" => {
                props.push("()".into());
                cur = cur.field("function")?;
            }
            "new_expression" => {
                props.push("()".into());
                cur = cur.field("constructor")?;
            }
            "non_null_expression" => cur = cur.named_child(0)?,
            _ => return None,
        }
    }
}

/// The first call in the receiver chain of callee `f` (`a.b(x)` in `a.b(x).c.d`): a call of
/// its own, with its own arguments.
fn receiver_call(f: Node<'_>) -> Option<Node<'_>> {
    let mut cur = f;
    loop {
        cur = match cur.kind() {
            "member_expression" => cur.field("object")?,
            "non_null_expression" => cur.named_child(0)?,
            "call_expression" | "new_expression" if cur != f => return Some(cur),
            _ => return None,
        };
    }
}

/// Where a call is recorded: at the called name (`.save` of a chain split over lines, as
/// the compiler reports it), else at the callee expression.
fn call_site(f: Node<'_>) -> Node<'_> {
    match f.kind() {
        "member_expression" => f.field("property").unwrap_or(f),
        _ => f,
    }
}

/// Visits the decorators of a class or field (`@Entity()`, `@Column()`): calls made where
/// the declaration is.
fn decorators(b: &mut Builder<'_>, n: Node<'_>) {
    let mut c = n.walk();
    let kids: Vec<Node<'_>> = n.children_by_field_name("decorator", &mut c).collect();
    for k in kids {
        visit(b, k);
    }
}

fn string_value(b: &Builder<'_>, n: Node<'_>) -> String {
    b.text(n)
        .trim_matches(|c| c == '"' || c == '\'' || c == '`')
        .to_string()
}

/// The `/** ... */` comment right before a declaration (first paragraph).
fn leading_doc(b: &Builder<'_>, n: Node<'_>) -> String {
    let mut prev = n.prev_sibling();
    if prev.is_none() {
        if let Some(p) = n.parent().filter(|p| p.kind() == "export_statement") {
            prev = p.prev_sibling();
        }
    }
    match prev {
        Some(c) if c.kind() == "comment" => {
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

fn def_with_body(b: &mut Builder<'_>, n: Node<'_>, kind: DefKind, name: String) -> u32 {
    let body = n.field("body");
    let sig = b.header(n, body);
    let idx = b.def(kind, name, n, sig);
    b.out.defs[idx as usize].doc = leading_doc(b, n);
    idx
}

fn visit(b: &mut Builder<'_>, n: Node<'_>) {
    b.nested(n, |b| visit_node(b, n));
}

fn visit_node(b: &mut Builder<'_>, n: Node<'_>) {
    match n.kind() {
        "function_declaration"
        | "generator_function_declaration"
        | "method_definition"
        | "function_signature"
        | "method_signature"
        | "abstract_method_signature" => {
            let Some(name) = b.field_text(n, "name") else {
                return;
            };
            let class = b.scope;
            let idx = def_with_body(b, n, DefKind::Function, name);
            if n.kind().starts_with("method") || n.kind().starts_with("abstract") {
                b.out.defs[idx as usize].self_names.push("this".into());
            }
            if let Some(ps) = n.field("parameters") {
                b.within(idx, |b| params(b, ps, class));
            }
            if let Some(body) = n.field("body") {
                b.within(idx, |b| visit(b, body));
            }
        }
        "class_declaration"
        | "abstract_class_declaration"
        | "class"
        | "interface_declaration"
        | "enum_declaration"
        | "type_alias_declaration" => {
            let Some(name) = b.field_text(n, "name") else {
                b.children(n, visit);
                return;
            };
            decorators(b, n);
            let idx = def_with_body(b, n, DefKind::Class, name);
            let mut bases = vec![];
            let mut c = n.walk();
            for k in n.named_children(&mut c) {
                if k.kind() == "class_heritage" || k.kind() == "extends_type_clause" {
                    let mut c2 = k.walk();
                    for e in k.named_children(&mut c2) {
                        let v = if e.kind() == "extends_clause" {
                            e.field("value")
                        } else {
                            Some(e)
                        };
                        if let Some(p) = v.and_then(|v| path(b, v)) {
                            bases.push(p.join("."));
                            b.reference(p, e);
                        }
                    }
                }
            }
            b.out.defs[idx as usize].bases = bases;
            if let Some(body) = n.field("body") {
                b.within(idx, |b| visit(b, body));
            }
        }
        "lexical_declaration" | "variable_declaration" => {
            let top = b.cur_def().kind != DefKind::Function;
            b.children(n, |b, d| {
                if d.kind() != "variable_declarator" {
                    return visit(b, d);
                }
                let name = d.field("name").filter(|x| x.kind() == "identifier");
                let value = d.field("value");
                let is_fn = value.is_some_and(|v| {
                    matches!(
                        v.kind(),
                        "arrow_function" | "function_expression" | "function"
                    )
                });
                if let (Some(nm), true) = (name, top || is_fn) {
                    let kind = if is_fn {
                        DefKind::Function
                    } else {
                        DefKind::Var
                    };
                    let sig = if is_fn {
                        let v = value.unwrap_or(d);
                        let h = b.header(v, v.field("body"));
                        format!(
                            "{} {} = {}",
                            b.text(n).split_whitespace().next().unwrap_or("const"),
                            b.text(nm),
                            h
                        )
                    } else {
                        b.first_line(n)
                    };
                    let idx = b.def(kind, b.text(nm), n, sig);
                    b.out.defs[idx as usize].doc = leading_doc(b, n);
                    if let Some(v) = value {
                        if is_fn {
                            b.within(idx, |b| visit(b, v));
                        } else {
                            visit(b, v);
                        }
                    }
                } else {
                    if let Some(nm) = name {
                        // `const qr: QueryRunner = ...` / `const b = new Builder()`.
                        let ty = d.field("type").and_then(|t| ts_class(b, t));
                        let ty = ty.or_else(|| {
                            let v = value.filter(|v| v.kind() == "new_expression")?;
                            let c = v.field("constructor")?;
                            matches!(c.kind(), "identifier" | "member_expression")
                                .then(|| b.text(c))
                        });
                        // `const repo = conn.getRepository(Post)`: what the callee
                        // declares it returns, marked `.()` for the resolver.
                        // `const t = x instanceof Table ? x : …`: a Table.
                        let ty = ty.or_else(|| {
                            let v = value.filter(|v| v.kind() == "ternary_expression")?;
                            let c = v.field("condition")?;
                            let then = v.field("consequence")?;
                            let is_instanceof = c.kind() == "binary_expression"
                                && c.field("operator")
                                    .is_some_and(|o| b.text(o) == "instanceof");
                            let left = c.field("left")?;
                            let right = c.field("right")?;
                            (is_instanceof
                                && b.text(left) == b.text(then)
                                && matches!(right.kind(), "identifier" | "member_expression"))
                            .then(|| b.text(right))
                        });
                        // `const t = await this.getTable(n)`: the class of its
                        // declared `Promise<…>`, marked `.(await)`.
                        let ty = ty.or_else(|| {
                            let (v, mark) = match value? {
                                v if v.kind() == "await_expression" => {
                                    (v.named_child(0)?, "(await)")
                                }
                                v => (v, "()"),
                            };
                            if v.kind() != "call_expression" {
                                return None;
                            }
                            let p = call_path(b, v.field("function")?)?;
                            (p.last()? != "()").then(|| format!("{}.{mark}", p.join(".")))
                        });
                        match ty {
                            Some(t) => b.typed_local(b.text(nm), t),
                            None => b.local(b.text(nm)),
                        }
                    }
                    if let Some(v) = value {
                        visit(b, v);
                    }
                }
            });
        }
        "import_statement" => {
            let Some(src) = n.field("source") else {
                return;
            };
            let module = string_value(b, src);
            let mut c = n.walk();
            let clause = n
                .named_children(&mut c)
                .find(|k| k.kind() == "import_clause");
            let Some(clause) = clause else {
                b.bind(
                    format!("<{module}>"),
                    Target::Module { module, level: 0 },
                    n,
                );
                return;
            };
            b.children(clause, |b, k| match k.kind() {
                "identifier" => b.bind(
                    b.text(k),
                    Target::Module {
                        module: module.clone(),
                        level: 0,
                    },
                    n,
                ),
                "namespace_import" => {
                    if let Some(id) = k.named_child(0) {
                        b.bind(
                            b.text(id),
                            Target::Module {
                                module: module.clone(),
                                level: 0,
                            },
                            n,
                        );
                    }
                }
                "named_imports" => b.children(k, |b, s| {
                    if s.kind() != "import_specifier" {
                        return;
                    }
                    let Some(name) = b.field_text(s, "name") else {
                        return;
                    };
                    let alias = b.field_text(s, "alias").unwrap_or_else(|| name.clone());
                    let t = Target::Symbol {
                        module: module.clone(),
                        level: 0,
                        name,
                    };
                    b.bind(alias, t, n);
                }),
                _ => {}
            });
        }
        "export_statement" if n.field("source").is_some() => reexport(b, n),
        // A closure's parameters hold in the enclosing scope (closures are not definitions).
        "formal_parameters" => params(b, n, 0),
        "arrow_function" => {
            if let Some(p) = n.field("parameter") {
                b.local(b.text(p));
            }
            b.children(n, visit);
        }
        // `private conn: Connection;` in a class body types `this.conn`.
        "public_field_definition" => {
            decorators(b, n);
            let class = b.scope;
            if let (Some(nm), true) = (
                n.field("name")
                    .filter(|x| x.kind() == "property_identifier"),
                b.out.defs[class as usize].kind == DefKind::Class,
            ) {
                let t = n.field("type").and_then(|t| ts_class(b, t));
                b.attr_assigned(class, b.text(nm), t);
            }
            if let Some(v) = n.field("value") {
                visit(b, v);
            }
        }
        "call_expression" | "new_expression" => {
            let f = n.field("function").or_else(|| n.field("constructor"));
            if let Some(f) = f {
                match call_path(b, f).filter(|p| p.last().is_some_and(|s| s != "()")) {
                    Some(p) => {
                        b.reference(p, call_site(f));
                        if let Some(inner) = receiver_call(f) {
                            visit(b, inner);
                        }
                    }
                    None => visit(b, f),
                }
            }
            if let Some(a) = n.field("arguments") {
                visit(b, a);
            }
        }
        _ => b.children(n, visit),
    }
}

/// `export * from './x'`, `export * as ns from './x'` and `export { a, b as c } from './x'`:
/// the module re-exports names of another one, bound like imports so that a lookup through
/// an `index.ts` reaches the defining file.
fn reexport(b: &mut Builder<'_>, n: Node<'_>) {
    let Some(src) = n.field("source") else {
        return;
    };
    let module = string_value(b, src);
    let mut c = n.walk();
    let kids: Vec<Node<'_>> = n.named_children(&mut c).collect();
    let mut named = false;
    for k in kids {
        match k.kind() {
            "namespace_export" => {
                named = true;
                if let Some(id) = k.named_child(0) {
                    let t = Target::Module {
                        module: module.clone(),
                        level: 0,
                    };
                    b.bind(string_or_ident(b, id), t, n);
                }
            }
            "export_clause" => {
                named = true;
                b.children(k, |b, s| {
                    if s.kind() != "export_specifier" {
                        return;
                    }
                    let Some(name) = s.field("name").map(|x| string_or_ident(b, x)) else {
                        return;
                    };
                    let alias = s
                        .field("alias")
                        .map_or_else(|| name.clone(), |x| string_or_ident(b, x));
                    let t = Target::Symbol {
                        module: module.clone(),
                        level: 0,
                        name,
                    };
                    b.bind(alias, t, n);
                });
            }
            _ => {}
        }
    }
    if !named {
        b.bind("*".into(), Target::Star { module, level: 0 }, n);
    }
}

/// An export name: an identifier, or a string literal (`export { "a-b" as c }`).
fn string_or_ident(b: &Builder<'_>, n: Node<'_>) -> String {
    if n.kind() == "string" {
        string_value(b, n)
    } else {
        b.text(n)
    }
}

/// Parameters become locals of the current scope, typed by a TypeScript annotation that
/// names a class (`qr: QueryRunner`); a constructor's parameter properties
/// (`constructor(private conn: Connection)`) also type that attribute of `class`.
fn params(b: &mut Builder<'_>, ps: Node<'_>, class: u32) {
    b.children(ps, |b, p| {
        let (name, ty) = match p.kind() {
            "identifier" => (Some(p), None),
            "required_parameter" | "optional_parameter" => (
                p.field("pattern").filter(|x| x.kind() == "identifier"),
                p.field("type").and_then(|t| ts_class(b, t)),
            ),
            "assignment_pattern" => (p.field("left").filter(|x| x.kind() == "identifier"), None),
            _ => (None, None),
        };
        let Some(name) = name.map(|x| b.text(x)) else {
            visit(b, p);
            return;
        };
        decorators(b, p);
        let property = p
            .named_children(&mut p.walk())
            .any(|k| k.kind() == "accessibility_modifier" || k.kind() == "readonly");
        if property && b.out.defs[class as usize].kind == DefKind::Class {
            b.attr_assigned(class, name.clone(), ty.clone());
        }
        match ty {
            Some(t) => b.typed_local(name, t),
            None => b.local(name),
        }
        if let Some(v) = p.field("value") {
            visit(b, v);
        }
    });
}

/// The class a type annotation names: `: Foo`, `: Foo<T>`, `: ns.Foo`; `None` for
/// primitives, unions, arrays and the like.
fn ts_class(b: &Builder<'_>, t: Node<'_>) -> Option<String> {
    match t.kind() {
        "type_annotation" => ts_class(b, t.named_child(0)?),
        "type_identifier" | "nested_type_identifier" => Some(b.text(t)),
        "generic_type" => ts_class(b, t.field("name")?),
        _ => None,
    }
}
