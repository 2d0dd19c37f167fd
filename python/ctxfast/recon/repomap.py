"""The ranked repo map: the shape of a codebase in a few hundred tokens.

File-level reference graph from the code graph (which file invokes or imports definitions of
which other file) → PageRank, personalised toward the files and identifiers a query names →
a terse ranked list of files with their key signatures, binary-searched to fit the budget
exactly. The map substitutes for reading files, so it yields space as real file bodies enter
the prompt: files already in the prompt are left out and the budget shrinks with their count.
The file graph and the global ranks are stored with the index's derived state
(:class:`~ctxfast.state_store.StateStore`: keyed by the index content, tagged with the user's
key, so a repository's shipped ``.ctxfast/`` cannot forge them); any failure to build the map
is non-fatal (an empty map).

Everything a map reads from the index (the file graph and its transition weights, the
signatures, each file's rendered block and role, the definitions a query's identifiers name)
depends on the index content alone, so a :class:`RepoMap` kept between calls
(:func:`current_map`, as ``Repository.repo_map`` does) re-reads none of it while that content
is unchanged: a warm map costs the refresh, the personalised PageRank and the budget search.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable
from pathlib import Path

from ctxfast.recon import graph_db
from ctxfast.recon.graph import CodeGraph
from ctxfast.recon.pagerank import Transitions
from ctxfast.state_store import StateStore, content_key_of
from ctxfast.text import FileRole, file_role, identifiers
from ctxfast.tokens import DEFAULT_ENCODING, count_tokens, fits

log = logging.getLogger(__name__)

MAX_SIGNATURES_PER_FILE = 8
#: Bound on the query identifiers whose definitions a kept map remembers.
MAX_KEPT_IDENTIFIERS = 50_000
_PATHLIKE = re.compile(r"[\w\-./]+\.(?:py|js|jsx|ts|tsx|go|rs|java)\b")


def _file_edges(db: Path) -> list[tuple[str, str, int]]:
    with graph_db.reading(db) as con:
        return con.rows(
            "SELECT s.file, d.file, COUNT(*) FROM edges e JOIN nodes s ON s.id = e.src "
            "JOIN nodes d ON d.id = e.dst WHERE e.type IN ('invoke', 'import') "
            "AND s.file != d.file GROUP BY s.file, d.file ORDER BY s.file, d.file"
        )


def _signatures(db: Path) -> dict[str, list[tuple[int, str, str]]]:
    """Top-level and class-level definitions per file: (line, qualname, signature)."""
    with graph_db.reading(db) as con:
        rows = con.rows(
            "SELECT n.file, n.line, n.qualname, n.kind, COALESCE(m.signature, n.name) "
            "FROM nodes n LEFT JOIN defs_meta m ON m.id = n.id "
            "WHERE n.kind IN ('function', 'class') "
            "ORDER BY n.file, n.line, n.qualname || ':' || n.line"
        )
    out: dict[str, list[tuple[int, str, str]]] = {}
    for file, line, qualname, _kind, sig in rows:
        out.setdefault(file, []).append((line, qualname, (sig or "").splitlines()[0].strip()))
    return out


class RepoMap:
    """Builds and renders the map for one indexed repository.

    What it reads from the index is read once and kept: ``content_key`` (every file's path,
    hash and language) names the content it was read from."""

    def __init__(self, graph: CodeGraph, index_dir: Path):
        self.graph = graph
        files = [f for f in graph.files() if f.sha256]
        self.files = [f.path for f in files]
        # Keyed by the language too: a header re-parsed as C++ holds other definitions than
        # its C parse.
        self.content_key = content_key_of(
            sorted((f.path, f.sha256 or "", f.language) for f in files)
        )
        self.state = StateStore(Path(index_dir), self.content_key)
        self.index = {p: i for i, p in enumerate(self.files)}
        self._edges: list[tuple[int, int, float]] | None = None
        self._sigs: dict[str, list[tuple[int, str, str]]] | None = None
        self._transitions: Transitions | None = None
        self._global: dict[str, float] | None = None
        self._roles: dict[str, bool] = {}
        self._blocks: dict[str, str] = {}
        self._defs: dict[str, list[str]] = {}
        self._named: dict[str, list[int]] | None = None

    def edges(self) -> list[tuple[int, int, float]]:
        """The file graph: (from, to, weight) by index into ``files``; read from the index
        once per content, then from the stored state (a fresh process skips the join)."""
        if self._edges is None:
            stored = self.state.get_plain("repomap-edges", self._read_edges)
            self._edges = [(int(a), int(b), float(w)) for a, b, w in stored]
        return self._edges

    def _read_edges(self) -> list[list[int]]:
        return [
            [self.index[a], self.index[b], int(w)]
            for a, b, w in _file_edges(self.graph.db_path)
            if a in self.index and b in self.index
        ]

    def signatures(self) -> dict[str, list[tuple[int, str, str]]]:
        """Each file's definitions (line, qualname, signature line); from the stored state
        after the first read of the index, like the file graph."""
        if self._sigs is None:
            stored = self.state.get_plain(
                "repomap-signatures", lambda: _signatures(self.graph.db_path)
            )
            self._sigs = {
                f: [(int(n), str(q), str(sig)) for n, q, sig in rows] for f, rows in stored.items()
            }
        return self._sigs

    def transitions(self) -> Transitions:
        if self._transitions is None:
            self._transitions = Transitions(len(self.files), self.edges())
        return self._transitions

    def global_ranks(self) -> dict[str, float]:
        """Unpersonalised PageRank, stored with the index's state (and kept in memory)."""
        if self._global is None:
            self._global = self.state.get_plain("repomap-ranks", self._rank_globally)
        return dict(self._global)

    def _rank_globally(self) -> dict[str, float]:
        scores = self.transitions().pagerank()
        return {p: scores[i] for p, i in self.index.items()}

    def personalization(self, query: str) -> dict[int, float]:
        """Files the query names by path, and files defining identifiers the query mentions."""
        weights: dict[int, float] = {}
        named = self.named_by()
        for m in _PATHLIKE.finditer(query):
            for i in named.get(m.group(0), ()):
                weights[i] = weights.get(i, 0.0) + 10.0
        idents = dict.fromkeys(identifiers(query, min_len=3))
        for ident in idents:
            files = self.defining_files(ident)
            if not files or len(files) > 20:
                continue  # absent, or too common to point anywhere
            for file in files:
                if file in self.index:
                    i = self.index[file]
                    weights[i] = weights.get(i, 0.0) + 1.0 / len(files)
        return weights

    def named_by(self) -> dict[str, list[int]]:
        """The files (indexes, ascending) each path mention names: a file is named by its
        path and by every tail of it that follows a ``/`` (``pkg/db.py`` by ``db.py``), so a
        query naming many paths costs a lookup per mention, not a pass over every file."""
        if self._named is None:
            named: dict[str, list[int]] = {}
            for i, path in enumerate(self.files):
                named.setdefault(path, []).append(i)
                for k, ch in enumerate(path):
                    if ch == "/":
                        named.setdefault(path[k + 1 :], []).append(i)
            self._named = named
        return self._named

    def defining_files(self, ident: str) -> list[str]:
        """The file of each definition ``ident`` names (one entry per definition)."""
        files = self._defs.get(ident)
        if files is None:
            defs = self.graph.lookup(ident)
            files = [n.file for n in defs if n.is_definition and n.kind != "def"]
            if len(self._defs) >= MAX_KEPT_IDENTIFIERS:  # a long-lived server's many queries
                self._defs.clear()
            self._defs[ident] = files
        return files

    def ranked_files(self, query: str | None = None) -> list[tuple[str, float]]:
        if query:
            pers = self.personalization(query)
            if pers:
                scores = self.transitions().pagerank(pers)
                ranks = {p: scores[i] for p, i in self.index.items()}
            else:
                ranks = self.global_ranks()
        else:
            ranks = self.global_ranks()
        # The project's own source first: vendored bundles (``extern/js/jquery.min.js``),
        # generated files, tests and docs collect many references but are rarely what a
        # reader of the map needs, so they follow every source file in rank order.
        roles = self._roles
        for p in ranks:
            if p not in roles:
                roles[p] = file_role(p) is not FileRole.SOURCE
        return sorted(ranks.items(), key=lambda kv: (roles[kv[0]], -kv[1], kv[0]))

    def _block(self, path: str) -> str:
        block = self._blocks.get(path)
        if block is None:
            block = self._blocks[path] = self._render_block(path)
        return block

    def _render_block(self, path: str) -> str:
        all_sigs = self.signatures().get(path, [])
        classes = {q for _l, q, s in all_sigs if s.lstrip().startswith(("class ", "struct "))}
        lines = [f"{path}:"]
        for _line, qualname, sig in all_sigs[:MAX_SIGNATURES_PER_FILE]:
            depth = 2 if qualname.rsplit(".", 1)[0] in classes else 1
            lines.append("  " * depth + (sig or qualname.rsplit(".", 1)[-1]))
        return "\n".join(lines)

    def render(
        self,
        query: str | None = None,
        max_tokens: int = 1024,
        files_in_prompt: Iterable[str] = (),
        *,
        encoding: str = DEFAULT_ENCODING,
    ) -> str:
        """The ranked map within the budget (exact count); the largest prefix of the ranking
        that fits, found by binary search over the number of files."""
        in_prompt = set(files_in_prompt)
        budget = effective_budget(max_tokens, len(in_prompt))
        ranked = [p for p, _ in self.ranked_files(query) if p not in in_prompt]
        blocks: list[str] = []

        def text_for(k: int) -> str:
            while len(blocks) < k:
                blocks.append(self._block(ranked[len(blocks)]))
            return "\n".join(blocks[:k])

        lo, hi = 0, len(ranked)
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if _within(text_for(mid), budget, encoding):
                lo = mid
            else:
                hi = mid - 1
        return text_for(lo)


def _within(text: str, budget: int, encoding: str) -> bool:
    """``count_tokens(text) <= budget``. A text far over the budget (the first halves of the
    budget search) is only scanned until the count passes it; ``fits`` re-splits each piece,
    so a text near the budget is cheaper counted whole."""
    if len(text) > 8 * budget:
        return fits(text, budget, encoding)
    return count_tokens(text, encoding) <= budget


def effective_budget(max_tokens: int, files_in_prompt: int) -> int:
    """The map's budget shrinks as real files enter the prompt: halved by the first file, a
    third by the second and so on, never below a quarter of the base budget."""
    if files_in_prompt <= 0:
        return max_tokens
    return max(max_tokens // (1 + files_in_prompt), max_tokens // 4)


def current_map(
    graph: CodeGraph, index_dir: Path, kept: RepoMap | None, maybe_changed: bool
) -> RepoMap:
    """``kept`` while the index content is what it was read from, else a new map.

    ``maybe_changed`` is false only when the caller knows the index was not written since
    ``kept`` was made (an unchanged ``IndexWatch`` stamp); when it is true, the content key
    decides, so a refresh that only recorded new stats of touched files keeps the map."""
    if kept is not None and not maybe_changed:
        return kept
    fresh = RepoMap(graph, index_dir)
    if kept is not None and kept.content_key == fresh.content_key:
        kept.graph = graph  # the same content, read through the current database file
        return kept
    return fresh


def build_repo_map(
    graph: CodeGraph,
    index_dir: Path,
    query: str | None = None,
    max_tokens: int = 1024,
    files_in_prompt: Iterable[str] = (),
    encoding: str = DEFAULT_ENCODING,
) -> str:
    """The rendered map; ``""`` when it cannot be built (a map failure never fails a caller)."""
    text, _ = render_kept(
        graph, index_dir, None, True, query, max_tokens, files_in_prompt, encoding
    )
    return text


def render_kept(
    graph: CodeGraph,
    index_dir: Path,
    kept: RepoMap | None,
    maybe_changed: bool,
    query: str | None = None,
    max_tokens: int = 1024,
    files_in_prompt: Iterable[str] = (),
    encoding: str = DEFAULT_ENCODING,
) -> tuple[str, RepoMap | None]:
    """:func:`build_repo_map` from the :func:`current_map` of ``kept``, with that map to keep
    for the next call (``None`` when the map could not be built)."""
    try:
        rmap = current_map(graph, index_dir, kept, maybe_changed)
        return rmap.render(query, max_tokens, files_in_prompt, encoding=encoding), rmap
    except Exception:
        log.warning("repo map not built", exc_info=True)
        return "", None
