"""``Repository``: a source tree and its index — the entry point for reading a repository
(reconnaissance) and for retrieval over it.

Indexing (discovery, tree-sitter parsing, name resolution, SQLite writes) runs in the Rust
core with the GIL released; this class only chooses where the index lives and exposes the
read API. The index is a rebuildable cache under ``<repo>/.ctxfast/`` by default, so deleting
that directory fully reverts it. It sits above retrieval and recon and below construction
(ARCHITECTURE.md): it imports downward only, so ``retrieve`` is typed with its real result.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Union

from ctxfast import _native
from ctxfast.errors import InvalidArgumentError
from ctxfast.index_dir import prepare as prepare_index_dir
from ctxfast.logs import drain_native
from ctxfast.progress import ProgressCallback, run_polled
from ctxfast.recon.graph import CodeGraph
from ctxfast.recon.graph_db import problem as index_problem
from ctxfast.recon.parse_cache import ParseCache
from ctxfast.retrieval.repoindex import IndexWatch, content_key
from ctxfast.retrieval.text_state import Prebuild
from ctxfast.textsafe import require_text
from ctxfast.userkey import user_key

if TYPE_CHECKING:
    # Imported where used: a fresh `compose` needs none of the recon ones, and a repo map,
    # a graph query or a status read in a new process needs no retrieval stage (their
    # imports cost more than a small repository's map).
    from ctxfast.recon.answers import Answer
    from ctxfast.recon.ego import EgoGraph
    from ctxfast.recon.escalation import GateConfig, GateResult
    from ctxfast.recon.repomap import RepoMap
    from ctxfast.retrieval.config import RetrievalConfig
    from ctxfast.retrieval.pipeline import RetrievalResult, Retriever

DEFAULT_INDEX_DIRNAME = ".ctxfast"
GRAPH_DB_NAME = "recon.db"
DEFAULT_MAX_FILE_BYTES = 1_000_000

#: What ``Repository(seed=...)`` accepts for one seed: a repository, its index directory or
#: its ``recon.db``.
SeedSource = Union["Repository", str, "os.PathLike[str]"]


def seed_databases(seed: SeedSource | Sequence[SeedSource] | None) -> tuple[Path, ...]:
    """The ``recon.db`` path of every seed given (one, or a sequence in preference order:
    ties in shared files go to the earlier one)."""
    if seed is None:
        return ()
    many = seed if isinstance(seed, Sequence) and not isinstance(seed, str) else [seed]
    out = []
    for s in many:
        if isinstance(s, Repository):
            out.append(s.graph_db)
        else:
            p = Path(s)
            out.append(p if p.is_file() else p / GRAPH_DB_NAME)
    return tuple(out)


@dataclass(frozen=True)
class IndexStats:
    """What one ``Repository.index()`` run did; ``errors`` are ``{"path", "error"}`` dicts for
    every file skipped (binary, too large, unreadable, symlink), parsed with syntax errors, or
    whose module name clashes with another file's. ``files_resolved`` counts the files whose
    references were (re-)resolved: all on a cold build; on a refresh the changed files plus
    the dependents that could see a changed interface (a comment-only edit re-resolves one).
    ``cache_hits`` counts the files of ``files_parsed`` whose extraction came from the parse
    cache instead of a parse. ``seeded_from`` is the seed index a new index started from
    (``Repository(seed=...)``), and ``seed_note`` says why none was used when seeds were
    given (none usable, too little shared, a failed seeded refresh redone cold)."""

    files_seen: int
    files_parsed: int
    files_removed: int
    nodes: int
    edges: int
    seconds: float
    errors: list[dict[str, str]] = field(default_factory=list)
    files_resolved: int = 0
    cache_hits: int = 0
    seeded_from: str | None = None
    seed_note: str | None = None


class Repository:
    """A source repository and its reconnaissance index.

    ``index_dir`` defaults to ``<path>/.ctxfast/`` (always excluded from indexing).
    ``parse_cache`` shares per-file extractions with every other index using the same cache
    (off by default; ``ParseCache()`` is the per-user cache directory).
    ``seed`` names the index of a similar tree (another version of the repository): a
    ``Repository``, its index directory or its ``recon.db``, or several of them. When this
    index does not exist yet (or is of an older schema), it starts from a copy of the seed
    sharing the most files and is refreshed from there, so only the files whose content
    differs are parsed, resolved and written; the graph is the one a cold build gives. A
    seed that cannot be used is passed over (``IndexStats.seed_note`` says why).
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        index_dir: str | os.PathLike[str] | None = None,
        *,
        max_file_bytes: int = DEFAULT_MAX_FILE_BYTES,
        parse_cache: ParseCache | None = None,
        seed: SeedSource | Sequence[SeedSource] | None = None,
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
        # The default directory sits in the (untrusted) tree; one the caller chose is theirs.
        self._index_dir_in_tree = index_dir is None
        self.max_file_bytes = max_file_bytes
        self.parse_cache = parse_cache
        self.seeds = seed_databases(seed)
        self._manifest: dict[str, Any] | None = None
        self._retriever: Retriever | None = None
        self._index_watch: IndexWatch | None = None
        # The repo map's own watch: each watch reports a commit once, to its one reader.
        self._map_watch: IndexWatch | None = None
        self._map: RepoMap | None = None
        self._map_lock = threading.Lock()

    @property
    def graph_db(self) -> Path:
        return self.index_dir / GRAPH_DB_NAME

    def index(
        self, progress: ProgressCallback | None = None, *, retrieval_state: bool = True
    ) -> IndexStats:
        """Builds the code graph, or refreshes it incrementally (only changed files re-parse).

        ``progress(stage, files_done, files_total)`` is called about ten times a second while
        the native run goes on, and once more at the end. Ctrl-C (``KeyboardInterrupt``) in
        the calling thread stops the run between two files, leaves the index as it was, and
        is re-raised.

        When the run changed the index, the retrieval state of the new content is built
        and stored with it (:mod:`ctxfast.retrieval.warm`), so the first retrieval or
        ``compose`` after it, in this process or a new one, reads it instead of building
        it; ``retrieval_state=False`` leaves that to the first retrieval.
        """
        if not self.root.is_dir():
            raise InvalidArgumentError(f"repository path is no longer a directory: {self.root}")
        prepare_index_dir(self.index_dir, repository_owned=self._index_dir_in_tree)
        counters = _native.IndexProgress()

        pc = self.parse_cache
        key = user_key()

        def run() -> tuple[Any, ...]:
            return _native.index_graph(
                str(self.root),
                str(self.graph_db),
                self.max_file_bytes,
                counters,
                str(pc.dir) if pc else None,
                pc.max_bytes if pc else None,
                [str(p) for p in self.seeds],
                key,
            )

        # A cold build publishes its files' content rows before its last second of
        # writing: the state's text pieces are made meanwhile (see text_state).
        prebuild = (
            Prebuild(self.root, self.index_dir, counters.content_rows) if retrieval_state else None
        )
        prebuilt = None
        try:
            if threading.current_thread() is threading.main_thread():
                # Signals reach only the main thread: wait there, run the native call beside it.
                out = run_polled(run, counters.snapshot, progress, cancel=counters.cancel)
            elif progress is None:
                out = run()
            else:
                out = run_polled(run, counters.snapshot, progress)
        finally:
            drain_native()
            if prebuild is not None:
                prebuilt = prebuild.finish()
        seen, parsed, removed, nodes, edges, secs, errors, resolved, hits, seeded, note = out
        if retrieval_state and (parsed or removed):
            # The watch's stamp is taken first: a commit by another process while the state
            # is built shows as a change at the next retrieval, which then checks the key.
            if self._index_watch is None:
                self._index_watch = IndexWatch(self.graph_db)
            self._index_watch.changed()
            kept = self._retriever
            if kept is None or kept.index.key != self._index_key():  # a touch keeps it
                from ctxfast.retrieval.warm import build_state

                # A new index seeded from a sibling's carries that index's retrieval state.
                siblings = [Path(seeded).parent] if seeded else []
                self._retriever = build_state(
                    self.root, self.graph, self.index_dir, prebuilt, siblings
                )
        return IndexStats(
            files_seen=seen,
            files_parsed=parsed,
            files_removed=removed,
            nodes=nodes,
            edges=edges,
            seconds=secs,
            errors=[{"path": p, "error": e} for p, e in errors],
            files_resolved=resolved,
            cache_hits=hits,
            seeded_from=seeded,
            seed_note=note,
        )

    def refresh(self) -> IndexStats:
        """Brings the index up to date with the files before a read, so what an agent edited
        since the last call is what the next call sees. On an unchanged tree this costs one
        ``stat`` per file (a file whose size and modification time are unchanged is not read)."""
        return self.index()

    def ensure_index(self, refresh: bool = True, *, retrieval_state: bool = True) -> None:
        """The read methods' shared first step: refresh unless the caller opted out, and
        index regardless when the index cannot be read as it stands (none yet, another
        schema, or one this user's ctxfast did not write, such as a clone's own ``.ctxfast``).
        A reader of the graph alone (the repo map, the ego graph) passes
        ``retrieval_state=False``: it never reads the retrieval state, so its first call
        does not pay for building it (a quarter to a third of a cold repo map)."""
        if refresh or index_problem(self.graph_db) is not None:
            self.index(retrieval_state=retrieval_state)

    @property
    def graph(self) -> CodeGraph:
        """Read API over ``recon.db`` (raises ``ctxfast.errors.IndexError`` before ``index()``)."""
        return CodeGraph(self.graph_db)

    def manifest(self) -> dict[str, Any]:
        """What the repository is made of — languages, build and test commands, entry points,
        configuration — each fact with the ``file:line`` it was read from.
        Built on first use and kept; it is cheap and never raises on odd files."""
        if self._manifest is None:
            from ctxfast.recon.manifest import build_manifest

            self._manifest = build_manifest(self.root)
        return self._manifest

    def manifest_header(self, max_tokens: int = 500) -> str:
        """The ≤500-token manifest header used on the no-retrieval path."""
        from ctxfast.recon.manifest import render_manifest_header

        return render_manifest_header(self.manifest(), max_tokens=max_tokens)

    def gate(
        self,
        task_text: str,
        current_entity: str,
        sbfl_top: str | None = None,
        config: GateConfig | None = None,
    ) -> GateResult:
        """Decides how much repository context the next step needs: cheap signals from the
        task and the current entity pick a level (nothing, the entity's neighbourhood, or a
        wider map), and the result carries the text to inject."""
        from ctxfast.recon.escalation import run_gate

        return run_gate(self.graph, self.manifest(), task_text, current_entity, sbfl_top, config)

    def ego_graph(self, entity: str, max_radius: int = 1, *, refresh: bool = True) -> EgoGraph:
        """The definition ``entity`` with its direct neighbours in the code graph (what it
        calls, what calls it, what it contains and imports), as a small tree; only radius 1
        is supported (``max_radius=2`` raises ValueError). ``refresh=False`` skips the index
        refresh that runs first."""
        self.ensure_index(refresh, retrieval_state=False)
        from ctxfast.recon.ego import build_ego_graph

        return build_ego_graph(self.graph, entity, max_radius)

    def repo_map(
        self,
        query: str | None = None,
        max_tokens: int = 1024,
        files_in_prompt: tuple[str, ...] = (),
        *,
        refresh: bool = True,
    ) -> str:
        """The ranked repo map within ``max_tokens``; ``""`` if it cannot be built.
        ``refresh=False`` skips the index refresh that runs first. What the map reads from
        the index (file graph, signatures) is kept between calls and read again only when
        the index content changed, so a warm map costs the refresh and the ranking."""
        self.ensure_index(refresh, retrieval_state=False)
        from ctxfast.recon.repomap import render_kept

        with self._map_lock:
            if self._map_watch is None:
                self._map_watch = IndexWatch(self.graph_db)
            # Looked at on every call, so the stamp always follows the database.
            maybe_changed = self._map_watch.changed()
            text, self._map = render_kept(
                self.graph,
                self.index_dir,
                self._map,
                maybe_changed,
                query,
                max_tokens,
                files_in_prompt,
            )
        return text

    def retrieve(
        self,
        task_text: str,
        *,
        error: str | None = None,
        test: str | None = None,
        max_tokens: int | None = None,
        config: RetrievalConfig | dict[str, Any] | None = None,
        refresh: bool = True,
    ) -> RetrievalResult:
        """The smallest slice of code that answers ``task_text`` (with its ``error`` or failing
        ``test``), ranked, rendered within ``max_tokens`` (``None``: the config's
        ``max_tokens``, 4,000 by default).

        The index is refreshed first (files edited since the last call are re-parsed), so the
        slice always shows the code as it is on disk; ``refresh=False`` skips that and reads
        the index as it stands (a repository with no index is still indexed). The in-memory
        retrieval state (definitions, file texts, BM25 indexes, the lexical corpus) is
        rebuilt only when the index content changed.
        """
        for what, text in (("task", task_text), ("error", error), ("test", test)):
            require_text(what, text)
        self.ensure_index(refresh)
        if self._index_watch is None:
            self._index_watch = IndexWatch(self.graph_db)
        # Looked at on every call, so the stamp always follows the database.
        maybe_changed = self._index_watch.changed()
        retriever = self._retriever
        if retriever is None or (maybe_changed and retriever.index.key != self._index_key()):
            from ctxfast.retrieval.pipeline import Retriever

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
        return content_key(self.graph_db)

    def answer(self, question_id: str, subject: str | None = None) -> Answer:
        """The answer to one of six fixed questions about the repository (e.g. how to run the
        tests, where an entry point is), with ``file:line`` evidence."""
        from ctxfast.recon.answers import answer_question

        return answer_question(self.graph, self.manifest(), self.root, question_id, subject)
