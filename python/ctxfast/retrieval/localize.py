"""File-level localisation: which files an issue is about, by simply added evidence.

Measured on SWE-bench Lite: whole-file BM25 alone
reaches Acc@5 ≈ .69; definition matching (code identifiers of the task that a file *defines*,
weighted by rarity), path mentions, definition-level BM25 (top-3 definitions summed), query
words in the path and traceback anchoring each add recall, and simply adding them (each
normalised to [0, 1] per query) reached ≈ .81 — tuning weights jointly did not generalise, so
the weights stay 1.0. Added since, on the same terms: message literals the task quotes
(``retrieval.literals``), the flags and names it gives that a file declares as string
literals, and test files lending to the modules they test.
"""

from __future__ import annotations

import functools
import re
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar

from ctxfast.bm25 import BM25Index
from ctxfast.retrieval.literals import LiteralIndex, LiteralMatch
from ctxfast.retrieval.literals import file_scores as literal_file_scores
from ctxfast.retrieval.literals import name_scores as literal_name_scores
from ctxfast.retrieval.query import innermost_depths
from ctxfast.retrieval.repoindex import RepoIndex
from ctxfast.retrieval.task import TaskQuery
from ctxfast.text import is_test_path

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
    normalised to [0, 1] per task and added with its weight, and what each one reads."""

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


def _normalise(scores: dict[str, float]) -> dict[str, float]:
    top = max(scores.values(), default=0.0)
    return {f: s / top for f, s in scores.items() if s > 0} if top > 0 else {}


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
            if not texts:
                for d in index.defs:
                    n = self.MAX_LINES if d.file.endswith((".py", ".pyi")) else other
                    body = index.lines(d.file)[d.line - 1 : min(d.end_line, d.line + n)]
                    text = "\n".join(line[:cut] for line in body)
                    texts.append(d.qualname.replace(".", " ") + "\n" + text)
            return texts or [""]

        def stored(b: float) -> BM25Index:
            key = f"def_bm25-{cfg.bm25.k1}-{b}-{self.MAX_LINES}"
            if other != self.MAX_LINES:
                key += f"-o{other}"
            # The stored index holds the cut texts: another cut is another index (the
            # default's key is unchanged, so stored states stay valid).
            if cut != FileSignals.def_line_max_chars:
                key += f"-c{cut}"
            return index.stored_bm25(
                key, lambda: BM25Index(docs(), cfg.bm25.k1, b, symbols=index.symbol_set)
            )

        self.defs = index.defs
        self.bm25 = stored(b)
        self._candidates: Callable[[], BM25Index] = (
            (lambda: self.bm25) if b == cfg.bm25.b else functools.cache(lambda: stored(cfg.bm25.b))
        )
        #: Each file's definitions as positions in ``defs``, which come sorted by file.
        self.positions = index.defs_by_file.positions

    @property
    def candidate_bm25(self) -> BM25Index:
        """The index candidates are searched in (``cfg.bm25.b``), loaded on first use."""
        return self._candidates()

    def search(
        self, terms: list[str], k: int, *, candidates: bool = False
    ) -> list[tuple[int, float]]:
        """The best ``k`` definitions with a positive score, in the file signal's index or,
        with ``candidates``, in the candidates' one."""
        if not self.defs:
            return []
        bm = self.candidate_bm25 if candidates else self.bm25
        return [(i, s) for i, s in bm.query(terms, k=k) if s > 0]


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
    ranked = sorted(files.items(), key=lambda kv: (-kv[1], kv[0]))
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
    idx = [i for f, _ in top for i in def_index.positions(f)]
    best_def = max((scores[i] for i in idx), default=0.0) or 1.0
    named = tq.named_set
    prior = dict(top)
    scored = []
    for i in idx:
        d = def_index.defs[i]
        s = scores[i] / best_def + prior[d.file] / best_file
        if d.name in named:
            s += 1.0
        scored.append((i, s))
    scored.sort(key=lambda t: (-t[1], t[0]))
    return scored


def _best_definitions(def_index: DefinitionBM25, terms: list[str], top: int) -> dict[str, float]:
    """Per file, the summed scores of its ``top`` best definitions among the 100 best
    for ``terms``: a file scores by what its best few definitions share with the query, not
    by how many definitions it has."""
    per_file: dict[str, list[float]] = defaultdict(list)
    for i, s in def_index.search(terms, k=100):
        per_file[def_index.defs[i].file].append(s)
    return {f: sum(sorted(v, reverse=True)[:top]) for f, v in per_file.items()}


def _definition_match(index: RepoIndex, tq: TaskQuery) -> dict[str, float]:
    """Files defining an identifier the task's text names, each identifier's point shared
    among the files defining it (a name defined in one file points at that file alone)."""
    dm: dict[str, float] = defaultdict(float)
    for ident in tq.text_identifiers:
        defs = index.defs_by_name.get(ident, [])
        files = {d.file for d in defs}
        for f in files:
            dm[f] += 1.0 / len(files)
    return dm


def _path_mentions(index: RepoIndex, tq: TaskQuery) -> dict[str, float]:
    """Files whose path the task prints, one point per mention that resolves to a file."""
    pm: dict[str, float] = defaultdict(float)
    for printed in tq.query.file_paths:
        path = index.resolve_path(printed)
        if path is not None:
            pm[path] += 1.0
    return pm


def _path_words(index: RepoIndex, tq: TaskQuery) -> dict[str, float]:
    """Files whose path components are words of the task.

    A plain count of query words among the path's components. (Weighting each word by its
    rarity across paths measured no better on the benchmark sample: kept simple.)"""
    words = tq.path_words
    pw: dict[str, float] = {}
    for f, parts in index.path_parts():
        n = len(words & parts)
        if n:
            pw[f] = float(n)
    return pw


def _traceback(index: RepoIndex, tq: TaskQuery) -> dict[str, float]:
    """Files of the task's traceback frames, the innermost frame (nearest the error) weighing
    most."""
    query = tq.query
    tb: dict[str, float] = defaultdict(float)
    for frame, depth in zip(query.frames, innermost_depths(query.frames), strict=True):
        path = index.resolve_frame(frame.path, frame.func)
        if path is not None:
            tb[path] += 1.0 / (1 + depth)
    return tb


def _lend(
    index: RepoIndex,
    total: dict[str, float],
    signals: dict[str, dict[str, float]],
    cfg: RetrievalConfig,
) -> None:
    """Add to ``total`` (and list among ``signals``) the scores the scored files lend: tests
    to the modules they test, then files to the files they include. Each reads the totals
    so far, so lending runs after every direct signal is summed."""
    if cfg.files.tested_modules:
        pointed = lend_to_tested_modules(index, total, cfg.files.tested_modules_files)
        signals["tested_modules"] = pointed
        for f, s in pointed.items():
            total[f] += cfg.files.tested_modules_weight * s
    if cfg.files.include_lending > 0:
        lent = lend_to_included(index, total)
        signals["included"] = lent
        for f, s in lent.items():
            total[f] += cfg.files.include_lending * s


def file_scores(
    index: RepoIndex,
    def_index: DefinitionBM25 | None,
    tq: TaskQuery,
    cfg: RetrievalConfig,
    literal_index: LiteralIndex | None = None,
    quoted_literals: Sequence[LiteralMatch] = (),
) -> tuple[dict[str, float], dict[str, dict[str, float]]]:
    """Total score per file and the per-signal breakdown (for inspection and ablation).
    ``quoted_literals`` are the literals of ``literal_index`` the task quotes
    (:func:`ctxfast.retrieval.literals.quoted`, found once per call by the pipeline, which
    also makes candidates of them)."""
    terms = list(tq.terms)
    signals: dict[str, dict[str, float]] = {}
    if cfg.files.file_bm25:
        hits = index.file_bm25().query(terms, k=min(len(index.files), 200)) if index.files else []
        signals["file_bm25"] = _normalise({index.files[i]: s for i, s in hits})
    if cfg.files.definition_match:
        signals["definition_match"] = _normalise(_definition_match(index, tq))
    if cfg.files.path_mentions:
        signals["path_mentions"] = _normalise(_path_mentions(index, tq))
    if cfg.files.def_bm25 and def_index is not None:
        signals["def_bm25"] = _normalise(
            _best_definitions(def_index, terms, cfg.files.def_bm25_top)
        )
    if cfg.files.goal_signals and tq.goal_terms:
        goal = list(tq.goal_terms)
        hits = index.file_bm25().query(goal, k=min(len(index.files), 200)) if index.files else []
        signals["goal_bm25"] = _normalise({index.files[i]: s for i, s in hits})
        if def_index is not None:
            signals["goal_def_bm25"] = _normalise(
                _best_definitions(def_index, goal, cfg.files.def_bm25_top)
            )
    if cfg.files.path_words:
        signals["path_words"] = _normalise(_path_words(index, tq))
    if cfg.sources.traceback:
        signals["traceback"] = _normalise(_traceback(index, tq))
    if cfg.files.literals and literal_index is not None:
        signals["literals"] = _normalise(literal_file_scores(quoted_literals))
    if cfg.files.literal_names and literal_index is not None:
        signals["literal_names"] = _normalise(
            literal_name_scores(literal_index, tq.literal_names, cfg.files.literal_max_files)
        )
    if cfg.files.platform_code:
        signals["platform_code"] = _normalise(platform_scores(index, tq.query.goal_hint))
    total: dict[str, float] = defaultdict(float)
    for name, scores in signals.items():
        w = cfg.files.weights.get(name, 1.0)
        for f, s in scores.items():
            total[f] += w * s
    _lend(index, total, signals, cfg)
    return dict(total), signals


#: An operating system named in prose (``on Windows``, ``macOS``, ``FreeBSD``): the
#: platform keys of ``RepoIndex.platform_gates``.
_TASK_PLATFORMS = {
    "windows": re.compile(r"\b(?:windows|win32|win64)\b", re.IGNORECASE),
    "macos": re.compile(r"\b(?:macos|mac os|os x|osx|darwin)\b", re.IGNORECASE),
    "linux": re.compile(r"\blinux\b", re.IGNORECASE),
    "freebsd": re.compile(r"\bfreebsd\b", re.IGNORECASE),
    "openbsd": re.compile(r"\bopenbsd\b", re.IGNORECASE),
    "netbsd": re.compile(r"\bnetbsd\b", re.IGNORECASE),
    "android": re.compile(r"\bandroid\b", re.IGNORECASE),
    "wasm": re.compile(r"\b(?:wasm|wasm32|wasi|webassembly)\b", re.IGNORECASE),
}


def platform_scores(index: RepoIndex, goal: str) -> dict[str, float]:
    """Per file, how many of its gate lines name a platform the task's goal sentence
    ``goal`` names (see ``RepoIndex.platform_gates``). A bug "on Windows" lives in code that
    runs only there, which shares the word with the task once per gate whatever the rest of
    the file says. Only the goal sentence counts: an issue's body names the reporter's
    platform in its environment report (``Platform: macOS-12.4-arm64``) or in an example
    (``skipif("sys.platform == 'win32'")``) whatever the bug is about; with the whole task,
    on SWE-bench Lite 50 of 300 tasks name one and two lost file Acc@1."""
    named = [plat for plat, rx in _TASK_PLATFORMS.items() if rx.search(goal)]
    if not named:
        return {}
    gates = index.platform_gates()
    out: dict[str, float] = defaultdict(float)
    for plat in named:
        for f, n in gates.get(plat, {}).items():
            out[f] += n
    return dict(out)


def lend_to_included(index: RepoIndex, total: dict[str, float]) -> dict[str, float]:
    """Evidence passed from a file to the files it textually includes (Rust
    ``include!("src/app.rs")``): the included code is part of the including file, so words
    the task shares with it (a build script generating shell completions from the CLI
    definition it includes) point at the included file too. A file included by several keeps
    the best score."""
    out: dict[str, float] = {}
    for f, targets in index.included_files().items():
        score = total.get(f, 0.0)
        if score <= 0:
            continue
        for target in targets:
            out[target] = max(out.get(target, 0.0), score)
    return out


_TEST_AFFIX = re.compile(r"^tests?_|_tests?$")


def lend_to_tested_modules(
    index: RepoIndex, total: dict[str, float], n_files: int
) -> dict[str, float]:
    """Evidence passed from test files to the modules they test.

    An issue often quotes a failing test, or shares its vocabulary, so a test file can outrank
    the code it exercises — and tests are demoted in the ranking. By the naming convention
    ``test_<module>.py`` / ``<module>_test.py`` (also ``test_<package>_<module>.py``), each
    test file among the ``n_files`` best-scored files lends its score to the non-test files it
    names; a file named by several tests keeps the best. Measured on the 296 scorable SWE-bench
    Lite instances with weight 0.25: file Acc@5 .764 → .784, Acc@10 .824 → .838, a gain on
    both halves of the set."""
    tails = index.module_tails()
    best = sorted(total.items(), key=lambda kv: (-kv[1], kv[0]))[:n_files]
    out: dict[str, float] = {}
    for path, score in best:
        if not is_test_path(path) or score <= 0:
            continue
        name = path.rsplit("/", 1)[-1].rsplit(".", 1)[0]
        stem = _TEST_AFFIX.sub("", name)
        if not stem or stem == name:  # not named for a module (`tests.py`, `conftest.py`)
            continue
        parts = stem.split("_")
        keys = {stem} | {
            "_".join(parts[:i]) + "/" + "_".join(parts[i:]) for i in range(1, len(parts))
        }
        for key in keys:
            for f in tails.get(key, ()):
                out[f] = max(out.get(f, 0.0), score)
    return out
