//! The in-memory corpus skips the files its trigram filters rule out; this checks on random
//! corpora that it answers exactly as the unfiltered walk-per-search: the same hits, order,
//! line texts, caps and `truncated` flags, whatever the budget (files left on disk are never
//! filtered), with terms cut out of the files and with binary files, byte-order marks and CRLF lines among the files.

use ctxfast_core::lexical::{search, Corpus, LexicalRequest, LexicalResult};
use proptest::prelude::*;
use std::fs;

/// Words the files and the terms are made of, so that terms hit often, rarely or never.
const WORDS: &[&str] = &[
    "foo",
    "bar",
    "baz",
    "self",
    "x",
    "Field",
    "field",
    "_",
    ".",
    "(",
    ")",
    " ",
    "  ",
    "é",
    "ab",
    "abc",
    "\n",
    "\n",
    "\r\n",
    "\0",
    "\t",
    "ValueError",
    "last",
];

/// A file body: words, sometimes behind a byte-order mark, sometimes raw bytes.
fn body() -> impl Strategy<Value = Vec<u8>> {
    let words = proptest::collection::vec(proptest::sample::select(WORDS), 0..200)
        .prop_map(|ws| ws.concat().into_bytes());
    let bom = prop_oneof![
        6 => Just(Vec::new()),
        1 => Just(vec![0xEF, 0xBB, 0xBF]),
        1 => Just(vec![0xFF, 0xFE]),
        1 => Just(vec![0xFE, 0xFF]),
    ];
    prop_oneof![
        8 => (bom, words).prop_map(|(mut b, w)| {
            b.extend(w);
            b
        }),
        1 => proptest::collection::vec(any::<u8>(), 0..300),
    ]
}

/// A term: a few words (some never occur together), without line breaks or NUL.
fn term() -> impl Strategy<Value = String> {
    proptest::collection::vec(proptest::sample::select(WORDS), 1..4).prop_map(|ws| {
        ws.concat()
            .replace(['\n', '\r', '\0'], "")
            .chars()
            .take(12)
            .collect()
    })
}

/// (term, [(path, line, text)], truncated) per term, and the other diagnostics.
fn answer(r: &LexicalResult) -> String {
    let terms: Vec<_> = r
        .terms
        .iter()
        .map(|t| {
            let hits: Vec<_> = t.hits.iter().map(|h| (&h.path, h.line, &h.text)).collect();
            (&t.term, hits, t.truncated)
        })
        .collect();
    format!(
        "{terms:?} {:?} {} {:?}",
        r.skipped_terms, r.files_searched, r.unreadable
    )
}

/// Terms cut out of the files themselves (so they occur, at a file's first and last bytes
/// too), as far as they are UTF-8 without line breaks.
fn cut_terms(files: &[Vec<u8>], picks: &[(usize, usize, usize)]) -> Vec<String> {
    picks
        .iter()
        .filter_map(|&(f, at, len)| {
            let b = &files[f % files.len()];
            let start = at.min(b.len());
            let piece = &b[start..(start + len).min(b.len())];
            let s = std::str::from_utf8(piece).ok()?;
            (!s.is_empty() && !s.contains(['\n', '\r'])).then(|| s.to_string())
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn filtered_corpus_search_equals_the_full_scan(
        files in proptest::collection::vec(body(), 1..40),
        words in proptest::collection::vec(term(), 1..8),
        picks in proptest::collection::vec((0usize..40, prop_oneof![Just(0usize), 0usize..400], 1usize..10), 0..8),
        max_hits in 0usize..12,
        max_line_chars in 1usize..30,
        budget in prop_oneof![Just(u64::MAX), 0u64..4000],
    ) {
        let mut terms = words;
        terms.extend(cut_terms(&files, &picks));
        let d = tempfile::tempdir().unwrap();
        for (i, b) in files.iter().enumerate() {
            let dir = d.path().join(format!("d{}", i % 3));
            fs::create_dir_all(&dir).unwrap();
            fs::write(dir.join(format!("f{i:02}.py")), b).unwrap();
        }
        let mut req = LexicalRequest::new(d.path(), terms.clone());
        req.max_hits = max_hits;
        req.max_line_chars = max_line_chars;
        let full = search(&req).unwrap();
        let corpus = Corpus::load(&req, budget).unwrap();
        let got = corpus.search(&terms, max_hits, max_line_chars).unwrap();
        prop_assert_eq!(answer(&got), answer(&full));
    }
}
