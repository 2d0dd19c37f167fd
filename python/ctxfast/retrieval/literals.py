"""Message evidence: string literals of the code that an issue quotes verbatim.

Issues paste what the program printed — an exception message, a warning, a check's text, a
generated line — and the code holds that text as a string literal, usually as a template
(``"duplicate %s description of %s"``). The literal pins the exact place the behaviour comes
from, which neither vocabulary (BM25) nor names (definition matching) see when the message
is prose. Each one-line literal is split at its format placeholders into constant
fragments, and the prose-like ones of at least ``min_chars`` characters are kept (the scan
is native, ``ctxfast_core::literals``; the tests' oracle, ``tests/oracles/reference.py``,
states it as regular expressions). A kept fragment that occurs in the task text,
whitespace-normalised, is a match, and the definition holding each matched literal is a
``literal`` candidate (:func:`literal_source`): the message pins the function that prints it,
which is where the behaviour is changed more often than not.

Tasks also *name* what the code declares as a literal: a command-line flag (``--glob``),
an environment variable (``NO_COLOR``), a subcommand or key in quotes (``'cache'``). Argument
parsers of every language declare these as whole one-token literals (``Arg::new("glob")``,
``flag.Bool("glob", …)``, ``case "--glob":``), so each file's name literals (native
``literal_names``) are kept beside the fragments, and a name the task gives
(``task.literal_names``) matches the files holding it.
"""

from __future__ import annotations

import itertools
import re
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ctxfast._native import literal_fragments, literal_names
from ctxfast.retrieval.candidates import RawCandidate

if TYPE_CHECKING:
    from ctxfast.retrieval.repoindex import RepoIndex

_SPACE = re.compile(r"\s+")
_WORD = re.compile(r"\w+")


def normalise(text: str) -> str:
    """Whitespace collapsed to single spaces, as fragments are stored."""
    return _SPACE.sub(" ", text)


@dataclass(frozen=True)
class LiteralMatch:
    fragment: str
    places: tuple[tuple[str, int], ...]  # (file, line) of every literal holding it
    files: frozenset[str]  # the files among ``places``


class LiteralIndex:
    """Fragments of every file's string literals, keyed by their first two words (``\\w+``
    runs) so a task is matched by one dictionary probe per pair of adjacent words instead of
    a scan of all fragments; and the files holding each name literal of at most
    ``name_max_chars`` characters. ``files`` gives each file's path and text (its lines
    joined with ``\\n``, as :meth:`~ctxfast.retrieval.repoindex.RepoIndex.text` makes it)."""

    def __init__(
        self,
        files: Iterable[tuple[str, str]],
        min_chars: int = 12,
        name_max_chars: int = 40,
    ):
        self.min_chars = min_chars
        self.name_max_chars = name_max_chars
        paths, texts = [], []
        for path, text in files:
            paths.append(path)
            texts.append(text)
        try:
            found = literal_fragments(texts, min_chars)
        except UnicodeEncodeError:  # lone surrogates (text decoded with surrogateescape)
            texts = [t.encode("utf-8", "replace").decode("utf-8") for t in texts]
            found = literal_fragments(texts, min_chars)
        holders: dict[str, set[str]] = defaultdict(set)
        for i, name in literal_names(texts, name_max_chars):
            holders[name].add(paths[i])
        # Sorted lists, not sets: the index is stored as JSON and read back as it is.
        self.names = {n: sorted(p) for n, p in holders.items()}
        places: dict[str, set[tuple[str, int]]] = defaultdict(set)
        for i, line, frag in found:
            places[frag].add((paths[i], line))
        self.places: dict[str, list[tuple[str, int]]] = {f: sorted(p) for f, p in places.items()}
        self._by_head: dict[tuple[str, str], list[str]] = defaultdict(list)
        for frag in self.places:
            a, b = _WORD.findall(frag)[:2]
            self._by_head[(a, b)].append(frag)

    def to_plain(self) -> dict[str, Any]:
        """The index as JSON values (what the state store keeps): sets as sorted lists, the
        word-pair keys as ``[a, b, fragments]`` rows (read back without a regex pass)."""
        return {
            "min_chars": self.min_chars,
            "name_max_chars": self.name_max_chars,
            "names": self.names,
            "places": self.places,
            "by_head": [[a, b, frags] for (a, b), frags in self._by_head.items()],
        }

    @classmethod
    def from_plain(cls, plain: dict[str, Any]) -> LiteralIndex:
        """The index :meth:`to_plain` gave."""
        out = cls.__new__(cls)
        out.min_chars = plain["min_chars"]
        out.name_max_chars = plain["name_max_chars"]
        out.names = plain["names"]
        out.places = plain["places"]  # [path, line] pairs: made tuples for the few matched
        out._by_head = defaultdict(list, {(a, b): frags for a, b, frags in plain["by_head"]})
        return out

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
                    where = tuple((path, line) for path, line in self.places[frag])
                    out.append(LiteralMatch(frag, where, frozenset(p for p, _ in where)))
        out.sort(key=lambda m: (-len(m.fragment), m.fragment))
        return out

    def name_files(self, spellings: Iterable[str]) -> frozenset[str]:
        """The files holding a literal spelled one of ``spellings`` (one name's spellings,
        ``--glob`` and ``glob``)."""
        return frozenset().union(*(self.names.get(s, ()) for s in spellings))


def quoted(index: LiteralIndex, text: str, max_files: int) -> list[LiteralMatch]:
    """The fragments ``text`` quotes that at most ``max_files`` files hold (a phrase in more
    files than that is common wording, not a pointer)."""
    return [m for m in index.match(text) if len(m.files) <= max_files]


def literal_source(ix: RepoIndex, matches: Iterable[LiteralMatch]) -> list[RawCandidate]:
    """One candidate per place of a quoted literal: the innermost definition holding it, or
    the line itself at module level (a message template kept in a module constant). Its
    score is the fragment's length shared among the places holding it, as in
    :func:`file_scores`."""
    out: list[RawCandidate] = []
    for m in matches:
        weight = len(m.fragment) / len(m.places)
        for path, line in m.places:
            d = ix.innermost(path, line)
            if d is not None:
                out.append(
                    RawCandidate(
                        "literal", m.fragment, path, d.line, d.end_line, d.qualname, d.kind, weight
                    )
                )
            else:
                out.append(RawCandidate("literal", m.fragment, path, line, line, score=weight))
    return out


def name_scores(
    index: LiteralIndex, names: Iterable[tuple[str, ...]], max_files: int
) -> dict[str, float]:
    """Per file: each name the task gives adds 1, shared among the files holding it; a name
    held by more than ``max_files`` files points nowhere and adds nothing."""
    scores: dict[str, float] = defaultdict(float)
    for spellings in names:
        files = index.name_files(spellings)
        if len(files) <= max_files:
            for f in files:
                scores[f] += 1.0 / len(files)
    return dict(scores)


def file_scores(matches: Iterable[LiteralMatch]) -> dict[str, float]:
    """Per file: each matched fragment adds its length in characters, shared among the files
    that hold it (a message found in one file is stronger evidence than a common phrase)."""
    scores: dict[str, float] = defaultdict(float)
    for m in matches:
        for f in m.files:
            scores[f] += len(m.fragment) / len(m.files)
    return dict(scores)
