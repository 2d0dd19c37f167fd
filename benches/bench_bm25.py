"""Benchmark: ctxfast BM25 vs bm25s and rank_bm25, and lexical recall vs the rg binary.

Run standalone (after ``pip install -e .``)::

    python benches/bench_bm25.py [--corpus PATH] [--queries 1000] [--rank-bm25-queries 100]

The corpus is a source tree (default: a Django source release in /tmp/dj if present, else the
Python stdlib), split into function/class-sized documents with ``ast``. Every engine gets the
same pre-tokenised documents and queries (``ctxfast.tokenize_code``), so only indexing and
scoring are compared. Queries are 1,000 seeded samples of 2–6 tokens drawn from documents.
Lexical recall runs the same identifiers through ``ctxfast.retrieval.lexical.lexical_search``
(one in-process walk) and through the spec's ``rg -F`` invocation once per term.
"""

from __future__ import annotations

import argparse
import ast
import random
import shutil
import subprocess
import sys
import sysconfig
import time
from pathlib import Path

from ctxfast import BM25Index, tokenize_code
from ctxfast.retrieval.lexical import lexical_search


def default_corpus() -> Path:
    dj = sorted(Path("/tmp/dj").glob("Django-*/django"))
    return dj[0] if dj else Path(sysconfig.get_paths()["stdlib"])


def split_docs(root: Path, limit_files: int | None = None) -> list[str]:
    """Function/class-sized chunks (outermost defs) plus each module's remaining top level."""
    docs: list[str] = []
    files = sorted(p for p in root.rglob("*.py") if "site-packages" not in p.parts)
    for path in files[:limit_files]:
        try:
            src = path.read_text(encoding="utf-8")
            tree = ast.parse(src)
        except (SyntaxError, UnicodeDecodeError, ValueError):
            continue
        lines = src.splitlines()
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                end = node.end_lineno or node.lineno
                if end - node.lineno <= 200:
                    docs.append(
                        f"{path.relative_to(root)}\n" + "\n".join(lines[node.lineno - 1 : end])
                    )
    return docs


def timed(fn, repeat: int = 1):
    best = float("inf")
    out = None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t)
    return best, out


def bench_bm25(docs_tok: list[list[str]], queries: list[list[str]], rank_n: int) -> None:
    k = 20
    print(f"corpus: {len(docs_tok)} docs, {sum(map(len, docs_tok))} tokens; {len(queries)} queries")

    t_build, ix = timed(lambda: BM25Index(docs_tok), repeat=3)
    t_batch, res_batch = timed(lambda: ix.query_batch(queries, k=k), repeat=3)
    t_single, res_single = timed(lambda: [ix.query(q, k=k) for q in queries], repeat=3)
    assert res_batch == res_single
    ctx_total = t_build + t_batch
    print(
        f"ctxfast   build {t_build * 1e3:8.1f} ms  1000q batch {t_batch * 1e3:8.1f} ms  "
        f"single-loop {t_single * 1e3:8.1f} ms  total {ctx_total * 1e3:8.1f} ms"
    )

    try:
        import bm25s

        def bm25s_build():
            r = bm25s.BM25(method="lucene", k1=1.5, b=0.75)
            r.index(docs_tok, show_progress=False)
            return r

        t_b, r = timed(bm25s_build, repeat=3)
        # bm25s rejects tokens it has never seen; the query sets are drawn from the corpus.
        t_q, _ = timed(lambda: r.retrieve(queries, k=k, show_progress=False, n_threads=0), 3)
        tot = t_b + t_q
        print(
            f"bm25s     build {t_b * 1e3:8.1f} ms  1000q        {t_q * 1e3:8.1f} ms  "
            f"total {tot * 1e3:8.1f} ms  -> ctxfast is {tot / ctx_total:5.1f}x faster "
            f"(build {t_b / t_build:4.1f}x, query {t_q / t_batch:4.1f}x)"
        )
    except ImportError:
        print("bm25s not installed")

    try:
        import numpy as np
        from rank_bm25 import BM25Okapi

        t_b, rb = timed(lambda: BM25Okapi(docs_tok, k1=1.5, b=0.75), repeat=1)
        sub = queries[:rank_n]
        t_q, _ = timed(lambda: [np.argsort(rb.get_scores(q))[-k:] for q in sub], repeat=1)
        t_q_all = t_q * len(queries) / len(sub)
        tot = t_b + t_q_all
        print(
            f"rank_bm25 build {t_b * 1e3:8.1f} ms  1000q (est. from {len(sub)}) "
            f"{t_q_all * 1e3:8.1f} ms  total {tot * 1e3:8.1f} ms  -> ctxfast is "
            f"{tot / ctx_total:5.1f}x faster"
        )
    except ImportError:
        print("rank_bm25 not installed")


def bench_lexical(root: Path, terms: list[str]) -> None:
    rg = shutil.which("rg")
    t_ctx, res = timed(lambda: lexical_search(root, terms, languages=["python"]), repeat=3)
    n_hits = len(res.hits)
    print(
        f"lexical   ctxfast {len(terms)} terms, one walk: {t_ctx * 1e3:8.1f} ms "
        f"({res.files_searched} files, {n_hits} hits kept)"
    )
    if rg is None:
        print("rg binary not installed: skipping the comparison")
        return

    def rg_spec_per_term():
        for term in terms:
            cmd = [rg, "--no-heading", "--line-number", "--color", "never", "-F", term, str(root)]
            for d in (
                "vendor",
                "node_modules",
                "site-packages",
                "third_party",
                "external",
                "build",
                ".git",
            ):
                cmd += ["--glob", f"!{d}/**"]
            cmd += ["-g", "*.py"]
            p = subprocess.run(cmd, capture_output=True, check=False)
            p.stdout.splitlines()[:40]

    def rg_one_call():
        cmd = [rg, "--no-heading", "--line-number", "--color", "never", "-F"]
        for t in terms:
            cmd += ["-e", t]
        subprocess.run([*cmd, str(root), "-g", "*.py"], capture_output=True, check=False)

    t_rg, _ = timed(rg_spec_per_term, repeat=3)
    t_rg1, _ = timed(rg_one_call, repeat=3)
    print(
        f"lexical   rg per term (spec invocation) {t_rg * 1e3:8.1f} ms -> ctxfast/rg = "
        f"{t_ctx / t_rg:4.2f}"
    )
    print(
        f"lexical   rg one call, all terms (-e …)  {t_rg1 * 1e3:8.1f} ms -> ctxfast/rg = "
        f"{t_ctx / t_rg1:4.2f}"
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", type=Path, default=None)
    ap.add_argument("--queries", type=int, default=1000)
    ap.add_argument("--rank-bm25-queries", type=int, default=100)
    ap.add_argument("--terms", type=int, default=20)
    args = ap.parse_args(argv)
    root = args.corpus or default_corpus()
    print(f"corpus root: {root}")
    docs = split_docs(root)
    docs_tok = [tokenize_code(d) for d in docs]
    rng = random.Random(4)
    queries: list[list[str]] = []
    while len(queries) < args.queries:
        d = docs_tok[rng.randrange(len(docs_tok))]
        if d:
            queries.append([d[rng.randrange(len(d))] for _ in range(rng.randint(2, 6))])
    bench_bm25(docs_tok, queries, args.rank_bm25_queries)
    idents = sorted({t for d in docs_tok for t in d if "_" in t and len(t) > 8})
    terms = rng.sample(idents, min(args.terms, len(idents)))
    bench_lexical(root, terms)
    return 0


if __name__ == "__main__":
    sys.exit(main())
