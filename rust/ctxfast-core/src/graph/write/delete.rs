//! Deleting the rows a refresh replaces: every row of removed and re-parsed files, and the
//! resolution rows of re-resolved files that are rewritten.

use super::rewrite::Edges;
use super::{GraphDelta, ToRewrite};
use crate::error::CoreResult;
use rusqlite::Transaction;

/// Deletes every row of the files in `wipe_all` and the resolution rows (reference sites,
/// their edges, unresolved names, dependencies) of the re-resolved files that are rewritten;
/// returns how many (nodes, edges) went.
pub(super) fn delete_rows(
    tx: &Transaction<'_>,
    wipe_all: &[&str],
    delta: &GraphDelta<'_, '_>,
    resolved: &[ToRewrite<'_>],
) -> CoreResult<(i64, i64)> {
    let mut del_edges = tx.prepare_cached(
        "DELETE FROM edge_rows WHERE src IN (SELECT id FROM nodes WHERE file = ?1)",
    )?;
    let mut del_nodes = tx.prepare_cached(
        "DELETE FROM node_rows WHERE file_id = (SELECT id FROM files WHERE path = ?1)",
    )?;
    let mut del_refs = tx.prepare_cached(
        "DELETE FROM node_rows WHERE file_id = (SELECT id FROM files WHERE path = ?1) AND kind = 'ref'",
    )?;
    let mut del_meta = tx.prepare_cached(
        "DELETE FROM defs_meta WHERE id IN (SELECT id FROM nodes WHERE file = ?1)",
    )?;
    let mut del_unres = tx.prepare_cached("DELETE FROM unresolved WHERE file = ?1")?;
    let mut del_deps = tx.prepare_cached(
        "DELETE FROM file_dep_rows WHERE src = (SELECT id FROM files WHERE path = ?1)",
    )?;
    let mut del_raw = tx.prepare_cached("DELETE FROM raw WHERE path = ?1")?;
    let mut del_file = tx.prepare_cached("DELETE FROM files WHERE path = ?1")?;
    let mut del_stat = tx.prepare_cached("DELETE FROM file_stat WHERE path = ?1")?;
    let run = |st: &mut rusqlite::CachedStatement<'_>, p: &str| -> CoreResult<i64> {
        Ok(st.execute([p])? as i64)
    };
    let (mut nodes, mut edges) = (0, 0);
    for p in wipe_all {
        edges += run(&mut del_edges, p)?;
        run(&mut del_meta, p)?;
        nodes += run(&mut del_nodes, p)?;
        run(&mut del_unres, p)?;
        run(&mut del_deps, p)?;
        run(&mut del_raw, p)?;
        run(&mut del_stat, p)?;
    }
    // Only a file gone gives up its `files` row (and id); a changed one is updated in place.
    for p in delta.removed {
        run(&mut del_file, p)?;
    }
    let mut del_edge = tx.prepare_cached("DELETE FROM edge_rows WHERE rowid = ?1")?;
    for (i, _, w) in resolved {
        let p = delta.files[*i].rel.as_str();
        match &w.edges {
            Edges::All => edges += run(&mut del_edges, p)?,
            Edges::Diff { gone, .. } => {
                for rowid in gone {
                    edges += del_edge.execute([rowid])? as i64;
                }
            }
        }
        if w.refs {
            nodes += run(&mut del_refs, p)?;
        }
        if w.unresolved {
            run(&mut del_unres, p)?;
        }
        if w.deps {
            run(&mut del_deps, p)?;
        }
    }
    Ok((nodes, edges))
}
