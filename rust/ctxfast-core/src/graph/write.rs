//! The write stage of a refresh: one transaction that replaces the rows of changed, removed
//! and re-resolved files, then brings `name_index` and `meta` up to date. A cold build
//! streams its rows through [`super::bulk`] instead and ends with [`build_indexes`].

use super::parse::ChangedFile;
use super::plan::{FileStat, SkippedFile};
use super::progress::{self, Progress};
use super::resolve::{FileData, Resolved, Resolver};
use super::store;
use crate::error::{CoreError, CoreResult};
use rayon::prelude::*;
use rusqlite::{params, Transaction};
use std::borrow::Cow;
use std::collections::HashMap;

mod delete;
mod rewrite;
use delete::delete_rows;
use rewrite::{Edges, Rewrite};

/// A re-resolved file (index into the run's files) with its resolution and what of its
/// stored rows the write replaces.
type ToRewrite<'d> = (usize, &'d Resolved, Rewrite);

/// What changes in the graph tables.
pub struct GraphDelta<'a, 'r> {
    pub files: &'a [FileData],
    pub resolver: &'a Resolver<'r>,
    /// Files parsed in this run: their rows (and definitions) are replaced.
    pub changed: &'a [ChangedFile],
    /// Files resolved in this run (indexes into `files`) with their resolution: their
    /// reference sites, edges, unresolved names and dependencies are replaced.
    pub resolved: &'a [(usize, Resolved)],
    /// Files gone since the previous run: every row of theirs is deleted.
    pub removed: &'a [String],
    /// Size and mtime of every file parsed in this run.
    pub stats: &'a HashMap<&'a str, FileStat>,
    /// Definitions that only moved lines, as (old, new) node key
    /// ([`super::names::ChangedNames::moved`]): stored edges into the old key now end at the
    /// new one, as resolving their files again would give.
    pub moved: &'a [(i64, i64)],
}

/// A file's row, updated in place when it exists: a file keeps its id while it exists
/// (other files' `file_dep_rows` name it by id). Shared by the refresh write and the
/// streamed cold build.
pub(crate) const INSERT_FILE: &str =
    "INSERT INTO files(path, sha256, language, bytes, parse_error) VALUES(?1, ?2, ?3, ?4, ?5) \
     ON CONFLICT(path) DO UPDATE SET sha256 = excluded.sha256, language = excluded.language, \
     bytes = excluded.bytes, parse_error = excluded.parse_error RETURNING id";
/// A file's stored extraction and interface.
pub(crate) const INSERT_RAW: &str =
    "INSERT OR REPLACE INTO raw(path, data, iface) VALUES(?1, ?2, ?3)";
/// A file's stat record, read by the next refresh's plan.
pub(crate) const INSERT_STAT: &str =
    "INSERT OR REPLACE INTO file_stat(path, size, mtime_ns) VALUES(?1, ?2, ?3)";

/// Writes `delta` inside `tx` and returns the graph's (node, edge) counts after it. Checks
/// `progress` between batches: dropping `tx` on a cancel rolls the run back.
pub fn write_graph(
    tx: &Transaction<'_>,
    delta: &GraphDelta<'_, '_>,
    progress: &Progress,
) -> CoreResult<(i64, i64)> {
    let files = delta.files;
    let t0 = std::time::Instant::now();
    let lap = |what: &str| super::trace(&format!("write: {what}"), t0);
    let (mut n_nodes, mut n_edges) = graph_counts(tx)?;
    let wipe_all: Vec<&str> = delta
        .removed
        .iter()
        .map(String::as_str)
        .chain(delta.changed.iter().map(|c| files[c.index].rel.as_str()))
        .collect();
    // Before anything reads the stored edges back: the re-resolved files' edges are then
    // compared with what they would be after the move.
    repoint_edges(tx, delta.moved)?;
    lap("moved edges repointed");
    // Definition qualnames leaving the graph: candidates for removal from name_index.
    let old_quals = stored_qualnames(tx, &wipe_all)?;
    let resolved = to_rewrite(tx, delta)?;
    lap("stored rows read back");
    let deleted = delete_rows(tx, &wipe_all, delta, &resolved)?;
    lap("rows deleted");
    n_nodes -= deleted.0;
    n_edges -= deleted.1;

    let mut ids = insert_files(tx, delta, progress)?;
    for (i, _, _) in &resolved {
        ids.get(files, *i)?;
    }
    lap("files written");
    n_nodes += insert_nodes(tx, delta, &resolved, &ids.known, progress)?;
    lap("nodes written");
    n_edges += insert_resolution(tx, delta, &resolved, &mut ids, progress)?;
    lap("resolution written");
    update_name_index(tx, &old_quals, delta)?;
    Ok((n_nodes, n_edges))
}

/// Points every stored edge ending at an old key of `moved` at its new key. All at once: a
/// new key may be another pair's old one (every definition below an insertion moves), so
/// the edges go through the negative keys first (node keys are non-negative).
fn repoint_edges(tx: &Transaction<'_>, moved: &[(i64, i64)]) -> CoreResult<()> {
    if moved.is_empty() {
        return Ok(());
    }
    let mut st = tx.prepare_cached("UPDATE edge_rows SET dst = ?2 WHERE dst = ?1")?;
    for &(from, to) in moved {
        st.execute([from, -1 - to])?;
    }
    tx.execute("UPDATE edge_rows SET dst = -1 - dst WHERE dst < 0", [])?;
    Ok(())
}

/// The definition qualnames stored for the files in `wipe_all`, read before their rows go.
fn stored_qualnames(tx: &Transaction<'_>, wipe_all: &[&str]) -> CoreResult<Vec<String>> {
    let mut old_quals: Vec<String> = vec![];
    let mut st =
        tx.prepare_cached("SELECT qualname FROM nodes WHERE file = ?1 AND kind != 'ref'")?;
    for p in wipe_all {
        let rows = st.query_map([p], |r| r.get::<_, String>(0))?;
        old_quals.extend(rows.flatten());
    }
    Ok(old_quals)
}

/// The re-resolved files with anything to rewrite: of those, only the rows that differ are
/// rewritten ([`rewrite`]).
fn to_rewrite<'d>(
    tx: &Transaction<'_>,
    delta: &GraphDelta<'d, '_>,
) -> CoreResult<Vec<ToRewrite<'d>>> {
    let parsed: rustc_hash::FxHashSet<usize> = delta.changed.iter().map(|c| c.index).collect();
    let plan = rewrite::plan(tx, delta.files, delta.resolved, &parsed)?;
    Ok(delta
        .resolved
        .iter()
        .zip(plan)
        .filter(|(_, w)| w.anything())
        .map(|((i, r), w)| (*i, r, w))
        .collect())
}

/// Writes the `files`, `file_stat` and `raw` rows of every file parsed in this run (the
/// blobs encoded in parallel first); returns the ids, which later rows refer to.
fn insert_files<'t>(
    tx: &'t Transaction<'_>,
    delta: &GraphDelta<'_, '_>,
    progress: &Progress,
) -> CoreResult<FileIds<'t>> {
    let files = delta.files;
    let mut ins_file = tx.prepare_cached(INSERT_FILE)?;
    let mut ins_raw = tx.prepare_cached(INSERT_RAW)?;
    let mut ins_stat = tx.prepare_cached(INSERT_STAT)?;
    let blobs: Vec<(Vec<u8>, Vec<u8>)> = delta
        .changed
        .par_iter()
        .map(|c| {
            let f = &files[c.index];
            let iface = f.raw.interface_blob(f.lang.signatures_resolve());
            (f.raw.encode_compressed(), iface)
        })
        .collect();
    let mut ids = FileIds::new(tx)?;
    for (c, (data, iface)) in delta.changed.iter().zip(&blobs) {
        progress.check()?;
        let f = &files[c.index];
        let stat = delta
            .stats
            .get(f.rel.as_str())
            .copied()
            .unwrap_or(FileStat {
                size: 0,
                mtime_ns: 0,
            });
        let id: i64 = ins_file.query_row(
            params![f.rel, c.sha, c.language, stat.size, c.parse_error],
            |r| r.get(0),
        )?;
        ids.known.insert(c.index, id);
        ins_stat.execute(params![f.rel, stat.size, stat.mtime_ns])?;
        ins_raw.execute(params![f.rel, data, iface])?;
    }
    Ok(ids)
}

/// Writes the edges, unresolved names and file dependencies of the re-resolved files that
/// are rewritten (only the added edges where the rest is kept); returns how many edges went in.
fn insert_resolution(
    tx: &Transaction<'_>,
    delta: &GraphDelta<'_, '_>,
    resolved: &[ToRewrite<'_>],
    ids: &mut FileIds<'_>,
    progress: &Progress,
) -> CoreResult<i64> {
    let files = delta.files;
    let mut n_edges = 0;
    let mut ins_edge =
        tx.prepare_cached("INSERT INTO edge_rows(src, dst, kind) VALUES(?1, ?2, ?3)")?;
    let mut ins_unres = tx.prepare_cached(
        "INSERT INTO unresolved(name, node_id, file, line, col) VALUES(?1, ?2, ?3, ?4, ?5)",
    )?;
    let mut ins_dep = tx.prepare_cached("INSERT INTO file_dep_rows(src, dst) VALUES(?1, ?2)")?;
    for (i, r, w) in resolved {
        progress.check()?;
        let (i, rel) = (*i, files[*i].rel.as_str());
        let every: Vec<(i64, i64, i64)>;
        let added = match &w.edges {
            Edges::All => {
                every = r
                    .edges
                    .iter()
                    .map(|e| (e.src, e.dst, e.kind.code()))
                    .collect();
                &every
            }
            Edges::Diff { added, .. } => added,
        };
        for (src, dst, kind) in added {
            n_edges += ins_edge.execute(params![src, dst, kind])? as i64;
        }
        if w.unresolved {
            for u in &r.unresolved {
                ins_unres.execute(params![u.name, u.node, rel, u.line, u.col])?;
            }
        }
        if w.deps {
            for d in r.deps_in_order() {
                let (src, dst) = (ids.get(files, i)?, ids.get(files, d as usize)?);
                ins_dep.execute(params![src, dst])?;
            }
        }
    }
    Ok(n_edges)
}

/// `files.id` of the run's files (indexes into [`GraphDelta::files`]): those written by this
/// run, then the stored ones as they are asked for.
struct FileIds<'t> {
    known: HashMap<usize, i64>,
    stored: rusqlite::CachedStatement<'t>,
}

impl<'t> FileIds<'t> {
    fn new(tx: &'t Transaction<'_>) -> CoreResult<Self> {
        Ok(FileIds {
            known: HashMap::new(),
            stored: tx.prepare_cached("SELECT id FROM files WHERE path = ?1")?,
        })
    }

    fn get(&mut self, files: &[FileData], i: usize) -> CoreResult<i64> {
        if let Some(&id) = self.known.get(&i) {
            return Ok(id);
        }
        let id: i64 = self.stored.query_row([&files[i].rel], |r| r.get(0))?;
        self.known.insert(i, id);
        Ok(id)
    }
}

/// One `nodes` row (plus its `defs_meta` row for definitions) waiting to be inserted.
struct NodeRow<'a> {
    /// [`store::node_key`] of `id`.
    key: i64,
    id: Cow<'a, str>,
    kind: &'static str,
    name: &'a str,
    qual: &'a str,
    /// `files.id` of the node's file.
    file: i64,
    line: u32,
    col: u32,
    end_line: u32,
    meta: Option<(&'a str, &'a str)>,
}

/// Inserts the definitions of changed files and the reference sites of the re-resolved
/// files whose sites are rewritten; returns how many nodes went in. A row whose id is already stored is the same node (a
/// reference site on a definition's line: the definition stands for it) unless the stored
/// row has another id under the same key: that is a key collision, an error.
fn insert_nodes(
    tx: &Transaction<'_>,
    delta: &GraphDelta<'_, '_>,
    resolved: &[ToRewrite<'_>],
    file_ids: &HashMap<usize, i64>,
    progress: &Progress,
) -> CoreResult<i64> {
    let files = delta.files;
    let mut ins_node = tx.prepare_cached("INSERT OR IGNORE INTO node_rows(id, kind, name, qualname, file_id, line, col, end_line) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)")?;
    let mut ins_meta = tx
        .prepare_cached("INSERT OR IGNORE INTO defs_meta(id, signature, doc) VALUES(?1, ?2, ?3)")?;
    // Nodes go in sorted by key: appending to the primary-key B-tree is several times
    // cheaper than inserting at random positions. The sort is stable, so among equal ids
    // the first row (definitions before reference sites, files in order) still wins.
    let mut rows: Vec<NodeRow<'_>> = vec![];
    for c in delta.changed {
        let f = &files[c.index];
        let quals = delta.resolver.qualnames(c.index as u32);
        for (di, d) in f.raw.defs.iter().enumerate() {
            let id = format!("{}:{}", quals[di], d.line);
            rows.push(NodeRow {
                key: store::node_key(&id),
                id: Cow::Owned(id),
                kind: d.kind.as_str(),
                name: &d.name,
                qual: &quals[di],
                file: file_ids[&c.index],
                line: d.line,
                col: d.col,
                end_line: d.end_line,
                meta: Some((&d.signature, &d.doc)),
            });
        }
    }
    for (i, r, _) in resolved.iter().filter(|(_, _, w)| w.refs) {
        progress.check()?;
        let file = file_ids[i];
        for n in &r.ref_nodes {
            rows.push(NodeRow {
                key: n.key,
                id: Cow::Borrowed(&n.id),
                kind: "ref",
                name: &n.name,
                qual: &n.qualname,
                file,
                line: n.line,
                col: n.col,
                end_line: n.line,
                meta: None,
            });
        }
    }
    rows.par_sort_by_key(|r| r.key);
    let mut stored_id =
        tx.prepare_cached("SELECT qualname || ':' || line FROM node_rows WHERE id = ?1")?;
    let mut inserted = 0;
    for n in &rows {
        let added = ins_node.execute(params![
            n.key, n.kind, n.name, n.qual, n.file, n.line, n.col, n.end_line
        ])?;
        if added == 0 {
            let other: String = stored_id.query_row([n.key], |r| r.get(0))?;
            if other != n.id {
                return Err(CoreError::InvalidArgument(format!(
                    "node ids {other:?} and {:?} share the key {}; please report this",
                    n.id, n.key
                )));
            }
        }
        inserted += added as i64;
        if let Some((sig, doc)) = n.meta {
            ins_meta.execute(params![n.key, sig, doc])?;
        }
    }
    Ok(inserted)
}

/// Incremental `name_index`: drops the qualnames (`old_quals`) no definition carries any
/// more and adds those of the changed files.
fn update_name_index(
    tx: &Transaction<'_>,
    old_quals: &[String],
    delta: &GraphDelta<'_, '_>,
) -> CoreResult<()> {
    let mut drop_q = tx.prepare_cached("DELETE FROM name_index WHERE qualname = ?1 AND NOT EXISTS (SELECT 1 FROM node_rows WHERE qualname = ?1 AND kind != 'ref')")?;
    for q in old_quals {
        drop_q.execute([q])?;
    }
    let mut add_q = tx.prepare_cached("INSERT INTO name_index(qualname) SELECT ?1 WHERE NOT EXISTS (SELECT 1 FROM name_index WHERE qualname = ?1)")?;
    for c in delta.changed {
        for q in delta.resolver.qualnames(c.index as u32) {
            add_q.execute([q])?;
        }
    }
    Ok(())
}

/// After a cold bulk load: the secondary indexes and `name_index`, built in one pass each.
/// Building them is one long statement (seconds on a large tree): a cancel during it
/// interrupts SQLite itself.
pub fn build_indexes(
    tx: &Transaction<'_>,
    progress: &Progress,
    interrupt: &rusqlite::InterruptHandle,
) -> CoreResult<()> {
    progress::while_running(progress, interrupt, || {
        tx.execute_batch(store::SCHEMA)?;
        tx.execute_batch(
            "DELETE FROM name_index; INSERT INTO name_index(qualname) SELECT DISTINCT qualname FROM node_rows WHERE kind != 'ref';",
        )
        .map_err(CoreError::from)
    })
}

/// What every run writes to `meta` and the file tables, whatever else it did.
pub struct RunRecord<'a> {
    /// Files recorded without a graph: their `files` rows are rewritten.
    pub skipped: &'a [SkippedFile],
    /// Unchanged files whose recorded stat is refreshed.
    pub restat: &'a [(&'a str, FileStat)],
    pub run_start_ns: i64,
    /// The package layout signature ([`super::lang::ModuleNamer::signature`]).
    pub layout: &'a str,
    /// What resolution read outside the files ([`super::resolve::Context::stamp`]).
    pub context: &'a str,
}

/// Rewrites the rows of skipped files (they carry no graph), the refreshed stats, the
/// layout, the resolution context and the run's times.
pub fn write_run_record(tx: &Transaction<'_>, rec: &RunRecord<'_>) -> CoreResult<()> {
    tx.execute(
        "INSERT OR REPLACE INTO meta(key, value) VALUES('package_layout', ?1), \
         ('resolve_context', ?2)",
        [rec.layout, rec.context],
    )?;
    let mut ins_stat = tx.prepare_cached(
        "INSERT OR REPLACE INTO file_stat(path, size, mtime_ns) VALUES(?1, ?2, ?3)",
    )?;
    for (p, stat) in rec.restat {
        ins_stat.execute(params![p, stat.size, stat.mtime_ns])?;
    }
    tx.execute(
        "INSERT OR REPLACE INTO meta(key, value) VALUES('run_start_ns', ?1)",
        [rec.run_start_ns.to_string()],
    )?;
    tx.execute("DELETE FROM files WHERE sha256 IS NULL", [])?;
    let mut ins_file = tx.prepare_cached("INSERT OR REPLACE INTO files(path, sha256, language, bytes, parse_error) VALUES(?1, ?2, ?3, ?4, ?5)")?;
    for s in rec.skipped {
        ins_file.execute(params![
            s.rel,
            Option::<String>::None,
            s.lang.map(super::lang::Lang::as_str),
            s.bytes as i64,
            s.reason
        ])?;
    }
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64());
    tx.execute(
        "INSERT OR REPLACE INTO meta(key, value) VALUES('last_refresh', ?1)",
        [now.to_string()],
    )?;
    Ok(())
}

/// Records the graph's node and edge counts in `meta`.
pub fn write_counts(tx: &Transaction<'_>, nodes: i64, edges: i64) -> CoreResult<()> {
    tx.execute(
        "INSERT OR REPLACE INTO meta(key, value) VALUES('node_count', ?1), ('edge_count', ?2)",
        [nodes.to_string(), edges.to_string()],
    )?;
    Ok(())
}

/// Node and edge counts, kept in `meta` by every write (counting 100k-row tables on each
/// refresh costs more than the rest of a no-op refresh); counted once if missing.
pub fn graph_counts(conn: &rusqlite::Connection) -> CoreResult<(i64, i64)> {
    let stored = |k: &str| -> Option<i64> {
        conn.query_row("SELECT value FROM meta WHERE key = ?1", [k], |r| {
            r.get::<_, String>(0)
        })
        .ok()
        .and_then(|v| v.parse().ok())
    };
    if let (Some(n), Some(e)) = (stored("node_count"), stored("edge_count")) {
        return Ok((n, e));
    }
    let count = |sql: &str| -> CoreResult<i64> { Ok(conn.query_row(sql, [], |r| r.get(0))?) };
    Ok((
        count("SELECT COUNT(*) FROM nodes")?,
        count("SELECT COUNT(*) FROM edges")?,
    ))
}
