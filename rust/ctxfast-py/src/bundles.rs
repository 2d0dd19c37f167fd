//! The bundle scan binding (see `ctxfast_core::bundles`).

use crate::gil::detached;
use ctxfast_core::bundles::{held_counts, BundleRules};
use pyo3::prelude::*;

/// For each text, how many of the other texts it holds nearly whole, computed in parallel
/// with the GIL released.
#[pyfunction]
#[pyo3(signature = (texts, min_chars = 16, max_files = 8, min_distinctive = 20, held_share = 0.8))]
fn bundled_counts(
    py: Python<'_>,
    texts: Vec<String>,
    min_chars: usize,
    max_files: usize,
    min_distinctive: usize,
    held_share: f64,
) -> PyResult<Vec<u32>> {
    let rules = BundleRules {
        min_chars,
        max_files,
        min_distinctive,
        held_share,
    };
    detached(py, move || Ok(held_counts(&texts, rules)))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(bundled_counts, m)?)?;
    Ok(())
}
