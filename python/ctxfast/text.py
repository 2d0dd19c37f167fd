"""The text rules every stage shares: identifiers, stop words, config keys and file roles.

Task text, code and paths are read the same way by recon, retrieval, the window builder and
the repo map, so the patterns live here once. Where two stages need a different rule on
purpose (a BM25 query drops other words than a path matcher), the module holds one *named*
list per purpose instead of one copy per caller; the figures of every stage were measured
with exactly these lists. See ARCHITECTURE.md ("Shared text rules").

The code tokenizer itself (BM25's words and identifier parts) is native: ``ctxfast.bm25``
and ``ctxfast_core::codetok``. The directory names every walk prunes come from the native
side too (``ctxfast_core::vendored``), so the indexer, the lexical search and this module
cannot disagree.
"""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Sequence
from enum import StrEnum

from ctxfast import _native

# --- identifiers ------------------------------------------------------------------------

#: One identifier: a letter or underscore, then letters, digits and underscores.
IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
#: Dotted names (``pkg.mod.func``, ``self.value``).
DOTTED_NAME = re.compile(r"\b[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+")
#: CamelCase: a capitalised word with an inner capital (``MemStore``), or an acronym running
#: into a word (``HTTPServer``). Plain capitalised English words (``The``) are not CamelCase.
#: Written without a repeated group and with possessive runs: ``(?:[A-Z][A-Za-z0-9]*)+``
#: matched the same words, but tried every way of cutting ``AaAAAA…A_`` into groups before
#: failing, twice as long for each more capital (a 40-letter word never finished).
CAMEL_CASE = re.compile(r"\b[A-Z][a-z0-9]++[A-Z][A-Za-z0-9]*+\b|\b[A-Z]{2,}+[a-z][A-Za-z0-9]*+\b")
#: snake_case of any letter case (``load_session``, ``MAX_SIZE``, ``_private``).
SNAKE_CASE = re.compile(r"\b[A-Za-z][A-Za-z0-9]*_[A-Za-z0-9_]+\b|\b_[A-Za-z0-9_]+\b")
#: Lower-case snake_case only: the escalation gate leaves ``UPPER_CASE`` to the config-key
#: signal, which reports it as a configuration key instead of a symbol.
LOWER_SNAKE_CASE = re.compile(r"\b[a-z_][a-z0-9]*_[a-z0-9_]+\b")
#: A call ``name(``; group 1 is the name.
CALL = re.compile(r"\b([A-Za-z_][A-Za-z0-9_]*)\(")
#: Fenced code blocks and inline backtick spans of Markdown text.
CODE_SPAN = re.compile(r"```.*?```|`[^`\n]+`", re.S)
#: The query parser's ``camel`` pattern (a string: query patterns are configurable): any
#: capitalised identifier, so it also catches single-capital class names (``Query``) that
#: :data:`CAMEL_CASE` leaves out. Retrieval's figures were measured with it.
CAPITALISED_IDENTIFIER_RE = r"\b[A-Z][a-zA-Z0-9_]+\b"

#: One part of an identifier chunk between underscores: ``HTTPServer2`` → ``HTTP``,
#: ``Server``, ``2``.
_IDENTIFIER_PART = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")


def identifiers(text: str, min_len: int = 1) -> list[str]:
    """Every identifier of ``text`` at least ``min_len`` characters long, in order, with
    repetition."""
    return [w for w in IDENTIFIER.findall(text) if len(w) >= min_len]


def split_identifier(word: str) -> list[str]:
    """Lower-cased parts of one identifier (snake_case and camelCase aware)."""
    parts: list[str] = []
    for chunk in word.split("_"):
        if chunk:
            parts.extend(p.lower() for p in _IDENTIFIER_PART.findall(chunk))
    return parts


def long_words(text: str) -> list[str]:
    """Lower-cased runs of four or more letters: the words of a task a path is matched on."""
    return re.findall(r"[a-z]{4,}", text.lower())


def compound_words(text: str, min_part: int = 3, min_len: int = 7) -> set[str]:
    """Two adjacent prose words written as one, lower-cased (``man page`` → ``manpage``,
    ``type hints`` → ``typehints``): a module is often named by the compound its users
    write as two words. Words are runs of letters between spaces; punctuation, digits and
    line breaks end a phrase. Each part has at least ``min_part`` letters, the compound at
    least ``min_len``."""
    out: set[str] = set()
    for phrase in re.split(r"[^A-Za-z ]+", text):
        words = phrase.lower().split()
        for a, b in itertools.pairwise(words):
            if len(a) >= min_part and len(b) >= min_part and len(a) + len(b) >= min_len:
                out.add(a + b)
    return out


def alnum_words(text: str) -> list[str]:
    """Lower-cased runs of letters and digits: the words a skill description is matched on."""
    return re.findall(r"[a-z0-9]+", text.lower())


# --- stop words: one named list per purpose -------------------------------------------

#: BM25 query terms: Lucene's English stop set (the default of its English analyzer and of
#: Elasticsearch). Code words such as ``self`` or ``return`` stay: they can name code.
LUCENE_ENGLISH_STOPWORDS = frozenset((
    "a", "an", "and", "are", "as", "at", "be", "but", "by", "for", "if", "in", "into", "is",
    "it", "no", "not", "of", "on", "or", "such", "that", "the", "their", "then", "there",
    "these", "they", "this", "to", "was", "will", "with",
))  # fmt: skip

#: Task words matched against path components: function words of four letters or more
#: plus the words every issue uses about code (``file``, ``error``, ``test``), which would
#: otherwise point at every path containing them.
PATH_WORD_STOPWORDS = frozenset((
    "this", "that", "with", "from", "have", "when", "there", "their", "which", "what",
    "would", "should", "could", "into", "about", "after", "before", "these", "those",
    "where", "other", "such", "then", "than", "also", "only", "just", "like", "more", "some",
    "does", "done", "make", "made", "using", "used", "uses", "work", "works", "file",
    "files", "line", "lines", "code", "issue", "error", "errors", "value", "values",
    "return", "returns", "none", "true", "false", "self", "test", "tests", "case",
))  # fmt: skip

#: How a line that belongs to the definition below it starts: a decorator or annotation
#: (``@property``, ``@Override``) or an attribute (``#[cfg(unix)]``, ``#[Route]``). It changes
#: what the definition means, so the definition is shown with it.
DECORATOR_PREFIXES = ("@", "#[")


def attached_above(
    lines: Sequence[str],
    first: int,
    prefixes: tuple[str, ...],
    most: int,
    block_comments: bool = False,
) -> int:
    """The index of the first line of the run right above ``lines[first]`` that belongs to
    that line's definition: lines starting with one of ``prefixes``, and a decorator or
    attribute written over several lines (``@pytest.mark.parametrize(`` … ``)``,
    ``#[cfg(any(`` … ``))]``, ``@SuppressWarnings({`` … ``})``) whole, whose inner lines
    start with nothing of the kind; at most ``most`` lines. ``first`` when there is none.

    With ``block_comments``, a ``/* … */`` comment (a Javadoc, a Doxygen block) is taken
    whole or not at all: blank lines inside it do not end the run, and one longer than what
    is left of ``most`` is left out, since its last lines alone start the block in the
    middle of a sentence, without the ``/**`` that says it is a comment."""
    top = first
    while top > 0 and first - top < most:
        if block_comments and lines[top - 1].rstrip().endswith("*/"):
            opener = _comment_opener(lines, top - 1, first - most)
            if opener is None:
                break
            top = opener
            continue
        if lines[top - 1].lstrip().startswith(prefixes):
            top -= 1
            continue
        # A decorator's or attribute's arguments end in ``)`` or ``]``; a body ends in ``}``
        # (``@Override public String toString() {`` … ``}`` is the method before, not one).
        if not lines[top - 1].rstrip().endswith((")", "]")):
            break
        opener = _group_opener(lines, top - 1, first - most)
        if opener is None or not lines[opener].lstrip().startswith(DECORATOR_PREFIXES):
            break
        top = opener
    return top


def _comment_opener(lines: Sequence[str], last: int, floor: int) -> int | None:
    """The line, at ``floor`` or below ``last`` (which ends a ``/* … */`` comment), that
    opens it; None when none does that far up (the comment is too long, or the ``*/``
    ends something else, say a string). The floor bounds the scan, so a file of stray
    ``*/`` lines costs a few lines per definition, not the file."""
    for i in range(last, max(floor, 0) - 1, -1):
        text = lines[i]
        at = text.rfind("/*", 0, len(text.rstrip()) - 2 if i == last else len(text))
        if at >= 0:
            return i
        if i < last and "*/" in text:
            return None
    return None


def _group_opener(lines: Sequence[str], last: int, floor: int) -> int | None:
    """The line, at ``floor`` or below ``last``, whose bracket ``lines[last]`` closes (the
    lines between balance out), or None when ``lines[last]`` closes none."""
    depth = 0
    for i in range(last, max(floor, 0) - 1, -1):
        text = lines[i]
        depth += sum(text.count(c) for c in ")]}") - sum(text.count(c) for c in "([{")
        if i == last and depth <= 0:
            return None
        if depth <= 0:
            return i if depth == 0 else None
    return None


#: Decision terms of the window builder: short English words and the Python keywords and
#: builtin type names that every body repeats, so overlap measures the subject, not syntax.
CODE_TERM_STOPWORDS = frozenset((
    "the", "and", "for", "not", "with", "from", "this", "that", "are", "was", "were", "will",
    "into", "when", "then", "than", "else", "elif", "def", "class", "return", "self", "none",
    "true", "false", "import", "pass", "raise", "try", "except", "finally", "while", "lambda",
    "yield", "async", "await", "global", "nonlocal", "assert", "del", "args", "kwargs", "cls",
    "str", "int", "float", "bool", "list", "dict", "set", "tuple", "should", "must", "can",
    "has", "have", "had", "its", "but", "all", "any", "new", "use", "used", "using", "each",
    "which",
))  # fmt: skip

#: Skill matching: the English function words of a one-line skill description.
SKILL_STOPWORDS = frozenset((
    "a", "an", "and", "are", "as", "at", "be", "by", "for", "from", "how", "i", "in", "is",
    "it", "of", "on", "or", "our", "the", "this", "to", "use", "using", "we", "when", "with",
    "you", "your",
))  # fmt: skip

# --- configuration keys and files -------------------------------------------------------

#: An environment-style configuration key: ``DATABASE_URL``, ``MAX_RETRIES``.

# The toolkit's and the baseline's own word rules, kept exactly as they were: each is pinned
# by what it feeds (the intent router's bag of words, the memory index's TF-IDF features, the
# BM25 baseline's reference figures), so one shared tokenizer would move their results.
_LOWER_WORD = re.compile(r"[a-z0-9_']+")
_WORD_PIECE = re.compile(r"[A-Za-z][a-z0-9]*|[A-Z]+(?![a-z])|\d+")
_BASELINE_WORD = re.compile(r"[A-Za-z0-9_]+")
_BASELINE_PART = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")


def lower_words(text: str) -> list[str]:
    """Lower-cased words of letters, digits, underscore and apostrophe (the intent router)."""
    return _LOWER_WORD.findall(text.lower())


def word_pieces(text: str) -> list[str]:
    """Lower-cased word pieces; ``camelCase`` and ``snake_case`` split into their words
    (the memory index)."""
    return [w.lower() for w in _WORD_PIECE.findall(text)]


def identifier_tokens(text: str, split: bool = True) -> list[str]:
    """Lower-cased words; identifiers also yield their snake_case/CamelCase parts (the BM25
    baseline). ``getUserName`` → ``getusername get user name``: the whole identifier keeps
    exact matches strong while the parts let prose ("user name") meet code."""
    out: list[str] = []
    for word in _BASELINE_WORD.findall(text):
        low = word.lower()
        if not split:
            out.append(low)
            continue
        parts = [p.lower() for chunk in word.split("_") for p in _BASELINE_PART.findall(chunk)]
        if len(parts) != 1 or parts[0] != low:
            out.append(low)
        out.extend(parts)
    return out


CONFIG_KEY = re.compile(r"\b[A-Z][A-Z0-9]*_[A-Z0-9_]+\b")
#: A long command-line flag named in prose (``--list-details``, ``--glob=*.rs``: the name
#: alone); a dash or word character before it means a hyphenated word, not a flag.
COMMAND_FLAG = re.compile(r"(?<![\w-])--[A-Za-z][A-Za-z0-9]*(?:[-_][A-Za-z0-9]+)*")
#: One name-like token in quotes or backticks (``'cache'``, ``"rails"``, `` `PAGER` ``):
#: group 2 is the name, a run of name characters holding a letter. The run before its first
#: letter holds no letter, so there is one way to read a name, not one per letter of it (a
#: backtick before 60 KB of letters took seconds).
QUOTED_NAME = re.compile(r"(?<!\w)(['\"`])([0-9_.-]*+[A-Za-z][A-Za-z0-9_.-]*+)\1(?!\w)")
#: Suffixes of configuration files.
CONFIG_SUFFIXES = (".env", ".toml", ".yaml", ".yml", ".ini", ".cfg", ".conf", ".json")
#: A configuration file named in prose (``setup.cfg``, ``conf/app.yaml``, ``.env``).
CONFIG_FILE = re.compile(
    r"(?<![\w/.-])(?:[\w-]+/)*[\w.-]*\.(?:"
    + "|".join(re.escape(s[1:]) for s in CONFIG_SUFFIXES)
    + r")\b|(?<![\w.])\.env\b"
)

# --- file roles -------------------------------------------------------------------------

#: Directory names every walk prunes (indexer, lexical search): vendored installs,
#: version-control data and ctxfast's own index. Defined once, natively.
PRUNED_DIRS: tuple[str, ...] = tuple(_native.vendored_dirs())
#: Directory names holding third-party code that lives in the tree and *is* indexed (the
#: manifest reports them as external packages): ``astropy/extern/``, ``third_party/``.
VENDORED_DIR_NAMES = (
    *("vendor", "_vendor", "vendored", "third_party", "third-party"),
    *("external", "extern", "site-packages"),
)
#: Directory names of documentation.
DOC_DIR_NAMES = ("doc", "docs", "documentation")
#: Directories of code that ships beside the product rather than in it: documentation,
#: examples, demo playgrounds, benchmarks and test data.
EXAMPLE_DIR_NAMES = frozenset(
    {
        *DOC_DIR_NAMES,
        *("examples", "example", "playground", "bench", "benches", "benchmark", "benchmarks"),
        *("docs_src", "tutorial", "tutorials", "demo", "demos", "sample", "samples"),
        *("fixtures", "testdata", "test-data"),
    }
)
#: JavaScript's and TypeScript's source file extensions.
JS_TS_EXTENSIONS = ("js", "jsx", "mjs", "cjs", "ts", "tsx", "mts", "cts")
#: Test file names per language: pytest, Go, Jest/Vitest (``.test``/``.spec``), JUnit,
#: PHPUnit, RSpec and Minitest.
TEST_SUFFIXES = tuple(
    ["_test.py", "_tests.py", "_test.go", "Test.java", "Tests.java", "Test.php", "_spec.rb"]
    + ["_test.rb", "_test.cc", "_test.cpp", "_unittest.cc", "_unittest.cpp"]
    + ["Test.kt", "Tests.kt", "Test.cs", "Tests.cs", "Tests.swift"]
    + [f".{kind}.{ext}" for kind in ("test", "spec") for ext in JS_TS_EXTENSIONS]
)
#: Whole file names of the tests a language keeps beside the code they test: JavaScript's
#: and TypeScript's ``<module>/test.ts`` (date-fns keeps 900 of them), a Django app's
#: ``tests.py``, Rust's ``test.rs``/``tests.rs`` test modules, pytest's ``conftest.py``
#: (its fixtures, at any depth: a root ``conftest.py`` was ranked first for an issue). Not
#: every language: a Ruby library's ``lib/faraday/adapter/test.rb`` is the stub adapter it
#: ships, Python's ``utils/test.py`` a helper module.
BESIDE_CODE_TEST_NAMES = frozenset(
    [
        *(f"{stem}.{ext}" for stem in ("test", "tests") for ext in JS_TS_EXTENSIONS),
        *("tests.py", "test.rs", "tests.rs", "conftest.py"),
    ]
)
#: A directory of tests named for what they test: ``integration_tests/``, ``app_test/``,
#: ``stress_tests/``, ``test_projects/``, ``tests_e2e/``.
TEST_DIR_NAME = re.compile(r"\w+_tests?|tests?_\w+")
#: Name fragments of generated or minified files (bundles, protobuf and gRPC stubs, Dart's
#: and C#'s generator output: the indexer's ``GENERATED_SUFFIXES``).
GENERATED_NAME_PARTS = (
    *(".min.", "-min.", ".bundle.", "_pb2.py", "_pb2_grpc.py", ".pb.go"),
    *(".g.dart", ".freezed.dart", ".g.cs", ".Designer.cs", ".designer.cs"),
)


class FileRole(StrEnum):
    """What a file is to the project: its own source, or something a reader of the source
    rarely wants first."""

    SOURCE = "source"
    VENDORED = "vendored"
    GENERATED = "generated"
    TEST = "test"
    DOC = "doc"


@functools.lru_cache(maxsize=1 << 17)
def is_test_path(path: str) -> bool:
    """Whether the POSIX ``path`` is a test file: under a ``tests``/``test``/``__tests__``
    directory or one named for the tests it holds (``integration_tests``, ``test_data``), or
    a top-level ``testing`` one (pytest's own suite; a ``testing`` package inside the
    library, ``sympy/testing``, is library code), or named as a test (``test_*.py``,
    ``*_test.go``, ``*.spec.ts``, ``*Test.php``, ``*_spec.rb``, ``*_unittest.cc``, ...), or
    one of the ``BESIDE_CODE_TEST_NAMES`` (``src/addDays/test.ts``, ``conftest.py``). Two
    directory names are tests in one language only, where they are the convention and
    elsewhere may name library code: RSpec's ``spec/`` for Ruby, Symfony's ``Tests/`` for
    PHP."""
    parts = path.split("/")
    name = parts[-1]
    return (
        path.startswith(("tests/", "test/", "__tests__/", "testing/"))
        or "/tests/" in path
        or "/test/" in path
        or "/__tests__/" in path
        or name.startswith("test_")
        or name.endswith(TEST_SUFFIXES)
        or name in BESIDE_CODE_TEST_NAMES
        or any(TEST_DIR_NAME.fullmatch(d) for d in parts[:-1])
        or (name.endswith(".rb") and (path.startswith("spec/") or "/spec/" in path))
        or (name.endswith(".php") and (path.startswith("Tests/") or "/Tests/" in path))
    )


@functools.lru_cache(maxsize=1 << 17)
def is_example_path(path: str) -> bool:
    """Whether the POSIX ``path`` is code beside the product that a fix rarely touches and a
    caller of the change there rarely breaks: under one of ``EXAMPLE_DIR_NAMES``
    (``doc/usage/example_google.py``, ``asv_bench/benchmarks/``), or hidden — a file or
    directory named with a leading dot is a tool's (CI workflows and issue templates under
    ``.github/``, an IDE's ``.phpstorm.meta.php``), and no language imports product code
    from one."""
    parts = path.split("/")
    return any(p.startswith(".") for p in parts) or any(d in EXAMPLE_DIR_NAMES for d in parts[:-1])


def is_library_path(path: str) -> bool:
    """Whether the POSIX ``path`` is the product's own code: neither a test
    (:func:`is_test_path`) nor code beside the product (:func:`is_example_path`)."""
    return not (is_test_path(path) or is_example_path(path))


def is_generated_path(path: str) -> bool:
    """A generated, minified or vendored file (:func:`file_role`): code a tool or an upstream
    project rewrites, not a fix."""
    return file_role(path) in (FileRole.GENERATED, FileRole.VENDORED)


def is_product_path(path: str) -> bool:
    """Whether the POSIX ``path`` is product source a fix may change: a library path
    (:func:`is_library_path`) that is neither vendored nor generated (:func:`file_role`)."""
    return is_library_path(path) and file_role(path) is FileRole.SOURCE


def is_test_code(path: str, qualname: str | None) -> bool:
    """Whether a definition is a test: in a test file (:func:`is_test_path`), or inside a
    library file's own test module (Rust's ``#[cfg(test)] mod tests``, or ``mod <what>_tests``:
    such a segment in its qualname before the name). Not ``test`` or ``*_test``: those name
    functions too (Django's ``user_passes_test``), whose nested definitions are library code."""
    return is_test_path(path) or in_test_module(qualname)


def in_test_module(qualname: str | None) -> bool:
    """Whether a segment of ``qualname`` before the name is ``tests`` or ``*_tests``: a
    definition inside a test module (:func:`is_test_code` without the path)."""
    if not qualname or "tests" not in qualname:  # every such segment contains "tests"
        return False
    return any(s == "tests" or s.endswith("_tests") for s in qualname.split(".")[:-1])


@functools.lru_cache(maxsize=1 << 17)
def file_role(path: str) -> FileRole:
    """The role of the POSIX ``path`` (relative to the repository root). The first that
    applies wins: vendored (under a vendored or pruned directory), generated/minified, test,
    doc; everything else is source."""
    dirs = path.split("/")[:-1]
    name = path.rsplit("/", 1)[-1]
    if any(d in VENDORED_DIR_NAMES or d in PRUNED_DIRS for d in dirs):
        return FileRole.VENDORED
    if any(part in name for part in GENERATED_NAME_PARTS):
        return FileRole.GENERATED
    if is_test_path(path):
        return FileRole.TEST
    if any(d in DOC_DIR_NAMES for d in dirs):
        return FileRole.DOC
    return FileRole.SOURCE


__all__ = [
    "BESIDE_CODE_TEST_NAMES",
    "CALL",
    "CAMEL_CASE",
    "CAPITALISED_IDENTIFIER_RE",
    "CODE_SPAN",
    "CODE_TERM_STOPWORDS",
    "COMMAND_FLAG",
    "CONFIG_FILE",
    "CONFIG_KEY",
    "CONFIG_SUFFIXES",
    "DECORATOR_PREFIXES",
    "DOC_DIR_NAMES",
    "DOTTED_NAME",
    "EXAMPLE_DIR_NAMES",
    "GENERATED_NAME_PARTS",
    "IDENTIFIER",
    "JS_TS_EXTENSIONS",
    "LOWER_SNAKE_CASE",
    "LUCENE_ENGLISH_STOPWORDS",
    "PATH_WORD_STOPWORDS",
    "PRUNED_DIRS",
    "QUOTED_NAME",
    "SKILL_STOPWORDS",
    "SNAKE_CASE",
    "TEST_SUFFIXES",
    "VENDORED_DIR_NAMES",
    "FileRole",
    "alnum_words",
    "attached_above",
    "file_role",
    "identifiers",
    "is_example_path",
    "is_generated_path",
    "is_library_path",
    "is_product_path",
    "is_test_path",
    "long_words",
    "split_identifier",
]
