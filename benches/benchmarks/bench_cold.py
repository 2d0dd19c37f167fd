"""asv: ``ctxfast compose`` as an agent runs it — a fresh process per call on an indexed tree —
with the retrieval state read from the index directory, against the same call rebuilding it
(what every fresh process paid before the state was stored). Same tree, same task, same run;
the two outputs are checked byte-identical in ``setup_cache``.

The tree is ``$CTXFAST_BENCH_TREE`` (e.g. a sympy checkout: the figures in benches/README.md
are for sympy), else a copy of the whole standard library, so the suite needs no download.
The tree is never written to: the index lives in a temporary directory.
"""

import os
import shutil
import subprocess
import sys
import sysconfig

from benchmarks import cache_root
from ctxfast.state_store import STATE_DIRNAME

TASK = (
    "Symbol instances have __dict__ since 1.7: __slots__ should prevent it, and "
    "HTTPConnection.request() sends a malformed Content-Length header"
)


def _tree(root: str) -> str:
    given = os.environ.get("CTXFAST_BENCH_TREE")
    if given:
        return given
    src = os.path.join(root, "src")
    shutil.copytree(
        sysconfig.get_paths()["stdlib"],
        src,
        ignore=shutil.ignore_patterns("__pycache__", "site-packages", "test", "tests", "idlelib"),
    )
    return src


def _compose(tree: str, index_dir: str) -> bytes:
    return subprocess.run(
        [sys.executable, "-m", "ctxfast", "compose", tree, TASK, "--index-dir", index_dir],
        capture_output=True,
        check=True,
    ).stdout


class ColdCompose:
    timeout = 900
    number = 1
    repeat = (1, 5, 60.0)
    warmup_time = 0

    def setup_cache(self):
        root = cache_root("cold")
        tree = _tree(root)
        index_dir = os.path.join(root, "index")
        rebuilt = _compose(tree, index_dir)  # indexes, then builds and stores the state
        stored = _compose(tree, index_dir)  # reads the stored state
        if stored != rebuilt:
            raise AssertionError("the stored retrieval state changed the window")
        return tree, index_dir

    def time_fresh_process_compose_stored_state(self, cache):
        _compose(*cache)

    def time_fresh_process_compose_rebuilt_state(self, cache):
        tree, index_dir = cache
        shutil.rmtree(os.path.join(index_dir, STATE_DIRNAME), ignore_errors=True)
        _compose(tree, index_dir)
