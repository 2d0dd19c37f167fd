//! Line-window selection binding (see `ctxfast_core::window`).

use crate::gil::detached;
use ctxfast_core::window;
use pyo3::prelude::*;

#[pyfunction]
#[pyo3(signature = (line_tokens, line_scores, budget, max_windows = 3, context = 3))]
fn best_windows(
    py: Python<'_>,
    line_tokens: Vec<u32>,
    line_scores: Vec<f64>,
    budget: u64,
    max_windows: usize,
    context: usize,
) -> PyResult<Vec<(usize, usize)>> {
    detached(py, move || {
        window::best_windows(&line_tokens, &line_scores, budget, max_windows, context)
    })
}

#[pyfunction]
#[pyo3(signature = (line_scores, window, k = 1))]
#[allow(clippy::needless_pass_by_value)] // pyo3 extracts a list argument only as an owned `Vec`
fn best_fixed_windows(line_scores: Vec<u64>, window: usize, k: usize) -> Vec<(usize, usize, u64)> {
    window::best_fixed_windows(&line_scores, window, k)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(best_windows, m)?)?;
    m.add_function(wrap_pyfunction!(best_fixed_windows, m)?)?;
    Ok(())
}
