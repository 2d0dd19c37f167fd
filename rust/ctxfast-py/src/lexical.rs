//! Lexical recall binding: one call searches every term in one parallel walk, or a
//! `LexicalCorpus` walks and reads once and then searches from memory.

use crate::gil::detached;
use ctxfast_core::lexical::{self, Corpus, LexicalRequest, LexicalResult};
use pyo3::prelude::*;
use std::path::PathBuf;
use std::sync::Arc;

/// (term, [(path, line, text)], truncated)
type PyTermHits = (String, Vec<(String, u64, String)>, bool);
/// (terms, `skipped_terms`, `unknown_languages`, `files_searched`, unreadable)
type PyLexical = (
    Vec<PyTermHits>,
    Vec<(String, String)>,
    Vec<String>,
    usize,
    Vec<String>,
);

#[pyfunction]
#[pyo3(signature = (
    root,
    terms,
    languages = None,
    extra_globs = Vec::new(),
    max_hits = 40,
    max_line_chars = 500,
    exclude_any_depth = None,
    exclude_root = None,
    exclude_files = Vec::new(),
))]
#[allow(clippy::too_many_arguments)]
fn lexical_search(
    py: Python<'_>,
    root: PathBuf,
    terms: Vec<String>,
    languages: Option<Vec<String>>,
    extra_globs: Vec<String>,
    max_hits: usize,
    max_line_chars: usize,
    exclude_any_depth: Option<Vec<String>>,
    exclude_root: Option<Vec<String>>,
    exclude_files: Vec<String>,
) -> PyResult<PyLexical> {
    let mut req = LexicalRequest::new(root, terms);
    req.exclude_files = exclude_files;
    req.languages = languages;
    req.extra_globs = extra_globs;
    req.max_hits = max_hits;
    req.max_line_chars = max_line_chars;
    if let Some(x) = exclude_any_depth {
        req.exclude_any_depth = x;
    }
    if let Some(x) = exclude_root {
        req.exclude_root = x;
    }
    detached(py, move || Ok(to_py_result(lexical::search(&req)?)))
}

fn to_py_result(r: LexicalResult) -> PyLexical {
    let terms = r
        .terms
        .into_iter()
        .map(|t| {
            let hits = t
                .hits
                .into_iter()
                .map(|h| (h.path, h.line, h.text))
                .collect();
            (t.term, hits, t.truncated)
        })
        .collect();
    (
        terms,
        r.skipped_terms,
        r.unknown_languages,
        r.files_searched,
        r.unreadable,
    )
}

/// The walk of `lexical_search` done once and held in memory; `search` answers exactly as
/// `lexical_search` over the same files would.
#[pyclass(frozen, name = "LexicalCorpus", module = "ctxfast._native")]
pub struct PyLexicalCorpus {
    inner: Arc<Corpus>,
}

#[pymethods]
impl PyLexicalCorpus {
    #[new]
    #[pyo3(signature = (
        root,
        languages = None,
        extra_globs = Vec::new(),
        exclude_any_depth = None,
        exclude_root = None,
        max_bytes = lexical::DEFAULT_CORPUS_MAX_BYTES,
        exclude_files = Vec::new(),
    ))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        root: PathBuf,
        languages: Option<Vec<String>>,
        extra_globs: Vec<String>,
        exclude_any_depth: Option<Vec<String>>,
        exclude_root: Option<Vec<String>>,
        max_bytes: u64,
        exclude_files: Vec<String>,
    ) -> PyResult<Self> {
        let mut req = LexicalRequest::new(root, Vec::new());
        req.exclude_files = exclude_files;
        req.languages = languages;
        req.extra_globs = extra_globs;
        if let Some(x) = exclude_any_depth {
            req.exclude_any_depth = x;
        }
        if let Some(x) = exclude_root {
            req.exclude_root = x;
        }
        let inner = detached(py, move || Corpus::load(&req, max_bytes))?;
        Ok(PyLexicalCorpus {
            inner: Arc::new(inner),
        })
    }

    #[pyo3(signature = (terms, max_hits = 40, max_line_chars = 500))]
    fn search(
        &self,
        py: Python<'_>,
        terms: Vec<String>,
        max_hits: usize,
        max_line_chars: usize,
    ) -> PyResult<PyLexical> {
        let corpus = Arc::clone(&self.inner);
        detached(py, move || {
            Ok(to_py_result(corpus.search(
                &terms,
                max_hits,
                max_line_chars,
            )?))
        })
    }

    #[getter]
    fn num_files(&self) -> usize {
        self.inner.num_files()
    }

    #[getter]
    fn bytes_loaded(&self) -> u64 {
        self.inner.bytes_loaded()
    }
}

/// The language → glob table, so Python can document and validate languages.
#[pyfunction]
fn lexical_language_globs() -> Vec<(String, Vec<String>)> {
    lexical::LANGUAGE_GLOBS
        .iter()
        .map(|(l, gs)| (l.to_string(), gs.iter().map(ToString::to_string).collect()))
        .collect()
}

/// The directory names every walk prunes (indexer and lexical search alike).
#[pyfunction]
fn vendored_dirs() -> Vec<String> {
    ctxfast_core::vendored::VENDORED_DIRS
        .iter()
        .map(ToString::to_string)
        .collect()
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(lexical_search, m)?)?;
    m.add_function(wrap_pyfunction!(lexical_language_globs, m)?)?;
    m.add_function(wrap_pyfunction!(vendored_dirs, m)?)?;
    m.add_class::<PyLexicalCorpus>()?;
    Ok(())
}
