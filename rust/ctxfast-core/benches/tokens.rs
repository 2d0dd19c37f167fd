//! criterion benches of the core's hot paths, without libpython: exact counting, budget
//! fitting and BM25 scoring on a synthetic code-like corpus (deterministic, no files needed).

use criterion::{criterion_group, criterion_main, Criterion};
use ctxfast_core::tokens::{self, Encoding};
use ctxfast_core::truncate::{truncate_to_tokens, Cut};
use std::fmt::Write as _;
use std::hint::black_box;

fn corpus(lines: usize) -> String {
    (0..lines).fold(String::new(), |mut out, i| {
        let _ = write!(out, "    def method_{i}(self, value_{i}: int) -> int:  # compute item {i}\n        return self.base + value_{i} * {i}\n");
        out
    })
}

fn bench_tokens(c: &mut Criterion) {
    let text = corpus(5_000);
    c.bench_function("count cl100k 5k defs", |b| {
        b.iter(|| tokens::count(black_box(&text), Encoding::Cl100kBase));
    });
    c.bench_function("fits cl100k limit 1000", |b| {
        b.iter(|| tokens::fits(black_box(&text), 1_000, Encoding::Cl100kBase));
    });
    c.bench_function("truncate cl100k to 4000 (word cut)", |b| {
        b.iter(|| {
            truncate_to_tokens(
                black_box(&text),
                4_000,
                Encoding::Cl100kBase,
                " […]",
                Cut::Word,
            )
        });
    });
}

criterion_group!(benches, bench_tokens);
criterion_main!(benches);
