//! ES imports and re-exports: the names a module binds from other modules.

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
