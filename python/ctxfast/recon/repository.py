"""``Repository``: the entry point of repository reconnaissance (spec-03).

Indexing (discovery, tree-sitter parsing, name resolution, SQLite writes) runs in the Rust
core with the GIL released; this class only chooses where the index lives and exposes the
read API. The index is a rebuildable cache under ``<repo>/.ctxfast/`` by default, so deleting
that directory fully reverts it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from ctxfast import _native
from ctxfast.errors import InvalidArgumentError
from ctxfast.recon.graph import CodeGraph

DEFAULT_INDEX_DIRNAME = ".ctxfast"
GRAPH_DB_NAME = "recon.db"
DEFAULT_MAX_FILE_BYTES = 1_000_000


@dataclass(frozen=True)
class IndexStats:
    """What one ``Repository.index()`` run did; ``errors`` are ``{"path", "error"}`` dicts for
    every file skipped (binary, too large, unreadable, symlink) or parsed with syntax errors."""

    files_seen: int
    files_parsed: int
    files_removed: int
    nodes: int
    edges: int
    seconds: float
    errors: list[dict[str, str]] = field(default_factory=list)


class Repository:
    """A source repository and its reconnaissance index.

    ``index_dir`` defaults to ``<path>/.ctxfast/`` (always excluded from indexing).
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        index_dir: str | os.PathLike[str] | None = None,
        *,
        max_file_bytes: int = DEFAULT_MAX_FILE_BYTES,
    ) -> None:
        root = Path(path)
        if not root.is_dir():
            raise InvalidArgumentError(f"repository path is not a directory: {root}")
        if max_file_bytes <= 0:
            raise InvalidArgumentError("max_file_bytes must be positive")
        self.root = root.resolve()
        self.index_dir = (
            Path(index_dir) if index_dir is not None else self.root / DEFAULT_INDEX_DIRNAME
        )
        self.max_file_bytes = max_file_bytes

    @property
    def graph_db(self) -> Path:
        return self.index_dir / GRAPH_DB_NAME

    def index(self) -> IndexStats:
        """Builds the code graph, or refreshes it incrementally (only changed files re-parse)."""
        seen, parsed, removed, nodes, edges, secs, errors = _native.index_graph(
            str(self.root), str(self.graph_db), self.max_file_bytes
        )
        return IndexStats(
            files_seen=seen,
            files_parsed=parsed,
            files_removed=removed,
            nodes=nodes,
            edges=edges,
            seconds=secs,
            errors=[{"path": p, "error": e} for p, e in errors],
        )

    @property
    def graph(self) -> CodeGraph:
        """Read API over ``recon.db`` (raises ``ctxfast.errors.IndexError`` before ``index()``)."""
        return CodeGraph(self.graph_db)
