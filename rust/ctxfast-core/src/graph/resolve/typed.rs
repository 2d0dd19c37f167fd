//! The class a value holds, for every language that declares or infers it: `self`/`this`
//! and receivers (the enclosing class), typed locals and attributes (annotations,
//! constructor assignments), `super()`, and what a call returns (from the callee's declared
//! return type, which each language's module reads). An instance reached this way resolves
//! its members to the class's methods.

use super::{consulted, Res, Resolver};
use crate::graph::lang::Lang;
use crate::graph::raw::DefKind;

/// How a typed local's value path (`RawFile::typed_locals`) gives its value: `a.b.()` what
/// the call returns, `a.b.(await)` what the promise it returns resolves to, `a.b.(field)`
/// what attribute `b` of `a` holds.
#[derive(Clone, Copy)]
enum Held {
    Returned,
    Awaited,
    Field,
}

impl Resolver<'_> {
    pub(super) fn self_class(&self, f: u32, s: u32) -> Res {
        let fd = &self.files[f as usize];
        let d = &fd.raw.defs[s as usize];
        if !d.self_class.is_empty() {
            if let Some(&i) = self.t(f as usize).local_index.get(d.self_class.as_str()) {
                return Res::Def(f, i);
            }
            let q = format!("{}.{}", fd.prefix(), d.self_class);
            if let Some(&(df, dd)) = self.sym.def_by_qual.get(&q) {
                return Res::Def(df, dd);
            }
            return Res::Dynamic;
        }
        let p = d.parent;
        if p != 0 && fd.raw.defs[p as usize].kind == DefKind::Class {
            return Res::Def(f, p);
        }
        // JavaScript written without `class`: a method of the object a module exports
        // (`module.exports = { get() { this.set() } }`, Koa), one assigned to a prototype
        // (`Ruler.prototype.at = function () { this.__compile__() }`, markdown-it) or a
        // constructor function finds its siblings at the module's top level, where such
        // methods are defined.
        if p == 0 && fd.lang.is_js() {
            return Res::Module(f);
        }
        Res::Dynamic
    }

    /// The class `path` (dotted, as written in `scope` of file `f`) names, if it is a
    /// project class.
    pub(super) fn class_at(&self, f: u32, scope: u32, path: &str, depth: u32) -> Option<Res> {
        let segs: Vec<&str> = path.split('.').collect();
        let mut r = self.lookup_name(f, scope, segs[0], depth + 1);
        for seg in &segs[1..] {
            r = self.attr(&r, seg, depth + 1);
        }
        match r {
            Res::Def(cf, cd)
                if self.files[cf as usize].raw.defs[cd as usize].kind == DefKind::Class =>
            {
                Some(r)
            }
            _ => None,
        }
    }

    /// The class attribute `name` of instances of `base` (a class) holds, from
    /// `RawFile::typed_attrs` of the class or, unless the class defines `name` itself, of
    /// its bases.
    pub(super) fn typed_attr(&self, base: &Res, name: &str, depth: u32) -> Option<Res> {
        let Res::Def(f, d) = *base else {
            return None;
        };
        consulted(f);
        let def = &self.files[f as usize].raw.defs[d as usize];
        if depth > 8 || def.kind != DefKind::Class {
            return None;
        }
        if let Some(class) = self.t(f as usize).typed_attrs.get(&(d, name)) {
            return self.class_at(f, def.parent, class, depth);
        }
        let own = format!("{}.{}", def.local, name);
        if self.t(f as usize).local_index.contains_key(own.as_str()) {
            return None;
        }
        def.bases.iter().find_map(|b| {
            let r = self.class_at(f, def.parent, b, depth)?;
            (r != *base).then(|| self.typed_attr(&r, name, depth + 1))?
        })
    }

    /// For `super().name` referenced from `scope`: the first base of the enclosing method's
    /// class that has `name` (its own or inherited), so `attr(base, name)` finds the member.
    pub(super) fn super_base(&self, f: u32, scope: u32, name: &str) -> Option<Res> {
        let defs = &self.files[f as usize].raw.defs;
        let mut s = scope;
        while s != 0 {
            let d = &defs[s as usize];
            let class = &defs[d.parent as usize];
            if d.kind == DefKind::Function && class.kind == DefKind::Class && d.parent != 0 {
                return class.bases.iter().find_map(|b| {
                    let base = self.class_at(f, class.parent, b, 0)?;
                    matches!(self.attr(&base, name, 1), Res::Def(..)).then_some(base)
                });
            }
            s = if d.parent < s { d.parent } else { 0 };
        }
        None
    }

    /// The class a function-local `name` is known to hold where it is referenced from
    /// `scope` (see `RawFile::typed_locals`): the nearest function scope binding `name` decides;
    /// an untyped binding there, or a type that does not resolve to a project class, gives
    /// `None`.
    pub(super) fn typed_local(&self, f: u32, scope: u32, name: &str) -> Option<Res> {
        self.typed_local_at(f, scope, name, 0)
    }

    fn typed_local_at(&self, f: u32, scope: u32, name: &str, depth: u32) -> Option<Res> {
        let fi = f as usize;
        let defs = &self.files[fi].raw.defs;
        let mut s = scope;
        while s != 0 {
            if let Some(class) = self.t(fi).typed_locals.get(&(s, name)) {
                let (path, held) = match class.rsplit_once('.') {
                    Some((path, "()")) => (path, Held::Returned),
                    Some((path, "(await)")) => (path, Held::Awaited),
                    Some((path, "(field)")) => (path, Held::Field),
                    _ => return self.class_at(f, s, class, 0),
                };
                return self.held_value(f, s, path, held, depth + 1);
            }
            if self.t(fi).locals.contains(&(s, name)) {
                return None;
            }
            let d = &defs[s as usize];
            s = if d.parent < s { d.parent } else { 0 };
        }
        None
    }

    /// The class of the value `path` ends at (a dotted path written in `scope`, its head a
    /// typed local, `this` or a name in scope, calls in it marked `()`), as `held` reads it:
    /// a local bound to `conn.getRepository(Post)` holds what `getRepository` declares it
    /// returns, to `await this.getTable(n)` the class of the `Promise<…>` it declares, and
    /// `gen` of `const {gen} = it` what `it`'s class declares its `gen` attribute holds.
    fn held_value(&self, f: u32, scope: u32, path: &str, held: Held, depth: u32) -> Option<Res> {
        if depth > 4 {
            return None;
        }
        let segs: Vec<&str> = path.split('.').collect();
        let mut cur = self
            .typed_local_at(f, scope, segs[0], depth)
            .unwrap_or_else(|| self.lookup_name(f, scope, segs[0], 0));
        // Whether `cur` is what a typed attribute holds, not a definition read by name.
        let mut typed = false;
        for seg in &segs[1..] {
            (cur, typed) = if *seg == "()" {
                (self.returned_class(&cur)?, false)
            } else if let Some(c) = self.typed_attr(&cur, seg, 0) {
                (c, true)
            } else {
                let next = self.attr(&cur, seg, 0);
                if !matches!(next, Res::Def(..)) {
                    return None;
                }
                (next, false)
            };
        }
        let cur = match held {
            Held::Returned => self.returned_class(&cur)?,
            Held::Awaited => self.awaited_class(&cur)?,
            Held::Field if typed => cur,
            Held::Field => return None,
        };
        self.is_class(&cur).then_some(cur)
    }

    pub(super) fn is_class(&self, r: &Res) -> bool {
        matches!(*r, Res::Def(f, d) if self.files[f as usize].raw.defs[d as usize].kind == DefKind::Class)
    }

    /// The class a field `name` (a `var` member of the enclosing class, referenced bare as
    /// Java allows) is declared to hold, from the class's `typed_attrs`.
    pub(super) fn typed_field(&self, f: u32, scope: u32, name: &str) -> Option<Res> {
        let Res::Def(ff, fd) = self.lookup_name(f, scope, name, 0) else {
            return None;
        };
        let def = &self.files[ff as usize].raw.defs[fd as usize];
        let class = &self.files[ff as usize].raw.defs[def.parent as usize];
        if def.kind != DefKind::Var || class.kind != DefKind::Class || def.parent == 0 {
            return None;
        }
        self.typed_attr(&Res::Def(ff, def.parent), name, 0)
    }

    /// The class a call of the function `callee` returns, from its declared return type
    /// (`-> Self`, `-> WalkBuilder`, `-> &mut Self`, `): Foo`); `None` when it names no
    /// project class. A class called (`new A()`) gives itself.
    pub(super) fn returned_class(&self, callee: &Res) -> Option<Res> {
        let Res::Def(f, d) = *callee else {
            return None;
        };
        let fd = &self.files[f as usize];
        let def = &fd.raw.defs[d as usize];
        if def.kind == DefKind::Class && (fd.lang == Lang::Java || fd.lang.is_js()) {
            return Some(callee.clone()); // `new A()`
        }
        if def.kind != DefKind::Function {
            return None;
        }
        match fd.lang {
            Lang::Java => self.java_returned(f, def),
            lang if lang.is_js() => self.ts_returned(f, d, def),
            Lang::Rust => self.rust_returned(f, d, def),
            _ => None,
        }
    }
}
