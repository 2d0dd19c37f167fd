//! Go imports: an import path under the module `go.mod` declares maps to the package of
//! that directory (the repository root is package `root`); any other path is the standard
//! library or a dependency, hence external. Names inside a package resolve by the package
//! prefix in the shared lookup ([`Resolver::lookup_name`]).

use super::{Res, Resolver};

impl Resolver<'_> {
    /// The project package an import path names, if it is under this module.
    pub(super) fn go_import(&self, module: &str) -> Res {
        if self.go_module.is_empty() || !module.starts_with(&self.go_module) {
            return Res::External;
        }
        let rest = module[self.go_module.len()..]
            .trim_matches('/')
            .replace('/', ".");
        let pkg = if rest.is_empty() {
            "root".to_string()
        } else {
            rest
        };
        if self.sym.packages.contains(&pkg) {
            Res::Package(pkg)
        } else {
            Res::External
        }
    }
}
