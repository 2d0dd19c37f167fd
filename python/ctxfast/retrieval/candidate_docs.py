"""The re-rank's BM25 index over one query's candidates, from term counts kept per index.

The re-rank (``Retriever._rerank``) scores a query's candidates, a few hundred definitions
and line spans, with a BM25 index of their own: its idf and length normalisation are the
candidates', not the repository's. Tokenising their text (≈400 KB on Django) for every query
was the biggest cost of a warm retrieval, yet a candidate's document depends only on the
repository state, and the same definitions come back query after query. So each document
is tokenised once per state and kept as term counts (:class:`~ctxfast.bm25.DocTerms`); the
query's index is assembled from them and scores exactly as one built from the texts.
"""

from __future__ import annotations

from ctxfast.bm25 import BM25Index, BM25Settings, DocTerms
from ctxfast.retrieval.candidates import Candidate
from ctxfast.retrieval.repoindex import RepoIndex

#: What a candidate's document is made of: its file, first and last line, qualname, and
#: whether it is a class scored on its own lines.
DocKey = tuple[str, int, int, str | None, bool]


class CandidateDocs:
    """The candidate documents of one repository state, each tokenised on first use."""

    def __init__(self, ix: RepoIndex) -> None:
        self._ix = ix
        self._terms = DocTerms()
        self._ids: dict[DocKey, int] = {}
        #: Each document's span text, which becomes its candidate's ``text``: joining the
        #: lines of every candidate cost as much as the rest of the assembly.
        self._texts: dict[DocKey, str] = {}

    def index(self, cands: list[Candidate], bm25: BM25Settings, class_own_lines: bool) -> BM25Index:
        """The BM25 index over ``cands`` (document ``i`` is ``cands[i]``: its qualname, a
        newline, then its text, a class's own lines only with ``class_own_lines``); sets
        each candidate's ``text`` to its span's lines."""
        ix = self._ix
        texts = self._texts
        keys: list[DocKey] = []
        new: dict[DocKey, str] = {}
        for c in cands:
            own = class_own_lines and c.kind == "class"
            key = (c.file, c.start_line, c.end_line, c.qualname, own)
            keys.append(key)
            text = texts.get(key)
            if text is None:
                text = texts[key] = ix.span_text(c.file, c.start_line, c.end_line)
            c.text = text
            if key not in self._ids and key not in new:
                new[key] = f"{c.qualname or ''}\n{class_own_text(ix, c) if own else text}"
        if new:
            self._ids.update(zip(new, self._terms.add(list(new.values())), strict=True))
        return self._terms.index(
            [self._ids[k] for k in keys],
            bm25.k1,
            bm25.b,
            symbol_weight=bm25.symbol_weight,
            symbols=ix.symbol_set,
        )


def class_own_text(ix: RepoIndex, c: Candidate) -> str:
    """A class candidate's own lines: its span without the bodies of the functions defined
    in it. Methods are candidates of their own (the merge keeps them apart), so a class is
    scored on what only it holds — header, docstring, attributes — instead of re-counting
    every method's vocabulary, which let large classes outrank the method the issue is about."""
    lines = ix.lines(c.file)[c.start_line - 1 : c.end_line]
    own = [True] * len(lines)
    for line, end_line in ix.function_spans(c.file):
        if c.start_line < line and end_line <= c.end_line:
            lo, hi = line - c.start_line, end_line - c.start_line + 1
            own[lo:hi] = [False] * (hi - lo)
    return "\n".join(t for t, keep in zip(lines, own, strict=True) if keep)
