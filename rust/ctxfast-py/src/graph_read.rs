//! Python's reads of `recon.db`, on the core's own SQLite.
//!
//! SQLite's locks are POSIX advisory locks, and POSIX drops every lock a process holds on a
//! file when the process closes *any* descriptor of it. One copy of SQLite works around that
//! (it shares descriptors between its connections); two copies in one process cannot. When
//! Python read the index through the stdlib `sqlite3` (the system library) while the core
//! refreshed it through the bundled one, each refresh's close dropped the reader's shared
//! lock on `recon.db-shm`; another process then took itself for the only user, re-initialised
//! the WAL index under the reader's mapping, and the reader died of SIGBUS. So every reader
//! of `recon.db` goes through this connection, built on the same SQLite the core writes with.

use crate::gil::detached;
use ctxfast_core::CoreError;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyTuple};
use rusqlite::types::{Value, ValueRef};
use rusqlite::{Connection, OpenFlags};
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::Duration;

/// Prepared statements kept per connection (the stdlib module's default): the readers issue
/// thousands of point lookups over a few dozen distinct queries.
const STATEMENT_CACHE: usize = 128;

/// A read-only connection to one `recon.db`. Usable from any thread (one query at a time);
/// each query runs with the GIL released.
#[pyclass(frozen, module = "ctxfast._native")]
pub struct GraphReader {
    conn: Mutex<Option<Connection>>,
}

/// One SQL parameter or result value, owned, so queries run without the GIL.
fn to_value(obj: &Bound<'_, PyAny>) -> PyResult<Value> {
    if obj.is_none() {
        Ok(Value::Null)
    } else if let Ok(v) = obj.extract::<i64>() {
        Ok(Value::Integer(v))
    } else if let Ok(v) = obj.extract::<f64>() {
        Ok(Value::Real(v))
    } else if let Ok(v) = obj.extract::<String>() {
        Ok(Value::Text(v))
    } else if let Ok(v) = obj.cast::<PyBytes>() {
        Ok(Value::Blob(v.as_bytes().to_vec()))
    } else {
        Err(PyTypeError::new_err(format!(
            "unsupported SQL parameter type: {}",
            obj.get_type().name()?
        )))
    }
}

fn to_py(py: Python<'_>, v: Value) -> PyResult<Bound<'_, PyAny>> {
    Ok(match v {
        Value::Null => py.None().into_bound(py),
        Value::Integer(i) => i.into_pyobject(py)?.into_any(),
        Value::Real(f) => f.into_pyobject(py)?.into_any(),
        Value::Text(s) => s.into_pyobject(py)?.into_any(),
        Value::Blob(b) => PyBytes::new(py, &b).into_any(),
    })
}

impl GraphReader {
    /// Runs `f` on the open connection with the GIL released.
    pub(crate) fn with_conn<T: Send>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&Connection) -> rusqlite::Result<T> + Send,
    ) -> PyResult<T> {
        detached(py, || {
            let guard = self
                .conn
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            let conn = guard.as_ref().ok_or_else(|| {
                CoreError::InvalidArgument("the graph connection is closed".to_string())
            })?;
            f(conn).map_err(CoreError::from)
        })
    }

    /// The rows of `sql` with `params` bound (at most `limit` of them), as owned values.
    fn query(
        &self,
        py: Python<'_>,
        sql: &str,
        params: Option<&Bound<'_, PyAny>>,
        limit: usize,
    ) -> PyResult<Vec<Vec<Value>>> {
        let values = match params {
            None => vec![],
            Some(ps) => ps
                .try_iter()?
                .map(|p| to_value(&p?))
                .collect::<PyResult<Vec<Value>>>()?,
        };
        self.with_conn(py, |conn| {
            let mut st = conn.prepare_cached(sql)?;
            let n = st.column_count();
            let mut rows = st.query(rusqlite::params_from_iter(values))?;
            let mut out = vec![];
            while out.len() < limit {
                let Some(r) = rows.next()? else { break };
                out.push(
                    (0..n)
                        .map(|i| owned(r.get_ref(i)?))
                        .collect::<rusqlite::Result<_>>()?,
                );
            }
            Ok(out)
        })
    }
}

/// An owned copy of one result value; text that is not UTF-8 is an error (the stdlib
/// module's behaviour), not a panic.
fn owned(v: ValueRef<'_>) -> rusqlite::Result<Value> {
    Ok(match v {
        ValueRef::Text(b) => Value::Text(
            std::str::from_utf8(b)
                .map_err(rusqlite::Error::Utf8Error)?
                .to_string(),
        ),
        other => other.into(),
    })
}

fn row_tuple(py: Python<'_>, row: Vec<Value>) -> PyResult<Bound<'_, PyTuple>> {
    let items = row
        .into_iter()
        .map(|v| to_py(py, v))
        .collect::<PyResult<Vec<_>>>()?;
    PyTuple::new(py, items)
}

#[pymethods]
impl GraphReader {
    /// Opens `path` read-only (it must exist); a busy database is waited on for up to
    /// `busy_timeout` seconds.
    #[new]
    fn new(py: Python<'_>, path: PathBuf, busy_timeout: f64) -> PyResult<Self> {
        if !busy_timeout.is_finite() || busy_timeout < 0.0 {
            return Err(PyValueError::new_err(
                "busy_timeout must be a non-negative number of seconds",
            ));
        }
        let conn = detached(py, move || {
            let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
            let conn = Connection::open_with_flags(&path, flags)?;
            conn.busy_timeout(Duration::from_secs_f64(busy_timeout))?;
            conn.set_prepared_statement_cache_capacity(STATEMENT_CACHE);
            Ok(conn)
        })?;
        Ok(GraphReader {
            conn: Mutex::new(Some(conn)),
        })
    }

    /// Every row of `sql` (`?` placeholders bound from `params`), as tuples.
    #[pyo3(signature = (sql, params = None))]
    fn rows<'py>(
        &self,
        py: Python<'py>,
        sql: &str,
        params: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Vec<Bound<'py, PyTuple>>> {
        let rows = self.query(py, sql, params, usize::MAX)?;
        rows.into_iter().map(|r| row_tuple(py, r)).collect()
    }

    /// The first row of `sql`, or `None` when it has none.
    #[pyo3(signature = (sql, params = None))]
    fn row<'py>(
        &self,
        py: Python<'py>,
        sql: &str,
        params: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Option<Bound<'py, PyTuple>>> {
        let rows = self.query(py, sql, params, 1)?;
        rows.into_iter()
            .next()
            .map(|r| row_tuple(py, r))
            .transpose()
    }

    /// Runs several statements that return no rows (the TEMP views of the text ids).
    fn executescript(&self, py: Python<'_>, sql: &str) -> PyResult<()> {
        self.with_conn(py, |conn| conn.execute_batch(sql))
    }

    /// Closes the connection; later queries raise. Closing twice is harmless.
    fn close(&self, py: Python<'_>) {
        let conn = self
            .conn
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take();
        py.detach(move || drop(conn));
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<GraphReader>()?;
    Ok(())
}
