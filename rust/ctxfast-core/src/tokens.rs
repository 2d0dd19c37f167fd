//! Exact token counting for the OpenAI encodings, with embedded vocabularies.
//!
//! `bpe-openai` (GitHub's rust-gems) ships cl100k_base and o200k_base inside the crate and
//! reproduces tiktoken's pre-tokenisation, so counts equal `len(tiktoken.encode(text,
//! disallowed_special=()))` without any download. `approx` (ceil(chars/4)) exists only for
//! callers who explicitly ask for an estimate.

use crate::error::{CoreError, CoreResult};
use bpe_openai::{Normalizable, Tokenizer};
use rayon::prelude::*;

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
    match enc.tokenizer() {
        Some(tok) => tok.count(text),
        None => approx_count(text),
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
    match enc.tokenizer() {
        Some(tok) => {
            let norm = text.normalize(false);
            tok.count_till_limit(&norm, max_tokens).is_some()
        }
        None => {
            // Stop walking chars once the estimate passes the limit.
            let limit_chars = max_tokens.saturating_mul(4);
            text.chars().nth(limit_chars).is_none()
        }
    }
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
