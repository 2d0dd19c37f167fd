//! String-literal fragment binding (see `ctxfast_core::literals`).

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

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(literal_fragments, m)?)?;
    Ok(())
}
