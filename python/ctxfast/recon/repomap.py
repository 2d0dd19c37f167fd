"""The ranked repo map: the shape of a codebase in a few hundred tokens.

File-level reference graph from the code graph (which file invokes or imports definitions of
which other file) → PageRank, personalised toward the files and identifiers a query names →
a terse ranked list of files with their key signatures, binary-searched to fit the budget
exactly. The map substitutes for reading files, so it yields space as real file bodies enter
the prompt: files already in the prompt are left out and the budget shrinks with their count.
Global ranks are cached next to the index, keyed by the content hashes of all files; any
failure to build the map is non-fatal (an empty map).
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
from collections.abc import Iterable
from pathlib import Path

from ctxfast.recon import graph_db
from ctxfast.recon.graph import CodeGraph
from ctxfast.recon.pagerank import pagerank
from ctxfast.text import FileRole, file_role, identifiers
from ctxfast.tokens import DEFAULT_ENCODING, count_tokens

log = logging.getLogger(__name__)

MAX_SIGNATURES_PER_FILE = 8
CACHE_NAME = "repomap.json"
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
    """Builds and renders the map for one indexed repository."""

    def __init__(self, graph: CodeGraph, index_dir: Path):
        self.graph = graph
        self.cache_path = Path(index_dir) / CACHE_NAME
        files = graph.files()
        self.files = [f.path for f in files if f.sha256]
        key_src = "\n".join(f"{f.path}:{f.sha256}" for f in files)
        self.key = hashlib.sha256(key_src.encode()).hexdigest()
        self.index = {p: i for i, p in enumerate(self.files)}
        self._edges: list[tuple[int, int, float]] | None = None
        self._sigs: dict[str, list[tuple[int, str, str]]] | None = None

    def edges(self) -> list[tuple[int, int, float]]:
        if self._edges is None:
            self._edges = [
                (self.index[a], self.index[b], float(w))
                for a, b, w in _file_edges(self.graph.db_path)
                if a in self.index and b in self.index
            ]
        return self._edges

    def signatures(self) -> dict[str, list[tuple[int, str, str]]]:
        if self._sigs is None:
            self._sigs = _signatures(self.graph.db_path)
        return self._sigs

    def global_ranks(self) -> dict[str, float]:
        """Unpersonalised PageRank, cached on disk under the content key."""
        try:
            cached = json.loads(self.cache_path.read_text("utf-8"))
            if cached.get("key") == self.key:
                return dict(cached["ranks"])
        except (OSError, ValueError, KeyError, TypeError):
            pass
        scores = pagerank(len(self.files), self.edges())
        ranks = {p: float(scores[i]) for p, i in self.index.items()}
        try:
            self.cache_path.parent.mkdir(parents=True, exist_ok=True)
            tmp = self.cache_path.with_suffix(".tmp")
            tmp.write_text(json.dumps({"key": self.key, "ranks": ranks}), "utf-8")
            tmp.replace(self.cache_path)
        except OSError as exc:
            log.info("repo map ranks not cached at %s: %s", self.cache_path, exc)
        return ranks

    def personalization(self, query: str) -> dict[int, float]:
        """Files the query names by path, and files defining identifiers the query mentions."""
        weights: dict[int, float] = {}
        for m in _PATHLIKE.finditer(query):
            for path, i in self.index.items():
                if path == m.group(0) or path.endswith("/" + m.group(0)):
                    weights[i] = weights.get(i, 0.0) + 10.0
        idents = dict.fromkeys(identifiers(query, min_len=3))
        for ident in idents:
            defs = [n for n in self.graph.lookup(ident) if n.is_definition and n.kind != "def"]
            if not defs or len(defs) > 20:
                continue  # absent, or too common to point anywhere
            for n in defs:
                if n.file in self.index:
                    i = self.index[n.file]
                    weights[i] = weights.get(i, 0.0) + 1.0 / len(defs)
        return weights

    def ranked_files(self, query: str | None = None) -> list[tuple[str, float]]:
        if query:
            pers = self.personalization(query)
            if pers:
                scores = pagerank(len(self.files), self.edges(), pers)
                ranks = {p: float(scores[i]) for p, i in self.index.items()}
            else:
                ranks = self.global_ranks()
        else:
            ranks = self.global_ranks()
        # The project's own source first: vendored bundles (``extern/js/jquery.min.js``),
        # generated files, tests and docs collect many references but are rarely what a
        # reader of the map needs, so they follow every source file in rank order.
        roles = {p: file_role(p) is not FileRole.SOURCE for p in ranks}
        return sorted(ranks.items(), key=lambda kv: (roles[kv[0]], -kv[1], kv[0]))

    def _block(self, path: str) -> str:
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
            if count_tokens(text_for(mid), encoding) <= budget:
                lo = mid
            else:
                hi = mid - 1
        return text_for(lo)


def effective_budget(max_tokens: int, files_in_prompt: int) -> int:
    """The map's budget shrinks as real files enter the prompt: halved by the first file, a
    third by the second and so on, never below a quarter of the base budget."""
    if files_in_prompt <= 0:
        return max_tokens
    return max(max_tokens // (1 + files_in_prompt), max_tokens // 4)


def build_repo_map(
    graph: CodeGraph,
    index_dir: Path,
    query: str | None = None,
    max_tokens: int = 1024,
    files_in_prompt: Iterable[str] = (),
    encoding: str = DEFAULT_ENCODING,
) -> str:
    """The rendered map; ``""`` when it cannot be built (a map failure never fails a caller)."""
    try:
        return RepoMap(graph, index_dir).render(
            query, max_tokens, files_in_prompt, encoding=encoding
        )
    except Exception:
        log.warning("repo map not built", exc_info=True)
        return ""
