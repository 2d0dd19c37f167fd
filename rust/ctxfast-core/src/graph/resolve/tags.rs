//! Name resolution of the generic tier (`lang/tags.rs`). A tags query gives bare names, no
//! imports or receivers, so a reference resolves by name among its language's definitions
//! in the repository ([`super::Symbols::named`]) — conservatively, since a wrong edge misleads
//! more than a missing one:
//!
//! * types and callables are preferred over values of the same name (a call `render()` and
//!   a field `render`);
//! * the nearest definitions decide: those in the same file if any, else those in the same
//!   directory, else all of them;
//! * among those, one definition is an edge, and so are several that are one definition
//!   written in parts (Elixir's function clauses, C#'s overloads: one name under one
//!   parent in one file), to the first; anything else is ambiguous and gets no edge.

use super::symbols::DefAt;
use super::Resolver;
use crate::graph::raw::{DefKind, RawRef};

impl Resolver<'_> {
    /// The project definition a generic-tier reference reaches, if its name settles one.
    pub(super) fn tags_ref(&self, f: u32, r: &RawRef) -> Option<DefAt> {
        let name = r.path.last()?;
        let family = self.files[f as usize].lang.linkage_family();
        let all = self.sym.named.get(&(family, name.clone()))?;
        let kind = |&(df, dd): &DefAt| self.files[df as usize].raw.defs[dd as usize].kind;
        let typed: Vec<DefAt> = all
            .iter()
            .copied()
            .filter(|d| kind(d) != DefKind::Var)
            .collect();
        let pool = if typed.is_empty() { all.clone() } else { typed };
        let dir = |fi: u32| {
            let rel = &self.files[fi as usize].rel;
            rel.rsplit_once('/').map_or("", |(d, _)| d)
        };
        let here = dir(f);
        let same_file: Vec<DefAt> = pool.iter().copied().filter(|d| d.0 == f).collect();
        let same_dir: Vec<DefAt> = pool.iter().copied().filter(|d| dir(d.0) == here).collect();
        let nearest = [same_file, same_dir, pool]
            .into_iter()
            .find(|c| !c.is_empty())?;
        self.one_definition(&nearest)
    }

    /// The first of `defs` when they are one definition (see the module documentation).
    fn one_definition(&self, defs: &[DefAt]) -> Option<DefAt> {
        let (first, rest) = defs.split_first()?;
        let parent = |&(df, dd): &DefAt| self.files[df as usize].raw.defs[dd as usize].parent;
        rest.iter()
            .all(|d| d.0 == first.0 && parent(d) == parent(first))
            .then_some(*first)
    }
}
