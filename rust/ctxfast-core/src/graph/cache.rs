//! Process-level cache of what an index run leaves behind for the next: the interface
//! summaries and the symbol table.
//!
//! A refresh resolves against every file's interface; reading and decoding those blobs from
//! `recon.db` is the largest fixed cost of a small refresh, and building the symbol table
//! over them the next one (seconds at 100k files). An agent loop refreshes the same index
//! from the same process before every decision, so the last run keeps both in memory, tagged
//! with the `run_start_ns` it wrote to `meta`. The next run uses them only if the database
//! still carries that tag — any other writer (another process, a rebuild) writes its own —
//! and otherwise reads the blobs and builds the table as before. A run takes the entry out
//! before it starts, so a run that fails leaves nothing stale behind.

use super::raw::RawFile;
use super::resolve::Symbols;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{LazyLock, Mutex};

/// Each file's interface by path.
pub type Ifaces = rustc_hash::FxHashMap<String, RawFile>;

/// What one run left: (tag, interfaces, symbol table).
struct Left {
    tag: i64,
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
    let mut c = CACHE.lock().unwrap_or_else(|p| p.into_inner());
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

/// The interfaces cached for `db_path`, if they were left by the run that wrote `tag`.
pub fn take(db_path: &Path, tag: i64) -> Option<Ifaces> {
    take_part(db_path, tag, |e| e.ifaces.take())
}

/// The symbol table cached for `db_path`, if it was left by the run that wrote `tag`.
pub fn take_symbols(db_path: &Path, tag: i64) -> Option<Symbols> {
    take_part(db_path, tag, |e| e.symbols.take())
}

/// Records the interfaces and the symbol table of a run committed under `tag`.
pub fn put(db_path: &Path, tag: i64, ifaces: Ifaces, symbols: Symbols) {
    let mut c = CACHE.lock().unwrap_or_else(|p| p.into_inner());
    let left = Left {
        tag,
        ifaces: Some(ifaces),
        symbols: Some(symbols),
    };
    c.insert(key(db_path), left);
}

/// A run that changed no interface (a no-op refresh) moves the entry to its own tag.
pub fn retag(db_path: &Path, from: i64, to: i64) {
    let mut c = CACHE.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(e) = c.get_mut(&key(db_path)) {
        if e.tag == from {
            e.tag = to;
        }
    }
}
