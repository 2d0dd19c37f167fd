//! Normalised content identity: the dedup key of context construction.
//!
//! Two renderings of one fact often differ only in line endings, indentation width or
//! trailing blanks (the same traceback from a test run and from a log; the same definition
//! read through two paths). Dedup must key on the *fact*, so the text is normalised first
//! and only then hashed. The hash is SHA-256 truncated to 128 bits: stable across processes,
//! platforms and versions (unlike `std`'s `DefaultHasher`), and collision-free in practice
//! for a pool of at most a few hundred items.

use rayon::prelude::*;
use sha2::{Digest, Sha256};
use std::fmt::Write as _;

/// Canonical form of `text` for identity purposes.
///
/// `\r\n` and lone `\r` become `\n`; each line has its whitespace runs collapsed to one
/// space and is trimmed at both ends; blank lines are dropped. Indentation is therefore not
/// identity-bearing: a slice re-indented by a renderer is still the same fact.
pub fn normalise(text: &str) -> String {
    let unified = text.replace("\r\n", "\n").replace('\r', "\n");
    let mut out = String::with_capacity(unified.len());
    for line in unified.split('\n') {
        let mut first = true;
        for word in line.split_whitespace() {
            if first {
                if !out.is_empty() {
                    out.push('\n');
                }
                first = false;
            } else {
                out.push(' ');
            }
            out.push_str(word);
        }
    }
    out
}

/// 128-bit hex identity (32 lowercase hex chars) of the normalised `text`.
pub fn content_identity(text: &str) -> String {
    let digest = Sha256::digest(normalise(text).as_bytes());
    let mut hex = String::with_capacity(32);
    for byte in &digest[..16] {
        let _ = write!(hex, "{byte:02x}");
    }
    hex
}

/// Identities of many texts, computed in parallel; output order equals input order.
pub fn content_identity_batch(texts: &[String]) -> Vec<String> {
    texts.par_iter().map(|t| content_identity(t)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_endings_and_spacing_do_not_change_identity() {
        let a = "def f(x):\n    return x\n";
        let b = "def f(x):\r\n\treturn   x  \r\n\r\n";
        assert_eq!(content_identity(a), content_identity(b));
    }

    #[test]
    fn different_words_change_identity() {
        assert_ne!(content_identity("return x"), content_identity("return y"));
        // Line structure is identity-bearing: joining two lines is a different fact.
        assert_ne!(content_identity("a\nb"), content_identity("a b"));
    }

    #[test]
    fn normalise_is_idempotent_and_exact() {
        let n = normalise("  x  =  1 \r\n\r\n y=2\r");
        assert_eq!(n, "x = 1\ny=2");
        assert_eq!(normalise(&n), n);
        assert_eq!(normalise(""), "");
        assert_eq!(normalise(" \n\t\r\n"), "");
    }

    #[test]
    fn identity_is_pinned_and_hex128() {
        let id = content_identity("");
        // SHA-256 of the empty string, first 16 bytes: a fixed, cross-process value.
        assert_eq!(id, "e3b0c44298fc1c149afbf4c8996fb924");
        assert_eq!(content_identity("abc").len(), 32);
    }

    #[test]
    fn batch_matches_single_and_keeps_order() {
        let texts: Vec<String> = (0..100).map(|i| format!("line {i}\n")).collect();
        let batch = content_identity_batch(&texts);
        for (t, h) in texts.iter().zip(&batch) {
            assert_eq!(&content_identity(t), h);
        }
    }
}
