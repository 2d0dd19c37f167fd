//! Which lookups a refresh changed the answer to, so that of the files that *can* see a
//! changed interface ([`super::plan::to_resolve`]) only those that make one of them are
//! resolved again.
//!
//! Resolving a Python file is a sequence of lookups of a name in a file — a module's
//! definition, binding or star re-export, a class's member — and every file a lookup reads
//! is recorded in the reader's dependencies (`file_deps`, [`super::resolve::Resolved::deps`]).
//! The name of each lookup comes from the reader's own text (a reference path, an import, a
//! base class) or from the text of a file read on the way (an import `from m import X as Y`
//! read for `Y` goes on with `X`; a class's base expressions; a typed attribute's class).
//! So if a reader's resolution changed, its first changed lookup read a name whose entry
//! changed, in a file among its stored dependencies, and that name is one of the reader's
//! own names or is reached from them through those files' entries
//! ([`Names::may_change`]). Comparing each changed file's old and
//! new interface name by name ([`ChangedNames::add_diff`]) gives those entries; a reader with
//! no such name in reach keeps its stored rows. In a package that re-exports through
//! `__init__` modules (sympy) nearly every file *can* see a changed core module, while few
//! look up a name that changed there.
//!
//! A definition that only moved lines is handled apart: every lookup still finds the same
//! definition, only its node key (`qualname:line`) is new, so the stored edges into its old
//! key are pointed at the new one ([`ChangedNames::moved`]) and their files are not
//! resolved again. Going by its name would resolve again every file reading any `__new__`
//! of sympy whenever one of them moved; resolving again the files with an edge into it
//! would still resolve most of sympy when its core modules shift a few lines.
//!
//! A module that appears or disappears is found by its name, through any file (or none,
//! for a namespace package): its module name's segments are changed for every reader
//! ([`ChangedNames::global`]). Anything else this does not model makes the set
//! [`ChangedNames::any`] and every file that can see the change is resolved again: a Java
//! package clause, a file whose previous interface is unknown. A star import added or
//! removed exposes a whole module's names: every file that read the file holding it is
//! resolved again.

use super::lang::Lang;
use super::raw::{DefKind, RawBinding, RawFile, Target};
use super::resolve::{qualnames_of, FileData};
use super::store;
use rustc_hash::{FxHashMap, FxHashSet};

/// The lookups whose answer may differ after this run's changes.
#[derive(Debug, Default, Clone)]
pub struct ChangedNames {
    /// File (path) → the names whose entry there changed (a definition added, removed,
    /// re-parented or given other bases; an import bound elsewhere; a module-level local).
    pub rebound: FxHashMap<String, FxHashSet<String>>,
    /// Names whose lookup changed in any file: the segments of a module that appeared or
    /// disappeared.
    pub global: FxHashSet<String>,
    /// Definitions that only moved lines, as (old, new) node key, by the module name of
    /// their file: the stored edges into one are pointed at its new key
    /// ([`super::write::GraphDelta::moved`]).
    pub moved: FxHashMap<String, Vec<(i64, i64)>>,
    /// The old node keys of definitions that moved lines where a new key is not one
    /// definition's alone (two definitions of one qualname now on one line): the files
    /// with an edge into one are resolved again.
    pub moved_keys: Vec<i64>,
    /// A change the name sets do not capture: every file that can see it is resolved again.
    pub any: bool,
}

/// The node keys of a file's definitions before and after this run.
struct Keys {
    old: Vec<i64>,
    new: Vec<i64>,
    /// How many definitions have each key, before and after.
    count: FxHashMap<(bool, i64), u32>,
}

impl Keys {
    fn of(rel: &str, lang: Lang, module: &str, old: &RawFile, new: &RawFile) -> Keys {
        let keys = |raw: &RawFile| -> Vec<i64> {
            let quals = qualnames_of(rel, lang, module, raw);
            quals
                .iter()
                .zip(&raw.defs)
                .map(|(q, d)| store::key_of(q, d.line))
                .collect()
        };
        let (old, new) = (keys(old), keys(new));
        let mut count: FxHashMap<(bool, i64), u32> = FxHashMap::default();
        for (after, k) in old
            .iter()
            .map(|k| (false, *k))
            .chain(new.iter().map(|k| (true, *k)))
        {
            *count.entry((after, k)).or_default() += 1;
        }
        Keys { old, new, count }
    }

    /// True when `from` was one definition's key alone and `to` is: an edge into `from`
    /// then means that definition, and pointing it at `to` is what resolving it gives.
    fn unique(&self, from: i64, to: i64) -> bool {
        self.count.get(&(false, from)) == Some(&1) && self.count.get(&(true, to)) == Some(&1)
    }
}

/// One interface entry under its name: its line, everything else that other files' lookups
/// read (in a comparable form), and for a definition its index.
struct Entry {
    line: u32,
    rest: String,
    def: Option<usize>,
}

impl ChangedNames {
    /// Adds what differs between `old` and `new`, the interface of the file `rel` (module
    /// `module`, language `lang`) before and after this run.
    pub fn add_diff(&mut self, old: &RawFile, new: &RawFile, lang: Lang, rel: &str, module: &str) {
        if old.package != new.package || old.namespaces != new.namespaces {
            self.any = true;
            return;
        }
        if stars(old) != stars(new) {
            // Any name looked up there may now be found through another module.
            self.rebound
                .entry(rel.to_string())
                .or_default()
                .insert(EVERY.to_string());
        }
        let (a, b) = (entries(old, lang), entries(new, lang));
        let mut changed: Vec<&str> = b.keys().filter(|n| !a.contains_key(*n)).copied().collect();
        let mut keys: Option<Keys> = None;
        for (name, ea) in &a {
            let Some(eb) = b.get(name) else {
                changed.push(name);
                continue;
            };
            let same_rest =
                ea.len() == eb.len() && ea.iter().zip(eb).all(|(x, y)| x.rest == y.rest);
            if !same_rest {
                changed.push(name);
                continue;
            }
            for (x, y) in ea.iter().zip(eb) {
                if let (Some(dx), Some(dy), true) = (x.def, y.def, x.line != y.line) {
                    let k = keys.get_or_insert_with(|| Keys::of(rel, lang, module, old, new));
                    let (from, to) = (k.old[dx], k.new[dy]);
                    if k.unique(from, to) {
                        self.moved
                            .entry(module.to_string())
                            .or_default()
                            .push((from, to));
                    } else {
                        self.moved_keys.push(from);
                    }
                }
            }
        }
        if !changed.is_empty() {
            let set = self.rebound.entry(rel.to_string()).or_default();
            set.extend(changed.into_iter().map(str::to_string));
        }
    }

    /// Adds a file that appeared or disappeared in this run (`raw`, its interface; `rel`,
    /// `lang`, `module`): every name of it changed there, and the segments of its module
    /// name whose module or package may have appeared or disappeared with it changed
    /// everywhere — all but the packages `stable` (those of files present before and after)
    /// holds.
    pub fn add_file(
        &mut self,
        raw: &RawFile,
        rel: &str,
        lang: Lang,
        module: &str,
        stable: &FxHashSet<String>,
    ) {
        if !raw.package.is_empty() || !raw.namespaces.is_empty() {
            self.any = true;
            return;
        }
        let set = self.rebound.entry(rel.to_string()).or_default();
        set.extend(entries(raw, lang).into_keys().map(str::to_string));
        let segs: Vec<&str> = segments(module).collect();
        let mut prefix = String::new();
        for (k, seg) in segs.iter().enumerate() {
            if k > 0 {
                prefix.push('.');
            }
            prefix.push_str(seg);
            if k + 1 == segs.len() || !stable.contains(&prefix) {
                self.global.insert((*seg).to_string());
            }
        }
    }

    /// The packages of `modules` (each module name's proper prefixes, segments joined by
    /// `.`), for [`ChangedNames::add_file`]'s `stable`.
    pub fn packages<'m>(modules: impl Iterator<Item = &'m str>) -> FxHashSet<String> {
        let mut out = FxHashSet::default();
        for m in modules {
            let segs: Vec<&str> = segments(m).collect();
            let mut prefix = String::new();
            for seg in segs.iter().take(segs.len().saturating_sub(1)) {
                if !prefix.is_empty() {
                    prefix.push('.');
                }
                prefix.push_str(seg);
                out.insert(prefix.clone());
            }
        }
        out
    }
}

/// The names each file's interface hands on to further lookups, for [`Names::may_change`].
pub struct Names<'a> {
    /// Per file of the run (with at least its interface): for each name a finding of which
    /// may lead on to it (an import's module and imported name, a class's bases, a typed
    /// attribute's class, a function's signature), the names found; `*` stands for every
    /// name (a star import's module is read by every lookup there).
    led_from: Vec<FxHashMap<&'a str, Vec<&'a str>>>,
}

/// The name [`Names::led_from`] gives for "any lookup in the file".
const EVERY: &str = "*";

impl<'a> Names<'a> {
    pub fn of(files: &'a [FileData]) -> Names<'a> {
        let led_from = files
            .iter()
            .map(|f| {
                let mut back: FxHashMap<&str, Vec<&str>> = FxHashMap::default();
                for (from, to) in passes_on(f) {
                    for t in to {
                        back.entry(t).or_default().push(from);
                    }
                }
                back
            })
            .collect();
        Names { led_from }
    }

    /// True when the resolution of file `f` (with its full extraction; `deps`, the files its
    /// stored resolution read, as indexes into the run's files) may have changed under
    /// `changed`: a name that changed in one of `deps` (or everywhere) is one of `f`'s own,
    /// or finding one of `f`'s own names in `deps` leads on to it, in as many steps as it
    /// takes. Worked backwards from the changed names, which are few.
    pub fn may_change(
        &self,
        f: &FileData,
        deps: &[usize],
        files: &[FileData],
        changed: &ChangedNames,
    ) -> bool {
        if changed.any {
            return true;
        }
        let mut hot: FxHashSet<&str> = changed.global.iter().map(String::as_str).collect();
        for &d in deps {
            if let Some(set) = changed.rebound.get(&files[d].rel) {
                hot.extend(set.iter().map(String::as_str));
            }
        }
        let mut todo: Vec<&str> = hot.iter().copied().collect();
        while let Some(n) = todo.pop() {
            for &d in deps {
                for &m in self.led_from[d].get(n).into_iter().flatten() {
                    if hot.insert(m) {
                        todo.push(m);
                    }
                }
            }
        }
        // `*` changed in a dependency (its star imports), or a changed name is reached
        // through one's star imports: any lookup there may answer otherwise.
        !hot.is_empty() && (hot.contains(EVERY) || mentions(f).any(|t| hot.contains(t)))
    }
}

/// Every identifier token of `f`'s extraction: the names its own lookups start from.
fn mentions(f: &FileData) -> impl Iterator<Item = &str> {
    let raw = &f.raw;
    let refs = raw
        .refs
        .iter()
        .flat_map(|r| r.path.iter().flat_map(|p| tokens(p)));
    let bindings = raw
        .bindings
        .iter()
        .flat_map(|b| tokens(&b.name).chain(binding_names(b, &f.module)));
    let defs = raw.defs.iter().flat_map(|d| {
        tokens(&d.name)
            .chain(d.bases.iter().flat_map(|b| tokens(b)))
            .chain(tokens(&d.self_class))
            .chain(tokens(&d.signature))
    });
    let locals = raw.locals.iter().flat_map(|(_, n)| tokens(n));
    let typed = raw
        .typed_locals
        .iter()
        .chain(&raw.typed_attrs)
        .flat_map(|(_, n, class)| tokens(n).chain(tokens(class)));
    refs.chain(bindings).chain(defs).chain(locals).chain(typed)
}

/// What finding each name of `f` leads on to (reversed into [`Names::led_from`]).
fn passes_on(f: &FileData) -> FxHashMap<&str, Vec<&str>> {
    let raw = &f.raw;
    let mut out: FxHashMap<&str, Vec<&str>> = FxHashMap::default();
    for b in &raw.bindings {
        let key = match b.target {
            Target::Star { .. } => EVERY,
            _ => binding_key(b, f.lang),
        };
        out.entry(key)
            .or_default()
            .extend(binding_names(b, &f.module));
    }
    for d in &raw.defs {
        let on = out.entry(d.name.as_str()).or_default();
        on.extend(d.bases.iter().flat_map(|b| tokens(b)));
        on.extend(tokens(&d.self_class));
        on.extend(tokens(&d.signature));
    }
    for (_, attr, class) in &raw.typed_attrs {
        out.entry(attr.as_str()).or_default().extend(tokens(class));
    }
    out.retain(|_, on| !on.is_empty());
    out
}

/// The names resolving binding `b` (of a file of module `module`) looks up: its module's
/// segments (and, for a relative import, the importing module's), and the imported name.
fn binding_names<'a>(b: &'a RawBinding, module: &'a str) -> impl Iterator<Item = &'a str> {
    let (m, level, name) = match &b.target {
        Target::Symbol {
            module,
            level,
            name,
        } => (module.as_str(), *level, Some(name.as_str())),
        Target::Module { module, level } | Target::Star { module, level } => {
            (module.as_str(), *level, None)
        }
    };
    let relative = if level > 0 { module } else { "" };
    segments(m)
        .chain(segments(relative))
        .chain(name.into_iter().flat_map(tokens))
}

/// The identifier tokens of `s` (a dotted path, an import's module, a signature).
fn tokens(s: &str) -> impl Iterator<Item = &str> {
    s.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '$'))
        .filter(|t| !t.is_empty())
}

/// The segments of a module path as any language writes it.
fn segments(module: &str) -> impl Iterator<Item = &str> {
    tokens(module)
}

/// A file's star imports as other files' lookups read them: scope and target, in order.
fn stars(raw: &RawFile) -> Vec<(&str, &Target)> {
    raw.bindings
        .iter()
        .filter(|b| matches!(b.target, Target::Star { .. }))
        .map(|b| (scope_local(raw, b.scope), &b.target))
        .collect()
}

/// The local qualname of scope `s` of `raw` (empty for the module or an out-of-range index).
fn scope_local(raw: &RawFile, s: u32) -> &str {
    raw.defs.get(s as usize).map_or("", |d| d.local.as_str())
}

/// The name a binding is looked up by: a Python `import a.b.c` is found as `a`.
fn binding_key(b: &RawBinding, lang: Lang) -> &str {
    truncated(b, lang).unwrap_or(&b.name)
}

/// For a Python `import a.b.c` (bound as `a`, resolved to module `a` alone): `a`.
fn truncated(b: &RawBinding, lang: Lang) -> Option<&str> {
    (lang == Lang::Python && b.name.contains('.')).then(|| b.name.split('.').next().unwrap_or(""))
}

/// Every interface entry of `raw` (a file of `lang`) by the name lookups find it by, in
/// file order: definitions; the first non-star binding of each name and scope (the one
/// lookups use); module- and class-level locals; typed attributes; and the `self` names of
/// functions that enclose a class (a lookup from that class's bases walks through them).
/// Scopes are given by local qualname, not by index, so a definition added above does not
/// change every entry below it.
fn entries(raw: &RawFile, lang: Lang) -> FxHashMap<&str, Vec<Entry>> {
    let entry = |line, rest, def| Entry { line, rest, def };
    let signatures = lang.signatures_resolve();
    let mut out: FxHashMap<&str, Vec<Entry>> = FxHashMap::default();
    let class_parents: FxHashSet<u32> = raw
        .defs
        .iter()
        .filter(|d| d.kind == DefKind::Class)
        .map(|d| d.parent)
        .collect();
    for (i, d) in raw.defs.iter().enumerate() {
        let rest = format!(
            "d{:?}",
            (
                d.kind,
                &d.local,
                scope_local(raw, d.parent),
                &d.bases,
                &d.self_names,
                &d.self_class,
                d.singleton,
                d.interface_signature(signatures)
            )
        );
        out.entry(&d.name)
            .or_default()
            .push(entry(d.line, rest, Some(i)));
        if class_parents.contains(&(i as u32)) {
            for s in &d.self_names {
                out.entry(s)
                    .or_default()
                    .push(entry(0, format!("s{}", d.local), None));
            }
        }
    }
    let mut first = FxHashSet::default();
    for b in &raw.bindings {
        let key = binding_key(b, lang);
        if matches!(b.target, Target::Star { .. }) || !first.insert((b.scope, key)) {
            continue;
        }
        let scope = scope_local(raw, b.scope);
        let rest = match truncated(b, lang) {
            Some(module) => format!("m{scope:?}{module:?}"),
            None => format!("b{:?}", (scope, &b.target)),
        };
        out.entry(key).or_default().push(entry(0, rest, None));
    }
    for (s, name) in &raw.locals {
        let scope = raw.defs.get(*s as usize);
        if scope.is_none_or(|d| d.kind != DefKind::Function) {
            let rest = format!("l{}", scope_local(raw, *s));
            out.entry(name).or_default().push(entry(0, rest, None));
        }
    }
    for (c, attr, class) in &raw.typed_attrs {
        let rest = format!("t{:?}", (scope_local(raw, *c), class));
        out.entry(attr).or_default().push(entry(0, rest, None));
    }
    out
}
