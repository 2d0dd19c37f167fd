//! Identifier-weighted BM25, exactly:
//!
//! ```text
//! score(d, q) = Σ_{t ∈ q∩d} w(t) · idf(t) · tf(t,d)·(k1+1) / (tf(t,d) + k1·(1 − b + b·|d|/avgdl))
//! idf(t)      = ln( (N − n(t) + 0.5) / (n(t) + 0.5) + 1 )
//! w(t)        = symbol_weight (3.0) if t matches [A-Za-z_][A-Za-z0-9_]* and t ∈ symbols, else 1.0
//! ```
//!
//! `q∩d` is a set: a query term counts once however often the query repeats it (the formula
//! above, and what keeps a pasted log from multiplying one term's weight). `N` is the number
//! of documents, `|d|` a document's token count and `avgdl` their mean. Symbol membership is
//! tested on the ASCII-lowercased token against the lowercased symbol set, because the code
//! tokenizer lowercases every token. The `+1` inside the log keeps every idf positive, so a
//! document matching any query term has a positive score.
//!
//! Results are ordered by score descending, then document index ascending: equal scores never
//! reorder between runs or between the single and the batch query.

use crate::codetok;
use crate::cursor::Cursor;
use crate::error::{CoreError, CoreResult};
use rayon::prelude::*;
use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::Arc;

/// A small multiply-rotate hasher (the FxHash recipe) for the vocabulary: term lookups are
/// the hot loop of both building and querying, and SipHash's DoS resistance buys nothing
/// for an index the caller builds over its own corpus.
#[derive(Default, Clone, Copy)]
pub(crate) struct FxHasher(u64);

const FX_SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

impl FxHasher {
    #[inline]
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(FX_SEED);
    }
}

impl Hasher for FxHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            self.add(u64::from_le_bytes(c.try_into().expect("8-byte chunk")));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut buf = [0u8; 8];
            buf[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(buf));
        }
    }

    #[inline]
    fn write_u8(&mut self, i: u8) {
        self.add(u64::from(i));
    }

    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }
}

pub(crate) type FxMap<K, V> = HashMap<K, V, BuildHasherDefault<FxHasher>>;

/// A document as given by the caller: raw text (tokenised by [`codetok::tokenize`]) or an
/// already tokenised list used verbatim. Tokens are any `AsRef<str>`, so a binding can lend
/// its own strings instead of copying every token.
#[derive(Clone, Debug)]
pub enum Doc<S = String> {
    Text(String),
    Tokens(Vec<S>),
}

/// The parameters of the score; the defaults are the common BM25 `k1 = 1.5`, `b = 0.75` and
/// the identifier weight 3.0 of the formula above.
#[derive(Clone, Debug)]
pub struct Bm25Params {
    pub k1: f64,
    pub b: f64,
    pub symbol_weight: f64,
}

impl Default for Bm25Params {
    fn default() -> Self {
        Bm25Params {
            k1: 1.5,
            b: 0.75,
            symbol_weight: 3.0,
        }
    }
}

impl Bm25Params {
    fn validate(&self) -> CoreResult<()> {
        let bad = |what: &str, v: f64| {
            Err(CoreError::InvalidArgument(format!(
                "BM25 {what} must be finite and {}, got {v}",
                match what {
                    "b" => "in [0, 1]",
                    "symbol_weight" => "> 0",
                    _ => ">= 0",
                }
            )))
        };
        if !(self.k1.is_finite() && self.k1 >= 0.0) {
            return bad("k1", self.k1);
        }
        if !(self.b.is_finite() && (0.0..=1.0).contains(&self.b)) {
            return bad("b", self.b);
        }
        if !(self.symbol_weight.is_finite() && self.symbol_weight > 0.0) {
            return bad("symbol_weight", self.symbol_weight);
        }
        Ok(())
    }
}

/// A query: raw text (tokenised like documents) or a token list used verbatim.
#[derive(Clone, Debug)]
pub enum Query {
    Text(String),
    Tokens(Vec<String>),
}

/// True when `t` matches `[A-Za-z_][A-Za-z0-9_]*` in full.
pub fn is_identifier(t: &str) -> bool {
    let mut bytes = t.bytes();
    match bytes.next() {
        Some(c) if c.is_ascii_alphabetic() || c == b'_' => {}
        _ => return false,
    }
    bytes.all(|c| c.is_ascii_alphanumeric() || c == b'_')
}

/// The name index behind `w(t)`: symbols lowercased once, shareable by many indexes.
///
/// A repository's name index holds tens of thousands of names; converting and lowercasing
/// it for every index built (retrieval builds one per query over its candidates) cost more
/// than scoring. Build it once and share it through an [`Arc`].
#[derive(Debug, Default)]
pub struct SymbolSet(HashSet<String>);

impl SymbolSet {
    pub fn new<S: AsRef<str>>(names: impl IntoIterator<Item = S>) -> Self {
        SymbolSet(
            names
                .into_iter()
                .map(|s| s.as_ref().to_ascii_lowercase())
                .collect(),
        )
    }

    /// True when the (already lowercased) token is a symbol.
    pub fn contains_lowercased(&self, token: &str) -> bool {
        self.0.contains(token)
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// First bytes of [`Bm25Index::to_bytes`]: a format tag with its version.
const MAGIC: &[u8] = b"ctxfast-bm25\x02";

/// Per term: (document, term frequency), documents ascending.
///
/// A built index holds them as vectors. A loaded one keeps the stored bytes and reads a
/// term's pairs in place when a query asks for that term: a fresh process answers one
/// query, which touches a few dozen of the index's hundred thousand terms, so decoding every
/// list into its own vector was most of the cost of opening a stored index.
#[derive(Debug)]
enum Postings {
    Owned(Vec<Vec<(u32, u32)>>),
    /// `bytes` as stored; per term, the offset of its first `(doc, tf)` pair (8 bytes,
    /// little-endian `u32`s) and the number of pairs, and the byte range of the term itself.
    /// Terms are stored sorted, so a term's id is found by binary search in place (no
    /// vocabulary map of a hundred thousand strings is built per load).
    Packed {
        bytes: Vec<u8>,
        spans: Vec<(usize, u32)>,
        terms: Vec<(usize, usize)>,
    },
}

impl Postings {
    /// Number of documents containing term `id`.
    fn doc_count(&self, id: usize) -> usize {
        match self {
            Postings::Owned(p) => p[id].len(),
            Postings::Packed { spans, .. } => spans[id].1 as usize,
        }
    }

    fn num_terms(&self) -> usize {
        match self {
            Postings::Owned(p) => p.len(),
            Postings::Packed { spans, .. } => spans.len(),
        }
    }

    /// Calls `f(doc, tf)` for every posting of term `id`, documents ascending.
    #[inline]
    fn for_each(&self, id: usize, mut f: impl FnMut(u32, u32)) {
        match self {
            Postings::Owned(p) => p[id].iter().for_each(|&(d, tf)| f(d, tf)),
            Postings::Packed { bytes, spans, .. } => {
                let (start, n) = spans[id];
                for pair in bytes[start..start + 8 * n as usize].chunks_exact(8) {
                    let d = u32::from_le_bytes(pair[..4].try_into().expect("4 bytes"));
                    let tf = u32::from_le_bytes(pair[4..].try_into().expect("4 bytes"));
                    f(d, tf);
                }
            }
        }
    }
}

/// An immutable inverted index over a fixed corpus.
#[derive(Debug)]
pub struct Bm25Index {
    params: Bm25Params,
    vocab: FxMap<String, u32>,
    postings: Postings,
    idf: Vec<f64>,
    doc_len: Vec<u32>,
    /// Per document: `k1·(1 − b + b·|d|/avgdl)`, precomputed once.
    doc_norm: Vec<f64>,
    avgdl: f64,
    symbols: Arc<SymbolSet>,
}

/// A run of consecutive documents counted on one thread: its terms in first-occurrence
/// order, and per document its `(term, frequency)` pairs (terms as positions in `terms`)
/// and its token count.
pub(crate) struct Run {
    pub(crate) terms: Vec<String>,
    pub(crate) docs: Vec<Vec<(u32, u32)>>,
    pub(crate) lens: Vec<u32>,
}

impl Run {
    pub(crate) fn count<S: AsRef<str>>(docs: &[Doc<S>]) -> Run {
        let mut local: FxMap<String, u32> = FxMap::default();
        let mut out = Run {
            terms: Vec::new(),
            docs: Vec::with_capacity(docs.len()),
            lens: Vec::with_capacity(docs.len()),
        };
        let mut ids: Vec<u32> = Vec::new();
        for doc in docs {
            ids.clear();
            let mut add = |t: &str| {
                let id = if let Some(&id) = local.get(t) {
                    id
                } else {
                    let id = local.len() as u32;
                    local.insert(t.to_string(), id);
                    id
                };
                ids.push(id);
            };
            match doc {
                Doc::Text(t) => codetok::for_each_token(t, &mut add),
                Doc::Tokens(ts) => ts.iter().for_each(|t| add(t.as_ref())),
            }
            // Sorted ids turn term-frequency counting into run lengths.
            ids.sort_unstable();
            out.docs.push(
                ids.chunk_by(|a, b| a == b)
                    .map(|same| (same[0], same.len() as u32))
                    .collect(),
            );
            out.lens.push(ids.len() as u32);
        }
        out.terms = vec![String::new(); local.len()];
        for (t, id) in local {
            out.terms[id as usize] = t;
        }
        out
    }

    /// Moves this run's terms into a corpus vocabulary (a term new to it gets the next id
    /// and an empty postings list); the corpus id of each of the run's terms, by local id.
    pub(crate) fn merge_terms(
        &mut self,
        vocab: &mut FxMap<String, u32>,
        postings: &mut Vec<Vec<(u32, u32)>>,
    ) -> Vec<u32> {
        std::mem::take(&mut self.terms)
            .into_iter()
            .map(|t| {
                let next = postings.len() as u32;
                *vocab.entry(t).or_insert_with(|| {
                    postings.push(Vec::new());
                    next
                })
            })
            .collect()
    }
}

impl Bm25Index {
    /// Builds the index; text documents are tokenised in parallel.
    pub fn build<S: AsRef<str> + Sync>(
        docs: &[Doc<S>],
        params: Bm25Params,
        symbols: &[String],
    ) -> CoreResult<Self> {
        Self::build_shared(docs, params, Arc::new(SymbolSet::new(symbols)))
    }

    /// [`Bm25Index::build`] with a prebuilt, shared symbol set.
    ///
    /// Runs of documents are counted in parallel, each into a vocabulary of its own in
    /// first-occurrence order (a token is looked up in place and copied only when new); the
    /// runs are then merged in document order. A term's id is the order of its first
    /// occurrence in the corpus either way — the terms new in a run come after every term of
    /// the runs before it, in the run's own order — so the index is the one a single pass
    /// builds, term ids and postings included.
    pub fn build_shared<S: AsRef<str> + Sync>(
        docs: &[Doc<S>],
        params: Bm25Params,
        symbols: Arc<SymbolSet>,
    ) -> CoreResult<Self> {
        params.validate()?;
        if docs.len() > u32::MAX as usize {
            return Err(CoreError::InvalidArgument("too many documents".into()));
        }
        let run = (docs.len() / (4 * rayon::current_num_threads())).clamp(16, 4096);
        let runs: Vec<Run> = docs.par_chunks(run).map(Run::count).collect();
        let mut vocab: FxMap<String, u32> = FxMap::default();
        let mut postings: Vec<Vec<(u32, u32)>> = Vec::new();
        let mut doc_len = Vec::with_capacity(docs.len());
        let mut di = 0u32;
        for mut r in runs {
            let ids = r.merge_terms(&mut vocab, &mut postings);
            for (counts, len) in r.docs.iter().zip(r.lens) {
                for &(local, tf) in counts {
                    postings[ids[local as usize] as usize].push((di, tf));
                }
                doc_len.push(len);
                di += 1;
            }
        }
        Ok(Self::assemble(
            vocab,
            Postings::Owned(postings),
            doc_len,
            params,
            symbols,
        ))
    }

    /// The index from counted parts: a term's postings are `(document, frequency)` pairs,
    /// documents ascending, and `doc_len` holds every document's token count. Scores are
    /// those of [`Bm25Index::build_shared`] over the same documents whatever the term ids.
    pub(crate) fn from_postings(
        vocab: FxMap<String, u32>,
        postings: Vec<Vec<(u32, u32)>>,
        doc_len: Vec<u32>,
        params: Bm25Params,
        symbols: Arc<SymbolSet>,
    ) -> CoreResult<Self> {
        params.validate()?;
        Ok(Self::assemble(
            vocab,
            Postings::Owned(postings),
            doc_len,
            params,
            symbols,
        ))
    }

    /// The index over a corpus that shares documents with this one, without tokenising the
    /// shared ones again: document `i` of the result is this index's document `keep[i]` when
    /// that is `Some`, else the next of `new_docs` (counted as [`Bm25Index::build`] counts
    /// them). It scores exactly as an index built over the new corpus (same parameters, the
    /// given symbols): the kept documents' postings are carried over, a term left in no
    /// document is dropped, and the statistics are recomputed. A refresh that changed a few
    /// files re-counts those files instead of the whole repository.
    pub fn spliced<S: AsRef<str> + Sync>(
        &self,
        keep: &[Option<u32>],
        new_docs: &[Doc<S>],
        symbols: Arc<SymbolSet>,
    ) -> CoreResult<Self> {
        let bad = |what: &str| CoreError::InvalidArgument(format!("BM25 splice: {what}"));
        if keep.len() > u32::MAX as usize {
            return Err(bad("too many documents"));
        }
        let mut old_to_new = vec![u32::MAX; self.num_docs()];
        let mut doc_len = Vec::with_capacity(keep.len());
        let mut fresh: Vec<u32> = Vec::with_capacity(new_docs.len());
        for (i, k) in keep.iter().enumerate() {
            let Some(old) = *k else {
                fresh.push(i as u32);
                doc_len.push(0);
                continue;
            };
            let slot = old_to_new
                .get_mut(old as usize)
                .ok_or_else(|| bad("kept document out of range"))?;
            if *slot != u32::MAX {
                return Err(bad("a document kept twice"));
            }
            *slot = i as u32;
            doc_len.push(self.doc_len[old as usize]);
        }
        if fresh.len() != new_docs.len() {
            return Err(bad("one new document per unkept position is needed"));
        }
        let mut vocab: FxMap<String, u32> = FxMap::default();
        let mut postings: Vec<Vec<(u32, u32)>> = Vec::new();
        for (id, term) in self.term_strings().into_iter().enumerate() {
            let mut list = Vec::new();
            self.postings.for_each(id, |d, tf| {
                let to = old_to_new[d as usize];
                if to != u32::MAX {
                    list.push((to, tf));
                }
            });
            if !list.is_empty() {
                vocab.insert(term.to_string(), postings.len() as u32);
                postings.push(list);
            }
        }
        let mut counted = Run::count(new_docs);
        let ids = counted.merge_terms(&mut vocab, &mut postings);
        for ((counts, len), &d) in counted.docs.iter().zip(counted.lens).zip(&fresh) {
            doc_len[d as usize] = len;
            for &(local, tf) in counts {
                postings[ids[local as usize] as usize].push((d, tf));
            }
        }
        for list in &mut postings {
            if !list.is_sorted_by_key(|&(d, _)| d) {
                list.sort_unstable_by_key(|&(d, _)| d);
            }
        }
        Self::from_postings(vocab, postings, doc_len, self.params.clone(), symbols)
    }

    /// Every term, by id.
    fn term_strings(&self) -> Vec<&str> {
        let mut terms: Vec<&str> = vec![""; self.postings.num_terms()];
        match &self.postings {
            Postings::Owned(_) => {
                for (t, &id) in &self.vocab {
                    terms[id as usize] = t;
                }
            }
            Postings::Packed { .. } => {
                for (id, t) in terms.iter_mut().enumerate() {
                    *t = self.stored_term(id);
                }
            }
        }
        terms
    }

    /// The index from its counted parts; the derived statistics (`avgdl`, idf, the length
    /// norms) are computed here, the same way for a build and for a load.
    fn assemble(
        vocab: FxMap<String, u32>,
        postings: Postings,
        doc_len: Vec<u32>,
        params: Bm25Params,
        symbols: Arc<SymbolSet>,
    ) -> Self {
        let n = doc_len.len() as f64;
        let total: u64 = doc_len.iter().map(|&l| u64::from(l)).sum();
        let avgdl = if doc_len.is_empty() {
            0.0
        } else {
            total as f64 / n
        };
        let idf = (0..postings.num_terms())
            .map(|id| {
                let nt = postings.doc_count(id) as f64;
                ((n - nt + 0.5) / (nt + 0.5) + 1.0).ln()
            })
            .collect();
        let doc_norm = doc_len
            .iter()
            .map(|&l| {
                let rel = if avgdl > 0.0 {
                    f64::from(l) / avgdl
                } else {
                    0.0
                };
                params.k1 * (1.0 - params.b + params.b * rel)
            })
            .collect();
        Bm25Index {
            params,
            vocab,
            postings,
            idf,
            doc_len,
            doc_norm,
            avgdl,
            symbols,
        }
    }

    /// The index as bytes for [`Bm25Index::from_bytes`]: the parameters, document lengths,
    /// and every term with its postings (the symbol set is not included; the loader passes
    /// it). Lets a process that opens an unchanged corpus skip tokenising it again.
    pub fn to_bytes(&self) -> Vec<u8> {
        let terms = self.term_strings();
        let n_terms = terms.len();
        // Sorted by term, so a load can find terms by binary search.
        let mut order: Vec<usize> = (0..n_terms).collect();
        order.sort_unstable_by(|&a, &b| terms[a].cmp(terms[b]));
        let pairs: usize = (0..n_terms).map(|id| self.postings.doc_count(id)).sum();
        let mut out = Vec::with_capacity(64 + 4 * self.doc_len.len() + 8 * pairs);
        out.extend_from_slice(MAGIC);
        for v in [self.params.k1, self.params.b, self.params.symbol_weight] {
            out.extend_from_slice(&v.to_le_bytes());
        }
        let u32s = |out: &mut Vec<u8>, v: u32| out.extend_from_slice(&v.to_le_bytes());
        u32s(&mut out, self.doc_len.len() as u32);
        for &l in &self.doc_len {
            u32s(&mut out, l);
        }
        u32s(&mut out, terms.len() as u32);
        for id in order {
            let t = terms[id];
            u32s(&mut out, t.len() as u32);
            out.extend_from_slice(t.as_bytes());
            u32s(&mut out, self.postings.doc_count(id) as u32);
            self.postings.for_each(id, |d, tf| {
                u32s(&mut out, d);
                u32s(&mut out, tf);
            });
        }
        out
    }

    /// An index written by [`Bm25Index::to_bytes`], scoring exactly as the original did
    /// (the derived statistics are recomputed by the same code). Malformed or truncated
    /// bytes are an `InvalidArgument` error, never a panic.
    pub fn from_bytes(bytes: &[u8], symbols: Arc<SymbolSet>) -> CoreResult<Self> {
        let bad = || CoreError::InvalidArgument("not a ctxfast BM25 index (or truncated)".into());
        let mut r = Cursor::new(bytes);
        if r.take(MAGIC.len()).ok_or_else(bad)? != MAGIC {
            return Err(bad());
        }
        let mut f = [0.0f64; 3];
        for v in &mut f {
            *v = f64::from_le_bytes(r.take(8).ok_or_else(bad)?.try_into().map_err(|_| bad())?);
        }
        let params = Bm25Params {
            k1: f[0],
            b: f[1],
            symbol_weight: f[2],
        };
        params.validate()?;
        let n_docs = r.u32().ok_or_else(bad)? as usize;
        let mut doc_len = Vec::with_capacity(n_docs.min(bytes.len() / 4));
        for _ in 0..n_docs {
            doc_len.push(r.u32().ok_or_else(bad)?);
        }
        let n_terms = r.u32().ok_or_else(bad)? as usize;
        let mut spans = Vec::with_capacity(n_terms.min(bytes.len() / 8));
        let mut terms: Vec<(usize, usize)> = Vec::with_capacity(n_terms.min(bytes.len() / 8));
        let mut prev: Option<&[u8]> = None;
        for _ in 0..n_terms {
            let len = r.u32().ok_or_else(bad)? as usize;
            let term_start = r.pos;
            let term = r.take(len).ok_or_else(bad)?;
            std::str::from_utf8(term).map_err(|_| bad())?;
            // Strictly ascending: sorted (binary search is sound) and without repeats.
            if prev.is_some_and(|p| p >= term) {
                return Err(bad());
            }
            prev = Some(term);
            let n = r.u32().ok_or_else(bad)?;
            let start = r.pos;
            let pairs = r.take((n as usize).checked_mul(8).ok_or_else(bad)?);
            // Checked once here, so a query can read the pairs in place.
            for pair in pairs.ok_or_else(bad)?.chunks_exact(8) {
                if u32::from_le_bytes(pair[..4].try_into().map_err(|_| bad())?) as usize >= n_docs {
                    return Err(bad());
                }
            }
            terms.push((term_start, len));
            spans.push((start, n));
        }
        if r.pos != bytes.len() {
            return Err(bad());
        }
        let postings = Postings::Packed {
            bytes: bytes.to_vec(),
            spans,
            terms,
        };
        Ok(Self::assemble(
            FxMap::default(),
            postings,
            doc_len,
            params,
            symbols,
        ))
    }

    /// Term `id` of a loaded index (checked UTF-8 at load).
    fn stored_term(&self, id: usize) -> &str {
        match &self.postings {
            Postings::Packed { bytes, terms, .. } => {
                let (a, n) = terms[id];
                std::str::from_utf8(&bytes[a..a + n]).expect("checked at load")
            }
            Postings::Owned(_) => unreachable!("built indexes keep their vocabulary"),
        }
    }

    /// The id of `term`, if indexed: a map lookup for a built index, a binary search over
    /// the sorted stored terms for a loaded one.
    fn term_id(&self, term: &str) -> Option<u32> {
        match &self.postings {
            Postings::Owned(_) => self.vocab.get(term).copied(),
            Postings::Packed { bytes, terms, .. } => terms
                .binary_search_by(|&(a, n)| bytes[a..a + n].cmp(term.as_bytes()))
                .ok()
                .map(|i| i as u32),
        }
    }

    pub fn num_docs(&self) -> usize {
        self.doc_len.len()
    }

    pub fn avgdl(&self) -> f64 {
        self.avgdl
    }

    pub fn vocab_size(&self) -> usize {
        self.postings.num_terms()
    }

    pub fn doc_len(&self, doc: usize) -> Option<u32> {
        self.doc_len.get(doc).copied()
    }

    /// `idf(t)` for an indexed term; `None` if no document contains it.
    pub fn idf(&self, term: &str) -> Option<f64> {
        self.term_id(term).map(|id| self.idf[id as usize])
    }

    /// `w(t)` (the symbol weight) for a query term.
    pub fn term_weight(&self, term: &str) -> f64 {
        if is_identifier(term) && self.symbols.contains_lowercased(&term.to_ascii_lowercase()) {
            self.params.symbol_weight
        } else {
            1.0
        }
    }

    /// Distinct indexed query terms with their weights, in first-occurrence order.
    fn query_terms(&self, q: &Query) -> Vec<(u32, f64)> {
        let owned;
        let toks: &[String] = match q {
            Query::Text(t) => {
                owned = codetok::tokenize(t);
                &owned
            }
            Query::Tokens(ts) => ts,
        };
        let mut seen = HashSet::new();
        let mut out = Vec::new();
        for t in toks {
            if let Some(id) = self.term_id(t.as_str()) {
                if seen.insert(id) {
                    out.push((id, self.term_weight(t)));
                }
            }
        }
        out
    }

    /// Adds each term's contribution into `acc`; returns the documents touched.
    fn accumulate(&self, terms: &[(u32, f64)], acc: &mut [f64], touched: &mut Vec<u32>) {
        let k1p1 = self.params.k1 + 1.0;
        for &(id, w) in terms {
            let wi = w * self.idf[id as usize];
            self.postings.for_each(id as usize, |d, tf| {
                let tf = f64::from(tf);
                let slot = &mut acc[d as usize];
                if *slot == 0.0 {
                    touched.push(d);
                }
                *slot += wi * (tf * k1p1) / (tf + self.doc_norm[d as usize]);
            });
        }
    }

    /// Score of every document (0.0 where no query term occurs), in document order.
    pub fn scores(&self, q: &Query) -> Vec<f64> {
        let terms = self.query_terms(q);
        let mut acc = vec![0.0; self.num_docs()];
        let mut touched = Vec::new();
        self.accumulate(&terms, &mut acc, &mut touched);
        acc
    }

    /// The `k` best documents with a positive score, ordered by (score desc, index asc).
    pub fn query(&self, q: &Query, k: usize) -> Vec<(usize, f64)> {
        let mut acc = vec![0.0; self.num_docs()];
        self.query_with(q, k, &mut acc, &mut Vec::new())
    }

    /// [`Bm25Index::query`] with caller-owned scratch buffers (`acc` all zeros, length N),
    /// which are left zeroed again for the next query.
    fn query_with(
        &self,
        q: &Query,
        k: usize,
        acc: &mut [f64],
        touched: &mut Vec<u32>,
    ) -> Vec<(usize, f64)> {
        if k == 0 || self.num_docs() == 0 {
            return Vec::new();
        }
        let terms = self.query_terms(q);
        touched.clear();
        self.accumulate(&terms, acc, touched);
        let mut hits: Vec<(usize, f64)> = touched
            .iter()
            .map(|&d| {
                let s = std::mem::take(&mut acc[d as usize]);
                (d as usize, s)
            })
            .collect();
        let cmp = |a: &(usize, f64), b: &(usize, f64)| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0));
        if hits.len() > k {
            hits.select_nth_unstable_by(k - 1, cmp);
            hits.truncate(k);
        }
        hits.sort_unstable_by(cmp);
        hits
    }

    /// [`Bm25Index::query`] for many queries in parallel; results in query order.
    pub fn query_batch(&self, qs: &[Query], k: usize) -> Vec<Vec<(usize, f64)>> {
        let n = self.num_docs();
        qs.par_iter()
            .map_init(
                || (vec![0.0; n], Vec::new()),
                |(acc, touched), q| self.query_with(q, k, acc, touched),
            )
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    fn index(docs: &[&str], symbols: &[&str]) -> Bm25Index {
        let docs: Vec<Doc> = docs.iter().map(|d| Doc::Tokens(toks(d))).collect();
        let symbols: Vec<String> = symbols.iter().map(ToString::to_string).collect();
        Bm25Index::build(&docs, Bm25Params::default(), &symbols).unwrap()
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-12 * b.abs().max(1.0)
    }

    /// Corpus: d0 = [foo bar foo] (|d|=3), d1 = [bar baz] (2), d2 = [qux] (1); avgdl = 2, N = 3.
    #[test]
    fn known_vector_unweighted() {
        let ix = index(&["foo bar foo", "bar baz", "qux"], &[]);
        assert!(close(ix.avgdl(), 2.0));
        // idf(foo): n=1 → ln((3-1+0.5)/(1+0.5)+1) = ln(2.5/1.5 + 1) = ln(8/3)
        let idf_foo = (8.0f64 / 3.0).ln();
        // idf(bar): n=2 → ln((3-2+0.5)/(2+0.5)+1) = ln(0.6 + 1) = ln(1.6)
        let idf_bar = 1.6f64.ln();
        assert!(close(ix.idf("foo").unwrap(), idf_foo));
        assert!(close(ix.idf("bar").unwrap(), idf_bar));
        // d0: norm = 1.5·(0.25 + 0.75·3/2) = 1.5·1.375 = 2.0625
        // foo: tf=2 → 2·2.5/(2+2.0625) = 5/4.0625; bar: tf=1 → 2.5/3.0625
        let d0 = idf_foo * 5.0 / 4.0625 + idf_bar * 2.5 / 3.0625;
        // d1: norm = 1.5·(0.25 + 0.75·1) = 1.5; bar: 2.5/2.5 = 1
        let d1 = idf_bar * 1.0;
        let got = ix.query(&Query::Tokens(toks("foo bar")), 10);
        assert_eq!(got.len(), 2);
        assert_eq!(got[0].0, 0);
        assert!(close(got[0].1, d0), "{} vs {d0}", got[0].1);
        assert_eq!(got[1].0, 1);
        assert!(close(got[1].1, d1));
        // A repeated query term counts once (q∩d is a set).
        let again = ix.query(&Query::Tokens(toks("foo foo bar bar")), 10);
        assert_eq!(again, got);
    }

    #[test]
    fn symbol_tokens_weigh_three_times() {
        // "foo" is a symbol; "foo.bar" is in the symbol set but is not an identifier token.
        let ix = index(&["foo x", "y foo.bar", "z w"], &["FOO", "foo.bar"]);
        assert_eq!(ix.term_weight("foo"), 3.0);
        assert_eq!(ix.term_weight("foo.bar"), 1.0);
        assert_eq!(ix.term_weight("x"), 1.0);
        // N=3, every doc |d|=2=avgdl → norm = 1.5; tf=1 → 2.5/2.5 = 1; n=1 → idf = ln(8/3)
        let idf = (8.0f64 / 3.0).ln();
        let got = ix.query(&Query::Tokens(toks("foo foo.bar")), 5);
        assert_eq!(got.len(), 2);
        assert_eq!(got[0].0, 0);
        assert!(close(got[0].1, 3.0 * idf));
        assert!(close(got[1].1, idf));
        // One shared set serves several indexes with the same weights as a per-index list.
        let shared = Arc::new(SymbolSet::new(["FOO", "foo.bar"]));
        let docs: Vec<Doc> = ["foo x", "y foo.bar", "z w"]
            .iter()
            .map(|d| Doc::Tokens(toks(d)))
            .collect();
        for _ in 0..2 {
            let ix2 =
                Bm25Index::build_shared(&docs, Bm25Params::default(), Arc::clone(&shared)).unwrap();
            assert_eq!(ix2.query(&Query::Tokens(toks("foo foo.bar")), 5), got);
        }
        assert_eq!(Arc::strong_count(&shared), 1);
    }

    #[test]
    fn ties_break_by_index_and_k_truncates() {
        let ix = index(&["a", "b a", "a", "c"], &[]);
        let got = ix.query(&Query::Tokens(toks("a")), 2);
        assert_eq!(got.iter().map(|h| h.0).collect::<Vec<_>>(), [0, 2]);
        assert!(ix.query(&Query::Tokens(toks("a")), 0).is_empty());
        assert!(ix.query(&Query::Tokens(toks("missing")), 5).is_empty());
        let all = ix.query(&Query::Tokens(toks("a")), 99);
        assert_eq!(all.iter().map(|h| h.0).collect::<Vec<_>>(), [0, 2, 1]);
    }

    #[test]
    fn text_docs_use_code_tokenizer_and_batch_matches_single() {
        let docs: Vec<Doc> = vec![
            Doc::Text("def remember(self, text): self._ensure_open()".into()),
            Doc::Text("class MemStore: pass".into()),
        ];
        let ix = Bm25Index::build(&docs, Bm25Params::default(), &[]).unwrap();
        let q1 = Query::Text("MemStore remember".into());
        let q2 = Query::Text("ensure open".into());
        let single = vec![ix.query(&q1, 5), ix.query(&q2, 5)];
        assert_eq!(ix.query_batch(&[q1, q2], 5), single);
        assert_eq!(single[1][0].0, 0);
        let scores = ix.scores(&Query::Text("memstore".into()));
        assert_eq!(scores[0], 0.0);
        assert!(scores[1] > 0.0);
    }

    #[test]
    fn bytes_round_trip_scores_identically_and_bad_bytes_are_errors() {
        let ix = index(&["foo bar foo", "bar baz", "qux", ""], &["foo"]);
        let bytes = ix.to_bytes();
        let back = Bm25Index::from_bytes(&bytes, Arc::clone(&ix.symbols)).unwrap();
        assert_eq!(back.to_bytes(), bytes);
        for q in ["foo", "bar baz", "qux foo", "nothing"] {
            let q = Query::Tokens(toks(q));
            let (a, b) = (ix.scores(&q), back.scores(&q));
            assert_eq!(
                a.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
                b.iter().map(|x| x.to_bits()).collect::<Vec<_>>()
            );
        }
        assert_eq!(back.term_weight("foo"), 3.0);
        let empty = index(&[], &[]);
        assert_eq!(
            Bm25Index::from_bytes(&empty.to_bytes(), Arc::default())
                .unwrap()
                .num_docs(),
            0
        );
        for cut in [0, 5, bytes.len() / 2, bytes.len() - 1] {
            assert!(Bm25Index::from_bytes(&bytes[..cut], Arc::default()).is_err());
        }
        let mut longer = bytes.clone();
        longer.push(0);
        assert!(Bm25Index::from_bytes(&longer, Arc::default()).is_err());
    }

    #[test]
    fn a_loaded_index_finds_every_term_in_its_sorted_table() {
        // Terms first seen in non-sorted order, so ids and sorted positions differ.
        let ix = index(
            &["zeta alpha", "mid zeta", "alpha beta zeta", "omega"],
            &["zeta"],
        );
        let back = Bm25Index::from_bytes(&ix.to_bytes(), Arc::clone(&ix.symbols)).unwrap();
        assert_eq!(back.vocab_size(), ix.vocab_size());
        for t in ["alpha", "beta", "mid", "omega", "zeta", "absent", "", "zz"] {
            assert_eq!(
                back.idf(t).map(f64::to_bits),
                ix.idf(t).map(f64::to_bits),
                "{t}"
            );
        }
        let q = Query::Tokens(toks("omega zeta alpha"));
        assert_eq!(back.query(&q, 9), ix.query(&q, 9));
        // Stored terms out of order are refused: the binary search would be unsound.
        let one = index(&["b a"], &[]).to_bytes();
        let (ia, ib) = (
            one.windows(5).position(|w| w == b"\x01\0\0\0a").unwrap(),
            one.windows(5).position(|w| w == b"\x01\0\0\0b").unwrap(),
        );
        let mut swapped = one.clone();
        swapped[ia + 4] = b'b';
        swapped[ib + 4] = b'a';
        assert!(Bm25Index::from_bytes(&swapped, Arc::default()).is_err());
    }

    #[test]
    fn a_loaded_index_ranks_as_the_built_one_and_rejects_a_bad_document() {
        let ix = index(&["foo bar foo", "bar baz", "qux bar", "foo"], &["foo"]);
        let bytes = ix.to_bytes();
        let back = Bm25Index::from_bytes(&bytes, Arc::clone(&ix.symbols)).unwrap();
        let qs: Vec<Query> = ["foo", "bar", "baz qux foo", "none"]
            .iter()
            .map(|q| Query::Tokens(toks(q)))
            .collect();
        assert_eq!(back.query_batch(&qs, 3), ix.query_batch(&qs, 3));
        for q in &qs {
            assert_eq!(back.query(q, 2), ix.query(q, 2));
        }
        assert_eq!(
            (back.vocab_size(), back.idf("bar")),
            (ix.vocab_size(), ix.idf("bar"))
        );
        // One document, one term: its single posting's document number is the last pair.
        let one = index(&["a"], &[]).to_bytes();
        let mut bad = one.clone();
        let at = bad.len() - 8;
        bad[at..at + 4].copy_from_slice(&5u32.to_le_bytes());
        assert!(Bm25Index::from_bytes(&one, Arc::default()).is_ok());
        assert!(Bm25Index::from_bytes(&bad, Arc::default()).is_err());
    }

    /// Every score, idf and statistic of `a` and `b` over the words of `corpus`, exactly.
    fn same_scores(a: &Bm25Index, b: &Bm25Index, corpus: &[&str]) {
        assert_eq!(
            (a.num_docs(), a.vocab_size()),
            (b.num_docs(), b.vocab_size())
        );
        assert_eq!(a.avgdl().to_bits(), b.avgdl().to_bits());
        for word in corpus
            .iter()
            .flat_map(|d| d.split_whitespace())
            .chain(["gone"])
        {
            assert_eq!(a.idf(word).map(f64::to_bits), b.idf(word).map(f64::to_bits));
            let q = Query::Tokens(vec![word.to_string(), "bar".to_string()]);
            let bits = |v: Vec<f64>| v.into_iter().map(f64::to_bits).collect::<Vec<_>>();
            assert_eq!(bits(a.scores(&q)), bits(b.scores(&q)), "{word}");
            assert_eq!(a.query(&q, 3), b.query(&q, 3));
        }
    }

    #[test]
    fn a_spliced_index_scores_as_one_built_over_the_new_corpus() {
        let old = ["foo bar foo", "bar baz gone", "qux", "Bar quux"];
        let new = ["foo bar foo", "baz zap", "Bar quux", "qux", "new bar"];
        let symbols: Vec<String> = vec!["foo".into(), "zap".into()];
        let built = index(&new, &["foo", "zap"]);
        let set = Arc::new(SymbolSet::new(&symbols));
        let tokens = |d: &str| Doc::Tokens(toks(d));
        let keep = [Some(0), None, Some(3), Some(2), None];
        let fresh: Vec<Doc> = ["baz zap", "new bar"].into_iter().map(tokens).collect();
        let from_built = index(&old, &["foo"]);
        let loaded = Bm25Index::from_bytes(&from_built.to_bytes(), set.clone()).unwrap();
        for source in [&from_built, &loaded] {
            let spliced = source.spliced(&keep, &fresh, set.clone()).unwrap();
            same_scores(&spliced, &built, &new);
            assert_eq!(spliced.idf("gone"), None); // its only document was replaced
            let reloaded = Bm25Index::from_bytes(&spliced.to_bytes(), set.clone()).unwrap();
            same_scores(&reloaded, &built, &new);
        }
        let text = |d: &str| Doc::<String>::Text(d.to_string());
        let texts = ["fn parse_header(x) {}", "struct Header;", "parse header"];
        let whole = Bm25Index::build(&texts.map(text), Bm25Params::default(), &symbols).unwrap();
        let head = Bm25Index::build(
            &texts[..1].iter().map(|t| text(t)).collect::<Vec<_>>(),
            Bm25Params::default(),
            &symbols,
        )
        .unwrap();
        let grown = head
            .spliced(
                &[Some(0), None, None],
                &[text(texts[1]), text(texts[2])],
                set.clone(),
            )
            .unwrap();
        let q = Query::Text("parse Header".into());
        assert_eq!(grown.query(&q, 3), whole.query(&q, 3));
    }

    #[test]
    fn a_splice_that_does_not_fit_is_an_error() {
        let ix = index(&["a b", "c"], &[]);
        let none: [Doc; 0] = [];
        let set = Arc::new(SymbolSet::new(Vec::<String>::new()));
        for keep in [&[Some(2)][..], &[Some(0), Some(0)], &[None]] {
            assert!(ix.spliced(keep, &none, set.clone()).is_err(), "{keep:?}");
        }
    }

    #[test]
    fn empty_corpus_and_empty_docs() {
        let ix = index(&[], &[]);
        assert!(ix.query(&Query::Tokens(toks("a")), 3).is_empty());
        let ix = index(&["", ""], &[]);
        assert_eq!(ix.avgdl(), 0.0);
        assert!(ix.query(&Query::Tokens(toks("a")), 3).is_empty());
    }

    #[test]
    fn invalid_params_are_errors() {
        for p in [
            Bm25Params {
                k1: -1.0,
                ..Default::default()
            },
            Bm25Params {
                b: 1.5,
                ..Default::default()
            },
            Bm25Params {
                symbol_weight: 0.0,
                ..Default::default()
            },
            Bm25Params {
                k1: f64::NAN,
                ..Default::default()
            },
        ] {
            assert!(matches!(
                Bm25Index::build::<String>(&[], p, &[]),
                Err(CoreError::InvalidArgument(_))
            ));
        }
    }
}
