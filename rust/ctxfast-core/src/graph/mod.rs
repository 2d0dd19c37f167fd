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
//! Cold build: a missing `recon.db` is built in a private side file (no journal, no fsync,
//! nodes inserted in id order, secondary indexes created after the load) and renamed into
//! place, so an interrupted build never leaves a half-written index.
//!
//! Incremental refresh (one WAL transaction; readers see the previous index until commit):
//! each file is keyed by `sha256(bytes + path)`, read only when its size/mtime differ from
//! `file_stat` or its mtime is within [`RACY_NS`] of the previous run's start. Unchanged files
//! contribute only their stored *interface* blob (definitions, bindings, non-function
//! locals) to the symbol table; changed files are re-parsed; removed files' rows are deleted.
//! Resolution re-runs for the changed files, and — only when a changed file's interface
//! moved (see [`raw::RawFile::same_interface`]) or a file was removed — for every file that
//! had an edge into it, had unresolved names it may now define, or imports a module (or a
//! name) whose last segment equals its module name. `name_index` and the node/edge counts in
//! `meta` are updated incrementally; a refresh with nothing changed writes only `meta`.
//! Files sharing a module qualname are reported in `errors` (module name clash).

pub mod cache;
pub mod discover;
pub mod lang;
pub mod parse_cache;
pub mod progress;
pub mod raw;
pub mod resolve;
pub mod store;

use crate::error::{CoreError, CoreResult};
use lang::{Lang, ModuleNamer};
use progress::{Progress, Stage};
use raw::RawFile;
use rayon::prelude::*;
use resolve::{FileData, Resolver};
use rusqlite::params;
use sha2::{Digest, Sha256};
use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::time::Instant;
use store::db_err;

/// Indexing options; every default is pinned by a test.
#[derive(Clone, Debug)]
pub struct IndexOptions {
    /// Files larger than this are recorded as skipped (default 1 MB).
    pub max_file_bytes: u64,
    /// Counters another thread may poll for a progress bar (none by default).
    pub progress: Option<std::sync::Arc<Progress>>,
    /// Shared content-addressed cache of extractions (none by default; see [`parse_cache`]).
    pub parse_cache: Option<parse_cache::ParseCacheOptions>,
    /// How long to wait for another build of the same index (default 120 s).
    pub lock_wait: std::time::Duration,
    /// A refresh that leaves a WAL larger than this checkpoints it with `TRUNCATE`.
    pub wal_truncate_bytes: u64,
}

impl Default for IndexOptions {
    fn default() -> Self {
        IndexOptions {
            max_file_bytes: discover::DEFAULT_MAX_FILE_BYTES,
            progress: None,
            parse_cache: None,
            lock_wait: store::DEFAULT_LOCK_WAIT,
            wal_truncate_bytes: store::WAL_TRUNCATE_BYTES,
        }
    }
}

/// What one `index` run did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct IndexStats {
    pub files_seen: usize,
    pub files_parsed: usize,
    pub files_removed: usize,
    /// Files whose references were (re-)resolved: all of them on a cold build; on a refresh
    /// the changed files plus the dependents that could see a changed interface.
    pub files_resolved: usize,
    pub nodes: usize,
    pub edges: usize,
    pub seconds: f64,
    /// Of `files_parsed`, how many extractions came from the parse cache instead of a parse.
    pub cache_hits: usize,
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

/// Files modified less than this before the previous run started are re-hashed (1 s: far
/// above any filesystem's timestamp granularity).
pub const RACY_NS: i64 = 1_000_000_000;

fn sha_key(bytes: &[u8], rel: &str) -> String {
    let mut h = Sha256::new();
    h.update(bytes);
    h.update(rel.as_bytes());
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// Stage timings for the embedder's log at debug level (performance diagnosis).
fn trace(stage: &str, t0: Instant) {
    crate::log::push(
        crate::log::Level::Debug,
        format!("index: {stage} done at {:.3}s", t0.elapsed().as_secs_f64()),
    );
}

fn go_module(root: &Path) -> String {
    discover::read_regular(&root.join("go.mod"), discover::DEFAULT_MAX_FILE_BYTES)
        .ok()
        .and_then(|b| String::from_utf8(b).ok())
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
///
/// Builds of one index take turns ([`store::lock_builds`]). A damaged index — found by the
/// check of a file changed since the last build ([`store::damage`]) or by a corruption error
/// mid-run — is
/// removed and rebuilt from scratch, and the reason is the first entry of `errors`.
pub fn index(root: &Path, db_path: &Path, opts: &IndexOptions) -> CoreResult<IndexStats> {
    let result = store::lock_builds(db_path, opts.lock_wait).and_then(|_lock| {
        let out = build_or_heal(root, db_path, opts);
        if matches!(out, Err(CoreError::Cancelled)) {
            // Still under the lock: a cancelled first build leaves no side file behind (a
            // cancelled refresh was rolled back).
            store::remove_stale_builds(db_path);
        }
        out
    });
    if let Some(p) = &opts.progress {
        p.set_stage(Stage::Done);
    }
    result
}

/// One build or refresh; a damaged index is discarded and built again from scratch.
fn build_or_heal(root: &Path, db_path: &Path, opts: &IndexOptions) -> CoreResult<IndexStats> {
    let damaged = match store::damage(db_path) {
        Some(why) => Some(why),
        None => match index_run(root, db_path, opts) {
            Err(CoreError::Corrupt(why)) => Some(why),
            done => {
                store::trust(db_path);
                return done;
            }
        },
    };
    let why = damaged.unwrap_or_default();
    store::discard(db_path)?;
    let mut stats = index_run(root, db_path, opts)?;
    store::trust(db_path);
    stats.errors.insert(
        0,
        (
            db_path.display().to_string(),
            format!("index was damaged ({why}); rebuilt from scratch"),
        ),
    );
    Ok(stats)
}

fn index_run(root: &Path, db_path: &Path, opts: &IndexOptions) -> CoreResult<IndexStats> {
    let t0 = Instant::now();
    if !root.is_dir() {
        return Err(CoreError::InvalidArgument(format!(
            "not a directory: {}",
            root.display()
        )));
    }
    // A first build writes a private side file (no journal, no fsync) and renames it into
    // place: one sequential write instead of WAL + checkpoint, and an interrupted build
    // never leaves a half-written `recon.db`.
    let fresh = !db_path.exists();
    let build_path = store::build_path(db_path);
    store::remove_stale_builds(db_path);
    let mut conn = if fresh {
        store::open_bulk(&build_path)?
    } else {
        store::open(db_path)?
    };
    let progress = opts.progress.clone().unwrap_or_default();
    progress.set_stage(Stage::Discover);
    let found = discover::discover(root, opts.max_file_bytes);
    let namer = ModuleNamer::new(found.iter().map(|f| f.rel.as_str()));
    progress.set_total(found.len());
    progress.set_stage(Stage::Parse);
    trace("discover", t0);
    let mut cache_errors: Vec<(String, String)> = vec![];
    let pcache = opts
        .parse_cache
        .as_ref()
        .and_then(|o| match parse_cache::ParseCache::open(o) {
            Ok(c) => Some(c),
            Err(e) => {
                cache_errors.push((o.dir.display().to_string(), e.to_string()));
                None
            }
        });

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

    // Stat shortcut (as git's index): a file whose size and mtime match what was recorded
    // when it was last hashed is unchanged without reading it — unless that mtime is within
    // RACY_NS of the previous run's start, when a same-size edit could share the timestamp.
    let mut stats_of: HashMap<String, (i64, i64)> = HashMap::new();
    let prev_start: i64 = conn
        .query_row(
            "SELECT value FROM meta WHERE key = 'run_start_ns'",
            [],
            |r| r.get::<_, String>(0),
        )
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    if !stored.is_empty() {
        let mut st = conn
            .prepare("SELECT path, size, mtime_ns FROM file_stat")
            .map_err(|e| db_err("read file_stat", e))?;
        let rows = st
            .query_map([], |r| Ok((r.get::<_, String>(0)?, (r.get(1)?, r.get(2)?))))
            .map_err(|e| db_err("read file_stat", e))?;
        stats_of.extend(rows.flatten());
    }
    let run_start = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as i64);

    // A changed package layout (an `__init__.py` added or removed) can move the module names
    // of files whose bytes did not change; then every file is re-parsed and re-resolved.
    let layout = namer.signature();
    let reparse_all = !stored.is_empty() && modules_moved(&conn, &found, &namer, &layout)?;

    let outcomes: Vec<Outcome> = found
        .par_iter()
        .map(|f| {
            let _tick = Tick(&progress);
            if progress.is_cancelled() {
                return Outcome::Unchanged; // discarded: the run stops after the loop
            }
            let (Some(lang), None) = (f.lang, &f.skip) else {
                return Outcome::Skipped(f.skip.clone().unwrap_or_else(|| "skipped".into()));
            };
            if !reparse_all
                && stored.get(&f.rel).is_some_and(Option::is_some)
                && f.mtime_ns != 0
                && f.mtime_ns < prev_start - RACY_NS
                && stats_of.get(&f.rel) == Some(&(f.bytes as i64, f.mtime_ns))
            {
                return Outcome::Unchanged;
            }
            let bytes = match discover::read_regular(&f.abs, opts.max_file_bytes) {
                Ok(b) => b,
                Err(e) => return Outcome::Skipped(format!("unreadable: {e}")),
            };
            if discover::is_binary(&bytes) {
                return Outcome::Skipped(
                    "skipped: binary file (NUL byte in the first 8 KB)".into(),
                );
            }
            let sha = sha_key(&bytes, &f.rel);
            if !reparse_all && stored.get(&f.rel).and_then(|s| s.as_deref()) == Some(sha.as_str()) {
                return Outcome::Unchanged;
            }
            let module = namer.name(&f.rel, lang);
            let lines = memchr::memchr_iter(b'\n', &bytes).count() as u32 + 1;
            let (raw, parse_error) = match &pcache {
                Some(c) => c.extract(lang, &bytes, &module, lines),
                None => {
                    let ex = lang::extract(lang, &bytes, &module, lines);
                    (ex.raw, ex.parse_error)
                }
            };
            Outcome::Parsed {
                sha,
                raw,
                parse_error,
            }
        })
        .collect();
    progress.check()?;
    trace("parse", t0);
    if let (Some(c), Some(o)) = (&pcache, &opts.parse_cache) {
        if let Err(e) = c.flush() {
            cache_errors.push((o.dir.display().to_string(), e.to_string()));
        }
        trace("parse cache flush", t0);
    }
    let cache_hits = pcache.as_ref().map_or(0, parse_cache::ParseCache::hits);
    drop(pcache);

    let present_now: HashSet<&str> = found
        .iter()
        .zip(&outcomes)
        .filter(|(_, o)| !matches!(o, Outcome::Skipped(_)))
        .map(|(f, _)| f.rel.as_str())
        .collect();
    let removed: Vec<String> = stored
        .iter()
        .filter(|(p, sha)| sha.is_some() && !present_now.contains(p.as_str()))
        .map(|(p, _)| p.clone())
        .collect();
    let n_unchanged = outcomes
        .iter()
        .filter(|o| matches!(o, Outcome::Unchanged))
        .count();
    // Hashed and unchanged, but touched (or never stat-recorded): refresh the recorded stat
    // so the next run can trust it without reading.
    let restat: Vec<(&str, i64, i64)> = found
        .iter()
        .zip(&outcomes)
        .filter(|(f, o)| {
            matches!(o, Outcome::Unchanged)
                && stats_of.get(&f.rel) != Some(&(f.bytes as i64, f.mtime_ns))
        })
        .map(|(f, _)| (f.rel.as_str(), f.bytes as i64, f.mtime_ns))
        .collect();
    let mut errors: Vec<(String, String)> = cache_errors;
    let mut skipped: Vec<(String, Option<Lang>, u64, String)> = vec![];
    for (f, o) in found.iter().zip(&outcomes) {
        if let Outcome::Skipped(reason) = o {
            errors.push((f.rel.clone(), reason.clone()));
            skipped.push((f.rel.clone(), f.lang, f.bytes, reason.clone()));
        }
    }

    // No-op refresh: nothing parsed or removed and every unchanged file has its blob — the
    // graph is current; only the skipped-file rows and the refresh time are rewritten.
    if !fresh && n_unchanged == present_now.len() && removed.is_empty() {
        let blobs: i64 = conn
            .query_row("SELECT COUNT(*) FROM raw", [], |r| r.get(0))
            .map_err(|e| db_err("count raw", e))?;
        if blobs as usize == n_unchanged {
            let tx = store::begin_write(&mut conn)?;
            write_skipped_and_meta(&tx, &skipped, &restat, run_start, &layout)?;
            tx.commit().map_err(|e| db_err("commit", e))?;
            cache::retag(db_path, prev_start, run_start);
            record_clashes(&found, &present_now, &namer, &mut errors);
            trace("no-op commit", t0);
            return finish(&conn, &found, 0, 0, 0, errors, t0);
        }
    }

    // Stored extraction of every still-present file: unchanged files feed resolution as-is;
    // for changed files the old blob tells whether their interface moved.
    let mut old_raw: HashMap<String, RawFile> = HashMap::new();
    let cached = if stored.is_empty() {
        None
    } else {
        cache::take(db_path, prev_start)
    };
    if let Some(mut c) = cached {
        c.retain(|p, _| present_now.contains(p.as_str()));
        old_raw = c;
    } else if !stored.is_empty() {
        let mut blobs: Vec<(String, Vec<u8>)> = vec![];
        let mut st = conn
            .prepare("SELECT path, iface FROM raw")
            .map_err(|e| db_err("read raw", e))?;
        let rows = st
            .query_map([], |r| {
                Ok((r.get::<_, String>(0)?, r.get::<_, Vec<u8>>(1)?))
            })
            .map_err(|e| db_err("read raw", e))?;
        for row in rows {
            let (p, data) = row.map_err(|e| db_err("read raw", e))?;
            if present_now.contains(p.as_str()) {
                blobs.push((p, data));
            }
        }
        old_raw = blobs
            .into_par_iter()
            .filter_map(|(p, data)| RawFile::decode(&data).map(|r| (p, r)))
            .collect();
    }
    trace("load blobs", t0);

    let mut files: Vec<FileData> = vec![];
    let mut changed: Vec<usize> = vec![]; // indexes into `files`
    let mut iface_changed: Vec<usize> = vec![]; // changed files whose interface moved
    let mut file_meta: Vec<(String, Option<String>, Option<String>)> = vec![]; // sha, lang, parse_error per changed
    for (f, o) in found.iter().zip(outcomes) {
        match o {
            Outcome::Unchanged => match (old_raw.remove(&f.rel), f.lang) {
                (Some(raw), Some(lang)) => {
                    let module = namer.name(&f.rel, lang);
                    files.push(FileData::new(f.rel.clone(), lang, module, raw));
                }
                _ => {
                    // Stored row without a usable blob: re-parse it.
                    let Some(lang) = f.lang else { continue };
                    let bytes =
                        discover::read_regular(&f.abs, opts.max_file_bytes).unwrap_or_default();
                    let module = namer.name(&f.rel, lang);
                    let ex = lang::extract(lang, &bytes, &module, 1);
                    changed.push(files.len());
                    iface_changed.push(files.len());
                    file_meta.push((
                        sha_key(&bytes, &f.rel),
                        Some(lang.as_str().to_string()),
                        ex.parse_error,
                    ));
                    files.push(FileData::new(f.rel.clone(), lang, module, ex.raw));
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
                let same = old_raw
                    .remove(&f.rel)
                    .is_some_and(|old| old.same_interface(&raw));
                if !same {
                    iface_changed.push(files.len());
                }
                changed.push(files.len());
                file_meta.push((sha, Some(lang.as_str().to_string()), parse_error));
                let module = namer.name(&f.rel, lang);
                files.push(FileData::new(f.rel.clone(), lang, module, raw));
            }
            Outcome::Skipped(_) => {}
        }
    }
    let files_parsed = changed.len();
    record_clashes(&found, &present_now, &namer, &mut errors);

    let index_of: HashMap<&str, usize> = files
        .iter()
        .enumerate()
        .map(|(i, f)| (f.rel.as_str(), i))
        .collect();

    // Which files to re-resolve: every changed file; plus, when some file's interface moved
    // (or a file was removed), the files whose resolution could see that.
    let cold = stored.values().all(|s| s.is_none());
    let mut affected: HashSet<usize> = changed.iter().copied().collect();
    if cold {
        affected = (0..files.len()).collect();
    } else if !iface_changed.is_empty() || !removed.is_empty() {
        // Files whose import resolution may flip (see below), and whether a module appeared
        // or disappeared (only then can an import of an unchanged name flip).
        let mut flips: HashSet<usize> = HashSet::new();
        let appeared_or_gone = !removed.is_empty()
            || changed
                .iter()
                .any(|&i| !stored.get(&files[i].rel).is_some_and(Option::is_some));
        let mut touched: Vec<String> = iface_changed
            .iter()
            .map(|&i| files[i].rel.clone())
            .collect();
        touched.extend(removed.iter().cloned());
        let mut stems: HashSet<String> = HashSet::new();
        for t in &touched {
            if let Some(l) = Lang::from_path(t) {
                let m = namer.name(t, l);
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
            // a name defined by a file whose interface moved.
            let mut defined: HashSet<&str> = stems.iter().map(String::as_str).collect();
            for &i in &iface_changed {
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
                    flips.insert(i);
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
                let last = m.rsplit(['.', '/', ':']).next().unwrap_or(m);
                stems.contains(last) || stems.contains(n) || m.is_empty()
            });
            if hit {
                affected.insert(i);
                if appeared_or_gone {
                    flips.insert(i);
                }
            }
        }
        // A file whose imports may now resolve where they failed (or fail where they
        // resolved) changes what every file reading through it sees: re-resolve those too.
        // Their deps name every file read on the way (`Resolved::deps`), so one step is
        // enough; a lookup that failed stopped at the file flagged here.
        let mut st = conn
            .prepare("SELECT src_file FROM file_deps WHERE dst_file = ?1")
            .map_err(|e| db_err("deps", e))?;
        for &i in &flips {
            let rows = st
                .query_map([&files[i].rel], |r| r.get::<_, String>(0))
                .map_err(|e| db_err("deps", e))?;
            for p in rows.flatten() {
                if let Some(&j) = index_of.get(p.as_str()) {
                    affected.insert(j);
                }
            }
        }
    }
    let mut affected: Vec<usize> = affected.into_iter().collect();
    affected.sort_unstable();
    // Unchanged files about to be re-resolved need their full extraction back.
    let changed_set: HashSet<usize> = changed.iter().copied().collect();
    let mut full_blobs: Vec<(usize, Vec<u8>)> = vec![];
    {
        let mut st = conn
            .prepare("SELECT data FROM raw WHERE path = ?1")
            .map_err(|e| db_err("read raw", e))?;
        for &i in affected.iter().filter(|i| !changed_set.contains(i)) {
            if let Ok(b) = st.query_row([&files[i].rel], |r| r.get::<_, Vec<u8>>(0)) {
                full_blobs.push((i, b));
            }
        }
    }
    let upgraded: Vec<(usize, Option<RawFile>)> = full_blobs
        .into_par_iter()
        .map(|(i, b)| (i, RawFile::decode(&b)))
        .collect();
    for (i, raw) in upgraded {
        match raw {
            Some(raw) => files[i].raw = raw,
            // Interface blob fine, full blob unreadable: re-parse so no reference is lost.
            None => {
                let bytes = discover::read_regular(&root.join(&files[i].rel), opts.max_file_bytes)
                    .unwrap_or_default();
                let ex = lang::extract(files[i].lang, &bytes, &files[i].module, 1);
                files[i].raw = ex.raw;
            }
        }
    }
    progress.set_stage(Stage::Resolve);
    let resolver = Resolver::new(&files, &go_module(root)).with_cargo_crates(root);
    trace("symbol table", t0);
    let results: Vec<(usize, resolve::Resolved)> = affected
        .par_iter()
        .filter(|_| !progress.is_cancelled())
        .map(|&i| (i, resolver.resolve_file(i as u32)))
        .collect();
    progress.check()?;
    trace("resolve", t0);
    let found_stat: HashMap<&str, (u64, i64)> = found
        .iter()
        .map(|f| (f.rel.as_str(), (f.bytes, f.mtime_ns)))
        .collect();

    // ---- one transaction ----
    progress.set_stage(Stage::Write);
    let (mut n_nodes, mut n_edges) = if cold { (0, 0) } else { graph_counts(&conn)? };
    let interrupt = conn.get_interrupt_handle();
    let tx = store::begin_write(&mut conn)?;
    if cold {
        // Bulk load: maintaining secondary indexes row by row is slower than rebuilding them.
        tx.execute_batch(store::DROP_INDEXES)
            .map_err(|e| db_err("drop indexes", e))?;
    }
    let wipe_all: Vec<&str> = removed
        .iter()
        .map(String::as_str)
        .chain(changed.iter().map(|&i| files[i].rel.as_str()))
        .collect();
    // Definition qualnames leaving the graph: candidates for removal from name_index.
    let mut old_quals: Vec<String> = vec![];
    if !cold {
        let mut st = tx
            .prepare_cached("SELECT qualname FROM nodes WHERE file = ?1 AND kind != 'ref'")
            .map_err(|e| db_err("prepare", e))?;
        for p in &wipe_all {
            let rows = st
                .query_map([p], |r| r.get::<_, String>(0))
                .map_err(|e| db_err("old qualnames", e))?;
            old_quals.extend(rows.flatten());
        }
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
        let mut del_stat = tx
            .prepare_cached("DELETE FROM file_stat WHERE path = ?1")
            .map_err(|e| db_err("prepare", e))?;
        let run = |st: &mut rusqlite::CachedStatement<'_>, p: &str| {
            st.execute([p])
                .map(|n| n as i64)
                .map_err(|e| db_err("delete", e))
        };
        if !cold {
            for p in &wipe_all {
                n_edges -= run(&mut del_edges, p)?;
                run(&mut del_meta, p)?;
                n_nodes -= run(&mut del_nodes, p)?;
                run(&mut del_unres, p)?;
                run(&mut del_deps, p)?;
                run(&mut del_raw, p)?;
                run(&mut del_file, p)?;
                run(&mut del_stat, p)?;
            }
            for &i in &affected {
                let p = files[i].rel.as_str();
                n_edges -= run(&mut del_edges, p)?;
                n_nodes -= run(&mut del_refs, p)?;
                run(&mut del_unres, p)?;
                run(&mut del_deps, p)?;
            }
        }

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
            .prepare_cached("INSERT OR REPLACE INTO raw(path, data, iface) VALUES(?1, ?2, ?3)")
            .map_err(|e| db_err("prepare", e))?;
        let mut ins_stat = tx
            .prepare_cached(
                "INSERT OR REPLACE INTO file_stat(path, size, mtime_ns) VALUES(?1, ?2, ?3)",
            )
            .map_err(|e| db_err("prepare", e))?;
        let blobs: Vec<(Vec<u8>, Vec<u8>)> = changed
            .par_iter()
            .map(|&i| (files[i].raw.encode(), files[i].raw.interface().encode()))
            .collect();
        for (n, &i) in changed.iter().enumerate() {
            progress.check()?; // dropping `tx` rolls the run back
            let f = &files[i];
            let (sha, language, perr) = &file_meta[n];
            let (bytes, mtime) = found_stat.get(f.rel.as_str()).copied().unwrap_or((0, 0));
            let bytes = bytes as i64;
            ins_file
                .execute(params![f.rel, sha, language, bytes, perr])
                .map_err(|e| db_err("insert file", e))?;
            ins_stat
                .execute(params![f.rel, bytes, mtime])
                .map_err(|e| db_err("insert file_stat", e))?;
            ins_raw
                .execute(params![f.rel, blobs[n].0, blobs[n].1])
                .map_err(|e| db_err("insert raw", e))?;
        }
        // Nodes go in sorted by id: appending to the primary-key B-tree is several times
        // cheaper than inserting at random positions. The sort is stable, so among equal ids
        // the first row (definitions before reference sites, files in order) still wins.
        let mut rows: Vec<NodeRow<'_>> = vec![];
        for &i in &changed {
            let f = &files[i];
            let quals = resolver.qualnames(i as u32);
            for (di, d) in f.raw.defs.iter().enumerate() {
                rows.push(NodeRow {
                    id: Cow::Owned(format!("{}:{}", quals[di], d.line)),
                    kind: d.kind.as_str(),
                    name: &d.name,
                    qual: &quals[di],
                    file: &f.rel,
                    line: d.line,
                    col: d.col,
                    end_line: d.end_line,
                    meta: Some((&d.signature, &d.doc)),
                });
            }
        }
        for (i, r) in &results {
            progress.check()?;
            let rel = files[*i].rel.as_str();
            for (id, name, q, line, col) in &r.ref_nodes {
                rows.push(NodeRow {
                    id: Cow::Borrowed(id),
                    kind: "ref",
                    name,
                    qual: q,
                    file: rel,
                    line: *line,
                    col: *col,
                    end_line: *line,
                    meta: None,
                });
            }
        }
        rows.par_sort_by(|a, b| a.id.cmp(&b.id));
        for n in &rows {
            n_nodes += ins_node
                .execute(params![
                    n.id, n.kind, n.name, n.qual, n.file, n.line, n.col, n.end_line
                ])
                .map_err(|e| db_err("insert node", e))? as i64;
            if let Some((sig, doc)) = n.meta {
                ins_meta
                    .execute(params![n.id, sig, doc])
                    .map_err(|e| db_err("insert meta", e))?;
            }
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
            progress.check()?;
            let rel = files[*i].rel.as_str();
            for (s, d, t) in &r.edges {
                n_edges += ins_edge
                    .execute(params![s, d, t])
                    .map_err(|e| db_err("insert edge", e))? as i64;
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
    write_skipped_and_meta(&tx, &skipped, &restat, run_start, &layout)?;
    tx.execute(
        "INSERT OR REPLACE INTO meta(key, value) VALUES('node_count', ?1), ('edge_count', ?2)",
        [n_nodes.to_string(), n_edges.to_string()],
    )
    .map_err(|e| db_err("meta", e))?;
    trace("insert", t0);
    progress.check()?;
    if cold {
        // Building the secondary indexes is one long statement (seconds on a large tree):
        // a cancel during it interrupts SQLite itself.
        progress::while_running(&progress, &interrupt, || {
            tx.execute_batch(store::SCHEMA)
                .map_err(|e| db_err("create indexes", e))?;
            tx.execute_batch(
                "DELETE FROM name_index; INSERT INTO name_index(qualname) SELECT DISTINCT qualname FROM nodes WHERE kind != 'ref';",
            )
            .map_err(|e| db_err("name_index", e))
        })?;
    } else {
        // Incremental name_index: drop qualnames no definition carries any more, add new ones.
        let mut drop_q = tx
            .prepare_cached("DELETE FROM name_index WHERE qualname = ?1 AND NOT EXISTS (SELECT 1 FROM nodes WHERE qualname = ?1 AND kind != 'ref')")
            .map_err(|e| db_err("prepare", e))?;
        for q in &old_quals {
            drop_q.execute([q]).map_err(|e| db_err("name_index", e))?;
        }
        let mut add_q = tx
            .prepare_cached("INSERT INTO name_index(qualname) SELECT ?1 WHERE NOT EXISTS (SELECT 1 FROM name_index WHERE qualname = ?1)")
            .map_err(|e| db_err("prepare", e))?;
        for &i in &changed {
            for q in resolver.qualnames(i as u32) {
                add_q.execute([q]).map_err(|e| db_err("name_index", e))?;
            }
        }
    }
    progress.check()?;
    tx.commit().map_err(|e| db_err("commit", e))?;
    if !fresh {
        store::shrink_wal(&conn, db_path, opts.wal_truncate_bytes);
    }
    trace("commit", t0);
    // What the next run in this process would otherwise read back from the `raw` table:
    // each file's interface (full extractions — changed and re-resolved files — reduced).
    let full: HashSet<usize> = changed.iter().chain(&affected).copied().collect();
    drop(resolver);
    let ifaces: HashMap<String, RawFile> = files
        .into_iter()
        .enumerate()
        .map(|(i, f)| {
            let raw = if full.contains(&i) {
                f.raw.interface()
            } else {
                f.raw
            };
            (f.rel, raw)
        })
        .collect();
    let stats = finish(
        &conn,
        &found,
        files_parsed,
        removed.len(),
        affected.len(),
        errors,
        t0,
    )
    .map(|s| IndexStats { cache_hits, ..s });
    if fresh {
        // Readers and later refreshes expect WAL (persistent in the file header).
        conn.pragma_update(None, "journal_mode", "WAL")
            .map_err(|e| db_err("journal_mode", e))?;
        drop(conn);
        store::install(&build_path, db_path)?;
    }
    if stats.is_ok() {
        cache::put(db_path, run_start, ifaces);
    }
    stats
}

/// Counts one file as done when the parse closure returns, whichever way it returns.
struct Tick<'a>(&'a Progress);

impl Drop for Tick<'_> {
    fn drop(&mut self) {
        self.0.tick();
    }
}

/// One `nodes` row (plus its `defs_meta` row for definitions) waiting to be inserted.
struct NodeRow<'a> {
    id: Cow<'a, str>,
    kind: &'static str,
    name: &'a str,
    qual: &'a str,
    file: &'a str,
    line: u32,
    col: u32,
    end_line: u32,
    meta: Option<(&'a str, &'a str)>,
}

/// Rewrites the rows of skipped files (they carry no graph) and the refresh time.
fn write_skipped_and_meta(
    tx: &rusqlite::Transaction<'_>,
    skipped: &[(String, Option<Lang>, u64, String)],
    restat: &[(&str, i64, i64)],
    run_start_ns: i64,
    layout: &str,
) -> CoreResult<()> {
    tx.execute(
        "INSERT OR REPLACE INTO meta(key, value) VALUES('package_layout', ?1)",
        [layout],
    )
    .map_err(|e| db_err("meta", e))?;
    let mut ins_stat = tx
        .prepare_cached("INSERT OR REPLACE INTO file_stat(path, size, mtime_ns) VALUES(?1, ?2, ?3)")
        .map_err(|e| db_err("prepare", e))?;
    for (p, size, mtime) in restat {
        ins_stat
            .execute(params![p, size, mtime])
            .map_err(|e| db_err("insert file_stat", e))?;
    }
    tx.execute(
        "INSERT OR REPLACE INTO meta(key, value) VALUES('run_start_ns', ?1)",
        [run_start_ns.to_string()],
    )
    .map_err(|e| db_err("meta", e))?;
    tx.execute("DELETE FROM files WHERE sha256 IS NULL", [])
        .map_err(|e| db_err("delete", e))?;
    let mut ins_file = tx
        .prepare_cached("INSERT OR REPLACE INTO files(path, sha256, language, bytes, parse_error) VALUES(?1, ?2, ?3, ?4, ?5)")
        .map_err(|e| db_err("prepare", e))?;
    for (rel, lang, bytes, reason) in skipped {
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
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64());
    tx.execute(
        "INSERT OR REPLACE INTO meta(key, value) VALUES('last_refresh', ?1)",
        [now.to_string()],
    )
    .map_err(|e| db_err("meta", e))?;
    Ok(())
}

/// True when the package layout differs from the stored one *and* some indexed Python file's
/// module name (its `def` node) is not what `namer` now gives it. The layout check keeps the
/// common refresh free of the node scan.
fn modules_moved(
    conn: &rusqlite::Connection,
    found: &[discover::Found],
    namer: &ModuleNamer,
    layout: &str,
) -> CoreResult<bool> {
    let stored_layout: Option<String> = conn
        .query_row(
            "SELECT value FROM meta WHERE key = 'package_layout'",
            [],
            |r| r.get(0),
        )
        .ok();
    if stored_layout.as_deref() == Some(layout) {
        return Ok(false);
    }
    let mut st = conn
        .prepare("SELECT file, qualname FROM nodes WHERE kind = 'def' AND line = 1")
        .map_err(|e| db_err("read modules", e))?;
    let rows = st
        .query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))
        .map_err(|e| db_err("read modules", e))?;
    let old: HashMap<String, String> = rows.flatten().collect();
    Ok(found.iter().any(|f| {
        f.lang == Some(Lang::Python)
            && old
                .get(&f.rel)
                .is_some_and(|m| *m != namer.name(&f.rel, Lang::Python))
    }))
}

/// Records every file whose module qualname another (earlier-sorted) file already has: the
/// resolver maps the name to the first file, and definitions with the same `qualname:line`
/// id are stored once, so the clash must not pass silently.
fn record_clashes(
    found: &[discover::Found],
    present: &HashSet<&str>,
    namer: &ModuleNamer,
    errors: &mut Vec<(String, String)>,
) {
    let mut first: HashMap<String, &str> = HashMap::new();
    for f in found {
        let (Some(lang), true) = (f.lang, present.contains(f.rel.as_str())) else {
            continue;
        };
        let m = namer.name(&f.rel, lang);
        match first.get(&m) {
            Some(other) => errors.push((
                f.rel.clone(),
                format!(
                    "module name clash: `{m}` is also the module of {other}; names resolve to \
                     {other} and this file's definitions with the same id are dropped"
                ),
            )),
            None => {
                first.insert(m, f.rel.as_str());
            }
        }
    }
}

/// Node and edge counts, kept in `meta` by every write (counting 100k-row tables on each
/// refresh costs more than the rest of a no-op refresh); counted once if missing.
fn graph_counts(conn: &rusqlite::Connection) -> CoreResult<(i64, i64)> {
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
    let count = |sql: &str| -> CoreResult<i64> {
        conn.query_row(sql, [], |r| r.get::<_, i64>(0))
            .map_err(|e| db_err("count", e))
    };
    Ok((
        count("SELECT COUNT(*) FROM nodes")?,
        count("SELECT COUNT(*) FROM edges")?,
    ))
}

fn finish(
    conn: &rusqlite::Connection,
    found: &[discover::Found],
    files_parsed: usize,
    files_removed: usize,
    files_resolved: usize,
    errors: Vec<(String, String)>,
    t0: Instant,
) -> CoreResult<IndexStats> {
    let (nodes, edges) = graph_counts(conn)?;
    Ok(IndexStats {
        files_seen: found.len(),
        files_parsed,
        files_removed,
        files_resolved,
        nodes: nodes as usize,
        edges: edges as usize,
        seconds: t0.elapsed().as_secs_f64(),
        cache_hits: 0,
        errors,
    })
}

#[cfg(test)]
mod tests {
    use super::lang::module_qualname;
    use super::*;
    use std::fs;

    /// `(src, dst)` rows of a two-column query on the index at `db`.
    fn pairs(db: &Path, sql: &str) -> Vec<(String, String)> {
        let conn = rusqlite::Connection::open(db).unwrap();
        let mut st = conn.prepare(sql).unwrap();
        st.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .map(Result::unwrap)
            .collect()
    }

    fn count(db: &Path, sql: &str) -> i64 {
        let conn = rusqlite::Connection::open(db).unwrap();
        conn.query_row(sql, [], |r| r.get(0)).unwrap()
    }

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
        assert_eq!(RawFile::decode(&blob).as_ref(), Some(&ex.raw));
        assert_eq!(RawFile::decode(&blob[..blob.len() - 1]), None);
        // The interface blob is much smaller and still compares equal to the full extraction.
        let iface = ex.raw.interface();
        assert!(iface.refs.is_empty() && iface.same_interface(&ex.raw));
        assert!(iface.encode().len() < blob.len());
        let body_edit = lang::extract(
            Lang::Python,
            &[src.as_slice(), b"    # c\n"].concat(),
            "pkg.mod",
            7,
        );
        assert!(body_edit.raw.same_interface(&ex.raw));
        let moved = lang::extract(
            Lang::Python,
            &[b"\n".as_slice(), src].concat(),
            "pkg.mod",
            7,
        );
        assert!(!moved.raw.same_interface(&ex.raw));
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
    fn progress_counts_every_file_and_ends_done() {
        let d = repo(&[("a.py", "x = 1\n"), ("b.py", "y = 2\n"), ("c.txt", "z\n")]);
        let p = std::sync::Arc::new(Progress::new());
        let opts = IndexOptions {
            progress: Some(p.clone()),
            ..IndexOptions::default()
        };
        let s = index(d.path(), &d.path().join("r.db"), &opts).unwrap();
        assert_eq!(p.snapshot(), (Stage::Done, s.files_seen, s.files_seen));
        assert_eq!(s.files_seen, 2);
    }

    #[test]
    fn cold_build_removes_side_files_of_dead_builds_only() {
        let d = repo(&[("a.py", "x = 1\n")]);
        let dir = d.path().join(".ctxfast");
        fs::create_dir_all(&dir).unwrap();
        // No live process has pid u32::MAX - 1; pid 1 is always alive.
        let dead = dir.join(format!("recon.db.building-{}", u32::MAX - 1));
        let dead_journal = dir.join(format!("recon.db.building-{}-journal", u32::MAX - 1));
        let live = dir.join("recon.db.building-1");
        let other = dir.join("recon.db.building-notapid");
        for p in [&dead, &dead_journal, &live, &other] {
            fs::write(p, b"junk").unwrap();
        }
        let db = dir.join("recon.db");
        index(d.path(), &db, &IndexOptions::default()).unwrap();
        assert!(!dead.exists() && !dead_journal.exists());
        assert!(other.exists(), "names that are not ours are left alone");
        assert!(live.exists(), "a running build's side file is kept");
        assert!(db.exists());
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
    fn modules_are_named_from_the_top_of_their_package_chain() {
        let paths = [
            "lib/matplotlib/__init__.py",
            "lib/matplotlib/colors.py",
            "lib/matplotlib/tri/__init__.py",
            "lib/matplotlib/tri/_triangulation.py",
            "python/ctxfast/__init__.py",
            "python/ctxfast/recon/graph.py",
            "django/__init__.py",
            "django/db/__init__.py",
            "django/db/models.py",
            "src/pkg/__init__.py",
            "src/pkg/mod.py",
            "src/script.py",
            "tests/test_a.py",
            "tests/unit/__init__.py",
            "tests/unit/test_b.py",
        ];
        let n = ModuleNamer::new(paths);
        let py = |p: &str| n.name(p, Lang::Python);
        assert_eq!(py("lib/matplotlib/colors.py"), "matplotlib.colors");
        assert_eq!(py("lib/matplotlib/__init__.py"), "matplotlib");
        assert_eq!(
            py("lib/matplotlib/tri/_triangulation.py"),
            "matplotlib.tri._triangulation"
        );
        // `recon/` has no __init__.py: graph.py is not in a package, the plain rule applies.
        assert_eq!(
            py("python/ctxfast/recon/graph.py"),
            "python.ctxfast.recon.graph"
        );
        assert_eq!(py("django/db/models.py"), "django.db.models");
        assert_eq!(py("src/pkg/mod.py"), "pkg.mod");
        assert_eq!(py("src/script.py"), "script");
        assert_eq!(py("tests/test_a.py"), "tests.test_a");
        assert_eq!(py("tests/unit/test_b.py"), "unit.test_b");
        assert_eq!(n.name("lib/x/y.ts", Lang::TypeScript), "lib.x.y");
    }

    #[test]
    fn a_new_package_root_renames_unchanged_files_on_refresh() {
        let d = repo(&[
            ("lib/pkg/__init__.py", ""),
            ("lib/pkg/a.py", "def f():\n    return 1\n"),
            (
                "lib/pkg/b.py",
                "from pkg.a import f\n\ndef g():\n    return f()\n",
            ),
        ]);
        let db = d.path().join(".ctxfast/recon.db");
        let opts = IndexOptions::default();
        let quals = || -> Vec<String> {
            let conn = rusqlite::Connection::open(&db).unwrap();
            let mut st = conn
                .prepare("SELECT qualname FROM nodes WHERE kind = 'function' ORDER BY qualname")
                .unwrap();
            st.query_map([], |r| r.get(0))
                .unwrap()
                .map(Result::unwrap)
                .collect()
        };
        index(d.path(), &db, &opts).unwrap();
        assert_eq!(quals(), ["pkg.a.f", "pkg.b.g"]);
        let conn = rusqlite::Connection::open(&db).unwrap();
        let invoke: String = conn
            .query_row("SELECT dst FROM edges WHERE type = 'invoke'", [], |r| {
                r.get(0)
            })
            .unwrap();
        assert_eq!(invoke, "pkg.a.f:1");
        let s = index(d.path(), &db, &opts).unwrap();
        assert_eq!(s.files_parsed, 0, "same layout: nothing re-parsed");

        fs::write(d.path().join("lib/__init__.py"), "").unwrap();
        let s = index(d.path(), &db, &opts).unwrap();
        assert_eq!(
            s.files_parsed, 4,
            "every file re-parsed under the new names"
        );
        assert_eq!(quals(), ["lib.pkg.a.f", "lib.pkg.b.g"]);
        let s = index(d.path(), &db, &opts).unwrap();
        assert_eq!(s.files_parsed, 0);
    }

    #[test]
    fn typed_locals_resolve_method_calls_on_instances() {
        let d = repo(&[
            (
                "a.py",
                "class Foo:\n    def run(self):\n        return 1\n\n    def stop(self):\n        return 2\n\n\nclass Bar:\n    def run(self):\n        return 3\n",
            ),
            (
                "b.py",
                concat!(
                    "from a import Foo, Bar\n",                      // 1
                    "import a\n",                                    // 2
                    "import json\n",                                 // 3
                    "\n",                                            // 4
                    "def use():\n",                                  // 5
                    "    x = Foo()\n",                               // 6
                    "    x.run()\n",                                 // 7
                    "    y = a.Bar()\n",                             // 8
                    "    y.run()\n",                                 // 9
                    "\n",                                            // 10
                    "def param(z: Foo):\n",                          // 11
                    "    z.stop()\n",                                // 12
                    "\n",                                            // 13
                    "def conflict(flag):\n",                         // 14
                    "    w = Foo()\n",                               // 15
                    "    if flag:\n",                                // 16
                    "        w = Bar()\n",                           // 17
                    "    w.run()\n",                                 // 18
                    "\n",                                            // 19
                    "def rebound():\n",                              // 20
                    "    v = Foo()\n",                               // 21
                    "    for v in range(3):\n",                      // 22
                    "        pass\n",                                // 23
                    "    v.run()\n",                                 // 24
                    "\n",                                            // 25
                    "def external():\n",                             // 26
                    "    dec = json.JSONDecoder()\n",                // 27
                    "    dec.decode('1')\n",                         // 28
                    "    u = Foo()\n",                               // 29
                    "    u()\n",                                     // 30
                    "    u.missing()\n",                             // 31
                ),
            ),
        ]);
        let db = d.path().join(".ctxfast/recon.db");
        index(d.path(), &db, &IndexOptions::default()).unwrap();
        let edges = pairs(
            &db,
            "SELECT src, dst FROM edges WHERE type = 'invoke' AND src LIKE 'b.%' \
                 AND dst NOT IN ('a.Foo:1', 'a.Bar:9') ORDER BY src",
        );
        assert_eq!(
            edges,
            vec![
                ("b.param:12".into(), "a.Foo.stop:5".into()),
                ("b.use:7".into(), "a.Foo.run:2".into()),
                ("b.use:9".into(), "a.Bar.run:10".into()),
            ]
        );
        let to_class = count(
            &db,
            "SELECT COUNT(*) FROM edges WHERE src = 'b.external:30'",
        );
        assert_eq!(
            to_class, 0,
            "calling an instance is not a call of its class"
        );
        assert_eq!(count(&db, "SELECT COUNT(*) FROM unresolved"), 0);
    }

    #[test]
    fn typed_attributes_resolve_calls_through_self_and_instances() {
        let d = repo(&[
            (
                "q.py",
                "class Query:\n    def add(self):\n        return 1\n\n\nclass Where:\n    def push(self):\n        return 2\n",
            ),
            (
                "m.py",
                concat!(
                    "from q import Query, Where\n",           // 1
                    "\n",                                     // 2
                    "class Base:\n",                          // 3
                    "    where: Where\n",                     // 4
                    "\n",                                     // 5
                    "    def __init__(self):\n",              // 6
                    "        self.query = Query()\n",         // 7
                    "        self.other = Query()\n",         // 8
                    "\n",                                     // 9
                    "    def reset(self):\n",                 // 10
                    "        self.other = None\n",            // 11
                    "\n",                                     // 12
                    "\n",                                     // 13
                    "class Child(Base):\n",                   // 14
                    "    def run(self):\n",                   // 15
                    "        self.query.add()\n",             // 16
                    "        self.where.push()\n",            // 17
                    "        self.other.add()\n",             // 18
                    "        self.query()\n",                 // 19
                    "\n",                                     // 20
                    "\n",                                     // 21
                    "def use():\n",                           // 22
                    "    c = Child()\n",                      // 23
                    "    c.query.add()\n",                    // 24
                ),
            ),
        ]);
        let db = d.path().join(".ctxfast/recon.db");
        index(d.path(), &db, &IndexOptions::default()).unwrap();
        let edges = pairs(
            &db,
            "SELECT src, dst FROM edges WHERE type = 'invoke' AND src LIKE 'm.%' \
                 AND dst LIKE 'q.%.%' ORDER BY src",
        );
        // `self.other` is also set to None: untyped. Calling `self.query()` is not a call of
        // Query; the class-body annotation types `where`; the attribute types are inherited.
        assert_eq!(
            edges,
            vec![
                ("m.Child.run:16".into(), "q.Query.add:2".into()),
                ("m.Child.run:17".into(), "q.Where.push:7".into()),
                ("m.use:24".into(), "q.Query.add:2".into()),
            ]
        );
        let to_class = count(
            &db,
            "SELECT COUNT(*) FROM edges WHERE src = 'm.Child.run:19'",
        );
        assert_eq!(to_class, 0);
    }

    #[test]
    fn super_calls_and_caught_exceptions_resolve() {
        let d = repo(&[(
            "s.py",
            concat!(
                "class A:\n",                      // 1
                "    def save(self):\n",           // 2
                "        return 1\n",              // 3
                "\n",                              // 4
                "\n",                              // 5
                "class B(A):\n",                   // 6
                "    pass\n",                      // 7
                "\n",                              // 8
                "\n",                              // 9
                "class C(B):\n",                   // 10
                "    def save(self):\n",           // 11
                "        super().save()\n",        // 12
                "        super(C, self).save()\n", // 13
                "        super().missing()\n",     // 14
                "\n",                              // 15
                "\n",                              // 16
                "def handle():\n",                 // 17
                "    try:\n",                      // 18
                "        pass\n",                  // 19
                "    except A as err:\n",          // 20
                "        err.save()\n",            // 21
                "    except (A, B) as both:\n",    // 22
                "        both.save()\n",           // 23
            ),
        )]);
        let db = d.path().join(".ctxfast/recon.db");
        index(d.path(), &db, &IndexOptions::default()).unwrap();
        let edges = pairs(
            &db,
            "SELECT src, dst FROM edges WHERE type = 'invoke' \
             AND (src LIKE 's.C.save:%' OR src LIKE 's.handle:%') ORDER BY src, dst",
        );
        assert_eq!(
            edges,
            vec![
                ("s.C.save:12".into(), "s.A.save:2".into()),
                ("s.C.save:13".into(), "s.A.save:2".into()),
                ("s.handle:21".into(), "s.A.save:2".into()),
            ]
        );
    }

    #[test]
    fn cyclic_bases_and_typed_attributes_terminate() {
        let d = repo(&[(
            "c.py",
            "class A(B):\n    def __init__(self):\n        self.peer = B()\n\n    def f(self):\n        super().g()\n        self.peer.peer.h()\n\n\nclass B(A):\n    def __init__(self):\n        self.peer = A()\n\n    def g(self):\n        super().missing()\n        self.peer.f()\n",
        )]);
        let db = d.path().join(".ctxfast/recon.db");
        index(d.path(), &db, &IndexOptions::default()).unwrap();
        let edges = pairs(
            &db,
            "SELECT src, dst FROM edges WHERE type = 'invoke' AND dst LIKE 'c.%.%' ORDER BY src",
        );
        assert_eq!(
            edges,
            vec![
                ("c.A.f:6".into(), "c.B.g:14".into()),
                ("c.B.g:16".into(), "c.A.f:5".into()),
            ]
        );
    }

    /// Every graph row of the index at `db`, sorted (to compare two indexes).
    fn dump(db: &Path) -> Vec<String> {
        let conn = rusqlite::Connection::open(db).unwrap();
        let mut out = vec![];
        for q in [
            "SELECT id || kind || name || qualname || file || line || col || end_line FROM nodes",
            "SELECT src || ' ' || dst || ' ' || type FROM edges",
            "SELECT name || node_id || file || line FROM unresolved",
            "SELECT qualname FROM name_index",
            "SELECT id || signature || doc FROM defs_meta",
        ] {
            let mut st = conn.prepare(q).unwrap();
            out.extend(
                st.query_map([], |r| r.get::<_, String>(0))
                    .unwrap()
                    .map(Result::unwrap),
            );
        }
        out.sort();
        out
    }

    #[test]
    fn in_process_refreshes_match_a_cold_build_at_every_step() {
        let d = repo(&[
            ("a.py", "class A:\n    def f(self):\n        return 1\n"),
            ("b.py", "from a import A\n\ndef g():\n    return A().f()\n"),
            ("c.py", "import b\n\ndef h():\n    return b.g()\n"),
        ]);
        let db = d.path().join(".ctxfast/recon.db");
        let opts = IndexOptions::default();
        index(d.path(), &db, &opts).unwrap();
        let steps: [&dyn Fn(&Path); 5] = [
            &|r| {
                fs::write(
                    r.join("a.py"),
                    "class A:\n    def f(self):\n        return 2\n",
                )
                .unwrap()
            },
            &|r| {
                fs::write(r.join("a.py"), "\nclass A:\n    def f(self):\n        return 2\n\n    def k(self):\n        return 3\n").unwrap()
            },
            &|r| {
                fs::write(
                    r.join("d.py"),
                    "from a import A\n\ndef m():\n    return A().k()\n",
                )
                .unwrap()
            },
            &|r| fs::remove_file(r.join("b.py")).unwrap(),
            &|_| {},
        ];
        for (n, step) in steps.iter().enumerate() {
            // Files touched this recently are re-hashed (RACY_NS), so every edit is seen.
            step(d.path());
            index(d.path(), &db, &opts).unwrap();
            let fresh = d.path().join(format!("fresh{n}.db"));
            index(d.path(), &fresh, &opts).unwrap();
            assert_eq!(dump(&db), dump(&fresh), "step {n}");
        }
    }

    #[test]
    fn module_clash_is_recorded() {
        let d = repo(&[
            ("pkg/a.py", "def f():\n    return 1\n"),
            ("src/pkg/a.py", "def f():\n    return 2\n"),
        ]);
        let db = d.path().join(".ctxfast/recon.db");
        for _ in 0..2 {
            // Reported on the cold build and again on the no-op refresh.
            let s = index(d.path(), &db, &IndexOptions::default()).unwrap();
            assert_eq!(s.errors.len(), 1, "{:?}", s.errors);
            assert_eq!(s.errors[0].0, "src/pkg/a.py");
            assert!(s.errors[0].1.contains("module name clash: `pkg.a`"));
            assert!(s.errors[0].1.contains("pkg/a.py"));
        }
    }

    #[test]
    fn refresh_reparses_one_file_and_resolves_only_what_can_change() {
        let d = repo(&[
            ("a.py", "def f():\n    return 1\n"),
            ("b.py", "from a import f\n\ndef g():\n    return f()\n"),
            ("c.py", "import a\n\ndef h():\n    return a.f()\n"),
            ("d.py", "def k():\n    return 2\n"),
        ]);
        let db = d.path().join(".ctxfast/recon.db");
        let opts = IndexOptions::default();
        let s = index(d.path(), &db, &opts).unwrap();
        assert_eq!((s.files_parsed, s.files_resolved), (4, 4));
        assert!(!store::side(&db, &format!(".building-{}", std::process::id())).exists());
        let s = index(d.path(), &db, &opts).unwrap();
        assert_eq!((s.files_parsed, s.files_resolved), (0, 0));

        // A body-only edit keeps a.py's interface: only a.py itself is re-resolved.
        fs::write(d.path().join("a.py"), "def f():\n    return 3  # x\n").unwrap();
        let s = index(d.path(), &db, &opts).unwrap();
        assert_eq!((s.files_parsed, s.files_resolved), (1, 1));

        // Moving f changes its id: a.py and its two dependents re-resolve, d.py does not.
        fs::write(d.path().join("a.py"), "# c\n\ndef f():\n    return 3\n").unwrap();
        let s = index(d.path(), &db, &opts).unwrap();
        assert_eq!((s.files_parsed, s.files_resolved), (1, 3));
        let conn = rusqlite::Connection::open(&db).unwrap();
        let dsts: Vec<String> = conn
            .prepare("SELECT DISTINCT dst FROM edges WHERE type = 'invoke' ORDER BY dst")
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        assert_eq!(dsts, vec!["a.f:3".to_string()]);
        let names: Vec<String> = conn
            .prepare("SELECT qualname FROM name_index ORDER BY qualname")
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        assert_eq!(names, ["a", "a.f", "b", "b.g", "c", "c.h", "d", "d.k"]);

        // Leaf edit in d.py: nothing depends on it.
        fs::write(d.path().join("d.py"), "def k():\n    return 5\n").unwrap();
        let s = index(d.path(), &db, &opts).unwrap();
        assert_eq!((s.files_parsed, s.files_resolved), (1, 1));
        // Removing a definition drops it from name_index; a file removal is counted too.
        fs::write(d.path().join("d.py"), "x = 1\n").unwrap();
        fs::remove_file(d.path().join("c.py")).unwrap();
        let s = index(d.path(), &db, &opts).unwrap();
        // The stored counts follow every delta exactly.
        let real: (usize, usize) = conn
            .query_row(
                "SELECT (SELECT COUNT(*) FROM nodes), (SELECT COUNT(*) FROM edges)",
                [],
                |r| Ok((r.get::<_, i64>(0)? as usize, r.get::<_, i64>(1)? as usize)),
            )
            .unwrap();
        assert_eq!((s.nodes, s.edges), real);
        assert_eq!(s.files_removed, 1);
        let gone = count(
            &db,
            "SELECT COUNT(*) FROM name_index WHERE qualname = 'd.k'",
        );
        assert_eq!(gone, 0);
    }

    #[test]
    fn stat_shortcut_trusts_old_mtimes_and_rehashes_racy_ones() {
        use std::time::{Duration, SystemTime};
        let d = repo(&[("a.py", "def f():\n    return 1\n")]);
        let a = d.path().join("a.py");
        let db = d.path().join(".ctxfast/recon.db");
        let opts = IndexOptions::default();
        let set_mtime = |t: SystemTime| {
            fs::File::options()
                .write(true)
                .open(&a)
                .unwrap()
                .set_modified(t)
                .unwrap()
        };
        let old = SystemTime::now() - Duration::from_secs(60);
        set_mtime(old);
        index(d.path(), &db, &opts).unwrap();
        // Same size, old mtime restored: trusted without reading (git's rule too).
        fs::write(&a, "def f():\n    return 2\n").unwrap();
        set_mtime(old);
        assert_eq!(index(d.path(), &db, &opts).unwrap().files_parsed, 0);
        // A fresh mtime differs from the recorded one: re-hashed, detected.
        fs::write(&a, "def g():\n    return 2\n").unwrap();
        assert_eq!(index(d.path(), &db, &opts).unwrap().files_parsed, 1);
        // Same size *and* the recorded mtime, but that mtime is within RACY_NS of the last
        // run's start: a same-tick edit is possible, so the file is re-hashed.
        let recorded = fs::metadata(&a).unwrap().modified().unwrap();
        fs::write(&a, "def h():\n    return 2\n").unwrap();
        set_mtime(recorded);
        let s = index(d.path(), &db, &opts).unwrap();
        assert_eq!(s.files_parsed, 1);
        let conn = rusqlite::Connection::open(&db).unwrap();
        let n: i64 = conn
            .query_row("SELECT COUNT(*) FROM nodes WHERE name = 'h'", [], |r| {
                r.get(0)
            })
            .unwrap();
        assert_eq!((n, RACY_NS), (1, 1_000_000_000));
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
