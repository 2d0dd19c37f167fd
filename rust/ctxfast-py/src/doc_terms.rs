//! `DocTerms`: documents tokenised once, BM25 indexes assembled over selections of them.

use crate::bm25::{PyBm25Index, SymbolsIn};
use crate::gil::detached;
use ctxfast_core::bm25::Bm25Params;
use ctxfast_core::doc_terms::DocTerms;
use pyo3::prelude::*;
use std::sync::{Mutex, PoisonError};

/// The store behind a lock: documents are added and indexes assembled with the GIL
/// released, so two threads may use one store at once.
#[pyclass(frozen, name = "DocTerms", module = "ctxfast._native")]
pub struct PyDocTerms {
    inner: Mutex<DocTerms>,
}

impl PyDocTerms {
    /// The store; a panic while it was held left at most unused terms behind (documents
    /// are appended last), so a poisoned lock is taken over as is.
    fn store(&self) -> std::sync::MutexGuard<'_, DocTerms> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[pymethods]
impl PyDocTerms {
    #[new]
    fn new() -> Self {
        PyDocTerms {
            inner: Mutex::new(DocTerms::new()),
        }
    }

    /// Tokenises and stores `texts`; their document ids, in order.
    fn add(&self, py: Python<'_>, texts: Vec<String>) -> PyResult<Vec<u32>> {
        detached(py, move || self.store().add(texts))
    }

    /// The BM25 index over the stored documents `ids`, in that order.
    #[pyo3(signature = (ids, k1 = 1.5, b = 0.75, symbol_weight = 3.0, symbols = None))]
    fn index(
        &self,
        py: Python<'_>,
        ids: Vec<u32>,
        k1: f64,
        b: f64,
        symbol_weight: f64,
        symbols: Option<SymbolsIn>,
    ) -> PyResult<PyBm25Index> {
        let params = Bm25Params {
            k1,
            b,
            symbol_weight,
        };
        let symbols = symbols.map(SymbolsIn::split).unwrap_or_default();
        let index = detached(py, move || {
            self.store()
                .index(&ids, params, SymbolsIn::resolve(symbols))
        })?;
        Ok(PyBm25Index::from_index(index))
    }

    fn __len__(&self) -> usize {
        self.store().len()
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyDocTerms>()?;
    Ok(())
}
