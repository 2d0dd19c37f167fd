"""Read API over the line-level code graph (``recon.db``).

The graph is written by the Rust core (``ctxfast._native.index_graph``); reading is plain
SQL on connections from :mod:`ctxfast.recon.graph_db` (the core's SQLite; it checks the
schema version), one short query per call, so callers never hold
per-node Python objects for the whole repository. Node kinds: ``function``, ``class``,
``var`` and ``def`` (a file's module node) are definitions; ``ref`` rows are reference sites
(see ``rust/ctxfast-core/src/graph/mod.rs`` for the exact conventions). All paths are POSIX
paths relative to the repository root.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from ctxfast._native import node_key
from ctxfast.errors import IndexError as CtxIndexError
from ctxfast.recon import graph_db

DEFINITION_KINDS = ("function", "class", "var", "def")


def _id(alias: str) -> str:
    """SQL for the text id of the node row ``alias``: ``recon.db`` keys nodes by an integer
    (:func:`ctxfast._native.node_key` of this text), and the text is ``qualname:line``."""
    return f"({alias}.qualname || ':' || {alias}.line)"


#: The columns of a ``Node``, in field order, from the ``nodes`` row aliased ``n``.
NODE_COLUMNS = f"{_id('n')}, n.kind, n.name, n.qualname, n.file, n.line, n.col, n.end_line"
# Ties in a nodes index come in key order; ordering them by text id keeps the order every
# reader saw when the id itself was the key.
_BY_ID = _id("n")
# Parameters per batched query, well under SQLite's limit (32,766 since 3.32).
_BATCH = 500


def _longest_first(nodes: list[Node]) -> list[Node]:
    """``nodes`` with one file's nodes of the same qualname and kind ordered longest first
    (then by line), all at the place the first of them had."""
    groups: dict[tuple[str, str, str], list[Node]] = {}
    for n in nodes:
        groups.setdefault((n.file, n.qualname, n.kind), []).append(n)
    if len(groups) == len(nodes):
        return nodes
    return [
        n
        for group in groups.values()
        for n in sorted(group, key=lambda n: (n.line - n.end_line, n.line))
    ]


class Node(NamedTuple):
    """One row of ``nodes``: the one row model of the table, for the graph's readers and for
    retrieval's definition tables alike. A named tuple because a large repository has tens
    of thousands of definitions, which retrieval makes from stored rows in every process
    (by C-level calls, not attribute by attribute)."""

    id: str
    kind: str
    name: str
    qualname: str
    file: str
    line: int
    col: int
    end_line: int

    @property
    def is_definition(self) -> bool:
        return self.kind in DEFINITION_KINDS


@dataclass(frozen=True)
class Edge:
    """One row of ``edges``: ``type`` is ``invoke``, ``import`` or ``contain``."""

    src: str
    dst: str
    type: str


@dataclass(frozen=True)
class FileRecord:
    """One row of ``files``; ``sha256`` is ``None`` for skipped files (reason in
    ``parse_error``)."""

    path: str
    sha256: str | None
    language: str | None
    bytes: int
    parse_error: str | None


@dataclass(frozen=True)
class Unresolved:
    """A reference whose name resolves nowhere (not project code, builtin or imported)."""

    name: str
    node_id: str
    file: str
    line: int
    col: int


@dataclass(frozen=True)
class Signature:
    """Skeleton signature (header line, no body) and first docstring paragraph of a definition."""

    signature: str
    doc: str


def _node(row: tuple[Any, ...]) -> Node:
    return Node(*row)


class CodeGraph:
    """Queries over one ``recon.db``. Cheap to construct; each call opens a read transaction."""

    def __init__(self, db_path: str | Path) -> None:
        self.db_path = Path(db_path)
        if not self.db_path.exists():
            raise CtxIndexError(f"no code graph at {self.db_path}; run Repository.index() first")
        # One read-only connection per thread, reused across queries: opening a connection
        # re-parses the schema, which cost more than the indexed query itself (~0.5 ms vs
        # ~0.05 ms) when retrieval and compose issue thousands of point lookups.
        self._local = threading.local()

    def _con(self) -> graph_db.Connection:
        con: graph_db.Connection | None = getattr(self._local, "con", None)
        if con is None:
            con = graph_db.connect(self.db_path)
            self._local.con = con
        return con

    def _q(self, sql: str, args: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        con = self._con()
        try:
            return con.rows(sql, args)
        except CtxIndexError as exc:
            raise CtxIndexError(f"query on {self.db_path} failed: {exc}") from exc

    def close(self) -> None:
        """Closes this thread's connection (also closed when the graph is collected)."""
        con = getattr(self._local, "con", None)
        if con is not None:
            con.close()
            self._local.con = None

    def node(self, node_id: str) -> Node | None:
        rows = self._q(f"SELECT {NODE_COLUMNS} FROM nodes n WHERE n.id = ?", (node_key(node_id),))
        return _node(rows[0]) if rows else None

    def nodes_in_file(self, path: str) -> list[Node]:
        sql = (
            f"SELECT {NODE_COLUMNS} FROM nodes n WHERE n.file = ? ORDER BY n.line, n.col, {_BY_ID}"
        )
        return [_node(r) for r in self._q(sql, (path,))]

    def lookup(self, name_or_qualname: str, *, include_refs: bool = False) -> list[Node]:
        """Definitions whose qualname (via ``name_index``), qualname suffix or bare name match.

        Exact qualname hits come first, then ``...<name>`` suffix hits, then bare-name hits.
        Definitions one file gives the same qualname (``@overload`` stubs before the
        implementation, a property's getter and setter, per-platform variants) come longest
        first, where the first of them stood: the implementation, not a stub, is what a
        caller asking for the name reads.
        """
        kinds = "" if include_refs else "AND n.kind != 'ref'"
        exact = self._q(
            f"SELECT {NODE_COLUMNS} FROM name_index x JOIN nodes n ON n.qualname = x.qualname "
            f"WHERE x.qualname = ? {kinds} ORDER BY n.file, n.line, {_BY_ID}",
            (name_or_qualname,),
        )
        last = name_or_qualname.rsplit(".", 1)[-1]
        by_name = self._q(
            f"SELECT {NODE_COLUMNS} FROM nodes n WHERE n.name = ? {kinds} "
            f"ORDER BY n.file, n.line, {_BY_ID}",
            (last,),
        )
        out: dict[str, Node] = {}
        for r in exact:
            out.setdefault(r[0], _node(r))
        suffix = "." + name_or_qualname
        for r in by_name:
            if "." in name_or_qualname and not r[3].endswith(suffix):
                continue
            out.setdefault(r[0], _node(r))
        return _longest_first(list(out.values()))

    def edges_from(self, node_id: str, type: str | None = None) -> list[Edge]:
        sql = (
            f"SELECT {_id('d')} AS dst_id, e.type FROM edges e JOIN nodes d ON d.id = e.dst "
            "WHERE e.src = ?"
        )
        args: tuple[Any, ...] = (node_key(node_id),)
        if type is not None:
            sql, args = sql + " AND e.type = ?", (*args, type)
        rows = self._q(sql + " ORDER BY dst_id, e.type", args)
        return [Edge(node_id, dst, t) for dst, t in rows]

    def edges_to(self, node_id: str, type: str | None = None) -> list[Edge]:
        sql = (
            f"SELECT {_id('s')} AS src_id, e.type FROM edges e JOIN nodes s ON s.id = e.src "
            "WHERE e.dst = ?"
        )
        args: tuple[Any, ...] = (node_key(node_id),)
        if type is not None:
            sql, args = sql + " AND e.type = ?", (*args, type)
        rows = self._q(sql + " ORDER BY src_id, e.type", args)
        return [Edge(src, node_id, t) for src, t in rows]

    def callers(self, node_id: str) -> list[Node]:
        """Reference sites (``ref`` rows, or a definition when the call is on its own line)
        with an ``invoke`` edge to ``node_id``; each site's ``qualname`` is the calling scope."""
        sql = (
            f"SELECT DISTINCT {NODE_COLUMNS} FROM edges e JOIN nodes n ON n.id = e.src "
            "WHERE e.dst = ? AND e.type = 'invoke' ORDER BY n.file, n.line"
        )
        return [_node(r) for r in self._q(sql, (node_key(node_id),))]

    def callees(self, node_id: str) -> list[Node]:
        """Definitions invoked from within ``node_id``'s span (its own body, not nested defs'
        bodies excluded — any ref whose enclosing scope is this definition)."""
        n = self.node(node_id)
        if n is None:
            return []
        sql = (
            f"SELECT DISTINCT {NODE_COLUMNS} FROM nodes r JOIN edges e ON e.src = r.id "
            "JOIN nodes n ON n.id = e.dst "
            "WHERE r.qualname = ? AND r.file = ? AND e.type = 'invoke' "
            f"ORDER BY n.file, n.line, {_BY_ID}"
        )
        return [_node(r) for r in self._q(sql, (n.qualname, n.file))]

    def scope_edges(self, node: Node) -> list[tuple[Node, Edge]]:
        """Every edge leaving a reference site inside ``node``'s own scope (its call and import
        sites, and the definition row itself), as (site, edge) pairs in line order."""
        sql = (
            f"SELECT {NODE_COLUMNS}, {_id('n')}, {_id('d')} AS dst_id, e.type FROM nodes n "
            "JOIN edges e ON e.src = n.id JOIN nodes d ON d.id = e.dst "
            "WHERE n.qualname = ? AND n.file = ? AND e.type IN ('invoke', 'import') "
            "ORDER BY n.line, dst_id, e.rowid"
        )
        return [(_node(r[:8]), Edge(*r[8:])) for r in self._q(sql, (node.qualname, node.file))]

    def scope_edge_targets(self, node: Node) -> list[Node]:
        """The existing target node of each :meth:`scope_edges` edge, in the same order — one
        joined query instead of a :meth:`node` lookup per edge."""
        sql = (
            f"SELECT {NODE_COLUMNS} FROM nodes s JOIN edges e ON e.src = s.id "
            "JOIN nodes n ON n.id = e.dst "
            "WHERE s.qualname = ? AND s.file = ? AND e.type IN ('invoke', 'import') "
            f"ORDER BY s.line, {_BY_ID}, e.rowid"
        )
        return [_node(r) for r in self._q(sql, (node.qualname, node.file))]

    def edge_targets(self, node_id: str, type: str) -> list[Node]:
        """The existing target nodes of ``node_id``'s ``type`` edges, in :meth:`edges_from`
        order — one joined query instead of a :meth:`node` lookup per edge."""
        sql = (
            f"SELECT {NODE_COLUMNS} FROM edges e JOIN nodes n ON n.id = e.dst "
            f"WHERE e.src = ? AND e.type = ? ORDER BY {_BY_ID}, e.rowid"
        )
        return [_node(r) for r in self._q(sql, (node_key(node_id), type))]

    def scope_definitions(self, sites: list[Node]) -> list[Node | None]:
        """:meth:`scope_definition` of every site, in order, with one query for all the
        non-definition sites (callers of a popular function number in the hundreds)."""
        keys = {(s.qualname, s.file) for s in sites if not s.is_definition}
        names = sorted({q for q, _ in keys})
        found: dict[tuple[str, str], Node] = {}
        # By qualname only (a row-value IN over (qualname, file) defeats the index); the
        # file is matched here. Lowest line first, as ``scope_definition``'s LIMIT 1 picks.
        for i in range(0, len(names), _BATCH):
            chunk = names[i : i + _BATCH]
            sql = (
                f"SELECT {NODE_COLUMNS} FROM nodes n WHERE n.kind != 'ref' AND "
                f"n.qualname IN ({', '.join(['?'] * len(chunk))}) ORDER BY n.line, {_BY_ID}"
            )
            for r in self._q(sql, tuple(chunk)):
                if (r[3], r[4]) in keys:
                    found.setdefault((r[3], r[4]), _node(r))
        return [s if s.is_definition else found.get((s.qualname, s.file)) for s in sites]

    def file_edges(self, file: str, type: str | None = None) -> list[tuple[Node, Edge]]:
        """Every edge leaving any site or definition of ``file`` (optionally of one type)."""
        sql = (
            f"SELECT {NODE_COLUMNS}, {_id('n')}, {_id('d')} AS dst_id, e.type FROM nodes n "
            "JOIN edges e ON e.src = n.id JOIN nodes d ON d.id = e.dst WHERE n.file = ?"
        )
        args: tuple[Any, ...] = (file,)
        if type is not None:
            sql, args = sql + " AND e.type = ?", (file, type)
        return [
            (_node(r[:8]), Edge(*r[8:]))
            for r in self._q(sql + f" ORDER BY n.line, dst_id, {_BY_ID}, e.rowid", args)
        ]

    def module_qualname(self, file: str) -> str | None:
        """The dotted module name the graph gives ``file`` (its ``def`` node)."""
        rows = self._q(
            f"SELECT n.qualname FROM nodes n WHERE n.file = ? AND n.kind = 'def' "
            f"ORDER BY n.line, {_BY_ID} LIMIT 1",
            (file,),
        )
        return rows[0][0] if rows else None

    def scope_definition(self, site: Node) -> Node | None:
        """The definition whose scope contains a reference site (sites carry its qualname)."""
        if site.is_definition:
            return site
        sql = (
            f"SELECT {NODE_COLUMNS} FROM nodes n WHERE n.qualname = ? AND n.file = ? "
            f"AND n.kind != 'ref' ORDER BY n.line, {_BY_ID} LIMIT 1"
        )
        rows = self._q(sql, (site.qualname, site.file))
        return _node(rows[0]) if rows else None

    def definitions_enclosing(self, file: str, line: int) -> list[Node]:
        """Definitions containing ``line`` in ``file``, innermost first (traceback mapping)."""
        sql = (
            f"SELECT {NODE_COLUMNS} FROM nodes n WHERE n.file = ? AND n.kind != 'ref' "
            "AND n.line <= ? AND n.end_line >= ? "
            f"ORDER BY (n.end_line - n.line), n.line DESC, {_BY_ID}"
        )
        return [_node(r) for r in self._q(sql, (file, line, line))]

    def innermost_definition(self, file: str, line: int) -> Node | None:
        found = self.definitions_enclosing(file, line)
        return found[0] if found else None

    def importing_files(self, path: str) -> list[str]:
        """Files with an edge into ``path`` (``file_deps``), sorted: the bounded set of files
        that can observe a name ``path`` defines."""
        rows = self._q(
            "SELECT DISTINCT src_file FROM file_deps WHERE dst_file = ? AND src_file != ? "
            "ORDER BY src_file",
            (path, path),
        )
        return [r[0] for r in rows]

    def signature(self, node_id: str) -> Signature | None:
        rows = self._q("SELECT signature, doc FROM defs_meta WHERE id = ?", (node_key(node_id),))
        return Signature(rows[0][0] or "", rows[0][1] or "") if rows else None

    def unresolved(self, file: str | None = None) -> list[Unresolved]:
        sql = (
            f"SELECT u.name, {_id('n')}, u.file, u.line, u.col FROM unresolved u "
            "JOIN nodes n ON n.id = u.node_id"
        )
        args: tuple[Any, ...] = ()
        if file is not None:
            sql, args = sql + " WHERE u.file = ?", (file,)
        order = " ORDER BY u.file, u.line, u.col, u.rowid"
        return [Unresolved(*r) for r in self._q(sql + order, args)]

    def files(self) -> list[FileRecord]:
        rows = self._q("SELECT path, sha256, language, bytes, parse_error FROM files ORDER BY path")
        return [FileRecord(*r) for r in rows]

    def meta(self) -> dict[str, str]:
        """The ``meta`` table (``schema_version``, ``last_refresh`` as Unix seconds)."""
        return dict(self._q("SELECT key, value FROM meta ORDER BY key"))

    def counts(self) -> dict[str, int]:
        """Row counts per node kind and per edge type (cheap summary for reports)."""
        out = {
            f"nodes.{k}": c for k, c in self._q("SELECT kind, COUNT(*) FROM nodes GROUP BY kind")
        }
        out.update(
            {f"edges.{t}": c for t, c in self._q("SELECT type, COUNT(*) FROM edges GROUP BY type")}
        )
        return out
