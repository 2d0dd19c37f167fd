"""Every switch, weight, cap and threshold of the retrieval pipeline, as data.

Each default is the starting value the pipeline was designed with, or the measured choice
documented beside it; the evaluation harness ablates a stage by switching it off here.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from typing import Any

from ctxfast.errors import ConfigError
from ctxfast.retrieval.query import QueryConfig
from ctxfast.text import LUCENE_ENGLISH_STOPWORDS

#: The orderings ``RetrievalConfig.ranker`` chooses between.
RANKERS = ("hand", "learned")


@dataclass(frozen=True)
class RetrievalConfig:
    # recall sources
    lexical: bool = True
    api_desc: bool = True
    callgraph: bool = True
    traceback: bool = True
    lexical_max_hits: int = 40
    api_desc_k: int = 20
    callgraph_k: int = 20
    # Handlers dispatched by class name (``retrieval/dispatch.py``): a capitalised identifier
    # the task names recalls ``<prefix><identifier>`` of every family of at least
    # ``dispatch_family_min`` such handlers in one scope (``_print_Poly`` for ``Poly``), and
    # each such candidate gains ``dispatch_bonus`` in the re-rank, as a named one does.
    dispatch: bool = True
    dispatch_family_min: int = 5
    dispatch_bonus: float = 0.5
    # Every BM25 query built from the task (files, definitions, API descriptions, the
    # re-rank) drops these words (``query.query_terms``); documents keep them. On the 296
    # scorable Lite instances: file Acc@5 .787 → .801, function Acc@10 .543 → .566, on both
    # halves of the set (NLTK's 179-word list measured the same within noise).
    query_stopwords: frozenset[str] = LUCENE_ENGLISH_STOPWORDS
    # re-rank
    k1: float = 1.5
    b: float = 0.75
    symbol_weight: float = 3.0
    top_k: int = 20
    # goal-scoped prune
    prune: bool = True
    tau: float = 0.6
    line_floor: float = 1e-3
    # token cap of the injected slice
    max_tokens: int = 4000
    encoding: str = "cl100k_base"
    # File-level localisation signals (measured on SWE-bench Lite; see retrieval/localize.py):
    # each is normalised to [0, 1] per query and the enabled ones are simply added.
    file_bm25: bool = True
    definition_match: bool = True
    path_mentions: bool = True
    def_bm25: bool = True
    path_words: bool = True
    # The task's goal sentence (an issue's title, a commit's subject: ``query.goal_hint``)
    # as a query of its own, when the task says more than it: whole-file BM25 and
    # definition-level BM25 of the goal's words become two more file signals
    # (``goal_bm25``, ``goal_def_bm25``, each [0, 1] and added like the others), and a
    # candidate gains ``goal_candidate_weight`` × its BM25 against the goal over the best
    # candidate's. The body of an issue is mostly evidence (code, output, versions) whose
    # words point at every file the example touches; the title names the behaviour that
    # is wrong. On the 296 scorable Lite instances: file Acc@1/5 .524/.814 → .622/.855,
    # function Acc@10 .570 → .638 (half A .534/.831/.592 → .628/.858/.677, half B
    # .514/.797/.548 → .615/.851/.600); the 200-task languages set .420/.715 → .420/.725.
    goal_signals: bool = True
    goal_candidate_weight: float = 0.5
    # The goal is a query of its own only when the task holds at least this many query terms
    # beyond the goal sentence's and its request verbs (``task.goal_rest_terms``); 0 keeps
    # the older rule (the goal has fewer terms than the task, the stripped verb counting).
    goal_rest_min: int = 0
    # Two adjacent prose words also match as one path component (``man page`` →
    # ``builders/manpage.py``, ``type hints`` → ``typehints.py``). On the 296 scorable Lite
    # instances: file Acc@1/10 .517/.858 → .520/.861, function Acc@10 .562 → .566, three
    # instances ranked better and none worse (same run of the other settings).
    path_compounds: bool = True
    # Message evidence (``retrieval.literals``): string-literal fragments of the code that
    # the task quotes verbatim, as a file signal. Fragments held by more than
    # ``literal_max_files`` files are too common to point anywhere and are ignored. On the
    # 296 scorable Lite instances: file Acc@1/5/10 .507/.784/.838 → .517/.787/.848, MRR
    # .623 → .633, function Acc@10 unchanged (.543). Weight 0.5 measured Acc@5 .784; a bonus
    # for candidates holding the literal (0.5 / 1.0) lowered function Acc@10 (.547 / .543
    # with a looser prose rule), so matched literals only inform the file ranking.
    literals: bool = True
    literal_min_chars: int = 12
    literal_max_files: int = 5
    # With ``literals`` on, the definition holding a literal the task quotes
    # (``literals.literal_source``) is a candidate and gains ``literal_bonus`` in the
    # re-rank: the message pins the function (the bonus above, tried without recall of its
    # own, had nothing to lift). Same code, one run each, on the 140 exact Lite trees the
    # 8k window covers every hunk in 98 instead of 96 (bonus 0 / 0.25: 96 / 97; two sphinx
    # warnings whose printing function was not a candidate), no instance lost; on the 296
    # Lite instances function Acc@10 .649 → .645 (bonus 0 / 1: .649 / .642): one issue
    # quotes the message its parser raises while the fix is in the tokenizer before it;
    # file ranks unchanged.
    literal_defs: bool = True
    literal_bonus: float = 0.5
    # Names the task gives — command-line flags, environment-variable-like constants and,
    # with ``literal_names_quoted``, one-token quoted names — that a file holds as a whole
    # string literal of at most ``literal_name_max_chars`` characters (where argument parsers
    # declare flags: ``Arg::new("glob")``, ``case "--glob":``), as a file signal; names held
    # by more than ``literal_max_files`` files are ignored. On the 200-task languages dev set
    # (one run, file Acc@1/Acc@5/MRR), environment-variable names alone: Rust .52/.80/.706 →
    # .52/.82/.722, Go, Java, TypeScript unchanged. Flags as well: Rust .54/.82/.733 but Go
    # .50 → .46 Acc@1 (fzf's "fix X with --flag" is fixed in the behaviour, not in the
    # options file that declares the flag); quoted names as well: Rust Acc@1 .48, TypeScript
    # Acc@5 .58 → .56. So both stay switches, off. On SWE-bench Lite only this signal of
    # the three Rust changes can act, on the 30 scorable instances whose task holds such a
    # name: file Acc@1/5/10 .433/.800/.900 both, MRR .593 → .598, function Acc@10 14/30 both.
    literal_names: bool = True
    literal_names_flags: bool = False
    literal_names_quoted: bool = False
    literal_name_max_chars: int = 40
    # An environment listing pasted into the task (``pip list``, ``show_versions()``: runs of
    # at least ``listing_min_lines`` lines ``name version`` or ``name: None``) is not what
    # the task is about, and its package names match every file that imports them; it is
    # left out of every query (0 keeps it). On the 296 scorable Lite instances: file
    # Acc@1/5/10 .520/.807/.861 → .524/.814/.865, MRR .643 → .646, function Acc@10 the same
    # (.566); 20 tasks hold such a run, 4 ranked better, 1 worse.
    listing_min_lines: int = 3
    # HTML comments (``<!-- ... -->``) are left out of every query: in an issue they hold the
    # tracker's template ("Thanks for submitting an issue! ... a minimal example"), not the
    # reporter's words. On the 296 scorable Lite instances (8 tasks hold one): file Acc@3
    # .736 → .740, function Acc@5/10 .434/.566 → .438/.570, 2 ranked better, none worse.
    drop_html_comments: bool = True
    signal_weights: dict[str, float] = field(
        default_factory=lambda: {
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
    )
    def_bm25_top: int = 3
    # Test files among the best ``tested_modules_files`` lend ``tested_modules_weight`` × their
    # score to the modules their names point at (``localize.lend_to_tested_modules``).
    tested_modules: bool = True
    tested_modules_weight: float = 0.25
    tested_modules_files: int = 10
    # Definition-level BM25 also feeds candidates (beside the lexical, api-desc and call-graph
    # sources): the best ``def_bm25_k`` definitions, re-ranked with their file's evidence.
    def_bm25_k: int = 50
    # Each line of a definition's BM25 text is cut to this many characters (words past the
    # cut do not count for the definition): a definition copies its first lines, and in a
    # minified one-line file every definition would copy the whole file (a 100 KB line cost
    # 2.7 GB). Normal code lines are far shorter.
    def_line_max_chars: int = 500
    # Lines of a definition that its BM25 text covers in a repository mostly of other
    # languages than Python, for its non-Python definitions (Python's: 60, as ever). A Rust
    # binary's `main.rs` or a clap `build_app()` is one function of hundreds of lines whose
    # first 60 hold little of what a task names. On the 200-task languages dev set, 60 → 400:
    # file Acc@1/Acc@5 Go .50/.84 both, Java .34/.56 → .34/.58, Rust .44/.72 → .44/.76,
    # TypeScript .30/.60 → .32/.60 (indexes and tasks of one run; Python repositories keep
    # the 60-line texts byte for byte).
    def_bm25_lines_other: int = 400
    # BM25's length normalisation ``b`` of that index in such a repository, for the file
    # signal (candidates are still searched with ``b``): those long definitions (a `main`, a
    # clap `build_app`, a big `match`) were out-scored by any short helper sharing one word
    # with the task. Same run, 0.75 → 0.3, file Acc@1/Acc@5/MRR: Rust .46/.80/.671 →
    # .52/.82/.722, Java .34/.58 → .34/.60, Go .50/.86 both, TypeScript .32/.60 → .32/.58;
    # function Acc@10 Go .42 → .40, Java .18 → .20, Rust .52 → .54, TypeScript .28 both.
    # Swept without the other changes of that commit, Rust Acc@1 at b = 0 / .15 / .25 / .3 /
    # .4 / .5 / .6: .40 / .48 / .50 / .50 / .46 / .46 / .46, Go .48 then .50 from .15 up.
    def_bm25_b_other: float = 0.3
    # Definitions ranked inside the best ``infile_files`` files (own BM25 + named + file
    # prior); the best ``infile_k`` of them become candidates. Over the best five files it
    # displaced other candidates from the top 20 (function Acc@10 −1.5 points on a
    # 71-instance sample); over the best file alone, with the goal signals and the test
    # penalty of 2, on the 296 scorable Lite instances function Acc@10 .642 → .649 (half A
    # .677 both, half B .607 → .622) and on the languages set .35 → .38 (each language up).
    infile_defs: bool = True
    infile_files: int = 1
    infile_k: int = 30
    # Files ranked after those (up to ``infile_next_files``) lend their ``infile_next_k``
    # best definitions, scored the same way: of the Lite instances whose function was missed,
    # 18 had the gold file ranked second to fifth and none of its definitions recalled.
    # Same code, one run each, k = 0 / 2 / 3 / 5 over files 2-5: 8k window 98 / - / 98 / 99
    # of 140 (pytest 6116 gained, none lost); on the 296 Lite instances function Acc@5
    # .502 / .502 / .502 / .506 and Acc@10 .645 / .645 / .642 / .645, file ranks unchanged;
    # languages set (k 0 → 5) function Acc@5 / Acc@10 .275 / .375 → .27 / .38.
    infile_next_files: int = 5
    infile_next_k: int = 5
    # The n-th best candidate of a file (n from 0, by its hand-set score) loses
    # ``same_file_decay`` × ln(1 + n) in the re-rank, so the best few definitions of the second
    # and third files are not buried under the tenth of the first. 0 switches it off.
    same_file_decay: float = 0.0
    # A fix lives in library code, not in the tests an issue quotes: candidates in test files
    # lose ``test_penalty`` in the re-rank (and test files as much in the file ranking).
    # 1 → 2 with the goal signals on, same run: Lite file Acc@1/5 .622/.855 → .632/.861,
    # function Acc@10 .638 → .642, on both halves; languages set .420/.725 → .435/.735.
    # 2 → 4 together with ``example_penalty`` 1, same run: Lite .632/.865 → .639/.875 (half A
    # .642/.865 → .655/.872, half B .622/.865 → .622/.878), function Acc@10 .649 on both;
    # languages .435/.750 → .440/.755, no language lower (4 and 10 rank alike).
    demote_tests: bool = True
    test_penalty: float = 4.0
    # Files under documentation, example, playground, benchmark or fixture directories
    # (``text.EXAMPLE_DIR_NAMES``) are code a fix rarely touches: they lose
    # ``example_penalty`` in both rankings, like tests. 0: off. Alone, same run: Lite file
    # Acc@5 .865 → .868, TypeScript .60 → .62, Go Acc@1 .50 → .52, nothing lower.
    example_penalty: float = 1.0
    # Generated and vendored files (protobuf and gRPC stubs, bundles, a ``vendor/`` copy:
    # ``text.file_role``) are rewritten by a tool or upstream, not by a fix: they lose
    # ``generated_penalty`` in both rankings, like examples. None of the 1,124 gold files of
    # the issue corpus, SWE-bench Lite and the PHP/Ruby set is one, while a ``.pb.go`` file's
    # many short message types ranked in the top ten of 15 corpus tasks. 0: off.
    generated_penalty: float = 1.0
    # A file that holds at least ``bundle_min_files`` other files of the repository nearly
    # whole (an amalgamated single header such as ``single_include/catch2/catch.hpp``:
    # ``RepoIndex.bundle_files``) is regenerated from the files it copies, where a fix is
    # made; it holds every word of them, so it loses ``bundle_penalty`` in both rankings,
    # as much as a test. 0: off.
    bundle_min_files: int = 3
    bundle_penalty: float = 4.0
    # A fix lives in the repository's own language: files in a language with fewer than
    # ``minor_language_share`` times the files of the main language (a Rust repository's
    # jQuery test data, Django's admin JavaScript) lose ``minor_language_penalty`` in both
    # rankings.
    demote_minor_languages: bool = True
    minor_language_share: float = 0.25
    minor_language_penalty: float = 1.0
    # Traceback anchoring: a candidate holding a frame gains ``traceback_bonus``, scaled
    # by 1 / (1 + depth) from the innermost frame when ``traceback_decay`` is on. Flat, every
    # frame of a 14-frame IPython trace outranked the function the error names (measured on
    # the 296 scorable Lite instances: function Acc@10 .479 → .494 with the decay).
    traceback_bonus: float = 2.0
    traceback_decay: bool = True
    # A class candidate is scored on its own lines (header, docstring, attributes), not on
    # its methods' bodies, which are candidates of their own (function Acc@10 .494 → .509).
    class_own_lines: bool = True
    # Candidates called by name from a function the task names gain this
    # (``pipeline._named_callees``; on the 296 scorable Lite instances function
    # Acc@10 .532 → .543, seed-1 sample .492 → .508; 0.15 and 0.5 measured .540 and .536).
    named_callee_bonus: float = 0.3
    # And the candidates those lifted callees call by name gain this (one hop further, not
    # more): ``parse_mathematica`` calls ``MathematicaParser.parse``, which calls the
    # tokenizer the fix is in. On the 296 scorable Lite instances, same run: function
    # Acc@10 .653 → .664 (+3, none lost); 0.1 / 0.2 / 0.4 / 0.5 measured .657 / .660 / .664
    # / .660. 0 switches it off.
    second_callee_bonus: float = 0.3
    # The best file's module-level code (imports, constants) as one candidate at rank
    # ``module_header_rank``: fixes often add an import or touch a module constant beside
    # the function they change, and a function candidate never shows those lines. Off, the
    # 8k window on the 140 exact-tree Lite instances covers 4 fewer. At rank 3 its 80 lines
    # (sympy latex.py's greek-letter table) went into the window before the best class's
    # view once the fill had room; ranks 3 / 4 / 5 / 8 covered 99 / 99 / 100 / 99, the
    # retrieval figures the same at each.
    module_header: bool = True
    module_header_rank: int = 5
    module_header_lines: int = 80
    # When the first ``second_file_rank`` candidates all come from one file, the best
    # candidate of another file takes that rank: the best file is the right one for about
    # two tasks in three, and a slice whose top ten shows one file bets everything on it.
    # Same run, function Acc@10 .675 → .683 (+django 12747, sympy 13971, none lost; both
    # halves up); at rank 5 the same at ten but Acc@5 .509 → .479. Windows: the same 102.
    # 0 switches it off.
    second_file_rank: int = 10
    # A file ranking shorter than ``rank_fill`` files is completed with the files no signal
    # reached (``pipeline._fill``). Same run, 0 → 10: Rust .50/.80 → .52/.82 (a one-file
    # repository whose task shares no word with it), Go Acc@5 .84 → .86, Java and TypeScript
    # unchanged.
    rank_fill: int = 10
    # A file another file textually includes (Rust ``include!("src/app.rs")``, a build
    # script generating shell completions from the CLI definition) is part of that file's
    # code: it gains ``include_lending`` × the includer's total
    # (``localize.lend_to_included``); 0 switches it off. Same run: Rust Acc@5 .82 → .84,
    # nothing else moves (1.0 the same); SWE-bench Lite unchanged.
    include_lending: float = 0.5
    # Platform-specific code (``localize.platform_scores``): when the task's goal sentence
    # names an operating system (``on Windows``, ``FreeBSD``), the files whose code is
    # conditional on it (``#[cfg(windows)]``, ``//go:build windows``, ``sys.platform ==
    # "win32"``) as a file signal, by how many gate lines name it. Same run: Rust Acc@5 .82
    # → .84, nothing else moves; no Lite task names a platform in its goal sentence (with
    # the whole task, 50 do and two lost file Acc@1).
    platform_code: bool = True
    # How files and candidates are ordered: "hand" adds the normalised signals above with
    # their fixed weights and bonuses; "learned" scores the feature rows of
    # ``retrieval.features`` with the linear model of ``retrieval.ranker``, read from
    # ``ranker_model`` or, when empty, the model shipped in the package: the hand-set file
    # stage and a definition stage trained by ``ctxfast eval train-ranker`` on the 300 real
    # issues of the multi-language dev corpus. Cross-validated by repository half it ranks
    # definitions a little better (function Acc@10 +1 and +3 points on the halves, one task
    # less on the Lite exact trees) and leaves the 8k window where it was, so "hand" stays
    # the default (benches/README.md, "Localization from real issues").
    ranker: str = "hand"
    ranker_model: str = ""
    # Keep the feature rows in ``RetrievalResult.features`` (training-data export).
    keep_features: bool = False
    query: QueryConfig = field(default_factory=QueryConfig)

    def __post_init__(self) -> None:
        # A JSON config gives a list; membership tests want a set.
        object.__setattr__(self, "query_stopwords", frozenset(self.query_stopwords))
        if self.ranker not in RANKERS:
            raise ConfigError(f"ranker must be one of {', '.join(RANKERS)}, not {self.ranker!r}")

    @classmethod
    def from_mapping(cls, data: dict[str, Any] | None) -> RetrievalConfig:
        """A config with the given fields overridden; unknown names are a ``ConfigError``."""
        if not data:
            return cls()
        names = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - names)
        if unknown:
            raise ConfigError(f"unknown retrieval config keys: {', '.join(unknown)}")
        return replace(cls(), **data)

    def switches(self) -> list[str]:
        """The on/off stages the evaluation harness can ablate (feature export is no stage)."""
        return [
            f.name for f in fields(self) if f.type in ("bool", bool) and f.name != "keep_features"
        ]
