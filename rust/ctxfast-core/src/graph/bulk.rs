//! The write side of a cold build, streamed: the rows of each chunk of parsed files and of
//! each chunk of resolved files are written while the next chunk is parsed or resolved,
//! instead of holding every extraction's rows and every resolution until a final write.
//!
//! Rows go in exactly as the one-transaction write of a refresh ([`super::write`]) would
//! put them: files in order (so `files.id` is the same), edges and unresolved names in
//! resolution order. Only `node_rows` and `defs_meta` need another order — by node key,
//! first row winning among equal keys (definitions before reference sites, files in order)
//! — and appending to their primary-key B-trees in key order is several times cheaper than
//! inserting at random positions. So nodes are appended to a staging table as they come and
//! moved into `node_rows` in one sorted `INSERT ... SELECT` at the end: SQLite's external
//! sort keeps that bounded in memory however large the tree.

use super::discover::Found;
use super::lang::ModuleNamer;
use super::parse::Outcome;
use super::plan::FileStat;
use super::progress::ContentRow;
use super::resolve::{qualnames_of, Resolved};
use super::{store, write};
use crate::error::{CoreError, CoreResult};
use rayon::prelude::*;
use rusqlite::types::{ToSqlOutput::Borrowed, ValueRef};
use rusqlite::{params, Connection};

/// Batches that may wait for the writer: the parse and resolve workers run at most this far
/// ahead of it, which bounds the rows held in memory.
pub const BATCHES_IN_FLIGHT: usize = 2;

/// One definition of a parsed file: its `nodes` row and its `defs_meta` row.
pub struct DefRow {
    key: i64,
    kind: &'static str,
    name: String,
    qual: String,
    line: u32,
    col: u32,
    end_line: u32,
    signature: String,
    doc: String,
}

/// The rows of one parsed file: `files`, `file_stat`, `raw` and its definitions.
pub struct FileRows {
    rel: String,
    sha: String,
    language: &'static str,
    stat: FileStat,
    parse_error: Option<String>,
    data: Vec<u8>,
    iface: Vec<u8>,
    defs: Vec<DefRow>,
}

/// What the workers hand the writer, in the order it is written: every file's rows come
/// before any resolution (reference sites and edges name files by id).
pub enum Batch {
    Files(Vec<FileRows>),
    /// (index into the run's file list, its resolution), in file order.
    Resolved(Vec<(usize, Resolved)>),
}

/// The rows of the parsed files of one chunk (`outcomes` is `part`'s), built in parallel:
/// blobs deflated and node keys hashed on the workers, not on the writer.
pub fn file_rows(part: &[Found], outcomes: &[Outcome], namer: &ModuleNamer) -> Vec<FileRows> {
    part.par_iter()
        .zip(outcomes.par_iter())
        .filter_map(|(f, o)| {
            let Outcome::Parsed {
                sha,
                raw,
                parse_error,
            } = o
            else {
                return None;
            };
            let lang = f.lang?;
            let module = namer.name(&f.rel, lang);
            let quals = qualnames_of(&f.rel, lang, &module, raw);
            let defs = raw
                .defs
                .iter()
                .zip(quals)
                .map(|(d, qual)| DefRow {
                    key: store::key_of(&qual, d.line),
                    kind: d.kind.as_str(),
                    name: d.name.clone(),
                    qual,
                    line: d.line,
                    col: d.col,
                    end_line: d.end_line,
                    signature: d.signature.clone(),
                    doc: d.doc.clone(),
                })
                .collect();
            Some(FileRows {
                rel: f.rel.clone(),
                sha: sha.clone(),
                language: lang.as_str(),
                stat: FileStat::of(f),
                parse_error: parse_error.clone(),
                data: raw.encode_compressed(),
                iface: raw.interface_blob(lang.signatures_resolve()),
                defs,
            })
        })
        .collect()
}

/// Nodes in arrival order (`seq`), moved into `node_rows` and `defs_meta` by
/// [`BulkWriter::finish`]. A definition carries its signature (a reference site NULL).
const STAGE: &str = "CREATE TEMP TABLE node_stage(seq INTEGER PRIMARY KEY, id INT, kind TEXT, \
    name TEXT, qualname TEXT, file_id INT, line INT, col INT, end_line INT, signature TEXT, doc TEXT);";

/// The bytes of a staged text value (a qualname is never NULL; NULL would read as empty).
fn text(v: ValueRef<'_>) -> &[u8] {
    match v {
        ValueRef::Text(b) | ValueRef::Blob(b) => b,
        _ => &[],
    }
}

/// Writes a cold build's [`Batch`]es into an empty index inside the caller's transaction.
pub struct BulkWriter<'t> {
    tx: &'t Connection,
    /// `files.id` and path of the run's files, by index into its file list.
    ids: Vec<i64>,
    paths: Vec<String>,
    /// `(sha256, language)` of the run's files, by index into its file list.
    keys: Vec<(String, &'static str)>,
    edges: i64,
}

impl<'t> BulkWriter<'t> {
    /// Drops the secondary indexes (rebuilt once after the load) and creates the stage.
    pub fn new(tx: &'t Connection) -> CoreResult<Self> {
        tx.execute_batch(store::DROP_INDEXES)?;
        tx.execute_batch(STAGE)?;
        Ok(BulkWriter {
            tx,
            ids: vec![],
            paths: vec![],
            keys: vec![],
            edges: 0,
        })
    }

    /// `(path, sha256, language)` of every file written, sorted by path: the `files` rows
    /// with a content key once the run commits (skipped files get theirs without one).
    pub fn content_rows(&self) -> Vec<ContentRow> {
        let mut rows: Vec<ContentRow> = self
            .paths
            .iter()
            .zip(&self.keys)
            .map(|(p, (sha, lang))| (p.clone(), sha.clone(), (*lang).to_string()))
            .collect();
        rows.sort_unstable();
        rows
    }

    /// How many files have their rows written.
    pub fn files_written(&self) -> usize {
        self.ids.len()
    }

    pub fn write(&mut self, batch: Batch) -> CoreResult<()> {
        match batch {
            Batch::Files(rows) => self.files(rows),
            Batch::Resolved(done) => self.resolved(&done),
        }
    }

    fn files(&mut self, rows: Vec<FileRows>) -> CoreResult<()> {
        let tx = self.tx;
        let mut ins_file = tx.prepare_cached(write::INSERT_FILE)?;
        let mut ins_raw = tx.prepare_cached(write::INSERT_RAW)?;
        let mut ins_stat = tx.prepare_cached(write::INSERT_STAT)?;
        let mut stage = tx.prepare_cached(
            "INSERT INTO node_stage(id, kind, name, qualname, file_id, line, col, end_line, signature, doc) \
             VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
        )?;
        for f in rows {
            let id: i64 = ins_file.query_row(
                params![f.rel, f.sha, f.language, f.stat.size, f.parse_error],
                |r| r.get(0),
            )?;
            ins_stat.execute(params![f.rel, f.stat.size, f.stat.mtime_ns])?;
            ins_raw.execute(params![f.rel, f.data, f.iface])?;
            for d in &f.defs {
                stage.execute(params![
                    d.key,
                    d.kind,
                    d.name,
                    d.qual,
                    id,
                    d.line,
                    d.col,
                    d.end_line,
                    d.signature,
                    d.doc
                ])?;
            }
            self.ids.push(id);
            self.paths.push(f.rel);
            self.keys.push((f.sha, f.language));
        }
        Ok(())
    }

    fn resolved(&mut self, done: &[(usize, Resolved)]) -> CoreResult<()> {
        let tx = self.tx;
        let mut stage = tx.prepare_cached(
            "INSERT INTO node_stage(id, kind, name, qualname, file_id, line, col, end_line) \
             VALUES(?1, 'ref', ?2, ?3, ?4, ?5, ?6, ?5)",
        )?;
        let mut ins_edge =
            tx.prepare_cached("INSERT INTO edge_rows(src, dst, kind) VALUES(?1, ?2, ?3)")?;
        let mut ins_unres = tx.prepare_cached(
            "INSERT INTO unresolved(name, node_id, file, line, col) VALUES(?1, ?2, ?3, ?4, ?5)",
        )?;
        let mut ins_dep =
            tx.prepare_cached("INSERT INTO file_dep_rows(src, dst) VALUES(?1, ?2)")?;
        let id_of = |i: usize| -> CoreResult<i64> {
            self.ids.get(i).copied().ok_or_else(|| {
                CoreError::InvalidArgument(format!(
                    "cold build: file {i} resolved before its row was written; please report this"
                ))
            })
        };
        for (i, r) in done {
            let file = id_of(*i)?;
            for n in &r.ref_nodes {
                stage.execute(params![n.key, n.name, n.qualname, file, n.line, n.col])?;
            }
            for e in &r.edges {
                self.edges += ins_edge.execute(params![e.src, e.dst, e.kind.code()])? as i64;
            }
            let rel = self.paths[*i].as_str();
            for u in &r.unresolved {
                ins_unres.execute(params![u.name, u.node, rel, u.line, u.col])?;
            }
            for d in r.deps_in_order() {
                ins_dep.execute(params![file, id_of(d as usize)?])?;
            }
        }
        Ok(())
    }

    /// Moves the staged nodes into `node_rows` and `defs_meta` in key order (the first row
    /// of a key wins, as [`super::write`] inserts them; for `defs_meta`, the first row of the
    /// key that carries a signature) and returns the (node, edge) counts. A key held by two
    /// different ids is a key collision, an error.
    ///
    /// One sorted pass does all three: the rows of a key arrive together, so the collision
    /// check compares each row with the first of its key instead of looking every staged row
    /// up in `node_rows` (a join that cost more than the sort itself at 30,000 files: one
    /// B-tree probe per row, in random order), and `defs_meta` needs no second sort.
    pub fn finish(self) -> CoreResult<(i64, i64)> {
        let tx = self.tx;
        let mut sorted = tx.prepare(
            "SELECT id, kind, name, qualname, file_id, line, col, end_line, signature, doc \
             FROM node_stage ORDER BY id, seq",
        )?;
        let mut ins_node = tx.prepare(
            "INSERT OR IGNORE INTO node_rows(id, kind, name, qualname, file_id, line, col, end_line) \
             VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
        )?;
        let mut ins_meta =
            tx.prepare("INSERT OR IGNORE INTO defs_meta(id, signature, doc) VALUES(?1, ?2, ?3)")?;
        let mut nodes = 0i64;
        // The key of the group being read, its first row's qualname and line, and whether
        // its `defs_meta` row is written.
        let mut key: Option<i64> = None;
        let (mut first_qual, mut first_line) = (Vec::<u8>::new(), 0i64);
        let mut meta_done = false;
        let mut rows = sorted.query([])?;
        while let Some(r) = rows.next()? {
            let id: i64 = r.get(0)?;
            let qual = r.get_ref(3)?;
            let line: i64 = r.get(5)?;
            if key == Some(id) {
                if text(qual) != first_qual.as_slice() || line != first_line {
                    return Err(CoreError::InvalidArgument(format!(
                        "node ids {:?} and {:?} share a key; please report this",
                        format!("{}:{first_line}", String::from_utf8_lossy(&first_qual)),
                        format!("{}:{line}", String::from_utf8_lossy(text(qual))),
                    )));
                }
            } else {
                key = Some(id);
                first_qual.clear();
                first_qual.extend_from_slice(text(qual));
                first_line = line;
                meta_done = false;
                nodes += ins_node.execute(params![
                    id,
                    Borrowed(r.get_ref(1)?),
                    Borrowed(r.get_ref(2)?),
                    Borrowed(qual),
                    Borrowed(r.get_ref(4)?),
                    Borrowed(r.get_ref(5)?),
                    Borrowed(r.get_ref(6)?),
                    Borrowed(r.get_ref(7)?)
                ])? as i64;
            }
            let signature = r.get_ref(8)?;
            if !meta_done && signature != ValueRef::Null {
                ins_meta.execute(params![id, Borrowed(signature), Borrowed(r.get_ref(9)?)])?;
                meta_done = true;
            }
        }
        drop(rows);
        drop(sorted);
        tx.execute_batch("DROP TABLE node_stage;")?;
        Ok((nodes, self.edges))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A bulk writer over a fresh in-memory index whose stage holds `rows`
    /// (id, kind, qualname, line, signature), in arrival order.
    fn staged(
        conn: &Connection,
        rows: &[(i64, &str, &str, u32, Option<&str>)],
    ) -> CoreResult<(i64, i64)> {
        let w = BulkWriter::new(conn)?;
        for (id, kind, qual, line, sig) in rows {
            conn.execute(
                "INSERT INTO node_stage(id, kind, name, qualname, file_id, line, col, end_line, signature, doc) \
                 VALUES(?1, ?2, 'n', ?3, 1, ?4, 0, ?4, ?5, ?5)",
                params![id, kind, qual, line, sig],
            )?;
        }
        w.finish()
    }

    #[test]
    fn finish_keeps_the_first_row_of_a_key_and_its_first_signature() {
        let conn = Connection::open_in_memory().unwrap();
        store::create_schema(&conn).unwrap();
        let (nodes, _) = staged(
            &conn,
            &[
                (7, "function", "m.f", 3, Some("def f()")),
                (2, "ref", "m.g", 9, None),
                (7, "ref", "m.f", 3, None),
                (2, "function", "m.g", 9, Some("def g()")),
                (7, "function", "m.f", 3, Some("def f(x)")),
            ],
        )
        .unwrap();
        assert_eq!(nodes, 2);
        let rows = |sql: &str| -> Vec<(i64, String)> {
            let mut st = conn.prepare(sql).unwrap();
            let out = st.query_map([], |r| Ok((r.get(0)?, r.get(1)?)));
            out.unwrap().map(Result::unwrap).collect()
        };
        assert_eq!(
            rows("SELECT id, kind FROM node_rows ORDER BY id"),
            vec![(2, "ref".into()), (7, "function".into())]
        );
        assert_eq!(
            rows("SELECT id, signature FROM defs_meta ORDER BY id"),
            vec![(2, "def g()".into()), (7, "def f()".into())]
        );
    }

    #[test]
    fn finish_reports_two_ids_sharing_a_key() {
        for clash in [("m.f", 4), ("m.h", 3)] {
            let conn = Connection::open_in_memory().unwrap();
            store::create_schema(&conn).unwrap();
            let err = staged(
                &conn,
                &[
                    (7, "function", "m.f", 3, Some("def f()")),
                    (7, "ref", clash.0, clash.1, None),
                ],
            )
            .unwrap_err()
            .to_string();
            assert!(
                err.contains("\"m.f:3\"") && err.contains(&format!("\"{}:{}\"", clash.0, clash.1)),
                "{err}"
            );
        }
    }
}
