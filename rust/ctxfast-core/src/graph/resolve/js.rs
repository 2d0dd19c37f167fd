//! JavaScript and TypeScript: relative imports resolve to project files by path (`./a`,
//! `../b/index`, with or without an extension); bare specifiers are packages, hence external.
//! TypeScript headers give the class a call returns (`): Foo`, `: this`, `: Promise<Foo>`
//! when awaited), and a function declared with overload signatures is reached at its
//! implementation, which the language puts last.

use super::{FileData, Res, Resolver};
use crate::graph::raw::{DefKind, RawDef};

/// The class a TypeScript function header declares it returns: `where(w: string): this` →
/// `this`, `qb<T>(a?: string): SelectQueryBuilder<T>` → `SelectQueryBuilder`,
/// `const f = (x: A): ns.B => …` → `ns.B`; `None` without a return annotation or when it
/// is no plain class name (a union, an array, an object type).
fn ts_return_type<'s>(signature: &'s str, name: &str) -> Option<&'s str> {
    let ret = ts_return_text(signature, name)?;
    let end = ret
        .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '$' || c == '.'))
        .unwrap_or(ret.len());
    let (ty, rest) = ret.split_at(end);
    let rest = rest.trim_start();
    let plain = rest.is_empty() || rest.starts_with('<') && rest.ends_with('>');
    (!ty.is_empty() && plain).then_some(ty)
}

/// The return annotation of a TypeScript function header, as written (an arrow's `=>`
/// dropped): `f(a: string): Promise<T>` → `Promise<T>`.
fn ts_return_text<'s>(signature: &'s str, name: &str) -> Option<&'s str> {
    let at = signature.find(name)? + name.len();
    let open = at + signature[at..].find('(')?;
    let mut depth = 0i32;
    let mut close = None;
    for (i, c) in signature[open..].char_indices() {
        match c {
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => {
                depth -= 1;
                if depth == 0 {
                    close = Some(open + i);
                    break;
                }
            }
            _ => {}
        }
    }
    let ret = signature[close? + 1..]
        .trim_start()
        .strip_prefix(':')?
        .trim();
    Some(ret.strip_suffix("=>").unwrap_or(ret).trim_end())
}

impl Resolver<'_> {
    /// A TypeScript function declared with overload signatures (`function f(a: string): X;`
    /// … then `function f(a) { … }`): calls reach the implementation, which the language
    /// puts last.
    pub(super) fn implementation(&self, r: &Res) -> Res {
        let Res::Def(f, d) = *r else {
            return r.clone();
        };
        let fd = &self.files[f as usize];
        let def = &fd.raw.defs[d as usize];
        if !fd.lang.is_js() || def.kind != DefKind::Function {
            return r.clone();
        }
        let last = (d as usize + 1..fd.raw.defs.len()).rev().find(|&i| {
            fd.raw.defs[i].kind == DefKind::Function && fd.raw.defs[i].local == def.local
        });
        last.map_or_else(|| r.clone(), |i| Res::Def(f, i as u32))
    }

    /// The project module a JavaScript/TypeScript import specifier names, relative to the
    /// importing file; a bare specifier (a package) is external.
    pub(super) fn js_import(&self, fd: &FileData, module: &str) -> Res {
        if !module.starts_with('.') {
            return Res::External;
        }
        let dir = fd.rel.rsplit_once('/').map_or("", |(d, _)| d);
        let mut parts: Vec<&str> = if dir.is_empty() {
            vec![]
        } else {
            dir.split('/').collect()
        };
        for seg in module.split('/') {
            match seg {
                "." | "" => {}
                ".." => {
                    parts.pop();
                }
                s => parts.push(s),
            }
        }
        let mut p = parts.join("/");
        if let Some((stem, ext)) = p.rsplit_once('.') {
            if matches!(ext, "js" | "ts" | "tsx" | "jsx" | "mjs" | "cjs") {
                p = stem.to_string();
            }
        }
        if let Some(&m) = self
            .sym
            .js_by_path
            .get(&p)
            .or_else(|| self.sym.js_by_path.get(&format!("{p}/index")))
        {
            return Res::Module(m);
        }
        Res::External
    }

    /// What a module bound by `require('./ruler')` is when it is called or constructed
    /// (`new Ruler()`, `parseLinkDestination(…)`): the function or class the module exports
    /// whole (`module.exports = Ruler`), found as Node modules are written, the one top-level
    /// definition named for its file (`ruler.js` → `Ruler`, `parse_link_destination.js` →
    /// `parseLinkDestination`). Anything else stays the module.
    pub(super) fn js_module_export(&self, r: Res) -> Res {
        let Res::Module(m) = r else {
            return r;
        };
        let fd = &self.files[m as usize];
        if !fd.lang.is_js() {
            return r;
        }
        let squash = |s: &str| -> String {
            s.chars()
                .filter(|c| !matches!(c, '_' | '-'))
                .flat_map(char::to_lowercase)
                .collect()
        };
        let stem = squash(&fd.raw.defs[0].name);
        let mut named = fd.raw.defs.iter().enumerate().skip(1).filter(|(_, d)| {
            d.parent == 0
                && matches!(d.kind, DefKind::Function | DefKind::Class)
                && squash(&d.name) == stem
        });
        match (named.next(), named.next()) {
            (Some((i, _)), None) => Res::Def(m, i as u32),
            _ => r,
        }
    }

    /// The class a TypeScript function declares it returns (see
    /// [`Resolver::returned_class`]): `this` is the function's own class.
    pub(super) fn ts_returned(&self, f: u32, d: u32, def: &RawDef) -> Option<Res> {
        match ts_return_type(&def.signature, &def.name)? {
            // A fluent method (`where(...): this`) returns its own instance.
            "this" => match self.self_class(f, d) {
                r @ Res::Def(..) => Some(r),
                _ => None,
            },
            ty => self.class_at(f, def.parent, ty, 0),
        }
    }

    /// The class a TypeScript function declares its promise resolves to (`async f():
    /// Promise<Table>` → `Table`).
    pub(super) fn awaited_class(&self, callee: &Res) -> Option<Res> {
        let Res::Def(f, d) = *callee else {
            return None;
        };
        let fd = &self.files[f as usize];
        let def = &fd.raw.defs[d as usize];
        if !fd.lang.is_js() || def.kind != DefKind::Function {
            return None;
        }
        let ret = ts_return_text(&def.signature, &def.name)?;
        let inner = ret.strip_prefix("Promise<")?.strip_suffix('>')?;
        let ty = ts_return_type(&format!("f(): {inner}"), "f")?.to_string();
        self.class_at(f, def.parent, &ty, 0)
    }
}
