"""The one way Python opens ``recon.db``, the code graph the Rust core writes.

The core owns the schema and stamps it into ``meta.schema_version`` as
``schema.extractor.resolver`` (``9.10.1``: the tables, the extractor that filled them and the
name resolution that drew the edges); a build of another version rebuilds an index of
another schema, extractor or resolver when it indexes, but a reader that skips the
refresh (``refresh=False``, a second process, an index copied from elsewhere) would read
tables whose columns mean something else, or fail with a bare ``no such column``. Every
reader opens the database here, read-only, and gets :class:`~ctxfast.errors.IndexSchemaError`
naming both versions and the way out instead.

The connection is the core's (:class:`ctxfast._native.GraphReader`), not the stdlib
``sqlite3``'s: SQLite's POSIX locks do not survive two copies of SQLite in one process (the
core's close of its own connection drops the locks the other copy holds), and another process
then re-initialised the WAL index under a reader's mapping, killing it with SIGBUS. With one
copy, readers and the core's refreshes share descriptors and locks as SQLite intends.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ctxfast import _native
from ctxfast.errors import IndexError as CtxIndexError
from ctxfast.errors import IndexSchemaError, IndexUntrustedError
from ctxfast.userkey import stamp_verifies

# The core's version, exposed by the binding (never copied here).
SCHEMA_VERSION: str = _native.GRAPH_SCHEMA_VERSION

#: How long a reader waits on a busy database (seconds; the stdlib ``sqlite3`` default).
BUSY_TIMEOUT_S = 5.0

Connection = _native.GraphReader


def check_schema(con: Connection, db_path: Path) -> None:
    """Raises :class:`IndexSchemaError` unless the database behind ``con`` carries this
    core's schema version."""
    try:
        row = con.row("SELECT value FROM meta WHERE key = 'schema_version'")
    except CtxIndexError as exc:
        if "no such table" not in str(exc):
            raise CtxIndexError(f"cannot read {db_path}: {exc}") from exc
        row = None
    found = row[0] if row else None
    if found != SCHEMA_VERSION:
        raise IndexSchemaError(
            f"index at {db_path} has schema {found or 'none'}, this ctxfast needs "
            f"{SCHEMA_VERSION}: re-index (`ctxfast index` rebuilds an index of another "
            f"schema, or delete {db_path.parent})"
        )


def owner_problem(con: Connection, db_path: Path) -> str | None:
    """Why the index behind ``con`` was not written by this user's ctxfast (``None``: it was).
    The stamp is the core's (``graph::owner``): a random ``owner_nonce`` and its ``owner_tag``
    under the user's key (:mod:`ctxfast.userkey`), bound to the database's place."""
    try:
        rows = dict(
            con.rows("SELECT key, value FROM meta WHERE key IN ('owner_nonce', 'owner_tag')")
        )
    except CtxIndexError as exc:
        return f"its owner stamp cannot be read ({exc})"
    if "owner_nonce" not in rows or "owner_tag" not in rows:
        return "it carries no owner stamp"
    if not stamp_verifies(rows["owner_nonce"], rows["owner_tag"], db_path):
        return "its owner stamp does not verify"
    return None


def problem(db_path: str | Path) -> str | None:
    """Why the index at ``db_path`` cannot be read as it stands (missing, of another schema,
    not written by this user's ctxfast), or ``None``: what decides whether a read without a
    refresh must index first."""
    try:
        connect(db_path).close()
    except CtxIndexError as exc:
        return str(exc)
    return None


def connect(db_path: str | Path, *, busy_timeout: float = BUSY_TIMEOUT_S) -> Connection:
    """A read-only connection to the graph at ``db_path``, its schema version and owner stamp
    checked (an index a repository shipped is never read). Any thread may use it, one query
    at a time."""
    path = Path(db_path)
    try:
        con = Connection(path, busy_timeout)
    except CtxIndexError as exc:
        raise CtxIndexError(f"cannot open {path}: {exc}") from exc
    try:
        check_schema(con, path)
        why = owner_problem(con, path)
        if why is not None:
            raise IndexUntrustedError(
                f"index at {path} was not written by this user's ctxfast ({why}): "
                "re-index (`ctxfast index` rebuilds it)"
            )
    except BaseException:
        con.close()
        raise
    return con


def with_text_ids(con: Connection) -> Connection:
    """Shadows ``nodes``, ``edges``, ``defs_meta`` and ``unresolved`` on ``con`` with TEMP
    views that show text ids (``qualname:line``) where the tables hold integer keys: for
    people and tests comparing graphs by id, not for the readers' hot queries (a lookup by
    text id through a view scans the table)."""
    con.executescript(_native.GRAPH_TEXT_ID_VIEWS)
    return con


@contextmanager
def reading(db_path: str | Path) -> Iterator[Connection]:
    """:func:`connect` for one block of queries, closed after it."""
    con = connect(db_path)
    try:
        yield con
    finally:
        con.close()


#: The functions and classes of the ``nodes`` view, with its columns, as a subquery for
#: readers of all of them sorted by file (``FROM {DEFINITIONS} n ... ORDER BY n.file``). Asked
#: of the view, SQLite walks the ``nodes_file`` index over every node, references included,
#: and reads each row it points at; one scan of ``node_rows`` that sorts the few it keeps
#: costs a third of that (0.16 against 0.46 s on Django, read when the retrieval state is
#: built with the index).
DEFINITIONS = (
    "(SELECT r.id AS id, r.kind AS kind, r.name AS name, r.qualname AS qualname, "
    "f.path AS file, r.line AS line, r.col AS col, r.end_line AS end_line "
    "FROM node_rows r CROSS JOIN files f ON f.id = r.file_id "
    "WHERE r.kind IN ('function', 'class'))"
)


#: Every table of an index through the views readers use, without what only numbers rows
#: internally (``files.id``, the edges' rowid), times a run or stamps its owner: two indexes
#: of one tree hold the same graph exactly when these rows are equal, however each was built
#: (cold, refreshed, seeded from another tree's index).
CONTENT_QUERIES = {
    "files": "SELECT path, sha256, language, bytes, parse_error FROM files",
    "nodes": "SELECT * FROM nodes",
    "edges": "SELECT src, dst, type FROM edges",
    "defs_meta": "SELECT * FROM defs_meta",
    "unresolved": "SELECT * FROM unresolved",
    "name_index": "SELECT * FROM name_index",
    "raw": "SELECT * FROM raw",
    "file_deps": "SELECT src_file, dst_file FROM file_deps",
    "file_stat": "SELECT * FROM file_stat",
    "meta": "SELECT * FROM meta WHERE key NOT IN "
    "('run_start_ns', 'last_refresh', 'owner_nonce', 'owner_tag')",
}


def content_rows(db_path: str | Path) -> dict[str, list[tuple[Any, ...]]]:
    """Each table's :data:`CONTENT_QUERIES` rows, sorted: what "the same graph" compares."""
    with reading(db_path) as con:
        return {t: sorted(con.rows(q), key=repr) for t, q in CONTENT_QUERIES.items()}
