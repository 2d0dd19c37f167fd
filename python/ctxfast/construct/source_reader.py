"""Repository files read once per ``compose`` call: :class:`SourceReader`.

The change targets, their callers, configuration consumers, margins and outlines all read
lines of the same few files; one reader per call caches each file's lines (and, for the
whole-word scans of configuration keys, its joined text) so a file is decoded once however
many derivations look at it. It reads through :func:`ctxfast.confine.read_confined`, so no
path leaves the repository.
"""

from __future__ import annotations

import re
from pathlib import Path

from ctxfast.confine import decode, read_confined


class SourceReader:
    """Reads repository files once per compose call (callers often share files)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._lines: dict[str, list[str]] = {}
        self._joined: dict[str, str] = {}

    def lines(self, rel: str) -> list[str]:
        if rel not in self._lines:
            try:
                text = decode(read_confined(self.root, rel))
            except OSError:
                text = ""
            self._lines[rel] = text.splitlines()
        return self._lines[rel]

    def span(self, rel: str, start: int, end: int) -> str:
        return "\n".join(self.lines(rel)[max(0, start - 1) : end])

    def word_lines(self, rel: str, key: str, word: re.Pattern[str]) -> list[int]:
        """1-based numbers of the lines where ``word`` — ``\\b<key>\\b`` — matches,
        ascending: the occurrences of ``key`` in the whole file are found by a plain substring
        scan and each is tested with ``word`` in place, instead of running the regex (which
        has no literal prefix to skip ahead on) over every line. The lines are joined with
        ``\\n``, a non-word character exactly like a line's start and end, so ``\\b``
        behaves as on each line alone."""
        text = self._joined.get(rel)
        if text is None:
            text = self._joined[rel] = "\n".join(self.lines(rel))
        out: list[int] = []
        line, pos = 1, 0
        i = text.find(key) if key else -1
        while i != -1:
            if word.match(text, i):
                line += text.count("\n", pos, i)
                pos = i
                if not out or out[-1] != line:
                    out.append(line)
            i = text.find(key, i + 1)
        return out


__all__ = [
    "SourceReader",
]
