"""``tested_modules`` and ``included``: scores files lend one another, read from the sum of
the direct signals (so they run after it, in this order: the included files read the totals
the tested modules were lent).

``tested_modules``: test files among the ``tested_modules_files`` (10) best lend their score
to the modules their names point at (``test_parser.py`` → ``parser.py``), a module named by
several tests keeping the best. Why: an issue often quotes a failing test, or shares its
vocabulary, so a test file can outrank the code it exercises, and tests are demoted in the
ranking. Measured on the 296 scorable SWE-bench Lite instances with weight 0.25: file Acc@5
.764 → .784, Acc@10 .824 → .838, a gain on both halves of the set. The other languages'
test names (``ParserTest.php``, ``parser_spec.rb``, ``render.test.ts``), added later: on the
issue corpus file Acc@1 / @5 .420 / .667 → .423 / .670 (Java .067 / .200 → .133 / .267),
MRR .743 → .747; the PHP/Ruby dev set's file Acc unchanged; the corpus's, Lite's and the
PHP/Ruby set's 8k windows cover the same tasks.

``included``: a file another file textually includes (Rust ``include!("src/app.rs")``) gains
the includer's total (the best includer's). Why: the included code is part of the including
file, so words the task shares with it (a build script generating shell completions from the
CLI definition it includes) point at the included file too. Measured on the 200-task
languages dev set with share 0.5: Rust file Acc@5 .82 → .84, nothing else moves (1.0 the
same); SWE-bench Lite unchanged.

Settings (``FileSignals``): ``tested_modules`` switches the first, ``tested_modules_weight``
(0.25) is its share, ``tested_modules_files`` the files that lend; ``include_lending`` (0.5)
is the second's share, 0 switching it off.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING

from ctxfast.retrieval.repoindex import RepoIndex
from ctxfast.retrieval.signals.base import Lender, best_n
from ctxfast.text import is_test_path

if TYPE_CHECKING:
    from ctxfast.retrieval.config import RetrievalConfig


def lend_to_included(index: RepoIndex, total: Mapping[str, float]) -> dict[str, float]:
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


#: How a test file's name marks the module it tests, in every language's convention:
#: ``test_parser.py``, ``parser_test.go``, ``parser_spec.rb``, ``ParserTest.php``,
#: ``ParserTests.cs``, ``parser.test.ts`` / ``parser.spec.js`` (the name without its last
#: extension).
_TEST_AFFIX = re.compile(r"^tests?_|_(?:tests?|spec)$|(?<=[a-z0-9])Tests?$|\.(?:test|spec)$")


def lend_to_tested_modules(
    index: RepoIndex, total: Mapping[str, float], n_files: int
) -> dict[str, float]:
    """Evidence passed from test files to the modules they test.

    An issue often quotes a failing test, or shares its vocabulary, so a test file can outrank
    the code it exercises — and tests are demoted in the ranking. By the naming convention
    ``test_<module>.py`` / ``<module>_test.py`` (also ``test_<package>_<module>.py``), each
    test file among the ``n_files`` best-scored files lends its score to the non-test files it
    names (``_TEST_AFFIX``: the other languages' conventions too); a file named by several
    tests keeps the best. Measured on the 296 scorable SWE-bench Lite instances with weight
    0.25: file Acc@5 .764 → .784, Acc@10 .824 → .838, a gain on both halves of the set."""
    tails = index.module_tails()
    best = best_n(total, n_files)
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


def _tested_modules(
    index: RepoIndex, total: Mapping[str, float], cfg: RetrievalConfig
) -> dict[str, float]:
    return lend_to_tested_modules(index, total, cfg.files.tested_modules_files)


def _included(
    index: RepoIndex, total: Mapping[str, float], cfg: RetrievalConfig
) -> dict[str, float]:
    return lend_to_included(index, total)


TESTED_MODULES = Lender(
    "tested_modules", "tested_modules", "tested_modules_weight", _tested_modules
)
INCLUDED = Lender("included", "include_lending", "include_lending", _included)
