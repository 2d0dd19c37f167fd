"""File-level localisation: which files an issue is about, by simply added evidence.

Each file signal is a module of its own under ``retrieval.signals``, registered in one
ordered list (``signals.FILE_SIGNALS``, then the lending of ``signals.LENDERS``);
:func:`file_scores` measures the enabled ones, normalises each to [0, 1] per task and adds
them with their weights. Measured on SWE-bench Lite: whole-file BM25 alone reaches Acc@5
≈ .69; definition matching (code identifiers of the task that a file *defines*, weighted by
rarity), path mentions, definition-level BM25 (top-3 definitions summed), query words in the
path and traceback anchoring each add recall, and simply adding them (each normalised to
[0, 1] per query) reached ≈ .81 — tuning weights jointly did not generalise, so the weights
stay 1.0. Added since, on the same terms: the goal sentence as a query of its own, message
literals the task quotes (``retrieval.literals``), the flags and names it gives that a file
declares as string literals, platform-conditional code, and test files lending to the
modules they test. The settings of every signal are :class:`FileSignals`.
"""

from __future__ import annotations

import functools
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from operator import itemgetter
from typing import TYPE_CHECKING, ClassVar

from ctxfast.bm25 import BM25Index
from ctxfast.retrieval.literals import LiteralIndex, LiteralMatch
from ctxfast.retrieval.repoindex import RepoIndex
from ctxfast.retrieval.signals import FILE_SIGNALS, LENDERS, SignalContext, best_n, normalise
from ctxfast.retrieval.task import TaskQuery

if TYPE_CHECKING:
    from ctxfast.retrieval.config import RetrievalConfig


def _default_weights() -> dict[str, float]:
    return {
        "file_bm25": 1.0,
        "definition_match": 1.0,
        "path_mentions": 1.0,
        "def_bm25": 1.0,
        "path_words": 1.0,
        "traceback": 1.0,
        "literals": 1.0,
        "literal_names": 1.0,
        "platform_code": 1.0,
    }


@dataclass(frozen=True)
class FileSignals:
    """Which files the task is about (``RetrievalConfig.files``): the file signals, each
    normalised to [0, 1] per task and added with its weight, and what each one reads (each
    signal's module under ``retrieval.signals`` names the fields it reads)."""

    FLAT_NAMES: ClassVar[Mapping[str, str]] = {"weights": "signal_weights"}

    #: BM25 of the task against each whole file.
    file_bm25: bool = True
    #: Identifiers the task uses that a file defines, weighted by how rare they are.
    definition_match: bool = True
    #: Paths (or file names) the task writes out.
    path_mentions: bool = True
    #: BM25 of the task against each definition, a file scoring its best few definitions.
    def_bm25: bool = True
    #: How many of a file's best definitions add up to its ``def_bm25`` score (3): one
    #: lucky definition does not make a file, a long file's many weak ones do not either.
    def_bm25_top: int = 3
    #: Each line of a definition's BM25 text is cut to this many characters (500): in a
    #: minified one-line file every definition would otherwise copy the whole file. Code
    #: lines are far shorter.
    def_line_max_chars: int = 500
    #: In a repository mostly of other languages than Python, a definition's BM25 text
    #: covers its first this many lines (400; Python definitions keep 60): a Rust ``main``
    #: or a CLI builder is one function of hundreds of lines whose first 60 say little.
    def_bm25_lines_other: int = 400
    #: BM25's length normalisation for those definitions in such a repository (0.3, milder
    #: than the 0.75 used elsewhere): long functions were out-scored by any short helper
    #: sharing one word with the task. Candidates are still searched with ``bm25.b``.
    def_bm25_b_other: float = 0.3
    #: Words of the task found in a file's path (``man page`` in ``builders/manpage.py``).
    path_words: bool = True
    #: The task's goal sentence (an issue's title) as a query of its own: whole-file and
    #: definition BM25 of the goal's words become two more signals. The body of an issue is
    #: mostly evidence (code, output) pointing at every file its example touches; the title
    #: names the behaviour that is wrong.
    goal_signals: bool = True
    #: String literals of the code that the task quotes verbatim (an error message), as a
    #: signal: the file that prints a message is where it comes from.
    literals: bool = True
    #: A quoted fragment must be at least this many characters (12) to count: shorter ones
    #: match by chance.
    literal_min_chars: int = 12
    #: A literal (or a name below) held by more than this many files (5) is too common to
    #: point anywhere and is ignored.
    literal_max_files: int = 5
    #: Names the task gives (environment-variable-like constants) that a file holds as a
    #: whole string literal, where a program reads its settings, as a signal.
    literal_names: bool = True
    #: Command-line flags the task writes (``--glob``) count as such names too. Off: a task
    #: about "X with --flag" is usually fixed in the behaviour, not where the flag is declared.
    literal_names_flags: bool = False
    #: One-token quoted names count as such names too. Off: it pointed at the wrong files
    #: as often as at the right ones.
    literal_names_quoted: bool = False
    #: Such a string literal is at most this many characters (40): a name, not a sentence.
    literal_name_max_chars: int = 40
    #: Test files among the best-ranked lend part of their score to the modules their names
    #: point at (``test_parser.py`` → ``parser.py``): an issue quoting a test is about the
    #: code it tests.
    tested_modules: bool = True
    #: The share of a test file's score it lends (0.25).
    tested_modules_weight: float = 0.25
    #: Only the best this many files (10) lend.
    tested_modules_files: int = 10
    #: A file another file textually includes (Rust ``include!``) gains this share (0.5) of
    #: the includer's score: it is part of that file's code. 0: off.
    include_lending: float = 0.5
    #: When the goal sentence names an operating system (``on Windows``), the files whose
    #: code is conditional on it (``#[cfg(windows)]``, ``sys.platform == "win32"``) as a
    #: signal.
    platform_code: bool = True
    #: Each signal's weight in the sum, by name. All 1: tuning them jointly did not carry
    #: over from one set of tasks to another, a plain sum did.
    weights: dict[str, float] = field(default_factory=_default_weights)
    #: A file ranking shorter than this many files (10) is completed with files no signal
    #: reached, so a small repository whose task shares no word with it still gets a ranking.
    rank_fill: int = 10


def carried_definitions(index: RepoIndex, key: str, other: int, cut: int) -> BM25Index | None:
    """The definition index ``key`` of the state a refresh replaced, spliced: the documents
    of the definitions whose file and rows are unchanged are kept, the others made from
    their files' texts (as ``docs`` below makes them); ``None`` when there is nothing to
    carry from (the index is then built whole)."""
    carry = index.carry
    old = carry.deftable() if carry is not None else None
    table = index.table
    if carry is None or old is None or not len(old) or not len(table):
        return None
    keep = table.carried_rows(old, carry.unchanged)

    def new_docs(rows: list[int]) -> list[str]:
        files = sorted({index.defs[r].file for r in rows})
        texts = index.texts(files)
        return table.row_docs(rows, files, texts, DefinitionBM25.MAX_LINES, other, cut)

    return carry.bm25(key, keep, new_docs, index.symbol_set)


class DefinitionBM25:
    """BM25 over definition texts (qualname + the first lines of the body, each line cut to
    ``cfg.files.def_line_max_chars``), built lazily. A definition's text is its first ``MAX_LINES``
    lines; in a repository mostly of other languages than Python, a non-Python definition's
    is its first ``cfg.files.def_bm25_lines_other`` and the file signal scores them with
    ``cfg.files.def_bm25_b_other`` (see there), while the definitions that become candidates are
    still searched with ``cfg.bm25.b`` (``candidate_bm25``): with the milder length penalty, long
    definitions displaced the short ones a fix changes (function Acc@10 Java .20 → .14)."""

    MAX_LINES = 60

    def __init__(self, index: RepoIndex, cfg: RetrievalConfig):
        python = sum(f.endswith((".py", ".pyi")) for f in index.files)
        mostly_python = 2 * python >= len(index.files)
        other = self.MAX_LINES if mostly_python else cfg.files.def_bm25_lines_other
        b = cfg.bm25.b if mostly_python else cfg.files.def_bm25_b_other
        texts: list[str] = []
        cut = cfg.files.def_line_max_chars

        def docs() -> list[str]:
            # Made natively from the table and the file texts (the rules:
            # ``ctxfast_core::def_docs``); a Python loop over the definitions cost 0.3 s of
            # CPU on Django (38k definitions).
            if not texts:
                table = index.table
                file_texts = index.texts(table.files())
                texts.extend(table.definition_docs(file_texts, self.MAX_LINES, other, cut))
            return texts

        def stored(b: float) -> BM25Index:
            key = f"def_bm25-{cfg.bm25.k1}-{b}-{self.MAX_LINES}"
            if other != self.MAX_LINES:
                key += f"-o{other}"
            # The stored index holds the cut texts: another cut is another index (the
            # default's key is unchanged, so stored states stay valid).
            if cut != FileSignals.def_line_max_chars:
                key += f"-c{cut}"

            def build() -> BM25Index:
                carried = carried_definitions(index, key, other, cut)
                if carried is not None:
                    return carried
                return BM25Index(docs(), cfg.bm25.k1, b, symbols=index.symbol_set)

            return index.stored_bm25(key, build)

        self.defs = index.defs
        self.bm25 = stored(b)
        self._candidates: Callable[[], BM25Index] = (
            (lambda: self.bm25) if b == cfg.bm25.b else functools.cache(lambda: stored(cfg.bm25.b))
        )
        #: Each file's definitions as positions in ``defs``, which come sorted by file.
        self.positions = index.defs_by_file.positions
        self._by_file = index.defs_by_file
        self._names: dict[str, tuple[str, ...]] = {}
        self._searched: dict[tuple[bool, tuple[str, ...]], tuple[int, list[tuple[int, float]]]]
        self._searched = {}

    def names(self, path: str) -> tuple[str, ...]:
        """The names of ``path``'s definitions, in the order of :attr:`positions`. Kept per
        file: the in-file ranking reads every definition of the best files on every query,
        and making a row of each cost more than scoring it."""
        names = self._names.get(path)
        if names is None:
            names = self._names[path] = tuple(d.name for d in self._by_file.get(path, ()))
        return names

    @property
    def candidate_bm25(self) -> BM25Index:
        """The index candidates are searched in (``cfg.bm25.b``), loaded on first use."""
        return self._candidates()

    def start_task(self) -> None:
        """Forget the searches of the previous task (see :meth:`search`)."""
        self._searched.clear()

    def search(
        self, terms: list[str], k: int, *, candidates: bool = False
    ) -> list[tuple[int, float]]:
        """The best ``k`` definitions with a positive score, in the file signal's index or,
        with ``candidates``, in the candidates' one.

        Each search is made once per task (:meth:`start_task`): a task without an error
        searches the same terms for the file signal and for candidates, and in a mostly
        Python repository the two indexes are one (a search of 40,000 definitions costs
        about 1 ms). A search for fewer definitions reads the first ones of a search for
        more: hits are ordered by score, then position, whatever their number."""
        if not self.defs:
            return []
        bm = self.candidate_bm25 if candidates else self.bm25
        key = (bm is self.bm25, tuple(terms))
        known = self._searched.get(key)
        if known is None or known[0] < k:
            known = self._searched[key] = (k, [(i, s) for i, s in bm.query(terms, k=k) if s > 0])
        return known[1][:k]


def rank_defs_in_files(
    def_index: DefinitionBM25,
    files: dict[str, float],
    tq: TaskQuery,
    n_files: int,
    k: int,
    next_files: int = 0,
    next_k: int = 0,
) -> list[tuple[int, float]]:
    """The best ``k`` definitions inside the ``n_files`` best-ranked files, then the best
    ``next_k`` of each file ranked after them up to ``next_files``.

    File ranking is the reliable signal (Acc@5 ≈ .80) while a global definition search lets
    a few big files crowd out the rest, so most gold functions never became candidates. Here
    each definition of a top file is scored by its own BM25 against the task (normalised by
    the best definition in those files), +1 when the task names it, plus its file's
    normalised score as a prior — three simply added [0, 1] signals, like the file level.
    The next files are scored the same way, each on its own (their best definitions would
    lose to the best file's); a file ranked second to fifth often holds the fix while none of
    its definitions is otherwise recalled."""
    ranked = best_n(files, max(n_files, next_files if next_k else 0))
    if not ranked or not def_index.defs:
        return []
    scores = def_index.candidate_bm25.scores(list(tq.task_terms))
    best_file = ranked[0][1] or 1.0
    out = _rank_defs(def_index, ranked[:n_files], tq, scores, best_file)[:k]
    for group in ranked[n_files:next_files] if next_k else ():
        out += _rank_defs(def_index, [group], tq, scores, best_file)[:next_k]
    return out


def _rank_defs(
    def_index: DefinitionBM25,
    top: list[tuple[str, float]],
    tq: TaskQuery,
    scores: Sequence[float],
    best_file: float,
) -> list[tuple[int, float]]:
    rows = [(def_index.positions(f), def_index.names(f), score / best_file) for f, score in top]
    best_def = max((scores[i] for span, _, _ in rows for i in span), default=0.0) or 1.0
    named = tq.named_set
    scored = []
    for span, names, prior in rows:
        for i, name in zip(span, names, strict=True):
            s = scores[i] / best_def + prior
            if name in named:
                s += 1.0
            scored.append((i, s))
    # Best first, ties by position: two sorts comparing in C (see ``best_first``).
    scored.sort(key=itemgetter(0))
    scored.sort(key=itemgetter(1), reverse=True)
    return scored


def file_scores(
    index: RepoIndex,
    def_index: DefinitionBM25 | None,
    tq: TaskQuery,
    cfg: RetrievalConfig,
    literal_index: LiteralIndex | None = None,
    quoted_literals: Sequence[LiteralMatch] = (),
) -> tuple[dict[str, float], dict[str, dict[str, float]]]:
    """Total score per file and the per-signal breakdown (for inspection and ablation).
    Each enabled signal of ``signals.FILE_SIGNALS`` is normalised to [0, 1] and added with
    its weight, in that order; then each lender of ``signals.LENDERS`` adds what the files
    lend one another, reading the totals so far. ``quoted_literals`` are the literals of
    ``literal_index`` the task quotes (:func:`ctxfast.retrieval.literals.quoted`, found once
    per call by the pipeline, which also makes candidates of them)."""
    ctx = SignalContext(index, def_index, tq, cfg, literal_index, quoted_literals)
    signals: dict[str, dict[str, float]] = {}
    weighted: list[tuple[float, dict[str, float]]] = []
    for signal in FILE_SIGNALS:
        raw = signal.score(ctx)
        if raw is not None:
            signals[signal.name] = scores = normalise(raw)
            weighted.append((signal.weight(cfg), scores))
    total: dict[str, float] = defaultdict(float)
    for w, scores in weighted:
        for f, s in scores.items():
            total[f] += w * s
    for lender in LENDERS:
        if lender.enabled(cfg):
            lent = lender.lend(index, total, cfg)
            signals[lender.name] = lent
            w = lender.weight(cfg)
            for f, s in lent.items():
                total[f] += w * s
    return dict(total), signals
