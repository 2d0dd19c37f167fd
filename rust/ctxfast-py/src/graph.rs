//! Code-graph bindings: building/refreshing `recon.db` runs entirely in Rust with the GIL
//! released; Python reads the database through [`crate::graph_read`], on the same SQLite.

use crate::gil::detached;
use ctxfast_core::graph::{self, parse_cache::ParseCacheOptions, progress::Progress, IndexOptions};
use pyo3::prelude::*;
use std::path::PathBuf;
use std::sync::Arc;

/// Progress counters of an `index_graph` run; poll them from another Python thread while
/// the run (which has released the GIL) is going.
#[pyclass(frozen, module = "ctxfast._native")]
pub struct IndexProgress {
    inner: Arc<Progress>,
}

#[pymethods]
impl IndexProgress {
    #[new]
    fn new() -> Self {
        IndexProgress {
            inner: Arc::new(Progress::new()),
        }
    }

    /// `(stage, files_done, files_total)`; stage is one of discover, parse, resolve, write,
    /// done.
    fn snapshot(&self) -> (&'static str, usize, usize) {
        let (stage, done, total) = self.inner.snapshot();
        (stage.as_str(), done, total)
    }

    /// `(path, sha256, language)` of every file a cold build records with a content key,
    /// sorted by path, once every file's rows are written (before the run's last second of
    /// sorting and indexing); `None` before that and for a refresh.
    fn content_rows(&self) -> Option<Vec<(String, String, String)>> {
        self.inner.content_rows().map(<[_]>::to_vec)
    }

    /// Asks the run to stop between two files; `index_graph` then raises
    /// `KeyboardInterrupt` and the index is left as it was.
    fn cancel(&self) {
        self.inner.cancel();
    }
}

type StatsTuple = (
    usize,
    usize,
    usize,
    usize,
    usize,
    f64,
    Vec<(String, String)>,
    usize,
    usize,
    Option<String>,
    Option<String>,
);

/// Builds or refreshes the graph of `root` into `db_path`; returns
/// `(files_seen, files_parsed, files_removed, nodes, edges, seconds, errors,
/// files_resolved, cache_hits, seeded_from, seed_note)`. `parse_cache_dir` turns on the
/// shared parse cache there (`parse_cache_max_bytes` bounds it; the core's default
/// otherwise). `seeds` are `recon.db` paths of similar trees' indexes: a new index starts
/// from the one sharing the most files (`seeded_from`), or `seed_note` says why none did.
/// `owner_key` is the user's secret key: an index or seed not stamped under it is rebuilt or
/// passed over, and the index written is stamped.
#[pyfunction]
#[pyo3(signature = (
    root, db_path, max_file_bytes = 1_000_000, progress = None, parse_cache_dir = None,
    parse_cache_max_bytes = None, seeds = None, owner_key = None
))]
#[allow(clippy::too_many_arguments)]
fn index_graph(
    py: Python<'_>,
    root: PathBuf,
    db_path: PathBuf,
    max_file_bytes: u64,
    progress: Option<&IndexProgress>,
    parse_cache_dir: Option<PathBuf>,
    parse_cache_max_bytes: Option<u64>,
    seeds: Option<Vec<PathBuf>>,
    owner_key: Option<Vec<u8>>,
) -> PyResult<StatsTuple> {
    let parse_cache = parse_cache_dir.map(|dir| {
        let mut o = ParseCacheOptions::new(dir);
        if let Some(m) = parse_cache_max_bytes {
            o.max_bytes = m;
        }
        o
    });
    let opts = IndexOptions {
        max_file_bytes,
        progress: progress.map(|p| p.inner.clone()),
        parse_cache,
        seeds: seeds.unwrap_or_default(),
        owner_key,
        ..IndexOptions::default()
    };
    detached(py, move || {
        let s = graph::index(&root, &db_path, &opts)?;
        Ok((
            s.files_seen,
            s.files_parsed,
            s.files_removed,
            s.nodes,
            s.edges,
            s.seconds,
            s.errors,
            s.files_resolved,
            s.cache_hits,
            s.seed.used,
            s.seed.note,
        ))
    })
}

/// The integer key `recon.db` stores the node with text id `id` under (edges, `defs_meta`
/// and `unresolved` refer to nodes by it).
#[pyfunction]
fn node_key(id: &str) -> i64 {
    graph::store::node_key(id)
}

/// The owner tag of an index with `nonce` at `db_path` under `key` (hex HMAC-SHA256): what
/// `meta.owner_tag` holds when this user's ctxfast wrote the index. One rule for the core's
/// check and Python's (readers, `api.db`).
#[pyfunction]
#[allow(clippy::needless_pass_by_value)] // pyo3 extracts a path argument only as an owned `PathBuf`
fn index_owner_tag(key: &[u8], nonce: &str, db_path: PathBuf) -> String {
    graph::owner::tag(key, nonce, &db_path)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<IndexProgress>()?;
    m.add_function(wrap_pyfunction!(index_owner_tag, m)?)?;
    m.add_function(wrap_pyfunction!(index_graph, m)?)?;
    m.add_function(wrap_pyfunction!(node_key, m)?)?;
    // The version `recon.db` is stamped with; Python readers refuse any other.
    m.add("GRAPH_SCHEMA_VERSION", graph::store::index_version())?;
    m.add("GRAPH_TEXT_ID_VIEWS", graph::store::TEXT_ID_VIEWS)?;
    // The `files.parse_error` of a file skipped as machine-made (minified, generated).
    m.add("GRAPH_MACHINE_MADE", graph::discover::MACHINE_MADE.to_vec())?;
    Ok(())
}
