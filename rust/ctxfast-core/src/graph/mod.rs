//! The line-level code graph that retrieval and the window read: discover → parse
//! (tree-sitter, in parallel) → resolve names → store in `recon.db`.
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
//!   is `enclosing_qualname:line` (one row per scope and line, e.g.
//!   `repo.module.main:15`). When that id equals a definition's own id (a call on a `def`
//!   line), the definition row stands for the site.
//!
//! Text ids are what resolution works with and what the Python API shows; `recon.db` stores
//! each node under the integer [`store::node_key`] of its id.
//!
//! Edges: `invoke` (ref → definition), `import` (import site → module/definition), `contain`
//! (definition → enclosing definition). Only project-internal targets get edges; names that
//! resolve nowhere are rows in `unresolved(name, node_id, file, line, col)` (Python only; see
//! [`resolve`]).
//!
//! One run, stage by stage (`index_run`): [`plan`] reads what the previous run recorded and
//! decides what can be trusted unread, and later which files must be resolved again;
//! [`parse`] reads, hashes and parses the rest (in parallel) and assembles the run's file
//! list; [`resolve`] builds the symbol table and resolves the chosen files; [`write`](mod@write) applies
//! it all in one transaction.
//!
//! Cold build: a missing `recon.db` is built in a private side file (no journal, no fsync,
//! nodes inserted in key order, secondary indexes created after the load) and renamed into
//! place, so an interrupted build never leaves a half-written index. Its rows are streamed:
//! a writer thread writes each chunk of parsed and then resolved files while the workers
//! go on with the next ([`bulk`]), so memory holds the extractions, not every row as well.
//!
//! Incremental refresh (one WAL transaction; readers see the previous index until commit):
//! each file is keyed by `sha256(bytes + path)`, read only when its size/mtime differ from
//! `file_stat` or its mtime is within [`RACY_NS`] of the previous run's start. Unchanged files
//! contribute only their stored *interface* blob (definitions, bindings, non-function
//! locals) to the symbol table; changed files are re-parsed; removed files' rows are deleted.
//! A process keeps what its last run left ([`cache`]: the recorded keys and stats, the
//! interfaces, the symbol table), so its next refresh reads none of it back and replaces in
//! the table only what the parsed files contribute ([`resolve::Symbols::refreshed`]).
//! Resolution re-runs for the changed files, and — only when a changed file's interface
//! moved (see [`raw::RawFile::same_interface`]) or a file was removed — for every file that
//! had an edge into it, had unresolved names it may now define, or imports a module (or a
//! name) whose last segment equals its module name. `name_index` and the node/edge counts in
//! `meta` are updated incrementally; a refresh with nothing changed writes only `meta` (the
//! run record), and nothing when that would not change.
//! Files sharing a module qualname are reported in `errors` (module name clash).

pub mod bulk;
pub mod cache;
pub mod discover;
pub mod lang;
pub mod names;
pub mod owner;
pub mod parse;
pub mod parse_cache;
pub mod plan;
pub mod progress;
pub mod raw;
mod refresh;
pub mod resolve;
pub mod seed;
pub mod store;
pub mod write;

use crate::error::{CoreError, CoreResult};
use lang::{Lang, ModuleNamer};
use parse::Assembled;
pub use plan::RACY_NS;
use plan::{Inventory, Previous};
use progress::{Progress, Stage};
use rayon::prelude::*;
use resolve::{Context, Resolved, Resolver, Symbols};
use std::collections::HashSet;
use std::path::Path;
use std::time::Instant;
use write::RunRecord;

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
    /// Indexes (`recon.db` paths) of similar trees: a new index starts from a copy of the one
    /// sharing the most files and is refreshed from there (none by default; see [`seed`]).
    pub seeds: Vec<std::path::PathBuf>,
    /// The user's secret key ([`owner`]): an index or seed not stamped under it is not
    /// trusted (rebuilt, passed over), and every index written is stamped. `None` (the
    /// default) trusts any index, for callers that own the directory outright.
    pub owner_key: Option<Vec<u8>>,
}

impl Default for IndexOptions {
    fn default() -> Self {
        IndexOptions {
            max_file_bytes: discover::DEFAULT_MAX_FILE_BYTES,
            progress: None,
            parse_cache: None,
            lock_wait: store::DEFAULT_LOCK_WAIT,
            wal_truncate_bytes: store::WAL_TRUNCATE_BYTES,
            seeds: vec![],
            owner_key: None,
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
    /// Which seed a new index started from, or why none was used ([`IndexOptions::seeds`]).
    pub seed: seed::SeedReport,
}

/// Stage timings for the embedder's log at debug level (performance diagnosis), with the
/// process's CPU seconds so far: on a shared machine wall time alone cannot tell a stage that
/// works from one that waits.
fn trace(stage: &str, t0: Instant) {
    crate::log::push(
        crate::log::Level::Debug,
        format!(
            "index: {stage} done at {:.3}s (process CPU {:.3}s)",
            t0.elapsed().as_secs_f64(),
            process_cpu_seconds()
        ),
    );
}

/// User plus system CPU seconds of this process (every thread) since it started.
fn process_cpu_seconds() -> f64 {
    // SAFETY: getrusage fills the struct it is given and nothing else.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &raw mut u) } != 0 {
        return 0.0;
    }
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    secs(u.ru_utime) + secs(u.ru_stime)
}

/// Builds or incrementally refreshes the graph of `root` into the SQLite file `db_path`.
///
/// Builds of one index take turns ([`store::lock_builds`]). A damaged index — found by the
/// check of a file changed since the last build ([`store::damage`]) or by a corruption error
/// mid-run — is
/// removed and rebuilt from scratch, and the reason is the first entry of `errors`.
pub fn index(root: &Path, db_path: &Path, opts: &IndexOptions) -> CoreResult<IndexStats> {
    let result = store::lock_builds(db_path, opts.lock_wait).and_then(|_lock| {
        let foreign = match &opts.owner_key {
            Some(key) => owner::foreign(db_path, key),
            None => None,
        };
        if foreign.is_some() {
            store::discard(db_path)?;
        }
        let mut out = seeded_build_or_heal(root, db_path, opts);
        if matches!(out, Err(CoreError::Cancelled)) {
            // Still under the lock: a cancelled first build leaves no side file behind (a
            // cancelled refresh was rolled back).
            store::remove_stale_builds(db_path);
        }
        if let (Ok(stats), Some(key)) = (&mut out, &opts.owner_key) {
            // A first build stamps its file before renaming it into place; an index kept
            // was checked above. This only writes for an index stamped some other way.
            owner::stamp(db_path, key)?;
            if let Some(why) = foreign {
                stats.errors.insert(
                    0,
                    (
                        db_path.display().to_string(),
                        format!("index not written by this user's ctxfast ({why}); rebuilt from scratch"),
                    ),
                );
            }
        }
        out
    });
    if let Some(p) = &opts.progress {
        p.set_stage(Stage::Done);
    }
    result
}

/// [`build_or_heal`], for a new index first seeded from the best of [`IndexOptions::seeds`]
/// ([`seed`]): the refresh from the seed's copy runs like a first build, on a private side
/// file renamed into place at the end. A seeded refresh that fails (other than by
/// cancellation) is redone cold, the failure kept in [`IndexStats::seed`]: a seed may speed
/// a build up, never break it.
fn seeded_build_or_heal(
    root: &Path,
    db_path: &Path,
    opts: &IndexOptions,
) -> CoreResult<IndexStats> {
    if opts.seeds.is_empty() || !root.is_dir() || !seed::wanted(db_path) {
        return build_or_heal(root, db_path, opts);
    }
    // An index of another schema is rebuilt whichever way this goes.
    store::remove_stale_builds(db_path);
    store::discard(db_path)?;
    let min_shared = if opts.parse_cache.is_some() {
        seed::MIN_SHARED_CACHED
    } else {
        seed::MIN_SHARED
    };
    let seed::Planted { mut report, copy } = seed::plant(root, db_path, opts, min_shared);
    let with_report = |s: IndexStats, report: seed::SeedReport| IndexStats { seed: report, ..s };
    let Some(copy) = copy else {
        return build_or_heal(root, db_path, opts).map(|s| with_report(s, report));
    };
    match index_run(root, db_path, opts, Some(&copy)) {
        Ok(stats) => {
            store::trust(db_path);
            Ok(with_report(stats, report))
        }
        // `index` removes the side file; the next run seeds again.
        Err(CoreError::Cancelled) => Err(CoreError::Cancelled),
        Err(e) => {
            let _ = std::fs::remove_file(&copy);
            let used = report.used.take().unwrap_or_default();
            report.note = Some(format!("the refresh from {used} failed ({e}); built cold"));
            build_or_heal(root, db_path, opts).map(|s| with_report(s, report))
        }
    }
}

/// One build or refresh; a damaged index is discarded and built again from scratch.
fn build_or_heal(root: &Path, db_path: &Path, opts: &IndexOptions) -> CoreResult<IndexStats> {
    let damaged = match store::damage(db_path) {
        Some(why) => Some(why),
        None => match index_run(root, db_path, opts, None) {
            Err(e) if e.damage().is_some() => e.damage(),
            done => {
                store::trust(db_path);
                return done;
            }
        },
    };
    let why = damaged.unwrap_or_default();
    store::discard(db_path)?;
    let mut stats = index_run(root, db_path, opts, None)?;
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

/// One build or refresh, stage by stage: plan (what the previous run left, what can be trusted
/// unread) → parse (the files whose content moved) → resolve (the files that can see a
/// change) → write (one transaction). `seeded` is a private copy of a seed index
/// ([`seed::plant`]) to refresh and rename into place, as a first build renames its side file.
fn index_run(
    root: &Path,
    db_path: &Path,
    opts: &IndexOptions,
    seeded: Option<&Path>,
) -> CoreResult<IndexStats> {
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
    let fresh = seeded.is_some() || !db_path.exists();
    let (build_path, conn) = open_for_run(db_path, seeded, fresh)?;
    let progress = opts.progress.clone().unwrap_or_default();

    // ---- plan ----
    progress.set_stage(Stage::Discover);
    let found = discover::discover(root, opts.max_file_bytes);
    let namer = ModuleNamer::new(found.iter().map(|f| f.rel.as_str()));
    progress.set_total(found.len());
    trace("discover", t0);
    let previous = previous_run(&conn, db_path, fresh)?;
    let run_start = now_ns();
    // A changed package layout (an `__init__.py` added or removed) can move the module names
    // of files whose bytes did not change; then every file is re-parsed and re-resolved.
    let layout = plan::layout_signature(&namer, discover::cpp_headers(&found));
    let reparse_all = !previous.is_empty() && plan::modules_moved(&conn, &found, &namer, &layout)?;

    let planned = Planned {
        root,
        db_path,
        opts,
        found: &found,
        namer: &namer,
        reparse_all,
        run_start,
        layout: &layout,
        fresh,
        build_path: &build_path,
        t0,
    };
    if previous.is_cold() {
        if seeded.is_some() {
            // The streamed cold build writes into an empty database only.
            return Err(CoreError::InvalidArgument("the seed holds no graph".into()));
        }
        return cold_run(&planned, previous, conn, &progress);
    }
    refresh::refresh_run(&planned, previous, conn, &progress)
}

/// The file a run writes and its connection: the seed's private copy, a new side file for
/// a first build (`fresh`), or `recon.db` itself for a refresh.
fn open_for_run(
    db_path: &Path,
    seeded: Option<&Path>,
    fresh: bool,
) -> CoreResult<(std::path::PathBuf, rusqlite::Connection)> {
    Ok(if let Some(copy) = seeded {
        (copy.to_path_buf(), store::open_private(copy)?)
    } else {
        let build_path = store::build_path(db_path);
        store::remove_stale_builds(db_path);
        let conn = if fresh {
            store::open_bulk(&build_path)?
        } else {
            store::open(db_path)?
        };
        (build_path, conn)
    })
}

/// What the previous run recorded: kept by this process when it still matches the index,
/// read from the index otherwise (nothing to reuse for a first build).
fn previous_run(conn: &rusqlite::Connection, db_path: &Path, fresh: bool) -> CoreResult<Previous> {
    let cached = if fresh {
        None
    } else {
        cache::take_previous(db_path, plan::stored_run_start(conn))
    };
    Ok(match cached {
        Some(p) => p,
        None => Previous::read(conn)?,
    })
}

/// This run's start in nanoseconds since the Unix epoch (0 if the clock is before it): the
/// stamp that tells the next run which mtimes are too close to trust.
fn now_ns() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as i64)
}

/// What the plan stage settled, for the rest of the run.
struct Planned<'a> {
    root: &'a Path,
    db_path: &'a Path,
    opts: &'a IndexOptions,
    found: &'a [discover::Found],
    namer: &'a ModuleNamer,
    reparse_all: bool,
    run_start: i64,
    layout: &'a str,
    /// A first build into a private side file ([`store::open_bulk`]), renamed into place.
    fresh: bool,
    build_path: &'a Path,
    t0: Instant,
}

/// What a run leaves for the next run in this process ([`cache`]): the record of every
/// file's key and stat as committed, each file's interface and the symbol table.
struct ForNextRun {
    previous: Previous,
    ifaces: cache::Ifaces,
    symbols: Symbols,
}

/// The committed run's statistics; a first build's side file is renamed into place and
/// what the run leaves ([`ForNextRun`]) is kept for the next run in this process.
fn close_run(
    p: &Planned<'_>,
    conn: rusqlite::Connection,
    counts: RunCounts,
    errors: Vec<(String, String)>,
    cache_hits: usize,
    left: ForNextRun,
) -> CoreResult<IndexStats> {
    let stats =
        finish(&conn, p.found, counts, errors, p.t0).map(|s| IndexStats { cache_hits, ..s });
    if p.fresh {
        // Stamped before it is renamed into place: the stamp is part of the one write.
        if let Some(key) = &p.opts.owner_key {
            owner::write_stamp(&conn, key, p.db_path)?;
        }
        // Readers and later refreshes expect WAL (persistent in the file header).
        conn.pragma_update(None, "journal_mode", "WAL")?;
        drop(conn);
        store::install(p.build_path, p.db_path)?;
    }
    if stats.is_ok() {
        cache::put(
            p.db_path,
            p.run_start,
            left.previous,
            left.ifaces,
            left.symbols,
        );
    }
    stats
}

/// A cold build (no file of the index has a graph yet: every file is parsed and resolved),
/// as a pipeline: the parse and resolve workers hand each finished chunk of files to this
/// thread, which writes it ([`bulk`]) while they work on the next; at most
/// [`bulk::BATCHES_IN_FLIGHT`] chunks wait, so rows never pile up in memory. The rows are
/// the ones the refresh path's single write would produce.
fn cold_run(
    p: &Planned<'_>,
    previous: Previous,
    mut conn: rusqlite::Connection,
    progress: &Progress,
) -> CoreResult<IndexStats> {
    progress.set_stage(Stage::Parse);
    let interrupt = conn.get_interrupt_handle();
    let tx = store::begin_write(&mut conn)?;
    let (made, (n_nodes, n_edges)) = std::thread::scope(|s| -> CoreResult<_> {
        let (send, batches) = std::sync::mpsc::sync_channel(bulk::BATCHES_IN_FLIGHT);
        let workers = s.spawn(|| produce(p, previous, progress, send));
        let mut writer = bulk::BulkWriter::new(&tx)?;
        for batch in &batches {
            progress.check()?;
            writer.write(batch)?;
        }
        let made = workers
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic))?;
        if writer.files_written() != made.left.ifaces.len() {
            return Err(CoreError::InvalidArgument(format!(
                "cold build wrote {} of {} files; please report this",
                writer.files_written(),
                made.left.ifaces.len()
            )));
        }
        trace("insert", p.t0);
        progress.publish_content_rows(writer.content_rows());
        Ok((made, writer.finish()?))
    })?;
    trace("nodes", p.t0);
    progress.set_stage(Stage::Write);
    let record = RunRecord {
        skipped: &made.inventory.skipped,
        restat: &made.inventory.restat,
        run_start_ns: p.run_start,
        layout: p.layout,
        context: &made.context,
    };
    write::write_run_record(&tx, &record)?;
    write::write_counts(&tx, n_nodes, n_edges)?;
    progress.check()?;
    write::build_indexes(&tx, progress, &interrupt)?;
    progress.check()?;
    tx.commit()?;
    trace("commit", p.t0);
    let n = made.left.ifaces.len();
    let counts = RunCounts {
        parsed: n,
        removed: made.inventory.removed.len(),
        resolved: n,
    };
    close_run(p, conn, counts, made.errors, made.cache_hits, made.left)
}

/// What the workers of a cold build leave once every batch is sent.
struct Produced<'a> {
    /// What the run leaves, with every file's interface (the full extractions are dropped
    /// as soon as resolution is done, before the writer sorts the nodes and builds the
    /// indexes).
    left: ForNextRun,
    inventory: Inventory<'a>,
    /// The resolution context's stamp ([`Context::stamp`]).
    context: String,
    errors: Vec<(String, String)>,
    cache_hits: usize,
}

/// The worker side of [`cold_run`]: parses (sending each chunk's file rows), assembles the
/// file list, builds the symbol table and resolves chunk by chunk (sending each chunk's
/// resolution). Stops early when the writer has gone (it failed: its error is the run's).
// `send` is owned so that returning drops it, which ends the writer's receive loop.
#[allow(clippy::needless_pass_by_value)]
fn produce<'a>(
    p: &Planned<'a>,
    previous: Previous,
    progress: &Progress,
    send: std::sync::mpsc::SyncSender<bulk::Batch>,
) -> CoreResult<Produced<'a>> {
    let mut writer_gone = false;
    let mut sink = |part: &[discover::Found], outcomes: &[parse::Outcome]| {
        let rows = bulk::file_rows(part, outcomes, p.namer);
        writer_gone = writer_gone || send.send(bulk::Batch::Files(rows)).is_err();
    };
    let parsed = parse::parse_files(
        p.found,
        &previous,
        p.reparse_all,
        p.namer,
        p.opts,
        progress,
        Some(&mut sink),
    )?;
    trace("parse", p.t0);
    if writer_gone {
        return Err(CoreError::Cancelled);
    }
    let mut errors = parsed.cache_errors;
    let inventory = Inventory::take(p.found, &parsed.outcomes, &previous, &mut errors);
    let Assembled { files, changed, .. } = parse::assemble(
        p.found,
        parsed.outcomes,
        cache::Ifaces::default(),
        p.namer,
        p.opts,
        &mut errors,
    );
    plan::record_clashes(plan::file_modules(&files), &mut errors);

    progress.set_stage(Stage::Resolve);
    let symbols = Symbols::build(&files);
    let context = Context::read(p.root, rust_files(p.found, &inventory.present));
    let resolver = Resolver::new(&files, &symbols, &context);
    trace("symbol table", p.t0);
    let all: Vec<usize> = (0..files.len()).collect();
    for part in all.chunks(parse::SINK_CHUNK) {
        let done: Vec<(usize, Resolved)> = part
            .par_iter()
            .filter(|_| !progress.is_cancelled())
            .map(|&i| (i, resolver.resolve_file(i as u32)))
            .collect();
        progress.check()?;
        if send.send(bulk::Batch::Resolved(done)).is_err() {
            return Err(CoreError::Cancelled);
        }
    }
    trace("resolve", p.t0);
    drop(resolver);
    let parsed_keys = changed
        .iter()
        .map(|c| (files[c.index].rel.as_str(), c.sha.as_str()));
    let previous = previous.after_run(p.found, &inventory.skipped, parsed_keys, p.run_start);
    let everything: HashSet<usize> = all.into_iter().collect();
    Ok(Produced {
        left: ForNextRun {
            previous,
            ifaces: interfaces_left(files, &everything, &[]),
            symbols,
        },
        inventory,
        context: context.stamp(),
        errors,
        cache_hits: parsed.cache_hits,
    })
}

/// The relative paths of the Rust files among `present` (those with a graph this run).
fn rust_files<'a>(
    found: &'a [discover::Found],
    present: &'a rustc_hash::FxHashSet<&str>,
) -> impl Iterator<Item = &'a str> {
    found
        .iter()
        .filter(move |f| f.lang == Some(Lang::Rust) && present.contains(f.rel.as_str()))
        .map(|f| f.rel.as_str())
}

/// What the next run in this process would otherwise read back from the `raw` table: each
/// file's interface (full extractions — changed and re-resolved files — reduced).
fn interfaces_left(
    files: Vec<resolve::FileData>,
    changed: &HashSet<usize>,
    resolved: &[usize],
) -> cache::Ifaces {
    let full: HashSet<usize> = changed.iter().chain(resolved).copied().collect();
    files
        .into_iter()
        .enumerate()
        .map(|(i, f)| {
            let raw = if full.contains(&i) {
                f.raw.interface(f.lang.signatures_resolve())
            } else {
                f.raw
            };
            (f.rel, raw)
        })
        .collect()
}

/// How many files a run parsed, removed and resolved.
#[derive(Default, Clone, Copy)]
struct RunCounts {
    parsed: usize,
    removed: usize,
    resolved: usize,
}

fn finish(
    conn: &rusqlite::Connection,
    found: &[discover::Found],
    counts: RunCounts,
    errors: Vec<(String, String)>,
    t0: Instant,
) -> CoreResult<IndexStats> {
    let (nodes, edges) = write::graph_counts(conn)?;
    Ok(IndexStats {
        files_seen: found.len(),
        files_parsed: counts.parsed,
        files_removed: counts.removed,
        files_resolved: counts.resolved,
        nodes: nodes as usize,
        edges: edges as usize,
        seconds: t0.elapsed().as_secs_f64(),
        cache_hits: 0,
        errors,
        seed: seed::SeedReport::default(),
    })
}

#[cfg(test)]
mod tests;
