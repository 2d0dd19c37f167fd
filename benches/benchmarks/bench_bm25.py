"""asv: ctxfast's BM25 against bm25s on the same pre-tokenised documents and queries (the
standalone ``benches/bench_bm25.py`` adds rank_bm25 and a larger corpus). Documents are
standard-library functions; queries are 200 seeded samples of 2–6 of their tokens (bm25s
rejects tokens it has never seen). ``BM25s`` is skipped without bm25s (``ctxfast[eval]``)."""

import random

from ctxfast import BM25Index, tokenize_code
from ctxfast.bench import stdlib_sources

K = 20


def corpus() -> tuple[list[list[str]], list[list[str]]]:
    """The documents' tokens and the queries, the same for both engines."""
    docs = []
    for text in stdlib_sources(limit=300):
        docs += [tokenize_code(c) for c in text.split("\ndef ") if c.strip()]
    docs = [d for d in docs if d]
    rng = random.Random(0)
    pool = [d for d in docs if len(d) >= 6]
    return docs, [rng.sample(rng.choice(pool), rng.randint(2, 6)) for _ in range(200)]


class BM25:
    def setup(self):
        self.docs, self.queries = corpus()
        self.index = BM25Index(self.docs)

    def time_ctxfast_build(self):
        BM25Index(self.docs)

    def time_ctxfast_query_batch(self):
        self.index.query_batch(self.queries, k=K)


class BM25s:
    def setup(self):
        try:
            import bm25s
        except ImportError as exc:  # asv skips a benchmark whose setup raises this
            raise NotImplementedError("bm25s is not installed") from exc
        self.bm25s = bm25s
        self.docs, self.queries = corpus()
        self.index = self._build()

    def _build(self):
        r = self.bm25s.BM25(method="lucene", k1=1.5, b=0.75)
        r.index(self.docs, show_progress=False)
        return r

    def time_bm25s_build(self):
        self._build()

    def time_bm25s_retrieve(self):
        self.index.retrieve(self.queries, k=K, show_progress=False, n_threads=0)
