//! Line windows: choose contiguous line ranges of a file that cover the most relevant lines
//! under a token budget.
//!
//! Used for file excerpts (windows around the lines that mention the task's identifiers, so a
//! file is never head-truncated) and for context construction (line windows scored by token
//! overlap with a decision's terms). The inputs are already-scored lines, so the function
//! knows nothing about files, identifiers or tokenizers and is reused by both.
//!
//! # Algorithm (greedy, deterministic)
//! Every line with a positive score is a *seed*. Each round, every not-yet-covered seed
//! proposes its widest window `[i - r, i + r]` (radius `r` from `context` down to 0, clipped
//! to the file) whose *marginal* cost — the tokens of its lines not already selected — fits
//! the remaining budget and that keeps the number of disjoint windows (adjacent or
//! overlapping windows merge) at most `max_windows`. The proposal with the largest marginal
//! score wins; ties go to the smaller marginal cost, then to the earlier start line. Rounds
//! stop when no seed can propose a window. Sums run in ascending line order, so the pure-Python
//! reference (`ctxfast._reference.best_windows`) reproduces the result bit for bit.
//!
//! Cost: O(rounds × seeds × context²) additions; rounds ≤ the number of selected windows.
//!
//! # Fixed-length windows ([`best_fixed_windows`])
//! Context construction cuts a long code body to a window of a fixed number of lines instead
//! (RepoCoder's sliding window): the `k` non-overlapping windows of exactly `window` lines
//! with the largest score sums, chosen one at a time, ties to the earliest start. It is a
//! different selection from the budgeted one above (length is fixed, not tokens), so both
//! live here and each caller picks the one its stage specifies.

use crate::error::{CoreError, CoreResult};

/// A half-open line range `[start, end)` (0-based line indices).
pub type Window = (usize, usize);

/// Chooses non-overlapping, non-adjacent windows, sorted by start, that maximise the covered
/// score (greedily, see the module docs) with `sum(line_tokens[covered]) <= budget` and at most
/// `max_windows` windows.
///
/// `line_tokens[i]` is what line `i` costs when rendered; `line_scores[i] >= 0` is its
/// relevance (0 = only worth including as context around a hit). `context` is the number of
/// lines shown on each side of a seed when the budget allows.
///
/// Errors: the two slices differ in length, or a score is negative or not finite.
pub fn best_windows(
    line_tokens: &[u32],
    line_scores: &[f64],
    budget: u64,
    max_windows: usize,
    context: usize,
) -> CoreResult<Vec<Window>> {
    if line_tokens.len() != line_scores.len() {
        return Err(CoreError::InvalidArgument(format!(
            "line_tokens has {} entries but line_scores has {}",
            line_tokens.len(),
            line_scores.len()
        )));
    }
    if let Some((i, s)) = line_scores
        .iter()
        .enumerate()
        .find(|(_, s)| !s.is_finite() || **s < 0.0)
    {
        return Err(CoreError::InvalidArgument(format!(
            "line_scores[{i}] = {s} is not a finite non-negative number"
        )));
    }
    let n = line_tokens.len();
    // A radius beyond the file length adds nothing; clamping keeps the radius loop bounded.
    let context = context.min(n);
    let seeds: Vec<usize> = (0..n).filter(|&i| line_scores[i] > 0.0).collect();
    let mut selected = vec![false; n];
    let mut used: u64 = 0;
    let mut runs: usize = 0;
    if max_windows == 0 {
        return Ok(Vec::new());
    }
    loop {
        // (gain, cost, start, end, new_runs)
        let mut best: Option<(f64, u64, usize, usize, usize)> = None;
        for &i in &seeds {
            if selected[i] {
                continue;
            }
            let Some(cand) = widest_fitting(
                line_tokens,
                line_scores,
                &selected,
                i,
                context,
                budget - used,
                runs,
                max_windows,
            ) else {
                continue;
            };
            let better = match best {
                None => true,
                Some((g, c, s, _, _)) => {
                    cand.0 > g || (cand.0 == g && (cand.1 < c || (cand.1 == c && cand.2 < s)))
                }
            };
            if better {
                best = Some(cand);
            }
        }
        let Some((_, cost, start, end, new_runs)) = best else {
            break;
        };
        selected[start..end].iter_mut().for_each(|b| *b = true);
        used += cost;
        runs = new_runs;
    }
    Ok(segments(&selected, 0, n))
}

/// The widest window around seed `i` that fits `remaining` tokens and the window cap, as
/// `(marginal gain, marginal cost, start, end, runs after adding it)`.
#[allow(clippy::too_many_arguments)]
fn widest_fitting(
    tokens: &[u32],
    scores: &[f64],
    selected: &[bool],
    i: usize,
    context: usize,
    remaining: u64,
    runs: usize,
    max_windows: usize,
) -> Option<(f64, u64, usize, usize, usize)> {
    let n = tokens.len();
    for r in (0..=context).rev() {
        let start = i.saturating_sub(r);
        let end = (i.saturating_add(r).saturating_add(1)).min(n);
        let mut cost: u64 = 0;
        let mut gain = 0.0f64;
        for j in start..end {
            if !selected[j] {
                cost += u64::from(tokens[j]);
                gain += scores[j];
            }
        }
        if cost > remaining {
            continue;
        }
        let touched = segments(selected, start.saturating_sub(1), (end + 1).min(n)).len();
        let new_runs = runs + 1 - touched;
        if new_runs <= max_windows {
            return Some((gain, cost, start, end, new_runs));
        }
    }
    None
}

/// Maximal runs of `true` in `selected[lo..hi]`, as absolute half-open ranges.
fn segments(selected: &[bool], lo: usize, hi: usize) -> Vec<Window> {
    let mut out = Vec::new();
    let mut open: Option<usize> = None;
    for (j, &sel) in selected.iter().enumerate().take(hi).skip(lo) {
        match (sel, open) {
            (true, None) => open = Some(j),
            (false, Some(s)) => {
                out.push((s, j));
                open = None;
            }
            _ => {}
        }
    }
    if let Some(s) = open {
        out.push((s, hi));
    }
    out
}

/// The `k` best non-overlapping windows of `window` contiguous lines (`window` is clipped to
/// the line count), as `(start, end_exclusive, score)` sorted by start.
///
/// A window scores the sum of its lines' scores. Windows are taken one at a time, each the
/// highest-scoring one that overlaps none taken before (ties go to the earliest start; a
/// window scoring 0 can still be taken). Fewer than `k` come back when no free window is left;
/// none when there are no lines, or `window` or `k` is 0.
pub fn best_fixed_windows(
    line_scores: &[u64],
    window: usize,
    k: usize,
) -> Vec<(usize, usize, u64)> {
    let n = line_scores.len();
    if n == 0 || window == 0 || k == 0 {
        return Vec::new();
    }
    let window = window.min(n);
    let mut prefix = Vec::with_capacity(n + 1);
    prefix.push(0u64);
    for &s in line_scores {
        prefix.push(prefix[prefix.len() - 1] + s);
    }
    let mut taken: Vec<(usize, usize, u64)> = Vec::new();
    for _ in 0..k {
        let mut best: Option<(usize, u64)> = None;
        for i in 0..=(n - window) {
            if taken.iter().any(|&(st, en, _)| i < en && i + window > st) {
                continue;
            }
            let sum = prefix[i + window] - prefix[i];
            if best.is_none_or(|(_, b)| sum > b) {
                best = Some((i, sum));
            }
        }
        let Some((i, sum)) = best else { break };
        taken.push((i, i + window, sum));
    }
    taken.sort_unstable();
    taken
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixed_windows_take_the_best_sum_then_the_best_free_one() {
        let scores = [0, 1, 3, 0, 0, 2, 2, 0];
        assert_eq!(best_fixed_windows(&scores, 2, 1), vec![(1, 3, 4)]);
        assert_eq!(
            best_fixed_windows(&scores, 2, 2),
            vec![(1, 3, 4), (5, 7, 4)]
        );
        // Ties go to the earliest start; a zero-score window is still a window.
        assert_eq!(best_fixed_windows(&[0, 0, 0], 2, 1), vec![(0, 2, 0)]);
        assert_eq!(best_fixed_windows(&[1, 1], 5, 2), vec![(0, 2, 2)]);
    }

    #[test]
    fn fixed_windows_stop_when_nothing_is_free_or_asked() {
        assert_eq!(best_fixed_windows(&[1, 2, 3], 2, 3), vec![(1, 3, 5)]);
        assert!(best_fixed_windows(&[], 2, 1).is_empty());
        assert!(best_fixed_windows(&[1], 0, 1).is_empty());
        assert!(best_fixed_windows(&[1], 1, 0).is_empty());
    }

    fn covered(w: &[Window]) -> Vec<usize> {
        w.iter().flat_map(|&(s, e)| s..e).collect()
    }

    #[test]
    fn single_hit_gets_context_both_sides() {
        let tokens = vec![1; 20];
        let mut scores = vec![0.0; 20];
        scores[10] = 1.0;
        assert_eq!(
            best_windows(&tokens, &scores, 100, 3, 2).unwrap(),
            vec![(8, 13)]
        );
    }

    #[test]
    fn context_shrinks_to_fit_budget() {
        let tokens = vec![1; 20];
        let mut scores = vec![0.0; 20];
        scores[10] = 1.0;
        assert_eq!(
            best_windows(&tokens, &scores, 3, 3, 5).unwrap(),
            vec![(9, 12)]
        );
        assert_eq!(
            best_windows(&tokens, &scores, 1, 3, 5).unwrap(),
            vec![(10, 11)]
        );
        assert!(best_windows(&tokens, &scores, 0, 3, 5).unwrap().is_empty());
    }

    #[test]
    fn budget_is_never_exceeded_and_clusters_win() {
        let tokens = vec![3, 3, 3, 3, 3, 3, 3, 3, 3, 3];
        let scores = vec![1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 0.0];
        let w = best_windows(&tokens, &scores, 9, 3, 1).unwrap();
        let cost: u32 = covered(&w).iter().map(|&j| tokens[j]).sum();
        assert!(cost <= 9);
        // The cluster of three hits beats the lone hit at line 0.
        assert_eq!(w, vec![(6, 9)]);
    }

    #[test]
    fn window_cap_is_respected_and_adjacent_windows_merge() {
        let tokens = vec![1; 30];
        let mut scores = vec![0.0; 30];
        for i in [2, 10, 20, 28] {
            scores[i] = 1.0;
        }
        let w = best_windows(&tokens, &scores, 1000, 2, 1).unwrap();
        assert_eq!(w.len(), 2);
        let mut s2 = vec![0.0; 10];
        s2[3] = 1.0;
        s2[5] = 1.0;
        // [2,5) and [4,7) overlap: one window.
        assert_eq!(
            best_windows(&[1; 10], &s2, 100, 1, 1).unwrap(),
            vec![(2, 7)]
        );
    }

    #[test]
    fn higher_scores_win_under_tight_budget() {
        let tokens = vec![1; 10];
        let mut scores = vec![0.0; 10];
        scores[1] = 1.0;
        scores[7] = 5.0;
        assert_eq!(
            best_windows(&tokens, &scores, 1, 5, 0).unwrap(),
            vec![(7, 8)]
        );
    }

    #[test]
    fn ties_break_to_the_earlier_line() {
        let tokens = vec![1; 10];
        let mut scores = vec![0.0; 10];
        scores[2] = 1.0;
        scores[6] = 1.0;
        assert_eq!(
            best_windows(&tokens, &scores, 1, 5, 0).unwrap(),
            vec![(2, 3)]
        );
    }

    #[test]
    fn no_hits_or_no_windows_yield_nothing() {
        assert!(best_windows(&[1, 1], &[0.0, 0.0], 10, 3, 1)
            .unwrap()
            .is_empty());
        assert!(best_windows(&[1, 1], &[1.0, 1.0], 10, 0, 1)
            .unwrap()
            .is_empty());
        assert!(best_windows(&[], &[], 10, 3, 1).unwrap().is_empty());
    }

    #[test]
    fn bad_input_is_an_error() {
        assert!(best_windows(&[1], &[], 10, 1, 1).is_err());
        assert!(best_windows(&[1], &[-1.0], 10, 1, 1).is_err());
        assert!(best_windows(&[1], &[f64::NAN], 10, 1, 1).is_err());
    }

    #[test]
    fn huge_context_does_not_overflow() {
        let w = best_windows(&[1, 1, 1], &[0.0, 1.0, 0.0], 10, 1, usize::MAX).unwrap();
        assert_eq!(w, vec![(0, 3)]);
    }
}
