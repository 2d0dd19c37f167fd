//! Java's overloads and declared types. Java methods share a qualname across overloads, so
//! a call picks the overload its argument count (and, where that leaves several, its
//! arguments' static types) selects; the class a call returns comes from the method
//! header's declared return type. Headers are read as the extractor stores them
//! (`RawDef::signature`), since the graph keeps no parsed types.

use super::{Res, Resolver};
use crate::graph::raw::{DefKind, RawDef, ARG_TYPES_OPEN};

/// The class a Java method header declares it returns: `public Elements select(String q)` →
/// `Elements`, `List<Node> children()` → `List`; `None` for arrays, `void` and headers it
/// cannot read.
fn java_return_type(signature: &str, name: &str) -> Option<String> {
    let at = signature.find(&format!("{name}("))?;
    let mut before = signature[..at].trim_end();
    if before.ends_with("[]") {
        return None;
    }
    if before.ends_with('>') {
        let mut depth = 0;
        let mut cut = None;
        for (i, c) in before.char_indices().rev() {
            match c {
                '>' => depth += 1,
                '<' => {
                    depth -= 1;
                    if depth == 0 {
                        cut = Some(i);
                        break;
                    }
                }
                _ => {}
            }
        }
        before = before[..cut?].trim_end();
    }
    let ty: String = before
        .rsplit(|c: char| !(c.is_alphanumeric() || c == '_' || c == '.' || c == '$'))
        .next()?
        .to_string();
    (!ty.is_empty() && ty != "void").then_some(ty)
}

/// A reference path without its Java argument-type segment, and that segment's types (see
/// `RawRef::path`; empty without one).
pub(super) fn split_arg_types(path: &[String]) -> (&[String], Vec<&str>) {
    match path.split_last() {
        Some((last, rest)) if !rest.is_empty() && last.starts_with(ARG_TYPES_OPEN) => {
            let inner = last[ARG_TYPES_OPEN.len()..].trim_end_matches(')');
            (rest, inner.split(',').collect())
        }
        _ => (path, vec![]),
    }
}

/// The parameter types a Java method header declares, as `lang::java::type_name` writes
/// them: `void f(final int a, Map<K, V> m, String... r)` → `["int", "Map", "String..."]`.
fn java_param_types(signature: &str, name: &str) -> Vec<String> {
    let Some(at) = signature.find(&format!("{name}(")) else {
        return vec![];
    };
    let at = at + name.len() + 1;
    let mut depth = 0i32;
    let mut params = vec![];
    let mut start = at;
    for (i, c) in signature[at..].char_indices() {
        match c {
            '(' | '<' => depth += 1,
            ')' if depth == 0 => {
                params.push(&signature[start..at + i]);
                break;
            }
            ')' | '>' => depth -= 1,
            ',' if depth == 0 => {
                params.push(&signature[start..at + i]);
                start = at + i + 1;
            }
            _ => {}
        }
    }
    params
        .into_iter()
        .map(|p| {
            let words: Vec<&str> = p
                .split_whitespace()
                .filter(|w| !w.starts_with('@') && *w != "final")
                .collect();
            let ty = words[..words.len().saturating_sub(1)].join(" ");
            crate::graph::lang::java_type_name(&ty)
        })
        .collect()
}

/// Whether an argument of static type `arg` (`?`: unknown) can be passed as a parameter of
/// type `param`, and whether that is an exact match.
fn passes(arg: &str, param: &str) -> (bool, bool) {
    const PRIMITIVE: &[&str] = &[
        "byte", "short", "char", "int", "long", "float", "double", "boolean",
    ];
    const WIDER: &[(&str, &[&str])] = &[
        ("char", &["int", "long", "float", "double"]),
        ("int", &["long", "float", "double"]),
        ("double", &[]),
        ("boolean", &[]),
    ];
    let param = param.trim_end_matches("...");
    if arg == "?" || param == "Object" {
        return (true, arg == param);
    }
    if arg == param {
        return (true, true);
    }
    if let Some((_, wider)) = WIDER.iter().find(|(a, _)| *a == arg) {
        return (wider.contains(&param), false);
    }
    if arg == "String" {
        return (param == "CharSequence", false);
    }
    // Some class: maybe a subclass of `param` (the hierarchy is not consulted), never a
    // primitive or a String.
    (!PRIMITIVE.contains(&param) && param != "String", false)
}

/// The overloads of `fits` whose parameters take arguments of `arg_types`, narrowed to
/// those with the most exact matches.
fn by_arg_types<F: Fn(usize) -> Vec<String>>(
    fits: &[usize],
    arg_types: &[&str],
    params: F,
) -> Vec<usize> {
    if arg_types.is_empty() {
        return fits.to_vec();
    }
    let scored: Vec<(usize, usize)> = fits
        .iter()
        .filter_map(|&i| {
            let ps = params(i);
            let mut exact = 0;
            for (k, a) in arg_types.iter().enumerate() {
                let p = ps.get(k).or(ps.last())?;
                let (ok, same) = passes(a, p);
                if !ok {
                    return None;
                }
                exact += usize::from(same);
            }
            Some((i, exact))
        })
        .collect();
    let best = scored.iter().map(|t| t.1).max().unwrap_or(0);
    scored
        .into_iter()
        .filter(|t| t.1 == best)
        .map(|t| t.0)
        .collect()
}

/// The number of parameters a Java method header declares, and whether the last is
/// variadic: `void f(int a, Map<K, V> m, String... r)` → `(3, true)`.
fn java_params(signature: &str, name: &str) -> Option<(u32, bool)> {
    let at = signature.find(&format!("{name}("))? + name.len() + 1;
    let mut depth = 0i32;
    let (mut commas, mut any) = (0u32, false);
    let mut end = None;
    for (i, c) in signature[at..].char_indices() {
        match c {
            '(' | '<' => depth += 1,
            ')' if depth == 0 => {
                end = Some(at + i);
                break;
            }
            ')' | '>' => depth -= 1,
            ',' if depth == 0 => commas += 1,
            c if !c.is_whitespace() => any = true,
            _ => {}
        }
    }
    let params = &signature[at..end?];
    let n = if any { commas + 1 } else { 0 };
    Some((n, params.contains("...")))
}

impl Resolver<'_> {
    /// The overload of `r` a call with `arity` arguments reaches: among the methods sharing
    /// `r`'s qualname (a field of the same name is never called), the one whose declared
    /// parameters take `arity` arguments, else one inherited from a base class that does,
    /// else the first method; `r` itself when it names no method. When several overloads
    /// take that many arguments (`emit(Token)`, `emit(char)`) the argument types decide,
    /// which the graph does not know: [`Res::Dynamic`], no edge rather than a guess.
    pub(super) fn overload(&self, r: &Res, arity: u32, arg_types: &[&str]) -> Res {
        let Res::Def(f, d) = *r else {
            return r.clone();
        };
        let defs = &self.files[f as usize].raw.defs;
        let local = &defs[d as usize].local;
        let same: Vec<usize> = (1..defs.len())
            .filter(|&i| defs[i].kind == DefKind::Function && defs[i].local == *local)
            .collect();
        let Some(&first) = same.first() else {
            return r.clone();
        };
        self.taking(f, &same, arity, arg_types, 0)
            .unwrap_or(Res::Def(f, first as u32))
    }

    /// The method of `same` (of file `f`) or, failing them, of their class's bases that
    /// takes `arity` arguments: declaring exactly `arity` parameters before taking them as
    /// varargs; [`Res::Dynamic`] when more than one does.
    fn taking(
        &self,
        f: u32,
        same: &[usize],
        arity: u32,
        arg_types: &[&str],
        depth: u32,
    ) -> Option<Res> {
        let defs = &self.files[f as usize].raw.defs;
        let params = |i: usize| java_params(&defs[i].signature, &defs[i].name);
        let exact: Vec<usize> = same
            .iter()
            .copied()
            .filter(|&i| params(i).is_some_and(|(n, _)| arity == n))
            .collect();
        let fits: Vec<usize> = if exact.is_empty() {
            same.iter()
                .copied()
                .filter(|&i| params(i).is_some_and(|(n, v)| v && arity + 1 >= n))
                .collect()
        } else {
            exact
        };
        let fits = match by_arg_types(&fits, arg_types, |i| {
            java_param_types(&defs[i].signature, &defs[i].name)
        }) {
            narrowed if fits.len() > 1 && !narrowed.is_empty() => narrowed,
            _ => fits,
        };
        match fits.as_slice() {
            [i] => return Some(Res::Def(f, *i as u32)),
            [_, _, ..] => return Some(Res::Dynamic),
            [] => {}
        }
        let m = &defs[*same.first()?];
        let class = &defs[m.parent as usize];
        if depth > 4 || class.kind != DefKind::Class || m.parent == 0 {
            return None;
        }
        class.bases.iter().find_map(|b| {
            let Res::Def(bf, bd) = self.class_at(f, class.parent, b, 0)? else {
                return None;
            };
            let bdefs = &self.files[bf as usize].raw.defs;
            let local = format!("{}.{}", bdefs[bd as usize].local, m.name);
            let inherited: Vec<usize> = (1..bdefs.len())
                .filter(|&i| bdefs[i].kind == DefKind::Function && bdefs[i].local == local)
                .collect();
            if inherited.is_empty() {
                return None;
            }
            self.taking(bf, &inherited, arity, arg_types, depth + 1)
        })
    }

    /// The class a Java method declares it returns (see [`Resolver::returned_class`]).
    pub(super) fn java_returned(&self, f: u32, def: &RawDef) -> Option<Res> {
        let ty = java_return_type(&def.signature, &def.name)?;
        self.class_at(f, def.parent, &ty, 0)
    }
}
