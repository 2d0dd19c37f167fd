//! Which rows of a re-resolved file a refresh must rewrite.
//!
//! When a file's interface moves, every file that could see it is resolved again
//! ([`crate::graph::plan::to_resolve`]) — hundreds of files when a core module of sympy
//! changes, or when an index is seeded from another version's ([`crate::graph::seed`]).
//! Most of them resolve to the same reference sites, and many to the very same rows.
//! Deleting and re-inserting reference sites rewrites B-tree pages all over the file (nodes
//! are stored in key order, under three indexes) and cost a seeded sympy refresh a second;
//! reading a file's stored rows through its indexes and comparing costs a few milliseconds.
//! So each kind of row is rewritten only when it differs: a definition that moved down a few
//! lines changes the edges into it (their end keys), not the callers' sites.

use crate::error::CoreResult;
use crate::graph::resolve::{FileData, Resolved};
use rusqlite::Transaction;
use rustc_hash::{FxHashMap, FxHashSet};

/// What of one re-resolved file's rows differs from the stored ones.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rewrite {
    /// Its reference sites (and then everything else: edges and unresolved names hang on
    /// the sites' keys).
    pub refs: bool,
    pub edges: Edges,
    pub unresolved: bool,
    pub deps: bool,
}

/// How a re-resolved file's edges are brought up to date.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Edges {
    /// Every stored edge leaving the file is replaced by the new resolution's.
    All,
    /// The stored edges (by rowid) that are no longer produced go, the new ones are added:
    /// when a definition the file points into moved, only the edges into it change.
    Diff {
        gone: Vec<i64>,
        added: Vec<(i64, i64, i64)>,
    },
}

impl Rewrite {
    pub const ALL: Rewrite = Rewrite {
        refs: true,
        edges: Edges::All,
        unresolved: true,
        deps: true,
    };

    pub fn anything(&self) -> bool {
        let edges = match &self.edges {
            Edges::All => true,
            Edges::Diff { gone, added } => !gone.is_empty() || !added.is_empty(),
        };
        self.refs || edges || self.unresolved || self.deps
    }
}

/// A reference-site row as `node_rows` stores it: (key, name, qualname, line, col).
type RefRow = (i64, String, String, u32, u32);

/// For each of `resolved`, what must be rewritten: everything for a file parsed in this run
/// (`parsed`: its rows were wiped) or without a stored row, otherwise what differs.
pub fn plan(
    tx: &Transaction<'_>,
    files: &[FileData],
    resolved: &[(usize, Resolved)],
    parsed: &FxHashSet<usize>,
) -> CoreResult<Vec<Rewrite>> {
    let mut file_id = tx.prepare_cached("SELECT id FROM files WHERE path = ?1")?;
    let mut ids: FxHashMap<usize, Option<i64>> = FxHashMap::default();
    let mut id_of = |i: usize| -> CoreResult<Option<i64>> {
        if let Some(&id) = ids.get(&i) {
            return Ok(id);
        }
        let id = match file_id.query_row([&files[i].rel], |r| r.get::<_, i64>(0)) {
            Ok(id) => Some(id),
            Err(rusqlite::Error::QueryReturnedNoRows) => None,
            Err(e) => return Err(e.into()),
        };
        ids.insert(i, id);
        Ok(id)
    };
    let mut stored = Stored::new(tx)?;
    let mut out = Vec::with_capacity(resolved.len());
    for (i, r) in resolved {
        let id = if parsed.contains(i) { None } else { id_of(*i)? };
        let Some(id) = id else {
            out.push(Rewrite::ALL);
            continue;
        };
        // A dependency on a file with no row yet (added in this run) is new.
        let mut deps = Some(vec![]);
        for d in r.deps_in_order() {
            match (id_of(d as usize)?, deps.as_mut()) {
                (Some(dst), Some(v)) => v.push(dst),
                _ => deps = None,
            }
        }
        out.push(stored.compare(id, &files[*i].rel, r, deps)?);
    }
    Ok(out)
}

/// The statements reading one file's resolution rows back.
struct Stored<'t> {
    nodes: rusqlite::CachedStatement<'t>,
    edges: rusqlite::CachedStatement<'t>,
    unresolved: rusqlite::CachedStatement<'t>,
    deps: rusqlite::CachedStatement<'t>,
}

impl<'t> Stored<'t> {
    fn new(tx: &'t Transaction<'_>) -> CoreResult<Self> {
        Ok(Stored {
            nodes: tx.prepare_cached(
                "SELECT id, kind = 'ref', name, qualname, line, col FROM node_rows \
                 WHERE file_id = ?1",
            )?,
            edges: tx.prepare_cached(
                "SELECT e.src, e.dst, e.kind, e.rowid FROM node_rows n \
                 JOIN edge_rows e ON e.src = n.id WHERE n.file_id = ?1",
            )?,
            unresolved: tx.prepare_cached(
                "SELECT name, node_id, line, col FROM unresolved WHERE file = ?1",
            )?,
            deps: tx.prepare_cached("SELECT dst FROM file_dep_rows WHERE src = ?1")?,
        })
    }

    /// What of file `id` (at `rel`) differs from what `r` would write, its dependencies given
    /// as file ids (`None`: one has no row yet). Reference sites are compared as the write
    /// inserts them: those whose key is one of the file's definitions' are not stored (the
    /// definition stands for the site), and the first site of a key wins.
    fn compare(
        &mut self,
        id: i64,
        rel: &str,
        r: &Resolved,
        deps: Option<Vec<i64>>,
    ) -> CoreResult<Rewrite> {
        let mut defs = FxHashSet::default();
        let mut refs: Vec<RefRow> = vec![];
        let rows = self.nodes.query_map([id], |row| {
            let site = (row.get(2)?, row.get(3)?, row.get(4)?, row.get(5)?);
            Ok((row.get::<_, i64>(0)?, row.get::<_, bool>(1)?, site))
        })?;
        for row in rows {
            let (key, is_ref, (name, qual, line, col)) = row?;
            if is_ref {
                refs.push((key, name, qual, line, col));
            } else {
                defs.insert(key);
            }
        }
        let mut new_refs: Vec<RefRow> = r
            .ref_nodes
            .iter()
            .filter(|n| !defs.contains(&n.key))
            .map(|n| (n.key, n.name.clone(), n.qualname.clone(), n.line, n.col))
            .collect();
        new_refs.sort_by_key(|n| n.0);
        new_refs.dedup_by_key(|n| n.0);
        refs.sort();
        new_refs.sort();
        if refs != new_refs {
            return Ok(Rewrite::ALL);
        }
        let stored_edges: Vec<((i64, i64, i64), i64)> = self
            .edges
            .query_map([id], |row| {
                Ok(((row.get(0)?, row.get(1)?, row.get(2)?), row.get(3)?))
            })?
            .collect::<rusqlite::Result<_>>()?;
        let unresolved = sorted(self.unresolved.query_map([rel], |row| {
            Ok((row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?))
        })?)?;
        let new_unresolved = sorted_vec(
            r.unresolved
                .iter()
                .map(|u| (u.name.clone(), u.node, u.line, u.col)),
        );
        let stored_deps: Vec<i64> = sorted(self.deps.query_map([id], |row| row.get(0))?)?;
        Ok(Rewrite {
            refs: false,
            edges: edge_diff(&stored_edges, r),
            unresolved: unresolved != new_unresolved,
            deps: deps.map(|d| sorted_vec(d.into_iter())) != Some(stored_deps),
        })
    }
}

/// The stored edges `r` no longer produces (their rowids) and the ones it adds. A file's
/// edges are distinct (resolution emits each once), so sets suffice.
fn edge_diff(stored: &[((i64, i64, i64), i64)], r: &Resolved) -> Edges {
    let new: FxHashSet<(i64, i64, i64)> = r
        .edges
        .iter()
        .map(|e| (e.src, e.dst, e.kind.code()))
        .collect();
    let had: FxHashSet<(i64, i64, i64)> = stored.iter().map(|(e, _)| *e).collect();
    if had.len() != stored.len() {
        return Edges::All; // duplicates stored: not what this write would leave
    }
    let gone = stored
        .iter()
        .filter(|(e, _)| !new.contains(e))
        .map(|&(_, rowid)| rowid)
        .collect();
    let added = r
        .edges
        .iter()
        .map(|e| (e.src, e.dst, e.kind.code()))
        .filter(|e| !had.contains(e))
        .collect();
    Edges::Diff { gone, added }
}

fn sorted<T: Ord>(rows: impl Iterator<Item = rusqlite::Result<T>>) -> CoreResult<Vec<T>> {
    let mut v = rows.collect::<rusqlite::Result<Vec<T>>>()?;
    v.sort();
    Ok(v)
}

fn sorted_vec<T: Ord>(items: impl Iterator<Item = T>) -> Vec<T> {
    let mut v: Vec<T> = items.collect();
    v.sort();
    v
}
