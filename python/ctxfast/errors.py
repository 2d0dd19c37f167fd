"""The exception hierarchy of ctxfast, rooted at :class:`CtxfastError`.

The native classes are created in Rust (so the core can raise them) and re-exported here;
pure-Python errors subclass the same root, so ``except CtxfastError`` catches everything the
library raises on bad input. Filesystem errors of the index keep their kind: they are also
``FileNotFoundError`` (``IndexNotFoundError``), ``PermissionError`` (``IndexPermissionError``)
or another ``OSError`` (``IndexOSError``).
"""

from ctxfast._native import (
    CtxfastError,
    EncodingError,
    IndexError,
    IndexNotFoundError,
    IndexOSError,
    IndexPermissionError,
    InternalError,
    InvalidArgumentError,
)


class IndexSchemaError(IndexError):
    """An index written by another ctxfast (another ``recon.db`` schema): re-index it."""


class IndexUntrustedError(IndexError):
    """An index this user's ctxfast did not write (a repository shipped it, or it was moved
    from elsewhere): it is rebuilt, never read."""


class BudgetError(CtxfastError):
    """The mandatory (pinned) content alone exceeds the token budget: no valid window exists."""


class ConfigError(CtxfastError):
    """A configuration file or value is malformed."""


__all__ = [
    "BudgetError",
    "ConfigError",
    "CtxfastError",
    "EncodingError",
    "IndexError",
    "IndexNotFoundError",
    "IndexOSError",
    "IndexPermissionError",
    "IndexSchemaError",
    "IndexUntrustedError",
    "InternalError",
    "InvalidArgumentError",
]
