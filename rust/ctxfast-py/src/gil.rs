//! The one helper through which every hot entry runs core code.

use crate::errors::{to_py, InternalError};
use ctxfast_core::CoreResult;
use pyo3::prelude::*;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// Runs `f` with the GIL released; maps core errors through [`to_py`] and a panic to
/// `InternalError`, so a bug in the core never aborts the interpreter.
pub fn detached<T, F>(py: Python<'_>, f: F) -> PyResult<T>
where
    T: Send,
    F: FnOnce() -> CoreResult<T> + Send,
{
    match py.detach(|| catch_unwind(AssertUnwindSafe(f))) {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(err)) => Err(to_py(err)),
        Err(payload) => {
            let msg = payload
                .downcast_ref::<&str>()
                .map(ToString::to_string)
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".to_string());
            Err(InternalError::new_err(format!(
                "native core panicked: {msg}"
            )))
        }
    }
}
