//! Ruby name resolution. Constants are global and classes are reopened across files, so
//! names resolve through the repository-wide map of local qualnames
//! ([`super::Symbols::rb_by_local`]) rather than through one file's definitions:
//!
//! * a constant path (`Utils`, `Rack::Utils`) is looked up as Ruby does, in each enclosing
//!   `module`/`class` from the innermost out, then at the top level;
//! * a method is looked up on its class (every file reopening it), then on the class's
//!   superclass and mixins (`include`, `extend`, `prepend`);
//! * an implicit-receiver or `self.` call looks on the enclosing class, then for a top-level
//!   method, then for the project's only method of that name (a helper mixed in by a
//!   framework, a DSL);
//! * `x.m` through a local or `@x` assigned `Foo.new` looks on `Foo`; `Foo.new` reaches `Foo`.
//!
//! When several files define a constant, the one at the conventional path
//! (`Rack::MockRequest` in `rack/mock_request.rb`) stands for it.

use super::symbols::DefAt;
use super::{beside, consulted, FileData, Res, Resolver};
use crate::graph::lang::{module_qualname, Lang};
use crate::graph::raw::{DefKind, RawDef, RawRef};

/// How far method lookup climbs superclasses and mixins.
const MAX_ANCESTORS: u32 = 6;

impl Resolver<'_> {
    /// The project definition a Ruby reference reaches (see `lang::ruby` for the path forms).
    pub(super) fn rb_ref(&self, f: u32, r: &RawRef) -> Option<DefAt> {
        let path: Vec<&str> = r.path.iter().map(String::as_str).collect();
        let head = path[0];
        let nesting = self.rb_nesting(f, r.scope);
        if head.starts_with(|c: char| c.is_ascii_uppercase()) {
            for k in (1..=path.len()).rev() {
                let Some(c) = self.rb_const(&nesting, &path[..k]) else {
                    continue;
                };
                return match &path[k..] {
                    [] => self.rb_defining(&c, false),
                    ["new"] => self.rb_defining(&c, true),
                    [m] => self.rb_method(&c, m, Some(true), 0),
                    _ => None,
                };
            }
            return None;
        }
        match path.as_slice() {
            [m] | ["self", m] => {
                let singleton = self.rb_singleton_scope(f, r.scope);
                self.rb_self_call(&nesting, m, singleton)
            }
            [recv, m] => {
                let class = self.rb_held(f, r.scope, recv)?;
                self.rb_method(&class, m, Some(false), 0)
            }
            _ => None,
        }
    }

    /// The local qualnames of the classes and modules enclosing `scope` of file `f`,
    /// innermost first.
    fn rb_nesting(&self, f: u32, scope: u32) -> Vec<String> {
        let defs = &self.files[f as usize].raw.defs;
        let mut out = vec![];
        let mut s = scope;
        while s != 0 {
            let d = &defs[s as usize];
            if d.kind == DefKind::Class {
                out.push(d.local.clone());
            }
            s = if d.parent < s { d.parent } else { 0 };
        }
        out
    }

    /// The local qualname the constant path `segs` names from inside `nesting`.
    fn rb_const(&self, nesting: &[String], segs: &[&str]) -> Option<String> {
        let tail = segs.join(".");
        nesting
            .iter()
            .map(|n| format!("{n}.{tail}"))
            .chain(std::iter::once(tail.clone()))
            .find(|c| {
                self.sym.rb_by_local.get(c).is_some_and(|v| {
                    v.iter()
                        .any(|&at| matches!(self.rb_kind(at), DefKind::Class | DefKind::Var))
                })
            })
    }

    fn rb_kind(&self, (f, d): DefAt) -> DefKind {
        self.files[f as usize].raw.defs[d as usize].kind
    }

    /// The definition that stands for constant `local`: of its definitions (a class or
    /// module reopened in several files), the one in the file its name maps to by the
    /// `lib/` convention, else the first. `class_only` skips constants that are values.
    fn rb_defining(&self, local: &str, class_only: bool) -> Option<DefAt> {
        let defs: Vec<DefAt> = self
            .sym
            .rb_by_local
            .get(local)?
            .iter()
            .copied()
            .filter(|&at| match self.rb_kind(at) {
                DefKind::Class => true,
                DefKind::Var => !class_only,
                _ => false,
            })
            .collect();
        let conventional = snake_path(local);
        defs.iter()
            .copied()
            .find(|&(f, _)| self.files[f as usize].module == conventional)
            .or_else(|| defs.first().copied())
    }

    /// An implicit-receiver (or `self.`) call of `m` from inside `nesting`.
    fn rb_self_call(&self, nesting: &[String], m: &str, singleton: bool) -> Option<DefAt> {
        if let Some(class) = nesting.first() {
            if let Some(at) = self.rb_method(class, m, Some(singleton), 0) {
                return Some(at);
            }
        }
        if let Some(at) = self.rb_function(m, None) {
            return Some(at);
        }
        let all = self
            .sym
            .named
            .get(&(Lang::Ruby.linkage_family(), m.to_string()))?;
        let mut funcs = all
            .iter()
            .filter(|&&at| self.rb_kind(at) == DefKind::Function);
        match (funcs.next(), funcs.next()) {
            (Some(&at), None) => Some(at),
            _ => None,
        }
    }

    /// The method with local qualname `local`. A class may define two under one qualname:
    /// a singleton method (`def self.settings`, or one in `class << self`) beside
    /// `def settings` (Sinatra), or an `attr_writer :x` beside `def x` (Faraday); a `def` is
    /// preferred, and of those the one on the side the call runs on (`singleton`: the class
    /// itself, as in `Foo.m` or a singleton method's body; else an instance), then the
    /// first.
    fn rb_function(&self, local: &str, singleton: Option<bool>) -> Option<DefAt> {
        self.sym
            .rb_by_local
            .get(local)?
            .iter()
            .copied()
            .filter(|&at| self.rb_kind(at) == DefKind::Function)
            .enumerate()
            .max_by_key(|&(i, at)| {
                let def = self.rb_def(at);
                let is_def = def.signature.trim_start().starts_with("def ");
                let side = singleton.is_some_and(|s| s == def.singleton);
                (is_def, side, std::cmp::Reverse(i))
            })
            .map(|(_, at)| at)
    }

    fn rb_def(&self, (f, d): DefAt) -> &RawDef {
        &self.files[f as usize].raw.defs[d as usize]
    }

    /// Whether code in `scope` of file `f` runs with the class itself as `self`: in a
    /// singleton method or directly in a class or module body.
    fn rb_singleton_scope(&self, f: u32, scope: u32) -> bool {
        let defs = &self.files[f as usize].raw.defs;
        let mut s = scope;
        while s != 0 {
            let d = &defs[s as usize];
            match d.kind {
                DefKind::Function => return d.singleton,
                DefKind::Class => return true,
                _ => {}
            }
            s = if d.parent < s { d.parent } else { 0 };
        }
        false
    }

    /// Method `m` of the class or module `class` (a local qualname), or of its nearest
    /// ancestor defining it.
    fn rb_method(
        &self,
        class: &str,
        m: &str,
        singleton: Option<bool>,
        depth: u32,
    ) -> Option<DefAt> {
        if let Some(at) = self.rb_function(&format!("{class}.{m}"), singleton) {
            return Some(at);
        }
        if depth >= MAX_ANCESTORS {
            return None;
        }
        for &(f, d) in self.sym.rb_by_local.get(class)? {
            let def = &self.files[f as usize].raw.defs[d as usize];
            if def.kind != DefKind::Class || def.bases.is_empty() {
                continue;
            }
            consulted(f);
            let nesting = self.rb_nesting(f, def.parent);
            for base in &def.bases {
                let segs: Vec<&str> = base.split('.').collect();
                let Some(b) = self.rb_const(&nesting, &segs) else {
                    continue;
                };
                if b != class {
                    if let Some(at) = self.rb_method(&b, m, singleton, depth + 1) {
                        return Some(at);
                    }
                }
            }
        }
        None
    }

    /// The class a local (`x`) or instance variable (`@x`) holds where it is read from
    /// `scope` of file `f`, when every assignment gives it the same `Foo.new`.
    fn rb_held(&self, f: u32, scope: u32, recv: &str) -> Option<String> {
        let t = self.t(f as usize);
        let defs = &self.files[f as usize].raw.defs;
        let (written, at_scope) = if recv.starts_with('@') {
            let class = defs[scope as usize].parent;
            (*t.typed_attrs.get(&(class, recv))?, class)
        } else {
            (*t.typed_locals.get(&(scope, recv))?, scope)
        };
        let segs: Vec<&str> = written.split('.').collect();
        self.rb_const(&self.rb_nesting(f, at_scope), &segs)
    }

    /// The project file a `require` (`level` 0, from the load path: `lib/` is stripped from
    /// module names) or `require_relative` (`level` 1, from the requiring file's folder)
    /// names.
    pub(super) fn rb_require(&self, fd: &FileData, path: &str, level: u32) -> Res {
        let full = if level > 0 {
            beside(&fd.rel, path)
        } else {
            path.to_string()
        };
        let module = module_qualname(&format!("{full}.rb"), Lang::Ruby);
        match self.sym.module_by_qual.get(&module) {
            Some(&m) if self.files[m as usize].lang == Lang::Ruby => Res::Module(m),
            _ => Res::External,
        }
    }
}

/// The module name a constant's file has by the `lib/` convention: `Rack.MockRequest` →
/// `rack.mock_request`.
fn snake_path(local: &str) -> String {
    local
        .split('.')
        .map(|seg| {
            let mut out = String::new();
            for (i, c) in seg.char_indices() {
                if c.is_ascii_uppercase() {
                    if i > 0 {
                        out.push('_');
                    }
                    out.push(c.to_ascii_lowercase());
                } else {
                    out.push(c);
                }
            }
            out
        })
        .collect::<Vec<_>>()
        .join(".")
}
