"""asv: a cold code-graph build against the same build with a warm parse cache (the second
version of a tree whose files an earlier tree already had), same tree, same run. The graph
alone (``retrieval_state=False``): ``bench_first_window`` times the index with its state.

The tree is a copy of a few standard-library packages (real code, ~100 files);
``benches/bench_parse_cache.py`` measures two real versions of sympy or Django.
"""

import os
import shutil
import tempfile

from benchmarks import cache_root, copy_stdlib_packages
from ctxfast import ParseCache, Repository


class ParseCacheIndex:
    timeout = 300
    number = 1  # every sample indexes into a fresh directory (setup)
    repeat = 3

    def setup_cache(self):
        root = cache_root("parse-cache")
        copy_stdlib_packages(os.path.join(root, "src"))
        cache = ParseCache(os.path.join(root, "cache"))
        Repository(os.path.join(root, "src"), os.path.join(root, "fill"), parse_cache=cache).index(
            retrieval_state=False
        )
        return root

    def setup(self, root):
        self.src = os.path.join(root, "src")
        self.cache = ParseCache(os.path.join(root, "cache"))
        self.index_dir = tempfile.mkdtemp(prefix="ctxfast-asv-idx-")

    def teardown(self, root):
        shutil.rmtree(self.index_dir, ignore_errors=True)

    def time_cold_index(self, root):
        Repository(self.src, self.index_dir).index(retrieval_state=False)

    def time_index_with_warm_parse_cache(self, root):
        Repository(self.src, self.index_dir, parse_cache=self.cache).index(retrieval_state=False)
