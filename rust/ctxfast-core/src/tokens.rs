//! Exact token counting for the OpenAI encodings, with embedded vocabularies.
//!
//! `bpe-openai` (GitHub's rust-gems) ships `cl100k_base` and `o200k_base` inside the crate and
//! reproduces tiktoken's pre-tokenisation, so counts equal `len(tiktoken.encode(text,
//! disallowed_special=()))` without any download. `approx` (ceil(chars/4)) exists only for
//! callers who explicitly ask for an estimate.

use crate::error::{CoreError, CoreResult};
use bpe_openai::Tokenizer;
use rayon::prelude::*;
use rustc_hash::FxHashMap;
use std::cell::RefCell;

/// Pieces up to this many bytes have their token count memoised per thread: source code
/// repeats a small vocabulary of pre-tokenised pieces (` self`, `(`, ` the`), and a hash
/// lookup is several times cheaper than running the BPE on the piece again.
const MEMO_MAX_PIECE: usize = 24;
/// Bound on memoised pieces per thread and encoding (the memo is cleared past it).
const MEMO_MAX_ENTRIES: usize = 1 << 18;

thread_local! {
    static MEMO: RefCell<[FxHashMap<Box<str>, u32>; 2]> = RefCell::new(Default::default());
}

/// Exact count through the pre-tokeniser, with per-thread memoisation of short pieces.
fn count_memo(tok: &Tokenizer, slot: usize, text: &str) -> usize {
    MEMO.with(|memo| {
        let mut memo = memo.borrow_mut();
        let map = &mut memo[slot];
        if map.len() > MEMO_MAX_ENTRIES {
            map.clear();
        }
        let mut total = 0usize;
        for piece in tok.split(text) {
            if piece.len() > MEMO_MAX_PIECE {
                total += tok.bpe.count(piece.as_bytes());
            } else if let Some(&n) = map.get(piece) {
                total += n as usize;
            } else {
                let n = tok.bpe.count(piece.as_bytes());
                map.insert(piece.into(), n as u32);
                total += n;
            }
        }
        total
    })
}

/// A resolved encoding. `Approx` has no vocabulary: it counts `ceil(chars / 4)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Encoding {
    Cl100kBase,
    O200kBase,
    Approx,
}

impl Encoding {
    /// Parses an encoding name as tiktoken spells it.
    pub fn from_name(name: &str) -> CoreResult<Self> {
        match name {
            "cl100k_base" => Ok(Encoding::Cl100kBase),
            "o200k_base" => Ok(Encoding::O200kBase),
            "approx" => Ok(Encoding::Approx),
            other => Err(CoreError::UnknownEncoding(other.to_string())),
        }
    }

    /// The tokenizer behind a real encoding; `None` for `Approx`.
    fn tokenizer(self) -> Option<&'static Tokenizer> {
        match self {
            Encoding::Cl100kBase => Some(bpe_openai::cl100k_base()),
            Encoding::O200kBase => Some(bpe_openai::o200k_base()),
            Encoding::Approx => None,
        }
    }

    fn require_vocab(self, op: &str) -> CoreResult<&'static Tokenizer> {
        self.tokenizer().ok_or_else(|| {
            CoreError::InvalidArgument(format!("{op} needs a real encoding, not 'approx'"))
        })
    }
}

/// `ceil(chars / 4)`, the estimate used only by the `approx` encoding.
fn approx_count(text: &str) -> usize {
    text.chars().count().div_ceil(4)
}

/// Exact number of tokens of `text`.
pub fn count(text: &str, enc: Encoding) -> usize {
    match enc {
        Encoding::Cl100kBase => count_memo(bpe_openai::cl100k_base(), 0, text),
        Encoding::O200kBase => count_memo(bpe_openai::o200k_base(), 1, text),
        Encoding::Approx => approx_count(text),
    }
}

/// Counts many texts in parallel on the rayon pool; order is preserved.
pub fn count_batch(texts: &[String], enc: Encoding) -> Vec<usize> {
    texts.par_iter().map(|t| count(t, enc)).collect()
}

/// Token ids of `text` (special-token strings are encoded as ordinary text).
pub fn encode(text: &str, enc: Encoding) -> CoreResult<Vec<u32>> {
    Ok(enc.require_vocab("encode")?.encode(text))
}

/// Text of `tokens`; fails when the ids are out of range or the bytes are not UTF-8.
pub fn decode(tokens: &[u32], enc: Encoding) -> CoreResult<String> {
    let tok = enc.require_vocab("decode")?;
    let vocab = tok.bpe.num_tokens() as u32;
    if let Some(bad) = tokens.iter().find(|&&t| t >= vocab) {
        return Err(CoreError::Decode(format!(
            "token id {bad} is outside the vocabulary (size {vocab})"
        )));
    }
    tok.decode(tokens)
        .ok_or_else(|| CoreError::Decode("token ids do not decode to valid UTF-8".into()))
}

/// True when `text` has at most `max_tokens` tokens. Stops counting once the limit is
/// passed, so it is cheap on huge inputs.
pub fn fits(text: &str, max_tokens: usize, enc: Encoding) -> bool {
    match enc {
        Encoding::Approx => {
            // Stop walking chars once the estimate passes the limit.
            let limit_chars = max_tokens.saturating_mul(4);
            text.chars().nth(limit_chars).is_none()
        }
        _ => scan_until(text, max_tokens, enc).is_none(),
    }
}

/// A byte offset past which no head of `text` can have at most `max_tokens` tokens: the end
/// of the first pre-tokenised piece at which the running count passes the limit. Lets budget
/// fitting work on the head of a huge text instead of all of it. `text.len()` when the whole
/// text fits.
pub fn head_bound(text: &str, max_tokens: usize, enc: Encoding) -> usize {
    if enc == Encoding::Approx {
        return text
            .char_indices()
            .nth(max_tokens.saturating_mul(4).saturating_add(1))
            .map_or(text.len(), |(i, _)| i);
    }
    scan_until(text, max_tokens, enc).unwrap_or(text.len())
}

/// (end offset, running token count) after each pre-tokenised piece of `text`, stopping at
/// the first piece that takes the count past `max_tokens` (so the last entry is the head
/// bound, or the whole text when it fits). Empty for `approx` and for an empty text.
pub fn piece_prefix_counts(text: &str, max_tokens: usize, enc: Encoding) -> Vec<(usize, usize)> {
    let Some(tok) = enc.tokenizer() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let (mut end, mut total) = (0usize, 0usize);
    for piece in tok.split(text) {
        end += piece.len();
        total += count(piece, enc);
        out.push((end, total));
        if total > max_tokens {
            break;
        }
    }
    out
}

/// Walks the pre-tokenised pieces summing memoised counts; returns the end offset of the piece
/// at which the running count first exceeds `max_tokens`, or `None` if the text fits.
fn scan_until(text: &str, max_tokens: usize, enc: Encoding) -> Option<usize> {
    let tok = enc.tokenizer()?;
    let mut total = 0usize;
    let mut end = 0usize;
    for piece in tok.split(text) {
        end += piece.len();
        total += count(piece, enc);
        if total > max_tokens {
            return Some(end);
        }
    }
    None
}

/// Byte offsets at which each token of `text` ends (for cutting on token boundaries).
pub fn token_ends(text: &str, enc: Encoding) -> CoreResult<Vec<usize>> {
    let tok = enc.require_vocab("token boundaries")?;
    let mut ends = Vec::new();
    let mut offset = 0usize;
    for piece in tok.split(text) {
        for id in tok.bpe.encode_via_backtracking(piece.as_bytes()) {
            offset += tok.bpe.token_len(id);
            ends.push(offset);
        }
    }
    Ok(ends)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_counts() {
        assert_eq!(count("hello world", Encoding::Cl100kBase), 2);
        assert_eq!(count("", Encoding::Cl100kBase), 0);
        assert_eq!(count("abcde", Encoding::Approx), 2);
        // "<|endoftext|>" is ordinary text, not the special token.
        assert!(count("<|endoftext|>", Encoding::Cl100kBase) > 1);
    }

    #[test]
    fn encode_decode_roundtrip() {
        for enc in [Encoding::Cl100kBase, Encoding::O200kBase] {
            let text = "fn main() { println!(\"héllo 世界 🎉\"); }\n\n  \t x";
            let ids = encode(text, enc).unwrap();
            assert_eq!(ids.len(), count(text, enc));
            assert_eq!(decode(&ids, enc).unwrap(), text);
        }
    }

    #[test]
    fn decode_rejects_out_of_range() {
        assert!(matches!(
            decode(&[u32::MAX], Encoding::Cl100kBase),
            Err(CoreError::Decode(_))
        ));
    }

    #[test]
    fn fits_matches_count() {
        let text = "the quick brown fox jumps over the lazy dog ".repeat(50);
        let n = count(&text, Encoding::Cl100kBase);
        assert!(fits(&text, n, Encoding::Cl100kBase));
        assert!(!fits(&text, n - 1, Encoding::Cl100kBase));
        assert!(fits("abcd", 1, Encoding::Approx));
        assert!(!fits("abcde", 1, Encoding::Approx));
    }

    #[test]
    fn token_ends_cover_text() {
        let text = "héllo wörld 🎉🎉";
        let ends = token_ends(text, Encoding::O200kBase).unwrap();
        assert_eq!(*ends.last().unwrap(), text.len());
        assert_eq!(ends.len(), count(text, Encoding::O200kBase));
    }

    #[test]
    fn unknown_encoding() {
        assert!(Encoding::from_name("p50k").is_err());
    }
}
