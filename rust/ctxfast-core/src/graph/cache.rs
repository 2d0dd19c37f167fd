//! Process-level cache of the interface summaries an index run leaves behind.
//!
//! A refresh resolves against every file's interface; reading and decoding those blobs from
//! `recon.db` is the largest fixed cost of a small refresh. An agent loop refreshes the same
//! index from the same process before every decision, so the last run keeps them in memory,
//! tagged with the `run_start_ns` it wrote to `meta`. The next run uses them only if the
//! database still carries that tag — any other writer (another process, a rebuild) writes its
//! own — and otherwise reads the blobs as before. A run takes the entry out before it starts,
//! so a run that fails leaves nothing stale behind.

use super::raw::RawFile;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{LazyLock, Mutex};

type Ifaces = HashMap<String, RawFile>;

static CACHE: LazyLock<Mutex<HashMap<PathBuf, (i64, Ifaces)>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));

fn key(db_path: &Path) -> PathBuf {
    std::fs::canonicalize(db_path).unwrap_or_else(|_| db_path.to_path_buf())
}

/// The interfaces cached for `db_path`, if they were left by the run that wrote `tag`.
pub fn take(db_path: &Path, tag: i64) -> Option<Ifaces> {
    let mut c = CACHE.lock().unwrap_or_else(|p| p.into_inner());
    match c.remove(&key(db_path)) {
        Some((t, ifaces)) if t == tag => Some(ifaces),
        _ => None,
    }
}

/// Records the interfaces a run committed under `tag`.
pub fn put(db_path: &Path, tag: i64, ifaces: Ifaces) {
    let mut c = CACHE.lock().unwrap_or_else(|p| p.into_inner());
    c.insert(key(db_path), (tag, ifaces));
}

/// A run that changed no interface (a no-op refresh) moves the entry to its own tag.
pub fn retag(db_path: &Path, from: i64, to: i64) {
    let mut c = CACHE.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(e) = c.get_mut(&key(db_path)) {
        if e.0 == from {
            e.0 = to;
        }
    }
}
