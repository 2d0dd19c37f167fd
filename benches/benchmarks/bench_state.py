"""asv: the retrieval state built with a cold index, stage by stage (see benches/README.md,
"The retrieval state beside the graph").

* ``build_state``: every piece after the graph is written, with the text pieces made in
  the same call (no prebuild): the API index on its own thread, the definition documents
  native;
* ``prebuild_text_pieces``: what a cold build's :class:`~ctxfast.retrieval.text_state.Prebuild`
  makes while the graph's last writes run (whole-file BM25, literals, bundles, includes);
* ``RetrievalStateAfterPrebuild.build_state``: the rest, the text pieces read back.

The tree is ``$CTXFAST_BENCH_TREE`` (e.g. Django 4.2), else a copy of a few standard-library
packages, indexed once (``retrieval_state=False``); each call starts from no stored state.
"""

import shutil
from pathlib import Path

from benchmarks import bench_tree, cache_root
from ctxfast.recon.graph_db import reading
from ctxfast.repository import Repository
from ctxfast.retrieval.text_state import Prebuild
from ctxfast.retrieval.warm import build_state


def _clear_state(index_dir: Path) -> None:
    for p in index_dir.iterdir():
        if p.name == "state":
            shutil.rmtree(p)
        elif p.name.startswith("api.db"):
            p.unlink()


class _IndexedTree:
    """An indexed tree with no stored state at the start of each call."""

    timeout = 600
    number = 1
    repeat = (1, 5, 120.0)
    warmup_time = 0

    def setup_cache(self):
        tree = bench_tree("state")
        index_dir = cache_root("state-index")
        Repository(tree, index_dir).index(retrieval_state=False)
        return tree, index_dir

    def setup(self, cache):
        tree, index_dir = cache
        self.root, self.index_dir = Path(tree), Path(index_dir)
        _clear_state(self.index_dir)
        self.repo = Repository(self.root, self.index_dir)
        with reading(self.repo.graph_db) as con:
            self.rows = con.rows(
                "SELECT path, sha256, language FROM files WHERE sha256 IS NOT NULL ORDER BY path"
            )


class RetrievalState(_IndexedTree):
    def time_build_state(self, cache):
        build_state(self.root, self.repo.graph, self.index_dir)

    def time_prebuild_text_pieces(self, cache):
        Prebuild(self.root, self.index_dir, lambda: self.rows).finish()


class RetrievalStateAfterPrebuild(_IndexedTree):
    """The state built after a prebuild stored the text pieces (made in ``setup``)."""

    def setup(self, cache):
        super().setup(cache)
        self.prebuilt = Prebuild(self.root, self.index_dir, lambda: self.rows).finish()

    def time_build_state(self, cache):
        build_state(self.root, self.repo.graph, self.index_dir, self.prebuilt)
