"""Code/context retrieval: the primitives the retrieval pipeline is built from.

* :mod:`ctxfast.retrieval.query` — query construction and traceback frames;
* :mod:`ctxfast.retrieval.lexical` — lexical recall, in-process fixed-string search;
* :mod:`ctxfast.retrieval.vet` — the vetting rule;
* :class:`ctxfast.BM25Index` — identifier-weighted BM25 (in :mod:`ctxfast.bm25`).

ARCHITECTURE.md shows where each step sits in the pipeline and the idea it is built on.
"""
