//! PHP name resolution. Classes and functions are named by namespace (`App\Http\Kernel` is
//! qualname `App.Http.Kernel`, see `lang::php`), so a name resolves as PHP resolves it: a
//! fully qualified `\A\B` as is, a first segment imported by `use` through its import, any
//! other name inside the file's namespace. That is also what PSR-4 autoloading does, without
//! reading `composer.json`: the namespace a file declares is the one its path maps to. A
//! name no rule finds (a file without a namespace, a global function) reaches the project's
//! only class or function of that name declared outside any namespace
//! ([`super::Symbols::named`]), as PHP falls back to the global name.
//!
//! Members are found on the class and then its ancestors (`extends`, `implements` and used
//! traits), through `$this`, `self::`, `static::`, `parent::`, a class name, or a variable or
//! property whose declared or constructed class is known.

use super::symbols::DefAt;
use super::{consulted, Resolver};
use crate::graph::lang::Lang;
use crate::graph::raw::{DefKind, RawRef, Target, NO_ARITY};

/// How far member lookup climbs the ancestors.
const MAX_ANCESTORS: u32 = 8;

impl Resolver<'_> {
    /// The project definition a PHP reference reaches (see `lang::php` for the path forms).
    pub(super) fn php_ref(&self, f: u32, r: &RawRef) -> Option<DefAt> {
        let path = &r.path;
        let head = path[0].as_str();
        // `self::isDocker()` calls the method even where a property `$isDocker` shares its
        // name (and so its qualname); `self::FOO` reads the constant.
        let call = r.arity != NO_ARITY;
        match (head, path.len()) {
            ("new", 2) => self.php_class(f, r.scope, r.line, &path[1]),
            (_, 1) => self.php_function(f, r.line, head),
            ("$this" | "self" | "static", 2) => {
                let class = self.php_enclosing_class(f, r.scope)?;
                self.php_member(class, &path[1], call, 0)
            }
            ("parent", 2) => {
                let class = self.php_enclosing_class(f, r.scope)?;
                let base = *self.php_bases(class).first()?;
                self.php_member(base, &path[1], call, 0)
            }
            ("$this", 3) => {
                let class = self.php_enclosing_class(f, r.scope)?;
                let held = self.php_typed_attr(class, &path[1], 0)?;
                self.php_member(held, &path[2], call, 0)
            }
            (h, 2) if h.starts_with('$') => {
                let class = self.t(f as usize).typed_locals.get(&(r.scope, &h[1..]))?;
                let class = self.php_class(f, r.scope, r.line, class)?;
                self.php_member(class, &path[1], call, 0)
            }
            (_, 2) => {
                let class = self.php_class(f, r.scope, r.line, head)?;
                self.php_member(class, &path[1], call, 0)
            }
            _ => None,
        }
    }

    /// What a `use` import (binding `bi` of file `f`) names, when it is in the project.
    pub(super) fn php_binding(&self, f: u32, bi: u32) -> Option<DefAt> {
        let b = &self.files[f as usize].raw.bindings[bi as usize];
        let Target::Symbol { module, name, .. } = &b.target else {
            return None;
        };
        let full = if module.is_empty() {
            name.clone()
        } else {
            format!("{module}.{name}")
        };
        self.sym.def_by_qual.get(&full).copied().or_else(|| {
            module
                .is_empty()
                .then(|| self.php_named(name, None))
                .flatten()
        })
    }

    /// The fully qualified, dotted name `written` (a class or function name as written on
    /// `line` of file `f`) denotes, and whether a `use` import gave it. Both the namespace
    /// and the imports are those of the namespace declaration the line is in.
    fn php_full_name(&self, f: u32, line: u32, written: &str) -> (String, bool) {
        if let Some(abs) = written.strip_prefix('\\') {
            return (abs.replace('\\', "."), false);
        }
        let (first, rest) = written.split_once('\\').unwrap_or((written, ""));
        let fd = &self.files[f as usize];
        let (block, namespace) = fd.raw.namespace_at(line);
        let import = self
            .t(f as usize)
            .bindings
            .get(&(0, first))
            .into_iter()
            .flatten()
            .map(|&(bi, _)| &fd.raw.bindings[bi as usize])
            .find(|b| fd.raw.namespace_at(b.line).0 == block);
        if let Some(b) = import {
            if let Target::Symbol { module, name, .. } = &b.target {
                let mut full = if module.is_empty() {
                    name.clone()
                } else {
                    format!("{module}.{name}")
                };
                if !rest.is_empty() {
                    full = format!("{full}.{}", rest.replace('\\', "."));
                }
                return (full, true);
            }
        }
        let dotted = written.replace('\\', ".");
        if namespace.is_empty() {
            (dotted, false)
        } else {
            (format!("{namespace}.{dotted}"), false)
        }
    }

    /// The class (or interface, trait, enum) `written` names in `scope`, on `line`, of file
    /// `f`.
    fn php_class(&self, f: u32, scope: u32, line: u32, written: &str) -> Option<DefAt> {
        match written.to_ascii_lowercase().as_str() {
            "self" | "static" => return self.php_enclosing_class(f, scope),
            "parent" => {
                let class = self.php_enclosing_class(f, scope)?;
                return self.php_bases(class).first().copied();
            }
            _ => {}
        }
        let (full, imported) = self.php_full_name(f, line, written);
        if let Some(&at) = self.sym.def_by_qual.get(&full) {
            if self.kind(at) == DefKind::Class {
                return Some(at);
            }
        }
        // An imported name that is not in the project is a dependency's, whatever the
        // project happens to define under the same short name.
        if imported {
            return None;
        }
        let short = written.rsplit('\\').next().unwrap_or(written);
        self.php_named(short, Some(DefKind::Class))
    }

    /// The function `written` calls from `line` of file `f`: in the namespace, imported, or
    /// (as PHP falls back to global functions) the project's only function of that name.
    fn php_function(&self, f: u32, line: u32, written: &str) -> Option<DefAt> {
        let (full, imported) = self.php_full_name(f, line, written);
        if let Some(&at) = self.sym.def_by_qual.get(&full) {
            if self.kind(at) == DefKind::Function {
                return Some(at);
            }
        }
        if imported {
            return None;
        }
        let short = written.rsplit('\\').next().unwrap_or(written);
        self.php_named(short, Some(DefKind::Function))
    }

    /// The project's only PHP class or top-level function named `name` (of `kind`, if given)
    /// outside any namespace: the global name PHP falls back to. A definition inside another
    /// namespace is never reached by its short name (`\rmdir()` in a file that mocks
    /// `League\Flysystem\Local\rmdir` calls PHP's own).
    fn php_named(&self, name: &str, kind: Option<DefKind>) -> Option<DefAt> {
        let all = self
            .sym
            .named
            .get(&(Lang::Php.linkage_family(), name.to_string()))?;
        let mut hits = all
            .iter()
            .filter(|&&(f, d)| {
                let raw = &self.files[f as usize].raw;
                raw.namespace_at(raw.defs[d as usize].line).1.is_empty()
            })
            .filter(|&&at| kind.is_none_or(|k| self.kind(at) == k));
        match (hits.next(), hits.next()) {
            (Some(&at), None) => Some(at),
            _ => None,
        }
    }

    fn kind(&self, (f, d): DefAt) -> DefKind {
        self.files[f as usize].raw.defs[d as usize].kind
    }

    /// The class definition enclosing `scope` of file `f`.
    fn php_enclosing_class(&self, f: u32, scope: u32) -> Option<DefAt> {
        let defs = &self.files[f as usize].raw.defs;
        let mut s = scope;
        while s != 0 {
            let d = &defs[s as usize];
            if d.kind == DefKind::Class {
                return Some((f, s));
            }
            s = if d.parent < s { d.parent } else { 0 };
        }
        None
    }

    /// The project classes `class` extends, implements or uses (as traits), in that order.
    fn php_bases(&self, (f, d): DefAt) -> Vec<DefAt> {
        consulted(f);
        let def = &self.files[f as usize].raw.defs[d as usize];
        def.bases
            .iter()
            .filter_map(|b| self.php_class(f, def.parent, def.line, b))
            .filter(|&at| at != (f, d))
            .collect()
    }

    /// Member `name` (method, constant, property) of `class` or of its nearest ancestor
    /// declaring it: for a `call` the method, else the constant or property, where the two
    /// share a name. A body is what runs: a method's abstract declaration (an interface's, a
    /// trait's `abstract function`) is the answer only when no class or trait on the way has
    /// one with a body (Monolog's handlers implement `FormattableHandlerInterface` and use
    /// `FormattableHandlerTrait`; a call runs the trait's method).
    fn php_member(&self, class: DefAt, name: &str, call: bool, depth: u32) -> Option<DefAt> {
        self.php_member_in(class, name, call, true, depth)
            .or_else(|| self.php_member_in(class, name, call, false, depth))
    }

    fn php_member_in(
        &self,
        class: DefAt,
        name: &str,
        call: bool,
        bodied: bool,
        depth: u32,
    ) -> Option<DefAt> {
        let (f, d) = class;
        consulted(f);
        let q = format!("{}.{name}", self.sym.quals[f as usize][d as usize]);
        let mut defs = self.sym.defs_of(&q).peekable();
        if let Some(&first) = defs.peek() {
            let fits = |at: DefAt| (self.kind(at) == DefKind::Function) == call;
            let found = defs.find(|&at| fits(at)).unwrap_or(first);
            if !bodied || !self.php_abstract(found) {
                return Some(found);
            }
        }
        if depth >= MAX_ANCESTORS {
            return None;
        }
        self.php_bases(class)
            .into_iter()
            .find_map(|b| self.php_member_in(b, name, call, bodied, depth + 1))
    }

    /// Whether `at` is a method without a body: declared `abstract`, or in an interface.
    fn php_abstract(&self, (f, d): DefAt) -> bool {
        let defs = &self.files[f as usize].raw.defs;
        let def = &defs[d as usize];
        if def.kind != DefKind::Function {
            return false;
        }
        let words = |sig: &str, w: &str| {
            sig.split_whitespace()
                .take_while(|&x| x != "function")
                .any(|x| x == w)
        };
        words(&def.signature, "abstract")
            || words(&defs[def.parent as usize].signature, "interface")
    }

    /// The class property `name` of `class` (or of an ancestor) is declared or assigned to
    /// hold.
    fn php_typed_attr(&self, class: DefAt, name: &str, depth: u32) -> Option<DefAt> {
        let (f, d) = class;
        consulted(f);
        if let Some(c) = self.t(f as usize).typed_attrs.get(&(d, name)) {
            let def = &self.files[f as usize].raw.defs[d as usize];
            return self.php_class(f, def.parent, def.line, c);
        }
        if depth >= MAX_ANCESTORS {
            return None;
        }
        self.php_bases(class)
            .into_iter()
            .find_map(|b| self.php_typed_attr(b, name, depth + 1))
    }
}
