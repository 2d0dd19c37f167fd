"""``def_bm25``: BM25 of the task's terms against each definition (its qualified name and
first lines), a file scoring the sum of its best ``def_bm25_top`` (3) definitions among the
100 best.

Why: whole-file BM25 favours long files that mention everything once; a file whose few
definitions each match the task well is where a change goes. Summing the best three: one
lucky definition does not make a file, a long file's many weak ones do not either.

Measured on SWE-bench Lite: one of the five signals whose plain sum with whole-file BM25 took
file Acc@5 from ≈ .69 (``file_bm25`` alone) to ≈ .81. Its index in a repository mostly of
other languages than Python (languages dev set, 200 tasks): covering a definition's first
400 lines instead of 60 (``def_bm25_lines_other``) took Rust file Acc@5 .72 → .76, and the
milder length normalisation ``def_bm25_b_other`` 0.3 (from 0.75) Rust file Acc@1 .46 → .52
(benches/README.md, "The measurements behind the settings' defaults").

Settings (``FileSignals``): ``def_bm25`` switches it (and the definition index, so
``goal_def_bm25`` too); ``def_bm25_top``; the index's ``def_line_max_chars``,
``def_bm25_lines_other``, ``def_bm25_b_other`` (``localize.DefinitionBM25``);
``weights["def_bm25"]``.
"""

from __future__ import annotations

from collections import defaultdict

from ctxfast.retrieval.signals.base import DefinitionSearch, FileSignal, SignalContext


def best_definitions(def_index: DefinitionSearch, terms: list[str], top: int) -> dict[str, float]:
    """Per file, the summed scores of its ``top`` best definitions among the 100 best
    for ``terms``: a file scores by what its best few definitions share with the query, not
    by how many definitions it has."""
    per_file: dict[str, list[float]] = defaultdict(list)
    for i, s in def_index.search(terms, k=100):
        per_file[def_index.defs[i].file].append(s)
    return {f: sum(sorted(v, reverse=True)[:top]) for f, v in per_file.items()}


def _measure(ctx: SignalContext) -> dict[str, float] | None:
    if ctx.def_index is None:
        return None
    return best_definitions(ctx.def_index, list(ctx.tq.terms), ctx.cfg.files.def_bm25_top)


SIGNAL = FileSignal("def_bm25", "def_bm25", _measure)
