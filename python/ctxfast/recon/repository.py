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
from typing import Any

from ctxfast import _native
from ctxfast.errors import InvalidArgumentError
from ctxfast.progress import ProgressCallback, run_polled
from ctxfast.recon.answers import Answer, answer_question
from ctxfast.recon.ego import EgoGraph, build_ego_graph
from ctxfast.recon.gate import GateConfig, GateResult, run_gate
from ctxfast.recon.graph import CodeGraph
from ctxfast.recon.manifest import build_manifest, render_manifest_header
from ctxfast.recon.repomap import build_repo_map
from ctxfast.textsafe import require_text

DEFAULT_INDEX_DIRNAME = ".ctxfast"
GRAPH_DB_NAME = "recon.db"
DEFAULT_MAX_FILE_BYTES = 1_000_000


@dataclass(frozen=True)
class IndexStats:
    """What one ``Repository.index()`` run did; ``errors`` are ``{"path", "error"}`` dicts for
    every file skipped (binary, too large, unreadable, symlink), parsed with syntax errors, or
    whose module name clashes with another file's. ``files_resolved`` counts the files whose
    references were (re-)resolved: all on a cold build; on a refresh the changed files plus
    the dependents that could see a changed interface (a comment-only edit re-resolves one)."""

    files_seen: int
    files_parsed: int
    files_removed: int
    nodes: int
    edges: int
    seconds: float
    errors: list[dict[str, str]] = field(default_factory=list)
    files_resolved: int = 0


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
        self._manifest: dict[str, Any] | None = None
        self._retriever: Any = None
        self._index_watch: Any = None

    @property
    def graph_db(self) -> Path:
        return self.index_dir / GRAPH_DB_NAME

    def index(self, progress: ProgressCallback | None = None) -> IndexStats:
        """Builds the code graph, or refreshes it incrementally (only changed files re-parse).

        ``progress(stage, files_done, files_total)`` is called from a helper thread about ten
        times a second while the native run goes on, and once more at the end.
        """

        def run(counters: _native.IndexProgress | None = None) -> tuple[Any, ...]:
            return _native.index_graph(
                str(self.root), str(self.graph_db), self.max_file_bytes, counters
            )

        if progress is None:
            out = run()
        else:
            counters = _native.IndexProgress()
            out = run_polled(lambda: run(counters), counters.snapshot, progress)
        seen, parsed, removed, nodes, edges, secs, errors, resolved = out
        return IndexStats(
            files_seen=seen,
            files_parsed=parsed,
            files_removed=removed,
            nodes=nodes,
            edges=edges,
            seconds=secs,
            errors=[{"path": p, "error": e} for p, e in errors],
            files_resolved=resolved,
        )

    @property
    def graph(self) -> CodeGraph:
        """Read API over ``recon.db`` (raises ``ctxfast.errors.IndexError`` before ``index()``)."""
        return CodeGraph(self.graph_db)

    def manifest(self) -> dict[str, Any]:
        """The evidence-backed manifest of spec §3.1 (built fresh; it is cheap and fail-soft)."""
        if self._manifest is None:
            self._manifest = build_manifest(self.root)
        return self._manifest

    def manifest_header(self, max_tokens: int = 500) -> str:
        """The ≤500-token manifest header used on the no-retrieval path."""
        return render_manifest_header(self.manifest(), max_tokens=max_tokens)

    def gate(
        self,
        task_text: str,
        current_entity: str,
        sbfl_top: str | None = None,
        config: GateConfig | None = None,
    ) -> GateResult:
        """Spec §4: the six level-0 signals, then the R0→R2 ladder and the §5 injection."""
        return run_gate(self.graph, self.manifest(), task_text, current_entity, sbfl_top, config)

    def ego_graph(self, entity: str, max_radius: int = 1) -> EgoGraph:
        """The tree-encoded k=1 ego-graph of ``entity`` (``max_radius=2`` raises ValueError)."""
        return build_ego_graph(self.graph, entity, max_radius)

    def repo_map(
        self,
        query: str | None = None,
        max_tokens: int = 1024,
        files_in_prompt: tuple[str, ...] = (),
    ) -> str:
        """The ranked repo map within ``max_tokens``; ``""`` if it cannot be built."""
        return build_repo_map(self.graph, self.index_dir, query, max_tokens, files_in_prompt)

    def retrieve(
        self,
        task_text: str,
        *,
        error: str | None = None,
        test: str | None = None,
        max_tokens: int = 4000,
        config: Any = None,
    ) -> Any:
        """Spec-04 retrieval: the smallest high-precision slice for a task (≤ ``max_tokens``).

        A repository with no index yet is indexed on demand; the in-memory retrieval state
        (definitions, file texts, BM25 indexes, the lexical corpus) is rebuilt only when the
        index content changed. It is a snapshot of the files taken when it is built (the first
        retrieval after an index change): call ``index()`` after editing files to retrieve
        from the edits.
        """
        from ctxfast.retrieval.pipeline import Retriever
        from ctxfast.retrieval.repoindex import IndexWatch

        for what, text in (("task", task_text), ("error", error), ("test", test)):
            require_text(what, text)
        if not self.graph_db.exists():
            self.index()
        if self._index_watch is None:
            self._index_watch = IndexWatch(self.graph_db)
        # Looked at on every call, so the stamp always follows the database.
        maybe_changed = self._index_watch.changed()
        retriever = self._retriever
        if retriever is None or (maybe_changed and retriever.index.key != self._index_key()):
            retriever = Retriever(self.root, self.graph, self.index_dir)
            self._retriever = retriever
        return retriever.retrieve(
            task_text, error=error, test=test, max_tokens=max_tokens, config=config
        )

    def local_symbol(self, file: str, qualname: str | None) -> str:
        """``qualname`` relative to ``file``'s module (``Class.method``; ``<module>`` for
        module-level code) — the way benchmarks and people name a symbol in a known file."""
        module = self.graph.module_qualname(file)
        if not qualname:
            return "<module>"
        if module and qualname.startswith(module + "."):
            return qualname[len(module) + 1 :]
        return qualname

    def _index_key(self) -> str:
        from ctxfast.retrieval.repoindex import content_key

        return content_key(self.graph_db)

    def answer(self, question_id: str, subject: str | None = None) -> Answer:
        """One of the six deterministic questions of spec §6.1, with ``file:line`` evidence."""
        return answer_question(self.graph, self.manifest(), self.root, question_id, subject)
