"""Type stub for the private native module (checked by mypy.stubtest)."""

__version__: str
# PyO3 fills the module's __all__ at import time; stubtest compares it with this list.
__all__ = [
    "CtxfastError",
    "EncodingError",
    "IndexError",
    "InternalError",
    "InvalidArgumentError",
    "__version__",
    "_panic_for_test",
    "best_windows",
    "count_tokens",
    "count_tokens_batch",
    "decode",
    "encode",
    "fits",
    "index_graph",
    "truncate_to_tokens",
]

class CtxfastError(Exception): ...
class EncodingError(CtxfastError): ...
class InvalidArgumentError(CtxfastError): ...
class IndexError(CtxfastError): ...
class InternalError(CtxfastError): ...

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
def _panic_for_test() -> None: ...
def index_graph(
    root: str,
    db_path: str,
    max_file_bytes: int = 1_000_000,
) -> tuple[int, int, int, int, int, float, list[tuple[str, str]]]: ...
