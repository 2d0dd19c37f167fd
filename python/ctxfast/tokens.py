"""Exact token accounting for cl100k_base and o200k_base (and an opt-in ``approx``).

Counts equal ``len(tiktoken.get_encoding(e).encode(text, disallowed_special=()))``; the
vocabularies are compiled into the native module, so nothing is downloaded at run time.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from ctxfast import _native

DEFAULT_ENCODING = "cl100k_base"
ENCODINGS = ("cl100k_base", "o200k_base", "approx")
DEFAULT_ELISION = " […]"

Cut = Literal["word", "line", "token"]


def count_tokens(text: str, encoding: str = DEFAULT_ENCODING) -> int:
    """Exact number of tokens of ``text`` (special-token strings count as ordinary text)."""
    return _native.count_tokens(text, encoding)


def count_tokens_batch(texts: Sequence[str], encoding: str = DEFAULT_ENCODING) -> list[int]:
    """Token counts of many texts, computed in parallel with the GIL released."""
    return _native.count_tokens_batch(list(texts), encoding)


def encode(text: str, encoding: str = DEFAULT_ENCODING) -> list[int]:
    """Token ids of ``text``; not available for ``approx``."""
    return _native.encode(text, encoding)


def decode(tokens: Sequence[int], encoding: str = DEFAULT_ENCODING) -> str:
    """Text of ``tokens``; raises :class:`~ctxfast.errors.EncodingError` on invalid ids."""
    return _native.decode(list(tokens), encoding)


def fits(text: str, max_tokens: int, encoding: str = DEFAULT_ENCODING) -> bool:
    """True when ``text`` has at most ``max_tokens`` tokens; stops counting past the limit."""
    if max_tokens < 0:
        return False
    return _native.fits(text, max_tokens, encoding)


def truncate_to_tokens(
    text: str,
    max_tokens: int,
    *,
    encoding: str = DEFAULT_ENCODING,
    elision: str = DEFAULT_ELISION,
    cut: Cut = "word",
) -> str:
    """Longest head of ``text`` (ending at a ``cut`` boundary) that with ``elision`` appended
    has at most ``max_tokens`` tokens.

    ``text`` is returned unchanged when it already fits and ``""`` when not even the marker
    fits. The cut point is found by binary search, never by re-counting word by word.
    """
    if max_tokens < 0:
        return ""
    return _native.truncate_to_tokens(text, max_tokens, encoding, elision, cut)


__all__ = [
    "DEFAULT_ELISION",
    "DEFAULT_ENCODING",
    "ENCODINGS",
    "count_tokens",
    "count_tokens_batch",
    "decode",
    "encode",
    "fits",
    "truncate_to_tokens",
]
