"""Lexical recall: fixed-string search of many terms in one walk.

This is ``rg -F '<term>' … -g '*.py' | head -40`` done in-process with ripgrep's
own crates (``grep-searcher``, ``grep-regex`` in fixed-string mode, ``ignore``), so no
subprocess is spawned and no term is ever interpreted as a regex or by a shell. Differences
from the literal invocation, all deliberate and documented in ``ctxfast-core/src/lexical.rs``:
vendored directories are pruned at any depth (``build`` only at the root), all terms share one
walk, and hits are ordered by (path, line) so the ≤ ``max_hits`` kept per term are
deterministic (``rg``'s parallel output order is not).

:class:`LexicalCorpus` does the walk and the reads once and then searches from memory: the
retrieval pipeline searches one repository state once per query, and the walk plus ~2,800
file reads were most of a query's lexical cost on Django.
"""

from __future__ import annotations

import os
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from ctxfast import _native
from ctxfast.errors import InvalidArgumentError
from ctxfast.text import PRUNED_DIRS

#: The result cap per term (``head -40``): enough lines to place a term, few enough to read.
DEFAULT_MAX_HITS = 40
#: Matched line text is cut to this many characters (minified code has megabyte lines).
DEFAULT_MAX_LINE_CHARS = 500
#: Directory names never searched, at any depth: the ones the indexer prunes too.
DEFAULT_EXCLUDE_ANY_DEPTH: tuple[str, ...] = PRUNED_DIRS
#: Directory names not searched directly under the root (``!build/**``: build output copies
#: the sources).
DEFAULT_EXCLUDE_ROOT: tuple[str, ...] = ("build",)
#: A :class:`LexicalCorpus` holds at most this many bytes; later files are read per search.
DEFAULT_CORPUS_MAX_BYTES = 512 << 20

#: Language name (as in the manifest) → the file globs searched for it.
LANGUAGE_GLOBS: dict[str, tuple[str, ...]] = {
    lang: tuple(globs) for lang, globs in _native.lexical_language_globs()
}


class LexicalHit(NamedTuple):
    """One line containing ``term``; ``path`` is POSIX and relative to the root. A named
    tuple, not a frozen dataclass: a retrieval on Django makes about 750 a query, and the
    dataclass's ``__init__`` (a ``setattr`` per field) cost a quarter of the search's own
    time."""

    term: str
    path: str
    line: int
    text: str


@dataclass(frozen=True, slots=True)
class TermHits:
    """The hits of one term, in (path, line) order; ``truncated`` means more existed."""

    term: str
    hits: tuple[LexicalHit, ...]
    truncated: bool


@dataclass(frozen=True, slots=True)
class LexicalResult:
    """Hits per term (request order, duplicates removed) plus fail-soft diagnostics."""

    by_term: dict[str, TermHits]
    skipped_terms: dict[str, str] = field(default_factory=dict)
    unknown_languages: tuple[str, ...] = ()
    files_searched: int = 0
    unreadable: tuple[str, ...] = ()

    @property
    def hits(self) -> list[LexicalHit]:
        """Every hit, term by term."""
        return [h for th in self.by_term.values() for h in th.hits]

    @property
    def truncated(self) -> bool:
        """True when any term hit its cap."""
        return any(th.truncated for th in self.by_term.values())


def lexical_search(
    root: str | os.PathLike[str],
    terms: Iterable[str],
    languages: Sequence[str] | None = None,
    max_hits: int = DEFAULT_MAX_HITS,
    *,
    extra_globs: Sequence[str] = (),
    max_line_chars: int = DEFAULT_MAX_LINE_CHARS,
    exclude_any_depth: Sequence[str] = DEFAULT_EXCLUDE_ANY_DEPTH,
    exclude_root: Sequence[str] = DEFAULT_EXCLUDE_ROOT,
    exclude_files: Collection[str] = (),
) -> LexicalResult:
    """Search ``root`` for each of ``terms`` as a literal string, case-sensitively.

    ``languages`` are manifest language names (see :data:`LANGUAGE_GLOBS`); ``None`` searches
    every known language. Unknown names are reported in ``unknown_languages``; if none is
    known (and no ``extra_globs``) :class:`~ctxfast.errors.InvalidArgumentError` is raised.
    Empty terms and terms with a line break cannot match a line and land in
    ``skipped_terms``. Binary files (a NUL byte) are skipped as ripgrep does; other non-UTF-8
    text is searched as bytes and reported with U+FFFD replacements. ``exclude_files`` are
    paths relative to ``root`` (POSIX) left out of the search.
    """
    term_list = _checked_terms(terms)
    _check_counts(max_hits=max_hits, max_line_chars=max_line_chars)
    return _to_result(
        _native.lexical_search(
            os.fspath(root),
            term_list,
            None if languages is None else list(languages),
            list(extra_globs),
            max_hits,
            max_line_chars,
            list(exclude_any_depth),
            list(exclude_root),
            sorted(exclude_files),
        )
    )


class LexicalCorpus:
    """The files :func:`lexical_search` would search, walked and read once, held in memory.

    ``search`` returns exactly what :func:`lexical_search` with the same root, languages and
    exclusions returns for the files as they were when the corpus was loaded: it is a
    snapshot, so key it to a repository state (retrieval rebuilds it with the rest of its
    per-index state when the index changes). Files past ``max_bytes`` (in path order) are not
    held and are read from disk per search. Errors are those of :func:`lexical_search`.
    """

    __slots__ = ("_corpus",)

    def __init__(
        self,
        root: str | os.PathLike[str],
        languages: Sequence[str] | None = None,
        *,
        extra_globs: Sequence[str] = (),
        exclude_any_depth: Sequence[str] = DEFAULT_EXCLUDE_ANY_DEPTH,
        exclude_root: Sequence[str] = DEFAULT_EXCLUDE_ROOT,
        max_bytes: int = DEFAULT_CORPUS_MAX_BYTES,
        exclude_files: Collection[str] = (),
    ) -> None:
        _check_counts(max_bytes=max_bytes)
        self._corpus = _native.LexicalCorpus(
            os.fspath(root),
            None if languages is None else list(languages),
            list(extra_globs),
            list(exclude_any_depth),
            list(exclude_root),
            max_bytes,
            sorted(exclude_files),
        )

    @property
    def num_files(self) -> int:
        """Files the walk found (held in memory or not)."""
        return self._corpus.num_files

    @property
    def bytes_loaded(self) -> int:
        """Bytes held in memory."""
        return self._corpus.bytes_loaded

    def search(
        self,
        terms: Iterable[str],
        max_hits: int = DEFAULT_MAX_HITS,
        *,
        max_line_chars: int = DEFAULT_MAX_LINE_CHARS,
    ) -> LexicalResult:
        """:func:`lexical_search` of ``terms`` over the corpus."""
        term_list = _checked_terms(terms)
        _check_counts(max_hits=max_hits, max_line_chars=max_line_chars)
        return _to_result(self._corpus.search(term_list, max_hits, max_line_chars))


def _checked_terms(terms: Iterable[str]) -> list[str]:
    term_list = list(terms)
    if not all(isinstance(t, str) for t in term_list):
        raise InvalidArgumentError("terms must be str")
    return term_list


def _check_counts(**values: int) -> None:
    for name, v in values.items():
        if isinstance(v, bool) or not isinstance(v, int) or v < 0:
            raise InvalidArgumentError(f"{name} must be a non-negative int, got {v!r}")


def _to_result(raw: tuple[Any, ...]) -> LexicalResult:
    raw_terms, skipped, unknown, n_files, unreadable = raw
    by_term = {
        term: TermHits(
            term=term,
            hits=tuple(LexicalHit(term, path, line, text) for path, line, text in hits),
            truncated=truncated,
        )
        for term, hits, truncated in raw_terms
    }
    return LexicalResult(
        by_term=by_term,
        skipped_terms=dict(skipped),
        unknown_languages=tuple(unknown),
        files_searched=n_files,
        unreadable=tuple(unreadable),
    )


__all__ = [
    "DEFAULT_CORPUS_MAX_BYTES",
    "DEFAULT_EXCLUDE_ANY_DEPTH",
    "DEFAULT_EXCLUDE_ROOT",
    "DEFAULT_MAX_HITS",
    "DEFAULT_MAX_LINE_CHARS",
    "LANGUAGE_GLOBS",
    "LexicalCorpus",
    "LexicalHit",
    "LexicalResult",
    "TermHits",
    "lexical_search",
]
