"""Type stub for the private native module (checked by mypy.stubtest)."""

from typing import final

__version__: str
# PyO3 fills the module's __all__ at import time; stubtest compares it with this list.
__all__ = [
    "GRAPH_SCHEMA_VERSION",
    "GRAPH_TEXT_ID_VIEWS",
    "BM25Index",
    "CtxfastError",
    "EncodingError",
    "IndexError",
    "IndexNotFoundError",
    "IndexOSError",
    "IndexPermissionError",
    "IndexProgress",
    "InternalError",
    "InvalidArgumentError",
    "LexicalCorpus",
    "SymbolSet",
    "__version__",
    "_panic_for_test",
    "best_fixed_windows",
    "best_windows",
    "content_identity",
    "count_tokens",
    "count_tokens_batch",
    "decode",
    "drain_log",
    "encode",
    "fits",
    "index_graph",
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
def _panic_for_test() -> None: ...

@final
class IndexProgress:
    def __new__(cls) -> IndexProgress: ...
    def snapshot(self) -> tuple[str, int, int]: ...
    def cancel(self) -> None: ...

GRAPH_SCHEMA_VERSION: str
GRAPH_TEXT_ID_VIEWS: str

def node_key(id: str) -> int: ...
def index_graph(
    root: str,
    db_path: str,
    max_file_bytes: int = 1_000_000,
    progress: IndexProgress | None = None,
    parse_cache_dir: str | None = None,
    parse_cache_max_bytes: int | None = None,
) -> tuple[int, int, int, int, int, float, list[tuple[str, str]], int, int]: ...

# --- BM25 + code tokenizer (rust/ctxfast-py/src/bm25.rs) ---
@final
class SymbolSet:
    def __new__(cls, names: list[str]) -> SymbolSet: ...
    def __len__(self) -> int: ...
    def __contains__(self, name: str, /) -> bool: ...

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

def tokenize_code(text: str) -> list[str]: ...

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
