"""Every retrieval signal as a feature: one row per file, one row per candidate definition.

The hand-set fusion adds the file signals (each normalised to [0, 1] per query) with weight
1.0 and the candidate evidence with a few fixed bonuses. The learned ranker
(``retrieval.learned_ranker``) reads the same evidence as feature vectors instead, plus what the sum
cannot use — ranks, the file's size, its role (test, package ``__init__``, minor language),
what each recall source found in it, a candidate's kind and span — so its weights can be fit
on commit history of other repositories (``ctxfast eval train-ranker``) rather than chosen
one by one on the benchmark. The names below are the model file's columns: a model whose
columns differ is refused (``ranker.load_model``).
"""

from __future__ import annotations

import math
import weakref
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence

import numpy as np

from ctxfast.bm25 import tokenize_code
from ctxfast.retrieval.candidates import Candidate, RawCandidate
from ctxfast.retrieval.repoindex import RepoIndex
from ctxfast.retrieval.signals import COLUMNS
from ctxfast.retrieval.task import TaskQuery
from ctxfast.text import is_example_path, is_generated_path, is_test_code, is_test_path

#: The file signals of ``localize.file_scores`` (normalised to [0, 1]) and what files lend
#: one another (0 when absent), in the registry's column order (``retrieval.signals.COLUMNS``).
SIGNALS = COLUMNS
FILE_FEATURES = (
    *SIGNALS,
    "file_bm25_rrank",
    "def_bm25_rrank",
    "is_test",
    "minor_language",
    "is_package_init",
    "path_depth",
    "log_defs",
    "named_defs",
    "ripgrep_hits",
    "api_desc",
    "callgraph",
    "signal_count",
    "is_example",
    "is_generated",
    "is_bundle",
)
CANDIDATE_FEATURES = (
    "bm25",
    "bm25_rrank",
    "file_prob",
    "file_rrank",
    "anchor",
    "named",
    "named_callee",
    "is_test",
    "minor_language",
    "kind_function",
    "kind_class",
    "kind_lines",
    "log_span",
    "src_ripgrep",
    "src_api_desc",
    "src_callgraph",
    "src_def_bm25",
    "src_traceback",
    "term_coverage",
    # Where the candidate stands inside its own file: the fix is usually the best-matching
    # definition of a file the file stage trusts, whatever its score against other files.
    "bm25_in_file_rrank",
    "bm25_file_share",
    "file_candidates",
    # How much of the task its body and its name use, unweighted by rarity (BM25 weighs it).
    "body_coverage",
    "name_hits",
    # What the task names around it: its class, or a definition of its file.
    "class_named",
    "file_named",
    "src_infile",
    "is_private",
    "is_dunder",
    # The rest of the hand-set re-rank, one column per term it adds.
    "goal",
    "src_dispatch",
    "src_literal",
    "second_callee",
    "inline_test",
    "is_example",
    "is_generated",
    "is_bundle",
    "in_file_log_rank",
)


def _rranks(scores: Mapping[str, float]) -> dict[str, float]:
    """1 / (1 + rank) of each key by descending score (ties by key, so deterministic)."""
    order = sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))
    return {k: 1.0 / (1 + r) for r, (k, _) in enumerate(order)}


def file_pool(
    signals: Mapping[str, Mapping[str, float]], raws: Iterable[RawCandidate]
) -> list[str]:
    """Every file some signal or recall source points at, sorted (the files a ranker orders)."""
    pool = {f for s in signals.values() for f in s}
    pool.update(r.file for r in raws)
    return sorted(pool)


def file_features(
    ix: RepoIndex,
    tq: TaskQuery,
    signals: Mapping[str, Mapping[str, float]],
    raws: list[RawCandidate],
    pool: list[str],
    minor: frozenset[str],
    bundles: frozenset[str] = frozenset(),
) -> np.ndarray:
    """The ``FILE_FEATURES`` row of each file of ``pool`` (float64, ``len(pool)`` rows);
    ``bundles`` are the files that copy others whole (``RepoIndex.bundle_files``)."""
    bm_rank = _rranks(signals.get("file_bm25", {}))
    def_rank = _rranks(signals.get("def_bm25", {}))
    hits: dict[str, int] = defaultdict(int)
    api: dict[str, float] = defaultdict(float)
    graph: set[str] = set()
    for r in raws:
        if r.source == "ripgrep":
            hits[r.file] += 1
        elif r.source == "api-desc":
            api[r.file] = max(api[r.file], r.score)
        elif r.source == "callgraph":
            graph.add(r.file)
    top_hits = math.log1p(max(hits.values(), default=0)) or 1.0
    top_api = max(api.values(), default=0.0) or 1.0
    named: dict[str, int] = defaultdict(int)
    for ident in tq.named:
        for f in {d.file for d in ix.defs_by_name.get(ident, ())}:
            named[f] += 1
    # Column by column: a list comprehension per column, not a tuple per file (the pool is
    # every file some signal touches, about 300 on Django).
    rows = np.zeros((len(pool), len(FILE_FEATURES)))
    if not pool:  # a task no signal reached: no file to describe (and no row to broadcast into)
        return rows
    col = FILE_FEATURES.index
    for j, sig_name in enumerate(SIGNALS):
        scores = signals.get(sig_name)
        if scores:
            rows[:, j] = [scores.get(f, 0.0) for f in pool]
    rows[:, col("file_bm25_rrank")] = [bm_rank.get(f, 0.0) for f in pool]
    rows[:, col("def_bm25_rrank")] = [def_rank.get(f, 0.0) for f in pool]
    static = _static_file_columns(ix)
    rows[:, col("is_test") : col("log_defs") + 1] = [static(f) for f in pool]
    rows[:, col("minor_language")] = [float(f in minor) for f in pool]
    rows[:, col("named_defs")] = [math.log1p(named.get(f, 0)) for f in pool]
    rows[:, col("ripgrep_hits")] = [math.log1p(hits.get(f, 0)) / top_hits for f in pool]
    rows[:, col("api_desc")] = [api.get(f, 0.0) / top_api for f in pool]
    rows[:, col("callgraph")] = [float(f in graph) for f in pool]
    rows[:, col("signal_count")] = (rows[:, : len(SIGNALS)] > 0).sum(axis=1)
    rows[:, col("is_example")] = [float(is_example_path(f)) for f in pool]
    rows[:, col("is_generated")] = [float(is_generated_path(f)) for f in pool]
    rows[:, col("is_bundle")] = [float(f in bundles) for f in pool]
    return rows


#: Per index, the columns of a file that do not depend on the task (its role, depth, size).
_STATIC: weakref.WeakKeyDictionary[RepoIndex, dict[str, tuple[float, ...]]] = (
    weakref.WeakKeyDictionary()
)


def _static_file_columns(ix: RepoIndex) -> Callable[[str], tuple[float, ...]]:
    """``is_test``, a placeholder for ``minor_language`` (it depends on the settings),
    ``is_package_init``, ``path_depth``, ``log_defs`` of a file, computed once per index."""
    cache = _STATIC.setdefault(ix, {})

    def get(f: str) -> tuple[float, ...]:
        row = cache.get(f)
        if row is None:
            stem = f.rsplit("/", 1)[-1].split(".", 1)[0]
            row = cache[f] = (
                float(is_test_path(f)),
                0.0,
                float(stem in ("__init__", "index", "mod", "lib", "package-info")),
                math.log1p(f.count("/")),
                math.log1p(len(ix.defs_by_file.get(f, ()))),
            )
        return row

    return get


def softmax(scores: np.ndarray) -> np.ndarray:
    if scores.size == 0:
        return scores
    e = np.exp(scores - scores.max())
    probabilities: np.ndarray = e / e.sum()
    return probabilities


def candidate_features(
    cands: list[Candidate],
    bm25: list[float],
    tq: TaskQuery,
    file_prob: Mapping[str, float],
    lifted: set[int],
    minor: frozenset[str],
    goal: Sequence[float] = (),
    second: set[int] | None = None,
    *,
    bundles: frozenset[str] = frozenset(),
    anchor_decay: bool = True,
) -> np.ndarray:
    """The ``CANDIDATE_FEATURES`` row of each candidate, with its own BM25 score ``bm25``
    (the re-rank index over the candidates), the learned probability of its file,
    ``lifted`` (indices of candidates called by a function the task names), ``goal`` (each
    candidate's BM25 against the task's goal sentence over the best one's) and ``second``
    (the callees of the lifted ones). ``anchor`` is the traceback anchor's decayed weight, or
    1 for any anchor without ``anchor_decay``; ``src_dispatch`` and ``src_literal`` count only
    for a candidate the task does not name (the re-rank gives one of the three bonuses);
    ``in_file_log_rank`` is the candidate's place among its file's candidates by their
    current score. Each column is a term of the hand-set re-rank, so that re-rank is one
    weight vector over these rows (``eval.train_ranker.hand_prior``)."""
    top = max(bm25, default=0.0) or 1.0
    bm_rank = _rranks({str(i): s for i, s in enumerate(bm25)})
    f_rank = _rranks(file_prob)
    named = tq.named_set
    terms = set(tq.task_terms)
    n_terms = len(terms) or 1
    by_file: dict[str, list[int]] = defaultdict(list)
    for i, c in enumerate(cands):
        by_file[c.file].append(i)
    in_file_rank: dict[int, float] = {}
    file_best: dict[str, float] = {}
    for f, idx in by_file.items():
        order = sorted(idx, key=lambda i: (-bm25[i], i))
        in_file_rank.update({i: 1.0 / (1 + r) for r, i in enumerate(order)})
        file_best[f] = bm25[order[0]] or 1.0
    named_files = {c.file for c in cands if c.qualname and c.qualname.rsplit(".", 1)[-1] in named}
    place: dict[int, int] = {}
    for idx in by_file.values():
        for r, i in enumerate(sorted(idx, key=lambda i: (-cands[i].score, cands[i].start_line))):
            place[i] = r
    goal = goal or [0.0] * len(cands)
    second = second or set()
    rows = np.zeros((len(cands), len(CANDIDATE_FEATURES)))
    for i, c in enumerate(cands):
        sources = set(c.sources)
        parts = c.qualname.rsplit(".", 2) if c.qualname else []
        last = parts[-1] if parts else ""
        words = set(tokenize_code(last)) if last else set()
        body = set(tokenize_code(c.text)) if terms else set()
        owner = parts[-2] if len(parts) > 1 and c.kind in ("function", "method") else ""
        is_named = bool(last) and last in named
        dispatch = not is_named and any(p.startswith("dispatch:") for p in c.provenance)
        literal = (
            not is_named and not dispatch and any(p.startswith("literal:") for p in c.provenance)
        )
        rows[i] = (
            bm25[i] / top,
            bm_rank[str(i)],
            file_prob.get(c.file, 0.0),
            f_rank.get(c.file, 0.0),
            c.anchor if anchor_decay else float(c.anchor > 0),
            float(is_named),
            float(i in lifted),
            float(is_test_path(c.file)),
            float(c.file in minor),
            float(c.kind in ("function", "method")),
            float(c.kind == "class"),
            float(c.qualname is None),
            math.log1p(c.end_line - c.start_line + 1),
            float("ripgrep" in sources),
            float("api-desc" in sources),
            float("callgraph" in sources),
            float("def-bm25" in sources or "infile" in sources),
            float("traceback" in sources),
            len(words & terms) / len(words) if words else 0.0,
            in_file_rank[i],
            bm25[i] / file_best[c.file],
            math.log1p(len(by_file[c.file])),
            len(body & terms) / n_terms,
            math.log1p(len(words & terms)),
            float(bool(owner) and owner in named),
            float(c.file in named_files),
            float("infile" in sources),
            float(last.startswith("_") and not last.startswith("__")),
            float(last.startswith("__") and last.endswith("__")),
            goal[i],
            float(dispatch),
            float(literal),
            float(i in second),
            float(is_test_code(c.file, c.qualname) and not is_test_path(c.file)),
            float(is_example_path(c.file)),
            float(is_generated_path(c.file)),
            float(c.file in bundles),
            math.log1p(place[i]),
        )
    return rows
