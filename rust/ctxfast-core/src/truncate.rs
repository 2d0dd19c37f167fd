//! Budget fitting: the longest head of a text that, with an elision marker appended, fits a
//! token budget.
//!
//! The naive approach adds one word at a time and re-counts (O(w²)); here the cut points are
//! enumerated once and the longest fitting one is found by binary search, so a 50,000-word
//! section needs about 17 counts. Only candidates that were verified to fit are returned, so
//! the budget holds even if BPE counts were ever non-monotone in the prefix length.

use crate::error::{CoreError, CoreResult};
use crate::tokens::{self, Encoding};

/// Where a truncated head may end.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cut {
    /// After the last character of a word (before whitespace).
    Word,
    /// At the end of a line (before its newline).
    Line,
    /// On a token boundary that is also a character boundary.
    Token,
}

impl Cut {
    pub fn from_name(name: &str) -> CoreResult<Self> {
        match name {
            "word" => Ok(Cut::Word),
            "line" => Ok(Cut::Line),
            "token" => Ok(Cut::Token),
            other => Err(CoreError::InvalidArgument(format!(
                "unknown cut {other:?}; expected 'word', 'line' or 'token'"
            ))),
        }
    }
}

/// Byte offsets (ascending, starting with 0, all `< text.len()`) where a head may end.
pub fn cut_points(text: &str, cut: Cut, enc: Encoding) -> CoreResult<Vec<usize>> {
    let mut points = vec![0usize];
    match cut {
        Cut::Word => {
            let mut prev_word = false;
            for (i, ch) in text.char_indices() {
                if ch.is_whitespace() && prev_word {
                    points.push(i);
                }
                prev_word = !ch.is_whitespace();
            }
        }
        Cut::Line => {
            points.extend(
                text.char_indices()
                    .filter(|&(i, ch)| ch == '\n' && i > 0)
                    .map(|(i, _)| i),
            );
        }
        Cut::Token => {
            if enc == Encoding::Approx {
                points.extend(text.char_indices().skip(1).map(|(i, _)| i));
            } else {
                points.extend(
                    tokens::token_ends(text, enc)?
                        .into_iter()
                        .filter(|&e| e > 0 && e < text.len() && text.is_char_boundary(e)),
                );
            }
        }
    }
    points.dedup();
    Ok(points)
}

/// The longest head of `text` ending at a `cut` point such that `head + elision` has at most
/// `max_tokens` tokens. `text` is returned unchanged when it already fits; an empty string
/// when not even the elision marker fits.
pub fn truncate_to_tokens(
    text: &str,
    max_tokens: usize,
    enc: Encoding,
    elision: &str,
    cut: Cut,
) -> CoreResult<String> {
    // One scan of the head gives both "does it fit" and the per-piece running counts that
    // guide the cut. Cut points past the head bound cannot fit, so only the head is
    // enumerated (a huge section costs what its first `max_tokens` tokens cost); the full
    // list is built only in the rare case that the last head point still fits.
    let prefix = tokens::piece_prefix_counts(text, max_tokens, enc);
    let head_end = match (enc, prefix.last()) {
        (Encoding::Approx, _) if tokens::fits(text, max_tokens, enc) => return Ok(text.to_string()),
        (Encoding::Approx, _) => tokens::head_bound(text, max_tokens, enc),
        (_, None) => return Ok(text.to_string()),
        (_, Some(&(_, total))) if total <= max_tokens => return Ok(text.to_string()),
        (_, Some(&(end, _))) => end,
    };
    let mut bound = head_end.saturating_add(64);
    while bound < text.len() && !text.is_char_boundary(bound) {
        bound += 1;
    }
    let head = &text[..bound.min(text.len())];
    let mut points = cut_points(head, cut, enc)?;
    let candidate = |end: usize| -> String {
        let mut s = String::with_capacity(end + elision.len());
        s.push_str(&text[..end]);
        s.push_str(elision);
        s
    };
    let fits_at = |idx: usize| tokens::fits(&candidate(points[idx]), max_tokens, enc);
    if !fits_at(0) {
        return Ok(String::new());
    }
    if head.len() < text.len() && fits_at(points.len() - 1) {
        points = cut_points(text, cut, enc)?;
    }
    let fits_at = |idx: usize| tokens::fits(&candidate(points[idx]), max_tokens, enc);
    let top = points.len() - 1;
    // Guess the cut from per-piece running counts (exact whenever the cut is a piece
    // boundary, as word and line ends are), then confirm it with a few exact checks.
    if let Some(idx) = guided_cut(
        text, &prefix, &points, top, max_tokens, enc, elision, &fits_at,
    ) {
        return Ok(candidate(points[idx]));
    }
    // Invariant: points[lo] fits; every index > hi is known not to fit.
    let (mut lo, mut hi) = (0usize, top);
    while lo < hi {
        let mid = lo + (hi - lo).div_ceil(2);
        if fits_at(mid) {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    Ok(candidate(points[lo]))
}

/// Steps allowed around the estimate before falling back to binary search.
const GUIDE_STEPS: usize = 6;

/// The longest fitting index in `points[..=top]`, found from an estimate and confirmed
/// exactly: `points[idx]` fits and `points[idx + 1]` (if within `top`) does not. `None` when
/// the estimate is too far off to confirm within [`GUIDE_STEPS`] checks.
#[allow(clippy::too_many_arguments)]
fn guided_cut(
    text: &str,
    prefix: &[(usize, usize)],
    points: &[usize],
    top: usize,
    max_tokens: usize,
    enc: Encoding,
    elision: &str,
    fits_at: &dyn Fn(usize) -> bool,
) -> Option<usize> {
    if prefix.is_empty() {
        return None;
    }
    let elision_cost = tokens::count(elision, enc);
    let estimate = |p: usize| -> usize {
        let k = prefix.partition_point(|&(end, _)| end <= p);
        let (end, cum) = if k == 0 { (0, 0) } else { prefix[k - 1] };
        cum + if p > end {
            tokens::count(&text[end..p], enc)
        } else {
            0
        } + elision_cost
    };
    let mut idx = points[..=top]
        .partition_point(|&p| estimate(p) <= max_tokens)
        .saturating_sub(1);
    let mut steps = 0;
    while !fits_at(idx) {
        if idx == 0 || steps == GUIDE_STEPS {
            return None;
        }
        idx -= 1;
        steps += 1;
    }
    while idx < top && fits_at(idx + 1) {
        if steps == GUIDE_STEPS {
            return None;
        }
        idx += 1;
        steps += 1;
    }
    Some(idx)
}

#[cfg(test)]
mod tests {
    use super::*;

    const E: &str = " […]";

    #[test]
    fn unchanged_when_fits() {
        let t = "short text";
        assert_eq!(
            truncate_to_tokens(t, 10, Encoding::Cl100kBase, E, Cut::Word).unwrap(),
            t
        );
    }

    #[test]
    fn word_cut_is_longest_fitting_head() {
        let text = "alpha beta gamma delta epsilon zeta eta theta";
        for max in 0..12 {
            let out = truncate_to_tokens(text, max, Encoding::Cl100kBase, E, Cut::Word).unwrap();
            assert!(tokens::count(&out, Encoding::Cl100kBase) <= max);
            if !out.is_empty() && out != text {
                let head = out.strip_suffix(E).unwrap();
                assert!(text.starts_with(head));
                // The next word would not have fit.
                let rest = &text[head.len()..];
                let next_end = rest.trim_start().find(' ').map_or(text.len(), |i| {
                    head.len() + (rest.len() - rest.trim_start().len()) + i
                });
                if next_end < text.len() {
                    let longer = format!("{}{}", &text[..next_end], E);
                    assert!(tokens::count(&longer, Encoding::Cl100kBase) > max);
                }
            }
        }
    }

    #[test]
    fn never_splits_utf8() {
        let text = "🎉".repeat(100);
        for max in 0..30 {
            let out = truncate_to_tokens(&text, max, Encoding::Cl100kBase, E, Cut::Token).unwrap();
            assert!(tokens::count(&out, Encoding::Cl100kBase) <= max);
        }
    }

    #[test]
    fn line_cut_ends_before_newline() {
        let text = "line one\nline two\nline three\nline four";
        let out = truncate_to_tokens(text, 8, Encoding::Cl100kBase, E, Cut::Line).unwrap();
        let head = out.strip_suffix(E).unwrap();
        assert!(text[head.len()..].starts_with('\n'));
    }

    #[test]
    fn empty_when_elision_does_not_fit() {
        let out = truncate_to_tokens("a b c d e f", 0, Encoding::Cl100kBase, E, Cut::Word).unwrap();
        assert_eq!(out, "");
    }
}
