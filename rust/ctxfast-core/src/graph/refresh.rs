//! The refresh path of one run ([`super::index_run`] on an index that already has a graph):
//! parse the files whose content moved, resolve the files that can see a change, and write
//! the difference in one transaction.

use super::parse::{self, Assembled, ChangedFile};
use super::plan::{self, FileStat, Inventory, Previous};
use super::progress::{Progress, Stage};
use super::resolve::{Context, FileData, Resolved, Resolver, Symbols};
use super::write::{self, GraphDelta, RunRecord};
use super::{
    cache, close_run, discover, finish, interfaces_left, rust_files, store, trace, ForNextRun,
    IndexStats, Planned, RunCounts,
};
use crate::error::CoreResult;
use rayon::prelude::*;
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
        mut files, changed, ..
    } = assembled;
    let changed_set: HashSet<usize> = changed_ix.iter().copied().collect();
    parse::load_full_extractions(&conn, p.root, &mut files, &to_resolve, &changed_set, p.opts)?;

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
