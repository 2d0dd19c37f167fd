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

use crate::cursor::Cursor;
use crate::error::{CoreError, CoreResult};
use rayon::prelude::*;
use rustc_hash::{FxHashMap, FxHasher};
use std::hash::Hasher;

/// What counts as a distinctive line and as a copy (see the module docs).
#[derive(Clone, Copy, Debug)]
pub struct BundleRules {
    pub min_chars: usize,
    pub max_files: usize,
    pub min_distinctive: usize,
    pub held_share: f64,
}

/// First bytes of [`LineSets::to_bytes`]: a format tag with its version.
const MAGIC: &[u8] = b"ctxfast-lines\x01";

/// Each text's distinct line hashes, sorted: what [`held_counts`] compares, kept so that a
/// refresh hashes only the files it changed ([`LineSets::spliced`]) and a later process
/// reads the rest back instead of reading every file again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineSets {
    min_chars: usize,
    sets: Vec<Vec<u64>>,
}

fn line_hashes(text: &str, min_chars: usize) -> Vec<u64> {
    let mut out: Vec<u64> = text
        .lines()
        .map(str::trim)
        .filter(|s| s.len() >= min_chars)
        .map(|s| {
            let mut h = FxHasher::default();
            h.write(s.as_bytes());
            h.finish()
        })
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}

impl LineSets {
    /// The line sets of `texts` (lines of at least `min_chars` bytes), hashed in parallel.
    pub fn of_texts<S: AsRef<str> + Sync>(texts: &[S], min_chars: usize) -> Self {
        LineSets {
            min_chars,
            sets: texts
                .par_iter()
                .map(|t| line_hashes(t.as_ref(), min_chars))
                .collect(),
        }
    }

    /// The line sets of a new list of texts: text `i` is this one's text `keep[i]` when that
    /// is `Some`, else the next of `new_texts` (hashed here).
    pub fn spliced<S: AsRef<str> + Sync>(
        &self,
        keep: &[Option<u32>],
        new_texts: &[S],
    ) -> CoreResult<Self> {
        let fresh = LineSets::of_texts(new_texts, self.min_chars);
        let mut made = fresh.sets.into_iter();
        let mut sets = Vec::with_capacity(keep.len());
        for k in keep {
            let set = match *k {
                Some(old) => self.sets.get(old as usize).cloned(),
                None => made.next(),
            };
            sets.push(set.ok_or_else(|| {
                CoreError::InvalidArgument("line sets splice: keep and texts disagree".into())
            })?);
        }
        if made.next().is_some() {
            return Err(CoreError::InvalidArgument(
                "line sets splice: more texts than new positions".into(),
            ));
        }
        Ok(LineSets {
            min_chars: self.min_chars,
            sets,
        })
    }

    pub fn len(&self) -> usize {
        self.sets.len()
    }

    pub fn is_empty(&self) -> bool {
        self.sets.is_empty()
    }

    pub fn min_chars(&self) -> usize {
        self.min_chars
    }

    /// For each text, how many of the other texts it holds (see the module docs);
    /// `rules.min_chars` is the one the sets were hashed with.
    pub fn held_counts(&self, rules: BundleRules) -> Vec<u32> {
        let lines = &self.sets;
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
        let mut out = vec![0u32; lines.len()];
        for by in held_by {
            for f in by {
                out[f as usize] += 1;
            }
        }
        out
    }

    /// The sets as bytes for [`LineSets::from_bytes`].
    pub fn to_bytes(&self) -> Vec<u8> {
        let total: usize = self.sets.iter().map(Vec::len).sum();
        let mut out = Vec::with_capacity(MAGIC.len() + 8 + 4 * self.sets.len() + 8 * total);
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&(self.min_chars as u32).to_le_bytes());
        out.extend_from_slice(&(self.sets.len() as u32).to_le_bytes());
        for set in &self.sets {
            out.extend_from_slice(&(set.len() as u32).to_le_bytes());
            for h in set {
                out.extend_from_slice(&h.to_le_bytes());
            }
        }
        out
    }

    /// Sets written by [`LineSets::to_bytes`]; malformed or truncated bytes (a set not
    /// strictly ascending included) are an `InvalidArgument` error, never a panic.
    pub fn from_bytes(bytes: &[u8]) -> CoreResult<Self> {
        let bad = || CoreError::InvalidArgument("not ctxfast line sets (or truncated)".into());
        let mut r = Cursor::new(bytes);
        if r.take(MAGIC.len()).ok_or_else(bad)? != MAGIC {
            return Err(bad());
        }
        let min_chars = r.u32().ok_or_else(bad)? as usize;
        let n = r.u32().ok_or_else(bad)? as usize;
        let mut sets = Vec::with_capacity(n.min(bytes.len() / 4));
        for _ in 0..n {
            let len = r.u32().ok_or_else(bad)? as usize;
            let raw = r
                .take(len.checked_mul(8).ok_or_else(bad)?)
                .ok_or_else(bad)?;
            let set: Vec<u64> = raw
                .chunks_exact(8)
                .map(|c| {
                    let mut b = [0u8; 8];
                    b.copy_from_slice(c);
                    u64::from_le_bytes(b)
                })
                .collect();
            if set.windows(2).any(|w| w[0] >= w[1]) {
                return Err(bad());
            }
            sets.push(set);
        }
        if r.pos != bytes.len() {
            return Err(bad());
        }
        Ok(LineSets { min_chars, sets })
    }
}

/// For each text, how many of the other texts it holds (see the module docs).
pub fn held_counts(texts: &[String], rules: BundleRules) -> Vec<u32> {
    LineSets::of_texts(texts, rules.min_chars).held_counts(rules)
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
    fn spliced_sets_count_as_the_texts_hashed_anew_and_round_trip() {
        let parts: Vec<String> = ["alpha", "beta", "gamma", "delta"]
            .iter()
            .map(|n| source(n, 25))
            .collect();
        let old = vec![parts[0].clone(), parts[1].clone(), parts.concat()];
        let new = vec![
            parts[0].clone(),
            parts[3].clone(),
            parts.concat(),
            parts[2].clone(),
        ];
        let before = LineSets::of_texts(&old, RULES.min_chars);
        let after = before
            .spliced(&[Some(0), None, Some(2), None], &[&new[1], &new[3]])
            .unwrap();
        assert_eq!(after, LineSets::of_texts(&new, RULES.min_chars));
        assert_eq!(after.held_counts(RULES), held_counts(&new, RULES));
        assert_eq!(after.held_counts(RULES), vec![0, 0, 3, 0]);
        assert_eq!(LineSets::from_bytes(&after.to_bytes()).unwrap(), after);
        assert!(before.spliced(&[Some(3)], &[] as &[&str]).is_err());
        assert!(before.spliced(&[None], &["a", "b"]).is_err());
        let bytes = after.to_bytes();
        assert!(LineSets::from_bytes(&bytes[..bytes.len() - 1]).is_err());
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
