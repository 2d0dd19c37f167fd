"""The settings of the re-rank (``Retriever._rerank`` in :mod:`ctxfast.retrieval.pipeline`):
the bonuses a candidate definition gains for the evidence behind it, and the demotions a
file and its definitions take for being code a fix rarely touches.

The re-rank scores each candidate by BM25 of its text against the task, adds its file's
share of the file ranking and these bonuses, and subtracts the demotions; the file ranking
subtracts the same demotions.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar


@dataclass(frozen=True)
class RerankSettings:
    """What a candidate gains in the re-rank (``RetrievalConfig.rerank``). A bonus is in the
    unit of the candidate's normalised BM25 score (1 is the best candidate's); 0 switches a
    bonus off."""

    FLAT_NAMES: ClassVar[Mapping[str, str]] = {}

    #: A candidate gains this (0.5) × its BM25 against the task's goal sentence over the
    #: best candidate's: the title names the behaviour that is wrong.
    goal_candidate_weight: float = 0.5
    #: A handler the dispatch source recalled (``_print_Poly`` for ``Poly``) gains this
    #: (0.5), as a definition the task names does.
    dispatch_bonus: float = 0.5
    #: The definition holding a string the task quotes gains this (0.5).
    literal_bonus: float = 0.5
    #: A definition holding a traceback frame gains this (2): a frame is the strongest
    #: evidence of where a failure happens.
    traceback_bonus: float = 2.0
    #: With it on, the frame bonus shrinks with the frame's distance from the innermost
    #: frame (1 / (1 + depth)): in a long trace the outer frames are the caller's plumbing.
    traceback_decay: bool = True
    #: Definitions called by name from a function the task names gain this (0.3): the fix
    #: is often one call below what the task mentions.
    named_callee_bonus: float = 0.3
    #: And the definitions those call by name gain this (0.3), one hop further and no more.
    second_callee_bonus: float = 0.3
    #: The n-th best candidate of a file (n from 0) loses this × ln(1 + n), so one file's
    #: tenth definition does not bury another file's best. 0 (off): it was not needed.
    same_file_decay: float = 0.0
    #: A class is scored on its own lines (header, docstring, attributes), not on its
    #: methods' bodies, which are candidates of their own: otherwise a big class outranks
    #: the one method the task is about.
    class_own_lines: bool = True


@dataclass(frozen=True)
class Demotions:
    """What files a fix rarely touches lose in both rankings (``RetrievalConfig.demotions``),
    each in the unit of a normalised signal; 0 switches a penalty off."""

    FLAT_NAMES: ClassVar[Mapping[str, str]] = {}

    #: Test files and definitions lose ``test_penalty``: a fix lives in library code, not
    #: in the tests an issue quotes.
    demote_tests: bool = True
    #: What a test file or test definition loses (4): as much as the strongest signals
    #: together, so a test ranks first only when nothing else is found.
    test_penalty: float = 4.0
    #: Documentation, example, benchmark and fixture files lose this (1).
    example_penalty: float = 1.0
    #: Generated and vendored files (protobuf stubs, a ``vendor/`` copy) lose this (1):
    #: a tool or upstream rewrites them, not a fix.
    generated_penalty: float = 1.0
    #: A file that holds at least this many other files of the repository nearly whole (3;
    #: an amalgamated single header) counts as a bundle.
    bundle_min_files: int = 3
    #: A bundle loses this (4, as a test): it is regenerated from the files it copies, which
    #: is where a fix is made, yet holds every word of them. 0: off.
    bundle_penalty: float = 4.0
    #: Files in a language the repository hardly uses lose ``minor_language_penalty``: a fix
    #: lives in the repository's own language.
    demote_minor_languages: bool = True
    #: A language is minor with fewer than this share (0.25) of the main language's files.
    minor_language_share: float = 0.25
    #: What a minor-language file loses (1).
    minor_language_penalty: float = 1.0


__all__ = ["Demotions", "RerankSettings"]
