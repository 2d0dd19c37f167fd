//! `ctxfast._native`: the thin PyO3 binding over `ctxfast-core`.
//!
//! Two rules keep this crate thin and safe:
//! * errors cross the boundary in one place ([`errors::to_py`]), never as panics;
//! * every hot entry converts its Python inputs to owned Rust values and then runs the core
//!   through [`gil::detached`], which releases the GIL and turns a panic into a Python
//!   exception instead of aborting the interpreter.

use pyo3::prelude::*;

mod alloc;
mod bm25;
mod bundles;
mod deftable;
mod doc_terms;
mod errors;
mod gil;
mod graph;
mod graph_read;
mod identity;
mod lexical;
mod literals;
mod pagerank;
mod tokens;
mod window;

/// The environment variable that caps the native thread pool (rayon, used by indexing,
/// BM25 and the scans); unset or invalid, every core is used.
const THREADS_ENV: &str = "CTXFAST_THREADS";

/// Sizes rayon's global pool from `CTXFAST_THREADS` before anything starts it, so a host
/// running several ctxfast processes (or its own pools) can keep ctxfast to its share.
fn cap_threads() -> Option<usize> {
    let n: usize = std::env::var(THREADS_ENV).ok()?.trim().parse().ok()?;
    if n == 0 {
        return None;
    }
    // Fails only if the pool already exists (another embedder set it): keep that one.
    rayon::ThreadPoolBuilder::new()
        .num_threads(n)
        .build_global()
        .ok()?;
    Some(n)
}

/// The size of rayon's pool, for tests and diagnostics (`CTXFAST_THREADS` applied).
#[pyfunction]
fn native_threads() -> usize {
    rayon::current_num_threads()
}

/// The core's messages since the last call, oldest first, as `(level, message)`; the
/// Python side hands them to the `ctxfast` logger.
#[pyfunction]
fn drain_log() -> Vec<(&'static str, String)> {
    ctxfast_core::log::drain()
        .into_iter()
        .map(|(level, msg)| (level.as_str(), msg))
        .collect()
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    alloc::install_tree_sitter();
    cap_threads();
    m.add_function(wrap_pyfunction!(native_threads, m)?)?;
    m.add_function(wrap_pyfunction!(drain_log, m)?)?;
    errors::register(m)?;
    tokens::register(m)?;
    window::register(m)?;
    graph::register(m)?;
    graph_read::register(m)?;
    bm25::register(m)?;
    bundles::register(m)?;
    deftable::register(m)?;
    doc_terms::register(m)?;
    lexical::register(m)?;
    literals::register(m)?;
    identity::register(m)?;
    pagerank::register(m)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
