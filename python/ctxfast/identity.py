"""Normalised content identity: the key that deduplicates facts, not ids.

Line endings, indentation and whitespace runs are not identity-bearing; the hash (SHA-256
truncated to 128 bits, hex) is computed in Rust over a batch with the GIL released and is
stable across processes and platforms.
"""

from __future__ import annotations

from collections.abc import Sequence

from ctxfast import _native


def content_identity(texts: Sequence[str]) -> list[str]:
    """32-hex-char identities of the normalised ``texts``, in input order."""
    return _native.content_identity(list(texts))


def normalise_for_identity(text: str) -> str:
    """The canonical text an identity is computed on (CRLF→LF, collapsed spaces, no blanks)."""
    return _native.normalise_for_identity(text)


__all__ = ["content_identity", "normalise_for_identity"]
