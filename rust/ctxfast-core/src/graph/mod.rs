//! The line-level code graph (spec-03 §3.2): discover → parse (tree-sitter, in parallel) →
//! resolve names → store in `recon.db`.
//!
//! Node kinds:
//! * `function` — functions and methods (a method's `contain` edge points at its class);
//! * `class` — classes, structs, enums, interfaces, traits, type aliases;
//! * `var` — module-/class-level variables and constants (first binding per scope);
//! * `def` — module-level definitions: one per file (id `module.qualname:1`, spanning the
//!   file), plus inline Rust `mod` blocks. `import` edges to a module and top-level `contain`
//!   edges point at it;
//! * `ref` — a reference site (call, decorator, base class, import statement) that produced
//!   an edge or an unresolved entry. Its `qualname` is the *enclosing* definition and its id
//!   is `enclosing_qualname:line` (one row per scope and line, as the spec's edge example
//!   `repo.module.main:15`). When that id equals a definition's own id (a call on a `def`
//!   line), the definition row stands for the site.
//!
//! Edges: `invoke` (ref → definition), `import` (import site → module/definition), `contain`
//! (definition → enclosing definition). Only project-internal targets get edges; names that
//! resolve nowhere are rows in `unresolved(name, node_id, file, line, col)` (Python only; see
//! [`resolve`]).
//!
//! Incremental refresh: each file is keyed by `sha256(bytes + path)`. Unchanged files keep
//! their nodes and their stored raw extraction; changed files are re-parsed; removed files'
//! rows are deleted. Resolution re-runs for the changed files and every file that had an edge
//! into a changed/removed file, had unresolved names, or imports a module (or a name) whose last
//! segment equals a changed file's module name — then its ref nodes, edges and unresolved rows are rewritten.

pub mod discover;
pub mod lang;
pub mod raw;
pub mod resolve;
pub mod store;

use crate::error::{CoreError, CoreResult};
use lang::{module_qualname, Lang};
use raw::RawFile;
use rayon::prelude::*;
use resolve::{FileData, Resolver};
use rusqlite::params;
use sha2::{Digest, Sha256};
use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::time::Instant;
use store::db_err;

/// Indexing options; every default is pinned by a test.
#[derive(Clone, Debug)]
pub struct IndexOptions {
    /// Files larger than this are recorded as skipped (default 1 MB).
    pub max_file_bytes: u64,
}

impl Default for IndexOptions {
    fn default() -> Self {
        IndexOptions {
            max_file_bytes: discover::DEFAULT_MAX_FILE_BYTES,
        }
    }
}

/// What one `index` run did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct IndexStats {
    pub files_seen: usize,
    pub files_parsed: usize,
    pub files_removed: usize,
    pub nodes: usize,
    pub edges: usize,
    pub seconds: f64,
    /// (path, error) for every file skipped or parsed with errors in this run.
    pub errors: Vec<(String, String)>,
}

enum Outcome {
    Unchanged,
    Parsed {
        sha: String,
        raw: RawFile,
        parse_error: Option<String>,
    },
    Skipped(String),
}

fn sha_key(bytes: &[u8], rel: &str) -> String {
    let mut h = Sha256::new();
    h.update(bytes);
    h.update(rel.as_bytes());
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// Stage timings on stderr when `CTXFAST_TRACE` is set (performance diagnosis only).
fn trace(stage: &str, t0: Instant) {
    if std::env::var_os("CTXFAST_TRACE").is_some() {
        eprintln!(
            "ctxfast graph: {stage} done at {:.3}s",
            t0.elapsed().as_secs_f64()
        );
    }
}

fn go_module(root: &Path) -> String {
    std::fs::read_to_string(root.join("go.mod"))
        .ok()
        .and_then(|s| {
            s.lines().find_map(|l| {
                l.trim()
                    .strip_prefix("module ")
                    .map(|m| m.trim().trim_matches('"').to_string())
            })
        })
        .unwrap_or_default()
}

/// Builds or incrementally refreshes the graph of `root` into the SQLite file `db_path`.
pub fn index(root: &Path, db_path: &Path, opts: &IndexOptions) -> CoreResult<IndexStats> {
    let t0 = Instant::now();
    if !root.is_dir() {
        return Err(CoreError::InvalidArgument(format!(
            "not a directory: {}",
            root.display()
        )));
    }
    let mut conn = store::open(db_path)?;
    let found = discover::discover(root, opts.max_file_bytes);

    let mut stored: HashMap<String, Option<String>> = HashMap::new();
    {
        let mut st = conn
            .prepare("SELECT path, sha256 FROM files")
            .map_err(|e| db_err("read files", e))?;
        let rows = st
            .query_map([], |r| {
                Ok((r.get::<_, String>(0)?, r.get::<_, Option<String>>(1)?))
            })
            .map_err(|e| db_err("read files", e))?;
        for row in rows {
            let (p, s) = row.map_err(|e| db_err("read files", e))?;
            stored.insert(p, s);
        }
    }

    let outcomes: Vec<Outcome> = found
        .par_iter()
        .map(|f| {
            let (Some(lang), None) = (f.lang, &f.skip) else {
                return Outcome::Skipped(f.skip.clone().unwrap_or_else(|| "skipped".into()));
            };
            let bytes = match std::fs::read(&f.abs) {
                Ok(b) => b,
                Err(e) => return Outcome::Skipped(format!("unreadable: {e}")),
            };
            if discover::is_binary(&bytes) {
                return Outcome::Skipped(
                    "skipped: binary file (NUL byte in the first 8 KB)".into(),
                );
            }
            let sha = sha_key(&bytes, &f.rel);
            if stored.get(&f.rel).and_then(|s| s.as_deref()) == Some(sha.as_str()) {
                return Outcome::Unchanged;
            }
            let module = module_qualname(&f.rel, lang);
            let lines = bytes.iter().filter(|&&b| b == b'\n').count() as u32 + 1;
            let ex = lang::extract(lang, &bytes, &module, lines);
            Outcome::Parsed {
                sha,
                raw: ex.raw,
                parse_error: ex.parse_error,
            }
        })
        .collect();

    // Raw extraction of unchanged files, from the previous run.
    let unchanged: HashSet<&str> = found
        .iter()
        .zip(&outcomes)
        .filter(|(_, o)| matches!(o, Outcome::Unchanged))
        .map(|(f, _)| f.rel.as_str())
        .collect();
    let mut old_raw: HashMap<String, RawFile> = HashMap::new();
    if !unchanged.is_empty() {
        let mut st = conn
            .prepare("SELECT path, data FROM raw")
            .map_err(|e| db_err("read raw", e))?;
        let rows = st
            .query_map([], |r| {
                Ok((r.get::<_, String>(0)?, r.get::<_, Vec<u8>>(1)?))
            })
            .map_err(|e| db_err("read raw", e))?;
        for row in rows {
            let (p, data) = row.map_err(|e| db_err("read raw", e))?;
            if unchanged.contains(p.as_str()) {
                if let Some(raw) = RawFile::decode(&data) {
                    old_raw.insert(p, raw);
                }
            }
        }
    }

    let mut files: Vec<FileData> = vec![];
    let mut changed: Vec<usize> = vec![]; // indexes into `files`
    let mut file_meta: Vec<(String, Option<String>, Option<String>)> = vec![]; // sha, parse_error per changed
    let mut skipped: Vec<(String, Option<Lang>, u64, String)> = vec![];
    let mut errors: Vec<(String, String)> = vec![];
    let mut present: HashSet<String> = HashSet::new();
    for (f, o) in found.iter().zip(outcomes) {
        match o {
            Outcome::Unchanged => match (old_raw.remove(&f.rel), f.lang) {
                (Some(raw), Some(lang)) => {
                    present.insert(f.rel.clone());
                    files.push(FileData::new(f.rel.clone(), lang, raw));
                }
                _ => {
                    // Stored row without a usable blob: re-parse it.
                    let Some(lang) = f.lang else { continue };
                    let bytes = std::fs::read(&f.abs).unwrap_or_default();
                    let module = module_qualname(&f.rel, lang);
                    let ex = lang::extract(lang, &bytes, &module, 1);
                    present.insert(f.rel.clone());
                    changed.push(files.len());
                    file_meta.push((
                        sha_key(&bytes, &f.rel),
                        Some(lang.as_str().to_string()),
                        ex.parse_error,
                    ));
                    files.push(FileData::new(f.rel.clone(), lang, ex.raw));
                }
            },
            Outcome::Parsed {
                sha,
                raw,
                parse_error,
            } => {
                let Some(lang) = f.lang else { continue };
                if let Some(e) = &parse_error {
                    errors.push((f.rel.clone(), e.clone()));
                }
                present.insert(f.rel.clone());
                changed.push(files.len());
                file_meta.push((sha, Some(lang.as_str().to_string()), parse_error));
                files.push(FileData::new(f.rel.clone(), lang, raw));
            }
            Outcome::Skipped(reason) => {
                errors.push((f.rel.clone(), reason.clone()));
                skipped.push((f.rel.clone(), f.lang, f.bytes, reason));
            }
        }
    }
    let removed: Vec<String> = stored
        .iter()
        .filter(|(p, sha)| sha.is_some() && !present.contains(p.as_str()))
        .map(|(p, _)| p.clone())
        .collect();
    let files_parsed = changed.len();

    trace("parse", t0);
    let resolver = Resolver::new(&files, &go_module(root));
    let index_of: HashMap<&str, usize> = files
        .iter()
        .enumerate()
        .map(|(i, f)| (f.rel.as_str(), i))
        .collect();

    // Which files to re-resolve.
    let cold = stored.values().all(|s| s.is_none());
    let mut affected: HashSet<usize> = changed.iter().copied().collect();
    if !cold && (!changed.is_empty() || !removed.is_empty()) {
        let mut touched: Vec<String> = changed.iter().map(|&i| files[i].rel.clone()).collect();
        touched.extend(removed.iter().cloned());
        let mut stems: HashSet<String> = HashSet::new();
        for t in &touched {
            if let Some(l) = Lang::from_path(t) {
                let m = module_qualname(t, l);
                stems.insert(m.rsplit('.').next().unwrap_or(&m).to_string());
            }
        }
        {
            let mut st = conn
                .prepare("SELECT src_file FROM file_deps WHERE dst_file = ?1")
                .map_err(|e| db_err("deps", e))?;
            for t in &touched {
                let rows = st
                    .query_map([t], |r| r.get::<_, String>(0))
                    .map_err(|e| db_err("deps", e))?;
                for p in rows.flatten() {
                    if let Some(&i) = index_of.get(p.as_str()) {
                        affected.insert(i);
                    }
                }
            }
            // A file with unresolved names is re-resolved only if one of those names mentions
            // a name defined by a changed file.
            let mut defined: HashSet<&str> = stems.iter().map(String::as_str).collect();
            for &i in &changed {
                defined.extend(files[i].raw.defs.iter().map(|d| d.name.as_str()));
            }
            let mut st = conn
                .prepare("SELECT file, name FROM unresolved")
                .map_err(|e| db_err("unresolved", e))?;
            let rows = st
                .query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))
                .map_err(|e| db_err("unresolved", e))?;
            for (p, name) in rows.flatten() {
                if !name.split('.').any(|s| defined.contains(s)) {
                    continue;
                }
                if let Some(&i) = index_of.get(p.as_str()) {
                    affected.insert(i);
                }
            }
        }
        for (i, f) in files.iter().enumerate() {
            let hit = f.raw.bindings.iter().any(|b| {
                let (m, n) = match &b.target {
                    raw::Target::Symbol { module, name, .. } => (module.as_str(), name.as_str()),
                    raw::Target::Module { module, .. } | raw::Target::Star { module, .. } => {
                        (module.as_str(), "")
                    }
                };
                {
                    let last = m.rsplit(['.', '/', ':']).next().unwrap_or(m);
                    stems.contains(last) || stems.contains(n) || m.is_empty()
                }
            });
            if hit {
                affected.insert(i);
            }
        }
    } else if cold {
        affected = (0..files.len()).collect();
    }
    let mut affected: Vec<usize> = affected.into_iter().collect();
    affected.sort_unstable();
    let results: Vec<(usize, resolve::Resolved)> = affected
        .par_iter()
        .map(|&i| (i, resolver.resolve_file(i as u32)))
        .collect();

    trace("resolve", t0);
    let found_bytes: HashMap<&str, u64> = found.iter().map(|f| (f.rel.as_str(), f.bytes)).collect();

    // ---- one transaction ----
    let tx = conn.transaction().map_err(|e| db_err("begin", e))?;
    if cold {
        // Bulk load: maintaining secondary indexes row by row is slower than rebuilding them.
        tx.execute_batch(store::DROP_INDEXES)
            .map_err(|e| db_err("drop indexes", e))?;
    }
    {
        let mut del_edges = tx
            .prepare_cached("DELETE FROM edges WHERE src IN (SELECT id FROM nodes WHERE file = ?1)")
            .map_err(|e| db_err("prepare", e))?;
        let mut del_nodes = tx
            .prepare_cached("DELETE FROM nodes WHERE file = ?1")
            .map_err(|e| db_err("prepare", e))?;
        let mut del_refs = tx
            .prepare_cached("DELETE FROM nodes WHERE file = ?1 AND kind = 'ref'")
            .map_err(|e| db_err("prepare", e))?;
        let mut del_meta = tx
            .prepare_cached(
                "DELETE FROM defs_meta WHERE id IN (SELECT id FROM nodes WHERE file = ?1)",
            )
            .map_err(|e| db_err("prepare", e))?;
        let mut del_unres = tx
            .prepare_cached("DELETE FROM unresolved WHERE file = ?1")
            .map_err(|e| db_err("prepare", e))?;
        let mut del_deps = tx
            .prepare_cached("DELETE FROM file_deps WHERE src_file = ?1")
            .map_err(|e| db_err("prepare", e))?;
        let mut del_raw = tx
            .prepare_cached("DELETE FROM raw WHERE path = ?1")
            .map_err(|e| db_err("prepare", e))?;
        let mut del_file = tx
            .prepare_cached("DELETE FROM files WHERE path = ?1")
            .map_err(|e| db_err("prepare", e))?;
        let run = |st: &mut rusqlite::CachedStatement<'_>, p: &str| {
            st.execute([p]).map(|_| ()).map_err(|e| db_err("delete", e))
        };
        let wipe_all: Vec<&str> = removed
            .iter()
            .map(String::as_str)
            .chain(changed.iter().map(|&i| files[i].rel.as_str()))
            .collect();
        for p in &wipe_all {
            run(&mut del_edges, p)?;
            run(&mut del_meta, p)?;
            run(&mut del_nodes, p)?;
            run(&mut del_unres, p)?;
            run(&mut del_deps, p)?;
            run(&mut del_raw, p)?;
            run(&mut del_file, p)?;
        }
        for &i in &affected {
            let p = files[i].rel.as_str();
            run(&mut del_edges, p)?;
            run(&mut del_refs, p)?;
            run(&mut del_unres, p)?;
            run(&mut del_deps, p)?;
        }
        tx.execute("DELETE FROM files WHERE sha256 IS NULL", [])
            .map_err(|e| db_err("delete", e))?;

        let mut ins_file = tx
            .prepare_cached("INSERT OR REPLACE INTO files(path, sha256, language, bytes, parse_error) VALUES(?1, ?2, ?3, ?4, ?5)")
            .map_err(|e| db_err("prepare", e))?;
        let mut ins_node = tx
            .prepare_cached("INSERT OR IGNORE INTO nodes(id, kind, name, qualname, file, line, col, end_line) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)")
            .map_err(|e| db_err("prepare", e))?;
        let mut ins_meta = tx
            .prepare_cached(
                "INSERT OR IGNORE INTO defs_meta(id, signature, doc) VALUES(?1, ?2, ?3)",
            )
            .map_err(|e| db_err("prepare", e))?;
        let mut ins_raw = tx
            .prepare_cached("INSERT OR REPLACE INTO raw(path, data) VALUES(?1, ?2)")
            .map_err(|e| db_err("prepare", e))?;
        for (n, &i) in changed.iter().enumerate() {
            let f = &files[i];
            let (sha, language, perr) = &file_meta[n];
            let bytes = found_bytes.get(f.rel.as_str()).copied().unwrap_or(0) as i64;
            ins_file
                .execute(params![f.rel, sha, language, bytes, perr])
                .map_err(|e| db_err("insert file", e))?;
            let quals = resolver.qualnames(i as u32);
            for (di, d) in f.raw.defs.iter().enumerate() {
                let id = format!("{}:{}", quals[di], d.line);
                ins_node
                    .execute(params![
                        id,
                        d.kind.as_str(),
                        d.name,
                        quals[di],
                        f.rel,
                        d.line,
                        d.col,
                        d.end_line
                    ])
                    .map_err(|e| db_err("insert node", e))?;
                ins_meta
                    .execute(params![id, d.signature, d.doc])
                    .map_err(|e| db_err("insert meta", e))?;
            }
            ins_raw
                .execute(params![f.rel, f.raw.encode()])
                .map_err(|e| db_err("insert raw", e))?;
        }
        for (rel, lang, bytes, reason) in &skipped {
            ins_file
                .execute(params![
                    rel,
                    Option::<String>::None,
                    lang.map(|l| l.as_str()),
                    *bytes as i64,
                    reason
                ])
                .map_err(|e| db_err("insert file", e))?;
        }
        let mut ins_edge = tx
            .prepare_cached("INSERT INTO edges(src, dst, type) VALUES(?1, ?2, ?3)")
            .map_err(|e| db_err("prepare", e))?;
        let mut ins_unres = tx
            .prepare_cached(
                "INSERT INTO unresolved(name, node_id, file, line, col) VALUES(?1, ?2, ?3, ?4, ?5)",
            )
            .map_err(|e| db_err("prepare", e))?;
        let mut ins_dep = tx
            .prepare_cached("INSERT INTO file_deps(src_file, dst_file) VALUES(?1, ?2)")
            .map_err(|e| db_err("prepare", e))?;
        for (i, r) in &results {
            let rel = files[*i].rel.as_str();
            for (id, name, q, line, col) in &r.ref_nodes {
                ins_node
                    .execute(params![id, "ref", name, q, rel, line, col, line])
                    .map_err(|e| db_err("insert ref", e))?;
            }
            for (s, d, t) in &r.edges {
                ins_edge
                    .execute(params![s, d, t])
                    .map_err(|e| db_err("insert edge", e))?;
            }
            for (name, id, line, col) in &r.unresolved {
                ins_unres
                    .execute(params![name, id, rel, line, col])
                    .map_err(|e| db_err("insert unresolved", e))?;
            }
            for d in &r.deps {
                ins_dep
                    .execute(params![rel, files[*d as usize].rel])
                    .map_err(|e| db_err("insert dep", e))?;
            }
        }
    }
    if cold {
        tx.execute_batch(store::SCHEMA)
            .map_err(|e| db_err("create indexes", e))?;
    }
    if files_parsed > 0 || !removed.is_empty() {
        tx.execute_batch(
            "DELETE FROM name_index; INSERT INTO name_index(qualname) SELECT DISTINCT qualname FROM nodes WHERE kind != 'ref';",
        )
        .map_err(|e| db_err("name_index", e))?;
    }
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64());
    tx.execute(
        "INSERT OR REPLACE INTO meta(key, value) VALUES('last_refresh', ?1)",
        [now.to_string()],
    )
    .map_err(|e| db_err("meta", e))?;
    tx.commit().map_err(|e| db_err("commit", e))?;
    trace("commit", t0);

    let count = |sql: &str| -> CoreResult<usize> {
        conn.query_row(sql, [], |r| r.get::<_, i64>(0))
            .map(|v| v as usize)
            .map_err(|e| db_err("count", e))
    };
    Ok(IndexStats {
        files_seen: found.len(),
        files_parsed,
        files_removed: removed.len(),
        nodes: count("SELECT COUNT(*) FROM nodes")?,
        edges: count("SELECT COUNT(*) FROM edges")?,
        seconds: t0.elapsed().as_secs_f64(),
        errors,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn repo(files: &[(&str, &str)]) -> tempfile::TempDir {
        let d = tempfile::tempdir().unwrap();
        for (p, t) in files {
            let path = d.path().join(p);
            fs::create_dir_all(path.parent().unwrap()).unwrap();
            fs::write(path, t).unwrap();
        }
        d
    }

    #[test]
    fn raw_blob_round_trips() {
        let src = b"import os\nfrom .a import b as c\n\nclass K(Base):\n    def m(self, x):\n        return self.n(x)\n";
        let ex = lang::extract(Lang::Python, src, "pkg.mod", 6);
        let blob = ex.raw.encode();
        assert_eq!(RawFile::decode(&blob), Some(ex.raw));
        assert_eq!(RawFile::decode(&blob[..blob.len() - 1]), None);
    }

    #[test]
    fn module_qualnames() {
        assert_eq!(module_qualname("src/pkg/__init__.py", Lang::Python), "pkg");
        assert_eq!(module_qualname("pkg/mod.py", Lang::Python), "pkg.mod");
        assert_eq!(module_qualname("src/lib.rs", Lang::Rust), "crate");
        assert_eq!(
            module_qualname("core/src/graph/mod.rs", Lang::Rust),
            "core.graph"
        );
        assert_eq!(module_qualname("src/main/java/a/B.java", Lang::Java), "a.B");
        assert_eq!(module_qualname("web/app.ts", Lang::TypeScript), "web.app");
    }

    #[test]
    fn defaults_are_pinned() {
        assert_eq!(IndexOptions::default().max_file_bytes, 1_000_000);
        assert_eq!(discover::BINARY_SNIFF_BYTES, 8192);
        assert!(discover::is_binary(b"ab\0c"));
        assert!(!discover::is_binary("é".as_bytes()));
    }

    #[test]
    fn index_and_refresh() {
        let d = repo(&[
            ("a.py", "def f():\n    return 1\n"),
            (
                "b.py",
                "from a import f\n\ndef g():\n    print(f())\n    missing()\n",
            ),
        ]);
        let db = d.path().join(".ctxfast/recon.db");
        let s = index(d.path(), &db, &IndexOptions::default()).unwrap();
        assert_eq!((s.files_seen, s.files_parsed), (2, 2));
        let conn = rusqlite::Connection::open(&db).unwrap();
        let edges: Vec<(String, String, String)> = conn
            .prepare("SELECT src, dst, type FROM edges WHERE type != 'contain' ORDER BY src, type")
            .unwrap()
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        assert_eq!(
            edges,
            vec![
                ("b.g:4".into(), "a.f:1".into(), "invoke".into()),
                ("b:1".into(), "a.f:1".into(), "import".into()),
            ]
        );
        let unresolved: String = conn
            .query_row("SELECT name FROM unresolved", [], |r| r.get(0))
            .unwrap();
        assert_eq!(unresolved, "missing");
        let s2 = index(d.path(), &db, &IndexOptions::default()).unwrap();
        assert_eq!((s2.files_parsed, s2.nodes, s2.edges), (0, s.nodes, s.edges));
    }

    #[test]
    fn not_a_directory_is_an_error() {
        let d = tempfile::tempdir().unwrap();
        let err = index(
            &d.path().join("nope"),
            &d.path().join("x.db"),
            &IndexOptions::default(),
        );
        assert!(matches!(err, Err(CoreError::InvalidArgument(_))));
    }
}
