//! Starting a new index from the index of a similar tree (typically the next version of the
//! same repository, as when a benchmark indexes many checkouts of one project).
//!
//! With the parse cache a second version parses almost nothing, but a cold build still
//! resolves every file and loads every row into SQLite. Versions of one repository share
//! most files, and a file's rows depend only on its own key (`sha256(bytes + path)`) unless
//! something it can see changed — which is exactly what the incremental refresh decides. So
//! a new index is seeded: the seed's `recon.db` is copied into place (SQLite's backup API, a
//! consistent snapshot even while its owner refreshes it) and the ordinary refresh runs over
//! the new tree, re-parsing, re-resolving and re-writing only what differs, and dropping the
//! seed's files this tree does not have.
//!
//! The seed's `file_stat` rows describe the *other* tree's files: a file of the same size
//! and mtime there may hold other bytes here. The copy drops them (and the run start they
//! were taken against), so the refresh reads and hashes every file and keeps only those
//! whose key matches. Nothing of the seed tree's location survives either: the index stores
//! relative paths only, skipped files' rows are rewritten by every run, and the resolution
//! context (`go.mod`, `Cargo.toml`) is compared with the one the seed recorded
//! ([`super::resolve::Context`]).
//!
//! Seeding is fail-soft: a seed that is missing, damaged, of another schema, not stamped by
//! this user's ctxfast ([`owner`]: it may be a hostile tree's shipped index), or shares too
//! little with the tree is passed over with the reason in [`SeedReport::note`], and the
//! build runs cold as it would have without one.

use super::discover::{self, Found};
use super::owner;
use super::parse::sha_key;
use super::store;
use crate::error::{CoreError, CoreResult};
use rusqlite::{Connection, OpenFlags, OptionalExtension};
use std::path::{Path, PathBuf};

/// The new tree's files a candidate is scored on: at most this many, spread evenly over the
/// sorted paths (reading a few hundred files and one indexed lookup each per candidate keeps
/// the choice cheap beside the build it saves).
pub const SAMPLE_FILES: usize = 256;

/// A seed is used only when at least this share of the sampled files are unchanged in it:
/// below that, the refresh would re-parse and re-write most of the tree through the
/// incremental path, which costs more than the streamed cold build.
pub const MIN_SHARED: f64 = 0.5;

/// [`MIN_SHARED`] when the run has a parse cache: the cold build then parses no more than
/// the seeded refresh does (the files the seed lacks are the ones no cache has seen either),
/// and its streamed load beats the refresh's row-by-row rewrite once many files differ.
/// Measured on sympy (`benches/bench_seeded_index.py`): with 99% of the files shared the
/// seeded build took a third of the cached cold build's CPU, with 71% shared about 1.15
/// times it.
pub const MIN_SHARED_CACHED: f64 = 0.8;

/// What seeding did in one run.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SeedReport {
    /// The seed database the index started from (`None`: built without one).
    pub used: Option<String>,
    /// Why no seed was used, or why a seeded run was redone cold.
    pub note: Option<String>,
}

/// What [`plant`] did: the report, and the private copy to refresh when a seed was chosen.
pub struct Planted {
    pub report: SeedReport,
    /// A side file of `db_path` ([`store::build_path`]) holding the seed's copy.
    pub copy: Option<PathBuf>,
}

impl Planted {
    fn passed_over(note: String) -> Planted {
        Planted {
            report: SeedReport {
                used: None,
                note: Some(note),
            },
            copy: None,
        }
    }
}

/// True when `db_path` is for seeding: it does not exist yet, or it holds an index of
/// another schema (which the run would rebuild from scratch anyway).
pub fn wanted(db_path: &Path) -> bool {
    if !db_path.exists() {
        return true;
    }
    stored_version(db_path).is_some_and(|v| v != store::index_version())
}

/// Copies the best of `seeds` into a side file of `db_path`, ready for a refresh of `root`
/// that renames it into place, if it shares at least `min_shared` of the sampled files
/// ([`MIN_SHARED`], [`MIN_SHARED_CACHED`]); on any failure nothing is left behind and the
/// note says why.
pub fn plant(root: &Path, db_path: &Path, opts: &super::IndexOptions, min_shared: f64) -> Planted {
    let (seeds, max_file_bytes) = (&opts.seeds, opts.max_file_bytes);
    let found = discover::discover(root, max_file_bytes);
    let sample = sample(&found, max_file_bytes);
    if sample.is_empty() {
        return Planted::passed_over("no file of the tree to compare with a seed".into());
    }
    let mut notes = vec![];
    let mut best: Option<(&PathBuf, usize)> = None;
    for seed in seeds {
        if same_file(seed, db_path) {
            continue;
        }
        let scored = match opts
            .owner_key
            .as_deref()
            .and_then(|k| owner::foreign(seed, k))
        {
            Some(why) => Err(format!("not written by this user's ctxfast ({why})")),
            None => score(seed, &sample),
        };
        match scored {
            Ok(n) if best.is_none_or(|(_, b)| n > b) => best = Some((seed, n)),
            Ok(_) => {}
            Err(why) => notes.push(format!("{}: {why}", seed.display())),
        }
    }
    let Some((seed, shared)) = best else {
        return Planted::passed_over(format!("no usable seed ({})", notes.join("; ")));
    };
    if (shared as f64) < min_shared * sample.len() as f64 {
        return Planted::passed_over(format!(
            "{} shares {shared} of {} sampled files (under {:.0}%); built cold",
            seed.display(),
            sample.len(),
            min_shared * 100.0
        ));
    }
    match copy(seed, db_path) {
        Ok(side) => Planted {
            report: SeedReport {
                used: Some(seed.display().to_string()),
                note: None,
            },
            copy: Some(side),
        },
        Err(e) => Planted::passed_over(format!("{}: {e}; built cold", seed.display())),
    }
}

/// The sampled files of the tree, each with its content key: the files that get a graph
/// (a language, not skipped), evenly spaced over the sorted paths; unreadable ones left out.
fn sample(found: &[Found], max_file_bytes: u64) -> Vec<(&str, String)> {
    let indexable: Vec<&Found> = found
        .iter()
        .filter(|f| f.lang.is_some() && f.skip.is_none())
        .collect();
    let step = indexable.len().div_ceil(SAMPLE_FILES).max(1);
    indexable
        .into_iter()
        .step_by(step)
        .filter_map(|f| {
            let bytes = discover::read_regular(&f.abs, max_file_bytes).ok()?;
            Some((f.rel.as_str(), sha_key(&bytes, &f.rel)))
        })
        .collect()
}

/// How many of `sample` the index at `seed` holds with the same key.
fn score(seed: &Path, sample: &[(&str, String)]) -> Result<usize, String> {
    if !seed.is_file() {
        return Err("no index there".into());
    }
    let conn = open_read_only(seed).map_err(|e| e.to_string())?;
    check_version(&conn)?;
    let mut st = conn
        .prepare("SELECT sha256 FROM files WHERE path = ?1")
        .map_err(|e| e.to_string())?;
    let mut shared = 0;
    for (rel, key) in sample {
        let stored: Option<Option<String>> = st
            .query_row([rel], |r| r.get(0))
            .optional()
            .map_err(|e| e.to_string())?;
        shared += usize::from(stored.flatten().as_deref() == Some(key.as_str()));
    }
    Ok(shared)
}

/// Copies the index at `seed` into a new side file of `db_path` (returned), with what belongs
/// to the seed's tree rather than its graph dropped: the file stats and the run start.
fn copy(seed: &Path, db_path: &Path) -> CoreResult<PathBuf> {
    if let Some(why) = store::damage(seed) {
        return Err(CoreError::Corrupt(format!("seed index is damaged ({why})")));
    }
    // A build side file: a copy interrupted midway is removed like a killed cold build's.
    let side = store::build_path(db_path);
    let made = (|| -> CoreResult<()> {
        let src = open_read_only(seed)?;
        let mut dst = store::open_private(&side)?;
        backup_all(&src, &mut dst)?;
        drop(src);
        // Checked on the copy too: the seed may have been rebuilt since it was scored.
        check_version(&dst).map_err(CoreError::Corrupt)?;
        dst.execute_batch("DELETE FROM file_stat; DELETE FROM meta WHERE key = 'run_start_ns';")?;
        Ok(())
    })();
    match made {
        Ok(()) => Ok(side),
        Err(e) => {
            let _ = std::fs::remove_file(&side);
            Err(e)
        }
    }
}

/// Copies every page of `src` into `dst` in one step (a consistent snapshot of the seed),
/// retrying while the seed is locked, for at most [`store::DEFAULT_LOCK_WAIT`].
fn backup_all(src: &Connection, dst: &mut Connection) -> CoreResult<()> {
    use rusqlite::backup::{Backup, StepResult};
    let deadline = std::time::Instant::now() + store::DEFAULT_LOCK_WAIT;
    let b = Backup::new(src, dst)?;
    loop {
        match b.step(-1)? {
            StepResult::Done => return Ok(()),
            _ if std::time::Instant::now() >= deadline => {
                return Err(CoreError::InvalidArgument(
                    "the seed index stayed locked".into(),
                ))
            }
            _ => std::thread::sleep(std::time::Duration::from_millis(10)),
        }
    }
}

fn open_read_only(path: &Path) -> rusqlite::Result<Connection> {
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    conn.busy_timeout(std::time::Duration::from_secs(10))?;
    Ok(conn)
}

/// `Err` naming both versions unless the index behind `conn` is of this build's schema.
fn check_version(conn: &Connection) -> Result<(), String> {
    let want = store::index_version();
    match stamped_version(conn).map_err(|e| e.to_string())? {
        Some(v) if v == want => Ok(()),
        v => Err(format!(
            "index of schema {}, this build writes {want}",
            v.as_deref().unwrap_or("none")
        )),
    }
}

/// `meta.schema_version` of the database at `db_path`, if it can be read.
fn stored_version(db_path: &Path) -> Option<String> {
    stamped_version(&open_read_only(db_path).ok()?)
        .ok()
        .flatten()
}

fn stamped_version(conn: &Connection) -> rusqlite::Result<Option<String>> {
    conn.query_row(
        "SELECT value FROM meta WHERE key = 'schema_version'",
        [],
        |r| r.get(0),
    )
    .optional()
}

fn same_file(a: &Path, b: &Path) -> bool {
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}
