"""The settings of the working defaults ``compose`` derives when a caller gives no planner,
impact analyser or localizer: :class:`DefaultsConfig`.

The derivations themselves live beside what they decide (:mod:`~ctxfast.construct.targets`:
the change targets; :mod:`~ctxfast.construct.impact`: what a change affects;
:mod:`~ctxfast.construct.context_lines`: the lines shown around a target;
:mod:`~ctxfast.construct.whole_files`: the files shown whole). Their settings stay together
here, each with the measurement behind its default, so a window is tuned in one place; this
module imports nothing else of the package, so every one of those modules can read it.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class DefaultsConfig:
    """Settings of the default derivations; beside each, what it does and why its default."""

    max_callers: int = 8  # CalledBy tails per change entity
    # Without impact edges from the caller, the definitions and config-file lines that bind
    # the same configuration keys as a change entity are shown as what the change may
    # affect (``ConfigConsumer``, :mod:`ctxfast.construct.impact`). Three caps bound that
    # search; none was tuned on windows, each only keeps a settings-heavy entity from
    # costing an unbounded search and window room:
    # - ``max_config_keys``: the keys followed per change entity, the first ones it reads
    #   (environment reads first). A function reading more than eight is a settings loader;
    #   its first eight show what configuration it depends on.
    # - ``max_config_consumers``: the bindings kept per change entity, in the order found,
    #   each a block of the window; eight, like ``max_callers``, shows who else reads a key
    #   without a key read all over the code filling the window. A cut is logged.
    # - ``max_config_files``: the code files searched for one key's bindings: the files
    #   defining it first, then the files importing those. A settings module of a large
    #   project is imported by hundreds of files; 64 bounds that read. The repository's
    #   config files (``.env``, ``*.toml``, ...) are not counted: they are always searched.
    max_config_keys: int = 8
    max_config_consumers: int = 8
    max_config_files: int = 64
    # A definition read from the code graph into the window (a change target retrieval did
    # not return, a caller, a config binding) keeps at most its first ``max_span_lines``
    # lines, so one generated function of thousands of lines costs a bounded read.
    # Construction shows a body longer than ``ConstructConfig.large_item_lines`` (200) as
    # its best 40-line window anyway; 400 leaves it twice that to choose the window from.
    max_span_lines: int = 400
    # A call made at a module's top level (at import time) has the module as its caller:
    # the call line is shown with ``module_context_lines`` lines above and below it, not
    # the whole module. Two on each side show the call among its neighbouring statements in
    # five lines; not tuned on windows.
    module_context_lines: int = 2
    # Without a localizer (05), the best-scored distinct retrieved definitions stand in for
    # the fault entities. Measured on the SWE-bench Lite sample (`ctxfast eval construct`),
    # 3 instead of 1 added 38% tokens per covered instance and covered no more instances, so
    # the frugal default stays 1; raise it when the top hit is often a near miss.
    localized_definitions: int = 1
    # Confidence-sized localization (replaces the fixed ``localized_definitions`` when on):
    # every retrieved definition scoring within ``localization_margin`` × the best score of
    # the best, at least ``localization_min`` and at most ``localization_max`` of them. The
    # extra targets are shown whole and labelled as candidates to change; coverage is the
    # same as with the fixed single target within one instance of 140 (.443 vs .450), since
    # the fill shows those bodies either way. The floor is three: the gold lines a window
    # shows are in the files of its change targets (91 of the 94 file groups showing gold
    # lines on the 140 exact-tree Lite windows at 8k), hardly ever in other files' blocks
    # (related symbols, named definitions, callers: a fifth of the tokens). Floors
    # 1 / 2 / 3 / 4 / 5 covered 90 / 90 / 91 / 91 / 90 at the same p50 (7,876-7,905
    # tokens); 3 had the fewest tokens per covered instance.
    confidence_localization: bool = True
    localization_margin: float = 0.25
    localization_min: int = 3
    localization_max: int = 5
    # A change target is shown with its context: the enclosing class's header for a
    # method, the module's imports for module-level code.
    target_context: bool = True
    # Which files are shown whole (:mod:`ctxfast.construct.whole_files`), one rule:
    # ``whole_file_prior[r]`` is the chance that the file retrieval ranks ``r + 1``-th
    # holds the fix (measured on the 300 issue-corpus tasks: .60, .25, .12, .12, .09, .06,
    # .07, .05 for the first eight). A product file at that rank is a change target shown
    # whole when its tokens are at most ``whole_file_share`` × target × (prior(rank) /
    # prior(1)) ** ``whole_file_prior_power``, the most likely file first, all of them
    # within ``whole_files_share`` of the target. Past the table a file is never whole.
    whole_file_prior: tuple[float, ...] = (0.60, 0.25, 0.12, 0.12, 0.09, 0.06, 0.06, 0.05)
    whole_file_share: float = 0.65
    whole_files_share: float = 0.8
    # The square root: taken linearly (a fourth-ranked file capped at a fifth of the best
    # one's share) the window lost the small second- to sixth-ranked files that held whole
    # fixes (3 fewer covered on one corpus half); see benches/README.md.
    whole_file_prior_power: float = 0.5
    # A change target whose file is not shown whole is shown as its whole definition (a
    # long function instead of a 40-line window, a class instead of a view of some
    # members) when it is at most ``whole_target_share`` × target × the same rank factor
    # (0: never).
    # .35 of the target: the corpus gained 10 tasks and lost 4 on both halves, Lite kept
    # its 103 of 140; at .65 the corpus gained 3 more and Lite lost 2.
    whole_target_share: float = 0.35
    # The room the fill leaves (every retrieved candidate shown, the target not reached)
    # goes to the best-ranked product files, each shown whole when it fits what is left,
    # after everything else: of the ``spare_files`` best-ranked files not already shown
    # whole, each at most ``whole_file_share`` of the target. On the 200 multi-language
    # dev tasks at 8k (a small Go or TypeScript repository's window ended at 1-2k tokens
    # with the file to change ranked third), every-hunk coverage .435 → .470 (seven
    # gained, none lost), gold files .750 → .760, tokens p50 7,756 → 7,772. With the
    # change targets' imports also shown: 1 file .455, 3 files .470, 5 files .470 (7,787).
    spare_files: int = 3
    # A skeleton (definition lines with real line numbers) of each file holding a change
    # target and of the ``outline_files`` best-ranked files (the best one mostly holds a
    # target already; the best file not holding one instead covered one fewer on the 140
    # exact-tree Lite instances at 8k, 100 → 99), so the model sees where else to look.
    # Skeletons cost room the fill would give to bodies: on the 140 exact-tree Lite
    # instances at the 8k target, every-hunk coverage .486 without them, .450 with the best
    # file's, .443 with the best three's; .471 with the best file's cut to 12 lines.
    file_outlines: bool = True
    outline_files: int = 1
    outline_max_lines: int = 12
    # An outline line whose definition header goes on (a parameter list over several lines)
    # shows the header's next lines too, up to this many lines in all: a fix that adds or
    # changes a parameter is made there. 1: the first line only. At 8, the corpus's 8k
    # windows covered two more tasks (both fixes in a parameter list) and lost none; Lite
    # kept its 103 of 140 (benches/README.md).
    outline_header_lines: int = 8
    # How many retrieved candidates the window draws on (retrieval's own slice keeps its
    # top_k of 20): on the 140 instances, 40 raised gold-file presence .736 → .779 and
    # coverage .471 → .471 at the same 8k target (20 → 40 with 30-line skeletons: .450 → .464).
    retrieval_candidates: int = 40
    # A window filled toward more than 8k tokens runs out of the top 40 (16k and 24k covered
    # the same .543): it draws on ``candidates_per_1k_tokens`` per thousand tokens of its
    # target when that is more than ``retrieval_candidates``.
    candidates_per_1k_tokens: int = 5
    # A module-level change target (a constant, a variable) is shown with the module's
    # import statements (``target_context``), at most this many lines of them: what the
    # value may be built from, without a module of hundreds of imports filling the window.
    max_import_lines: int = 30
    # A definition is shown with what is attached to it and the blank lines around it:
    # decorators, annotations and comments directly above it (at most ``attached_lines``),
    # then up to ``margin_lines`` blank lines on each side. The code graph's span starts at
    # the ``def`` line, so ``@property`` or ``@classmethod`` was missing from bodies, and an
    # insertion just before or after a definition had no anchor lines to place it. On the
    # first 107 exact-tree Lite instances at the 8k target every-hunk coverage went .449 → .495.
    margin_lines: int = 2
    attached_lines: int = 10
    # A class over construction's ``large_item_lines`` is shown as a view of its members
    # (:mod:`ctxfast.construct.class_view`) instead of its best 40-line window: its
    # constructor, its first ``class_view_header_lines`` and the ``class_view_methods``
    # members scoring best for the task, at most ``class_view_max_lines`` lines. On the 140
    # exact-tree Lite instances at the 8k target: 76 covered without, 78 with; 200 lines with
    # the first line of every other member cost more than they found (74); header before the
    # constructor 77, a 120-line cap 77.
    class_view: bool = True
    class_view_methods: int = 3
    class_view_header_lines: int = 10
    class_view_max_lines: int = 80
    # Of the ``max_callers``, at most this many tests, after every library caller.
    max_test_callers: int = 2
    max_caller_sites: int = 400  # call sites resolved to calling scopes per change entity


__all__ = [
    "DefaultsConfig",
]
