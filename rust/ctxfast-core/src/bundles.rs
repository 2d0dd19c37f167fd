//! Files that copy other files of the repository whole: an amalgamated single header, a
//! generated all-in-one source, a bundled copy of a vendored library.
//!
//! A file `g` is *held* by a file `f` when at least `held_share` of `g`'s distinctive lines
//! occur in `f` and `f` has at least twice as many lines as `g`. A line is compared
//! stripped of surrounding whitespace; it is distinctive when it has at least `min_chars`
//! bytes and occurs in at most `max_files` texts, so license headers, include guards and
//! boilerplate do not count; a text of fewer than `min_distinctive` distinctive lines is
//! too small to tell a copy from a coincidence and is never counted as held. The size
//! condition keeps apart files that are variants of each other (one routine written once
//! per numeric type): they hold each other's lines but bundle nothing.

use rayon::prelude::*;
use rustc_hash::{FxHashMap, FxHashSet, FxHasher};
use std::hash::Hasher;

/// What counts as a distinctive line and as a copy (see the module docs).
#[derive(Clone, Copy, Debug)]
pub struct BundleRules {
    pub min_chars: usize,
    pub max_files: usize,
    pub min_distinctive: usize,
    pub held_share: f64,
}

fn line_hashes(text: &str, min_chars: usize) -> FxHashSet<u64> {
    text.lines()
        .map(str::trim)
        .filter(|s| s.len() >= min_chars)
        .map(|s| {
            let mut h = FxHasher::default();
            h.write(s.as_bytes());
            h.finish()
        })
        .collect()
}

/// For each text, how many of the other texts it holds (see the module docs).
pub fn held_counts(texts: &[String], rules: BundleRules) -> Vec<u32> {
    let lines: Vec<FxHashSet<u64>> = texts
        .par_iter()
        .map(|t| line_hashes(t, rules.min_chars))
        .collect();
    let mut holders: FxHashMap<u64, Vec<u32>> = FxHashMap::default();
    for (i, own) in lines.iter().enumerate() {
        for &h in own {
            holders.entry(h).or_default().push(i as u32);
        }
    }
    let holders_of = |h: &u64| holders.get(h).map_or(&[][..], Vec::as_slice);
    let held_by: Vec<Vec<u32>> = lines
        .par_iter()
        .enumerate()
        .map(|(g, own)| {
            let distinctive: Vec<&u64> = own
                .iter()
                .filter(|h| holders_of(h).len() <= rules.max_files)
                .collect();
            if distinctive.len() < rules.min_distinctive.max(1) {
                return Vec::new();
            }
            let mut counts: FxHashMap<u32, usize> = FxHashMap::default();
            for h in &distinctive {
                for &f in holders_of(h) {
                    if f as usize != g {
                        *counts.entry(f).or_default() += 1;
                    }
                }
            }
            let need = rules.held_share * distinctive.len() as f64;
            let mut by: Vec<u32> = counts
                .into_iter()
                .filter(|&(f, n)| n as f64 >= need && lines[f as usize].len() >= 2 * own.len())
                .map(|(f, _)| f)
                .collect();
            by.sort_unstable();
            by
        })
        .collect();
    let mut out = vec![0u32; texts.len()];
    for by in held_by {
        for f in by {
            out[f as usize] += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const RULES: BundleRules = BundleRules {
        min_chars: 16,
        max_files: 8,
        min_distinctive: 20,
        held_share: 0.8,
    };

    fn source(name: &str, n: usize) -> String {
        use std::fmt::Write;
        let mut out = String::new();
        for i in 0..n {
            writeln!(
                out,
                "int {name}_step_{i}(struct state *s) {{ return s->{name}_{i}; }}"
            )
            .unwrap();
        }
        out
    }

    #[test]
    fn a_bundle_holds_the_files_it_copies_and_they_hold_nothing() {
        let parts: Vec<String> = ["alpha", "beta", "gamma"]
            .iter()
            .map(|n| source(n, 25))
            .collect();
        let mut texts = parts.clone();
        texts.push(parts.concat());
        assert_eq!(held_counts(&texts, RULES), vec![0, 0, 0, 3]);
    }

    #[test]
    fn variants_of_one_size_hold_each_other_but_count_nothing() {
        let a = source("gemm", 30);
        let texts = vec![a.replace("int ", "float "), a.replace("int ", "double "), a];
        assert_eq!(held_counts(&texts, RULES), vec![0, 0, 0]);
    }

    #[test]
    fn small_and_boilerplate_files_are_never_held() {
        let small = source("tiny", 5);
        let boiler: String = (0..30)
            .map(|_| "// Licensed under the Apache License\n")
            .collect();
        let mut texts = vec![small.clone(), boiler.clone()];
        for i in 0..9 {
            texts.push(format!("{small}{boiler}{}", source(&format!("own{i}"), 40)));
        }
        assert!(held_counts(&texts, RULES).iter().all(|&n| n == 0));
    }
}
