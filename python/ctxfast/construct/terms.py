"""Decision terms: the identifier vocabulary a decision is about.

Used by the gate (is an unlinked item semantically *near* the decision?), by residue folding
and by the sliding-window line extraction, which scores lines by token overlap
with these terms. Identifiers are split on snake_case and camelCase so ``load_session`` and
``SessionLoader`` share ``session``; a short stop list keeps Python keywords out.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

from ctxfast.text import CODE_TERM_STOPWORDS, IDENTIFIER, split_identifier


@lru_cache(maxsize=1 << 16)
def _word_terms(word: str, min_len: int) -> tuple[str, ...]:
    """Terms of one identifier (cached: code repeats the same identifiers constantly)."""
    out: dict[str, None] = {}
    for t in (word.lower(), *split_identifier(word)):
        if len(t) >= min_len and t not in CODE_TERM_STOPWORDS and not t.isdigit():
            out.setdefault(t, None)
    return tuple(out)


def terms_of(text: str, min_len: int = 3) -> list[str]:
    """Ordered distinct terms of ``text`` (first occurrence order, so results are stable)."""
    seen: dict[str, None] = {}
    for word in dict.fromkeys(IDENTIFIER.findall(text)):
        for t in _word_terms(word, min_len):
            seen.setdefault(t, None)
    return list(seen)


def line_tokens(line: str, min_len: int = 3) -> list[str]:
    """Every identifier part of ``line`` with repetition (the overlap-scoring unit).

    ``self.default_timeout`` yields ``default`` and ``timeout``; a compound like
    ``SessionManager`` also yields its lower-cased whole form.
    """
    out: list[str] = []
    for word in IDENTIFIER.findall(line):
        parts = split_identifier(word)
        if len(parts) > 1:
            parts.append(word.lower())
        out.extend(p for p in parts if len(p) >= min_len and p not in CODE_TERM_STOPWORDS)
    return out


def decision_terms(texts: Iterable[str | None], min_len: int = 3) -> list[str]:
    """The union of terms of the decision's texts (obligation, criteria, target, task)."""
    seen: dict[str, None] = {}
    for text in texts:
        if text:
            for t in terms_of(text, min_len):
                seen.setdefault(t, None)
    return list(seen)


def short_name(entity: str) -> str:
    """Last dotted/colon component of a qualified name (``a.b.C.m`` → ``m``)."""
    return re.split(r"[.:]", entity.strip())[-1]


def mentions(text: str, entity: str) -> bool:
    """True when ``text`` names ``entity``, qualified or by its short name, as a whole word:
    a script's ``main`` is not named by "domain", nor ``pkg.f`` by ``pkg.f_old``."""
    if not entity:
        return False
    return any(has_word(text, name) for name in {entity, short_name(entity)} if name)


def has_word(text: str, name: str) -> bool:
    """True when ``name`` occurs in ``text`` with no identifier character either side."""
    return re.search(rf"(?<![A-Za-z0-9_]){re.escape(name)}(?![A-Za-z0-9_])", text) is not None


__all__ = [
    "decision_terms",
    "has_word",
    "line_tokens",
    "mentions",
    "short_name",
    "terms_of",
]
