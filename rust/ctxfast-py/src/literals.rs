//! String-literal fragment and name bindings (see `ctxfast_core::literals`).

use crate::gil::detached;
use ctxfast_core::literals;
use pyo3::prelude::*;

/// `(text index, 1-based line, fragment)` for every kept fragment of every text, scanned in
/// parallel with the GIL released.
#[pyfunction]
#[pyo3(signature = (texts, min_chars = 12))]
fn literal_fragments(
    py: Python<'_>,
    texts: Vec<String>,
    min_chars: usize,
) -> PyResult<Vec<(usize, u32, String)>> {
    detached(py, move || {
        Ok(literals::literal_fragments(&texts, min_chars))
    })
}

/// `(text index, name)` for every distinct one-token literal of every text (see
/// `ctxfast_core::literals::literal_names`), scanned in parallel with the GIL released.
#[pyfunction]
#[pyo3(signature = (texts, max_chars = 40))]
fn literal_names(
    py: Python<'_>,
    texts: Vec<String>,
    max_chars: usize,
) -> PyResult<Vec<(usize, String)>> {
    detached(py, move || Ok(literals::literal_names(&texts, max_chars)))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(literal_fragments, m)?)?;
    m.add_function(wrap_pyfunction!(literal_names, m)?)?;
    Ok(())
}
