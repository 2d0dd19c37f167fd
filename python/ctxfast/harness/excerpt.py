"""File excerpts windowed around the identifiers a task mentions, with real line numbers.

Head-truncating a file at a fixed size routinely cuts the very function the task is about.
Instead each line is scored by the identifiers it mentions (definitions score higher), the
native :func:`best_windows` picks contiguous windows covering the most score under the token
budget, and the excerpt prints the file's own line numbers with a marker for every elided gap —
so a model can ask for an exact span (``read(offset=…)``) instead of guessing.

Identifier-only roles get an *outline* instead: the file's signature lines (again with real line
numbers), preferring those that mention the identifiers; they pull bodies on demand.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ctxfast import _native
from ctxfast.confine import decode, read_regular
from ctxfast.errors import ConfigError
from ctxfast.harness.profiles import IDENTIFIER_ONLY_ROLES
from ctxfast.numbered import gap_line, numbered_line
from ctxfast.tokens import DEFAULT_ENCODING, count_tokens, count_tokens_batch

#: Lines that open a definition in the common languages (Python, Rust, Go, JS/TS, Java, C-ish).
SIGNATURE_RE = re.compile(
    r"^\s*(?:(?:pub(?:\([^)]*\))?|export|default|async|static|public|private|protected|"
    r"abstract|final|unsafe|extern|const)\s+)*"
    r"(?:def|class|fn|func|function|struct|enum|trait|impl|interface|type|module|mod)\b"
)
DEFAULT_CONTEXT_LINES = 3
DEFAULT_MAX_WINDOWS = 4
DEFINITION_BONUS = 2.0


@dataclass(frozen=True)
class Excerpt:
    """A rendered excerpt. ``windows`` are 1-based inclusive line ranges of the file."""

    path: str
    text: str
    token_count: int
    windows: list[tuple[int, int]] = field(default_factory=list)
    total_lines: int = 0
    mode: str = "windows"  # "full", "windows", "outline" or "empty"

    def __str__(self) -> str:
        return self.text


def _identifier_patterns(identifiers: Iterable[str]) -> list[re.Pattern[str]]:
    names: set[str] = set()
    for ident in identifiers:
        ident = ident.strip()
        if not ident:
            continue
        names.add(ident)
        # ``Pager.next_page`` should also find the line that defines ``next_page``.
        names.update(part for part in re.split(r"\.|::", ident) if part)
    return [re.compile(rf"(?<![A-Za-z0-9_]){re.escape(n)}(?![A-Za-z0-9_])") for n in sorted(names)]


def line_scores(lines: Sequence[str], identifiers: Iterable[str]) -> list[float]:
    """Distinct identifiers mentioned per line, plus a bonus on definition lines."""
    patterns = _identifier_patterns(identifiers)
    scores: list[float] = []
    for line in lines:
        hits: float = sum(1 for p in patterns if p.search(line))
        if hits and SIGNATURE_RE.match(line):
            hits += DEFINITION_BONUS
        scores.append(float(hits))
    return scores


def best_windows(
    line_tokens: Sequence[int],
    line_scores: Sequence[float],
    budget: int,
    *,
    max_windows: int = DEFAULT_MAX_WINDOWS,
    context: int = DEFAULT_CONTEXT_LINES,
) -> list[tuple[int, int]]:
    """Half-open 0-based line ranges covering the most score within ``budget`` tokens.

    Greedy and deterministic (see ``ctxfast_core::window``): each round the uncovered
    positive-score line whose widest fitting window (up to ``context`` lines each side) adds the
    most score wins. Adjacent windows merge; at most ``max_windows`` are returned.
    """
    if budget < 0 or max_windows < 0 or context < 0:
        raise ConfigError("budget, max_windows and context must be >= 0")
    return _native.best_windows(
        list(line_tokens), [float(s) for s in line_scores], budget, max_windows, context
    )


def _render(header: str, numbered: list[str], windows: list[tuple[int, int]], total: int) -> str:
    out = [header]
    prev_end = 0
    for start, end in windows:
        if start > prev_end:
            out.append(gap_line(prev_end + 1, start))
        out.extend(numbered[start:end])
        prev_end = end
    if prev_end < total and windows:
        out.append(gap_line(prev_end + 1, total))
    return "\n".join(out)


def _read(path: Path) -> str:
    """The text of a file the caller named (never a FIFO or device)."""
    try:
        return decode(read_regular(path))
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc}") from exc


def excerpt(
    path: str | Path,
    identifiers: Iterable[str],
    max_tokens: int,
    *,
    role: str | None = None,
    identifier_only: bool | None = None,
    context: int = DEFAULT_CONTEXT_LINES,
    max_windows: int = DEFAULT_MAX_WINDOWS,
    encoding: str = DEFAULT_ENCODING,
    display_path: str | None = None,
    content: str | None = None,
) -> Excerpt:
    """An excerpt of the file at ``path`` of at most ``max_tokens`` tokens (exact count).

    A file that fits whole is returned whole. Otherwise lines mentioning ``identifiers`` are
    windowed with ``context`` lines around them; with no mention at all the signature outline
    is shown instead, so the model still sees the file's shape. ``identifier_only`` (default:
    ``role in IDENTIFIER_ONLY_ROLES``) always returns the outline. The text starts with a
    ``path (N lines)`` header; an empty text means not even the header fits.

    ``content`` is the file's text when the caller has read it already (the MCP server reads
    through ``confine.read_confined``, which a path given here would bypass); ``path`` then
    only names the file.
    """
    if max_tokens < 0:
        raise ConfigError(f"max_tokens must be >= 0, got {max_tokens}")
    source = content if content is not None else _read(Path(path))
    shown = display_path or str(path)
    lines = source.splitlines()
    total = len(lines)
    idents = list(identifiers)
    if identifier_only is None:
        identifier_only = role in IDENTIFIER_ONLY_ROLES
    numbered = [numbered_line(i + 1, line) for i, line in enumerate(lines)]
    header = f"{shown} ({total} line{'s' if total != 1 else ''})"

    def done(text: str, windows: list[tuple[int, int]], mode: str) -> Excerpt:
        return Excerpt(
            shown,
            text,
            count_tokens(text, encoding) if text else 0,
            [(s + 1, e) for s, e in windows],
            total,
            mode,
        )

    if count_tokens(header, encoding) > max_tokens:
        return done("", [], "empty")
    if not identifier_only:
        full = _render(header, numbered, [(0, total)] if total else [], total)
        if count_tokens(full, encoding) <= max_tokens:
            return done(full, [(0, total)] if total else [], "full")

    scores = [0.0] * total if identifier_only else line_scores(lines, idents)
    mode, ctx = "windows", context
    if not any(scores):
        # Outline: signature lines, preferring those that mention an identifier.
        mentioned = line_scores(lines, idents)
        scores = [
            (1.0 + mentioned[i]) if SIGNATURE_RE.match(line) else 0.0
            for i, line in enumerate(lines)
        ]
        mode, ctx = "outline", 0
    # Outline windows are single lines; allow one window per signature.
    cap = max_windows if mode == "windows" else total
    line_costs = count_tokens_batch([n + "\n" for n in numbered], encoding)
    gap_cost = count_tokens("\n" + gap_line(total, total), encoding)
    budget = max_tokens - count_tokens(header, encoding) - (min(cap, total) + 1) * gap_cost
    if mode == "outline":
        # Gaps between outline lines are many; price them per selected line instead.
        line_costs = [c + gap_cost for c in line_costs]
        budget = max_tokens - count_tokens(header, encoding) - gap_cost
    budget = max(budget, 0)
    while True:
        windows = best_windows(line_costs, scores, budget, max_windows=cap, context=ctx)
        text = _render(header, numbered, windows, total)
        if not windows:
            text = header + "\n" + gap_line(1, total) if total else header
            if count_tokens(text, encoding) > max_tokens:
                text = header
            return done(text, [], mode)
        over = count_tokens(text, encoding) - max_tokens
        if over <= 0:
            return done(text, windows, mode)
        budget = max(budget - over, 0)


__all__ = ["SIGNATURE_RE", "Excerpt", "best_windows", "excerpt", "line_scores"]
