"""The task parsed once: one object every retrieval signal reads.

Before, each signal re-derived what it needed from the raw text (the BM25 terms were built
four times, the code identifiers three times, the path words once more), so two signals could
disagree about what the task said and every new signal paid for its own parse. Here the
§3.1 :class:`~ctxfast.retrieval.query.Query` and every derived view of the text — BM25 terms
of the task alone and of the task with its error, the re-rank terms, the identifiers the task
names, the words a path may hold — are computed once by :func:`parse_task`; the signals in
``localize``, ``sources`` and ``pipeline`` take the :class:`TaskQuery` and never the text.
"""

from __future__ import annotations

import re
from collections.abc import Container
from dataclasses import dataclass

from ctxfast.bm25 import tokenize_code
from ctxfast.retrieval.query import Query, QueryConfig, build_query, query_terms

_CODE_BLOCK = re.compile(r"```.*?```|`[^`\n]+`", re.S)
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_DOTTED = re.compile(r"\b[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+")
_CAMEL = re.compile(r"\b[A-Z][a-z0-9]+(?:[A-Z][A-Za-z0-9]*)+\b|\b[A-Z]{2,}[a-z][A-Za-z0-9]*\b")
_SNAKE = re.compile(r"\b[A-Za-z][A-Za-z0-9]*_[A-Za-z0-9_]+\b|\b_[A-Za-z0-9_]+\b")
_CALL = re.compile(r"\b([A-Za-z_][A-Za-z0-9_]*)\(")
_WORD = re.compile(r"[a-z]{4,}")
#: Words of four letters or more that say nothing about where code lives; a path holding
#: them ("file", "test", "code") is not pointed at by the task.
PATH_STOPWORDS = frozenset(
    [
        "this",
        "that",
        "with",
        "from",
        "have",
        "when",
        "there",
        "their",
        "which",
        "what",
        "would",
        "should",
        "could",
        "into",
        "about",
        "after",
        "before",
        "these",
        "those",
        "where",
        "other",
        "such",
        "then",
        "than",
        "also",
        "only",
        "just",
        "like",
        "more",
        "some",
        "does",
        "done",
        "make",
        "made",
        "using",
        "used",
        "uses",
        "work",
        "works",
        "file",
        "files",
        "line",
        "lines",
        "code",
        "issue",
        "error",
        "errors",
        "value",
        "values",
        "return",
        "returns",
        "none",
        "true",
        "false",
        "self",
        "test",
        "tests",
        "case",
    ]
)


def code_identifiers(text: str) -> list[str]:
    """Identifiers from code-like text: code blocks and backticks (every identifier inside),
    dotted names (and their parts), CamelCase, snake_case and calls in the prose."""
    found: dict[str, None] = {}
    for m in _CODE_BLOCK.finditer(text):
        for ident in _IDENT.findall(m.group(0)):
            if len(ident) >= 3:
                found.setdefault(ident, None)
    for m in _DOTTED.finditer(text):
        for part in m.group(0).split("."):
            if len(part) >= 3:
                found.setdefault(part, None)
    for rx in (_CAMEL, _SNAKE):
        for m in rx.finditer(text):
            found.setdefault(m.group(0), None)
    for m in _CALL.finditer(text):
        if len(m.group(1)) >= 3:
            found.setdefault(m.group(1), None)
    return list(found)


@dataclass(frozen=True)
class TaskQuery:
    """Everything retrieval reads from one task, derived once.

    ``text`` is the task with the error appended (what the file signals score), ``named`` the
    identifiers of the task alone in order of first mention (what a definition is "named"
    by), ``terms`` / ``task_terms`` the BM25 query terms of ``text`` / the task alone,
    ``rerank_terms`` the task's terms plus the resolved identifiers, ``api_terms`` the goal
    sentence and the task, ``path_words`` the prose words a path component may equal."""

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

    @property
    def named_set(self) -> frozenset[str]:
        return frozenset(self.named)


def parse_task(
    task_text: str,
    error: str | None,
    test: str | None,
    config: QueryConfig,
    stopwords: frozenset[str],
    *,
    name_index: Container[str] | None = None,
) -> TaskQuery:
    """Parse the task once (pure, deterministic); ``stopwords`` are dropped from every BM25
    query built here (documents keep them, see ``query.query_terms``)."""
    query = build_query(task_text, error, test, config, name_index=name_index)
    text = task_text if not error else f"{task_text}\n{error}"
    rerank = f"{task_text}\n" + " ".join(query.identifiers)
    return TaskQuery(
        task_text=task_text,
        error=error,
        query=query,
        text=text,
        terms=tuple(query_terms(text, stopwords)),
        task_terms=tuple(query_terms(task_text, stopwords)),
        rerank_terms=tuple(query_terms(rerank, stopwords)),
        api_terms=tuple(query_terms(f"{query.goal_hint}\n{task_text}", stopwords)),
        named=tuple(code_identifiers(task_text)),
        text_identifiers=tuple(code_identifiers(text)),
        path_words=frozenset(
            w for w in _WORD.findall(task_text.lower()) if w not in PATH_STOPWORDS
        ),
        goal_tokens=frozenset(tokenize_code(query.goal_hint)),
    )
