//! Retrieval's definition tables, stored as bytes and looked up in place.
//!
//! A fresh process answers one query, which looks up a few dozen names, qualnames and files
//! among a large repository's tens of thousands of definitions. Rebuilding Python rows and
//! dictionaries for all of them cost more than the query itself, so the table is written
//! once per index state with its lookup orders precomputed (every definition sorted by name,
//! by qualname and by id; each file's span; the name index; each file's module), and a
//! process reads it back by decoding integer arrays, with no per-definition string or hash
//! map. Each lookup binary-searches a sorted order.

use crate::bm25::SymbolSet;
use crate::cursor::Cursor;
use crate::error::{CoreError, CoreResult};
use std::cmp::Reverse;
use std::collections::HashMap;

/// First bytes of [`DefTable::to_bytes`]: a format tag with its version.
const MAGIC: &[u8] = b"ctxfast-deftable\x01";

/// One definition as the builder takes it (the `nodes` row and its skeleton signature).
#[derive(Debug, Clone, Copy)]
pub struct DefIn<'a> {
    pub def: DefRef<'a>,
    pub signature: &'a str,
}

/// A stored row: string fields as indices into the string pool.
#[derive(Debug, Clone, Copy)]
struct Row {
    id: u32,
    kind: u32,
    name: u32,
    qualname: u32,
    file: u32,
    signature: u32,
    line: i64,
    col: i64,
    end_line: i64,
}

/// A definition as a lookup returns it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DefRef<'t> {
    pub id: &'t str,
    pub kind: &'t str,
    pub name: &'t str,
    pub qualname: &'t str,
    pub file: &'t str,
    pub line: i64,
    pub col: i64,
    pub end_line: i64,
}

/// The definition table of one index state.
///
/// Rows keep the order they were given in (retrieval's: by file, line, id). Lookups answer
/// as the dictionaries they replace did: [`DefTable::named`] lists a name's rows in row
/// order, [`DefTable::by_qualname`] gives a qualname's longest row in its first file,
/// [`DefTable::signature_of_id`] the last row's signature for an id, [`DefTable::file_span`]
/// the last contiguous run of a file's rows, [`DefTable::module_of`] a file's first module.
#[derive(Debug, Default)]
pub struct DefTable {
    pool: String,
    /// `n_strings + 1` offsets into `pool`, each on a character boundary.
    offsets: Vec<u32>,
    rows: Vec<Row>,
    by_name: Vec<u32>,
    by_qualname: Vec<u32>,
    by_id: Vec<u32>,
    /// `(file, start, end)` sorted by file.
    files: Vec<(u32, u32, u32)>,
    /// The name index's qualnames, sorted, without repeats.
    qualnames: Vec<u32>,
    /// `(file, module qualname)` sorted by file.
    modules: Vec<(u32, u32)>,
}

/// Interns strings into one pool while a table is built.
#[derive(Default)]
struct Pool<'a> {
    ids: HashMap<&'a str, u32>,
    text: String,
    offsets: Vec<u32>,
}

impl<'a> Pool<'a> {
    fn add(&mut self, s: &'a str) -> u32 {
        if let Some(&id) = self.ids.get(s) {
            return id;
        }
        if self.offsets.is_empty() {
            self.offsets.push(0);
        }
        self.text.push_str(s);
        self.offsets.push(self.text.len() as u32);
        let id = (self.offsets.len() - 2) as u32;
        self.ids.insert(s, id);
        id
    }
}

impl DefTable {
    /// A table over `defs` (kept in the given order), the name index's `qualnames` and the
    /// `(file, module qualname)` pairs of `modules` (the first pair of a file wins).
    pub fn build(
        defs: &[DefIn<'_>],
        qualnames: &[&str],
        modules: &[(&str, &str)],
    ) -> CoreResult<Self> {
        let mut p = Pool::default();
        p.offsets.push(0);
        let rows: Vec<Row> = defs
            .iter()
            .map(|&DefIn { def: d, signature }| Row {
                id: p.add(d.id),
                kind: p.add(d.kind),
                name: p.add(d.name),
                qualname: p.add(d.qualname),
                file: p.add(d.file),
                signature: p.add(signature),
                line: d.line,
                col: d.col,
                end_line: d.end_line,
            })
            .collect();
        let mut q: Vec<u32> = qualnames.iter().map(|s| p.add(s)).collect();
        let mods: Vec<(u32, u32)> = modules.iter().map(|(f, m)| (p.add(f), p.add(m))).collect();
        if p.text.len() > u32::MAX as usize || rows.len() > u32::MAX as usize {
            return Err(CoreError::InvalidArgument(
                "definition table too large".into(),
            ));
        }
        let mut t = DefTable {
            pool: p.text,
            offsets: p.offsets,
            rows,
            ..DefTable::default()
        };
        let order = |key: fn(&Row) -> u32, t: &DefTable| {
            let mut v: Vec<u32> = (0..t.rows.len() as u32).collect();
            // Stable: rows with the same key stay in row order.
            v.sort_by(|&a, &b| {
                t.s(key(&t.rows[a as usize]))
                    .cmp(t.s(key(&t.rows[b as usize])))
            });
            v
        };
        t.by_name = order(|r| r.name, &t);
        t.by_qualname = order(|r| r.qualname, &t);
        t.by_id = order(|r| r.id, &t);
        // Each file's last contiguous run of rows (rows come grouped by file).
        let mut spans: HashMap<u32, (u32, u32)> = HashMap::new();
        let mut start = 0usize;
        for i in 1..=t.rows.len() {
            if i == t.rows.len() || t.rows[i].file != t.rows[start].file {
                spans.insert(t.rows[start].file, (start as u32, i as u32));
                start = i;
            }
        }
        let mut files: Vec<(u32, u32, u32)> =
            spans.into_iter().map(|(f, (a, b))| (f, a, b)).collect();
        files.sort_by(|a, b| t.s(a.0).cmp(t.s(b.0)));
        t.files = files;
        q.sort_by(|&a, &b| t.s(a).cmp(t.s(b)));
        q.dedup_by(|a, b| t.s(*a) == t.s(*b));
        t.qualnames = q;
        let mut seen: HashMap<u32, u32> = HashMap::new();
        for &(f, m) in &mods {
            seen.entry(f).or_insert(m);
        }
        let mut modules: Vec<(u32, u32)> = seen.into_iter().collect();
        modules.sort_by(|a, b| t.s(a.0).cmp(t.s(b.0)));
        t.modules = modules;
        Ok(t)
    }

    fn s(&self, id: u32) -> &str {
        let i = id as usize;
        &self.pool[self.offsets[i] as usize..self.offsets[i + 1] as usize]
    }

    fn def(&self, i: usize) -> DefRef<'_> {
        let r = &self.rows[i];
        DefRef {
            id: self.s(r.id),
            kind: self.s(r.kind),
            name: self.s(r.name),
            qualname: self.s(r.qualname),
            file: self.s(r.file),
            line: r.line,
            col: r.col,
            end_line: r.end_line,
        }
    }

    /// Number of definitions.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// Definition `i` in row order.
    pub fn get(&self, i: usize) -> Option<DefRef<'_>> {
        (i < self.rows.len()).then(|| self.def(i))
    }

    /// The positions in `order` whose row's `key` equals `want`.
    fn equal_range<'o>(&self, order: &'o [u32], key: fn(&Row) -> u32, want: &str) -> &'o [u32] {
        let k = |i: &u32| self.s(key(&self.rows[*i as usize]));
        let lo = order.partition_point(|i| k(i) < want);
        let hi = lo + order[lo..].partition_point(|i| k(i) == want);
        &order[lo..hi]
    }

    /// Row positions of the definitions named `name`, in row order.
    pub fn named(&self, name: &str) -> Vec<usize> {
        self.equal_range(&self.by_name, |r| r.name, name)
            .iter()
            .map(|&i| i as usize)
            .collect()
    }

    /// True when some definition is named `name`.
    pub fn has_name(&self, name: &str) -> bool {
        !self.equal_range(&self.by_name, |r| r.name, name).is_empty()
    }

    /// The definition of this qualname: of the rows the first row's file gives it, the
    /// longest (the earliest of equals). A file that defines one name several times holds
    /// `@overload` stubs before the implementation, a getter before its setter, overloads
    /// and per-platform variants: the longest is the one whose body a caller reads.
    pub fn by_qualname(&self, qualname: &str) -> Option<usize> {
        let hits = self.equal_range(&self.by_qualname, |r| r.qualname, qualname);
        let file = self.rows[*hits.first()? as usize].file;
        hits.iter()
            .map(|&i| i as usize)
            .filter(|&i| self.rows[i].file == file)
            .max_by_key(|&i| (self.rows[i].end_line - self.rows[i].line, Reverse(i)))
    }

    /// The skeleton signature of the last definition with this id.
    pub fn signature_of_id(&self, id: &str) -> Option<&str> {
        let hits = self.equal_range(&self.by_id, |r| r.id, id);
        hits.last()
            .map(|&i| self.s(self.rows[i as usize].signature))
    }

    /// The row span `[start, end)` of `file`'s definitions.
    pub fn file_span(&self, file: &str) -> Option<(usize, usize)> {
        let i = self
            .files
            .binary_search_by(|e| self.s(e.0).cmp(file))
            .ok()?;
        let (_, a, b) = self.files[i];
        Some((a as usize, b as usize))
    }

    /// For each row, the row of `old` it repeats, when its file is one of `unchanged` (the
    /// files whose text a refresh left as it was) and that file's rows are the same in both
    /// tables (qualname, kind, line span, in order); `None` for every other row. What was
    /// derived from such a row and its file's text (its BM25 document) can be carried over.
    pub fn carried_rows<'a>(
        &self,
        old: &DefTable,
        unchanged: impl IntoIterator<Item = &'a str>,
    ) -> Vec<Option<u32>> {
        let mut out = vec![None; self.rows.len()];
        for file in unchanged {
            let (Some((a, b)), Some((oa, ob))) = (self.file_span(file), old.file_span(file)) else {
                continue;
            };
            let same = b - a == ob - oa
                && (0..b - a).all(|k| {
                    let (x, y) = (self.get(a + k), old.get(oa + k));
                    x.zip(y).is_some_and(|(x, y)| {
                        (x.qualname, x.kind, x.line, x.end_line)
                            == (y.qualname, y.kind, y.line, y.end_line)
                    })
                });
            if same {
                for k in 0..b - a {
                    out[a + k] = Some((oa + k) as u32);
                }
            }
        }
        out
    }

    /// The smallest definition of `file` containing `line` (the first of equal sizes, in
    /// row order): where a traceback frame or a search hit lands.
    pub fn innermost(&self, file: &str, line: i64) -> Option<usize> {
        let (a, b) = self.file_span(file)?;
        let mut best: Option<(usize, i64)> = None;
        for i in a..b {
            let r = &self.rows[i];
            if r.line <= line && line <= r.end_line {
                let size = r.end_line - r.line;
                if best.is_none_or(|(_, s)| size < s) {
                    best = Some((i, size));
                }
            }
        }
        best.map(|(i, _)| i)
    }

    /// True when `qualname` is in the name index.
    pub fn has_qualname(&self, qualname: &str) -> bool {
        self.qualnames
            .binary_search_by(|&q| self.s(q).cmp(qualname))
            .is_ok()
    }

    /// The module qualname of `file`.
    pub fn module_of(&self, file: &str) -> Option<&str> {
        let i = self
            .modules
            .binary_search_by(|e| self.s(e.0).cmp(file))
            .ok()?;
        Some(self.s(self.modules[i].1))
    }

    /// The files that have definitions, sorted.
    pub fn files(&self) -> impl Iterator<Item = &str> {
        self.files.iter().map(|e| self.s(e.0))
    }

    /// Every distinct definition name as a symbol set (for BM25's identifier weight).
    pub fn symbol_set(&self) -> SymbolSet {
        let mut names: Vec<&str> = self
            .by_name
            .iter()
            .map(|&i| self.s(self.rows[i as usize].name))
            .collect();
        names.dedup();
        SymbolSet::new(names)
    }

    /// The table as bytes for [`DefTable::from_bytes`].
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(
            MAGIC.len() + self.pool.len() + 4 * self.offsets.len() + 64 * self.rows.len(),
        );
        out.extend_from_slice(MAGIC);
        let u32s = |out: &mut Vec<u8>, v: u32| out.extend_from_slice(&v.to_le_bytes());
        u32s(&mut out, self.pool.len() as u32);
        out.extend_from_slice(self.pool.as_bytes());
        u32s(&mut out, self.offsets.len() as u32);
        for &o in &self.offsets {
            u32s(&mut out, o);
        }
        u32s(&mut out, self.rows.len() as u32);
        for r in &self.rows {
            for v in [r.id, r.kind, r.name, r.qualname, r.file, r.signature] {
                u32s(&mut out, v);
            }
            for v in [r.line, r.col, r.end_line] {
                out.extend_from_slice(&v.to_le_bytes());
            }
        }
        for order in [&self.by_name, &self.by_qualname, &self.by_id] {
            for &i in order {
                u32s(&mut out, i);
            }
        }
        u32s(&mut out, self.files.len() as u32);
        for &(f, a, b) in &self.files {
            for v in [f, a, b] {
                u32s(&mut out, v);
            }
        }
        u32s(&mut out, self.qualnames.len() as u32);
        for &q in &self.qualnames {
            u32s(&mut out, q);
        }
        u32s(&mut out, self.modules.len() as u32);
        for &(f, m) in &self.modules {
            u32s(&mut out, f);
            u32s(&mut out, m);
        }
        out
    }

    /// A table written by [`DefTable::to_bytes`]. Every index is checked here, so lookups
    /// never panic; malformed or truncated bytes are an `InvalidArgument` error.
    pub fn from_bytes(bytes: &[u8]) -> CoreResult<Self> {
        let bad =
            || CoreError::InvalidArgument("not a ctxfast definition table (or truncated)".into());
        let mut r = Cursor::new(bytes);
        if r.take(MAGIC.len()).ok_or_else(bad)? != MAGIC {
            return Err(bad());
        }
        let pool_len = r.u32().ok_or_else(bad)? as usize;
        let pool = std::str::from_utf8(r.take(pool_len).ok_or_else(bad)?).map_err(|_| bad())?;
        let offsets = r.counted_u32s().ok_or_else(bad)?;
        if offsets.first() != Some(&0)
            || offsets.windows(2).any(|w| w[0] > w[1])
            || offsets.iter().any(|&o| !pool.is_char_boundary(o as usize))
        {
            return Err(bad());
        }
        let n_strings = offsets.len() as u32 - 1;
        let string = |v: u32| (v < n_strings).then_some(v);
        let n_rows = r.u32().ok_or_else(bad)? as usize;
        let mut rows = Vec::with_capacity(n_rows.min(bytes.len() / 48));
        for _ in 0..n_rows {
            let mut s = [0u32; 6];
            for v in &mut s {
                *v = string(r.u32().ok_or_else(bad)?).ok_or_else(bad)?;
            }
            let mut n = [0i64; 3];
            for v in &mut n {
                *v = i64::from_le_bytes(r.take(8).ok_or_else(bad)?.try_into().map_err(|_| bad())?);
            }
            rows.push(Row {
                id: s[0],
                kind: s[1],
                name: s[2],
                qualname: s[3],
                file: s[4],
                signature: s[5],
                line: n[0],
                col: n[1],
                end_line: n[2],
            });
        }
        let mut order = || -> Option<Vec<u32>> {
            let v = r.u32_array(n_rows)?;
            v.iter().all(|&i| (i as usize) < n_rows).then_some(v)
        };
        let by_name = order().ok_or_else(bad)?;
        let by_qualname = order().ok_or_else(bad)?;
        let by_id = order().ok_or_else(bad)?;
        let n_files = r.u32().ok_or_else(bad)? as usize;
        let flat = r
            .u32_array(n_files.checked_mul(3).ok_or_else(bad)?)
            .ok_or_else(bad)?;
        let mut files = Vec::with_capacity(n_files);
        for e in flat.chunks_exact(3) {
            if e[0] >= n_strings || e[1] > e[2] || e[2] as usize > n_rows {
                return Err(bad());
            }
            files.push((e[0], e[1], e[2]));
        }
        let qualnames = r.counted_u32s().ok_or_else(bad)?;
        if qualnames.iter().any(|&q| q >= n_strings) {
            return Err(bad());
        }
        let n_mods = r.u32().ok_or_else(bad)? as usize;
        let flat = r
            .u32_array(n_mods.checked_mul(2).ok_or_else(bad)?)
            .ok_or_else(bad)?;
        if flat.iter().any(|&s| s >= n_strings) {
            return Err(bad());
        }
        let modules = flat.chunks_exact(2).map(|e| (e[0], e[1])).collect();
        if r.pos != bytes.len() {
            return Err(bad());
        }
        Ok(DefTable {
            pool: pool.to_string(),
            offsets,
            rows,
            by_name,
            by_qualname,
            by_id,
            files,
            qualnames,
            modules,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d<'a>(id: &'a str, name: &'a str, qualname: &'a str, file: &'a str, line: i64) -> DefIn<'a> {
        DefIn {
            def: DefRef {
                id,
                kind: "function",
                name,
                qualname,
                file,
                line,
                col: 0,
                end_line: line + 1,
            },
            signature: id,
        }
    }

    fn sample() -> DefTable {
        let defs = [
            d("a.f:1", "f", "a.f", "a.py", 1),
            d("a.g:3", "g", "a.g", "a.py", 3),
            d("a.f:9", "f", "a.f", "a.py", 9),
            d("b.f:1", "f", "b.f", "b.py", 1),
            d("b.f:1", "h", "b.h", "b.py", 5),
        ];
        DefTable::build(
            &defs,
            &["a.f", "a", "a.f", "b"],
            &[("a.py", "a"), ("a.py", "x"), ("b.py", "b")],
        )
        .unwrap()
    }

    #[test]
    fn lookups_answer_as_the_dictionaries_did() {
        let t = sample();
        assert_eq!(t.named("f"), vec![0, 2, 3]);
        assert!(t.named("zz").is_empty());
        assert_eq!(t.by_qualname("a.f"), Some(0));
        let stubs = [
            d("s.f:1", "f", "s.f", "s.py", 1),
            DefIn {
                def: DefRef {
                    end_line: 20,
                    ..d("s.f:5", "f", "s.f", "s.py", 5).def
                },
                signature: "",
            },
            d("t.f:1", "f", "s.f", "t.py", 1),
        ];
        let s = DefTable::build(&stubs, &[], &[]).unwrap();
        assert_eq!(s.by_qualname("s.f"), Some(1)); // the implementation, not the stub above it
        assert_eq!(t.by_qualname("a"), None);
        assert_eq!(t.signature_of_id("b.f:1"), Some("b.f:1"));
        assert_eq!(t.file_span("a.py"), Some((0, 3)));
        assert_eq!(t.file_span("b.py"), Some((3, 5)));
        assert_eq!(t.file_span("c.py"), None);
        assert!(t.has_qualname("a") && t.has_qualname("a.f") && !t.has_qualname("a.g"));
        assert!(t.has_name("h") && !t.has_name("a.f"));
        assert_eq!(t.module_of("a.py"), Some("a"));
        assert_eq!(t.module_of("c.py"), None);
        assert_eq!(t.symbol_set().len(), 3);
        assert_eq!(t.get(4).unwrap().name, "h");
        assert_eq!(t.innermost("a.py", 3), Some(1));
        assert_eq!(t.innermost("b.py", 2), Some(3));
        assert_eq!(t.innermost("a.py", 7), None);
        assert!(t.get(5).is_none());
    }

    #[test]
    fn rows_are_carried_only_from_unchanged_files_with_the_same_rows() {
        let old = sample();
        let defs = [
            d("0.f:1", "f", "0.f", "0.py", 1), // a new file sorts first
            d("a.f:1", "f", "a.f", "a.py", 1),
            d("a.g:3", "g", "a.g", "a.py", 3),
            d("a.f:9", "f", "a.f", "a.py", 9),
            d("b.f:1", "f", "b.f", "b.py", 2), // moved a line down
            d("b.f:1", "h", "b.h", "b.py", 5),
        ];
        let new = DefTable::build(&defs, &[], &[]).unwrap();
        let carried = new.carried_rows(&old, ["0.py", "a.py", "b.py"]);
        assert_eq!(carried, vec![None, Some(0), Some(1), Some(2), None, None]);
        assert_eq!(new.carried_rows(&old, ["b.py"]), vec![None; 6]);
    }

    #[test]
    fn bytes_round_trip_and_reject_damage() {
        let t = sample();
        let bytes = t.to_bytes();
        let back = DefTable::from_bytes(&bytes).unwrap();
        assert_eq!(back.to_bytes(), bytes);
        assert_eq!(back.named("f"), vec![0, 2, 3]);
        for cut in [0, 5, bytes.len() / 2, bytes.len() - 1] {
            assert!(DefTable::from_bytes(&bytes[..cut]).is_err());
        }
        let mut longer = bytes.clone();
        longer.push(0);
        assert!(DefTable::from_bytes(&longer).is_err());
        let empty = DefTable::build(&[], &[], &[]).unwrap();
        let back = DefTable::from_bytes(&empty.to_bytes()).unwrap();
        assert!(back.is_empty() && back.named("f").is_empty() && back.file_span("a").is_none());
    }
}
