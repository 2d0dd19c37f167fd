//! JavaScript / TypeScript / TSX extraction: functions, classes (and TS interfaces, type
//! aliases, enums as `class`), methods, top-level `const`/`let`/`var` (arrow functions and
//! function expressions become `function`), class fields holding a function
//! (`onClick = () => {}`), functions assigned to a member
//! (`res.send = function send() {}`, `Foo.prototype.bar = function () {}`) or given as an
//! object's property (`{ handle: function () {} }`), ES imports, Node's `require` and
//! call/`new` references.

use super::{dotted, first_paragraph, Builder, Fields};
use crate::graph::raw::DefKind;
use tree_sitter::Node;

mod imports;

const MEMBER: &[&str] = &["member_expression"];
/// The heads of a dotted path. `super` heads a member call (`super.render()`) that reaches
/// the method a base class defines; a bare `super(…)` reaches nothing.
const IDENT: &[&str] = &["identifier", "this", "super", "property_identifier"];

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
        | "abstract_method_signature" => visit_function(b, n),
        "class_declaration"
        | "abstract_class_declaration"
        | "class"
        | "interface_declaration"
        | "enum_declaration"
        | "type_alias_declaration" => visit_class(b, n),
        "lexical_declaration" | "variable_declaration" => visit_declaration(b, n),
        "assignment_expression" => visit_assignment(b, n),
        "pair" => visit_pair(b, n),
        "import_statement" => imports::import(b, n),
        "export_statement" if n.field("source").is_some() => imports::reexport(b, n),
        "export_statement" => {
            imports::default_export(b, n);
            b.children(n, visit);
        }
        // A closure's parameters hold in the enclosing scope (closures are not definitions).
        "formal_parameters" => params(b, n, 0),
        "arrow_function" => {
            if let Some(p) = n.field("parameter") {
                b.local(b.text(p));
            }
            b.children(n, visit);
        }
        // `private conn: Connection;` in a class body types `this.conn`.
        "public_field_definition" => visit_field(b, n),
        // `readonly gen: CodeGen` in an interface types `it.gen` for any `it: SchemaCxt`.
        "property_signature" => visit_property_signature(b, n),
        "call_expression" | "new_expression" => visit_call(b, n),
        _ => b.children(n, visit),
    }
}

/// A function, method or signature: its definition, parameters and body.
fn visit_function(b: &mut Builder<'_>, n: Node<'_>) {
    let Some(name) = b.field_text(n, "name") else {
        return;
    };
    let class = b.scope;
    // A constructor function (`function MarkdownIt(options) { this.set(options) }`): by the
    // language's convention it is named with a capital, and `this` is the new instance.
    let constructor = class == 0
        && n.kind() == "function_declaration"
        && name.starts_with(|c: char| c.is_ascii_uppercase());
    let idx = def_with_body(b, n, DefKind::Function, name);
    if n.kind().starts_with("method") || n.kind().starts_with("abstract") || constructor {
        b.out.defs[idx as usize].self_names.push("this".into());
    }
    if let Some(ps) = n.field("parameters") {
        b.within(idx, |b| params(b, ps, class));
    }
    if let Some(body) = n.field("body") {
        b.within(idx, |b| visit(b, body));
    }
}

/// A class, interface, enum or type alias: its decorators, definition, bases and body.
fn visit_class(b: &mut Builder<'_>, n: Node<'_>) {
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
                // An interface's bases are types (`extends SchemaCxt`, `extends Base<T>`):
                // its subtypes inherit the properties they declare.
                let p = v.and_then(|v| path(b, v)).or_else(|| {
                    let t = ts_class(b, e).filter(|_| k.kind() == "extends_type_clause")?;
                    Some(t.split('.').map(str::to_string).collect())
                });
                if let Some(p) = p {
                    bases.push(p.join("."));
                    b.reference(p, e);
                }
            }
        }
    }
    b.out.defs[idx as usize].bases = bases;
    // A type alias of an object type (`type InstanceDefaults = { options: Options }`)
    // declares its properties and methods as an interface does.
    let object_type = || n.field("value").filter(|v| v.kind() == "object_type");
    if let Some(body) = n.field("body").or_else(object_type) {
        b.within(idx, |b| visit(b, body));
    }
}

/// The node kinds of a function value (`function () {}`, `() => x`, `function* () {}`).
const FUNCTION_VALUES: &[&str] = &[
    "function_expression",
    "function",
    "arrow_function",
    "generator_function",
];

/// The node kinds that open a function scope, named or not.
const FUNCTION_SCOPES: &[&str] = &[
    "function_expression",
    "function",
    "arrow_function",
    "generator_function",
    "function_declaration",
    "generator_function_declaration",
    "method_definition",
];

/// Whether `n` sits in a function's body rather than at a module's or class's level. A
/// callback's or an immediately invoked function's variables are its locals, not the
/// module's definitions (express's `lib/response.js` showed 99 module "variables", most of
/// them the locals of its methods). An ancestor chain past a few hundred levels (only a
/// hostile file nests so deep) counts as inside one.
fn in_function(n: Node<'_>) -> bool {
    let mut cur = n.parent();
    for _ in 0..512 {
        match cur {
            None => return false,
            Some(p) if FUNCTION_SCOPES.contains(&p.kind()) => return true,
            Some(p) if matches!(p.kind(), "program" | "class_body") => return false,
            Some(p) => cur = p.parent(),
        }
    }
    true
}

/// A `const`/`let`/`var` declaration: each of its declarators.
fn visit_declaration(b: &mut Builder<'_>, n: Node<'_>) {
    let top = b.cur_def().kind != DefKind::Function && !in_function(n);
    b.children(n, |b, d| visit_declarator(b, n, d, top));
}

/// `target.name = function name(...) {...}` (or an arrow function): a function definition
/// named by the function's own name, else by the last property assigned, in the current
/// scope. The pre-class style of JavaScript defines a library's whole API this way
/// (`res.send = …`, `Router.prototype.route = …`, `exports.parse = …`). Any other
/// assignment is visited as an expression.
fn visit_assignment(b: &mut Builder<'_>, n: Node<'_>) {
    let (Some(left), Some(value)) = (n.field("left"), n.field("right")) else {
        return b.children(n, visit);
    };
    if left.kind() != "member_expression" || !FUNCTION_VALUES.contains(&value.kind()) {
        return b.children(n, visit);
    }
    let own = b.field_text(value, "name");
    let property = left
        .field("property")
        .filter(|p| p.kind() == "property_identifier")
        .map(|p| b.text(p))
        .filter(|p| p != "exports");
    match own.or(property) {
        Some(name) => {
            let idx = assigned_function(b, n, value, name);
            // `Foo.prototype.m = function () {...}`: a method; `this` is the instance.
            let on_prototype = left
                .field("object")
                .and_then(|o| o.field("property"))
                .is_some_and(|p| b.text(p) == "prototype");
            if on_prototype {
                b.out.defs[idx as usize].self_names.push("this".into());
            }
        }
        None => b.children(n, visit),
    }
}

/// `{ name: function () {...} }` (or an arrow function): a function definition named by the
/// key, as a method written `{ name() {...} }` already is.
fn visit_pair(b: &mut Builder<'_>, n: Node<'_>) {
    let key = n.field("key").filter(|k| k.kind() == "property_identifier");
    match (key, n.field("value")) {
        (Some(k), Some(v)) if FUNCTION_VALUES.contains(&v.kind()) => {
            let name = b.text(k);
            assigned_function(b, n, v, name);
        }
        _ => b.children(n, visit),
    }
}

/// The definition of function value `value` written at `at` (an assignment or a property):
/// its span and signature are `at`'s, its parameters and body its own.
fn assigned_function(b: &mut Builder<'_>, at: Node<'_>, value: Node<'_>, name: String) -> u32 {
    let sig = b.header(at, value.field("body"));
    let scope = b.scope;
    let idx = b.def(DefKind::Function, name, at, sig);
    // An assignment's comment sits before its statement; a property's before the property.
    let commented = at
        .parent()
        .filter(|p| p.kind() == "expression_statement")
        .unwrap_or(at);
    b.out.defs[idx as usize].doc = leading_doc(b, commented);
    b.within(idx, |b| {
        if let Some(ps) = value.field("parameters") {
            params(b, ps, scope);
        } else if let Some(p) = value.field("parameter") {
            b.local(b.text(p));
        }
        if let Some(body) = value.field("body") {
            visit(b, body);
        }
    });
    idx
}

/// One declarator `d` of declaration `n`: a definition at the top level or when its value
/// is a function, else a local typed by what its annotation or value shows.
fn visit_declarator(b: &mut Builder<'_>, n: Node<'_>, d: Node<'_>, top: bool) {
    if d.kind() != "variable_declarator" {
        return visit(b, d);
    }
    if imports::require(b, d, top) {
        return;
    }
    let name = d.field("name").filter(|x| x.kind() == "identifier");
    let value = d.field("value");
    // `var debug = require('debug')('mocha')` defines nothing a call could reach: a local.
    if let (Some(nm), Some(v), true) = (name, value, top) {
        if imports::required_call(b, v) {
            b.local(b.text(nm));
            if let Some(args) = v.field("arguments") {
                visit(b, args);
            }
            return;
        }
    }
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
            match local_type(b, d, value) {
                Some(t) => b.typed_local(b.text(nm), t),
                None => b.local(b.text(nm)),
            }
        } else if let Some(p) = d.field("name") {
            // `const {gen, data} = it` (or `= this.cxt`, `= getCxt()`, `: Cxt = …`): what
            // each property of that value holds.
            let held = match asserted(b, d, value) {
                Some(class) => Some(format!("{class}.()")),
                None => value.and_then(|v| call_path(b, v)).map(|p| p.join(".")),
            };
            pattern(b, p, held.as_deref(), 0);
        }
        if let Some(v) = value {
            visit(b, v);
        }
    }
}

/// The names destructuring pattern `pat` binds, as locals of the current scope, and the
/// default values in it. `held` is the value path (see `RawFile::typed_locals`) of the value
/// `pat` takes apart, when it is typed: `it` for `const {gen} = it`, `SchemaCxt.()` for a
/// parameter `{gen}: SchemaCxt`. A property read off it holds what the property's
/// declaration types (`gen` is `it.gen.(field)`: `gen.const()` reaches `CodeGen.const` when
/// `it`'s class declares `gen: CodeGen`); nested patterns read on (`{a: {b}}` is
/// `it.a.b.(field)`). Anything else, array elements and `...rest` included, is an untyped
/// local. Patterns nested past any real code's depth bind nothing more.
fn pattern(b: &mut Builder<'_>, pat: Node<'_>, held: Option<&str>, depth: u32) {
    if depth > 32 {
        return;
    }
    let read = |key: Node<'_>| -> Option<String> {
        let key = Some(key).filter(|k| {
            matches!(
                k.kind(),
                "property_identifier" | "shorthand_property_identifier_pattern"
            )
        })?;
        Some(format!("{}.{}", held?, b.text(key)))
    };
    match pat.kind() {
        "identifier" => {
            let name = b.text(pat);
            match held {
                Some(h) => b.typed_local(name, format!("{h}.(field)")),
                None => b.local(name),
            }
        }
        "shorthand_property_identifier_pattern" => {
            let name = b.text(pat);
            match read(pat) {
                Some(h) => b.typed_local(name, format!("{h}.(field)")),
                None => b.local(name),
            }
        }
        "object_pattern" => b.children(pat, |b, k| pattern(b, k, held, depth + 1)),
        "pair_pattern" => {
            if let Some(v) = pat.field("value") {
                let inner = pat.field("key").and_then(read);
                pattern(b, v, inner.as_deref(), depth + 1);
            }
        }
        // `{gen = fallback}` / `alias = fallback`: the default only fills an absent value.
        "object_assignment_pattern" | "assignment_pattern" => {
            if let Some(l) = pat.field("left") {
                pattern(b, l, held, depth + 1);
            }
            if let Some(r) = pat.field("right") {
                visit(b, r);
            }
        }
        "array_pattern" | "rest_pattern" => b.children(pat, |b, k| pattern(b, k, None, depth + 1)),
        _ => {}
    }
}

/// The class of a local declared by `d`, from its annotation or its `value`.
fn local_type(b: &Builder<'_>, d: Node<'_>, value: Option<Node<'_>>) -> Option<String> {
    // `const qr: QueryRunner = ...` / `const b = new Builder()`.
    let ty = asserted(b, d, value);
    let ty = ty.or_else(|| constructed(b, value?));
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
    ty.or_else(|| {
        let (v, mark) = match value? {
            v if v.kind() == "await_expression" => (v.named_child(0)?, "(await)"),
            v => (v, "()"),
        };
        if v.kind() != "call_expression" {
            return None;
        }
        let p = call_path(b, v.field("function")?)?;
        (p.last()? != "()").then(|| format!("{}.{mark}", p.join(".")))
    })
}

/// The class declarator `d` declares its value to be: its annotation (`const qr:
/// QueryRunner = …`) or the type its `value` is asserted as (`this.toName(x) as
/// ValueScopeName`).
fn asserted(b: &Builder<'_>, d: Node<'_>, value: Option<Node<'_>>) -> Option<String> {
    let cast = || {
        let v = value.filter(|v| v.kind() == "as_expression")?;
        ts_class(b, v.named_child(1)?)
    };
    match d.field("type") {
        Some(t) => ts_class(b, t),
        None => cast(),
    }
}

/// A class field: its decorators, the attribute it types, and its initial value. A field
/// whose value is a function (`onClick = () => {...}`) is a method written as a field: a
/// function definition of the class. Its class is the one its annotation names or, without
/// one, the one its initial value constructs (`_whitelist = new ReferenceSet()`), as
/// TypeScript infers it.
fn visit_field(b: &mut Builder<'_>, n: Node<'_>) {
    decorators(b, n);
    let class = b.scope;
    let name = n
        .field("name")
        .filter(|x| x.kind() == "property_identifier");
    if let (Some(nm), true) = (name, b.out.defs[class as usize].kind == DefKind::Class) {
        let t = match n.field("type") {
            Some(t) => ts_class(b, t),
            None => n.field("value").and_then(|v| constructed(b, v)),
        };
        b.attr_assigned(class, b.text(nm), t);
    }
    match (name, n.field("value")) {
        (Some(nm), Some(v)) if FUNCTION_VALUES.contains(&v.kind()) => {
            let name = b.text(nm);
            let idx = assigned_function(b, n, v, name);
            b.out.defs[idx as usize].self_names.push("this".into());
        }
        (_, Some(v)) => visit(b, v),
        _ => {}
    }
}

/// A property of an interface or object type (`readonly gen: CodeGen`, `opts?: Options`):
/// the attribute it types, as a class field does.
fn visit_property_signature(b: &mut Builder<'_>, n: Node<'_>) {
    let class = b.scope;
    let name = n
        .field("name")
        .filter(|x| x.kind() == "property_identifier");
    if let (Some(nm), true) = (name, b.out.defs[class as usize].kind == DefKind::Class) {
        let t = n.field("type").and_then(|t| ts_class(b, t));
        b.attr_assigned(class, b.text(nm), t);
    }
    b.children(n, visit);
}

/// The class `new Foo(...)` (or `new ns.Foo(...)`) constructs; `None` for any other value.
fn constructed(b: &Builder<'_>, value: Node<'_>) -> Option<String> {
    let c = Some(value)
        .filter(|v| v.kind() == "new_expression")?
        .field("constructor")?;
    matches!(c.kind(), "identifier" | "member_expression").then(|| b.text(c))
}

/// A call or `new`: a reference to its callee, then the calls in its receiver chain and
/// its arguments.
fn visit_call(b: &mut Builder<'_>, n: Node<'_>) {
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

/// Parameters become locals of the current scope, typed by a TypeScript annotation that
/// names a class (`qr: QueryRunner`); a constructor's parameter properties
/// (`constructor(private conn: Connection)`) also type that attribute of `class`.
fn params(b: &mut Builder<'_>, ps: Node<'_>, class: u32) {
    b.children(ps, |b, p| {
        let (name, ty) = match p.kind() {
            "identifier" => (Some(p), None),
            // `function compile(this: Ajv, …)` types `this` in the function as a parameter.
            "required_parameter" | "optional_parameter" => (
                p.field("pattern")
                    .filter(|x| matches!(x.kind(), "identifier" | "this")),
                p.field("type").and_then(|t| ts_class(b, t)),
            ),
            "assignment_pattern" => (p.field("left").filter(|x| x.kind() == "identifier"), None),
            _ => (None, None),
        };
        let Some(name) = name.map(|x| b.text(x)) else {
            // `({gen, data}: KeywordCxt)`: each property holds what `KeywordCxt` declares.
            let pat = match p.kind() {
                "required_parameter" | "optional_parameter" => p.field("pattern"),
                _ => Some(p),
            };
            let held = ty.map(|t| format!("{t}.()"));
            match pat {
                Some(pat) if pat.kind().ends_with("pattern") => {
                    pattern(b, pat, held.as_deref(), 0);
                    if let Some(v) = p.field("value") {
                        visit(b, v);
                    }
                }
                _ => visit(b, p),
            }
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

/// The class a type annotation names: `: Foo`, `: Foo<T>`, `: ns.Foo`, and a union of one
/// such name with primitives (`Foo | undefined`, `Foo | null | string`: a method called on
/// it can only be the class's); `None` for primitives, unions of two named types, arrays,
/// object and function types.
fn ts_class(b: &Builder<'_>, t: Node<'_>) -> Option<String> {
    match t.kind() {
        "type_annotation" | "parenthesized_type" => ts_class(b, t.named_child(0)?),
        "type_identifier" | "nested_type_identifier" => Some(b.text(t)),
        "generic_type" => ts_class(b, t.field("name")?),
        "union_type" => {
            let mut named = vec![];
            union_members(t, &mut named, 0)?;
            let mut classes = named.into_iter().map(|m| ts_class(b, m));
            match (classes.next(), classes.next()) {
                (Some(class), None) => class,
                _ => None,
            }
        }
        _ => None,
    }
}

/// The members of union type `t` that are no primitive (`undefined`, `null`, `string`, a
/// literal), pushed on `named`; `None` for a union nested past any real type's depth.
fn union_members<'t>(t: Node<'t>, named: &mut Vec<Node<'t>>, depth: u32) -> Option<()> {
    if depth > 32 {
        return None;
    }
    let mut c = t.walk();
    for m in t.named_children(&mut c) {
        match m.kind() {
            "union_type" => union_members(m, named, depth + 1)?,
            "predefined_type" | "literal_type" => {}
            _ => named.push(m),
        }
    }
    Some(())
}
