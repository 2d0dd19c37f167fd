"""The pieces of the retrieval state made from the files' texts alone, and their early build.

The whole-file BM25 index, the string-literal fragments, the bundle counts and the Rust
``include!`` targets depend on nothing but the indexed files and their texts. A cold build
knows those before it is done: once every file's rows are written it publishes the content
rows ``(path, sha256, language)`` the index will hold (``IndexProgress.content_rows``), then
spends about a second sorting nodes and building SQLite indexes on one core (Django). A
:class:`Prebuild` thread makes these pieces in that second and stores them under the content
key of the published rows; :func:`~ctxfast.retrieval.warm.build_state` then reads them back
through the usual :class:`~ctxfast.retrieval.repoindex.RepoIndex` lookups.

The key is what keeps this safe: a piece stored under the key of the published rows serves
only an index whose rows give that key, so if the rows ever differed from what the index
commits, the pieces would go unread and be swept, never misread. Each piece has one builder
here, used by both paths, so a piece built early is the one built on first use.
"""

from __future__ import annotations

import logging
import posixpath
import re
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from ctxfast import _native
from ctxfast.bm25 import BM25Index
from ctxfast.confine import decode, read_many_confined
from ctxfast.retrieval.literals import LiteralIndex
from ctxfast.state_store import StateStore, content_key_of

log = logging.getLogger(__name__)

FILE_BM25 = "file_bm25"
BUNDLES = "bundles-1"
#: Lines shorter than this many bytes never mark a copy (``ctxfast_core::bundles``).
BUNDLE_MIN_CHARS = 16
LINE_SETS = f"line-sets-{BUNDLE_MIN_CHARS}"
INCLUDED = "included-1"

#: Rust's ``include!("path")`` (a string literal path, the form build scripts use).
_INCLUDE = re.compile(r'\binclude!\s*\(\s*"([^"\\]+)"\s*\)')

#: How often the prebuild thread looks for the published content rows.
POLL_S = 0.02

ContentRow = tuple[str, str, str]


class Prebuilt(NamedTuple):
    """What a :class:`Prebuild` read: the content key it stored the pieces under, and each
    file's lines and text (its lines joined), for the state of that key to adopt instead of
    reading the files again (:meth:`~ctxfast.retrieval.repoindex.RepoIndex.adopt`)."""

    key: str
    lines: dict[str, list[str]]
    texts: dict[str, str]


def read_lines(root: Path, paths: Iterable[str]) -> Iterator[tuple[str, list[str]]]:
    """Each file's lines (no newlines), read confined to ``root`` in one batch with
    undecodable bytes replaced, as every reader of the state shows them; a file that
    cannot be read has none."""
    for path, data in read_many_confined(root, paths):
        yield path, [] if isinstance(data, OSError) else decode(data).splitlines()


def literals_name(min_chars: int, name_max_chars: int) -> str:
    """The store name of the literal index of these settings."""
    return f"literals-{min_chars}-n{name_max_chars}"


def file_bm25_docs(files: Sequence[str], texts: Sequence[str]) -> list[str]:
    """The whole-file BM25 documents: the path and its words, a newline, the text."""
    docs = []
    for path, text in zip(files, texts, strict=True):
        stem_words = path.replace("/", " ").replace(".", " ").replace("_", " ")
        docs.append(f"{path} {stem_words}\n" + text)
    return docs


def literals_plain(
    files: Sequence[str], texts: Sequence[str], min_chars: int, name_max_chars: int
) -> dict[str, Any]:
    """The literal index of the files, as the state store keeps it."""
    pairs = zip(files, texts, strict=True)
    return LiteralIndex(pairs, min_chars, name_max_chars).to_plain()


def line_sets(texts: Sequence[str]) -> _native.LineSets:
    """Each text's distinct line hashes, what the bundle scan compares."""
    return _native.LineSets(list(texts), BUNDLE_MIN_CHARS)


def stored_line_sets(store: StateStore, build: Callable[[], _native.LineSets]) -> _native.LineSets:
    """The line sets stored in ``store`` (piece :data:`LINE_SETS`), or ``build()``'s, stored."""
    return store.get(LINE_SETS, build, _native.LineSets.to_bytes, _native.LineSets.from_bytes)


def bundled(files: Sequence[str], sets: _native.LineSets) -> dict[str, int]:
    """Per file, how many other files it holds nearly whole, when it holds any (the rules:
    ``ctxfast_core::bundles``), from the files' :func:`line_sets`."""
    counts = sets.held_counts()
    return {f: n for f, n in zip(files, counts, strict=True) if n}


def includes(
    files: Sequence[str],
    lines: Callable[[str], list[str]],
    known: Iterable[str] | None = None,
) -> dict[str, list[str]]:
    """For each Rust file of ``files``, the repository files (``known``, by default
    ``files``) it includes with ``include!("path")`` (the path relative to the including
    file's directory); files that include nothing are absent."""
    known = set(files if known is None else known)
    out: dict[str, list[str]] = {}
    for f in files:
        if not f.endswith(".rs"):
            continue
        base = f.rsplit("/", 1)[0] if "/" in f else ""
        for line in lines(f):
            if "include!" not in line:
                continue
            for m in _INCLUDE.finditer(line):
                target = posixpath.normpath(posixpath.join(base, m.group(1)))
                if target in known and target != f:
                    out.setdefault(f, []).append(target)
    return out


class Prebuild:
    """The text pieces of a cold build's state, made on a thread while the build finishes.

    Started before the native run with the run's ``content_rows`` reader; the thread waits
    for the rows (a refresh never publishes any), reads every file once, stores the pieces
    under the rows' content key, and keeps the lines it read for :meth:`result`. Call
    :meth:`finish` once the run has returned (or failed): it stops the wait and joins."""

    def __init__(
        self,
        root: Path,
        index_dir: Path,
        content_rows: Callable[[], list[ContentRow] | None],
    ) -> None:
        self._root = root
        self._index_dir = index_dir
        self._rows = content_rows
        self._run_over = threading.Event()
        self._made: Prebuilt | None = None
        self._thread = threading.Thread(target=self._run, name="ctxfast-prebuild", daemon=True)
        self._thread.start()

    def finish(self) -> Prebuilt | None:
        """Joins the thread; what it read, when it made the pieces."""
        self._run_over.set()
        self._thread.join()
        return self._made

    def _run(self) -> None:
        while (rows := self._rows()) is None:
            # Looked at once more after the run: a short run may publish and end between
            # two polls.
            if self._run_over.is_set():
                return
            self._run_over.wait(POLL_S)
        try:
            self._made = self._build(rows)
        except Exception:  # a cache: build_state makes what is missing
            log.exception("retrieval state text pieces not prebuilt")

    def _build(self, rows: list[ContentRow]) -> Prebuilt:
        start = time.perf_counter()
        key = content_key_of(rows)
        files = [p for p, _, _ in rows]
        lines = dict(read_lines(self._root, files))
        texts = ["\n".join(lines[f]) for f in files]
        store = StateStore(self._index_dir, key)
        # Imported here, on this thread, while the native run goes on: the configuration
        # imports the retrieval stack (a cycle at module level, and 85 ms a new process
        # would otherwise pay before its run starts).
        from ctxfast.retrieval.config import RetrievalConfig

        cfg = RetrievalConfig().files
        shape = (cfg.literal_min_chars, cfg.literal_name_max_chars)
        store.get(
            FILE_BM25,
            lambda: BM25Index(file_bm25_docs(files, texts)),
            BM25Index.to_bytes,
            BM25Index.from_bytes,
        )
        store.get_plain(literals_name(*shape), lambda: literals_plain(files, texts, *shape))
        sets = stored_line_sets(store, lambda: line_sets(texts))
        store.get_plain(BUNDLES, lambda: bundled(files, sets))
        store.get_plain(INCLUDED, lambda: includes(files, lines.__getitem__))
        log.debug(
            "index: text pieces of the retrieval state prebuilt in %.3fs (process CPU %.3fs)",
            time.perf_counter() - start,
            time.process_time(),
        )
        return Prebuilt(key, lines, dict(zip(files, texts, strict=True)))


__all__ = [
    "BUNDLES",
    "FILE_BM25",
    "INCLUDED",
    "LINE_SETS",
    "Prebuild",
    "Prebuilt",
    "bundled",
    "file_bm25_docs",
    "includes",
    "line_sets",
    "literals_name",
    "literals_plain",
    "read_lines",
    "stored_line_sets",
]
