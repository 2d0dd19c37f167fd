"""Text that can cross into the native core and into a prompt: no lone surrogates.

Python represents undecodable file-name bytes as lone surrogates (``os.fsdecode`` gives
``'b_\\udce9.py'`` for ``b'b_\\xe9.py'``); such a string cannot be encoded as UTF-8, so the
native token counter raised ``UnicodeEncodeError`` from deep inside ``status`` and
``compose``. Names are shown with the bytes escaped (``b_\\xe9.py``, the same spelling the
graph records); caller-supplied text with a surrogate is an invalid argument.
"""

from __future__ import annotations

from typing import Any

from ctxfast.errors import InvalidArgumentError


def safe_name(name: str) -> str:
    """``name`` with each undecodable byte shown as ``\\xNN`` (unchanged when it has none)."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    return name


def safe_strings(obj: Any) -> Any:
    """``obj`` (JSON-like: dicts, lists, strings) with :func:`safe_name` applied to every
    string, keys included: the manifest records names from a directory walk, any of which
    may hold undecodable bytes."""
    if isinstance(obj, str):
        return safe_name(obj)
    if isinstance(obj, dict):
        return {safe_strings(k): safe_strings(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [safe_strings(v) for v in obj]
    return obj


def require_text(what: str, value: str | None) -> None:
    """Raises :class:`InvalidArgumentError` when ``value`` holds a lone surrogate (it has no
    UTF-8 form, so it can be neither counted nor sent to a model)."""
    if value is None:
        return
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InvalidArgumentError(
            f"{what} is not valid Unicode text (lone surrogate at index {exc.start})"
        ) from None


__all__ = ["require_text", "safe_name", "safe_strings"]
