//! Personalised PageRank binding: `Transitions` (a frozen pyclass over
//! `ctxfast_core::pagerank::Transitions`), so the repo map ranks files without numpy.

use crate::gil::detached;
use ctxfast_core::pagerank::{Params, Transitions};
use pyo3::prelude::*;
use std::sync::Arc;

/// A file graph's normalised edge weights, built once and ranked under many
/// personalisations; shared (not copied) into GIL-free closures.
#[pyclass(frozen, name = "Transitions", module = "ctxfast._native")]
pub struct PyTransitions {
    inner: Arc<Transitions>,
}

#[pymethods]
impl PyTransitions {
    #[new]
    fn new(py: Python<'_>, n: usize, edges: Vec<(usize, usize, f64)>) -> PyResult<Self> {
        let inner = detached(py, move || Transitions::new(n, &edges))?;
        Ok(PyTransitions {
            inner: Arc::new(inner),
        })
    }

    /// Scores summing to 1 (empty for an empty graph); `personalization` lists
    /// `(node, weight)` pairs, an empty list weighting every node alike.
    #[pyo3(signature = (personalization, damping = 0.85, tol = 1e-10, max_iter = 200))]
    fn pagerank(
        &self,
        py: Python<'_>,
        personalization: Vec<(usize, f64)>,
        damping: f64,
        tol: f64,
        max_iter: usize,
    ) -> PyResult<Vec<f64>> {
        let t = Arc::clone(&self.inner);
        let params = Params {
            damping,
            tol,
            max_iter,
        };
        detached(py, move || Ok(t.pagerank(&personalization, &params)))
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyTransitions>()?;
    Ok(())
}
