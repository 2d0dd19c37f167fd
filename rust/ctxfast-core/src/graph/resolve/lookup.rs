//! The lookup steps every language shares: a bare name through the enclosing scopes, the
//! module and its star imports ([`Resolver::lookup_name`]); an import binding to the module
//! or definition it binds ([`Resolver::resolve_binding`], through each language's
//! [`Resolver::module_lookup`]); and an attribute of a class, module or package, classes
//! searching their bases ([`Resolver::attr`]). Language differences that are a line or two
//! (Python skipping class bodies, Java's class-named constructors, C's unique functions)
//! stay inline here so the order of the steps reads in one place.

use super::rust_lang::children_base;
use super::{builtins, consulted, Res, Resolver};
use crate::graph::lang::Lang;
use crate::graph::raw::{DefKind, Target};

impl Resolver<'_> {
    pub(super) fn lookup_name(&self, f: u32, scope: u32, name: &str, depth: u32) -> Res {
        consulted(f);
        let fd = &self.files[f as usize];
        let defs = &fd.raw.defs;
        let fi = f as usize;
        let mut s = scope;
        let mut first = true;
        loop {
            let d = &defs[s as usize];
            let consult = s == 0 || d.kind != DefKind::Class || first || fd.lang != Lang::Python;
            // Inside Java class `C`, a bare `C` names the class (`new C()`), never its
            // constructors, which are members of the same name.
            let java_class = fd.lang == Lang::Java && s != 0 && d.kind == DefKind::Class;
            if consult && !(java_class && d.name == name) {
                if s != 0 && d.self_names.iter().any(|x| x == name) {
                    return self.self_class(f, s);
                }
                let q = if d.local.is_empty() {
                    name.to_string()
                } else {
                    format!("{}.{}", d.local, name)
                };
                if let Some(&i) = self.t(fi).local_index.get(q.as_str()) {
                    return Res::Def(f, i);
                }
                if let Some(bs) = self.t(fi).bindings.get(&(s, name)) {
                    let (bi, truncate) = bs[0];
                    return self.resolve_binding(f, bi, truncate, depth + 1);
                }
                if self.t(fi).locals.contains(&(s, name)) {
                    return Res::Dynamic;
                }
                // A bare name in a Java class body also reaches the members its bases
                // declare (`reparentChild(c)` in a subclass of `Node`), before any outer class.
                if java_class {
                    if let r @ Res::Def(..) = self.attr(&Res::Def(f, s), name, depth + 1) {
                        return r;
                    }
                }
            }
            if s == 0 {
                break;
            }
            first = false;
            s = if d.parent < s { d.parent } else { 0 };
        }
        match fd.lang {
            Lang::Go | Lang::Java => {
                if let Some(&(df, dd)) =
                    self.sym
                        .def_by_qual
                        .get(&format!("{}.{}", fd.prefix(), name))
                {
                    return Res::Def(df, dd);
                }
            }
            // A path written from `crate::`, `super::`, `self::` or a workspace crate's name.
            Lang::Rust
                if matches!(name, "crate" | "super" | "self")
                    || self.cargo_crates.contains_key(name) =>
            {
                return self.module_lookup(f, name, 0, depth + 1);
            }
            _ => {}
        }
        let mut external_star = false;
        for &bi in &self.t(fi).stars {
            let m = self.resolve_binding(f, bi, false, depth + 1);
            match self.attr(&m, name, depth + 1) {
                r @ (Res::Def(..) | Res::Module(_)) => return r,
                Res::External | Res::Dynamic => external_star = true,
                _ => {}
            }
        }
        if fd.lang.is_c_family() {
            if let Some(r) = self.c_enclosing_method(defs, scope, name) {
                return r;
            }
            if let Some([(df, dd)]) = self.sym.c_funcs.get(name).map(Vec::as_slice) {
                return Res::Def(*df, *dd);
            }
        }
        if external_star {
            return Res::External;
        }
        match fd.lang {
            Lang::Python if !builtins::PY_BUILTINS.contains(&name) => Res::NotFound,
            _ => Res::External,
        }
    }

    pub(super) fn resolve_binding(&self, f: u32, bi: u32, truncate: bool, depth: u32) -> Res {
        if depth > 12 {
            return Res::Dynamic;
        }
        consulted(f);
        let b = &self.files[f as usize].raw.bindings[bi as usize];
        match &b.target {
            Target::Module { module, level } => {
                if truncate {
                    let first = module.split('.').next().unwrap_or("");
                    self.module_lookup(f, first, *level, depth)
                } else {
                    self.module_lookup(f, module, *level, depth)
                }
            }
            Target::Star { module, level } => self.module_lookup(f, module, *level, depth),
            Target::Symbol {
                module,
                level,
                name,
            } => {
                let m = self.module_lookup(f, module, *level, depth);
                // A JavaScript alias binds a dotted path (`var dQuote = utils.dQuote`).
                name.split('.')
                    .fold(m, |r, seg| self.attr(&r, seg, depth + 1))
            }
        }
    }

    /// What an import of `module` (`level` dots or `require_relative`/quoted-include
    /// levels up) in file `f` names: each language maps import text to files its own way.
    pub(super) fn module_lookup(&self, f: u32, module: &str, level: u32, depth: u32) -> Res {
        let fd = &self.files[f as usize];
        match fd.lang {
            Lang::Python => self.py_import(f, fd, module, level),
            // The empty module is the file itself (`export default X`, `var x = utils.x`).
            Lang::JavaScript | Lang::TypeScript | Lang::Tsx if module.is_empty() => Res::Module(f),
            Lang::JavaScript | Lang::TypeScript | Lang::Tsx => self.js_import(fd, module),
            Lang::Go => self.go_import(module),
            Lang::Java | Lang::Php => Res::Package(module.to_string()),
            Lang::Ruby => self.rb_require(fd, module, level),
            Lang::C | Lang::Cpp => self.c_include(fd, module, level),
            // The generic tier and plain files bind no imports.
            Lang::Tagged(_) | Lang::Plain(_) => Res::External,
            Lang::Rust => self.rust_use(fd, module, depth),
        }
    }

    /// Attribute `name` of `base`: a member of a class (or its bases), of a module, or of a
    /// package.
    pub(super) fn attr(&self, base: &Res, name: &str, depth: u32) -> Res {
        if depth > 12 {
            return Res::Dynamic;
        }
        if let Res::Def(f, _) | Res::Module(f) = base {
            consulted(*f);
        }
        match base {
            Res::Def(f, d) => self.class_attr(*f, *d, name, depth),
            Res::Module(m) => self.module_attr(*m, name, depth),
            Res::Package(p) => self.package_attr(p, name),
            other => other.clone(),
        }
    }

    /// Member `name` of definition `d` of file `f`: its own, then (C family) an out-of-class
    /// method, then inherited; dynamic when `d` is no class or module.
    fn class_attr(&self, f: u32, d: u32, name: &str, depth: u32) -> Res {
        let fd = &self.files[f as usize];
        let def = &fd.raw.defs[d as usize];
        if !matches!(def.kind, DefKind::Class | DefKind::Module) {
            return Res::Dynamic;
        }
        let q = format!("{}.{}", def.local, name);
        if let Some(&i) = self.t(f as usize).local_index.get(q.as_str()) {
            return Res::Def(f, i);
        }
        if let Some(&(df, dd)) = self.sym.def_by_qual.get(&format!(
            "{}.{}",
            self.sym.quals[f as usize][d as usize], name
        )) {
            return Res::Def(df, dd);
        }
        if fd.lang.is_c_family() {
            if let Some(r) = self.c_method(&def.local, name) {
                return r;
            }
        }
        self.inherited_attr(f, d, name, depth)
    }

    /// Member `name` as the bases of class `d` of file `f` define it, in base order.
    fn inherited_attr(&self, f: u32, d: u32, name: &str, depth: u32) -> Res {
        let def = &self.files[f as usize].raw.defs[d as usize];
        for base in &def.bases {
            let segs: Vec<&str> = base.split('.').collect();
            let mut r = self.lookup_name(f, def.parent, segs[0], depth + 1);
            for s in &segs[1..] {
                r = self.attr(&r, s, depth + 1);
            }
            if matches!(r, Res::Def(..)) && r != Res::Def(f, d) {
                let found = self.attr(&r, name, depth + 1);
                if matches!(found, Res::Def(..)) {
                    return found;
                }
            }
        }
        Res::Dynamic
    }

    /// Name `name` in module file `m`: a definition, an import binding, a submodule or
    /// package, else through its star re-exports.
    fn module_attr(&self, m: u32, name: &str, depth: u32) -> Res {
        let fd = &self.files[m as usize];
        let mi = m as usize;
        if let Some(&i) = self.t(mi).local_index.get(name) {
            return Res::Def(m, i);
        }
        if let Some(bs) = self.t(mi).bindings.get(&(0, name)) {
            let (bi, truncate) = bs[0];
            let r = self.resolve_binding(m, bi, truncate, depth + 1);
            if r != Res::NotFound {
                return r;
            }
        }
        // `import x from './m'` of a module with no default export: a CommonJS module,
        // whose `module.exports` Node hands over as the default.
        if name == "default" && fd.lang.is_js() {
            return Res::Module(m);
        }
        let base = children_base(fd);
        let sub = if base.is_empty() {
            name.to_string()
        } else {
            format!("{base}.{name}")
        };
        if let Some(&s) = self.sym.module_by_qual.get(&sub) {
            return Res::Module(s);
        }
        if self.sym.packages.contains(&sub) {
            return Res::Package(sub);
        }
        if self.t(mi).locals.contains(&(0, name)) {
            return Res::Dynamic;
        }
        if fd.lang.is_c_family() {
            // Includes are followed one level only: transitive include graphs are
            // large and cyclic, and the unique-definition rule covers the rest.
            return Res::Dynamic;
        }
        self.star_attr(m, name, depth)
    }

    /// Name `name` through the star re-exports of module file `m`; when none has it, not
    /// found in Python and dynamic elsewhere.
    fn star_attr(&self, m: u32, name: &str, depth: u32) -> Res {
        let fd = &self.files[m as usize];
        let mi = m as usize;
        // An `index.ts` re-exports dozens of modules (`export * from './a'`): a name
        // missing from one is looked for in the next.
        let mut external = false;
        for &bi in &self.t(mi).stars {
            let sm = self.resolve_binding(m, bi, false, depth + 1);
            match self.attr(&sm, name, depth + 1) {
                r @ (Res::Def(..) | Res::Module(_)) => return r,
                Res::External | Res::Dynamic if fd.lang.is_js() => external = true,
                Res::External | Res::Dynamic => return Res::External,
                _ => {}
            }
        }
        if external {
            return Res::External;
        }
        if fd.lang == Lang::Python {
            Res::NotFound
        } else {
            Res::Dynamic
        }
    }

    /// Name `name` in package `p`: a definition, a module or a subpackage.
    fn package_attr(&self, p: &str, name: &str) -> Res {
        let q = format!("{p}.{name}");
        if let Some(&(df, dd)) = self.sym.def_by_qual.get(&q) {
            return Res::Def(df, dd);
        }
        if let Some(&m) = self.sym.module_by_qual.get(&q) {
            return Res::Module(m);
        }
        if self.sym.packages.contains(&q) {
            return Res::Package(q);
        }
        Res::NotFound
    }
}
