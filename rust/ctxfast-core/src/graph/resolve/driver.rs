//! The driver: one file's references and import bindings resolved into `invoke`/`import`
//! edges, reference-site nodes and unresolved names, plus its `contain` edges, recording
//! which other files were read on the way ([`super::Resolved::deps`]). PHP, Ruby and the
//! generic tier resolve references by their own rules; every other language walks the
//! reference path through the shared lookup.

use super::java::split_arg_types;
use super::symbols::DefAt;
use super::{Edge, EdgeKind, RefNode, Res, Resolved, Resolver, UnresolvedName, CONSULTED};
use crate::graph::lang::Lang;
use crate::graph::raw::{RawBinding, RawFile, RawRef, Target, NO_ARITY};
use crate::graph::store;
use rustc_hash::{FxHashMap, FxHashSet};

/// A language's own rules for a reference: the definition it reaches, if any.
type OwnRules<'r> = fn(&Resolver<'r>, u32, &RawRef) -> Option<DefAt>;

/// One file's resolution as it is built, with the sets that keep each site node and each
/// edge once.
struct FileOut<'q> {
    out: Resolved,
    /// The qualname of each definition of the file: a site is named `qualname:line`.
    quals: &'q [String],
    seen_nodes: FxHashSet<String>,
    /// The key of each (scope, line) site emitted so far: a site is named by its scope's
    /// qualname and line, so one key serves every edge from it without formatting again.
    site_keys: FxHashMap<(u32, u32), i64>,
    seen_edges: FxHashSet<Edge>,
}

impl<'q> FileOut<'q> {
    /// An empty resolution for the file whose definitions are named `quals`.
    fn new(quals: &'q [String]) -> Self {
        FileOut {
            out: Resolved::default(),
            quals,
            seen_nodes: FxHashSet::default(),
            site_keys: FxHashMap::default(),
            seen_edges: FxHashSet::default(),
        }
    }

    /// The node key of the reference site at (`scope`, `line`), adding its node the first
    /// time the site is seen.
    fn site(&mut self, scope: u32, name: &str, line: u32, col: u32) -> i64 {
        if let Some(&key) = self.site_keys.get(&(scope, line)) {
            return key;
        }
        let q = &self.quals[scope as usize];
        let id = format!("{q}:{line}");
        let key = store::node_key(&id);
        if self.seen_nodes.insert(id.clone()) {
            self.out.ref_nodes.push(RefNode {
                id,
                key,
                name: name.to_string(),
                qualname: q.clone(),
                line,
                col,
            });
        }
        self.site_keys.insert((scope, line), key);
        key
    }

    /// Adds edge `e` unless already there, noting file `into` as read when it is new.
    fn edge(&mut self, e: Edge, into: Option<u32>) {
        self.out.add_edge(&mut self.seen_edges, e, into);
    }
}

/// Where walking a reference's path through the lookup got to.
// Four independent facts that [`Resolver::keeps_edge`] combines, not states of one machine.
#[allow(clippy::struct_excessive_bools)]
struct Walk {
    /// The value reached so far.
    cur: Res,
    /// The last project definition on the path (the edge's target).
    last: Option<DefAt>,
    /// True when every segment walked resolved.
    resolved_all: bool,
    /// True when the name is reported unresolved (Python only).
    unresolved: bool,
    /// True when a segment after the head resolved.
    extra_resolved: bool,
    /// True while `cur` is an instance reached through a typed attribute (`self.x`): calling
    /// it is not a call of its class.
    instance: bool,
}

impl<'r> Resolver<'r> {
    /// Resolves every reference and binding of file `f`, plus its contain edges.
    pub fn resolve_file(&self, f: u32) -> Resolved {
        let fd = &self.files[f as usize];
        let mut out = FileOut::new(&self.sym.quals[f as usize]);
        CONSULTED.with(|c| {
            let mut c = c.borrow_mut();
            c.0 = f;
            c.1.clear();
        });
        self.contain_edges(f, &mut out);
        let own_rules = Self::own_rules(fd.lang);
        for r in &fd.raw.refs {
            // PHP and Ruby name things their own way (namespaces, reopened constants), the
            // generic tier by bare names: each has its own rules, and an edge only where
            // they reach a project definition.
            if let Some(rules) = own_rules {
                self.own_rules_ref(f, r, rules, &mut out);
                continue;
            }
            self.path_ref(f, r, &mut out);
        }
        for (bi, b) in fd.raw.bindings.iter().enumerate() {
            self.import_binding(f, bi as u32, b, &mut out);
        }
        let mut out = out.out;
        CONSULTED.with(|c| out.deps.extend(c.borrow_mut().1.drain()));
        out.deps.remove(&f);
        out
    }

    /// The resolution rules of a language that does not walk the shared lookup (PHP, Ruby, the
    /// generic tier), or `None`.
    fn own_rules(lang: Lang) -> Option<OwnRules<'r>> {
        match lang {
            Lang::Php => Some(Resolver::php_ref as OwnRules<'r>),
            Lang::Ruby => Some(Resolver::rb_ref as OwnRules<'r>),
            Lang::Tagged(_) => Some(Resolver::tags_ref as OwnRules<'r>),
            _ => None,
        }
    }

    /// The `contain` edge of every definition of file `f` to its enclosing definition.
    fn contain_edges(&self, f: u32, out: &mut FileOut<'_>) {
        let fd = &self.files[f as usize];
        for (di, d) in fd.raw.defs.iter().enumerate().skip(1) {
            let parent = d.parent.min(di as u32 - 1);
            let e = Edge {
                src: self.def_key(f, di as u32),
                dst: self.def_key(f, parent),
                kind: EdgeKind::Contain,
            };
            out.edge(e, None);
        }
    }

    /// The invoke edge of reference `r` where the language's own `rules` reach a project
    /// definition.
    fn own_rules_ref(&self, f: u32, r: &RawRef, rules: OwnRules<'r>, out: &mut FileOut<'_>) {
        if let Some((df, dd)) = rules(self, f, r) {
            let name = r.path.last().map_or("", String::as_str);
            let e = Edge {
                src: out.site(r.scope, name, r.line, r.col),
                dst: self.def_key(df, dd),
                kind: EdgeKind::Invoke,
            };
            out.edge(e, Some(df));
        }
    }

    /// Resolves reference `r` of file `f` by walking its path through the shared lookup:
    /// an invoke edge, an unresolved name (Python), or nothing.
    fn path_ref(&self, f: u32, r: &RawRef, out: &mut FileOut<'_>) {
        let fd = &self.files[f as usize];
        let python = fd.lang == Lang::Python;
        let (path, arg_types) = split_arg_types(&r.path);
        let head = path[0].as_str();
        let via_self = names_self(&fd.raw, r.scope, head);
        // An instance held by a typed local behaves as `self` does: only its members
        // (`x.method()`) get edges, never the class itself.
        let typed = if via_self {
            None
        } else if (python || fd.lang == Lang::Java || fd.lang.is_js())
            && head == "super"
            && path.len() > 1
        {
            self.super_base(f, r.scope, &path[1])
        } else {
            self.typed_local(f, r.scope, head)
                .or_else(|| self.typed_field(f, r.scope, head).filter(|_| !python))
        };
        let self_only = via_self || typed.is_some();
        let mut start = typed.unwrap_or_else(|| self.lookup_name(f, r.scope, head, 0));
        if fd.lang.is_js() && path.len() == 1 {
            start = self.js_module_export(start);
        }
        let mut w = self.walk_path(start, &path[1..], python);
        if fd.lang == Lang::Java && r.arity != NO_ARITY {
            // Overloads share a qualname: the call's argument count picks one.
            let picked = self.overload(&w.cur, r.arity, &arg_types);
            if picked != w.cur {
                w.last = Self::target(&picked);
            }
        }
        if fd.lang.is_js() {
            let imp = self.implementation(&w.cur);
            if imp != w.cur {
                w.last = Self::target(&imp);
            }
        }
        let name = path.last().map_or("", String::as_str);
        if w.unresolved {
            let node = out.site(r.scope, name, r.line, r.col);
            out.out.unresolved.push(UnresolvedName {
                name: path.join("."),
                node,
                line: r.line,
                col: r.col,
            });
            return;
        }
        if let (true, Some((df, dd))) = (self.keeps_edge(fd.lang, &w, self_only), w.last) {
            let e = Edge {
                src: out.site(r.scope, name, r.line, r.col),
                dst: self.def_key(df, dd),
                kind: EdgeKind::Invoke,
            };
            out.edge(e, Some(df));
        }
    }

    /// Walks the segments after a reference's head (`rest`) from `cur`, the head's value.
    fn walk_path(&self, cur: Res, rest: &[String], python: bool) -> Walk {
        let last = Self::target(&cur);
        let mut w = Walk {
            resolved_all: last.is_some(),
            unresolved: python && cur == Res::NotFound,
            last,
            cur,
            extra_resolved: false,
            instance: false,
        };
        if w.last.is_some() {
            self.walk_members(&mut w, rest, python);
        } else if matches!(w.cur, Res::Package(_)) {
            self.walk_package(&mut w, rest, python);
        }
        w
    }

    /// Follows members and calls (`a.b().c`) from a resolved head, stopping at the first
    /// segment that resolves to no project definition.
    fn walk_members(&self, w: &mut Walk, rest: &[String], python: bool) {
        for seg in rest {
            if seg == "()" {
                // The value a call returns: an instance of its declared return class.
                if let Some(c) = self.returned_class(&w.cur) {
                    w.cur = c;
                    continue;
                }
                w.resolved_all = false;
                break;
            }
            let prev_is_module = matches!(w.cur, Res::Module(_) | Res::Package(_));
            let typed = self.typed_attr(&w.cur, seg, 0);
            w.instance = typed.is_some();
            let next = typed.unwrap_or_else(|| self.attr(&w.cur, seg, 0));
            if let Some(t) = Self::target(&next) {
                w.last = Some(t);
                w.extra_resolved = true;
                w.cur = next;
            } else {
                w.resolved_all = false;
                w.unresolved = python && next == Res::NotFound && prev_is_module;
                break;
            }
        }
    }

    /// `import a.b` then `a.b.f()` through a namespace package: follows the segments while
    /// they name packages, up to a project definition.
    fn walk_package(&self, w: &mut Walk, rest: &[String], python: bool) {
        let mut c = w.cur.clone();
        for seg in rest {
            c = self.attr(&c, seg, 0);
            if let Some(t) = Self::target(&c) {
                w.last = Some(t);
                w.resolved_all = true;
            } else if !matches!(c, Res::Package(_)) {
                w.resolved_all = false;
                w.unresolved = python && c == Res::NotFound;
                break;
            }
        }
    }

    /// Whether a walked reference is an invoke edge. Outside Python a call is an edge only
    /// when its whole path resolves: the prefix of `param.Reset()` or `field.serialize()` is
    /// the receiver, never the callee.
    fn keeps_edge(&self, lang: Lang, w: &Walk, self_only: bool) -> bool {
        let python = lang == Lang::Python;
        match &w.last {
            Some(_) if w.instance && w.resolved_all => false,
            Some(_) if self_only && !w.extra_resolved => false,
            // Go has no constructors: `T(x)` converts, it calls nothing.
            Some(_) if lang == Lang::Go && self.is_class(&w.cur) => false,
            Some(_) if !python => w.resolved_all,
            Some(_) => w.resolved_all || !self_only,
            None => false,
        }
    }

    /// Resolves import binding `bi` (`b`) of file `f`: an import edge to a project
    /// definition, or an unresolved name (Python).
    fn import_binding(&self, f: u32, bi: u32, b: &RawBinding, out: &mut FileOut<'_>) {
        let fd = &self.files[f as usize];
        // A name bound to a path read in the file itself (an empty module: `export default
        // X`, `var dQuote = utils.dQuote`) imports nothing.
        if fd.lang.is_js()
            && matches!(&b.target, Target::Symbol { module, .. } if module.is_empty())
        {
            return;
        }
        let python = fd.lang == Lang::Python;
        let r = match fd.lang {
            Lang::Php => self
                .php_binding(f, bi)
                .map_or(Res::External, |(df, dd)| Res::Def(df, dd)),
            _ => self.resolve_binding(f, bi, false, 0),
        };
        let name = b.name.rsplit('.').next().unwrap_or(&b.name);
        let name = if name == "*" { "*" } else { name };
        match Self::target(&r) {
            Some((df, dd)) => {
                let e = Edge {
                    src: out.site(b.scope, name, b.line, b.col),
                    dst: self.def_key(df, dd),
                    kind: EdgeKind::Import,
                };
                out.edge(e, Some(df));
            }
            None if python && r == Res::NotFound => {
                let node = out.site(b.scope, name, b.line, b.col);
                out.out.unresolved.push(UnresolvedName {
                    name: import_text(&b.target),
                    node,
                    line: b.line,
                    col: b.col,
                });
            }
            None => {}
        }
    }
}

/// True when `head` is a `self` name of `scope` or of a scope enclosing it: the reference
/// goes through the instance.
fn names_self(raw: &RawFile, scope: u32, head: &str) -> bool {
    raw.defs[scope as usize]
        .self_names
        .iter()
        .any(|s| s == head)
        || {
            let mut s = scope;
            let mut hit = false;
            while s != 0 {
                let d = &raw.defs[s as usize];
                if d.self_names.iter().any(|x| x == head) {
                    hit = true;
                    break;
                }
                s = if d.parent < s { d.parent } else { 0 };
            }
            hit
        }
}

/// An unresolved import as written: leading dots for its level, then the module (and name).
fn import_text(target: &Target) -> String {
    match target {
        Target::Symbol {
            module,
            level,
            name,
        } => {
            format!("{}{}.{}", ".".repeat(*level as usize), module, name)
        }
        Target::Module { module, level } | Target::Star { module, level } => {
            format!("{}{}", ".".repeat(*level as usize), module)
        }
    }
}
