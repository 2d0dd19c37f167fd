"""The task parsed once: one object every retrieval signal reads.

Before, each signal re-derived what it needed from the raw text (the BM25 terms were built
four times, the code identifiers three times, the path words once more), so two signals could
disagree about what the task said and every new signal paid for its own parse. Here the
query (:class:`~ctxfast.retrieval.query.Query`) and every derived view of the text — BM25 terms
of the task alone and of the task with its error, the re-rank terms, the identifiers the task
names, the words a path may hold — are computed once by :func:`parse_task`; the signals in
``localize``, ``sources`` and ``pipeline`` take the :class:`TaskQuery` and never the text.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Container, Mapping
from dataclasses import dataclass, field
from typing import ClassVar

from ctxfast.bm25 import tokenize_code
from ctxfast.retrieval.query import Query, QueryConfig, build_query, query_terms
from ctxfast.text import (
    CALL,
    CAMEL_CASE,
    CODE_SPAN,
    COMMAND_FLAG,
    CONFIG_KEY,
    DOTTED_NAME,
    IDENTIFIER,
    LUCENE_ENGLISH_STOPWORDS,
    PATH_WORD_STOPWORDS,
    QUOTED_NAME,
    SNAKE_CASE,
    compound_words,
    long_words,
)


@dataclass(frozen=True)
class TaskSettings:
    """How the task's text becomes queries (``RetrievalConfig.task``): what is left out of
    every query, and when the goal sentence is a query of its own."""

    FLAT_NAMES: ClassVar[Mapping[str, str]] = {"stopwords": "query_stopwords"}

    #: Words dropped from every query built from the task ("the", "is", "not", ...); the
    #: repository's text keeps them. Default: Lucene's English list, 33 words: a task's
    #: filler words match every file and push the ones its real words point at down.
    stopwords: frozenset[str] = field(default=LUCENE_ENGLISH_STOPWORDS)
    #: A pasted environment listing (``pip list``, ``show_versions()``: at least this many
    #: lines of ``name version``) is left out of every query: it says what is installed, not
    #: what is wrong, and its package names match every file importing them. 3 lines; 0
    #: keeps listings.
    listing_min_lines: int = 3
    #: HTML comments (``<!-- ... -->``) are left out of every query: in an issue they hold
    #: the tracker's template text, not the reporter's words. On by default.
    drop_html_comments: bool = True
    #: When the goal sentence (an issue's title) is also a query of its own: 0, whenever
    #: it has fewer terms than the whole task; n > 0, only when the task holds at least n
    #: terms beyond the goal's. 0 is the rule the defaults were measured with.
    goal_rest_min: int = 0
    #: Two adjacent prose words also match as one path component ("man page" →
    #: ``manpage.py``). On: it finds a file the task names in two words and costs nothing
    #: measurable.
    path_compounds: bool = True

    def __post_init__(self) -> None:
        # A JSON config gives a list; membership tests want a set.
        object.__setattr__(self, "stopwords", frozenset(self.stopwords))


def code_identifiers(text: str) -> list[str]:
    """Identifiers from code-like text: code blocks and backticks (every identifier inside),
    dotted names (and their parts), CamelCase, snake_case and calls in the prose."""
    found: dict[str, None] = {}
    for m in CODE_SPAN.finditer(text):
        for ident in IDENTIFIER.findall(m.group(0)):
            if len(ident) >= 3:
                found.setdefault(ident, None)
    for m in DOTTED_NAME.finditer(text):
        for part in m.group(0).split("."):
            if len(part) >= 3:
                found.setdefault(part, None)
    for rx in (CAMEL_CASE, SNAKE_CASE):
        for m in rx.finditer(text):
            found.setdefault(m.group(0), None)
    for m in CALL.finditer(text):
        if len(m.group(1)) >= 3:
            found.setdefault(m.group(1), None)
    return list(found)


def literal_names(
    text: str, flags: bool = True, quoted: bool = True
) -> tuple[tuple[str, ...], ...]:
    """What the task names that code declares as a whole string literal, each name with the
    spellings a literal may hold: command-line flags (``--list-details`` as itself and as
    ``list-details``, the way argument parsers of every language declare them),
    environment-variable-like constants (``NO_COLOR``) and, when ``quoted``, one-token
    quoted names (``'cache'``). In order of first mention, each name once."""
    found: dict[str, tuple[str, ...]] = {}
    for m in COMMAND_FLAG.finditer(text) if flags else ():
        flag = m.group(0)
        found.setdefault(flag[2:], (flag, flag[2:]))
    for m in CONFIG_KEY.finditer(text):
        found.setdefault(m.group(0), (m.group(0),))
    if quoted:
        for m in QUOTED_NAME.finditer(text):
            if not COMMAND_FLAG.fullmatch(m.group(2)):  # a quoted flag is a flag, above
                found.setdefault(m.group(2), (m.group(2),))
    return tuple(found.values())


@dataclass(frozen=True)
class TaskQuery:
    """Everything retrieval reads from one task, derived once.

    ``text`` is the task with the error appended (what the file signals score), ``named`` the
    identifiers of the task alone in order of first mention (what a definition is "named"
    by), ``terms`` / ``task_terms`` the BM25 query terms of ``text`` / the task alone,
    ``rerank_terms`` the task's terms plus the resolved identifiers, ``api_terms`` the goal
    sentence and the task, ``path_words`` the prose words (and two-word compounds) a path
    component may equal, ``goal_terms`` the query terms of the goal sentence alone (empty
    when it is the whole task: a second query of the same words adds nothing),
    ``literal_names`` the names a file may declare as string literals (see there)."""

    task_text: str
    error: str | None
    query: Query
    text: str
    terms: tuple[str, ...]
    task_terms: tuple[str, ...]
    rerank_terms: tuple[str, ...]
    api_terms: tuple[str, ...]
    named: tuple[str, ...]
    text_identifiers: tuple[str, ...]
    path_words: frozenset[str]
    goal_tokens: frozenset[str]
    goal_terms: tuple[str, ...]
    literal_names: tuple[tuple[str, ...], ...]

    @property
    def named_set(self) -> frozenset[str]:
        return frozenset(self.named)


# The two line patterns below must run in time linear in the line: a pasted 60 KB line once
# took over a minute. Each reads its line from left to right with possessive quantifiers
# (``*+``, ``++``, ``?+``: what they took is never given back), and wherever one run ends
# the next starts with a character the run cannot hold, so giving back could never have
# found another match: they match exactly the lines the backtracking versions matched.

#: One line of an environment listing: a package or setting name, then a version
#: (``numpy 1.19.2``, ``- pytest 6.0.0rc1``, ``python: 3.7.3 (default, ...)`` is not one: only
#: one word may follow the version) or ``None`` (``xr.show_versions()``'s absent packages).
#: A version is one word opening with ``v?<digits>.<digit>``.
_LISTING_LINE = re.compile(
    r"^\s*+[-*]?+\s*+[A-Za-z][A-Za-z0-9_.\-\[\]]*+(?:\s*+[:=])?+\s++"
    r"(?:v?\d++\.\d\S*+(?:\s++\S++)?+|None)\s*+$"
)


#: An HTML comment's two ends: in an issue, the tracker's template text the reporter left in
#: place.
_COMMENT_OPEN, _COMMENT_CLOSE = "<!--", "-->"


def without_html_comments(text: str) -> str:
    """``text`` with every ``<!-- ... -->`` replaced by a space, an unclosed ``<!--`` left as
    it is (what ``re.sub(r"<!--.*?-->", " ", text, flags=re.S)`` did). Two ``str.find``
    scans that only move forward: the pattern searched to the end of the text again from
    every ``<!--`` that had no ``-->`` after it, and 120 KB of ``<!--`` took 25 s."""
    parts: list[str] = []
    pos = 0
    while (start := text.find(_COMMENT_OPEN, pos)) != -1:
        end = text.find(_COMMENT_CLOSE, start + len(_COMMENT_OPEN))
        if end == -1:
            break
        parts += (text[pos:start], " ")
        pos = end + len(_COMMENT_CLOSE)
    parts.append(text[pos:])
    return "".join(parts)


#: A setting line of an environment report: a name, a colon, one word (``OS: Darwin``,
#: ``byteorder: little``, ``LANG: en_US.UTF-8``). Alone it is prose's business; inside a run
#: of listing lines it is the same report.
_SETTING_LINE = re.compile(r"^\s*+[-*]?+\s*+[A-Za-z][A-Za-z0-9_.\-]*+\s*+:\s++[^\s:]++\s*+$")


def without_listings(text: str, min_lines: int) -> str:
    """``text`` without its environment listings: runs of consecutive listing lines
    (``pip list``, ``conda list``, ``show_versions()`` output) holding at least ``min_lines``
    of them. A setting line (``OS: Darwin``) continues a run without counting toward it, so
    the machine half of a ``show_versions()`` report (``byteorder``, ``processor``,
    ``machine``) goes with its package half. A task pastes them as evidence of its setup;
    their names would send the query to every file that imports numpy or pytest, and to the
    function that prints the report."""
    lines = text.split("\n")
    kept: list[str] = []
    run: list[str] = []
    listed = 0
    for line in [*lines, ""]:
        if _LISTING_LINE.match(line):
            run.append(line)
            listed += 1
            continue
        if _SETTING_LINE.match(line):
            run.append(line)
            continue
        if listed < min_lines:
            kept += run
        run, listed = [], 0
        kept.append(line)
    return "\n".join(kept[:-1])


def goal_rest_terms(task_terms: tuple[str, ...], goal: tuple[str, ...], config: QueryConfig) -> int:
    """How many of the task's query terms the goal sentence does not hold, its request verbs
    (``fix``, ``add``: what ``goal_hint`` strips) not counted. A one-line commit subject
    (``fix: display color when NO_COLOR is an empty string``) is its own goal once the verb
    is gone: a second query of the same words would count its BM25 twice against every other
    signal (a flag or a name the task gives, a path word)."""
    verbs = {t for v in config.goal_verbs for t in tokenize_code(v)}
    rest = Counter(task_terms) - Counter(goal)
    return sum(n for t, n in rest.items() if t not in verbs)


def parse_task(
    task_text: str,
    error: str | None,
    test: str | None,
    config: QueryConfig,
    stopwords: frozenset[str],
    *,
    name_index: Container[str] | None = None,
    flag_names: bool = True,
    quoted_names: bool = True,
    compounds: bool = True,
    listing_min_lines: int = 3,
    drop_html_comments: bool = True,
    goal_rest_min: int = 0,
) -> TaskQuery:
    """Parse the task once (pure, deterministic); ``stopwords`` are dropped from every BM25
    query built here (documents keep them, see ``query.query_terms``), and so is any
    environment listing of at least ``listing_min_lines`` lines (see
    :func:`without_listings`) and, with ``drop_html_comments``, every ``<!-- ... -->``.
    The goal sentence is a query of its own when the task says more than it: with
    ``goal_rest_min`` 0, when the goal has fewer terms than the task; otherwise when the task
    holds at least ``goal_rest_min`` terms beyond the goal's and its request verbs (see
    :func:`goal_rest_terms`)."""
    if listing_min_lines > 0:
        task_text = without_listings(task_text, listing_min_lines)
    if drop_html_comments:
        task_text = without_html_comments(task_text)
    query = build_query(task_text, error, test, config, name_index=name_index)
    text = task_text if not error else f"{task_text}\n{error}"
    rerank = f"{task_text}\n" + " ".join(query.identifiers)
    task_terms = tuple(query_terms(task_text, stopwords))
    named = tuple(code_identifiers(task_text))
    goal = tuple(query_terms(query.goal_hint, stopwords))
    if goal_rest_min > 0:
        use_goal = goal_rest_terms(task_terms, goal, config) >= goal_rest_min
    else:
        use_goal = len(goal) < len(task_terms)
    return TaskQuery(
        task_text=task_text,
        error=error,
        query=query,
        text=text,
        # Without an error the text is the task: its terms and identifiers are the task's.
        terms=tuple(query_terms(text, stopwords)) if error else task_terms,
        task_terms=task_terms,
        rerank_terms=tuple(query_terms(rerank, stopwords)),
        api_terms=tuple(query_terms(f"{query.goal_hint}\n{task_text}", stopwords)),
        named=named,
        text_identifiers=tuple(code_identifiers(text)) if error else named,
        path_words=frozenset(
            w
            for w in (*long_words(task_text), *(compound_words(task_text) if compounds else ()))
            if w not in PATH_WORD_STOPWORDS
        ),
        goal_tokens=frozenset(tokenize_code(query.goal_hint)),
        goal_terms=goal if use_goal else (),
        literal_names=literal_names(text, flag_names, quoted_names),
    )
