//! The documents of the definition-level BM25 index, made from the definition table and the
//! file texts without a Python object per definition.
//!
//! Each definition's document is its qualname with dots as spaces, a newline, then its lines
//! `lines[line - 1 : min(end_line, line + n)]` (`n` is `python_lines` in a `.py`/`.pyi` file,
//! else `other_lines`; the slice the Python loop took), each cut to `line_max_chars`
//! characters. Made
//! in Python on a cold index of Django (38k definitions) this took half a second, more than
//! tokenising the documents; here it runs in parallel. The rules are Python's slices, kept
//! exactly (negative bounds count from the end), so the documents, and the BM25 index over
//! them, are the ones the Python loop made.

use crate::deftable::DefTable;
use rayon::prelude::*;
use std::collections::HashMap;

/// How many lines of a definition its document holds, and how long each may be.
#[derive(Debug, Clone, Copy)]
pub struct DocShape {
    /// `n` of a definition in a `.py` or `.pyi` file.
    pub python_lines: i64,
    /// `n` of a definition in any other file.
    pub other_lines: i64,
    /// Characters (Unicode scalar values, as Python counts them) kept of each line.
    pub line_max_chars: i64,
}

/// Python's `seq[lo:hi]` bounds over a sequence of `len` items (step 1).
fn py_slice(len: usize, lo: i64, hi: i64) -> (usize, usize) {
    let n = len as i64;
    let clamp = |i: i64| if i < 0 { (i + n).max(0) } else { i.min(n) };
    let (a, b) = (clamp(lo), clamp(hi));
    (a as usize, b.max(a) as usize)
}

/// Python's `line[:cut]`, counting characters.
fn cut_line(line: &str, cut: i64) -> &str {
    let end = if cut >= 0 {
        line.char_indices()
            .nth(cut as usize)
            .map_or(line.len(), |(i, _)| i)
    } else {
        let (_, b) = py_slice(line.chars().count(), 0, cut);
        line.char_indices().nth(b).map_or(line.len(), |(i, _)| i)
    };
    &line[..end]
}

/// The document of every definition of `table`, in row order. `texts` maps a file to its
/// lines joined with `\n` (a file it lacks has no lines). An empty table gives one empty
/// document, as a BM25 index needs one.
pub fn definition_docs(
    table: &DefTable,
    texts: &HashMap<&str, &str>,
    shape: DocShape,
) -> Vec<String> {
    let all: Vec<usize> = (0..table.len()).collect();
    let docs = row_docs(table, texts, shape, &all);
    if docs.is_empty() {
        vec![String::new()]
    } else {
        docs
    }
}

/// The documents of the definitions at `rows` (positions in `table`, each below its
/// length), in that order, made as [`definition_docs`] makes them: a refresh makes those of
/// the files it changed and keeps the others' counted documents.
pub fn row_docs(
    table: &DefTable,
    texts: &HashMap<&str, &str>,
    shape: DocShape,
    rows: &[usize],
) -> Vec<String> {
    let lines: HashMap<&str, Vec<&str>> = texts
        .par_iter()
        .map(|(&f, &t)| (f, t.split('\n').collect()))
        .collect();
    rows.par_iter()
        .filter_map(|&i| table.get(i))
        .map(|d| {
            // Python's `file.endswith((".py", ".pyi"))`, case-sensitive as it is.
            let n = if matches!(d.file.rsplit_once('.'), Some((_, "py" | "pyi"))) {
                shape.python_lines
            } else {
                shape.other_lines
            };
            let file_lines = lines.get(d.file).map_or(&[][..], Vec::as_slice);
            let (a, b) = py_slice(file_lines.len(), d.line - 1, d.end_line.min(d.line + n));
            let mut doc = d.qualname.replace('.', " ");
            doc.push('\n');
            for (k, line) in file_lines[a..b].iter().enumerate() {
                if k > 0 {
                    doc.push('\n');
                }
                doc.push_str(cut_line(line, shape.line_max_chars));
            }
            doc
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::deftable::{DefIn, DefRef};

    fn def<'a>(qualname: &'a str, file: &'a str, line: i64, end_line: i64) -> DefIn<'a> {
        DefIn {
            def: DefRef {
                id: qualname,
                kind: "function",
                name: qualname.rsplit('.').next().unwrap_or(qualname),
                qualname,
                file,
                line,
                col: 0,
                end_line,
            },
            signature: "",
        }
    }

    const SHAPE: DocShape = DocShape {
        python_lines: 2,
        other_lines: 1,
        line_max_chars: 3,
    };

    #[test]
    fn python_and_other_files_keep_their_line_counts_cut_by_characters() {
        let defs = [def("m.f", "m.py", 1, 9), def("g", "x.rs", 2, 3)];
        let t = DefTable::build(&defs, &[], &[]).unwrap();
        let texts = HashMap::from([("m.py", "abcdef\néèêë\nzzz"), ("x.rs", "1\n2345\n6")]);
        assert_eq!(
            definition_docs(&t, &texts, SHAPE),
            vec!["m f\nabc\néèê\nzzz".to_string(), "g\n234\n6".to_string()]
        );
        let only = HashMap::from([("x.rs", "1\n2345\n6")]);
        assert_eq!(
            row_docs(&t, &only, SHAPE, &[1]),
            vec!["g\n234\n6".to_string()]
        );
    }

    #[test]
    fn bounds_are_python_slices() {
        // Line 0 starts the slice at the last line; a negative cut drops characters from
        // the end; a file with no text has no lines.
        let defs = [def("a", "m.py", 0, 5), def("b", "gone.py", 1, 2)];
        let t = DefTable::build(&defs, &[], &[]).unwrap();
        let texts = HashMap::from([("m.py", "one\ntwo\nthree")]);
        let shape = DocShape {
            python_lines: 5,
            other_lines: 5,
            line_max_chars: -1,
        };
        assert_eq!(
            definition_docs(&t, &texts, shape),
            vec!["a\nthre".to_string(), "b\n".to_string()]
        );
    }

    #[test]
    fn an_empty_table_gives_one_empty_document() {
        let t = DefTable::build(&[], &[], &[]).unwrap();
        assert_eq!(
            definition_docs(&t, &HashMap::new(), SHAPE),
            vec![String::new()]
        );
    }
}
