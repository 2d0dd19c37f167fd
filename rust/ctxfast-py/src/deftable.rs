//! The definition table binding (see `ctxfast_core::deftable`): built once per index
//! state, stored as bytes, and looked up by name, qualname, id and file from Python.

use crate::bm25::PySymbolSet;
use crate::gil::detached;
use crate::graph_read::GraphReader;
use ctxfast_core::def_docs::{definition_docs, row_docs, DocShape};
use ctxfast_core::deftable::{DefIn, DefRef, DefTable};
use ctxfast_core::CoreError;
use pyo3::prelude::*;
use pyo3::pybacked::PyBackedStr;
use pyo3::types::{PyBytes, PyString};
use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

/// A `nodes` row as Python reads it: `(id, kind, name, qualname, file, line, col, end_line)`.
type RowOut<'t> = (&'t str, &'t str, &'t str, &'t str, &'t str, i64, i64, i64);

/// A row as [`PyDefTable::from_queries`] reads it: the row of [`RowIn`] and its signature.
type RowRead = (
    String,
    String,
    String,
    String,
    String,
    i64,
    i64,
    i64,
    String,
);

/// A row as the builder takes it from Python.
type RowIn = (
    PyBackedStr,
    PyBackedStr,
    PyBackedStr,
    PyBackedStr,
    PyBackedStr,
    i64,
    i64,
    i64,
);

/// A row's text fields (id, kind, name, qualname, file), its positions (line, column, end
/// line) and its signature, borrowed as the builder takes them: both ways into the table
/// (rows from Python, rows read natively) go through here.
fn def_in<'a>(text: [&'a str; 5], at: [i64; 3], signature: &'a str) -> DefIn<'a> {
    let [id, kind, name, qualname, file] = text;
    let [line, col, end_line] = at;
    DefIn {
        def: DefRef {
            id,
            kind,
            name,
            qualname,
            file,
            line,
            col,
            end_line,
        },
        signature,
    }
}

fn out(d: DefRef<'_>) -> RowOut<'_> {
    (
        d.id, d.kind, d.name, d.qualname, d.file, d.line, d.col, d.end_line,
    )
}

/// A key from Python; a string that is not valid UTF-8 (a lone surrogate) matches nothing,
/// since every stored string is valid UTF-8.
fn key<'a>(s: &'a Bound<'_, PyString>) -> Option<std::borrow::Cow<'a, str>> {
    s.to_cow().ok()
}

#[pyclass(frozen, name = "DefTable", module = "ctxfast._native")]
pub struct PyDefTable {
    inner: Arc<DefTable>,
    symbols: OnceLock<Py<PySymbolSet>>,
}

impl PyDefTable {
    fn wrap(inner: DefTable) -> Self {
        PyDefTable {
            inner: Arc::new(inner),
            symbols: OnceLock::new(),
        }
    }

    fn rows(&self, positions: impl IntoIterator<Item = usize>) -> Vec<RowOut<'_>> {
        positions
            .into_iter()
            .filter_map(|i| self.inner.get(i).map(out))
            .collect()
    }
}

#[pymethods]
impl PyDefTable {
    /// A table over `rows` (kept in order) with one skeleton signature per row, the name
    /// index's `qualnames` and `(file, module qualname)` pairs (the first of a file wins).
    #[staticmethod]
    fn build(
        py: Python<'_>,
        rows: Vec<RowIn>,
        signatures: Vec<PyBackedStr>,
        qualnames: Vec<PyBackedStr>,
        modules: Vec<(PyBackedStr, PyBackedStr)>,
    ) -> PyResult<Self> {
        if rows.len() != signatures.len() {
            return Err(pyo3::exceptions::PyValueError::new_err(
                "one signature per row is needed",
            ));
        }
        let (rows_ref, sigs_ref, q_ref, m_ref) = (&rows, &signatures, &qualnames, &modules);
        let inner = detached(py, move || {
            let defs: Vec<DefIn<'_>> = rows_ref
                .iter()
                .zip(sigs_ref)
                .map(|(r, sig)| def_in([&r.0, &r.1, &r.2, &r.3, &r.4], [r.5, r.6, r.7], sig))
                .collect();
            let q: Vec<&str> = q_ref.iter().map(|s| &**s).collect();
            let m: Vec<(&str, &str)> = m_ref.iter().map(|(f, q)| (&**f, &**q)).collect();
            DefTable::build(&defs, &q, &m)
        })?;
        drop((rows, signatures, qualnames, modules));
        Ok(Self::wrap(inner))
    }

    /// The table [`PyDefTable::build`] makes of the rows of three queries on `reader`:
    /// `defs` gives each row's `(id, kind, name, qualname, file, line, col, end_line,
    /// signature)`, `qualnames` the name index, `modules` the `(file, module qualname)`
    /// pairs. Read and built with the GIL released, without a Python object per row (on
    /// Django, 38k rows: that conversion cost as much as the query).
    #[staticmethod]
    fn from_queries(
        py: Python<'_>,
        reader: &GraphReader,
        defs: &str,
        qualnames: &str,
        modules: &str,
    ) -> PyResult<Self> {
        let (rows, names, mods) = reader.with_conn(py, |conn| {
            let rows = conn
                .prepare(defs)?
                .query_map([], |r| {
                    Ok((
                        r.get(0)?,
                        r.get(1)?,
                        r.get(2)?,
                        r.get(3)?,
                        r.get(4)?,
                        r.get(5)?,
                        r.get(6)?,
                        r.get(7)?,
                        r.get(8)?,
                    ))
                })?
                .collect::<rusqlite::Result<Vec<RowRead>>>()?;
            let names = conn
                .prepare(qualnames)?
                .query_map([], |r| r.get(0))?
                .collect::<rusqlite::Result<Vec<String>>>()?;
            let mods = conn
                .prepare(modules)?
                .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
                .collect::<rusqlite::Result<Vec<(String, String)>>>()?;
            Ok((rows, names, mods))
        })?;
        let inner = detached(py, move || {
            let defs: Vec<DefIn<'_>> = rows
                .iter()
                .map(|r| def_in([&r.0, &r.1, &r.2, &r.3, &r.4], [r.5, r.6, r.7], &r.8))
                .collect();
            let q: Vec<&str> = names.iter().map(String::as_str).collect();
            let m: Vec<(&str, &str)> = mods.iter().map(|(f, q)| (&**f, &**q)).collect();
            DefTable::build(&defs, &q, &m)
        })?;
        Ok(Self::wrap(inner))
    }

    fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let t = Arc::clone(&self.inner);
        let bytes = detached(py, move || Ok(t.to_bytes()))?;
        Ok(PyBytes::new(py, &bytes))
    }

    /// A table saved by `to_bytes`; other bytes raise `InvalidArgumentError`.
    #[staticmethod]
    fn from_bytes(py: Python<'_>, data: &[u8]) -> PyResult<Self> {
        let inner = detached(py, move || DefTable::from_bytes(data))?;
        Ok(Self::wrap(inner))
    }

    fn __len__(&self) -> usize {
        self.inner.len()
    }

    /// Row `i` (row order); `IndexError` past the end.
    fn row(&self, i: usize) -> PyResult<RowOut<'_>> {
        self.inner
            .get(i)
            .map(out)
            .ok_or_else(|| pyo3::exceptions::PyIndexError::new_err("definition index out of range"))
    }

    /// Rows `start..end` (clipped to the table).
    fn slice(&self, start: usize, end: usize) -> Vec<RowOut<'_>> {
        self.rows(start..end.min(self.inner.len()))
    }

    /// The rows of definitions named `name`, in row order.
    fn named(&self, name: &Bound<'_, PyString>) -> Vec<RowOut<'_>> {
        match key(name) {
            Some(k) => self.rows(self.inner.named(&k)),
            None => Vec::new(),
        }
    }

    fn has_name(&self, name: &Bound<'_, PyString>) -> bool {
        key(name).is_some_and(|k| self.inner.has_name(&k))
    }

    /// The first row with this qualname, or `None`.
    fn by_qualname(&self, qualname: &Bound<'_, PyString>) -> Option<RowOut<'_>> {
        let i = self.inner.by_qualname(&key(qualname)?)?;
        self.inner.get(i).map(out)
    }

    /// The skeleton signature of the (last) row with this id, or `None`.
    fn signature(&self, id: &Bound<'_, PyString>) -> Option<&str> {
        self.inner.signature_of_id(&key(id)?)
    }

    /// `(start, end)` of the file's rows, or `None`.
    fn file_span(&self, file: &Bound<'_, PyString>) -> Option<(usize, usize)> {
        self.inner.file_span(&key(file)?)
    }

    /// The smallest definition of `file` containing `line`, or `None`.
    fn innermost(&self, file: &Bound<'_, PyString>, line: i64) -> Option<RowOut<'_>> {
        let i = self.inner.innermost(&key(file)?, line)?;
        self.inner.get(i).map(out)
    }

    fn has_qualname(&self, qualname: &Bound<'_, PyString>) -> bool {
        key(qualname).is_some_and(|k| self.inner.has_qualname(&k))
    }

    fn module_of(&self, file: &Bound<'_, PyString>) -> Option<&str> {
        self.inner.module_of(&key(file)?)
    }

    /// The files that have definitions, sorted.
    fn files(&self) -> Vec<&str> {
        self.inner.files().collect()
    }

    /// The definition-level BM25 document of every row, in row order
    /// (`ctxfast_core::def_docs`): `texts[i]` is the lines of `files()[i]` joined with `\n`.
    #[pyo3(signature = (texts, python_lines, other_lines, line_max_chars))]
    fn definition_docs(
        &self,
        py: Python<'_>,
        texts: Vec<PyBackedStr>,
        python_lines: i64,
        other_lines: i64,
        line_max_chars: i64,
    ) -> PyResult<Vec<String>> {
        let t = Arc::clone(&self.inner);
        let shape = doc_shape(python_lines, other_lines, line_max_chars);
        let texts_ref = &texts;
        let docs = detached(py, move || {
            let by_file = texts_by_file(t.files().collect(), texts_ref)?;
            Ok(definition_docs(&t, &by_file, shape))
        })?;
        drop(texts);
        Ok(docs)
    }

    /// The documents of the definitions at `rows`, in that order, made as
    /// `definition_docs` makes them; `texts[i]` is the text of `files[i]`, and a row's file
    /// not among `files` has no lines.
    #[pyo3(signature = (rows, files, texts, python_lines, other_lines, line_max_chars))]
    #[allow(clippy::too_many_arguments)]
    fn row_docs(
        &self,
        py: Python<'_>,
        rows: Vec<usize>,
        files: Vec<PyBackedStr>,
        texts: Vec<PyBackedStr>,
        python_lines: i64,
        other_lines: i64,
        line_max_chars: i64,
    ) -> PyResult<Vec<String>> {
        let t = Arc::clone(&self.inner);
        let shape = doc_shape(python_lines, other_lines, line_max_chars);
        let (files_ref, texts_ref) = (&files, &texts);
        let docs = detached(py, move || {
            if rows.iter().any(|&r| r >= t.len()) {
                return Err(CoreError::InvalidArgument("row out of range".into()));
            }
            let by_file = texts_by_file(files_ref.iter().map(|s| &**s).collect(), texts_ref)?;
            Ok(row_docs(&t, &by_file, shape, &rows))
        })?;
        drop((files, texts));
        Ok(docs)
    }

    /// For each row, the row of `old` it repeats when its file is among `unchanged` and
    /// has the same rows in both tables, else `None` (`DefTable::carried_rows`).
    fn carried_rows(
        &self,
        py: Python<'_>,
        old: &PyDefTable,
        unchanged: Vec<PyBackedStr>,
    ) -> PyResult<Vec<Option<u32>>> {
        let (t, o) = (Arc::clone(&self.inner), Arc::clone(&old.inner));
        let files = &unchanged;
        let rows = detached(py, move || {
            Ok(t.carried_rows(&o, files.iter().map(|s| &**s)))
        })?;
        drop(unchanged);
        Ok(rows)
    }

    /// Every distinct definition name as one shared `SymbolSet`, made on first use.
    fn symbol_set(&self, py: Python<'_>) -> PyResult<Py<PySymbolSet>> {
        if let Some(s) = self.symbols.get() {
            return Ok(s.clone_ref(py));
        }
        let t = Arc::clone(&self.inner);
        let set = detached(py, move || Ok(t.symbol_set()))?;
        let made = Py::new(py, PySymbolSet::from_set(set))?;
        Ok(self.symbols.get_or_init(|| made).clone_ref(py))
    }
}

/// The document shape of a definition index, from the binding's arguments.
fn doc_shape(python_lines: i64, other_lines: i64, line_max_chars: i64) -> DocShape {
    DocShape {
        python_lines,
        other_lines,
        line_max_chars,
    }
}

/// Each file with its text (`texts[i]` is the text of `files[i]`).
fn texts_by_file<'a>(
    files: Vec<&'a str>,
    texts: &'a [PyBackedStr],
) -> Result<HashMap<&'a str, &'a str>, CoreError> {
    if files.len() != texts.len() {
        return Err(CoreError::InvalidArgument(
            "one text per file is needed".into(),
        ));
    }
    Ok(files.into_iter().zip(texts.iter().map(|s| &**s)).collect())
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyDefTable>()?;
    Ok(())
}
