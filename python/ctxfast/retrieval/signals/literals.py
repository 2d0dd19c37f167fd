"""``literals`` and ``literal_names``: string literals of the code that the task quotes or
names (``retrieval.literals``).

``literals``: each fragment of a string literal that the task quotes verbatim (an error
message, a warning) adds its length in characters to the files holding it, shared among
them. Why: the file that prints a message is where it comes from, which neither vocabulary
nor names see when the message is prose. Measured on the 296 scorable SWE-bench Lite
instances: file Acc@1/5/10 .507/.784/.838 → .517/.787/.848, MRR .623 → .633 (weight 0.5:
Acc@5 .784). Switched off alone (stop 65, same run, tasks with every gold file first / in
the first five / a gold function in the first ten): issue corpus half A 60/95/56 → 64/95/57,
half B 67/106/64 → 64/105/63, Lite 88/118/85 → 86/117/82, the PHP/Ruby and JS/TS sets within
one task: a gain on one half of the corpus and a loss on the other, so it stays.

``literal_names``: each name the task gives (an environment-variable-like constant; with
``literal_names_flags`` a command-line flag, with ``literal_names_quoted`` a one-token quoted
name) adds 1, shared among the files holding it as a whole string literal. Why: argument
parsers of every language declare those names as whole literals (``Arg::new("glob")``,
``case "--glob":``), where a program reads its settings. Measured on the 200-task languages
dev set, environment-variable names alone: Rust file Acc@1/5/MRR .52/.80/.706 →
.52/.82/.722, Go, Java, TypeScript unchanged; with flags as well Go file Acc@1 fell .50 →
.46, with quoted names as well TypeScript Acc@5 .58 → .56, so both stay off.

A literal or name held by more than ``literal_max_files`` files is too common to point
anywhere and is ignored.

Settings (``FileSignals``): ``literals`` (with ``literal_min_chars``, ``literal_max_files``)
and ``literal_names`` (with ``literal_names_flags``, ``literal_names_quoted``,
``literal_name_max_chars``, ``literal_max_files``) switch them; ``weights["literals"]``,
``weights["literal_names"]``. The literal index and the quoted literals are the pipeline's
(built only with one of the two on).
"""

from __future__ import annotations

from ctxfast.retrieval.literals import file_scores, name_scores
from ctxfast.retrieval.signals.base import FileSignal, SignalContext


def _literals(ctx: SignalContext) -> dict[str, float] | None:
    if ctx.literal_index is None:
        return None
    return file_scores(ctx.quoted_literals)


def _literal_names(ctx: SignalContext) -> dict[str, float] | None:
    if ctx.literal_index is None:
        return None
    return name_scores(ctx.literal_index, ctx.tq.literal_names, ctx.cfg.files.literal_max_files)


LITERALS = FileSignal("literals", "literals", _literals)
LITERAL_NAMES = FileSignal("literal_names", "literal_names", _literal_names)
