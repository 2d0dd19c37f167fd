//! Personalised PageRank over the repo map's weighted file graph.
//!
//! The repo map ranks files by how central they are to the file reference graph, personalised
//! toward the files a query names. It was written in numpy, and a new process paid about a
//! quarter of a second just to import numpy; here it costs nothing to load. Every stored map
//! was ranked by that numpy code, so this module repeats its arithmetic operation for
//! operation and gives bit-identical scores (hence identical maps):
//!
//! * a node's out-weight and incoming mass are summed one edge at a time in edge order, from
//!   `0.0` (what `np.add.at` and `np.bincount` do);
//! * every element-wise expression keeps the operation order it had in numpy, with no fused
//!   multiply-add (Rust never fuses on its own);
//! * a vector's total is numpy's pairwise sum ([`numpy_sum`]), not a plain left-to-right sum.

use crate::error::{CoreError, CoreResult};

/// The iteration's knobs; [`Default`] is what the repo map uses.
#[derive(Debug, Clone, Copy)]
pub struct Params {
    /// The chance of following an edge rather than jumping back to the personalisation.
    pub damping: f64,
    /// The iteration stops once the L1 change is below `tol * n`.
    pub tol: f64,
    /// The most power-iteration steps taken.
    pub max_iter: usize,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            damping: 0.85,
            tol: 1e-10,
            max_iter: 200,
        }
    }
}

/// The graph's normalised edge weights, computed once: a caller ranking the same graph under
/// many personalisations (the repo map, one per query) pays only the iterations.
#[derive(Debug, Clone)]
pub struct Transitions {
    n: usize,
    src: Vec<usize>,
    dst: Vec<usize>,
    /// Each edge's weight over its source's out-weight (0 where that is not positive).
    norm_w: Vec<f64>,
    /// Nodes with no out-weight, ascending: their mass is spread by the personalisation.
    dangling: Vec<usize>,
}

impl Transitions {
    /// The transitions of `n` nodes joined by directed `(src, dst, weight)` edges; an edge
    /// naming a node outside `0..n` is an error.
    pub fn new(n: usize, edges: &[(usize, usize, f64)]) -> CoreResult<Self> {
        if let Some(&(a, b, _)) = edges.iter().find(|&&(a, b, _)| a >= n || b >= n) {
            return Err(CoreError::InvalidArgument(format!(
                "edge ({a}, {b}) names a node outside 0..{n}"
            )));
        }
        let mut out_weight = vec![0.0_f64; n];
        for &(a, _, w) in edges {
            out_weight[a] += w;
        }
        let norm_w = edges
            .iter()
            .map(|&(a, _, w)| {
                let out = out_weight[a];
                if out > 0.0 {
                    w / out
                } else {
                    0.0
                }
            })
            .collect();
        Ok(Transitions {
            n,
            src: edges.iter().map(|e| e.0).collect(),
            dst: edges.iter().map(|e| e.1).collect(),
            norm_w,
            dangling: (0..n).filter(|&i| out_weight[i] == 0.0).collect(),
        })
    }

    /// Scores summing to 1, one per node. `personalization` lists `(node, weight)` pairs;
    /// nodes outside the graph and weights that are not positive are skipped, and with
    /// nothing left (or nothing given) every node is weighted alike. Dangling nodes hand
    /// their mass out by the personalisation, as networkx does.
    pub fn pagerank(&self, personalization: &[(usize, f64)], params: &Params) -> Vec<f64> {
        let n = self.n;
        if n == 0 {
            return Vec::new();
        }
        let p = self.teleport(personalization);
        let rest = 1.0 - params.damping;
        let limit = params.tol * n as f64;
        let mut x = p.clone();
        let mut new = vec![0.0_f64; n];
        let mut spread = vec![0.0_f64; n];
        let mut gathered = Vec::with_capacity(n);
        for _ in 0..params.max_iter {
            spread.fill(0.0);
            for ((&a, &b), &w) in self.src.iter().zip(&self.dst).zip(&self.norm_w) {
                spread[b] += x[a] * w;
            }
            gathered.clear();
            gathered.extend(self.dangling.iter().map(|&i| x[i]));
            let lost = numpy_sum(&gathered);
            for ((out, &s), &pi) in new.iter_mut().zip(&spread).zip(&p) {
                *out = params.damping * (s + lost * pi) + rest * pi;
            }
            gathered.clear();
            gathered.extend(new.iter().zip(&x).map(|(a, b)| (a - b).abs()));
            let converged = numpy_sum(&gathered) < limit;
            std::mem::swap(&mut x, &mut new);
            if converged {
                break;
            }
        }
        let total = numpy_sum(&x);
        x.iter().map(|v| v / total).collect()
    }

    /// The personalisation as a distribution (uniform when it weighs nothing).
    fn teleport(&self, personalization: &[(usize, f64)]) -> Vec<f64> {
        let n = self.n;
        let uniform = || vec![1.0 / n as f64; n];
        if personalization.is_empty() {
            return uniform();
        }
        let mut p = vec![0.0_f64; n];
        for &(node, weight) in personalization {
            if node < n && weight > 0.0 {
                p[node] += weight;
            }
        }
        let total = numpy_sum(&p);
        if total > 0.0 {
            p.iter().map(|v| v / total).collect()
        } else {
            uniform()
        }
    }
}

/// Rounded exactly as numpy's `a.sum()` of a contiguous float64 vector: the reduction's
/// identity `0.0` plus [`pairwise_sum`] of the whole vector.
pub fn numpy_sum(a: &[f64]) -> f64 {
    0.0 + pairwise_sum(a)
}

/// numpy's pairwise summation (`@TYPE@_pairwise_sum` in `loops_utils.h.src`): fewer than 8
/// values are added left to right from `-0.0`; up to 128 go into 8 interleaved partial sums
/// combined as a tree, then the tail; a longer vector is split near its middle (at a multiple
/// of 8) and the halves summed so.
pub fn pairwise_sum(a: &[f64]) -> f64 {
    const BLOCK: usize = 128;
    let n = a.len();
    if n < 8 {
        a.iter().fold(-0.0, |res, &v| res + v)
    } else if n <= BLOCK {
        let mut r = [0.0_f64; 8];
        r.copy_from_slice(&a[..8]);
        let whole = n - n % 8;
        for chunk in a[8..whole].chunks_exact(8) {
            for (acc, &v) in r.iter_mut().zip(chunk) {
                *acc += v;
            }
        }
        let head = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
        a[whole..].iter().fold(head, |res, &v| res + v)
    } else {
        let half = n / 2;
        let half = half - half % 8;
        pairwise_sum(&a[..half]) + pairwise_sum(&a[half..])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A deterministic stream of values spanning many magnitudes (a plain LCG: no crate).
    fn values(n: usize, seed: u64) -> Vec<f64> {
        let mut s = seed;
        (0..n)
            .map(|_| {
                s = s
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1_442_695_040_888_963_407);
                let unit = (s >> 11) as f64 / (1u64 << 53) as f64;
                unit * 10f64.powi((s % 12) as i32 - 8)
            })
            .collect()
    }

    #[test]
    fn short_sums_run_left_to_right_from_negative_zero() {
        assert_eq!(pairwise_sum(&[]).to_bits(), (-0.0_f64).to_bits());
        assert_eq!(pairwise_sum(&[-0.0, -0.0]).to_bits(), (-0.0_f64).to_bits());
        assert_eq!(numpy_sum(&[-0.0]).to_bits(), 0.0_f64.to_bits());
        let a = [1e16, 1.0, 1.0, -1e16];
        assert_eq!(pairwise_sum(&a), ((1e16 + 1.0) + 1.0) - 1e16);
    }

    #[test]
    fn a_block_uses_eight_partial_sums_then_the_tail() {
        let a = values(21, 3);
        let mut r: Vec<f64> = a[..8].to_vec();
        for (j, v) in a[8..16].iter().enumerate() {
            r[j] += v;
        }
        let mut want = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
        for v in &a[16..] {
            want += v;
        }
        assert_eq!(pairwise_sum(&a).to_bits(), want.to_bits());
    }

    #[test]
    fn sums_round_as_numpys() {
        // `(1.0 / np.arange(1, n + 1)).sum()` under numpy 2.4, as bits: from 63 values on
        // (a block with a tail, then split halves) they differ from a left-to-right sum.
        for (n, bits) in [
            (5, 0x4002_4444_4444_4444_u64),
            (20, 0x400c_c82b_bab7_a28b),
            (63, 0x4012_e9be_897c_d528),
            (100, 0x4014_bfdf_e459_1243),
            (129, 0x4015_c37b_0914_9ba9),
            (200, 0x4017_831a_8b7c_3adb),
            (1001, 0x401d_f225_27c7_605a),
            (4099, 0x4021_caab_02d9_bbe3),
        ] {
            let a: Vec<f64> = (1..=n).map(|i| 1.0 / f64::from(i)).collect();
            assert_eq!(numpy_sum(&a).to_bits(), bits, "n={n}");
        }
        let a: Vec<f64> = (1..=200).map(|i| 1.0 / f64::from(i)).collect();
        assert_ne!(numpy_sum(&a), a.iter().sum::<f64>());
    }

    #[test]
    fn scores_sum_to_one_and_a_cycle_is_uniform() {
        let t = Transitions::new(2, &[(0, 1, 1.0), (1, 0, 1.0)]).unwrap();
        assert_eq!(t.pagerank(&[], &Params::default()), vec![0.5, 0.5]);
        let edges: Vec<_> = (0..50).map(|i| (i, (i * 7 + 3) % 50, 1.0)).collect();
        let ranks = Transitions::new(50, &edges)
            .unwrap()
            .pagerank(&[], &Params::default());
        assert!((ranks.iter().sum::<f64>() - 1.0).abs() < 1e-12);
    }

    #[test]
    fn a_hub_outranks_its_leaves_and_a_personalised_node_rises() {
        let star = Transitions::new(3, &[(1, 0, 1.0), (2, 0, 1.0)]).unwrap();
        let ranks = star.pagerank(&[], &Params::default());
        assert!(ranks[0] > ranks[1] && ranks[1] == ranks[2]);
        let ring = Transitions::new(3, &[(0, 1, 1.0), (1, 2, 1.0), (2, 0, 1.0)]).unwrap();
        let ranks = ring.pagerank(&[(2, 1.0)], &Params::default());
        assert!(ranks[2] > ranks[0] && ranks[2] > ranks[1]);
    }

    #[test]
    fn a_personalisation_that_weighs_nothing_is_uniform() {
        let t = Transitions::new(4, &[(0, 1, 2.0), (1, 2, 1.0), (3, 0, 5.0)]).unwrap();
        let plain = t.pagerank(&[], &Params::default());
        assert_eq!(
            t.pagerank(&[(9, 1.0), (1, 0.0), (2, -3.0)], &Params::default()),
            plain
        );
        assert_eq!(t.pagerank(&[(1, f64::NAN)], &Params::default()), plain);
    }

    #[test]
    fn empty_graphs_and_bad_edges() {
        let empty = Transitions::new(0, &[]).unwrap();
        assert!(empty.pagerank(&[(0, 1.0)], &Params::default()).is_empty());
        let lone = Transitions::new(3, &[]).unwrap();
        let ranks = lone.pagerank(&[], &Params::default());
        assert!(ranks.iter().all(|&r| (r - 1.0 / 3.0).abs() < 1e-15));
        assert!(Transitions::new(2, &[(0, 2, 1.0)]).is_err());
        assert!(Transitions::new(0, &[(0, 0, 1.0)]).is_err());
    }
}
