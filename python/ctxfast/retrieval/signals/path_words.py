"""``path_words``: files whose path components are words of the task (``man page`` in
``builders/manpage.py``), by a plain count of the task's words among the path's components.

Why: a repository names its modules for what they do, and a task names the behaviour in the
same words.

Measured on SWE-bench Lite: one of the five signals whose plain sum with whole-file BM25 took
file Acc@5 from ≈ .69 (``file_bm25`` alone) to ≈ .81. Weighting each word by its rarity
across paths measured no better on the benchmark sample, so the count stays plain; two
adjacent prose words also matching as one component (``task.path_compounds``): on the 296
scorable Lite instances file Acc@1/10 .517/.858 → .520/.861. Switched off alone (stop 65,
same run, tasks with every gold file first / in the first five / a gold function in the
first ten): issue corpus half A 60/95/56 unchanged, half B 67/106/64 → 65/104/64, Lite
88/118/85 → 85/118/84; PHP/Ruby 12/26/19 → 13/26/20 and 22/39/25 → 23/39/25, JS/TS 10/28/20
→ 11/28/21.

Settings (``FileSignals``): ``path_words`` switches it; ``weights["path_words"]``. Which
words count is the task's (``task.path_compounds``, the stopwords).
"""

from __future__ import annotations

from collections import Counter
from itertools import chain

from ctxfast.retrieval.repoindex import RepoIndex
from ctxfast.retrieval.signals.base import FileSignal, SignalContext
from ctxfast.retrieval.task import TaskQuery


def path_words(index: RepoIndex, tq: TaskQuery) -> dict[str, float]:
    """Per file, how many words of the task are components of its path."""
    holders = index.path_part_files()
    # Counted in C: a common word (``models``, ``db``) is a component of thousands of paths.
    counts = Counter(chain.from_iterable(holders.get(word, ()) for word in tq.path_words))
    files = index.files
    return {files[i]: float(n) for i, n in sorted(counts.items())}


def _measure(ctx: SignalContext) -> dict[str, float]:
    return path_words(ctx.index, ctx.tq)


SIGNAL = FileSignal("path_words", "path_words", _measure)
