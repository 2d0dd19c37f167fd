//! The single mapping point from [`CoreError`] to the Python exception hierarchy.
//!
//! The classes are created here (so Rust can raise them) and re-exported by
//! `ctxfast.errors`, where the pure-Python errors subclass `CtxfastError` too.

use ctxfast_core::CoreError;
use pyo3::create_exception;
use pyo3::exceptions::{PyException, PyKeyboardInterrupt};
use pyo3::prelude::*;

create_exception!(
    _native,
    CtxfastError,
    PyException,
    "Base class of every ctxfast error."
);
create_exception!(
    _native,
    EncodingError,
    CtxfastError,
    "Unknown encoding or undecodable tokens."
);
create_exception!(
    _native,
    InvalidArgumentError,
    CtxfastError,
    "A well-typed but invalid argument."
);
create_exception!(
    _native,
    IndexError,
    CtxfastError,
    "Index storage (filesystem or SQLite) failed."
);
create_exception!(
    _native,
    InternalError,
    CtxfastError,
    "A bug in ctxfast's native core (a caught panic)."
);

/// Converts a core error to the matching Python exception.
pub fn to_py(err: CoreError) -> PyErr {
    let msg = err.to_string();
    match err {
        CoreError::UnknownEncoding(_) | CoreError::Decode(_) => EncodingError::new_err(msg),
        CoreError::InvalidArgument(_) => InvalidArgumentError::new_err(msg),
        CoreError::Io(_) | CoreError::Corrupt(_) => IndexError::new_err(msg),
        // Raised where Ctrl-C was pressed, as Python itself would have.
        CoreError::Cancelled => PyKeyboardInterrupt::new_err(msg),
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("CtxfastError", py.get_type::<CtxfastError>())?;
    m.add("EncodingError", py.get_type::<EncodingError>())?;
    m.add(
        "InvalidArgumentError",
        py.get_type::<InvalidArgumentError>(),
    )?;
    m.add("IndexError", py.get_type::<IndexError>())?;
    m.add("InternalError", py.get_type::<InternalError>())?;
    Ok(())
}
