//! Content-identity bindings: the batch dedup key of context construction.

use crate::gil::detached;
use ctxfast_core::identity;
use pyo3::prelude::*;

/// 128-bit hex identities of the normalised texts, computed in parallel with the GIL released.
#[pyfunction]
fn content_identity(py: Python<'_>, texts: Vec<String>) -> PyResult<Vec<String>> {
    detached(py, move || Ok(identity::content_identity_batch(&texts)))
}

/// The canonical form the identity is computed on (for audit and for the reference test).
#[pyfunction]
fn normalise_for_identity(py: Python<'_>, text: String) -> PyResult<String> {
    detached(py, move || Ok(identity::normalise(&text)))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(content_identity, m)?)?;
    m.add_function(wrap_pyfunction!(normalise_for_identity, m)?)?;
    Ok(())
}
