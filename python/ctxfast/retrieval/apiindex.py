"""The API-description index: ``api.db``, one row per function/class/method.

``desc_text`` (signature + first docstring paragraph) is what the task is matched against,
description to description: match what the code will *call* against what the task *means*.
The index is derived from ``recon.db`` and re-indexed per changed file (keyed by the file's
content hash), so a refresh costs only the files that changed.

Like ``recon.db`` it carries an owner stamp (:mod:`ctxfast.userkey`) in ``api_meta``: an
``api.db`` this user's ctxfast did not write (a repository shipped it), or one SQLite finds
damaged, is removed and built again from ``recon.db``, never read.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from ctxfast.bm25 import BM25Index, SymbolSet
from ctxfast.errors import IndexError as CtxIndexError
from ctxfast.index_dir import drop_odd
from ctxfast.recon import graph_db
from ctxfast.userkey import new_stamp, stamp_verifies

if TYPE_CHECKING:
    from ctxfast.retrieval.repoindex import RepoIndex

API_DB_NAME = "api.db"
DOCSTRING_MAX_CHARS = 200
API_DESC_TOP_K = 20

SCHEMA = """
CREATE TABLE IF NOT EXISTS api_index (
    qualname TEXT, kind TEXT, signature TEXT, docstring TEXT, desc_text TEXT,
    file TEXT, line INT
);
CREATE INDEX IF NOT EXISTS api_index_file ON api_index(file);
CREATE TABLE IF NOT EXISTS api_files (path TEXT PRIMARY KEY, sha256 TEXT);
CREATE TABLE IF NOT EXISTS api_meta (key TEXT PRIMARY KEY, value TEXT);
"""
#: The files SQLite keeps for ``api.db``.
_SIDE_SUFFIXES = ("", "-wal", "-shm", "-journal")

log = logging.getLogger(__name__)


class ApiRow(NamedTuple):
    qualname: str
    kind: str
    signature: str
    docstring: str
    desc_text: str
    file: str
    line: int


def first_paragraph(doc: str, max_chars: int = DOCSTRING_MAX_CHARS) -> str:
    """The first docstring paragraph, whitespace-folded, at most ``max_chars``."""
    para = doc.strip().split("\n\n", 1)[0]
    return " ".join(para.split())[:max_chars]


def refresh_api_index(recon_db: Path, api_db: Path) -> int:
    """Brings ``api.db`` in line with ``recon.db``; returns how many files were re-indexed.
    An ``api.db`` not written by this user's ctxfast, or damaged, is rebuilt from scratch."""
    src = graph_db.connect(recon_db)
    try:
        files = dict(src.rows("SELECT path, sha256 FROM files WHERE sha256 IS NOT NULL"))
        api_db.parent.mkdir(parents=True, exist_ok=True)
        with _refresh_lock(api_db):
            return _check_and_sync(src, files, api_db)
    except CtxIndexError as exc:
        raise CtxIndexError(f"cannot read {recon_db}: {exc}") from exc
    finally:
        src.close()


@contextlib.contextmanager
def _refresh_lock(api_db: Path) -> Iterator[None]:
    """Refreshes of one ``api.db`` take turns (threads and processes): one that found a
    half-made file of another would take it for a foreign one and remove it under it. In a
    directory this process cannot write, nobody refreshes, and no lock is needed."""
    lock = api_db.with_name(api_db.name + ".lock")
    drop_odd(lock, want_dir=False)
    try:
        fd = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    except OSError:
        yield
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # releases the lock


def _check_and_sync(src: graph_db.Connection, files: dict[str, str], api_db: Path) -> int:
    """:func:`_sync`, after removing an ``api_db`` that cannot be trusted."""
    for suffix in _SIDE_SUFFIXES:
        drop_odd(api_db.with_name(api_db.name + suffix), want_dir=False)
    why = _foreign(api_db)
    if why is not None:
        log.warning("rebuilding %s: %s", api_db, why)
        _discard(api_db)
    try:
        return _sync(src, files, api_db)
    except sqlite3.DatabaseError as exc:  # damaged since the check: rebuild once
        log.warning("rebuilding %s: %s", api_db, exc)
        _discard(api_db)
        return _sync(src, files, api_db)


def _foreign(api_db: Path) -> str | None:
    """Why ``api_db`` cannot be trusted (``None``: missing, or stamped by this user's
    ctxfast and sound enough to read its stamp)."""
    if not api_db.exists():
        return None
    try:
        con = sqlite3.connect(f"file:{api_db}?mode=ro", uri=True)
        try:
            rows = dict(con.execute("SELECT key, value FROM api_meta"))
        finally:
            con.close()
    except sqlite3.DatabaseError as exc:
        return f"unreadable ({exc})"
    if not stamp_verifies(rows.get("owner_nonce"), rows.get("owner_tag"), api_db):
        return "not written by this user's ctxfast"
    return None


def _discard(api_db: Path) -> None:
    for suffix in _SIDE_SUFFIXES:
        with contextlib.suppress(FileNotFoundError):
            api_db.with_name(api_db.name + suffix).unlink()


def _sync(src: graph_db.Connection, files: dict[str, str], api_db: Path) -> int:
    """Re-indexes the files of ``recon.db`` whose content hash ``api_db`` does not hold yet
    (stamping a new ``api_db`` as this user's)."""
    dst = sqlite3.connect(api_db)
    try:
        dst.executescript(SCHEMA)
        if dst.execute("SELECT COUNT(*) FROM api_meta").fetchone()[0] == 0:
            nonce, tag = new_stamp(api_db)
            with dst:
                dst.executemany(
                    "INSERT INTO api_meta VALUES (?, ?)",
                    [("owner_nonce", nonce), ("owner_tag", tag)],
                )
        known = dict(dst.execute("SELECT path, sha256 FROM api_files"))
        changed = sorted(p for p, s in files.items() if known.get(p) != s)
        removed = sorted(set(known) - set(files))
        if not changed and not removed:
            return 0
        classes = {q for (q,) in src.rows("SELECT qualname FROM nodes WHERE kind = 'class'")}
        # One query for every changed file (a cold build changes all of them: one query per
        # file cost 0.6 s on Django), grouped here by file in the order of the statement.
        by_file: dict[str, list[tuple[Any, ...]]] = {}
        for path, *row in src.rows(
            "SELECT n.file, n.qualname, n.kind, n.line, COALESCE(m.signature, n.name), "
            f"COALESCE(m.doc, '') FROM {graph_db.DEFINITIONS} n "
            "LEFT JOIN defs_meta m ON m.id = n.id "
            "WHERE n.file IN (SELECT value FROM json_each(?)) "
            "ORDER BY n.file, n.line, n.qualname || ':' || n.line",
            (json.dumps(changed, ensure_ascii=False),),
        ):
            by_file.setdefault(path, []).append(tuple(row))
        out = []
        for path in changed:
            for qualname, kind, line, sig, doc in by_file.get(path, ()):
                if kind == "function" and qualname.rsplit(".", 1)[0] in classes:
                    kind = "method"
                sig = sig.splitlines()[0].strip() if sig else ""
                docstring = first_paragraph(doc)
                out.append(
                    (qualname, kind, sig, docstring, f"{sig} {docstring}".strip(), path, line)
                )
        gone = [(path,) for path in [*removed, *changed]]
        with dst:
            dst.executemany("DELETE FROM api_index WHERE file = ?", gone)
            dst.executemany("DELETE FROM api_files WHERE path = ?", gone)
            dst.executemany("INSERT INTO api_index VALUES (?, ?, ?, ?, ?, ?, ?)", out)
            dst.executemany("INSERT INTO api_files VALUES (?, ?)", [(p, files[p]) for p in changed])
        return len(changed) + len(removed)
    finally:
        dst.close()


_COLUMNS = "qualname, kind, signature, docstring, desc_text, file, line"


def _select(api_db: Path, columns: str, files: list[str] | None = None) -> list[tuple[Any, ...]]:
    """``columns`` of every row (of ``files`` only, when given), in description order (file,
    then line: the order of the BM25 documents)."""
    where = "" if files is None else f" WHERE file IN ({','.join('?' * len(files))})"
    con = sqlite3.connect(f"file:{api_db}?mode=ro", uri=True)
    try:
        sql = f"SELECT {columns} FROM api_index{where} ORDER BY file, line"
        return con.execute(sql, files or ()).fetchall()
    finally:
        con.close()


def _carried_bm25(
    index: RepoIndex, where: dict[str, list[Any]], api_db: Path, symbols: SymbolSet | set[str]
) -> BM25Index | None:
    """The description index of the state a refresh replaced, spliced: the descriptions of a
    file whose content and places (line, qualname, in order) are unchanged are kept, the
    others read from ``api.db``; ``None`` when there is nothing to carry from."""
    carry = index.carry
    old = carry.plain("api_where") if carry is not None else None
    if carry is None or old is None or not where["file"] or not old["file"]:
        return None

    def by_file(w: dict[str, list[Any]]) -> dict[str, list[tuple[int, int, str]]]:
        out: dict[str, list[tuple[int, int, str]]] = {}
        for i, (f, line, q) in enumerate(zip(w["file"], w["line"], w["qualname"], strict=True)):
            out.setdefault(w["files"][f], []).append((i, line, q))
        return out

    before, now = by_file(old), by_file(where)
    keep: list[int | None] = [None] * len(where["file"])
    unchanged = set(carry.unchanged)
    for f, rows in now.items():
        was = before.get(f)
        if f in unchanged and was and [r[1:] for r in was] == [r[1:] for r in rows]:
            for (i, _, _), (j, _, _) in zip(rows, was, strict=True):
                keep[i] = j

    def new_docs(positions: list[int]) -> list[str]:
        places = [
            (where["files"][where["file"][i]], where["line"][i], where["qualname"][i])
            for i in positions
        ]
        files = sorted({f for f, _, _ in places})
        texts: dict[tuple[str, int, str], list[str]] = {}
        for f, line, q, text in _select(api_db, "file, line, qualname, desc_text", files):
            texts.setdefault((f, line, q), []).append(text)
        return [texts[p].pop(0) for p in places]

    return carry.bm25("api_bm25", keep, new_docs, symbols)


def _where_to_plain(where: list[tuple[str, int, str]]) -> dict[str, list[Any]]:
    """The locations as JSON columns, each file named once (what the index keeps in memory
    and in the state store): a search makes a row's triple only for its few hits."""
    files = sorted({f for f, _, _ in where})
    number = {f: i for i, f in enumerate(files)}
    return {
        "files": files,
        "file": [number[f] for f, _, _ in where],
        "line": [line for _, line, _ in where],
        "qualname": [q for _, _, q in where],
    }


class ApiIndex:
    """BM25 over ``desc_text`` (the same identifier-weighted scorer as the re-rank).

    Only where each description lives is held in memory (the BM25 index is over the texts);
    a search reads its few hits back from ``api.db``. Given the
    :class:`~ctxfast.retrieval.repoindex.RepoIndex` of the state ``api.db`` was refreshed
    to, the locations and the BM25 index are kept in its state store."""

    def __init__(self, api_db: Path, symbols: SymbolSet | set[str], index: RepoIndex | None = None):
        self.api_db = api_db

        def where() -> list[tuple[str, int, str]]:
            return [(f, line, q) for f, line, q in _select(api_db, "file, line, qualname")]

        def build() -> BM25Index:
            docs = [text for (text,) in _select(api_db, "desc_text")]
            return BM25Index(docs or [""], symbols=symbols)

        if index is None:
            self._where = _where_to_plain(where())
            self.bm25 = build()
        else:
            self._where = index.stored_plain("api_where", lambda: _where_to_plain(where()))
            self.bm25 = index.stored_bm25(
                "api_bm25",
                lambda: _carried_bm25(index, self._where, api_db, symbols) or build(),
            )

    def _place(self, doc: int) -> tuple[str, int, str]:
        """``(file, line, qualname)`` of description ``doc``."""
        w = self._where
        return w["files"][w["file"][doc]], w["line"][doc], w["qualname"][doc]

    def _row(self, con: sqlite3.Connection, doc: int) -> ApiRow | None:
        """The row of description ``doc`` (a BM25 document number); ``None`` when another
        process refreshed ``api.db`` since this index was built (the next, refreshed
        retrieval rebuilds it)."""
        row = con.execute(
            f"SELECT {_COLUMNS} FROM api_index WHERE file = ? AND line = ? AND qualname = ?"
            " LIMIT 1",
            self._place(doc),
        ).fetchone()
        return None if row is None else ApiRow._make(row)

    def search(self, q: str | list[str], k: int = API_DESC_TOP_K) -> list[tuple[ApiRow, float]]:
        """The best descriptions for ``q`` (text, or query terms already tokenized)."""
        if not self._where["file"] or not (q.strip() if isinstance(q, str) else q):
            return []
        hits = [(i, s) for i, s in self.bm25.query(q, k=k) if s > 0]
        if not hits:
            return []
        try:
            con = sqlite3.connect(f"file:{self.api_db}?mode=ro", uri=True)
            try:
                rows = [(self._row(con, i), s) for i, s in hits]
            finally:
                con.close()
        except sqlite3.DatabaseError as exc:  # damaged since the refresh: the next one rebuilds
            log.warning("API descriptions unavailable (%s): %s", self.api_db, exc)
            return []
        return [(r, s) for r, s in rows if r is not None]
