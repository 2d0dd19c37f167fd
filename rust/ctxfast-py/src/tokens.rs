//! Token engine bindings: counting, batch counting, encode/decode, fits, truncation.

use crate::gil::detached;
use ctxfast_core::tokens::{self, Encoding};
use ctxfast_core::truncate::{self, Cut};
use ctxfast_core::CoreError;
use pyo3::prelude::*;

fn enc(name: &str) -> PyResult<Encoding> {
    Encoding::from_name(name).map_err(crate::errors::to_py)
}

#[pyfunction]
#[pyo3(signature = (text, encoding = "cl100k_base"))]
fn count_tokens(py: Python<'_>, text: String, encoding: &str) -> PyResult<usize> {
    let e = enc(encoding)?;
    detached(py, move || Ok(tokens::count(&text, e)))
}

#[pyfunction]
#[pyo3(signature = (texts, encoding = "cl100k_base"))]
fn count_tokens_batch(py: Python<'_>, texts: Vec<String>, encoding: &str) -> PyResult<Vec<usize>> {
    let e = enc(encoding)?;
    detached(py, move || Ok(tokens::count_batch(&texts, e)))
}

#[pyfunction]
#[pyo3(signature = (text, encoding = "cl100k_base"))]
fn encode(py: Python<'_>, text: String, encoding: &str) -> PyResult<Vec<u32>> {
    let e = enc(encoding)?;
    detached(py, move || tokens::encode(&text, e))
}

#[pyfunction]
#[pyo3(signature = (tokens, encoding = "cl100k_base"))]
fn decode(py: Python<'_>, tokens: Vec<u32>, encoding: &str) -> PyResult<String> {
    let e = enc(encoding)?;
    detached(py, move || tokens::decode(&tokens, e))
}

#[pyfunction]
#[pyo3(signature = (text, max_tokens, encoding = "cl100k_base"))]
fn fits(py: Python<'_>, text: String, max_tokens: usize, encoding: &str) -> PyResult<bool> {
    let e = enc(encoding)?;
    detached(py, move || Ok(tokens::fits(&text, max_tokens, e)))
}

#[pyfunction]
#[pyo3(signature = (text, max_tokens, encoding = "cl100k_base", elision = " […]", cut = "word"))]
fn truncate_to_tokens(
    py: Python<'_>,
    text: String,
    max_tokens: usize,
    encoding: &str,
    elision: &str,
    cut: &str,
) -> PyResult<String> {
    let e = enc(encoding)?;
    let elision = elision.to_string();
    let c = Cut::from_name(cut).map_err(crate::errors::to_py)?;
    detached(py, move || {
        truncate::truncate_to_tokens(&text, max_tokens, e, &elision, c)
    })
}

/// Raises `InternalError` through a real panic in the core path; lets the test suite prove
/// that a panic surfaces as a Python exception instead of aborting the interpreter.
#[pyfunction]
fn _panic_for_test(py: Python<'_>) -> PyResult<()> {
    detached(py, || -> Result<(), CoreError> {
        panic!("deliberate test panic")
    })
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(count_tokens, m)?)?;
    m.add_function(wrap_pyfunction!(count_tokens_batch, m)?)?;
    m.add_function(wrap_pyfunction!(encode, m)?)?;
    m.add_function(wrap_pyfunction!(decode, m)?)?;
    m.add_function(wrap_pyfunction!(fits, m)?)?;
    m.add_function(wrap_pyfunction!(truncate_to_tokens, m)?)?;
    m.add_function(wrap_pyfunction!(_panic_for_test, m)?)?;
    Ok(())
}
