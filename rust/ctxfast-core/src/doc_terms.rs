//! Documents tokenised once and kept as term counts, to assemble many small BM25 indexes
//! over selections of them.
//!
//! Retrieval re-ranks each query's few hundred candidate definitions with a BM25 index of
//! their own (idf and length normalisation over the candidates, not the repository).
//! Tokenising the candidates' text (≈400 KB on Django) was most of that index's cost, and a
//! repository's candidates recur from query to query: each document here is tokenised once,
//! its term counts kept, and an index over any selection of documents is assembled from the
//! counts. The index scores exactly as [`Bm25Index::build_shared`] over the same texts:
//! scores depend on the term frequencies and document lengths, never on term ids.

use crate::bm25::{Bm25Index, Bm25Params, Doc, FxMap, Run, SymbolSet};
use crate::error::{CoreError, CoreResult};
use rayon::prelude::*;
use std::sync::Arc;

/// One document's `(term id, frequency)` pairs and its token count.
#[derive(Debug)]
struct Counted {
    counts: Vec<(u32, u32)>,
    len: u32,
}

/// A growing store of tokenised documents with one vocabulary.
#[derive(Debug, Default)]
pub struct DocTerms {
    vocab: FxMap<String, u32>,
    terms: Vec<String>,
    docs: Vec<Counted>,
}

impl DocTerms {
    pub fn new() -> Self {
        Self::default()
    }

    /// Number of documents stored.
    pub fn len(&self) -> usize {
        self.docs.len()
    }

    pub fn is_empty(&self) -> bool {
        self.docs.is_empty()
    }

    /// Tokenises `texts` with the code tokenizer (runs of them in parallel) and stores
    /// them; returns their document ids, in order.
    pub fn add(&mut self, texts: Vec<String>) -> CoreResult<Vec<u32>> {
        if self.docs.len() + texts.len() > u32::MAX as usize {
            return Err(CoreError::InvalidArgument("too many documents".into()));
        }
        let docs: Vec<Doc> = texts.into_iter().map(Doc::Text).collect();
        let run = (docs.len() / (4 * rayon::current_num_threads())).clamp(16, 4096);
        let runs: Vec<Run> = docs.par_chunks(run).map(Run::count).collect();
        let mut ids = Vec::with_capacity(docs.len());
        for r in runs {
            let global: Vec<u32> = r
                .terms
                .into_iter()
                .map(|t| {
                    let next = self.terms.len() as u32;
                    *self.vocab.entry(t).or_insert_with_key(|t| {
                        self.terms.push(t.clone());
                        next
                    })
                })
                .collect();
            for (counts, len) in r.docs.into_iter().zip(r.lens) {
                ids.push(self.docs.len() as u32);
                let counts = counts
                    .into_iter()
                    .map(|(local, tf)| (global[local as usize], tf))
                    .collect();
                self.docs.push(Counted { counts, len });
            }
        }
        Ok(ids)
    }

    /// The BM25 index over the documents `ids` (document `i` of the index is `ids[i]`).
    pub fn index(
        &self,
        ids: &[u32],
        params: Bm25Params,
        symbols: Arc<SymbolSet>,
    ) -> CoreResult<Bm25Index> {
        let mut local: FxMap<u32, u32> = FxMap::default();
        let mut vocab: FxMap<String, u32> = FxMap::default();
        let mut postings: Vec<Vec<(u32, u32)>> = Vec::new();
        let mut doc_len = Vec::with_capacity(ids.len());
        for (di, &id) in ids.iter().enumerate() {
            let doc = self
                .docs
                .get(id as usize)
                .ok_or_else(|| CoreError::InvalidArgument(format!("no stored document {id}")))?;
            for &(term, tf) in &doc.counts {
                let slot = *local.entry(term).or_insert_with(|| {
                    let next = postings.len() as u32;
                    vocab.insert(self.terms[term as usize].clone(), next);
                    postings.push(Vec::new());
                    next
                });
                postings[slot as usize].push((di as u32, tf));
            }
            doc_len.push(doc.len);
        }
        Bm25Index::from_postings(vocab, postings, doc_len, params, symbols)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bm25::Query;

    fn texts(docs: &[&str]) -> Vec<String> {
        docs.iter().map(ToString::to_string).collect()
    }

    /// An index over stored documents scores bit for bit as one built from their texts,
    /// whatever order and batches the documents were stored in.
    #[test]
    fn a_selection_scores_as_an_index_built_from_its_texts() {
        let corpus = [
            "def parse_header(self, raw):\n    return raw.split(':')",
            "class HttpResponse:\n    status_code = 200",
            "django/http/response.py HttpResponse parse",
            "",
            "def render(self):\n    return self.template.render(self.context)",
        ];
        let mut store = DocTerms::new();
        let first = store.add(texts(&corpus[3..])).unwrap();
        let rest = store.add(texts(&corpus[..3])).unwrap();
        assert_eq!(store.len(), 5);
        let by_text: Vec<u32> = [rest[0], rest[1], rest[2], first[0], first[1]].to_vec();
        let symbols = Arc::new(SymbolSet::new(["parse_header", "HttpResponse"]));
        let params = Bm25Params::default();
        for pick in [vec![0usize, 1, 2, 3, 4], vec![4, 2, 0], vec![1]] {
            let ids: Vec<u32> = pick.iter().map(|&i| by_text[i]).collect();
            let got = store
                .index(&ids, params.clone(), Arc::clone(&symbols))
                .unwrap();
            let docs: Vec<Doc> = pick.iter().map(|&i| Doc::Text(corpus[i].into())).collect();
            let want =
                Bm25Index::build_shared(&docs, params.clone(), Arc::clone(&symbols)).unwrap();
            for q in [
                "parse header response",
                "HttpResponse render self",
                "nothing",
            ] {
                let q = Query::Text(q.into());
                let (a, b) = (got.scores(&q), want.scores(&q));
                assert_eq!(
                    a.iter().map(|s| s.to_bits()).collect::<Vec<_>>(),
                    b.iter().map(|s| s.to_bits()).collect::<Vec<_>>()
                );
            }
            assert_eq!(got.avgdl().to_bits(), want.avgdl().to_bits());
            assert_eq!(got.idf("parse"), want.idf("parse"));
            assert_eq!(got.term_weight("parse_header"), 3.0);
        }
    }

    #[test]
    fn an_unknown_id_and_bad_params_are_errors() {
        let mut store = DocTerms::new();
        assert!(store.is_empty());
        let ids = store.add(texts(&["a b"])).unwrap();
        let symbols = Arc::new(SymbolSet::default());
        assert!(store
            .index(&[ids[0] + 1], Bm25Params::default(), Arc::clone(&symbols))
            .is_err());
        let bad = Bm25Params {
            b: 2.0,
            ..Bm25Params::default()
        };
        assert!(store.index(&ids, bad, symbols).is_err());
    }
}
