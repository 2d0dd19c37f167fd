//! The bundle scan binding (see `ctxfast_core::bundles`).

use crate::gil::detached;
use ctxfast_core::bundles::{BundleRules, LineSets};
use pyo3::prelude::*;
use pyo3::types::PyBytes;

/// Each text's distinct line hashes (`ctxfast_core::bundles::LineSets`): the bundle scan's
/// input, kept so that a refresh hashes only the files it changed.
#[pyclass(frozen, name = "LineSets", module = "ctxfast._native")]
pub struct PyLineSets {
    inner: LineSets,
}

#[pymethods]
impl PyLineSets {
    #[new]
    #[pyo3(signature = (texts, min_chars = 16))]
    fn new(py: Python<'_>, texts: Vec<String>, min_chars: usize) -> PyResult<Self> {
        let inner = detached(py, move || Ok(LineSets::of_texts(&texts, min_chars)))?;
        Ok(PyLineSets { inner })
    }

    /// The sets of a new list of texts: text `i` is this one's `keep[i]` when not `None`,
    /// else the next of `new_texts`.
    fn spliced(
        &self,
        py: Python<'_>,
        keep: Vec<Option<u32>>,
        new_texts: Vec<String>,
    ) -> PyResult<Self> {
        let old = &self.inner;
        let inner = detached(py, move || old.spliced(&keep, &new_texts))?;
        Ok(PyLineSets { inner })
    }

    /// For each text, how many of the other texts it holds nearly whole.
    #[pyo3(signature = (max_files = 8, min_distinctive = 20, held_share = 0.8))]
    fn held_counts(
        &self,
        py: Python<'_>,
        max_files: usize,
        min_distinctive: usize,
        held_share: f64,
    ) -> PyResult<Vec<u32>> {
        let rules = BundleRules {
            min_chars: self.inner.min_chars(),
            max_files,
            min_distinctive,
            held_share,
        };
        let sets = &self.inner;
        detached(py, move || Ok(sets.held_counts(rules)))
    }

    fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let sets = &self.inner;
        let bytes = detached(py, move || Ok(sets.to_bytes()))?;
        Ok(PyBytes::new(py, &bytes))
    }

    #[staticmethod]
    fn from_bytes(py: Python<'_>, data: &[u8]) -> PyResult<Self> {
        let inner = detached(py, move || LineSets::from_bytes(data))?;
        Ok(PyLineSets { inner })
    }

    fn __len__(&self) -> usize {
        self.inner.len()
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyLineSets>()?;
    Ok(())
}
