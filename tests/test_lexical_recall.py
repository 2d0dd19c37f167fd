"""Lexical recall streams the files for a state's first search and searches an in-memory
corpus from the second on; both answer the same."""

from __future__ import annotations

from recon_fixture import write_project

import ctxfast
from ctxfast.retrieval.repoindex import RepoIndex
from ctxfast.retrieval.sources import LexicalRecall


def test_the_streamed_first_search_equals_the_corpus_searches(tmp_path):
    root = write_project(tmp_path / "proj")
    repo = ctxfast.Repository(root)
    repo.index()
    recall = LexicalRecall(RepoIndex(repo.root, repo.graph_db, repo.index_dir))
    terms = ["connect", "parse_args", "DATABASE_URL", "no such text"]
    first = recall.search(terms, 40)
    assert recall._corpus is None  # a one-shot process never loads the corpus
    second = recall.search(terms, 40)
    assert recall._corpus is not None
    assert first == second == recall.search(terms, 40)
    assert {h.path for h in first.hits} >= {"pkg/db.py", "pkg/cli.py"}
    fresh = LexicalRecall(RepoIndex(repo.root, repo.graph_db, repo.index_dir))
    assert fresh.search(terms, 1) == recall.search(terms, 1)  # streamed vs corpus, capped
