"""Identifier-weighted BM25 and the code tokenizer, as reusable pieces.

The score is Okapi BM25 with identifier weights, exactly::

    score(d, q) = Σ_{t ∈ q∩d} w(t)·idf(t)·tf·(k1+1) / (tf + k1·(1 − b + b·|d|/avgdl))
    idf(t)      = ln((N − n(t) + 0.5) / (n(t) + 0.5) + 1)
    w(t)        = symbol_weight if t matches [A-Za-z_][A-Za-z0-9_]* and t ∈ symbols else 1.0

Symbols are what makes the ranking code-aware: a candidate whose *identifiers* match the task
outranks one whose comments do. ``q∩d`` is a set, so repeating a query term does not multiply
its weight. Ties are broken by document index, so results are reproducible.

Documents and queries are either strings, tokenised by :func:`tokenize_code` (identifiers kept
whole *and* split into snake/Camel parts, lowercased, plus whole path tokens), or lists of
tokens used verbatim — bring your own tokenizer if you need one.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import ClassVar

from ctxfast import _native
from ctxfast.errors import InvalidArgumentError

DEFAULT_K1 = 1.5
DEFAULT_B = 0.75
DEFAULT_SYMBOL_WEIGHT = 3.0
DEFAULT_TOP_K = 20


@dataclass(frozen=True)
class BM25Settings:
    """The BM25 parameters retrieval scores text with (``RetrievalConfig.bm25``)."""

    #: The flat name of each field renamed here (none: every field kept its flat name).
    FLAT_NAMES: ClassVar[Mapping[str, str]] = {}

    #: Term-frequency saturation: how much a word repeated in a definition adds. 1.5, the
    #: textbook value: the tenth repeat of a word counts little more than the third.
    k1: float = DEFAULT_K1
    #: Length normalisation, 0 (none) to 1 (full): how much a long definition is discounted
    #: for being long. 0.75, the textbook value.
    b: float = DEFAULT_B
    #: Weight of a word that is an identifier of the repository (a function or class name)
    #: against a plain word: the task naming ``parse_header`` says more than it saying
    #: "header". 3: a name match outweighs a few prose matches.
    symbol_weight: float = DEFAULT_SYMBOL_WEIGHT


TextOrTokens = str | Sequence[str]


def tokenize_code(text: str) -> list[str]:
    """Code-aware tokens of ``text``: every ASCII identifier lowercased, whole and split.

    ``"MemStore.remember_all"`` → ``["memstore", "mem", "store", "remember_all", "remember",
    "all"]``; a path such as ``"django/db/query.py"`` is also kept whole. Digits stay attached
    to the letters before them (``base64Encode`` → ``base64``, ``encode``); non-ASCII
    characters separate words.
    """
    try:
        return _native.tokenize_code(text)
    except UnicodeEncodeError:
        return _native.tokenize_code(_scrub(text))


def _scrub(text: str) -> str:
    """Lone surrogates cannot cross into Rust; they are non-ASCII, so they only ever separate
    words in text; in token lists they become ``?`` on both the document and the query side."""
    return text.encode("utf-8", "replace").decode("utf-8")


# Inputs are type-checked before the native call, so a TypeError/UnicodeEncodeError there can
# only come from a lone surrogate failing the str → Rust conversion; the retry scrubs them.


def _scrub_all(x: str | list[str]) -> str | list[str]:
    return _scrub(x) if isinstance(x, str) else [_scrub(t) for t in x]


def _coerce(x: TextOrTokens, what: str) -> str | list[str]:
    """Cheap shape check; element types are checked by the native conversion (fast path)
    and, if that fails, by :func:`_validated` (slow path, for a clear error)."""
    if isinstance(x, str | list):
        return x
    if isinstance(x, bytes):
        raise InvalidArgumentError(f"{what} must be str or a sequence of str, not bytes")
    return list(x)


def _validated(x: str | list[str], what: str) -> str | list[str]:
    if not isinstance(x, str) and not all(isinstance(t, str) for t in x):
        raise InvalidArgumentError(f"{what} token lists must contain only str")
    return _scrub_all(x)


def _check_k(k: int) -> int:
    if isinstance(k, bool) or not isinstance(k, int) or k < 0:
        raise InvalidArgumentError(f"k must be a non-negative int, got {k!r}")
    return k


class SymbolSet:
    """A name index (e.g. every defined function/class name) built once and shared.

    Passing the same ``SymbolSet`` as ``symbols`` to many :class:`BM25Index` builds shares one
    native set instead of converting and lowercasing every name per build — with a
    repository's tens of thousands of names that conversion cost more than the index itself.
    Membership is case-insensitive, as ``w(t)`` tests it.
    """

    __slots__ = ("_set",)

    def __init__(self, names: Iterable[str]) -> None:
        listed = [s if isinstance(s, str) else str(s) for s in names]
        try:
            self._set = _native.SymbolSet(listed)
        except UnicodeEncodeError:  # a lone surrogate: scrub every name, as queries are
            self._set = _native.SymbolSet([_scrub(s) for s in listed])

    @classmethod
    def from_native(cls, native: _native.SymbolSet) -> SymbolSet:
        """A set made on the native side (e.g. a definition table's names), shared as is."""
        out = cls.__new__(cls)
        out._set = native
        return out

    def __len__(self) -> int:
        return len(self._set)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and _scrub(name) in self._set

    def __repr__(self) -> str:
        return f"SymbolSet({len(self)} names)"


def _native_symbols(
    symbols: SymbolSet | Iterable[str] | None,
) -> _native.SymbolSet | list[str] | None:
    """``symbols=`` as the native constructor takes it: the shared set itself, or names."""
    if symbols is None or isinstance(symbols, SymbolSet):
        return None if symbols is None else symbols._set
    return [_scrub(str(s)) for s in symbols]


class BM25Index:
    """An immutable BM25 index over ``docs``; build once, query many times.

    ``symbols`` is the name index (e.g. every defined function/class name), as names or as a
    shared :class:`SymbolSet`: query tokens found in it (case-insensitively) weigh
    ``symbol_weight`` instead of 1. Building and batch querying run in Rust with the GIL
    released; :meth:`query_batch` uses all cores.
    """

    __slots__ = ("_ix",)

    def __init__(
        self,
        docs: Iterable[TextOrTokens],
        k1: float = DEFAULT_K1,
        b: float = DEFAULT_B,
        *,
        symbol_weight: float = DEFAULT_SYMBOL_WEIGHT,
        symbols: SymbolSet | Iterable[str] | None = None,
    ) -> None:
        coerced = [_coerce(d, "docs") for d in docs]
        syms = _native_symbols(symbols)
        args = (float(k1), float(b), float(symbol_weight))
        try:
            self._ix = _native.BM25Index(coerced, *args, syms)
        except (UnicodeEncodeError, TypeError):
            scrubbed = [_validated(d, "docs") for d in coerced]
            self._ix = _native.BM25Index(scrubbed, *args, syms)

    @classmethod
    def _wrap(cls, native: _native.BM25Index) -> BM25Index:
        out = cls.__new__(cls)
        out._ix = native
        return out

    def to_bytes(self) -> bytes:
        """The index as bytes, to store and reopen with :meth:`from_bytes` instead of
        tokenising the corpus again (the symbol set is not included)."""
        return self._ix.to_bytes()

    @classmethod
    def from_bytes(cls, data: bytes, symbols: SymbolSet | Iterable[str] | None = None) -> BM25Index:
        """An index saved by :meth:`to_bytes`; it scores exactly as the saved one when given
        the same ``symbols``. Bytes that are not such an index raise ``InvalidArgumentError``."""
        return cls._wrap(_native.BM25Index.from_bytes(data, _native_symbols(symbols)))

    def spliced(
        self,
        keep: Sequence[int | None],
        new_docs: Iterable[TextOrTokens],
        *,
        symbols: SymbolSet | Iterable[str] | None = None,
    ) -> BM25Index:
        """The index over a corpus that shares documents with this one, without tokenising
        the shared ones again: document ``i`` is this index's document ``keep[i]``, or, where
        that is ``None``, the next of ``new_docs``. It scores exactly as an index built over
        the new corpus with the same parameters and ``symbols``. A ``keep`` that does not
        fit (an index out of range or kept twice, or not one new document per ``None``)
        raises ``InvalidArgumentError``."""
        kept = list(keep)
        if not all(k is None or (isinstance(k, int) and not isinstance(k, bool)) for k in kept):
            raise InvalidArgumentError("keep must hold document indexes (int) or None")
        if any(k is not None and not 0 <= k < self.num_docs for k in kept):
            raise InvalidArgumentError("a kept document index is out of range")
        coerced = [_coerce(d, "new_docs") for d in new_docs]
        syms = _native_symbols(symbols)
        try:
            return self._wrap(self._ix.spliced(kept, coerced, syms))
        except (UnicodeEncodeError, TypeError):
            scrubbed = [_validated(d, "new_docs") for d in coerced]
            return self._wrap(self._ix.spliced(kept, scrubbed, syms))

    def query(self, q: TextOrTokens, k: int = DEFAULT_TOP_K) -> list[tuple[int, float]]:
        """The ``k`` best ``(doc_index, score)`` pairs with a positive score, best first."""
        q2 = _coerce(q, "query")
        try:
            return self._ix.query(q2, _check_k(k))
        except (UnicodeEncodeError, TypeError):
            return self._ix.query(_validated(q2, "query"), k)

    def query_batch(
        self, qs: Iterable[TextOrTokens], k: int = DEFAULT_TOP_K
    ) -> list[list[tuple[int, float]]]:
        """:meth:`query` for many queries at once, in parallel; results in query order."""
        batch = [_coerce(q, "query") for q in qs]
        try:
            return self._ix.query_batch(batch, _check_k(k))
        except (UnicodeEncodeError, TypeError):
            return self._ix.query_batch([_validated(q, "query") for q in batch], k)

    def scores(self, q: TextOrTokens) -> list[float]:
        """The score of every document in document order (0.0 where nothing matches).

        Useful when the caller needs all scores, e.g. line scoring against a goal."""
        q2 = _coerce(q, "query")
        try:
            return self._ix.scores(q2)
        except (UnicodeEncodeError, TypeError):
            return self._ix.scores(_validated(q2, "query"))

    def idf(self, term: str) -> float | None:
        """``idf(term)``, or ``None`` when no document contains the term."""
        return self._ix.idf(term)

    def term_weight(self, term: str) -> float:
        """``w(term)``: the symbol weight for identifier tokens in ``symbols``."""
        return self._ix.term_weight(term)

    def doc_len(self, doc: int) -> int:
        """Token count ``|d|`` of document ``doc``."""
        n = self._ix.doc_len(doc) if doc >= 0 else None
        if n is None:
            raise InvalidArgumentError(f"document index {doc} out of range")
        return n

    @property
    def num_docs(self) -> int:
        return self._ix.num_docs

    @property
    def avgdl(self) -> float:
        return self._ix.avgdl

    @property
    def vocab_size(self) -> int:
        return self._ix.vocab_size

    def __len__(self) -> int:
        return self._ix.num_docs

    def __repr__(self) -> str:
        return f"BM25Index(num_docs={self.num_docs}, vocab_size={self.vocab_size})"


class DocTerms:
    """Documents tokenised once and kept as term counts: a :class:`BM25Index` over any
    selection of them is assembled from the counts, without tokenising again, and scores
    exactly as one built from their texts (scores read term frequencies and document
    lengths only). For many small indexes over recurring documents, such as a retrieval's
    per-query index over its candidates. Thread-safe."""

    __slots__ = ("_store",)

    def __init__(self) -> None:
        self._store = _native.DocTerms()

    def add(self, texts: list[str]) -> list[int]:
        """Tokenises (:func:`tokenize_code`) and stores ``texts``; their ids, in order."""
        try:
            return self._store.add(texts)
        except UnicodeEncodeError:
            return self._store.add([_scrub(t) for t in texts])

    def index(
        self,
        ids: list[int],
        k1: float = DEFAULT_K1,
        b: float = DEFAULT_B,
        *,
        symbol_weight: float = DEFAULT_SYMBOL_WEIGHT,
        symbols: SymbolSet | Iterable[str] | None = None,
    ) -> BM25Index:
        """The index whose document ``i`` is the stored document ``ids[i]``."""
        native = self._store.index(
            ids, float(k1), float(b), float(symbol_weight), _native_symbols(symbols)
        )
        return BM25Index._wrap(native)

    def __len__(self) -> int:
        return len(self._store)


__all__ = [
    "DEFAULT_B",
    "DEFAULT_K1",
    "DEFAULT_SYMBOL_WEIGHT",
    "DEFAULT_TOP_K",
    "BM25Index",
    "DocTerms",
    "SymbolSet",
    "tokenize_code",
]
