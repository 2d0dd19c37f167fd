"""Message evidence: string literals of the code that an issue quotes verbatim.

Issues paste what the program printed — an exception message, a warning, a check's text, a
generated line — and the code holds that text as a string literal, usually as a template
(``"duplicate %s description of %s"``). The literal pins the exact place the behaviour comes
from, which neither vocabulary (BM25) nor names (definition matching) see when the message
is prose. Each literal is split at its format placeholders into constant fragments; a
fragment of at least ``min_chars`` characters and two words that occurs in the task text,
whitespace-normalised, is a match.
"""

from __future__ import annotations

import itertools
import re
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

# One-line string literals with optional prefixes (``r``, ``b``, ``f``, ``u``), either quote.
_STRING = re.compile(
    r"""(?<![A-Za-z0-9_"'])[rbuRBUfF]{0,2}("(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')"""
)
# printf-style, str.format / f-string fields, and escaped layout characters.
_PLACEHOLDER = re.compile(
    r"%(?:\([^)]*\))?[-#0 +]*\d*(?:\.\d+)?[sdrifgxXeEc%]|\{[^{}]*\}|\\[ntr]|\$\{[^}]*\}"
)
_SPACE = re.compile(r"\s+")
_WORD = re.compile(r"\w+")
_EDGE = " .,:;'\"`"


def normalise(text: str) -> str:
    """Whitespace collapsed to single spaces, as fragments are stored."""
    return _SPACE.sub(" ", text)


def fragments(literal: str, min_chars: int) -> list[str]:
    """The constant pieces of one literal's body that are long enough to be evidence."""
    out = []
    for piece in _PLACEHOLDER.split(literal):
        piece = normalise(piece).strip(_EDGE)
        if len(piece) >= min_chars and _is_prose(piece):
            out.append(piece)
    return out


_PROSE_WORD = re.compile(r"[A-Za-z]+[,.:;!?]?")


def _is_prose(piece: str) -> bool:
    """Two plain words or more, and at least half of the space-separated tokens plain words:
    a message, not a code template such as ``"= models.DateField("`` (which would match the
    code pasted into an issue)."""
    tokens = piece.split()
    words = sum(1 for t in tokens if _PROSE_WORD.fullmatch(t))
    return words >= 2 and 2 * words >= len(tokens)


@dataclass(frozen=True)
class LiteralMatch:
    fragment: str
    places: tuple[tuple[str, int], ...]  # (file, line) of every literal holding it


class LiteralIndex:
    """Fragments of every file's string literals, keyed by their first two words (``\\w+``
    runs) so a task is matched by one dictionary probe per pair of adjacent words instead of
    a scan of all fragments."""

    def __init__(self, files: Iterable[tuple[str, list[str]]], min_chars: int = 12):
        self.min_chars = min_chars
        places: dict[str, set[tuple[str, int]]] = defaultdict(set)
        for path, lines in files:
            for n, line in enumerate(lines, 1):
                if '"' not in line and "'" not in line:
                    continue
                for m in _STRING.finditer(line):
                    for frag in fragments(m.group(1)[1:-1], min_chars):
                        places[frag].add((path, n))
        self.places = {f: tuple(sorted(p)) for f, p in places.items()}
        self._by_head: dict[tuple[str, str], list[str]] = defaultdict(list)
        for frag in self.places:
            a, b = _WORD.findall(frag)[:2]
            self._by_head[(a, b)].append(frag)

    def match(self, text: str) -> list[LiteralMatch]:
        """Every stored fragment that occurs in ``text`` (whitespace-normalised), longest
        first. A fragment may end inside a word of the text, as templates often stop before
        the interpolated value."""
        flat = normalise(text)
        words = _WORD.findall(flat)
        seen: set[str] = set()
        out = []
        for head in itertools.pairwise(words):
            for frag in self._by_head.get(head, ()):
                if frag not in seen and frag in flat:
                    seen.add(frag)
                    out.append(LiteralMatch(frag, self.places[frag]))
        out.sort(key=lambda m: (-len(m.fragment), m.fragment))
        return out


def file_scores(matches: list[LiteralMatch]) -> dict[str, float]:
    """Per file: each matched fragment adds its length in characters, shared among the files
    that hold it (a message found in one file is stronger evidence than a common phrase)."""
    scores: dict[str, float] = defaultdict(float)
    for m in matches:
        files = {f for f, _ in m.places}
        for f in files:
            scores[f] += len(m.fragment) / len(files)
    return dict(scores)
