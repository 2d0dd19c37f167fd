//! The single mapping point from [`CoreError`] to the Python exception hierarchy.
//!
//! The classes are created here (so Rust can raise them) and re-exported by
//! `ctxfast.errors`, where the pure-Python errors subclass `CtxfastError` too. Filesystem
//! errors keep their kind, as polars does it: a missing file is a `FileNotFoundError`, a
//! denied one a `PermissionError`, any other an `OSError` — each also an `IndexError`, so
//! `except CtxfastError` still catches everything.

use ctxfast_core::CoreError;
use pyo3::create_exception;
use pyo3::exceptions::{
    PyException, PyFileNotFoundError, PyKeyboardInterrupt, PyOSError, PyPermissionError,
};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyTuple, PyType};

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

/// `IndexError` subclasses that are also `FileNotFoundError`, `PermissionError` and
/// `OSError` (created at import: a class with two bases cannot be declared statically).
static NOT_FOUND: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static PERMISSION: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static OTHER_OS: PyOnceLock<Py<PyType>> = PyOnceLock::new();

/// One of the filesystem classes: its name, its OS base, where it is kept, its docstring.
struct IoClass<'py> {
    name: &'static str,
    os_base: Bound<'py, PyType>,
    cell: &'static PyOnceLock<Py<PyType>>,
    doc: &'static str,
}

fn io_classes(py: Python<'_>) -> [IoClass<'_>; 3] {
    [
        IoClass {
            name: "IndexNotFoundError",
            os_base: py.get_type::<PyFileNotFoundError>(),
            cell: &NOT_FOUND,
            doc: "A file or directory the index needs does not exist.",
        },
        IoClass {
            name: "IndexPermissionError",
            os_base: py.get_type::<PyPermissionError>(),
            cell: &PERMISSION,
            doc: "The index (or a file it reads) may not be read or written.",
        },
        IoClass {
            name: "IndexOSError",
            os_base: py.get_type::<PyOSError>(),
            cell: &OTHER_OS,
            doc: "Any other filesystem error of the index.",
        },
    ]
}

/// Converts a core error to the matching Python exception.
pub fn to_py(err: CoreError) -> PyErr {
    let msg = err.to_string();
    match err {
        CoreError::UnknownEncoding(_) | CoreError::Decode(_) => EncodingError::new_err(msg),
        CoreError::InvalidArgument(_) => InvalidArgumentError::new_err(msg),
        CoreError::Io(e) => Python::attach(|py| {
            let cell = match e.kind() {
                std::io::ErrorKind::NotFound => &NOT_FOUND,
                std::io::ErrorKind::PermissionDenied => &PERMISSION,
                _ => &OTHER_OS,
            };
            match cell.get(py) {
                Some(t) => PyErr::from_type(t.bind(py).clone(), msg),
                None => IndexError::new_err(msg),
            }
        }),
        CoreError::Db(_) | CoreError::Corrupt(_) => IndexError::new_err(msg),
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
    for c in io_classes(py) {
        let bases = PyTuple::new(py, [py.get_type::<IndexError>(), c.os_base])?;
        let ns = PyDict::new(py);
        ns.set_item("__module__", "ctxfast._native")?;
        ns.set_item("__doc__", c.doc)?;
        let class = py.get_type::<PyType>().call1((c.name, bases, ns))?;
        let class = class.cast_into::<PyType>()?;
        m.add(c.name, &class)?;
        let _ = c.cell.set(py, class.unbind());
    }
    m.add("InternalError", py.get_type::<InternalError>())?;
    Ok(())
}
