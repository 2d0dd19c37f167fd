"""Code/context retrieval (spec-04): the primitives the retrieval pipeline is built from.

* :mod:`ctxfast.retrieval.query` — §3.1 query construction and traceback frames;
* :mod:`ctxfast.retrieval.lexical` — §3.2 source 1, in-process fixed-string recall;
* :mod:`ctxfast.retrieval.vet` — §3.7 the vetting rule;
* :class:`ctxfast.BM25Index` — §3.4 identifier-weighted BM25 (in :mod:`ctxfast.bm25`).
"""
