//! C and C++: `#include` resolves to project headers by path (beside the includer, from the
//! root, or by unique suffix), and a name no scope binds reaches the project's only
//! function (or C++ method of the enclosing class) of that name, since a header declares
//! what a source file elsewhere defines.

use super::{beside, FileData, Res, Resolver};
use crate::graph::raw::{DefKind, RawDef};

impl Resolver<'_> {
    /// The one C++ method `owner.name` in the project, if exactly one is defined.
    pub(super) fn c_method(&self, owner: &str, name: &str) -> Option<Res> {
        match self
            .sym
            .c_methods
            .get(format!("{owner}.{name}").as_str())?
            .as_slice()
        {
            [(f, d)] => Some(Res::Def(*f, *d)),
            _ => None,
        }
    }

    /// A bare call inside a C++ class body or method: a method of that class defined in
    /// another file (the class body declares it, a source file defines it).
    pub(super) fn c_enclosing_method(
        &self,
        defs: &[RawDef],
        scope: u32,
        name: &str,
    ) -> Option<Res> {
        let mut s = scope;
        while s != 0 {
            let d = &defs[s as usize];
            if d.kind == DefKind::Class {
                return self.c_method(&d.local, name);
            }
            if !d.self_class.is_empty() {
                return self.c_method(&d.self_class, name);
            }
            s = if d.parent < s { d.parent } else { 0 };
        }
        None
    }

    /// The project file an `#include` names: next to the includer (quoted includes only),
    /// then from the root, then the one file whose path ends with it (`-I include/` layouts).
    pub(super) fn c_include(&self, fd: &FileData, path: &str, level: u32) -> Res {
        let mut candidates = vec![];
        if level > 0 {
            candidates.push(beside(&fd.rel, path));
        }
        candidates.push(path.trim_start_matches("./").to_string());
        for c in &candidates {
            if let Some(&m) = self.sym.c_by_path.get(c.as_str()) {
                return Res::Module(m);
            }
        }
        let base = path.rsplit('/').next().unwrap_or(path);
        let suffix = format!("/{path}");
        let hits: Vec<u32> = self
            .sym
            .c_by_file_name
            .get(base)
            .into_iter()
            .flatten()
            .copied()
            .filter(|&i| self.files[i as usize].rel.ends_with(&suffix))
            .collect();
        match hits.as_slice() {
            [m] => Res::Module(*m),
            _ => Res::External,
        }
    }
}
