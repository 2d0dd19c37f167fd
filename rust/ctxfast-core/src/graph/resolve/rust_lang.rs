//! Rust paths: `crate::`, `self::`, `super::` and workspace crate names resolve through the
//! module tree (the longest module prefix, then items in it), so `use` declarations and
//! qualified calls reach their definitions; the crate root (`lib.rs`/`main.rs`) holds its
//! children at the top level. The class a call returns comes from its `-> Type` (`Self`
//! being the impl's type), so builder chains resolve.

use super::{parent_module, FileData, Res, Resolver};
use crate::graph::lang::{module_qualname, Lang};
use crate::graph::raw::RawDef;

/// Where a file's child modules live: its own module, except the root Rust crate (`crate`),
/// whose children are top-level.
pub(super) fn children_base(fd: &FileData) -> String {
    if fd.lang == Lang::Rust {
        children_base_of(&fd.module)
    } else {
        fd.module.clone()
    }
}

fn children_base_of(module: &str) -> String {
    if module == "crate" {
        String::new()
    } else {
        module.to_string()
    }
}

impl Resolver<'_> {
    /// What a `use` path (`crate::a::B`, `super::c`, `std::…`) written in file `fd` names.
    pub(super) fn rust_use(&self, fd: &FileData, module: &str, depth: u32) -> Res {
        let segs: Vec<&str> = module.split("::").collect();
        let crate_base = children_base_of(&self.rust_crate_root(fd));
        let own = children_base(fd);
        match segs.first() {
            Some(&"crate") => self.rust_path(&crate_base, &segs[1..], depth),
            Some(&"self") => self.rust_path(&own, &segs[1..], depth),
            Some(&"super") => {
                let mut cur = own.clone();
                let mut i = 0;
                while segs.get(i) == Some(&"super") {
                    cur = parent_module(&cur).to_string();
                    i += 1;
                }
                self.rust_path(&cur, &segs[i..], depth)
            }
            _ => match self.rust_path(&own, &segs, depth) {
                r @ (Res::Def(..) | Res::Module(_)) => r,
                _ => match self.rust_path(&crate_base, &segs, depth) {
                    r @ (Res::Def(..) | Res::Module(_)) => r,
                    _ => match segs.first().and_then(|s| self.cargo_crates.get(*s)) {
                        Some(m) => self.rust_path(&children_base_of(m), &segs[1..], depth),
                        None => Res::External,
                    },
                },
            },
        }
    }

    /// Resolves `rest` below the module whose children live at `base` (`""` = root crate):
    /// the longest module prefix first, then attributes.
    fn rust_path(&self, base: &str, rest: &[&str], depth: u32) -> Res {
        for k in (0..=rest.len()).rev() {
            let cand = match (base.is_empty(), k) {
                (true, 0) => "crate".to_string(),
                (true, _) => rest[..k].join("."),
                (false, 0) => base.to_string(),
                (false, _) => format!("{base}.{}", rest[..k].join(".")),
            };
            if let Some(&m) = self.sym.module_by_qual.get(&cand) {
                let mut r = Res::Module(m);
                for s in &rest[k..] {
                    r = self.attr(&r, s, depth + 1);
                    if !matches!(r, Res::Def(..) | Res::Module(_)) {
                        return Res::External;
                    }
                }
                return r;
            }
        }
        Res::External
    }

    fn rust_crate_root(&self, fd: &FileData) -> String {
        if let Some(i) = fd.rel.find("src/") {
            return module_qualname(&format!("{}src/lib.rs", &fd.rel[..i]), Lang::Rust);
        }
        // A crate without `src/` (`crates/core/main.rs`): the nearest folder holding a crate
        // root file.
        let mut dir = fd.rel.as_str();
        while let Some((d, _)) = dir.rsplit_once('/') {
            if self.sym.rust_roots.contains(&format!("{d}/")) {
                return module_qualname(&format!("{d}/lib.rs"), Lang::Rust);
            }
            dir = d;
        }
        module_qualname("lib.rs", Lang::Rust)
    }

    /// The class a Rust function declares it returns (see [`Resolver::returned_class`]):
    /// `-> Self`, `-> WalkBuilder`, `-> &mut Self`.
    pub(super) fn rust_returned(&self, f: u32, d: u32, def: &RawDef) -> Option<Res> {
        let ret = def.signature.rsplit_once("->")?.1.trim();
        let ret = ret.trim_start_matches('&').trim_start();
        // `-> &'a mut Self`: a reference's lifetime says nothing of the type.
        let ret = match ret.strip_prefix('\'') {
            Some(r) => r.split_once(' ').map_or("", |(_, t)| t).trim_start(),
            None => ret,
        };
        let ret = ret.strip_prefix("mut ").unwrap_or(ret).trim_start();
        let ty: String = ret
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':')
            .collect();
        if ty.is_empty() {
            return None;
        }
        if ty == "Self" {
            return match self.self_class(f, d) {
                r @ Res::Def(..) => Some(r),
                _ => None,
            };
        }
        self.class_at(f, def.parent, &ty.replace("::", "."), 0)
    }
}
