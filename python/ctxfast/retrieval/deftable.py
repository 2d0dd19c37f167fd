"""Retrieval's definition tables, kept native and looked up by key.

Retrieval reads a repository's definitions by name, qualname, node id and file, and the
name index by membership. A fresh process answers one query, which looks up a few dozen
keys, but building Python rows and dictionaries for a large repository's tens of thousands
of definitions cost it more than the query: so the tables live in one native
:class:`~ctxfast._native.DefTable`, stored with the retrieval state and read back without
making a Python object per definition. The views below answer as the dictionaries they
replace did (same rows, same order; a name's definitions in file order, a qualname's first
definition), making a :class:`~ctxfast.recon.graph.Node` only for the rows a lookup returns.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, overload

from ctxfast import _native
from ctxfast.recon import graph_db
from ctxfast.recon.graph import NODE_COLUMNS, Node


def _node(row: tuple[Any, ...]) -> Node:
    return tuple.__new__(Node, row)


def _nodes(rows: list[tuple[Any, ...]]) -> list[Node]:
    return [tuple.__new__(Node, r) for r in rows]


def build_table(con: graph_db.Connection) -> _native.DefTable:
    """The table of one repository state from ``recon.db``: its definitions' node rows
    (functions and classes, by file, line and id) with their skeleton signatures, the
    qualnames of the name index, and each file's module node. The native side runs the
    queries and builds the table from their rows directly."""
    return _native.DefTable.from_queries(
        con,
        f"SELECT {NODE_COLUMNS}, COALESCE(m.signature, '') FROM {graph_db.DEFINITIONS} n "
        "LEFT JOIN defs_meta m ON m.id = n.id ORDER BY n.file, n.line, 1",
        "SELECT qualname FROM name_index",
        "SELECT file, qualname FROM nodes WHERE kind = 'def' ORDER BY qualname || ':' || line",
    )


class _View:
    """A view over one table (the classes below differ only in the lookup they make)."""

    __slots__ = ("_t",)

    def __init__(self, table: _native.DefTable) -> None:
        self._t = table


class Definitions(_View):
    """Every definition in row order (by file, line, id), as a sequence of ``Node``."""

    def __len__(self) -> int:
        return len(self._t)

    def __bool__(self) -> bool:
        return len(self._t) > 0

    @overload
    def __getitem__(self, i: int) -> Node: ...
    @overload
    def __getitem__(self, i: slice) -> list[Node]: ...
    def __getitem__(self, i: int | slice) -> Node | list[Node]:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self._t)))]
        if i < 0:
            i += len(self._t)
        if i < 0:
            raise IndexError("definition index out of range")
        return _node(self._t.row(i))

    def __iter__(self) -> Iterator[Node]:
        return iter(_nodes(self._t.slice(0, len(self._t))))


class DefsByName(_View):
    """Definition name → its definitions in row order (``get(name, default)``)."""

    def get(self, name: str, default: Any = None) -> Any:
        rows = self._t.named(name)
        return _nodes(rows) if rows else default

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self._t.has_name(name)


class DefsByFile(_View):
    """File → its definitions in row order; :meth:`positions` gives their row span."""

    def get(self, path: str, default: Any = None) -> Any:
        span = self._t.file_span(path)
        return default if span is None else _nodes(self._t.slice(*span))

    def positions(self, path: str) -> range:
        """The rows of ``path``'s definitions in :class:`Definitions` (empty if none)."""
        span = self._t.file_span(path)
        return range(0) if span is None else range(*span)

    def __contains__(self, path: object) -> bool:
        return isinstance(path, str) and self._t.file_span(path) is not None

    def innermost(self, path: str, line: int) -> Node | None:
        """The smallest definition of ``path`` containing ``line`` (the first of equal
        sizes): where a traceback frame or a search hit lands."""
        row = self._t.innermost(path, line)
        return None if row is None else _node(row)


class DefByQualname(_View):
    """Qualname → its definition: the longest of those its first file gives it
    (``DefTable.by_qualname``: an implementation, not the `@overload` stubs above it)."""

    def get(self, qualname: str, default: Any = None) -> Any:
        row = self._t.by_qualname(qualname)
        return default if row is None else _node(row)

    def __getitem__(self, qualname: str) -> Node:
        row = self._t.by_qualname(qualname)
        if row is None:
            raise KeyError(qualname)
        return _node(row)

    def __contains__(self, qualname: object) -> bool:
        return isinstance(qualname, str) and self._t.by_qualname(qualname) is not None


class Signatures(_View):
    """Node id → the definition's skeleton signature (header line, no body)."""

    def __getitem__(self, node_id: str) -> str:
        sig = self._t.signature(node_id)
        if sig is None:
            raise KeyError(node_id)
        return sig

    def get(self, node_id: str, default: Any = None) -> Any:
        sig = self._t.signature(node_id)
        return default if sig is None else sig


class ModuleOf(_View):
    """File → the qualname of its module node."""

    def get(self, path: str, default: Any = None) -> Any:
        module = self._t.module_of(path)
        return default if module is None else module


class NameIndex(_View):
    """The identifiers query construction keeps: a name-index qualname or a definition's
    name (membership only)."""

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and (self._t.has_qualname(name) or self._t.has_name(name))


__all__ = [
    "DefByQualname",
    "Definitions",
    "DefsByFile",
    "DefsByName",
    "ModuleOf",
    "NameIndex",
    "Signatures",
    "build_table",
]
