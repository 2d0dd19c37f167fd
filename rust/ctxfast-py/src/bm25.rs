//! BM25 + code tokenizer bindings: `BM25Index` and `SymbolSet` (frozen pyclasses) and
//! `tokenize_code`.

use crate::gil::detached;
use ctxfast_core::bm25::{Bm25Index, Bm25Params, Doc, Query, SymbolSet};
use ctxfast_core::codetok;
use pyo3::prelude::*;
use pyo3::pybacked::PyBackedStr;
use pyo3::types::PyBytes;
use std::sync::Arc;

/// A document or query from Python: a `str` (tokenised by the code tokenizer) or a list of
/// tokens used verbatim. `str` is tried first, so a string is never read as a sequence.
#[derive(FromPyObject)]
enum TextOrTokens {
    Text(String),
    Tokens(Vec<String>),
}

/// A document from Python. Tokens are borrowed Python strings (no copy per token: token
/// extraction dominated index build time); they are dropped after the GIL is re-acquired.
#[derive(FromPyObject)]
enum DocIn {
    Text(String),
    Tokens(Vec<PyBackedStr>),
}

impl DocIn {
    fn into_doc(self) -> Doc<PyBackedStr> {
        match self {
            DocIn::Text(t) => Doc::Text(t),
            DocIn::Tokens(t) => Doc::Tokens(t),
        }
    }
}

impl TextOrTokens {
    fn into_query(self) -> Query {
        match self {
            TextOrTokens::Text(t) => Query::Text(t),
            TextOrTokens::Tokens(t) => Query::Tokens(t),
        }
    }
}

/// A name index built once and shared by every `BM25Index` given it (no per-index copy).
#[pyclass(frozen, name = "SymbolSet", module = "ctxfast._native")]
pub struct PySymbolSet {
    inner: Arc<SymbolSet>,
}

impl PySymbolSet {
    /// A set built on the Rust side (the definition table's names).
    pub(crate) fn from_set(set: SymbolSet) -> Self {
        PySymbolSet {
            inner: Arc::new(set),
        }
    }
}

#[pymethods]
impl PySymbolSet {
    #[new]
    fn new(py: Python<'_>, names: Vec<PyBackedStr>) -> PyResult<Self> {
        let names_ref = &names;
        let inner = detached(py, move || Ok(SymbolSet::new(names_ref.iter())))?;
        drop(names);
        Ok(PySymbolSet {
            inner: Arc::new(inner),
        })
    }

    fn __len__(&self) -> usize {
        self.inner.len()
    }

    /// Membership as `w(t)` tests it: case-insensitively.
    fn __contains__(&self, name: &str) -> bool {
        self.inner.contains_lowercased(&name.to_ascii_lowercase())
    }
}

/// `symbols=` of `BM25Index`: a shared `SymbolSet` or a plain list of names.
#[derive(FromPyObject)]
pub(crate) enum SymbolsIn {
    Shared(Py<PySymbolSet>),
    Names(Vec<String>),
}

impl SymbolsIn {
    /// A shared set is taken by reference count here, under the GIL; a name list is kept
    /// to be lowercased into a fresh set by [`SymbolsIn::resolve`] with the GIL released.
    pub(crate) fn split(self) -> (Option<Arc<SymbolSet>>, Vec<String>) {
        match self {
            SymbolsIn::Shared(set) => (Some(Arc::clone(&set.get().inner)), Vec::new()),
            SymbolsIn::Names(names) => (None, names),
        }
    }

    pub(crate) fn resolve(
        (shared, names): (Option<Arc<SymbolSet>>, Vec<String>),
    ) -> Arc<SymbolSet> {
        shared.unwrap_or_else(|| Arc::new(SymbolSet::new(&names)))
    }
}

/// The immutable native index; shared (not copied) into GIL-free closures.
#[pyclass(frozen, name = "BM25Index", module = "ctxfast._native")]
pub struct PyBm25Index {
    inner: Arc<Bm25Index>,
}

impl PyBm25Index {
    /// An index assembled on the Rust side (from stored term counts).
    pub(crate) fn from_index(index: Bm25Index) -> Self {
        PyBm25Index {
            inner: Arc::new(index),
        }
    }
}

#[pymethods]
impl PyBm25Index {
    #[new]
    #[pyo3(signature = (docs, k1 = 1.5, b = 0.75, symbol_weight = 3.0, symbols = None))]
    fn new(
        py: Python<'_>,
        docs: Vec<DocIn>,
        k1: f64,
        b: f64,
        symbol_weight: f64,
        symbols: Option<SymbolsIn>,
    ) -> PyResult<Self> {
        let docs: Vec<Doc<PyBackedStr>> = docs.into_iter().map(DocIn::into_doc).collect();
        let params = Bm25Params {
            k1,
            b,
            symbol_weight,
        };
        let docs_ref = &docs;
        let symbols = symbols.map(SymbolsIn::split).unwrap_or_default();
        let inner = detached(py, move || {
            Bm25Index::build_shared(docs_ref, params, SymbolsIn::resolve(symbols))
        })?;
        drop(docs);
        Ok(PyBm25Index {
            inner: Arc::new(inner),
        })
    }

    /// The index as bytes (without its symbol set), for `from_bytes`.
    fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let ix = Arc::clone(&self.inner);
        let bytes = detached(py, move || Ok(ix.to_bytes()))?;
        Ok(PyBytes::new(py, &bytes))
    }

    /// An index saved by `to_bytes`, scoring exactly as the saved one; `symbols` is the
    /// set it was built with (a shared `SymbolSet` or names).
    #[staticmethod]
    #[pyo3(signature = (data, symbols = None))]
    fn from_bytes(py: Python<'_>, data: &[u8], symbols: Option<SymbolsIn>) -> PyResult<Self> {
        let symbols = symbols.map(SymbolsIn::split).unwrap_or_default();
        let inner = detached(py, move || {
            Bm25Index::from_bytes(data, SymbolsIn::resolve(symbols))
        })?;
        Ok(PyBm25Index {
            inner: Arc::new(inner),
        })
    }

    /// The index over a new corpus sharing documents with this one: document `i` is this
    /// one's `keep[i]` when not `None`, else the next of `new_docs`; it scores as an index
    /// built over the new corpus with `symbols` (see `Bm25Index::spliced`).
    #[pyo3(signature = (keep, new_docs, symbols = None))]
    fn spliced(
        &self,
        py: Python<'_>,
        keep: Vec<Option<u32>>,
        new_docs: Vec<DocIn>,
        symbols: Option<SymbolsIn>,
    ) -> PyResult<Self> {
        let docs: Vec<Doc<PyBackedStr>> = new_docs.into_iter().map(DocIn::into_doc).collect();
        let ix = Arc::clone(&self.inner);
        let symbols = symbols.map(SymbolsIn::split).unwrap_or_default();
        let docs_ref = &docs;
        let inner = detached(py, move || {
            ix.spliced(&keep, docs_ref, SymbolsIn::resolve(symbols))
        })?;
        drop(docs);
        Ok(PyBm25Index {
            inner: Arc::new(inner),
        })
    }

    #[pyo3(signature = (q, k = 20))]
    fn query(&self, py: Python<'_>, q: TextOrTokens, k: usize) -> PyResult<Vec<(usize, f64)>> {
        let ix = Arc::clone(&self.inner);
        let q = q.into_query();
        detached(py, move || Ok(ix.query(&q, k)))
    }

    #[pyo3(signature = (qs, k = 20))]
    fn query_batch(
        &self,
        py: Python<'_>,
        qs: Vec<TextOrTokens>,
        k: usize,
    ) -> PyResult<Vec<Vec<(usize, f64)>>> {
        let ix = Arc::clone(&self.inner);
        let qs: Vec<Query> = qs.into_iter().map(TextOrTokens::into_query).collect();
        detached(py, move || Ok(ix.query_batch(&qs, k)))
    }

    fn scores(&self, py: Python<'_>, q: TextOrTokens) -> PyResult<Vec<f64>> {
        let ix = Arc::clone(&self.inner);
        let q = q.into_query();
        detached(py, move || Ok(ix.scores(&q)))
    }

    fn idf(&self, term: &str) -> Option<f64> {
        self.inner.idf(term)
    }

    fn term_weight(&self, term: &str) -> f64 {
        self.inner.term_weight(term)
    }

    fn doc_len(&self, doc: usize) -> Option<u32> {
        self.inner.doc_len(doc)
    }

    #[getter]
    fn num_docs(&self) -> usize {
        self.inner.num_docs()
    }

    #[getter]
    fn avgdl(&self) -> f64 {
        self.inner.avgdl()
    }

    #[getter]
    fn vocab_size(&self) -> usize {
        self.inner.vocab_size()
    }
}

#[pyfunction]
fn tokenize_code(py: Python<'_>, text: String) -> PyResult<Vec<String>> {
    detached(py, move || Ok(codetok::tokenize(&text)))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyBm25Index>()?;
    m.add_class::<PySymbolSet>()?;
    m.add_function(wrap_pyfunction!(tokenize_code, m)?)?;
    Ok(())
}
