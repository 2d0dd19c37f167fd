"""asv: warm retrieval and compose on a real code base, and lexical recall from the in-memory
corpus against the walk-per-search it replaces (same terms, same answer; run against the
installed package with ``asv run --python=same``; see benches/README.md).

The repository is a copy of a few standard-library packages (real code, ~100 files), indexed
once in ``setup_cache``; every benchmark then runs on a warm ``Repository``, which is what an
agent loop pays per decision. ``benches/bench_compose.py`` is the same measurement on Django
with per-stage shares.
"""

import os

import ctxfast
from benchmarks import cache_root, copy_stdlib_packages
from ctxfast import Repository
from ctxfast.retrieval.lexical import LexicalCorpus, lexical_search

TASK = (
    "HTTPConnection.request() sends a malformed Content-Length header when the body is a "
    "file object; parse_headers then raises email.errors.HeaderParseError"
)
TERMS = ["HTTPConnection", "Content-Length", "parse_headers", "HeaderParseError", "request"]


def _repo(root: str) -> Repository:
    repo = Repository(os.path.join(root, "src"), os.path.join(root, "index"))
    repo.retrieve("warm up")  # the per-index state: definitions, BM25 indexes, corpus
    return repo


class Retrieval:
    timeout = 300

    def setup_cache(self):
        root = cache_root("retrieval")
        copy_stdlib_packages(os.path.join(root, "src"))
        Repository(os.path.join(root, "src"), os.path.join(root, "index")).index()
        return root

    def setup(self, root):
        self.repo = _repo(root)
        self.src = os.path.join(root, "src")
        self.corpus = LexicalCorpus(self.src, ["python"])

    def time_retrieve_warm(self, root):
        self.repo.retrieve(TASK)

    def time_compose_warm_24k(self, root):
        ctxfast.compose(self.repo, TASK)

    def time_lexical_corpus_search(self, root):
        self.corpus.search(TERMS)

    def time_lexical_corpus_load(self, root):
        """The walk, the reads and the per-file trigram filters: paid once per index state,
        by the first retrieval that searches the corpus."""
        LexicalCorpus(self.src, ["python"])

    def time_lexical_walk_search(self, root):
        lexical_search(self.src, TERMS, languages=["python"])
