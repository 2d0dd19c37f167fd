"""In-memory retrieval state for one indexed repository, built once and reused per query.

A query must take milliseconds, so everything that depends only on the repository (the
definition table, file texts, the whole-file BM25 index, name → defining files) is loaded
from ``recon.db`` once per ``Repository`` and keyed by the graph's content state; a refresh
that changed any file invalidates it.
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TypeVar

from ctxfast import _native
from ctxfast.bm25 import BM25Index, SymbolSet
from ctxfast.errors import IndexError as CtxIndexError
from ctxfast.recon import graph_db
from ctxfast.recon.graph import Node
from ctxfast.retrieval.carry import ROWS, Carry
from ctxfast.retrieval.deftable import (
    DefByQualname,
    Definitions,
    DefsByFile,
    DefsByName,
    ModuleOf,
    NameIndex,
    Signatures,
    build_table,
)
from ctxfast.retrieval.statements import statement_end
from ctxfast.retrieval.text_state import (
    BUNDLES,
    FILE_BM25,
    INCLUDED,
    LINE_SETS,
    Prebuilt,
    bundled,
    file_bm25_docs,
    includes,
    line_sets,
    read_lines,
    stored_line_sets,
)
from ctxfast.state_store import StateStore, content_key_of
from ctxfast.text import is_library_path, is_test_path

T = TypeVar("T")

#: Languages one project mixes freely count as one when judging which language is minor.
_LANG_FAMILY = {"typescript": "javascript", "tsx": "javascript"}

DEF_KINDS = ("function", "class")


#: Operating systems and targets a task may name, each with the spellings code gates use.
PLATFORM_NAMES: dict[str, tuple[str, ...]] = {
    "windows": ("windows", "win32", "win64", "nt", "win", "mswin", "mingw", "mingw32", "cygwin"),
    "macos": ("macos", "darwin", "osx"),
    "linux": ("linux",),
    "freebsd": ("freebsd",),
    "openbsd": ("openbsd",),
    "netbsd": ("netbsd",),
    "android": ("android",),
    "wasm": ("wasm", "wasm32", "wasi"),
}
_PLATFORM_WORDS = {
    plat: re.compile(r"(?<![a-z0-9])(?:" + "|".join(names) + r")(?![a-z0-9])")
    for plat, names in PLATFORM_NAMES.items()
}
#: A line that makes code conditional on the platform: Rust ``cfg``/``cfg!``/``target_os``,
#: Go build constraints and ``runtime.GOOS``, Python ``sys.platform``/``os.name``/
#: ``platform.system()``, Node ``process.platform``, Java ``os.name``/``IS_OS_``, C/C++
#: preprocessor conditionals, PHP ``PHP_OS``/``PHP_OS_FAMILY``, Ruby ``RUBY_PLATFORM``/
#: ``host_os``/``Gem.win_platform?`` and predicates such as ``windows?``.
_PLATFORM_GATE = re.compile(
    r"\bcfg!?\s*\(|\btarget_(?:os|family|arch)\b|\bGOOS\b|go:build|\+build\s|"
    r"\bsys\.platform\b|\bos\.name\b|\bplatform\.system\b|\bprocess\.platform\b|"
    r"\bIS_OS_|^\s*#\s*(?:el)?if|\bPHP_OS(?:_FAMILY)?\b|\bRUBY_PLATFORM\b|\bhost_os\b|"
    r"\b(?:win_platform|windows|mswin|mingw|darwin|linux|freebsd)\?"
)


class RepoIndex:
    """Definitions, file texts and whole-file BM25 of one repository state.

    With ``index_dir`` the tables and indexes are kept in its :class:`StateStore` too, so
    the next process opening the same state reads them instead of rebuilding them."""

    def __init__(
        self,
        root: Path,
        db_path: Path,
        index_dir: Path | None = None,
        siblings: Sequence[Path] = (),
    ):
        self.root = root
        con = graph_db.connect(db_path)
        try:
            files = con.rows(
                "SELECT path, sha256, language FROM files WHERE sha256 IS NOT NULL ORDER BY path"
            )
            reasons = _native.GRAPH_MACHINE_MADE
            #: Files the index skipped as a tool's output (minified, bundled, generated):
            #: a text search still finds their lines, which are not the product's code.
            self.machine_made: frozenset[str] = frozenset(
                p
                for (p,) in con.rows(
                    "SELECT path FROM files WHERE sha256 IS NULL AND parse_error IN "
                    f"({','.join('?' * len(reasons))})",
                    reasons,
                )
            )
            self.key = content_key_of(files)
            self.state = StateStore(index_dir, self.key) if index_dir is not None else None
            #: The replaced state's pieces, when a refresh made this state (read before the
            #: first write below sweeps them), or a sibling index's (``siblings``: the
            #: index directories a new index was seeded from): what the builders carry over.
            self.carry: Carry | None = None
            if self.state is not None and self.state.read(ROWS) is None:  # a new state
                rows = [(p, sha) for p, sha, _ in files]
                self.carry = Carry.find(self.state, rows, siblings)
                self.state.get_plain(ROWS, lambda: [[p, sha] for p, sha in rows])
            table = (
                build_table(con)
                if self.state is None
                else self.state.get(
                    "deftable",
                    lambda: build_table(con),
                    _native.DefTable.to_bytes,
                    _native.DefTable.from_bytes,
                )
            )
        finally:
            con.close()
        self.files: list[str] = [p for p, _, _ in files]
        self.languages: dict[str, str] = {p: lang or "" for p, _, lang in files}
        # Native tables, looked up per key: a fresh process makes a Node only for the rows
        # its query reads, not for each of tens of thousands of definitions.
        self.table = table
        self.defs = Definitions(table)
        #: Each definition's skeleton signature (header line, no body), by node id.
        self.signatures = Signatures(table)
        self.defs_by_file = DefsByFile(table)
        self.defs_by_name = DefsByName(table)
        self.defs_by_qualname = DefByQualname(table)
        self.module_of = ModuleOf(table)
        # The names as one native set, shared by every BM25 index of this state (the
        # per-query candidate index included) instead of being converted per build.
        self.symbol_set = SymbolSet.from_native(table.symbol_set())
        # Query construction keeps an identifier iff it resolves: by qualname or by name.
        self.qualnames_and_names = NameIndex(table)
        self._texts: dict[str, list[str]] = {}
        self._joined: dict[str, str] = {}
        self._file_bm25: BM25Index | None = None
        self._path_part_files: dict[str, list[int]] | None = None
        self._module_tails: dict[str, list[str]] | None = None
        self._included: dict[str, list[str]] | None = None
        self._platforms: dict[str, dict[str, int]] | None = None
        self._minor: tuple[float, frozenset[str]] | None = None
        self._bundles: tuple[int, frozenset[str]] | None = None
        self._frames: dict[tuple[str, str | None], str | None] = {}
        self._tails: dict[str, str] | None = None
        self._signature_lines: dict[str, str] = {}
        self._function_spans: dict[str, list[tuple[int, int]]] = {}
        self._innermost: dict[tuple[str, int], Node | None] = {}
        self._modules: dict[str, str] = {}
        self._statement_ends: dict[tuple[str, int], int] = {}

    def stored_plain(self, name: str, build: Callable[[], T]) -> T:
        """JSON data derived from this state (dicts with str keys, lists, str, int): from the
        state store when it has it."""
        return build() if self.state is None else self.state.get_plain(name, build)

    def stored_bm25(self, name: str, build: Callable[[], BM25Index]) -> BM25Index:
        """A BM25 index over this state's symbol set, from the state store when it has it."""
        if self.state is None:
            return build()
        return self.state.get(
            name, build, BM25Index.to_bytes, lambda b: BM25Index.from_bytes(b, self.symbol_set)
        )

    def path_part_files(self) -> dict[str, list[int]]:
        """Each lowercased component of a file path (split on ``/ . _``) → the positions in
        ``files`` of the files whose path has it, ascending; computed once: the path-words
        signal then finds a query's files by its few words instead of intersecting them
        with every path."""
        if self._path_part_files is None:
            holders: dict[str, list[int]] = {}
            for i, f in enumerate(self.files):
                for part in frozenset(re.split(r"[/._]", f.lower())):
                    holders.setdefault(part, []).append(i)
            self._path_part_files = holders
        return self._path_part_files

    def minor_language_files(self, share: float) -> frozenset[str]:
        """Files written in a language with fewer than ``share`` times the files of the
        repository's main language (JavaScript, TypeScript and TSX count as one family),
        computed once per share: a Rust repository's jQuery test data, a Python project's
        admin scripts."""
        if self._minor is None or self._minor[0] != share:
            family = {p: _LANG_FAMILY.get(lang, lang) for p, lang in self.languages.items()}
            counts: dict[str, int] = {}
            for lang in family.values():
                counts[lang] = counts.get(lang, 0) + 1
            main = max(counts.values(), default=1)
            minor = frozenset(p for p, lang in family.items() if counts[lang] / main < share)
            self._minor = (share, minor)
        return self._minor[1]

    def module_tails(self) -> dict[str, list[str]]:
        """Non-test files by the last one and last two components of their path without
        the extension (``sphinx/util/rst.py`` under ``rst`` and ``util/rst``), computed once:
        how a test file's name is matched to the module it tests."""
        if self._module_tails is None:
            tails: dict[str, list[str]] = {}
            for f in self.files:
                if is_test_path(f) or "." not in f.rsplit("/", 1)[-1]:
                    continue
                parts = f.rsplit(".", 1)[0].split("/")
                for n in (1, 2):
                    if len(parts) >= n:
                        tails.setdefault("/".join(parts[-n:]), []).append(f)
            self._module_tails = tails
        return self._module_tails

    def included_files(self) -> dict[str, list[str]]:
        """For each file, the repository files it textually includes with Rust's
        ``include!("path")`` (the path relative to the including file's directory), computed
        once; files that include nothing are absent."""
        if self._included is None:

            def scan(files: list[str]) -> dict[str, list[str]]:
                return includes(files, self.lines, known=self.files)

            def build() -> dict[str, list[str]]:
                carried = self.carry.includes(INCLUDED, scan) if self.carry else None
                return scan(self.files) if carried is None else carried

            self._included = self.stored_plain(INCLUDED, build)
        return self._included

    def platform_gates(self) -> dict[str, dict[str, int]]:
        """Per platform (``PLATFORM_NAMES``' keys), the files whose code is conditional on
        it, with how many gate lines name it (``#[cfg(windows)]``, ``//go:build darwin``,
        ``runtime.GOOS == "windows"``, ``sys.platform == "win32"``, ``#ifdef _WIN32``). A
        file named for the platform (``term_windows.go``, ``windows.rs``) is platform code
        throughout: it counts as much as the most gated file. Computed once."""
        if self._platforms is None:
            self._platforms = self.stored_plain("platform-gates-2", self._scan_platforms)
        return self._platforms

    def _scan_platforms(self) -> dict[str, dict[str, int]]:
        self._read(self.files)
        out: dict[str, dict[str, int]] = {}
        named: dict[str, list[str]] = {}
        for f in self.files:
            stem = f.rsplit("/", 1)[-1].rsplit(".", 1)[0].lower()
            for plat, spellings in PLATFORM_NAMES.items():
                if any(stem.endswith("_" + s) or stem == s for s in spellings):
                    named.setdefault(plat, []).append(f)
            for line in self.lines(f):
                if not _PLATFORM_GATE.search(line):
                    continue
                low = line.lower()
                for plat, rx in _PLATFORM_WORDS.items():
                    if rx.search(low):
                        counts = out.setdefault(plat, {})
                        counts[f] = counts.get(f, 0) + 1
        for plat, files in named.items():
            counts = out.setdefault(plat, {})
            top = max(counts.values(), default=1)
            for f in files:
                counts[f] = top
        return out

    def bundle_files(self, min_bundled: int) -> frozenset[str]:
        """Files that bundle at least ``min_bundled`` other files of the repository whole: an
        amalgamated single header (``single_include/catch2/catch.hpp``), a generated
        all-in-one source, a bundled copy of a vendored library. A fix is made in the files
        they copy and the bundle is regenerated, yet a bundle holds every word of the code
        it copies and outranked it. Computed once per ``min_bundled`` (0: none)."""
        if min_bundled <= 0:
            return frozenset()
        if self._bundles is None or self._bundles[0] != min_bundled:
            counts = self.stored_plain(BUNDLES, lambda: bundled(self.files, self.line_sets()))
            found = frozenset(f for f, copied in counts.items() if copied >= min_bundled)
            self._bundles = (min_bundled, found)
        return self._bundles[1]

    def line_sets(self) -> _native.LineSets:
        """Each file's distinct line hashes, what the bundle scan compares (stored, and
        carried over a refresh: only the changed files are hashed)."""

        def build() -> _native.LineSets:
            carried = self.carry.line_sets(LINE_SETS, self.texts) if self.carry else None
            return line_sets(self.all_texts()) if carried is None else carried

        return build() if self.state is None else stored_line_sets(self.state, build)

    def adopt(self, prebuilt: Prebuilt | None) -> None:
        """Takes the lines and texts a :class:`~ctxfast.retrieval.text_state.Prebuild`
        read, when it read them for this state's content (its key is this state's), instead
        of reading the files again."""
        if prebuilt is not None and prebuilt.key == self.key:
            self._texts.update(prebuilt.lines)
            self._joined.update(prebuilt.texts)

    def all_texts(self) -> list[str]:
        """Every file's :meth:`text`, in the order of ``files``: what the builders that read
        every file take (the whole-file BM25, the literals, the bundle scan)."""
        return self.texts(self.files)

    def texts(self, paths: Sequence[str]) -> list[str]:
        """Each of ``paths``' :meth:`text`, the files not read yet read in one batch."""
        self._read(paths)
        return [self.text(f) for f in paths]

    def _read(self, paths: Sequence[str]) -> None:
        """Reads the :meth:`lines` of those of ``paths`` not read yet, in one batch (see
        :func:`~ctxfast.confine.read_many_confined`)."""
        unread = [f for f in paths if f not in self._texts]
        if unread:
            self._texts.update(read_lines(self.root, unread))

    def lines(self, path: str) -> list[str]:
        """The file's lines (no newlines), read once; an unreadable file has none."""
        if path not in self._texts:
            self._read((path,))
        return self._texts[path]

    def text(self, path: str) -> str:
        """The file's :meth:`lines` joined with ``\\n``, joined once: the whole-file BM25,
        the definition documents, the literal fragments and the bundle scan all read it."""
        text = self._joined.get(path)
        if text is None:
            text = self._joined[path] = "\n".join(self.lines(path))
        return text

    def local_symbol(self, path: str, qualname: str | None) -> str:
        """``qualname`` relative to its file's module; ``<module>`` for module-level code."""
        if not qualname:
            return "<module>"
        module = self._modules.get(path)
        if module is None:  # remembered: the re-rank asks it of every candidate
            module = self._modules[path] = self.module_of.get(path, "")
        if module and qualname.startswith(module + "."):
            return qualname[len(module) + 1 :]
        return qualname

    def span_text(self, path: str, start: int, end: int) -> str:
        return "\n".join(self.lines(path)[max(start - 1, 0) : end])

    def file_bm25(self) -> BM25Index:
        """BM25 over whole files: the path tokens plus the content (identifiers split)."""
        if self._file_bm25 is None:

            def docs_at(positions: list[int]) -> list[str]:
                files = [self.files[i] for i in positions]
                return file_bm25_docs(files, self.texts(files))

            def build() -> BM25Index:
                if self.carry is not None:
                    keep = self.carry.keep
                    carried = self.carry.bm25(FILE_BM25, keep, docs_at, self.symbol_set)
                    if carried is not None:
                        return carried
                docs = file_bm25_docs(self.files, self.all_texts())
                return BM25Index(docs, symbols=self.symbol_set)

            self._file_bm25 = self.stored_bm25(FILE_BM25, build)
        return self._file_bm25

    def signature_line(self, qualname: str) -> str:
        """The first line of the signature of the definition ``qualname``, stripped (""
        when there is none). Remembered per index: every query's merge asks it of each of
        its hundreds of candidates, mostly the same definitions query after query."""
        line = self._signature_lines.get(qualname)
        if line is None:
            node = self.defs_by_qualname.get(qualname)
            full = self.signatures.get(node.id, "") if node is not None else ""
            line = full.splitlines()[0].strip() if full else ""
            self._signature_lines[qualname] = line
        return line

    def function_spans(self, path: str) -> list[tuple[int, int]]:
        """``(line, end_line)`` of each function defined in ``path``, in row order.
        Remembered per index: the re-rank reads it for every class candidate (several per
        file, tens per query), which made a ``Node`` of each definition of the file."""
        spans = self._function_spans.get(path)
        if spans is None:
            defs = self.defs_by_file.get(path, ())
            spans = [(d.line, d.end_line) for d in defs if d.kind == "function"]
            self._function_spans[path] = spans
        return spans

    def innermost(self, path: str, line: int) -> Node | None:
        """The smallest definition containing ``line`` (traceback and hit mapping).
        Remembered per index: the merge maps each of a query's hundreds of line hits, and
        common words hit the same lines query after query."""
        key = (path, line)
        if key in self._innermost:
            return self._innermost[key]
        found = self._innermost[key] = self.defs_by_file.innermost(path, line)
        return found

    def statement_end(self, path: str, start: int) -> int:
        """:func:`~ctxfast.retrieval.statements.statement_end` of ``path``'s line ``start``,
        remembered per index as :meth:`innermost` is (the merge and the prune ask it)."""
        key = (path, start)
        end = self._statement_ends.get(key)
        if end is None:
            end = self._statement_ends[key] = statement_end(self.lines(path), start)
        return end

    def resolve_frame(self, printed: str, func: str | None) -> str | None:
        """The repository file a traceback frame ran in: its printed path resolved
        (:meth:`resolve_path`), or — when no file has that path, as when the issue's release
        kept the code in a module since renamed (``seaborn/_core.py``, now ``_oldcore.py``) —
        the one library file defining a function named ``func`` whose every directory the
        printed path names (a frame of another package never maps here). Remembered per
        index: the file signal and the traceback source both resolve every frame, and each
        resolution scans the file list."""
        key = (printed, func)
        if key not in self._frames:
            self._frames[key] = self._resolve_frame(printed, func)
        return self._frames[key]

    def _resolve_frame(self, printed: str, func: str | None) -> str | None:
        path = self.resolve_path(printed)
        name = (func or "").rsplit(".", 1)[-1]
        if path is not None or not name.isidentifier():
            return path
        dirs = set(printed.replace("\\", "/").split("/")[:-1])
        held = {
            d.file
            for d in self.defs_by_name.get(name, ())
            if "/" in d.file and is_library_path(d.file) and set(d.file.split("/")[:-1]) <= dirs
        }
        return held.pop() if len(held) == 1 else None

    def resolve_path(self, printed: str) -> str | None:
        """Maps a path as printed in a traceback or task to a repository file: the file of
        that path, else the longest file whose path ends with ``/`` + the printed one (the
        printed path is relative to a package directory), else — for an installed copy
        (``…/site-packages/pkg/mod.py``) — what follows the last ``site-packages/`` resolved
        the same way (the checkout may keep ``pkg`` under ``src/``), else the longest file the
        printed path ends with after a ``/`` (it is absolute)."""
        p = printed.replace("\\", "/").lstrip("./")
        for rel in (p, *_installed_relative(p)):
            if rel in self.languages:
                return rel
            longer = self._path_tails().get(rel)
            if longer is not None:
                return longer
        cut = p.find("/")
        while cut != -1:
            if p[cut + 1 :] in self.languages:
                return p[cut + 1 :]
            cut = p.find("/", cut + 1)
        return None

    def _path_tails(self) -> dict[str, str]:
        """Each tail of a file path after one of its ``/`` → the longest file ending with it
        (the first in path order on a tie), so that resolving a printed path is a few
        lookups instead of a scan of every file per path."""
        if self._tails is None:
            tails: dict[str, str] = {}
            for f in self.files:
                cut = f.find("/")
                while cut != -1:
                    tail = f[cut + 1 :]
                    if len(f) > len(tails.get(tail, "")):
                        tails[tail] = f
                    cut = f.find("/", cut + 1)
            self._tails = tails
        return self._tails


#: Directories an installed package's files sit under; what follows is the package's path.
_INSTALL_DIRS = ("site-packages/", "dist-packages/")


def _installed_relative(path: str) -> list[str]:
    """The package-relative path of a file printed from an installed copy, if it is one."""
    cuts = [path.rfind(d) + len(d) for d in _INSTALL_DIRS if d in path]
    return [path[max(cuts) :]] if cuts else []


class IndexWatch:
    """Tells cheaply whether ``recon.db`` may have changed since the previous look.

    :func:`content_key` reads and hashes every file row (≈10 ms on Django), too much to pay
    on every query. SQLite's ``PRAGMA data_version`` on a connection kept open changes
    exactly when another connection commits, and the file's identity (device, inode) catches
    a database deleted and rebuilt — so an unchanged stamp proves the content unchanged, and
    only a changed one needs the full key. A stamp change does not imply a content change
    (a refresh that re-parsed nothing commits the new stats of touched files); callers
    compare keys then.
    """

    def __init__(self, db_path: Path):
        self.db_path = db_path
        self._con: graph_db.Connection | None = None
        self._ident: tuple[int, int] | None = None
        self._stamp: tuple[tuple[int, int], int] | None = None
        self._lock = threading.Lock()

    def changed(self) -> bool:
        """True on the first look and whenever the database may have changed since the last;
        a database that cannot be read counts as changed."""
        with self._lock:
            try:
                st = os.stat(self.db_path)
                ident = (st.st_dev, st.st_ino)
                if self._con is None or ident != self._ident:
                    self.close()
                    self._con = graph_db.connect(self.db_path)
                    self._ident = ident
                (version,) = self._con.rows("PRAGMA data_version")[0]
            except (OSError, CtxIndexError):
                self.close()
                self._stamp = None
                return True
            stamp = (ident, int(version))
            changed = stamp != self._stamp
            self._stamp = stamp
            return changed

    def close(self) -> None:
        if self._con is not None:
            self._con.close()
            self._con = None


def content_key(db_path: Path) -> str:
    """Identity of an index's content: the hash of every (path, sha256, language) row. The
    in-memory retrieval state is reused exactly as long as this key is unchanged."""
    with graph_db.reading(db_path) as con:
        rows = con.rows(
            "SELECT path, sha256, language FROM files WHERE sha256 IS NOT NULL ORDER BY path"
        )
    return content_key_of(rows)
