//! Process-level cache of what an index run leaves behind for the next: the recorded keys
//! and stats of every file, the interface summaries and the symbol table.
//!
//! A refresh resolves against every file's interface; reading and decoding those blobs from
//! `recon.db` is the largest fixed cost of a small refresh, and building the symbol table
//! over them the next one (seconds at 100k files); even a no-op refresh read every file's
//! key and stat row. An agent loop refreshes the same index
//! from the same process before every decision, so the last run keeps both in memory, tagged
//! with the `run_start_ns` it wrote to `meta`. The next run uses them only if the database
//! still carries that tag — any other writer (another process, a rebuild) writes its own —
//! and otherwise reads the tables and builds the symbol table as before. A run takes the entry out
//! before it starts, so a run that fails leaves nothing stale behind.

use super::plan::Previous;
use super::raw::RawFile;
use super::resolve::Symbols;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{LazyLock, Mutex};

/// Each file's interface by path.
pub type Ifaces = rustc_hash::FxHashMap<String, RawFile>;

/// What one run left, each part taken by the next run as it needs it.
struct Left {
    tag: i64,
    previous: Option<Previous>,
    ifaces: Option<Ifaces>,
    symbols: Option<Symbols>,
}

static CACHE: LazyLock<Mutex<HashMap<PathBuf, Left>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));

fn key(db_path: &Path) -> PathBuf {
    std::fs::canonicalize(db_path).unwrap_or_else(|_| db_path.to_path_buf())
}

/// Takes one part of what the run that wrote `tag` left for `db_path`; an entry of another
/// tag is stale and dropped.
fn take_part<T>(db_path: &Path, tag: i64, part: impl FnOnce(&mut Left) -> Option<T>) -> Option<T> {
    let mut c = CACHE
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let k = key(db_path);
    match c.get_mut(&k) {
        Some(e) if e.tag == tag => part(e),
        Some(_) => {
            c.remove(&k);
            None
        }
        None => None,
    }
}

/// What `files` and `file_stat` hold, cached for `db_path` by the run that wrote `tag`.
pub fn take_previous(db_path: &Path, tag: i64) -> Option<Previous> {
    take_part(db_path, tag, |e| e.previous.take())
}

/// The interfaces cached for `db_path`, if they were left by the run that wrote `tag`.
pub fn take(db_path: &Path, tag: i64) -> Option<Ifaces> {
    take_part(db_path, tag, |e| e.ifaces.take())
}

/// The symbol table cached for `db_path`, if it was left by the run that wrote `tag`.
pub fn take_symbols(db_path: &Path, tag: i64) -> Option<Symbols> {
    take_part(db_path, tag, |e| e.symbols.take())
}

/// Records what a run committed under `tag` left.
pub fn put(db_path: &Path, tag: i64, previous: Previous, ifaces: Ifaces, symbols: Symbols) {
    let mut c = CACHE
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let left = Left {
        tag,
        previous: Some(previous),
        ifaces: Some(ifaces),
        symbols: Some(symbols),
    };
    c.insert(key(db_path), left);
}

/// A run that changed no interface (a no-op refresh) keeps the interfaces and the symbol
/// table the entry holds for `from` (if it does), under its own tag `to`, with its
/// `previous`.
pub fn retag(db_path: &Path, from: i64, to: i64, previous: Previous) {
    let mut c = CACHE
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let e = c.entry(key(db_path)).or_insert(Left {
        tag: from,
        previous: None,
        ifaces: None,
        symbols: None,
    });
    if e.tag != from {
        e.ifaces = None;
        e.symbols = None;
    }
    e.tag = to;
    e.previous = Some(previous);
}
