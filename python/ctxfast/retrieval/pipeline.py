"""The retrieval pipeline: task → query → recall → merge → re-rank → prune → cap.

``Retriever`` holds the per-repository state (definitions, file texts, BM25 indexes, api.db)
and is rebuilt only when the index changes; ``retrieve`` is then a pure function of the task
and the configuration. Every stage is switchable in :class:`RetrievalConfig`.
"""

from __future__ import annotations

import json
import math
import re
import threading
import time
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from operator import attrgetter, methodcaller
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ctxfast.bm25 import BM25Index
from ctxfast.recon.graph import CodeGraph
from ctxfast.retrieval.apiindex import API_DB_NAME, ApiIndex, refresh_api_index
from ctxfast.retrieval.candidate_docs import CandidateDocs
from ctxfast.retrieval.candidates import Candidate, RawCandidate
from ctxfast.retrieval.config import RetrievalConfig
from ctxfast.retrieval.dispatch import dispatch_source, family_prefixes
from ctxfast.retrieval.literals import LiteralIndex, literal_source, quoted
from ctxfast.retrieval.localize import DefinitionBM25, file_scores, rank_defs_in_files
from ctxfast.retrieval.merge import merge
from ctxfast.retrieval.prune import prune_candidate
from ctxfast.retrieval.query import Query
from ctxfast.retrieval.rank_rules import apply_rank_rules
from ctxfast.retrieval.render import render_slice
from ctxfast.retrieval.repoindex import RepoIndex
from ctxfast.retrieval.signals import best_first
from ctxfast.retrieval.sources import (
    CallNeighbours,
    LexicalRecall,
    api_desc_source,
    callgraph_source,
    lexical_source,
    traceback_source,
)
from ctxfast.retrieval.task import TaskQuery, parse_task
from ctxfast.retrieval.text_state import literals_name, literals_plain
from ctxfast.state_store import gc_paused
from ctxfast.text import in_test_module, is_example_path, is_generated_path, is_test_path

if TYPE_CHECKING:
    import numpy as np

    from ctxfast.retrieval.learned_ranker import RankerModel
    from ctxfast.retrieval.rerank import Demotions


@dataclass
class RankFeatures:
    """What the learned ranker reads for one task: the file pool with its feature rows and
    file probabilities, and every merged candidate's ``(file, symbol)`` with its rows."""

    files: list[str]
    file_rows: np.ndarray
    file_prob: np.ndarray
    minor: frozenset[str]
    #: The files judged bundles of others (``RepoIndex.bundle_files``): generated code.
    bundles: frozenset[str] = frozenset()
    candidates: list[tuple[str, str | None]] = field(default_factory=list)
    candidate_rows: np.ndarray | None = None
    #: Each candidate's first and last line (a training label matches gold functions by span).
    candidate_spans: list[tuple[int, int]] = field(default_factory=list)


@dataclass
class RetrievalResult:
    """The minimal context set for one task, with everything needed to inspect it."""

    query: Query
    candidates: list[Candidate]
    file_ranking: list[tuple[str, float]]
    text: str
    token_count: int
    max_tokens: int
    timings_ms: dict[str, float] = field(default_factory=dict)
    signals: dict[str, dict[str, float]] = field(default_factory=dict)
    #: The feature rows the learned ranker scored (or, with ``keep_features``, would score).
    features: RankFeatures | None = None

    def ranked_files(self) -> list[str]:
        """Every scored file in rank order (not capped at top-k), POSIX relative paths."""
        return [f for f, _ in self.file_ranking]

    def render(self) -> str:
        """The injected slice, ≤ ``max_tokens`` by exact count."""
        return self.text

    def to_json(self) -> str:
        return json.dumps(
            {
                "query": self.query.to_dict(),
                "candidates": [c.to_dict() for c in self.candidates],
                "ranked_files": self.ranked_files()[:50],
                "text": self.text,
                "token_count": self.token_count,
                "timings_ms": self.timings_ms,
            },
            indent=2,
        )


class Retriever:
    """Per-repository retrieval state over a built index."""

    def __init__(
        self, root: Path, graph: CodeGraph, index_dir: Path, siblings: Sequence[Path] = ()
    ):
        self.root = root
        self.graph = graph
        self.index = RepoIndex(root, graph.db_path, index_dir, siblings)
        self._api_db = index_dir / API_DB_NAME
        self._api: ApiIndex | None = None
        self._api_lock = threading.Lock()
        self._def_index: DefinitionBM25 | None = None
        self._def_cfg: tuple[float, float, int, float, int] | None = None
        self._lexical: LexicalRecall | None = None
        self._literals: LiteralIndex | None = None
        self._families: tuple[int, tuple[str, ...]] | None = None
        self._demoted: dict[Demotions, _Demotions] = {}
        self._candidate_docs = CandidateDocs(self.index)
        self._neighbours = CallNeighbours(graph)

    def api(self) -> ApiIndex:
        """The API-description index of this state, with ``api.db`` brought in line with
        ``recon.db`` first; built on first use, once (``warm.build_state`` builds it on a
        thread of its own while the rest of the state is built)."""
        with self._api_lock:
            if self._api is None:
                refresh_api_index(self.graph.db_path, self._api_db)
                self._api = ApiIndex(self._api_db, self.index.symbol_set, self.index)
            return self._api

    def lexical(self) -> LexicalRecall:
        """Lexical recall over this state's files (the Retriever is rebuilt when the index
        content changes)."""
        if self._lexical is None:
            self._lexical = LexicalRecall(self.index)
        return self._lexical

    def literal_index(self, cfg: RetrievalConfig) -> LiteralIndex:
        """String-literal fragments and names of every indexed file, built on first use."""
        shape = (cfg.files.literal_min_chars, cfg.files.literal_name_max_chars)
        if (
            self._literals is None
            or (
                self._literals.min_chars,
                self._literals.name_max_chars,
            )
            != shape
        ):
            ix = self.index
            name = literals_name(*shape)

            def build() -> dict[str, Any]:
                carried = ix.carry.literals(name, ix.texts) if ix.carry else None
                if carried is None:
                    return literals_plain(ix.files, ix.all_texts(), *shape)
                return carried

            self._literals = LiteralIndex.from_plain(ix.stored_plain(name, build))
        return self._literals

    def family_prefixes(self, min_family: int) -> tuple[str, ...]:
        """The prefixes of the repository's class-dispatch families, found once per state."""
        if self._families is None or self._families[0] != min_family:
            ix = self.index
            found = tuple(
                ix.stored_plain(
                    f"dispatch-prefixes-{min_family}",
                    lambda: sorted(family_prefixes(ix.defs, min_family)),
                )
            )
            self._families = (min_family, found)
        return self._families[1]

    def demotion(self, cfg: RetrievalConfig) -> Callable[[str], float]:
        """:func:`_demotion` of a path under ``cfg.demotions``, each path's worked out once
        for this state and these settings: the file ranking and the re-rank ask it of every
        scored file on every call (about 6,400 paths a call on a 4,000-file tree). The
        function returned is the table's own lookup, so a known path costs no Python call."""
        known = self._demoted.get(cfg.demotions)
        if known is None:
            known = self._demoted[cfg.demotions] = _Demotions(self.index, cfg)
        return known.__getitem__

    def def_index(self, cfg: RetrievalConfig) -> DefinitionBM25:
        shape = (
            cfg.bm25.k1,
            cfg.bm25.b,
            cfg.files.def_bm25_lines_other,
            cfg.files.def_bm25_b_other,
            cfg.files.def_line_max_chars,
        )
        if self._def_index is None or self._def_cfg != shape:
            self._def_index = DefinitionBM25(self.index, cfg)
            self._def_cfg = shape
        return self._def_index

    # A retrieval makes tens of thousands of short-lived objects (hits, candidates, rows),
    # none in a reference cycle: the collections their allocation triggered traversed the
    # whole retrieval state for nothing (about 1 ms a warm call on Django, plus a full
    # collection of 30-60 ms every few dozen calls).
    @gc_paused()
    def retrieve(
        self,
        task_text: str,
        *,
        error: str | None = None,
        test: str | None = None,
        max_tokens: int | None = None,
        config: RetrievalConfig | dict[str, Any] | None = None,
    ) -> RetrievalResult:
        cfg = (
            config if isinstance(config, RetrievalConfig) else RetrievalConfig.from_mapping(config)
        )
        cap = cfg.max_tokens if max_tokens is None else max_tokens
        times: dict[str, float] = {}
        t = time.perf_counter()

        def lap(name: str) -> None:
            nonlocal t
            now = time.perf_counter()
            times[name] = round((now - t) * 1000, 3)
            t = now

        ix = self.index
        tq = parse_task(
            task_text,
            error,
            test,
            cfg.query,
            cfg.task.stopwords,
            name_index=ix.qualnames_and_names,
            flag_names=cfg.files.literal_names_flags,
            quoted_names=cfg.files.literal_names_quoted,
            compounds=cfg.task.path_compounds,
            listing_min_lines=cfg.task.listing_min_lines,
            drop_html_comments=cfg.task.drop_html_comments,
            goal_rest_min=cfg.task.goal_rest_min,
        )
        query = tq.query
        lap("query")
        raws: list[RawCandidate] = []
        if cfg.sources.traceback:
            raws += traceback_source(ix, tq)
        if cfg.sources.lexical:
            raws += lexical_source(self.lexical(), tq, cfg.sources.lexical_max_hits)
        lap("lexical")
        if cfg.sources.api_desc:
            raws += api_desc_source(self.api(), tq, cfg.sources.api_desc_k)
        lap("api_desc")
        if cfg.sources.callgraph:
            raws += callgraph_source(self._neighbours, ix, tq, cfg.sources.callgraph_k)
        lap("callgraph")
        if cfg.sources.dispatch:
            raws += dispatch_source(ix, tq, self.family_prefixes(cfg.sources.dispatch_family_min))
        def_index = self.def_index(cfg) if cfg.files.def_bm25 else None
        if def_index is not None:
            def_index.start_task()
        literal_index = (
            self.literal_index(cfg) if cfg.files.literals or cfg.files.literal_names else None
        )
        quoted_literals = (
            quoted(literal_index, tq.text, cfg.files.literal_max_files)
            if cfg.files.literals and literal_index is not None
            else []
        )
        files, signals = file_scores(ix, def_index, tq, cfg, literal_index, quoted_literals)
        if cfg.sources.literal_defs:
            raws += literal_source(ix, quoted_literals)
        if def_index is not None:
            raws += _definition_source(def_index, files, tq, cfg)
        model = None
        if cfg.ranker == "learned":
            # numpy is read only here: the hand-set pipeline runs without it.
            from ctxfast.retrieval.learned_ranker import load_model

            model = load_model(cfg.ranker_model or None)
        features: RankFeatures | None = None
        learned_files = model is not None and model.files is not None
        if model is not None or cfg.keep_features:
            features = self._file_stage(tq, signals, raws, files, cfg, model)
            if learned_files:
                files = dict(zip(features.files, features.file_prob, strict=True))
        lap("localize")
        cands = merge(ix, raws)
        lap("merge")
        ranked = self._rerank(cands, tq, files, cfg, model, features)
        # The files in rank order (the learned probabilities, else the hand-set rules). The
        # header of the file the fix most likely lives in: the best file that is not demoted
        # (a test, a file of a minor language), the first in that order (both rankings order
        # the files without a demotion by score, then path).
        demote = self.demotion(cfg)
        file_rank = best_first(files) if learned_files else _rank_files(files, demote)
        top_file = next((f for f, _ in file_rank if demote(f) == 0.0), None)
        apply_rank_rules(ranked, ix, top_file, cfg)
        del ranked[cfg.top_k :]
        _name_symbols(ranked, ix)
        lap("rerank")
        self._prune(ranked, tq, cfg)
        lap("prune")
        text, tokens = render_slice(ranked, ix, cap, cfg.encoding)
        lap("render")
        _complete_ranking(ix, file_rank, ranked, cfg, demote)
        # The first retrieval has made every piece it reads: the replaced state's bytes a
        # refresh left to carry from are not needed again.
        ix.carry = None
        return RetrievalResult(
            query, ranked, file_rank, text, tokens, cap, times, signals, features
        )

    def _prune(self, ranked: list[Candidate], tq: TaskQuery, cfg: RetrievalConfig) -> None:
        """Set the lines each ranked candidate shows: pruned toward the task's goal tokens
        (against the candidate index :meth:`_rerank` built), or every line of its span when
        pruning is off."""
        if ranked and cfg.prune.enabled:
            goal = set(tq.goal_tokens)
            rix = self._cand_index
            for c in ranked:
                prune_candidate(c, self.index, goal, rix, cfg.prune.tau, cfg.prune.line_floor)
        else:
            for c in ranked:
                c.kept_lines = list(range(c.start_line, c.end_line + 1))

    def _file_stage(
        self,
        tq: TaskQuery,
        signals: dict[str, dict[str, float]],
        raws: list[RawCandidate],
        files: dict[str, float],
        cfg: RetrievalConfig,
        model: RankerModel | None,
    ) -> RankFeatures:
        """The file rows of every file some signal or source points at and, with a model,
        each file's learned probability (softmax over the pool); without one (feature
        export) the hand-set total stands in, normalised by the best file."""
        import numpy as np

        from ctxfast.retrieval.features import file_features, file_pool, softmax

        ix = self.index
        minor = ix.minor_language_files(cfg.demotions.minor_language_share)
        bundles = ix.bundle_files(cfg.demotions.bundle_min_files)
        pool = file_pool(signals, raws)
        rows = file_features(ix, tq, signals, raws, pool, minor, bundles)
        if model is not None and model.files is not None:
            prob = softmax(model.files.score(rows))
        else:
            top = max(files.values(), default=0.0) or 1.0
            prob = np.array([files.get(f, 0.0) / top for f in pool])
        return RankFeatures(pool, rows, prob, minor, bundles)

    def _rerank(
        self,
        cands: list[Candidate],
        tq: TaskQuery,
        files: dict[str, float],
        cfg: RetrievalConfig,
        model: RankerModel | None = None,
        features: RankFeatures | None = None,
    ) -> list[Candidate]:
        """Identifier-weighted BM25 over the candidates, plus the file-level evidence
        and traceback anchoring, best first; all of them (the rank rules after it may reach
        below top-k, :meth:`retrieve` cuts the list)."""
        if not cands:
            self._cand_index = BM25Index([""])
            if features is not None:
                import numpy as np

                from ctxfast.retrieval.features import CANDIDATE_FEATURES

                features.candidate_rows = np.zeros((0, len(CANDIDATE_FEATURES)))
            return []
        ix = self.index
        bm = self._candidate_docs.index(cands, cfg.bm25, cfg.rerank.class_own_lines)
        self._cand_index = bm
        scores = bm.scores(list(tq.rerank_terms))
        top = max(scores) or 1.0
        top_file = max(files.values(), default=0.0) or 1.0
        named = set(tq.named)
        if cfg.files.goal_signals and cfg.rerank.goal_candidate_weight and tq.goal_terms:
            goal_scores = bm.scores(list(tq.goal_terms))
            top_goal = max(goal_scores) or 1.0
            goal = [g / top_goal for g in goal_scores]
            weighted = [cfg.rerank.goal_candidate_weight * g / top_goal for g in goal_scores]
        else:
            goal = weighted = [0.0] * len(cands)
        demote = self.demotion(cfg)
        names = _names(cands)
        bonus = _bonuses(named, cfg, demote)
        for c, name, s, g in zip(cands, names, scores, weighted, strict=True):
            c.bm25_score = s
            c.score = s / top + files.get(c.file, 0.0) / top_file + bonus(c, name) + g
        lifted, second = _callee_bonuses(cands, names, named, cfg)
        if cfg.rerank.same_file_decay:
            _decay_within_files(cands, cfg.rerank.same_file_decay)
        if features is not None:
            from ctxfast.retrieval.features import candidate_features

            _name_symbols(cands, ix)
            rows = candidate_features(
                cands,
                scores,
                tq,
                dict(zip(features.files, features.file_prob, strict=True)),
                lifted,
                features.minor,
                goal,
                second,
                bundles=features.bundles,
                anchor_decay=cfg.rerank.traceback_decay,
            )
            features.candidates = [(c.file, c.symbol) for c in cands]
            features.candidate_spans = [(c.start_line, c.end_line) for c in cands]
            features.candidate_rows = rows
            if model is not None:
                for c, s in zip(cands, model.definitions.score(rows), strict=True):
                    c.score = float(s)
        # Best first, ties by file and line: two stable sorts with C keys (see ``best_first``).
        cands.sort(key=attrgetter("file", "start_line"))
        cands.sort(key=attrgetter("score"), reverse=True)
        return cands


#: What a candidate the task names gains in the hand-set re-rank.
NAMED_BONUS = 0.5

#: A call by name. Possessive runs: what follows a name or its spaces can only be a ``(``,
#: so giving any back never matched, and the re-rank scans whole function bodies with it.
_CALLED = re.compile(r"\b([A-Za-z_][A-Za-z0-9_]*+)\s*+\(")


def _name_symbols(cands: list[Candidate], ix: RepoIndex) -> None:
    """Set each candidate's ``symbol``: the re-rank's features read every candidate's, the
    result only the kept ones' (a twentieth of them), so they are set where they are read."""
    for c in cands:
        c.symbol = ix.local_symbol(c.file, c.qualname)


def _names(cands: list[Candidate]) -> list[str | None]:
    """Each candidate's definition name (its qualname's last part; ``None`` for a line span),
    split once per query for the re-rank's name tests."""
    return [c.qualname.rsplit(".", 1)[-1] if c.qualname else None for c in cands]


def _named_callees(
    cands: list[Candidate],
    names: list[str | None],
    named: Collection[str],
    skip: Collection[str] = (),
) -> set[int]:
    """Indices of the candidates called by name from the body of a function the task names
    (in the hand-set fusion they gain ``named_callee_bonus``; called with the names of those
    callees, the next hop, which gains ``second_callee_bonus``). Names in ``named`` or
    ``skip`` are never lifted; ``names`` are the candidates' :func:`_names`.

    An issue names the entry point it used (``QuerySet.defer()``) while the fix often sits
    in what that entry point calls (``Query.add_deferred_loading``), reached through an
    attribute chain the call graph cannot resolve (``clone.query.add_deferred_loading``).
    Names are matched, so every same-named candidate gains; only candidates already
    recalled are lifted."""
    called: set[str] = set()
    for c, name in zip(cands, names, strict=True):
        if name is not None and name in named and c.kind != "class":
            body = c.text.split("\n", 1)[1] if "\n" in c.text else ""
            called.update(_CALLED.findall(body))
    return {
        i
        for i, name in enumerate(names)
        if name is not None and name in called and name not in named and name not in skip
    }


#: Whether a provenance entry is a dispatch (a quoted literal's) hit: applied by ``map``, so
#: the re-rank's test of every candidate makes no Python frame per entry.
_DISPATCH_HIT = methodcaller("startswith", "dispatch:")
_LITERAL_HIT = methodcaller("startswith", "literal:")


def _bonuses(
    named: set[str], cfg: RetrievalConfig, demote: Callable[[str], float]
) -> Callable[[Candidate, str | None], float]:
    """What the hand-set re-rank adds to a candidate's text and file score, given the
    candidate and its :func:`_names` entry: a traceback anchor lifts it; a name the task
    mentions (else a dispatch or quoted-literal source) lifts it; tests, examples, generated
    code and minor languages lose their demotion. The settings are read once per query, not
    once per candidate."""
    traceback_bonus, decay = cfg.rerank.traceback_bonus, cfg.rerank.traceback_decay
    dispatch, dispatch_bonus = cfg.sources.dispatch, cfg.rerank.dispatch_bonus
    literal, literal_bonus = cfg.sources.literal_defs, cfg.rerank.literal_bonus

    def bonus(c: Candidate, name: str | None) -> float:
        value = 0.0
        if c.anchor > 0:
            value += traceback_bonus * (c.anchor if decay else 1.0)
        if name is not None and name in named:
            value += NAMED_BONUS
        elif dispatch and any(map(_DISPATCH_HIT, c.provenance)):
            value += dispatch_bonus
        elif literal and any(map(_LITERAL_HIT, c.provenance)):
            value += literal_bonus
        value -= demote(c.file) + _inline_test_demotion(c, cfg)
        return value

    return bonus


def _callee_bonuses(
    cands: list[Candidate], names: list[str | None], named: set[str], cfg: RetrievalConfig
) -> tuple[set[int], set[int]]:
    """Lift the candidates that a named function calls, and (one call further) the ones they
    call in turn: the fix often sits in a helper of the function the task names. Returns the
    indices of both sets, which the learned ranker reads as features."""
    lifted = _named_callees(cands, names, named)
    if cfg.rerank.named_callee_bonus:
        for i in lifted:
            cands[i].score += cfg.rerank.named_callee_bonus
    second: set[int] = set()
    if cfg.rerank.second_callee_bonus and lifted:
        callers = {name for i in lifted if (name := names[i]) is not None}
        second = _named_callees(cands, names, callers, skip=named) - lifted
        for i in second:
            cands[i].score += cfg.rerank.second_callee_bonus
    return lifted, second


def _definition_source(
    def_index: DefinitionBM25, files: dict[str, float], tq: TaskQuery, cfg: RetrievalConfig
) -> list[RawCandidate]:
    """Definitions as candidates: the best BM25 matches of the task's terms over all
    definitions and, with ``infile_defs``, the best definitions inside the best files."""
    raws: list[RawCandidate] = []
    for i, s in def_index.search(list(tq.task_terms), k=cfg.sources.def_bm25_k, candidates=True):
        d = def_index.defs[i]
        raws.append(
            RawCandidate("def-bm25", d.qualname, d.file, d.line, d.end_line, d.qualname, d.kind, s)
        )
    if cfg.sources.infile_defs:
        inner = rank_defs_in_files(
            def_index, files, tq, cfg.sources.infile_files, cfg.sources.infile_k,
            cfg.sources.infile_next_files, cfg.sources.infile_next_k,
        )  # fmt: skip
        for i, s in inner:
            d = def_index.defs[i]
            raws.append(
                RawCandidate(
                    "infile", d.qualname, d.file, d.line, d.end_line, d.qualname, d.kind, s
                )
            )
    return raws


def _complete_ranking(
    ix: RepoIndex,
    file_rank: list[tuple[str, float]],
    ranked: list[Candidate],
    cfg: RetrievalConfig,
    demote: Callable[[str], float],
) -> None:
    """Complete the file ranking with every candidate's file not yet in it, then with filler
    up to ``rank_fill`` files."""
    in_rank = {f for f, _ in file_rank}
    for c in ranked:  # every candidate file appears in the ranking
        if c.file not in in_rank:
            file_rank.append((c.file, 0.0))
            in_rank.add(c.file)
    if len(file_rank) < cfg.files.rank_fill:
        file_rank += _fill(ix, in_rank, demote)[: cfg.files.rank_fill - len(file_rank)]


def _decay_within_files(cands: list[Candidate], decay: float) -> None:
    """Each candidate loses ``decay`` × ln(1 + n), n its place among its file's candidates
    by score (ties by line). The file's evidence is added to every candidate of the file,
    so without this the best file's tenth definition outranks the second file's best."""
    by_file: dict[str, list[Candidate]] = {}
    for c in cands:
        by_file.setdefault(c.file, []).append(c)
    for group in by_file.values():
        group.sort(key=lambda c: (-c.score, c.start_line))
        for n, c in enumerate(group):
            c.score -= decay * math.log1p(n)


def _rank_files(files: dict[str, float], demote: Callable[[str], float]) -> list[tuple[str, float]]:
    """Files in rank order with their evidence scores. With ``demote_tests`` a test file
    ranks as if it scored ``test_penalty`` less — the same demotion its candidates get, so
    the file order agrees with the candidate order (on all 296 scorable SWE-bench Lite
    instances: file Acc@5 .740 → .764, Acc@1 .480 → .497). The scores stay the evidence."""
    ranked = best_first({f: s - demote(f) for f, s in files.items()})
    return [(f, files[f]) for f, _ in ranked]


def _fill(
    ix: RepoIndex, ranked: set[str], demote: Callable[[str], float]
) -> list[tuple[str, float]]:
    """The files no evidence reached, to complete a short ranking: a terse task ("Handle
    broken pipes") can share no word with the code, and a small repository's answer is then
    still among its few files. Files that are not demoted come first, then by how many
    definitions they hold (the program's main modules before its helpers), then by path;
    each scores 0."""
    held = ix.defs_by_file.positions
    rest = [f for f in ix.files if f not in ranked]
    rest.sort(key=lambda f: (demote(f), -len(held(f)), f))
    return [(f, 0.0) for f in rest]


def _inline_test_demotion(c: Candidate, cfg: RetrievalConfig) -> float:
    """``test_penalty`` for a test written inside a library file (Rust's ``mod tests``),
    which the file's path does not mark (a test file's candidates lose it by path): a fix
    lives in the function the test calls, not in the test."""
    demote = cfg.demotions.demote_tests and in_test_module(c.qualname)
    return cfg.demotions.test_penalty if demote and not is_test_path(c.file) else 0.0


class _Demotions(dict[str, float]):
    """Path → :func:`_demotion` under one configuration's demotions, each worked out on
    first lookup."""

    def __init__(self, ix: RepoIndex, cfg: RetrievalConfig) -> None:
        super().__init__()
        self._ix = ix
        self._cfg = cfg

    def __missing__(self, path: str) -> float:
        value = self[path] = _demotion(self._ix, path, self._cfg)
        return value


def _demotion(ix: RepoIndex, path: str, cfg: RetrievalConfig) -> float:
    """What a file loses in both rankings (files and candidates): ``test_penalty`` for a test
    file under ``demote_tests``, ``example_penalty`` for example code, ``generated_penalty``
    for generated or vendored code, ``bundle_penalty`` for a bundle of other files of the
    repository, ``minor_language_penalty`` for a file in a minor language of the repository
    under ``demote_minor_languages``."""
    out = cfg.demotions.test_penalty if cfg.demotions.demote_tests and is_test_path(path) else 0.0
    if cfg.demotions.example_penalty and is_example_path(path):
        out += cfg.demotions.example_penalty
    if cfg.demotions.generated_penalty and is_generated_path(path):
        out += cfg.demotions.generated_penalty
    if cfg.demotions.bundle_penalty and path in ix.bundle_files(cfg.demotions.bundle_min_files):
        out += cfg.demotions.bundle_penalty
    if cfg.demotions.demote_minor_languages and path in ix.minor_language_files(
        cfg.demotions.minor_language_share
    ):
        out += cfg.demotions.minor_language_penalty
    return out
