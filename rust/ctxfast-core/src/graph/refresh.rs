//! The refresh path of one run ([`super::index_run`] on an index that already has a graph):
//! parse the files whose content moved, resolve the files that can see a change, and write
//! the difference in one transaction.

use super::lang::{Lang, ModuleNamer};
use super::names::{ChangedNames, Names};
use super::parse::{self, Assembled, ChangedFile};
use super::plan::{self, FileStat, Inventory, Previous};
use super::progress::{Progress, Stage};
use super::raw::RawFile;
use super::resolve::{Context, FileData, Resolved, Resolver, Symbols};
use super::write::{self, GraphDelta, RunRecord};
use super::{
    cache, close_run, discover, finish, interfaces_left, rust_files, store, trace, ForNextRun,
    IndexStats, Planned, RunCounts,
};
use crate::error::CoreResult;
use rayon::prelude::*;
use rusqlite::OptionalExtension;
use rustc_hash::FxHashSet;
use std::collections::{HashMap, HashSet};

/// The parse, resolve and write stages of a refresh, after the plan stage settled `p`.
pub(super) fn refresh_run(
    p: &Planned<'_>,
    previous: Previous,
    mut conn: rusqlite::Connection,
    progress: &Progress,
) -> CoreResult<IndexStats> {
    let parsed = parse_stage(p, &previous, progress)?;
    let cache_hits = parsed.cache_hits;
    let mut errors = parsed.cache_errors;
    let outcomes = parsed.outcomes;
    let inventory = Inventory::take(p.found, &outcomes, &previous, &mut errors);
    // What resolution reads outside the files (`go.mod`, `Cargo.toml`): when it moved since
    // the index was written (or was never recorded), every file is resolved again.
    let context = Context::read(p.root, rust_files(p.found, &inventory.present));
    let context_stamp = context.stamp();
    let context_moved =
        plan::stored_meta(&conn, "resolve_context").as_deref() != Some(context_stamp.as_str());
    let record = RunRecord {
        skipped: &inventory.skipped,
        restat: &inventory.restat,
        run_start_ns: p.run_start,
        layout: p.layout,
        context: &context_stamp,
    };

    // No-op refresh: nothing parsed or removed and every unchanged file has its blob — the
    // graph is current; only the skipped-file rows and the refresh time are rewritten, and
    // nothing at all when the run record would not change ([`plan::record_is_current`]).
    if !p.fresh && !context_moved && graph_is_current(&conn, &inventory)? {
        no_op_refresh(p, &mut conn, previous, &inventory, &record, &mut errors)?;
        return finish(&conn, p.found, RunCounts::default(), errors, p.t0);
    }

    let stored = parse::stored_interfaces(&conn, p.db_path, &previous, &inventory.present)?;
    trace("load blobs", p.t0);
    let assembled = parse::assemble(p.found, outcomes, stored, p.namer, p.opts, &mut errors);
    plan::record_clashes(plan::file_modules(&assembled.files), &mut errors);
    let changed_ix: Vec<usize> = assembled.changed.iter().map(|c| c.index).collect();
    let to_resolve = files_to_resolve(
        p,
        &conn,
        &assembled,
        &changed_ix,
        &inventory,
        &previous,
        context_moved,
    )?;
    let Assembled {
        mut files,
        changed,
        names,
        unknown,
        ..
    } = assembled;
    let changed_set: HashSet<usize> = changed_ix.iter().copied().collect();
    let narrowing = if context_moved || previous.is_cold() {
        None
    } else {
        let names = changed_names(
            &conn, &files, names, &unknown, &inventory, &previous, p.namer,
        )?;
        Some(Narrowing::new(&conn, &files, names)?)
    };
    let mut to_resolve = to_resolve;
    if let Some(n) = &narrowing {
        to_resolve.extend(n.edge_readers.iter().copied());
        to_resolve.sort_unstable();
        to_resolve.dedup();
    }
    trace("changed names", p.t0);
    parse::load_full_extractions(&conn, p.root, &mut files, &to_resolve, &changed_set, p.opts)?;
    trace("full extractions", p.t0);
    let (to_resolve, moved) = match narrowing {
        None => (to_resolve, vec![]),
        Some(n) => n.apply(&conn, &mut files, to_resolve, &changed_set)?,
    };
    trace("readers", p.t0);

    // ---- resolve ----
    progress.set_stage(Stage::Resolve);
    let cached = cache::take_symbols(p.db_path, previous.run_start_ns);
    let symbols = Symbols::refreshed(cached, &files, &changed_ix);
    let resolver = Resolver::new(&files, &symbols, &context);
    trace("symbol table", p.t0);
    let resolved = resolve_files(&resolver, &to_resolve, progress)?;
    trace("resolve", p.t0);

    // ---- write: one transaction ----
    progress.set_stage(Stage::Write);
    let stats = parsed_stats(p.found, &files, &changed);
    let delta = GraphDelta {
        files: &files,
        resolver: &resolver,
        changed: &changed,
        resolved: &resolved,
        removed: &inventory.removed,
        stats: &stats,
        moved: &moved,
    };
    commit_refresh(p, &mut conn, &delta, &record, progress)?;
    let counts = RunCounts {
        parsed: changed.len(),
        removed: inventory.removed.len(),
        resolved: to_resolve.len(),
    };
    drop(resolver);
    let parsed_keys = changed
        .iter()
        .map(|c| (files[c.index].rel.as_str(), c.sha.as_str()));
    let left = ForNextRun {
        previous: previous.after_run(p.found, &inventory.skipped, parsed_keys, p.run_start),
        ifaces: interfaces_left(files, &changed_set, &to_resolve),
        symbols,
    };
    close_run(p, conn, counts, errors, cache_hits, left)
}

/// What this run's changes may move for a reader ([`ChangedNames`]): the parsed files'
/// interface diffs (`names`), and the files that appeared (`unknown`, unless they were
/// indexed before: then their previous interface is unknown and every reader is kept) or
/// were removed (their stored interface).
fn changed_names(
    conn: &rusqlite::Connection,
    files: &[FileData],
    mut names: ChangedNames,
    unknown: &[usize],
    inventory: &Inventory<'_>,
    previous: &Previous,
    namer: &ModuleNamer,
) -> CoreResult<ChangedNames> {
    let stable = ChangedNames::packages(
        files
            .iter()
            .filter(|f| previous.indexed(&f.rel))
            .map(|f| f.module.as_str()),
    );
    for &i in unknown {
        let f = &files[i];
        if previous.indexed(&f.rel) {
            names.any = true;
        } else {
            names.add_file(&f.raw, &f.rel, f.lang, &f.module, &stable);
        }
    }
    if !inventory.removed.is_empty() && !names.any {
        let mut st = conn.prepare("SELECT iface FROM raw WHERE path = ?1")?;
        for rel in &inventory.removed {
            let Some(lang) = Lang::from_path(rel) else {
                continue;
            };
            let blob: Option<Vec<u8>> = st.query_row([rel], |r| r.get(0)).optional()?;
            match blob.and_then(|b| RawFile::decode_interface_blob(&b, lang.signatures_resolve())) {
                Some(raw) => names.add_file(&raw, rel, lang, &namer.name(rel, lang), &stable),
                None => names.any = true,
            }
        }
    }
    Ok(names)
}

/// A definition that only moved lines: its (old, new) node key.
type MovedKey = (i64, i64);

/// What narrows the files that can see a change to those whose rows can change
/// ([`ChangedNames`]): the changed names, and the files with an edge into a definition
/// that moved lines whose new key cannot simply replace its old one.
struct Narrowing {
    names: ChangedNames,
    edge_readers: HashSet<usize>,
}

impl Narrowing {
    fn new(
        conn: &rusqlite::Connection,
        files: &[FileData],
        mut names: ChangedNames,
    ) -> CoreResult<Narrowing> {
        // A key of a module two files share may stand for a definition of the other file:
        // the readers of those are resolved instead.
        for module in clashing_modules(files) {
            if let Some(moved) = names.moved.remove(module) {
                names
                    .moved_keys
                    .extend(moved.into_iter().map(|(from, _)| from));
            }
        }
        let edge_readers = edge_readers(conn, files, &names.moved_keys)?;
        Ok(Narrowing {
            names,
            edge_readers,
        })
    }

    /// The files of `candidates` to resolve again ([`narrow`]) and the moved definitions
    /// whose stored edges the write repoints.
    fn apply(
        self,
        conn: &rusqlite::Connection,
        files: &mut [FileData],
        candidates: Vec<usize>,
        changed: &HashSet<usize>,
    ) -> CoreResult<(Vec<usize>, Vec<MovedKey>)> {
        let n = candidates.len();
        let names = &self.names;
        let kept = narrow(conn, files, candidates, changed, names, &self.edge_readers)?;
        crate::log::push(
            crate::log::Level::Debug,
            format!(
                "index: {} of {n} files that can see a change look one up ({} names changed \
                 in {} files, {} everywhere{}; {} definitions moved, {} with their readers \
                 resolved again)",
                kept.len(),
                names.rebound.values().map(FxHashSet::len).sum::<usize>(),
                names.rebound.len(),
                names.global.len(),
                if names.any {
                    ", one change unmodelled"
                } else {
                    ""
                },
                names.moved.values().map(Vec::len).sum::<usize>() + names.moved_keys.len(),
                names.moved_keys.len()
            ),
        );
        Ok((kept, self.names.moved.into_values().flatten().collect()))
    }
}

/// Of `candidates` (the files that can see a change, with their full extraction loaded),
/// those whose resolution can have changed: every file parsed in this run, every file with
/// an edge into a moved definition (`edge_readers`), every file outside Python (whose
/// resolvers also look names up repository-wide and by package), and the Python files
/// that look up a name that changed in a file their stored resolution read
/// ([`Names::may_change`]). The others go back to their interface, as files not resolved
/// in this run hold it.
fn narrow(
    conn: &rusqlite::Connection,
    files: &mut [FileData],
    candidates: Vec<usize>,
    changed: &HashSet<usize>,
    names: &ChangedNames,
    edge_readers: &HashSet<usize>,
) -> CoreResult<Vec<usize>> {
    let deps = stored_deps(conn, files)?;
    let keep: Vec<bool> = {
        let lookups = Names::of(files);
        candidates
            .par_iter()
            .map(|&i| {
                let f = &files[i];
                changed.contains(&i)
                    || edge_readers.contains(&i)
                    || f.lang != Lang::Python
                    || lookups.may_change(f, deps.get(&i).map_or(&[], Vec::as_slice), files, names)
            })
            .collect()
    };
    let mut kept = vec![];
    for (i, keep) in candidates.into_iter().zip(keep) {
        if keep {
            kept.push(i);
        } else {
            let f = &mut files[i];
            f.raw = f.raw.interface(f.lang.signatures_resolve());
        }
    }
    Ok(kept)
}

/// The module names two or more files of the run share (reported by
/// [`plan::record_clashes`]): their definitions' node keys may coincide.
fn clashing_modules(files: &[FileData]) -> FxHashSet<&str> {
    let mut seen = FxHashSet::default();
    files
        .iter()
        .map(|f| f.module.as_str())
        .filter(|m| !seen.insert(*m))
        .collect()
}

/// The files (indexes into `files`) holding an edge into one of `keys` in the stored graph.
fn edge_readers(
    conn: &rusqlite::Connection,
    files: &[FileData],
    keys: &[i64],
) -> CoreResult<HashSet<usize>> {
    let mut out = HashSet::new();
    if keys.is_empty() {
        return Ok(out);
    }
    let index_of: HashMap<&str, usize> = files
        .iter()
        .enumerate()
        .map(|(i, f)| (f.rel.as_str(), i))
        .collect();
    let mut st = conn.prepare(
        "SELECT DISTINCT f.path FROM edge_rows e JOIN node_rows n ON n.id = e.src \
         JOIN files f ON f.id = n.file_id WHERE e.dst = ?1",
    )?;
    for key in keys {
        for path in st.query_map([key], |r| r.get::<_, String>(0))? {
            if let Some(&i) = index_of.get(path?.as_str()) {
                out.insert(i);
            }
        }
    }
    Ok(out)
}

/// Each file's stored dependencies (`file_deps`: the files its resolution read), as
/// indexes into `files`; files without a row in this run are left out.
fn stored_deps(
    conn: &rusqlite::Connection,
    files: &[FileData],
) -> CoreResult<HashMap<usize, Vec<usize>>> {
    let index_of: HashMap<&str, usize> = files
        .iter()
        .enumerate()
        .map(|(i, f)| (f.rel.as_str(), i))
        .collect();
    let mut by_id: HashMap<i64, usize> = HashMap::new();
    let mut st = conn.prepare("SELECT id, path FROM files")?;
    for row in st.query_map([], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?)))? {
        let (id, path) = row?;
        if let Some(&i) = index_of.get(path.as_str()) {
            by_id.insert(id, i);
        }
    }
    let mut out: HashMap<usize, Vec<usize>> = HashMap::new();
    let mut st = conn.prepare("SELECT src, dst FROM file_dep_rows")?;
    for row in st.query_map([], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?)))? {
        let (src, dst) = row?;
        if let (Some(&s), Some(&d)) = (by_id.get(&src), by_id.get(&dst)) {
            out.entry(s).or_default().push(d);
        }
    }
    Ok(out)
}

/// Reads, hashes and parses the files whose content may have moved (the parse stage).
fn parse_stage(
    p: &Planned<'_>,
    previous: &Previous,
    progress: &Progress,
) -> CoreResult<parse::Parsed> {
    progress.set_stage(Stage::Parse);
    let parsed = parse::parse_files(
        p.found,
        previous,
        p.reparse_all,
        p.namer,
        p.opts,
        progress,
        None,
    )?;
    trace("parse", p.t0);
    Ok(parsed)
}

/// The files to resolve again: every file when the resolution context moved, else the
/// changed files and those that can see what changed ([`plan::to_resolve`]).
fn files_to_resolve(
    p: &Planned<'_>,
    conn: &rusqlite::Connection,
    assembled: &Assembled,
    changed_ix: &[usize],
    inventory: &Inventory<'_>,
    previous: &Previous,
    context_moved: bool,
) -> CoreResult<Vec<usize>> {
    Ok(if context_moved {
        (0..assembled.files.len()).collect()
    } else {
        plan::to_resolve(
            conn,
            &assembled.files,
            changed_ix,
            plan::Moved {
                interfaces: &assembled.iface_changed,
                linkage: assembled.linkage_moved,
            },
            &inventory.removed,
            previous,
            p.namer,
        )?
    })
}

/// True when nothing was parsed or removed and every unchanged file has its stored blob:
/// the graph is current and the run may skip straight to its record.
fn graph_is_current(conn: &rusqlite::Connection, inventory: &Inventory<'_>) -> CoreResult<bool> {
    if inventory.n_unchanged == inventory.present.len() && inventory.removed.is_empty() {
        let blobs: i64 = conn.query_row("SELECT COUNT(*) FROM raw", [], |r| r.get(0))?;
        if blobs as usize == inventory.n_unchanged {
            return Ok(true);
        }
    }
    Ok(false)
}

/// Finishes a refresh whose graph is current: rewrites the run record only when it would
/// change, and leaves the process cache retagged to the run the index now records.
fn no_op_refresh(
    p: &Planned<'_>,
    conn: &mut rusqlite::Connection,
    previous: Previous,
    inventory: &Inventory<'_>,
    record: &RunRecord<'_>,
    errors: &mut Vec<(String, String)>,
) -> CoreResult<()> {
    let from = previous.run_start_ns;
    let to = if plan::record_is_current(conn, &previous, p.found, inventory, p.layout, p.run_start)?
    {
        from
    } else {
        let tx = store::begin_write(conn)?;
        write::write_run_record(&tx, record)?;
        tx.commit()?;
        p.run_start
    };
    let modules = plan::found_modules(p.found, &inventory.present, p.namer);
    plan::record_clashes(modules, errors);
    let left = previous.after_run(p.found, &inventory.skipped, [], to);
    cache::retag(p.db_path, from, to, left);
    trace("no-op commit", p.t0);
    Ok(())
}

/// Resolves the files `to_resolve` in parallel, stopping early when the run is cancelled.
fn resolve_files(
    resolver: &Resolver<'_>,
    to_resolve: &[usize],
    progress: &Progress,
) -> CoreResult<Vec<(usize, Resolved)>> {
    let resolved: Vec<(usize, Resolved)> = to_resolve
        .par_iter()
        .filter(|_| !progress.is_cancelled())
        .map(|&i| (i, resolver.resolve_file(i as u32)))
        .collect();
    progress.check()?;
    Ok(resolved)
}

/// The size and mtime of each file parsed in this run: only parsed files have their stat
/// written with their rows.
fn parsed_stats<'a>(
    found: &'a [discover::Found],
    files: &[FileData],
    changed: &[ChangedFile],
) -> HashMap<&'a str, FileStat> {
    let parsed_rels: rustc_hash::FxHashSet<&str> = changed
        .iter()
        .map(|c| files[c.index].rel.as_str())
        .collect();
    found
        .iter()
        .filter(|f| parsed_rels.contains(f.rel.as_str()))
        .map(|f| (f.rel.as_str(), FileStat::of(f)))
        .collect()
}

/// Writes the refresh's rows, run record and counts in one transaction and commits it; a
/// refreshed `recon.db` then has its WAL shrunk when it grew past the configured size.
fn commit_refresh(
    p: &Planned<'_>,
    conn: &mut rusqlite::Connection,
    delta: &GraphDelta<'_, '_>,
    record: &RunRecord<'_>,
    progress: &Progress,
) -> CoreResult<()> {
    let tx = store::begin_write(conn)?;
    let (n_nodes, n_edges) = write::write_graph(&tx, delta, progress)?;
    write::write_run_record(&tx, record)?;
    write::write_counts(&tx, n_nodes, n_edges)?;
    trace("insert", p.t0);
    progress.check()?;
    tx.commit()?;
    if !p.fresh {
        store::shrink_wal(conn, p.db_path, p.opts.wal_truncate_bytes);
    }
    trace("commit", p.t0);
    Ok(())
}
