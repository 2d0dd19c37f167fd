"""Line locators: map TOML keys, JSON keys and INI keys back to the 1-based line stating them.

The standard parsers (``tomllib``, ``json``, ``configparser``) validate and decode but drop
positions; these scanners run *after* a successful parse and only answer "which line states
this key/value", which is all an evidence pointer needs.
"""

from __future__ import annotations

import json
import re

from ctxfast.recon.manifest._common import Source

_TOML_HEADER = re.compile(r"""^\s*(\[\[?)\s*([A-Za-z0-9_\-."' ]+?)\s*\]\]?\s*(#.*)?$""")


def _split_dotted(key: str) -> tuple[str, ...]:
    parts = re.findall(r'"([^"]*)"|\'([^\']*)\'|([^.\s]+)', key)
    return tuple(a or b or c for a, b, c in parts)


class TomlLines:
    """Table ranges and key lines of a TOML document that ``tomllib`` already accepted."""

    def __init__(self, src: Source) -> None:
        self.src = src
        # (path, array_index, header_line, first_body_line, last_body_line)
        self.tables: list[tuple[tuple[str, ...], int, int, int, int]] = []
        counts: dict[tuple[str, ...], int] = {}
        current: tuple[tuple[str, ...], int, int] = ((), 0, 0)
        start = 1
        for i, raw in enumerate(src.lines, start=1):
            m = _TOML_HEADER.match(raw)
            if not m or raw.lstrip().startswith(("#",)):
                continue
            self.tables.append((current[0], current[1], current[2], start, i - 1))
            path = _split_dotted(m.group(2))
            idx = 0
            if m.group(1) == "[[":
                idx = counts.get(path, 0)
                counts[path] = idx + 1
            current = (path, idx, i)
            start = i + 1
        self.tables.append((current[0], current[1], current[2], start, len(src.lines)))

    def header(self, path: tuple[str, ...], index: int = 0) -> int | None:
        """Line of the ``[path]`` header (or of the deepest existing parent header)."""
        for p in (path[:n] for n in range(len(path), 0, -1)):
            for tp, ti, hl, _s, _e in self.tables:
                if tp == p and (ti == index or p != path) and hl:
                    return hl
        return None

    def key(self, path: tuple[str, ...], key: str, index: int = 0) -> int | None:
        """Line of ``key = ...`` inside table ``path``; also finds ``sub.key = `` dotted forms
        written in a parent table."""
        for tp, ti, _hl, s, e in self.tables:
            if tp == path and ti == index:
                line = self.src.find_line(rf"""^\s*(["']?){re.escape(key)}\1\s*=""", start=s, end=e)
                if line:
                    return line
        for n in range(len(path) - 1, -1, -1):
            dotted = ".".join((*path[n:], key))
            for tp, _ti, _hl, s, e in self.tables:
                if tp == path[:n]:
                    line = self.src.find_line(rf"^\s*{re.escape(dotted)}\s*=", start=s, end=e)
                    if line:
                        return line
        return None

    def value(self, path: tuple[str, ...], key: str, needle: str, index: int = 0) -> int | None:
        """Line (at or after ``key =``) holding the quoted string ``needle`` of an array value."""
        start = self.key(path, key, index)
        if start is None:
            return None
        q = re.escape(needle)
        return self.src.find_line(rf"""(["']){q}\1|(["']){q}""", start=start)

    def exact_header(self, path: tuple[str, ...]) -> int | None:
        """Line of the ``[path]`` header itself, no parent fallback."""
        return next((hl for tp, _ti, hl, _s, _e in self.tables if tp == path and hl), None)

    def best(self, path: tuple[str, ...], key: str | None = None, index: int = 0) -> int:
        """Key line, else a ``[path.key]`` sub-table header (Cargo's ``[dependencies.serde]``
        form), else the table header, else 1: the most specific line that exists."""
        line = self.key(path, key, index) if key else None
        if line is None and key:
            line = self.exact_header((*path, key))
        return line or self.header(path, index) or 1


def json_key_lines(text: str) -> dict[tuple[str, ...], int]:
    """Map every object-key path (array indices as strings) of a valid JSON text to its line."""
    out: dict[tuple[str, ...], int] = {}
    stack: list[list[object]] = []
    expecting_key = False
    i, n, line = 0, len(text), 1
    while i < n:
        c = text[i]
        if c == "\n":
            line += 1
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            if stack and stack[-1][0] == "obj" and expecting_key:
                key = json.loads(text[i : j + 1])
                stack[-1][1] = key
                prefix = tuple(str(f[1]) for f in stack[:-1])
                out.setdefault((*prefix, key), line)
                expecting_key = False
            elif stack and stack[-1][0] == "arr":
                prefix = tuple(str(f[1]) for f in stack)
                out.setdefault(prefix, line)
            i = j
        elif c == "{":
            stack.append(["obj", None])
            expecting_key = True
        elif c == "[":
            stack.append(["arr", 0])
        elif c in "}]":
            if stack:
                stack.pop()
        elif c == "," and stack:
            if stack[-1][0] == "obj":
                expecting_key = True
            else:
                stack[-1][1] = int(stack[-1][1]) + 1  # type: ignore[call-overload]
        i += 1
    return out


def ini_entries(src: Source) -> dict[tuple[str, str], list[tuple[str, int]]]:
    """``(section, key) -> [(value_piece, line), ...]`` of an INI file, one piece per physical
    line of the (possibly multi-line) value; the key line's piece may be empty."""
    out: dict[tuple[str, str], list[tuple[str, int]]] = {}
    section = ""
    current: list[tuple[str, int]] | None = None
    for i, raw in enumerate(src.lines, start=1):
        stripped = raw.strip()
        if not stripped or stripped.startswith(("#", ";")):
            continue
        if raw[0] in " \t" and current is not None:
            current.append((stripped, i))
            continue
        m = re.match(r"^\[([^\]]+)\]", stripped)
        if m:
            section = m.group(1).strip()
            out.setdefault((section, ""), [("", i)])
            current = None
            continue
        m = re.match(r"^([^=:]+?)\s*[=:]\s*(.*)$", stripped)
        if m:
            current = [(m.group(2).strip(), i)]
            out[(section, m.group(1).strip().lower())] = current
    return out
