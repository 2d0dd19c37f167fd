//! The driver: one file's references and import bindings resolved into `invoke`/`import`
//! edges, reference-site nodes and unresolved names, plus its `contain` edges, recording
//! which other files were read on the way ([`super::Resolved::deps`]). PHP, Ruby and the
//! generic tier resolve references by their own rules; every other language walks the
//! reference path through the shared lookup.

use super::java::split_arg_types;
use super::symbols::DefAt;
use super::{Edge, EdgeKind, RefNode, Res, Resolved, Resolver, UnresolvedName, CONSULTED};
use crate::graph::lang::Lang;
use crate::graph::raw::{RawRef, Target, NO_ARITY};
use crate::graph::store;
use rustc_hash::{FxHashMap, FxHashSet};

impl Resolver<'_> {
    /// Resolves every reference and binding of file `f`, plus its contain edges.
    pub fn resolve_file(&self, f: u32) -> Resolved {
        let fd = &self.files[f as usize];
        let quals = &self.sym.quals[f as usize];
        let mut out = Resolved::default();
        CONSULTED.with(|c| {
            let mut c = c.borrow_mut();
            c.0 = f;
            c.1.clear();
        });
        let mut seen_nodes: FxHashSet<String> = FxHashSet::default();
        // The key of each (scope, line) site emitted so far: a site is named by its scope's
        // qualname and line, so one key serves every edge from it without formatting again.
        let mut site_keys: FxHashMap<(u32, u32), i64> = FxHashMap::default();
        let mut seen_edges: FxHashSet<Edge> = FxHashSet::default();
        let python = fd.lang == Lang::Python;
        for (di, d) in fd.raw.defs.iter().enumerate().skip(1) {
            let parent = d.parent.min(di as u32 - 1);
            let e = Edge {
                src: self.def_key(f, di as u32),
                dst: self.def_key(f, parent),
                kind: EdgeKind::Contain,
            };
            out.add_edge(&mut seen_edges, e, None);
        }
        let mut emit = |out: &mut Resolved, scope: u32, name: &str, line: u32, col: u32| -> i64 {
            if let Some(&key) = site_keys.get(&(scope, line)) {
                return key;
            }
            let q = &quals[scope as usize];
            let id = format!("{q}:{line}");
            let key = store::node_key(&id);
            if seen_nodes.insert(id.clone()) {
                out.ref_nodes.push(RefNode {
                    id,
                    key,
                    name: name.to_string(),
                    qualname: q.clone(),
                    line,
                    col,
                });
            }
            site_keys.insert((scope, line), key);
            key
        };
        let own_rules = match fd.lang {
            Lang::Php => Some(Resolver::php_ref as fn(&Self, u32, &RawRef) -> Option<DefAt>),
            Lang::Ruby => Some(Resolver::rb_ref as fn(&Self, u32, &RawRef) -> Option<DefAt>),
            Lang::Tagged(_) => Some(Resolver::tags_ref as fn(&Self, u32, &RawRef) -> Option<DefAt>),
            _ => None,
        };
        for r in &fd.raw.refs {
            // PHP and Ruby name things their own way (namespaces, reopened constants), the
            // generic tier by bare names: each has its own rules, and an edge only where
            // they reach a project definition.
            if let Some(rules) = own_rules {
                if let Some((df, dd)) = rules(self, f, r) {
                    let name = r.path.last().map_or("", String::as_str);
                    let e = Edge {
                        src: emit(&mut out, r.scope, name, r.line, r.col),
                        dst: self.def_key(df, dd),
                        kind: EdgeKind::Invoke,
                    };
                    out.add_edge(&mut seen_edges, e, Some(df));
                }
                continue;
            }
            let (path, arg_types) = split_arg_types(&r.path);
            let head = path[0].as_str();
            let via_self = fd.raw.defs[r.scope as usize]
                .self_names
                .iter()
                .any(|s| s == head)
                || {
                    let mut s = r.scope;
                    let mut hit = false;
                    while s != 0 {
                        let d = &fd.raw.defs[s as usize];
                        if d.self_names.iter().any(|x| x == head) {
                            hit = true;
                            break;
                        }
                        s = if d.parent < s { d.parent } else { 0 };
                    }
                    hit
                };
            // An instance held by a typed local behaves as `self` does: only its members
            // (`x.method()`) get edges, never the class itself.
            let typed = if via_self {
                None
            } else if (python || fd.lang == Lang::Java) && head == "super" && path.len() > 1 {
                self.super_base(f, r.scope, &path[1])
            } else {
                self.typed_local(f, r.scope, head)
                    .or_else(|| self.typed_field(f, r.scope, head).filter(|_| !python))
            };
            let self_only = via_self || typed.is_some();
            let mut cur = typed.unwrap_or_else(|| self.lookup_name(f, r.scope, head, 0));
            let mut last = Self::target(&cur);
            let mut resolved_all = last.is_some();
            let mut unresolved = python && cur == Res::NotFound;
            let mut extra_resolved = false;
            // True while `cur` is an instance reached through a typed attribute
            // (`self.x`): calling it is not a call of its class.
            let mut instance = false;
            if last.is_some() {
                for seg in &path[1..] {
                    if seg == "()" {
                        // The value a call returns: an instance of its declared return class.
                        if let Some(c) = self.returned_class(&cur) {
                            cur = c;
                            continue;
                        }
                        resolved_all = false;
                        break;
                    }
                    let prev_is_module = matches!(cur, Res::Module(_) | Res::Package(_));
                    let typed = self.typed_attr(&cur, seg, 0);
                    instance = typed.is_some();
                    let next = typed.unwrap_or_else(|| self.attr(&cur, seg, 0));
                    if let Some(t) = Self::target(&next) {
                        last = Some(t);
                        extra_resolved = true;
                        cur = next;
                    } else {
                        resolved_all = false;
                        unresolved = python && next == Res::NotFound && prev_is_module;
                        break;
                    }
                }
            } else if matches!(cur, Res::Package(_)) {
                // `import a.b` then `a.b.f()` through a namespace package.
                let mut c = cur.clone();
                for seg in &path[1..] {
                    c = self.attr(&c, seg, 0);
                    if let Some(t) = Self::target(&c) {
                        last = Some(t);
                        resolved_all = true;
                    } else if !matches!(c, Res::Package(_)) {
                        resolved_all = false;
                        unresolved = python && c == Res::NotFound;
                        break;
                    }
                }
            }
            if fd.lang == Lang::Java && r.arity != NO_ARITY {
                // Overloads share a qualname: the call's argument count picks one.
                let picked = self.overload(&cur, r.arity, &arg_types);
                if picked != cur {
                    last = Self::target(&picked);
                }
            }
            if fd.lang.is_js() {
                let imp = self.implementation(&cur);
                if imp != cur {
                    last = Self::target(&imp);
                }
            }
            let name = path.last().map_or("", String::as_str);
            if unresolved {
                let node = emit(&mut out, r.scope, name, r.line, r.col);
                out.unresolved.push(UnresolvedName {
                    name: path.join("."),
                    node,
                    line: r.line,
                    col: r.col,
                });
                continue;
            }
            // Outside Python a call is an edge only when its whole path resolves: the prefix of
            // `param.Reset()` or `field.serialize()` is the receiver, never the callee.
            let keep = match &last {
                Some(_) if instance && resolved_all => false,
                Some(_) if self_only && !extra_resolved => false,
                // Go has no constructors: `T(x)` converts, it calls nothing.
                Some(_) if fd.lang == Lang::Go && self.is_class(&cur) => false,
                Some(_) if !python => resolved_all,
                Some(_) => resolved_all || !self_only,
                None => false,
            };
            if let (true, Some((df, dd))) = (keep, last) {
                let e = Edge {
                    src: emit(&mut out, r.scope, name, r.line, r.col),
                    dst: self.def_key(df, dd),
                    kind: EdgeKind::Invoke,
                };
                out.add_edge(&mut seen_edges, e, Some(df));
            }
        }
        for (bi, b) in fd.raw.bindings.iter().enumerate() {
            let r = match fd.lang {
                Lang::Php => self
                    .php_binding(f, bi as u32)
                    .map_or(Res::External, |(df, dd)| Res::Def(df, dd)),
                _ => self.resolve_binding(f, bi as u32, false, 0),
            };
            let name = b.name.rsplit('.').next().unwrap_or(&b.name);
            let name = if name == "*" { "*" } else { name };
            match Self::target(&r) {
                Some((df, dd)) => {
                    let e = Edge {
                        src: emit(&mut out, b.scope, name, b.line, b.col),
                        dst: self.def_key(df, dd),
                        kind: EdgeKind::Import,
                    };
                    out.add_edge(&mut seen_edges, e, Some(df));
                }
                None if python && r == Res::NotFound => {
                    let node = emit(&mut out, b.scope, name, b.line, b.col);
                    let text = match &b.target {
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
                    };
                    out.unresolved.push(UnresolvedName {
                        name: text,
                        node,
                        line: b.line,
                        col: b.col,
                    });
                }
                None => {}
            }
        }
        CONSULTED.with(|c| out.deps.extend(c.borrow_mut().1.drain()));
        out.deps.remove(&f);
        out
    }
}
