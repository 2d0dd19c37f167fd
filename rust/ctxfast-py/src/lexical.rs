//! Lexical recall binding: one call searches every term in one parallel walk.

use crate::gil::detached;
use ctxfast_core::lexical::{self, LexicalRequest};
use pyo3::prelude::*;
use std::path::PathBuf;

/// (term, [(path, line, text)], truncated)
type PyTermHits = (String, Vec<(String, u64, String)>, bool);
/// (terms, skipped_terms, unknown_languages, files_searched, unreadable)
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
) -> PyResult<PyLexical> {
    let mut req = LexicalRequest::new(root, terms);
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
    detached(py, move || {
        let r = lexical::search(&req)?;
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
        Ok((
            terms,
            r.skipped_terms,
            r.unknown_languages,
            r.files_searched,
            r.unreadable,
        ))
    })
}

/// The language → glob table, so Python can document and validate languages.
#[pyfunction]
fn lexical_language_globs() -> Vec<(String, Vec<String>)> {
    lexical::LANGUAGE_GLOBS
        .iter()
        .map(|(l, gs)| (l.to_string(), gs.iter().map(|g| g.to_string()).collect()))
        .collect()
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(lexical_search, m)?)?;
    m.add_function(wrap_pyfunction!(lexical_language_globs, m)?)?;
    Ok(())
}
