"""Type stub for the private native module (checked by mypy.stubtest)."""

from collections.abc import Iterable
from os import PathLike
from typing import Any, final

__version__: str
# PyO3 fills the module's __all__ at import time; stubtest compares it with this list.
__all__ = [
    "GRAPH_SCHEMA_VERSION",
    "GRAPH_TEXT_ID_VIEWS",
    "BM25Index",
    "CtxfastError",
    "DefTable",
    "DocTerms",
    "EncodingError",
    "GraphReader",
    "IndexError",
    "IndexNotFoundError",
    "IndexOSError",
    "IndexPermissionError",
    "IndexProgress",
    "InternalError",
    "InvalidArgumentError",
    "LexicalCorpus",
    "SymbolSet",
    "Transitions",
    "__version__",
    "_panic_for_test",
    "best_fixed_windows",
    "best_windows",
    "bundled_counts",
    "content_identity",
    "count_tokens",
    "count_tokens_batch",
    "decode",
    "drain_log",
    "encode",
    "fits",
    "index_graph",
    "index_owner_tag",
    "lexical_language_globs",
    "lexical_search",
    "literal_fragments",
    "literal_names",
    "native_threads",
    "node_key",
    "normalise_for_identity",
    "tokenize_code",
    "truncate_to_tokens",
    "vendored_dirs",
]

class CtxfastError(Exception): ...
class EncodingError(CtxfastError): ...
class InvalidArgumentError(CtxfastError): ...
class IndexError(CtxfastError): ...
class IndexNotFoundError(IndexError, FileNotFoundError): ...
class IndexPermissionError(IndexError, PermissionError): ...
class IndexOSError(IndexError, OSError): ...
class InternalError(CtxfastError): ...

def native_threads() -> int: ...
def drain_log() -> list[tuple[str, str]]: ...
def count_tokens(text: str, encoding: str = "cl100k_base") -> int: ...
def count_tokens_batch(texts: list[str], encoding: str = "cl100k_base") -> list[int]: ...
def encode(text: str, encoding: str = "cl100k_base") -> list[int]: ...
def decode(tokens: list[int], encoding: str = "cl100k_base") -> str: ...
def fits(text: str, max_tokens: int, encoding: str = "cl100k_base") -> bool: ...
def truncate_to_tokens(
    text: str,
    max_tokens: int,
    encoding: str = "cl100k_base",
    elision: str = " […]",
    cut: str = "word",
) -> str: ...
def best_windows(
    line_tokens: list[int],
    line_scores: list[float],
    budget: int,
    max_windows: int = 3,
    context: int = 3,
) -> list[tuple[int, int]]: ...
def best_fixed_windows(
    line_scores: list[int], window: int, k: int = 1
) -> list[tuple[int, int, int]]: ...
def content_identity(texts: list[str]) -> list[str]: ...
def normalise_for_identity(text: str) -> str: ...
def literal_fragments(texts: list[str], min_chars: int = 12) -> list[tuple[int, int, str]]: ...
def literal_names(texts: list[str], max_chars: int = 40) -> list[tuple[int, str]]: ...
def bundled_counts(
    texts: list[str],
    min_chars: int = 16,
    max_files: int = 8,
    min_distinctive: int = 20,
    held_share: float = 0.8,
) -> list[int]: ...
def _panic_for_test() -> None: ...

@final
class IndexProgress:
    def __new__(cls) -> IndexProgress: ...
    def snapshot(self) -> tuple[str, int, int]: ...
    def cancel(self) -> None: ...

GRAPH_SCHEMA_VERSION: str
GRAPH_TEXT_ID_VIEWS: str

@final
class GraphReader:
    def __new__(cls, path: str | PathLike[str], busy_timeout: float) -> GraphReader: ...
    def rows(self, sql: str, params: Iterable[Any] | None = None) -> list[tuple[Any, ...]]: ...
    def row(self, sql: str, params: Iterable[Any] | None = None) -> tuple[Any, ...] | None: ...
    def executescript(self, sql: str) -> None: ...
    def close(self) -> None: ...

def node_key(id: str) -> int: ...
def index_graph(
    root: str,
    db_path: str,
    max_file_bytes: int = 1_000_000,
    progress: IndexProgress | None = None,
    parse_cache_dir: str | None = None,
    parse_cache_max_bytes: int | None = None,
    seeds: list[str] | None = None,
    owner_key: bytes | None = None,
) -> tuple[
    int, int, int, int, int, float, list[tuple[str, str]], int, int, str | None, str | None
]: ...
def index_owner_tag(key: bytes, nonce: str, db_path: str) -> str: ...

# --- BM25 + code tokenizer (rust/ctxfast-py/src/bm25.rs) ---
@final
class SymbolSet:
    def __new__(cls, names: list[str]) -> SymbolSet: ...
    def __len__(self) -> int: ...
    def __contains__(self, name: str, /) -> bool: ...

_DefRow = tuple[str, str, str, str, str, int, int, int]

@final
class DefTable:
    @staticmethod
    def build(
        rows: list[_DefRow],
        signatures: list[str],
        qualnames: list[str],
        modules: list[tuple[str, str]],
    ) -> DefTable: ...
    @staticmethod
    def from_queries(reader: GraphReader, defs: str, qualnames: str, modules: str) -> DefTable: ...
    def to_bytes(self) -> bytes: ...
    @staticmethod
    def from_bytes(data: bytes) -> DefTable: ...
    def __len__(self) -> int: ...
    def row(self, i: int) -> _DefRow: ...
    def slice(self, start: int, end: int) -> list[_DefRow]: ...
    def named(self, name: str) -> list[_DefRow]: ...
    def has_name(self, name: str) -> bool: ...
    def by_qualname(self, qualname: str) -> _DefRow | None: ...
    def signature(self, id: str) -> str | None: ...
    def file_span(self, file: str) -> tuple[int, int] | None: ...
    def innermost(self, file: str, line: int) -> _DefRow | None: ...
    def has_qualname(self, qualname: str) -> bool: ...
    def module_of(self, file: str) -> str | None: ...
    def symbol_set(self) -> SymbolSet: ...

@final
class BM25Index:
    def __new__(
        cls,
        docs: list[str | list[str]],
        k1: float = 1.5,
        b: float = 0.75,
        symbol_weight: float = 3.0,
        symbols: SymbolSet | list[str] | None = None,
    ) -> BM25Index: ...
    def to_bytes(self) -> bytes: ...
    @staticmethod
    def from_bytes(data: bytes, symbols: SymbolSet | list[str] | None = None) -> BM25Index: ...
    def query(self, q: str | list[str], k: int = 20) -> list[tuple[int, float]]: ...
    def query_batch(
        self, qs: list[str | list[str]], k: int = 20
    ) -> list[list[tuple[int, float]]]: ...
    def scores(self, q: str | list[str]) -> list[float]: ...
    def idf(self, term: str) -> float | None: ...
    def term_weight(self, term: str) -> float: ...
    def doc_len(self, doc: int) -> int | None: ...
    @property
    def num_docs(self) -> int: ...
    @property
    def avgdl(self) -> float: ...
    @property
    def vocab_size(self) -> int: ...

@final
class DocTerms:
    def __new__(cls) -> DocTerms: ...
    def add(self, texts: list[str]) -> list[int]: ...
    def index(
        self,
        ids: list[int],
        k1: float = 1.5,
        b: float = 0.75,
        symbol_weight: float = 3.0,
        symbols: SymbolSet | list[str] | None = None,
    ) -> BM25Index: ...
    def __len__(self) -> int: ...

def tokenize_code(text: str) -> list[str]: ...

# --- personalised PageRank (rust/ctxfast-py/src/pagerank.rs) ---
@final
class Transitions:
    def __new__(cls, n: int, edges: list[tuple[int, int, float]]) -> Transitions: ...
    def pagerank(
        self,
        personalization: list[tuple[int, float]],
        damping: float = 0.85,
        tol: float = 1e-10,
        max_iter: int = 200,
    ) -> list[float]: ...

# --- lexical recall (rust/ctxfast-py/src/lexical.rs) ---
def lexical_search(
    root: str,
    terms: list[str],
    languages: list[str] | None = None,
    extra_globs: list[str] = ...,
    max_hits: int = 40,
    max_line_chars: int = 500,
    exclude_any_depth: list[str] | None = None,
    exclude_root: list[str] | None = None,
) -> tuple[
    list[tuple[str, list[tuple[str, int, str]], bool]],
    list[tuple[str, str]],
    list[str],
    int,
    list[str],
]: ...
def lexical_language_globs() -> list[tuple[str, list[str]]]: ...
def vendored_dirs() -> list[str]: ...

@final
class LexicalCorpus:
    def __new__(
        cls,
        root: str,
        languages: list[str] | None = None,
        extra_globs: list[str] = ...,
        exclude_any_depth: list[str] | None = None,
        exclude_root: list[str] | None = None,
        max_bytes: int = ...,
    ) -> LexicalCorpus: ...
    def search(
        self, terms: list[str], max_hits: int = 40, max_line_chars: int = 500
    ) -> tuple[
        list[tuple[str, list[tuple[str, int, str]], bool]],
        list[tuple[str, str]],
        list[str],
        int,
        list[str],
    ]: ...
    @property
    def num_files(self) -> int: ...
    @property
    def bytes_loaded(self) -> int: ...
