//! ES imports and re-exports, and Node's `require`: the names a module binds from other
//! modules.

use super::{Builder, Fields, Node};
use crate::graph::raw::Target;

/// An `import` statement: each name it binds, or the bare module of a side-effect import.
pub(super) fn import(b: &mut Builder<'_>, n: Node<'_>) {
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
        // `import Schema from './schema'`: the module's default export.
        "identifier" => b.bind(
            b.text(k),
            Target::Symbol {
                module: module.clone(),
                level: 0,
                name: "default".into(),
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

/// `export * from './x'`, `export * as ns from './x'` and `export { a, b as c } from './x'`:
/// the module re-exports names of another one, bound like imports so that a lookup through
/// an `index.ts` reaches the defining file.
pub(super) fn reexport(b: &mut Builder<'_>, n: Node<'_>) {
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

/// `export default class Schema …`, `export default parse;` or `export { Schema as default
/// }`: the module's own name `default` bound to the definition (or import) it exports, an
/// empty module standing for the file itself, so that `import Schema from './schema'`
/// reaches the class. An anonymous default (`export default function () {}`, an object)
/// binds nothing.
pub(super) fn default_export(b: &mut Builder<'_>, n: Node<'_>) {
    let mut c = n.walk();
    let is_default = n.children(&mut c).any(|k| k.kind() == "default");
    let named = if is_default {
        let declared = n.field("declaration").and_then(|d| d.field("name"));
        declared.or_else(|| n.field("value").filter(|v| v.kind() == "identifier"))
    } else {
        let clause = n
            .named_children(&mut c)
            .find(|k| k.kind() == "export_clause");
        clause.and_then(|k| {
            let mut c2 = k.walk();
            let found = k.named_children(&mut c2).find(|s| {
                s.kind() == "export_specifier"
                    && s.field("alias")
                        .is_some_and(|a| string_or_ident(b, a) == "default")
            });
            found?.field("name")
        })
    };
    if let Some(name) = named.filter(|x| x.kind() == "identifier" || x.kind() == "type_identifier")
    {
        let t = Target::Symbol {
            module: String::new(),
            level: 0,
            name: b.text(name),
        };
        b.bind("default".into(), t, n);
    }
}

/// The module a Node `require('./x')` call names, and the property read off its result
/// (`require('./x').y` → `y`); `None` for any other value.
fn required(b: &Builder<'_>, value: Node<'_>) -> Option<(String, Option<String>)> {
    let (call, prop) = match value.kind() {
        "member_expression" => (
            value.field("object")?,
            Some(b.text(value.field("property")?)),
        ),
        _ => (value, None),
    };
    if call.kind() != "call_expression"
        || call.field("function").map(|f| b.text(f)).as_deref() != Some("require")
    {
        return None;
    }
    let args = call.field("arguments")?;
    let mut c = args.walk();
    let mut kids = args.named_children(&mut c);
    let (Some(arg), None) = (kids.next(), kids.next()) else {
        return None;
    };
    (arg.kind() == "string").then(|| (string_value(b, arg), prop))
}

/// `const x = require('./x')`, `const y = require('./x').y` and `const { y, z: w } =
/// require('./x')`: the names bound, as the matching `import` binds them. Node's own module
/// system is how most JavaScript on npm still imports (Koa, Express, Mocha, Knex,
/// markdown-it); without these bindings every call through them was left unresolved or,
/// worse, reached the local `const` itself. At a module's top level (`top`), an alias of
/// what an import binds (`var dQuote = utils.dQuote`, `const { build } = validation`) binds
/// its names the same way, to that path read in the file itself (an empty module): a call
/// of `dQuote(…)` reaches `utils.dQuote` rather than the alias's own line. Returns whether
/// the declarator was one.
pub(super) fn require(b: &mut Builder<'_>, declarator: Node<'_>, top: bool) -> bool {
    let (Some(name), Some(value)) = (declarator.field("name"), declarator.field("value")) else {
        return false;
    };
    let (module, read) = match required(b, value) {
        Some(found) => found,
        None => match aliased(b, value).filter(|_| top) {
            Some(path) => (String::new(), Some(path)),
            None => return false,
        },
    };
    // What the name taking property `key` of the value (or, with `None`, all of it) binds.
    let target = |key: Option<String>| {
        let name = match (&read, key) {
            (None, None) => {
                return Target::Module {
                    module: module.clone(),
                    level: 0,
                }
            }
            (Some(r), None) => r.clone(),
            (None, Some(k)) => k,
            (Some(r), Some(k)) => format!("{r}.{k}"),
        };
        Target::Symbol {
            module: module.clone(),
            level: 0,
            name,
        }
    };
    match name.kind() {
        "identifier" => b.bind(b.text(name), target(None), declarator),
        "object_pattern" => {
            b.children(name, |b, k| match k.kind() {
                "shorthand_property_identifier_pattern" => {
                    let n = b.text(k);
                    b.bind(n.clone(), target(Some(n)), declarator);
                }
                "pair_pattern" => {
                    let key = k.field("key").filter(|x| x.kind() == "property_identifier");
                    let val = k.field("value").filter(|x| x.kind() == "identifier");
                    if let (Some(key), Some(val)) = (key, val) {
                        b.bind(b.text(val), target(Some(b.text(key))), declarator);
                    }
                }
                _ => {}
            });
        }
        _ => return false,
    }
    true
}

/// The dotted path `value` is (`utils.dQuote`, `validation`) when its head is a name the
/// module binds from another (an import, a `require`, another such alias).
fn aliased(b: &Builder<'_>, value: Node<'_>) -> Option<String> {
    let p = super::path(b, value)?;
    let bound = b
        .out
        .bindings
        .iter()
        .any(|x| x.scope == 0 && x.name == p[0]);
    bound.then(|| p.join("."))
}

/// `var debug = require('debug')('mocha')`: what a required module (or a property of it)
/// returns when called. Nothing the graph knows defines it.
pub(super) fn required_call(b: &Builder<'_>, value: Node<'_>) -> bool {
    value.kind() == "call_expression"
        && value
            .field("function")
            .is_some_and(|f| required(b, f).is_some())
}

/// An export name: an identifier, or a string literal (`export { "a-b" as c }`).
fn string_or_ident(b: &Builder<'_>, n: Node<'_>) -> String {
    if n.kind() == "string" {
        string_value(b, n)
    } else {
        b.text(n)
    }
}

fn string_value(b: &Builder<'_>, n: Node<'_>) -> String {
    b.text(n)
        .trim_matches(|c| c == '"' || c == '\'' || c == '`')
        .to_string()
}
