//! Python imports: absolute imports resolve through the module table (and, for
//! script-style layouts with a directory on `sys.path`, by module suffix); relative imports
//! climb from the importing module, an `__init__.py` standing for its package.
//! A relative import that reaches no project module is `NotFound`, which the driver records
//! as unresolved: within a package, a missing module is a real signal.

use super::{parent_module, FileData, Res, Resolver};

impl Resolver<'_> {
    fn py_module(&self, full: &str, from: u32) -> Res {
        if let Some(&m) = self.sym.module_by_qual.get(full) {
            return Res::Module(m);
        }
        if self.sym.packages.contains(full) {
            return Res::Package(full.to_string());
        }
        if let Some(c) = self.sym.py_suffix.get(full) {
            // Script-style imports (`tests/` on sys.path): only a candidate below a directory
            // that is *not* a package and that also holds the importer counts, so `import json`
            // inside a package never maps to a project `json.py`.
            let me = &self.files[from as usize].module;
            let hit = c.iter().find(|&&i| {
                let other = &self.files[i as usize].module;
                let root = other[..other.len() - full.len()].trim_end_matches('.');
                !root.is_empty()
                    && !self.sym.module_by_qual.contains_key(root)
                    && me.starts_with(&format!("{root}."))
            });
            if let Some(&b) = hit {
                return Res::Module(b);
            }
        }
        Res::External
    }

    /// The project module (or namespace package) `import module` names in file `f`, `level`
    /// dots up for a relative import.
    pub(super) fn py_import(&self, f: u32, fd: &FileData, module: &str, level: u32) -> Res {
        if level == 0 {
            return self.py_module(module, f);
        }
        let is_pkg = fd.rel.ends_with("__init__.py") || fd.rel.ends_with("__init__.pyi");
        let mut base = if is_pkg {
            fd.module.as_str()
        } else {
            parent_module(&fd.module)
        };
        for _ in 1..level {
            base = parent_module(base);
        }
        let full = match (base.is_empty(), module.is_empty()) {
            (true, _) => module.to_string(),
            (false, true) => base.to_string(),
            (false, false) => format!("{base}.{module}"),
        };
        match self.sym.module_by_qual.get(&full) {
            Some(&m) => Res::Module(m),
            None if self.sym.packages.contains(&full) => Res::Package(full),
            None => Res::NotFound,
        }
    }
}
