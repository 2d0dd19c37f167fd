"""asv: time to the first window on a fresh clone, each step a fresh process as an agent runs
it, beside a bare ``ast`` walk of the same files (same run; see benches/README.md, "Time to
the first window").

* ``first_window``: ``ctxfast compose`` on a tree with no index (it indexes, builds the
  retrieval state, composes);
* ``cold_index``: ``Repository.index()`` alone (the retrieval state is built with it);
* ``first_compose``: the first ``ctxfast compose`` after that index, in a new process;
* ``ast_walk``: ``ast.parse`` + ``ast.walk`` of every ``.py`` file, the alternative.

The ``track_*`` figures are ratios measured within one call, so machine load cancels out
mostly; ``benches/regress.py`` compares them with the committed previous results. The tree
is ``$CTXFAST_BENCH_TREE`` (e.g. Django 4.2), else a copy of the standard library's code
(``benchmarks.copy_stdlib``, about 630 files), so the suite needs no download.
"""

import shutil
import subprocess
import sys
import tempfile
import time

from benchmarks import bench_tree, copy_stdlib

TASK = (
    "HTTPConnection.request() sends a malformed Content-Length header when the body is a "
    "file object; parse_headers then raises email.errors.HeaderParseError"
)

#: The ``ast`` walk, as a program of its own (a fresh process, like each ctxfast step).
AST_WALK = """
import ast, os, sys
for d, dirs, files in os.walk(sys.argv[1]):
    dirs[:] = sorted(x for x in dirs if x != ".ctxfast")
    for f in sorted(files):
        if f.endswith(".py"):
            with open(os.path.join(d, f), "rb") as fh:
                try:
                    for _ in ast.walk(ast.parse(fh.read())):
                        pass
                except (SyntaxError, ValueError):
                    pass
"""


def _run(*args: str) -> float:
    """Wall seconds of a fresh Python process running ``args``."""
    start = time.perf_counter()
    subprocess.run([sys.executable, *args], capture_output=True, check=True)
    return time.perf_counter() - start


def first_window(tree: str, index_dir: str) -> float:
    return _run("-m", "ctxfast", "compose", tree, TASK, "--index-dir", index_dir)


def cold_index(tree: str, index_dir: str) -> float:
    code = "import sys, ctxfast; ctxfast.Repository(sys.argv[1], sys.argv[2]).index()"
    return _run("-c", code, tree, index_dir)


def ast_walk(tree: str) -> float:
    return _run("-c", AST_WALK, tree)


class FirstWindow:
    timeout = 900
    number = 1
    repeat = (1, 3, 120.0)
    warmup_time = 0

    def setup_cache(self):
        return bench_tree("first-window", copy_stdlib)

    def setup(self, tree):
        self.index_dir = tempfile.mkdtemp(prefix="ctxfast-asv-first-idx-")
        shutil.rmtree(self.index_dir)

    def teardown(self, tree):
        shutil.rmtree(self.index_dir, ignore_errors=True)

    def time_first_window(self, tree):
        first_window(tree, self.index_dir)

    def time_cold_index(self, tree):
        cold_index(tree, self.index_dir)

    def time_ast_walk(self, tree):
        ast_walk(tree)

    def track_first_window_over_ast_walk(self, tree):
        """Index + first compose in one process ÷ the ``ast`` walk (target ≤ 0.7)."""
        walk = ast_walk(tree)
        return first_window(tree, self.index_dir) / walk

    track_first_window_over_ast_walk.unit = "ratio"

    def track_cold_index_over_ast_walk(self, tree):
        """The cold index ÷ the ``ast`` walk (target ≤ 0.5: twice as fast)."""
        walk = ast_walk(tree)
        return cold_index(tree, self.index_dir) / walk

    track_cold_index_over_ast_walk.unit = "ratio"

    def track_first_compose_over_cold_index(self, tree):
        """The first compose after ``index()``, a new process, ÷ that index (target ≤ 0.3)."""
        index = cold_index(tree, self.index_dir)
        return first_window(tree, self.index_dir) / index

    track_first_compose_over_cold_index.unit = "ratio"
