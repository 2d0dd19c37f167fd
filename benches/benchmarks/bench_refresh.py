"""asv: refreshing an indexed tree from the process that indexed it, as an agent loop does
before every decision: nothing changed (the stat pass), and one file's body edited (one
file parsed and resolved against the symbol table the last run left in memory); and the
same edit with the retrieval state brought up to date too (``index()``'s default: the
state is carried over from the previous one, only the edited file's share made anew).

The tree is :data:`~benchmarks.PACKAGES` copied :data:`COPIES` times under distinct names,
each copy's imports rewritten to its own (~600 files of real code); ``benches/bench_scale.py``
measures the same refreshes at 10k, 30k and 100k files. The graph alone
(``retrieval_state=False``) for the first two.
"""

import os
import re
import shutil
from pathlib import Path

from benchmarks import PACKAGES, cache_root, copy_stdlib_packages
from ctxfast import Repository

COPIES = 6


def _synthesise(dest: Path) -> None:
    """Writes :data:`COPIES` copies of the standard-library packages under ``dest``."""
    plain = dest / "plain"
    copy_stdlib_packages(str(plain))
    word = re.compile(rb"\b(" + b"|".join(p.encode() for p in PACKAGES) + rb")\b")
    for n in range(COPIES):
        for src in plain.rglob("*.py"):
            rel = src.relative_to(plain)
            out = dest / "src" / f"{rel.parts[0]}{n}" / Path(*rel.parts[1:])
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_bytes(word.sub(lambda m, n=n: m.group(1) + str(n).encode(), src.read_bytes()))
    shutil.rmtree(plain)


class Refresh:
    timeout = 600
    number = 1  # one-file samples each edit the file again (setup)
    repeat = 5

    def setup_cache(self):
        root = cache_root("refresh")
        _synthesise(Path(root))
        Repository(os.path.join(root, "src"), os.path.join(root, "index")).index(
            retrieval_state=False
        )
        return root

    def setup(self, root):
        self.repo = Repository(os.path.join(root, "src"), os.path.join(root, "index"))
        self.repo.index(retrieval_state=False)  # this process now holds what the run left
        self.target = Path(root) / "src" / "json0" / "decoder.py"

    def time_noop_refresh(self, root):
        self.repo.index(retrieval_state=False)

    def time_one_file_refresh(self, root):
        with self.target.open("ab") as f:
            f.write(b"\n# edited\n")
        self.repo.index(retrieval_state=False)


class RefreshWithState:
    """One file edited, then ``index()`` with the retrieval state (what the next ``compose``
    reads), in a new ``Repository`` as a new agent process makes it."""

    timeout = 600
    number = 1
    repeat = 5

    def setup_cache(self):
        root = cache_root("refresh-state")
        _synthesise(Path(root))
        Repository(os.path.join(root, "src"), os.path.join(root, "index")).index()
        return root

    def setup(self, root):
        self.src, self.index_dir = os.path.join(root, "src"), os.path.join(root, "index")
        self.target = Path(root) / "src" / "json0" / "decoder.py"

    def time_one_file_refresh_with_state(self, root):
        with self.target.open("ab") as f:
            f.write(b"\n# edited\n")
        Repository(self.src, self.index_dir).index()
