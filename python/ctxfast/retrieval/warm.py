"""The retrieval state built with the index, so the first retrieval after ``index()`` reads it.

An agent clones a repository and asks for a window at once. Built on first use, the
retrieval state (the definition table, the BM25 indexes over definitions, files and API
descriptions, ``api.db``, the literal fragments, the dispatch families) made the first
``compose`` after a cold index of Django cost more than the index itself (4.0–4.5 s against
0.1 s for the next one). :func:`build_state` builds every piece a retrieval with the default
configuration reads, right after an index run that changed something, and stores each in the
index's :class:`~ctxfast.state_store.StateStore`: a later process reads them back, and
the process that indexed keeps the :class:`~ctxfast.retrieval.pipeline.Retriever` it built.

Each piece is made by the code that makes it on first use (same builders, same store
names), so a window is byte-identical whether its state was built here or by the retrieval.
A cold build makes the pieces that need only the files' texts while its graph is still
being written (:mod:`ctxfast.retrieval.text_state`), and :func:`build_state` reads them
back; the API-description index is built on a thread of its own beside the rest.
Its time is logged at debug level beside the native index's stage trace (``index: parse
done at …``), with the process's CPU seconds, so one log shows every stage of a cold build.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from ctxfast.recon.graph import CodeGraph
from ctxfast.retrieval.apiindex import API_DB_NAME, refresh_api_index
from ctxfast.retrieval.config import RetrievalConfig
from ctxfast.retrieval.pipeline import Retriever
from ctxfast.retrieval.text_state import Prebuilt
from ctxfast.state_store import gc_paused

log = logging.getLogger(__name__)


def build_state(
    root: Path,
    graph: CodeGraph,
    index_dir: Path,
    prebuilt: Prebuilt | None = None,
    siblings: Sequence[Path] = (),
) -> Retriever:
    """The retriever of the index's current state with every piece the default
    configuration reads built (or read back, when a previous run stored it, or a
    :class:`~ctxfast.retrieval.text_state.Prebuild` stored it during the run: ``prebuilt``
    hands over the files it read; or carried over from the state a refresh replaced, or
    from the state of one of ``siblings``, the index directories this one was seeded
    from)."""
    cfg = RetrievalConfig()
    start = time.perf_counter()
    # Hundreds of thousands of rows, tuples and strings, none in a cycle: collections
    # triggered by their allocation would traverse them for nothing (6 % of the CPU).
    # The API-description index (``api.db`` refreshed from ``recon.db``, then its BM25
    # index) needs nothing else the state holds: it is built on a thread of its own while
    # this one builds the rest, and the two overlap where either runs native code or
    # SQLite with the GIL released (a third of a Django build's wall time). ``api.db`` is
    # synced first, beside the definition table's read; the index's own refresh then finds
    # nothing to do (10 ms on Django).
    with gc_paused(), ThreadPoolExecutor(1, thread_name_prefix="ctxfast-state") as pool:
        synced = pool.submit(refresh_api_index, graph.db_path, index_dir / API_DB_NAME)
        retriever = Retriever(root, graph, index_dir, siblings)
        api = pool.submit(retriever.api)
        ix = retriever.index
        ix.adopt(prebuilt)
        ix.file_bm25()
        # A tree mostly of other languages than Python searches its candidates in a second
        # definition index (another length normalisation): built too.
        retriever.def_index(cfg).candidate_bm25  # noqa: B018
        retriever.literal_index(cfg)
        retriever.family_prefixes(cfg.sources.dispatch_family_min)
        ix.included_files()
        ix.bundle_files(cfg.demotions.bundle_min_files)
        synced.result()
        api.result()
    ix.carry = None  # every piece is made: the replaced state's bytes are not needed again
    log.debug(
        "index: retrieval state built in %.3fs (process CPU %.3fs)",
        time.perf_counter() - start,
        time.process_time(),
    )
    return retriever


__all__ = ["build_state"]
