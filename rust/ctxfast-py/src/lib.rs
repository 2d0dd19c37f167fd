//! `ctxfast._native`: the thin PyO3 binding over `ctxfast-core`.
//!
//! Two rules keep this crate thin and safe:
//! * errors cross the boundary in one place ([`errors::to_py`]), never as panics;
//! * every hot entry converts its Python inputs to owned Rust values and then runs the core
//!   through [`gil::detached`], which releases the GIL and turns a panic into a Python
//!   exception instead of aborting the interpreter.

use pyo3::prelude::*;

mod bm25;
mod errors;
mod gil;
mod graph;
mod identity;
mod lexical;
mod literals;
mod tokens;
mod window;

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    errors::register(m)?;
    tokens::register(m)?;
    window::register(m)?;
    graph::register(m)?;
    bm25::register(m)?;
    lexical::register(m)?;
    literals::register(m)?;
    identity::register(m)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
