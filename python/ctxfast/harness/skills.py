"""Progressive skill disclosure: a card for every matching skill, bodies only when earned.

Inlining every matched SKILL.md puts hundreds of tokens of always-on directives in front of a
small model, and several simultaneous directives measurably degrade instruction-following. So
every match gets a one-line *card* (name + description — cheap, nothing silently dropped), and
only skills that earned it get their full body: an explicit ``@skill:name`` reference, a pin,
or a score of at least ``expand_score``. At most ``max_expanded`` bodies are ever inlined; the
rest can be pulled on demand with :func:`lookup`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ctxfast.confine import decode, read_confined
from ctxfast.errors import ConfigError, InvalidArgumentError
from ctxfast.text import SKILL_STOPWORDS, alnum_words

SKILL_MAX_EXPANDED = 2
#: Cosine overlap (query terms vs. name + description terms) that earns a body on its own.
EXPAND_SCORE = 0.5
#: Minimum overlap for a skill to count as a match at all (any shared content term).
MATCH_SCORE = 1e-9
REFERENCE_RE = re.compile(r"@skill:([A-Za-z0-9_.-]+)")


@dataclass(frozen=True)
class Skill:
    """One skill: what it is called, when to use it (the card), and its full instructions."""

    name: str
    description: str
    body: str
    path: str | None = None


@dataclass(frozen=True)
class Disclosure:
    """The outcome of :func:`disclose`: expanded skills, card-only skills, and the render."""

    expanded: list[Skill] = field(default_factory=list)
    cards: list[Skill] = field(default_factory=list)
    scores: dict[str, float] = field(default_factory=dict)
    unknown_references: list[str] = field(default_factory=list)
    text: str = ""


def _terms(text: str) -> set[str]:
    return {w for w in alnum_words(text) if w not in SKILL_STOPWORDS and len(w) > 1}


def score(skill: Skill, query: str) -> float:
    """Set cosine between the query's content words and the skill's name + description."""
    q = _terms(query)
    s = _terms(skill.name.replace("-", " ").replace("_", " ") + " " + skill.description)
    if not q or not s:
        return 0.0
    return len(q & s) / math.sqrt(len(q) * len(s))


def card(skill: Skill) -> str:
    return f"- {skill.name}: {skill.description}"


def disclose(
    skills: Sequence[Skill],
    query: str,
    pinned: Iterable[str] = (),
    max_expanded: int = SKILL_MAX_EXPANDED,
    *,
    expand_score: float = EXPAND_SCORE,
) -> Disclosure:
    """Decides which skills the model sees as cards and which as full bodies.

    Expansion order (until ``max_expanded``): ``@skill:`` references in query order, then pins
    in the given order, then matches scoring ``>= expand_score`` by descending score (name
    breaks ties). Every other match — and any referenced or pinned skill over the cap —
    becomes a card. Cards are listed by descending score, then name.
    """
    if max_expanded < 0:
        raise ConfigError(f"max_expanded must be >= 0, got {max_expanded}")
    by_name: dict[str, Skill] = {}
    for s in skills:
        if s.name in by_name:
            raise ConfigError(f"duplicate skill name {s.name!r}")
        by_name[s.name] = s
    scores = {s.name: score(s, REFERENCE_RE.sub(" ", query)) for s in skills}
    refs = list(dict.fromkeys(REFERENCE_RE.findall(query)))
    unknown = [r for r in refs if r not in by_name]
    pins = [p for p in dict.fromkeys(pinned) if p in by_name]
    unknown += [p for p in dict.fromkeys(pinned) if p not in by_name and p not in unknown]
    ranked = sorted(
        (s.name for s in skills if scores[s.name] >= MATCH_SCORE),
        key=lambda n: (-scores[n], n),
    )
    wanted = [r for r in refs if r in by_name] + pins
    wanted += [n for n in ranked if scores[n] >= expand_score]
    expanded_names = list(dict.fromkeys(wanted))[:max_expanded]
    matched = set(ranked) | set(wanted)
    card_names = sorted(
        (n for n in matched if n not in expanded_names), key=lambda n: (-scores[n], n)
    )
    expanded = [by_name[n] for n in expanded_names]
    cards = [by_name[n] for n in card_names]
    return Disclosure(expanded, cards, scores, unknown, render(expanded, cards))


def render(expanded: Sequence[Skill], cards: Sequence[Skill]) -> str:
    """Bodies first (as ``## skill: name`` blocks), then one line per card with a pull hint."""
    blocks = [f"## skill: {s.name}\n{s.body.strip()}" for s in expanded]
    if cards:
        blocks.append(
            "Other relevant skills (load one with the skill tool by name):\n"
            + "\n".join(card(s) for s in cards)
        )
    return "\n\n".join(blocks)


def lookup(skills: Sequence[Skill], name: str) -> Skill:
    """The skill called ``name`` (what a ``skill`` tool returns when the model pulls a card)."""
    for s in skills:
        if s.name == name:
            return s
    close = sorted(s.name for s in skills if name.lower() in s.name.lower())
    hint = f"; did you mean {', '.join(close)}?" if close else ""
    raise InvalidArgumentError(f"no skill named {name!r}{hint}")


_FRONT_RE = re.compile(r"\A---[ \t]*\r?\n(.*?)\r?\n---[ \t]*(?:\r?\n|\Z)", re.S)


def parse_skill(text: str, path: str | None = None, default_name: str = "") -> Skill:
    """A skill from a ``SKILL.md`` (front matter ``name:``/``description:``, then the body)."""
    meta: dict[str, str] = {}
    body = text
    m = _FRONT_RE.match(text)
    if m:
        body = text[m.end() :]
        for line in m.group(1).splitlines():
            key, sep, value = line.partition(":")
            if sep:
                meta[key.strip().lower()] = value.strip().strip("'\"")
    name = meta.get("name") or default_name
    if not name:
        raise ConfigError(f"skill {path or '<text>'} has no name")
    return Skill(name, meta.get("description", ""), body.strip(), path)


def load_skills(directory: str | Path) -> list[Skill]:
    """Every ``*/SKILL.md`` under ``directory`` (sorted by path; name defaults to the dir).
    A skill file that is a link out of ``directory``, a special file or unreadable is left
    out (``confine.read_confined``): a checked-in skills folder is repository content."""
    root = Path(directory)
    if not root.is_dir():
        return []
    out = []
    for p in sorted(root.glob("*/SKILL.md")):
        try:
            text = decode(read_confined(root, p.relative_to(root), links_inside=True))
        except OSError:
            continue
        out.append(parse_skill(text, str(p), p.parent.name))
    return out


__all__ = [
    "EXPAND_SCORE",
    "SKILL_MAX_EXPANDED",
    "Disclosure",
    "Skill",
    "card",
    "disclose",
    "load_skills",
    "lookup",
    "parse_skill",
    "render",
    "score",
]
