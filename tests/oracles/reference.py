"""Small pure-Python reference implementations of the native algorithms.

They are slow on purpose: each is the most obvious correct version, and the test suite checks
the native code against them with hypothesis. Nothing in the library calls them.
"""

from __future__ import annotations

import re

from ctxfast.tokens import count_tokens


def is_rust_whitespace(ch: str) -> bool:
    """Rust's ``char::is_whitespace`` (Unicode White_Space), which differs from
    ``str.isspace`` on the four ASCII information separators."""
    return ch.isspace() and ch not in "\x1c\x1d\x1e\x1f"


def cut_points(text: str, cut: str) -> list[int]:
    """Character offsets where a word- or line-cut head may end (0 included)."""
    points = [0]
    if cut == "word":
        points += [
            i
            for i in range(1, len(text))
            if is_rust_whitespace(text[i]) and not is_rust_whitespace(text[i - 1])
        ]
    elif cut == "line":
        points += [i for i in range(1, len(text)) if text[i] == "\n"]
    else:
        raise ValueError(f"the reference covers 'word' and 'line' cuts, not {cut!r}")
    return points


def truncate_to_tokens(text: str, max_tokens: int, *, encoding: str, elision: str, cut: str) -> str:
    """Linear scan from the longest cut point down: the first head that fits wins."""
    if count_tokens(text, encoding) <= max_tokens:
        return text
    for end in reversed(cut_points(text, cut)):
        candidate = text[:end] + elision
        if count_tokens(candidate, encoding) <= max_tokens:
            return candidate
    return ""


def _segments(selected: list[bool], lo: int, hi: int) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    start: int | None = None
    for j in range(lo, hi):
        if selected[j] and start is None:
            start = j
        elif not selected[j] and start is not None:
            out.append((start, j))
            start = None
    if start is not None:
        out.append((start, hi))
    return out


def best_windows(
    line_tokens: list[int],
    line_scores: list[float],
    budget: int,
    max_windows: int,
    context: int,
) -> list[tuple[int, int]]:
    """The greedy window selection of ``ctxfast_core::window::best_windows``, spelled out.

    Each round every uncovered seed (score > 0) proposes its widest fitting window; the largest
    marginal score wins, then the smallest marginal cost, then the earliest start.
    """
    n = len(line_tokens)
    context = min(context, n)
    selected = [False] * n
    used = 0
    runs = 0
    if max_windows == 0:
        return []
    seeds = [i for i in range(n) if line_scores[i] > 0.0]
    while True:
        best: tuple[float, int, int, int, int] | None = None
        for i in seeds:
            if selected[i]:
                continue
            cand = None
            for r in range(context, -1, -1):
                start, end = max(0, i - r), min(n, i + r + 1)
                cost = 0
                gain = 0.0
                for j in range(start, end):
                    if not selected[j]:
                        cost += line_tokens[j]
                        gain += line_scores[j]
                if used + cost > budget:
                    continue
                new_runs = runs + 1 - len(_segments(selected, max(0, start - 1), min(n, end + 1)))
                if new_runs <= max_windows:
                    cand = (gain, cost, start, end, new_runs)
                    break
            if cand is None:
                continue
            if (
                best is None
                or cand[0] > best[0]
                or (
                    cand[0] == best[0]
                    and (cand[1] < best[1] or (cand[1] == best[1] and cand[2] < best[2]))
                )
            ):
                best = cand
        if best is None:
            break
        _, cost, start, end, runs = best
        for j in range(start, end):
            selected[j] = True
        used += cost
    return _segments(selected, 0, n)


def best_fixed_windows(line_scores: list[int], window: int, k: int) -> list[tuple[int, int, int]]:
    """The ``k`` best non-overlapping windows of ``window`` lines, ties to the earliest start
    (the construction stage's sliding window, as it was written in Python)."""
    n = len(line_scores)
    if n == 0 or window <= 0 or k <= 0:
        return []
    window = min(window, n)
    prefix = [0]
    for s in line_scores:
        prefix.append(prefix[-1] + s)
    sums = [prefix[i + window] - prefix[i] for i in range(n - window + 1)]
    taken: list[tuple[int, int, int]] = []
    for _ in range(k):
        best, best_i = -1, -1
        for i, s in enumerate(sums):
            if any(i < e and i + window > st for st, e, _ in taken):
                continue
            if s > best:
                best, best_i = s, i
        if best_i < 0:
            break
        taken.append((best_i, best_i + window, best))
    return sorted(taken)


# --- code tokenizer and identifier-weighted BM25 -------------------------------

_PATH_EXTENSIONS = frozenset(
    (
        *("py", "pyi", "js", "jsx", "mjs", "cjs", "ts", "tsx", "go", "rs", "java", "kt"),
        *("c", "h", "cc", "cpp", "hpp", "cs", "rb", "php", "swift", "scala", "toml", "json"),
        *("yaml", "yml", "cfg", "ini", "txt", "md", "rst", "html", "css", "sh"),
    )
)


def _is_word_char(c: str) -> bool:
    return c.isascii() and (c.isalnum() or c == "_")


def split_word(word: str) -> list[str]:
    """snake_case and CamelCase parts, digits attached to the preceding letters."""
    parts: list[str] = []
    for seg in (s for s in word.split("_") if s):
        start = 0
        for i in range(1, len(seg)):
            prev, cur = seg[i - 1], seg[i]
            nxt = seg[i + 1] if i + 1 < len(seg) else ""
            lower_to_upper = (prev.islower() or prev.isdigit()) and cur.isupper()
            acronym_end = prev.isupper() and cur.isupper() and nxt.islower()
            if lower_to_upper or acronym_end:
                parts.append(seg[start:i])
                start = i
        parts.append(seg[start:])
    return parts


def tokenize_code(text: str) -> list[str]:
    """Character-by-character restatement of ``ctxfast-core``'s ``codetok::tokenize``."""
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        if not (_is_word_char(text[i]) or text[i] in "./\\-"):
            i += 1
            continue
        start = i
        while i < n and (_is_word_char(text[i]) or text[i] in "./\\-"):
            i += 1
        run = text[start:i]
        norm = run.strip(".-/\\").replace("\\", "/")
        while norm.startswith("./"):
            norm = norm[2:]
        if any(_is_word_char(c) for c in norm):
            stem, dot, ext = norm.rpartition(".")
            if "/" in norm or (dot and stem and ext.lower() in _PATH_EXTENSIONS):
                out.append(norm.lower())
        word = ""
        for c in run + " ":
            if _is_word_char(c):
                word += c
                continue
            if word and word.strip("_"):
                out.append(word.lower())
                parts = split_word(word)
                if len(parts) >= 2:
                    out.extend(p.lower() for p in parts)
            word = ""
    return out


def bm25_scores(
    docs: list[list[str]],
    query: list[str],
    *,
    k1: float = 1.5,
    b: float = 0.75,
    symbol_weight: float = 3.0,
    symbols: frozenset[str] = frozenset(),
) -> list[float]:
    """The identifier-weighted BM25 formula term by term, over pre-tokenised docs; 0.0 for
    non-matching docs."""
    import math
    import re

    ident = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
    syms = {s.lower() for s in symbols}
    n_docs = len(docs)
    avgdl = sum(len(d) for d in docs) / n_docs if n_docs else 0.0
    scores = [0.0] * n_docs
    seen: set[str] = set()
    for t in query:
        if t in seen:
            continue
        seen.add(t)
        nt = sum(1 for d in docs if t in d)
        if nt == 0:
            continue
        idf = math.log((n_docs - nt + 0.5) / (nt + 0.5) + 1)
        w = symbol_weight if ident.fullmatch(t) and t.lower() in syms else 1.0
        for i, d in enumerate(docs):
            tf = d.count(t)
            if tf:
                rel = len(d) / avgdl if avgdl > 0 else 0.0
                scores[i] += w * idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * rel))
    return scores


def bm25_top_k(scores: list[float], k: int, matched: list[bool]) -> list[tuple[int, float]]:
    """Matched documents ordered by (score desc, index asc), first ``k``."""
    ranked = sorted((i for i, m in enumerate(matched) if m), key=lambda i: (-scores[i], i))
    return [(i, scores[i]) for i in ranked[:k]]


_LITERAL = re.compile(
    r"""(?<![A-Za-z0-9_"'])[rbuRBUfF]{0,2}("(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')"""
)
_PLACEHOLDER = re.compile(
    r"%(?:\([^)]*\))?[-#0 +]*[0-9]*(?:\.[0-9]+)?[sdrifgxXeEc%]|\{[^{}]*\}|\\[ntr]|\$\{[^}]*\}"
)
_PLAIN_WORD = re.compile(r"[A-Za-z]+[,.:;!?]?")


def _rust_split(text: str) -> list[str]:
    """``str::split_whitespace``: runs of Rust whitespace separate, empty pieces dropped."""
    out, cur = [], []
    for ch in text:
        if is_rust_whitespace(ch):
            if cur:
                out.append("".join(cur))
                cur = []
        else:
            cur.append(ch)
    if cur:
        out.append("".join(cur))
    return out


def literal_fragments(texts: list[str], min_chars: int = 12) -> list[tuple[int, int, str]]:
    """``_native.literal_fragments`` as regular expressions: one-line literals, split at
    placeholders, whitespace collapsed, edge punctuation stripped, prose only."""
    out = []
    for i, text in enumerate(texts):
        for n, line in enumerate(text.split("\n"), 1):
            line = line.removesuffix("\r")
            for m in _LITERAL.finditer(line):
                for piece in _PLACEHOLDER.split(m.group(1)[1:-1]):
                    piece = " ".join(_rust_split(piece)).strip(" .,:;'\"`")
                    tokens = _rust_split(piece)
                    words = sum(1 for t in tokens if _PLAIN_WORD.fullmatch(t))
                    if len(piece) >= min_chars and words >= 2 and 2 * words >= len(tokens):
                        out.append((i, n, piece))
    return out


_NAME = re.compile(r"[A-Za-z0-9_.-]*[A-Za-z][A-Za-z0-9_.-]*")


def literal_names(texts: list[str], max_chars: int = 40) -> list[tuple[int, str]]:
    """``_native.literal_names``: per text, each distinct one-line literal whose whole body
    is 2 to ``max_chars`` characters of ``[A-Za-z0-9_.-]`` with a letter, first seen first."""
    out = []
    for i, text in enumerate(texts):
        seen: set[str] = set()
        for line in text.split("\n"):
            for m in _LITERAL.finditer(line.removesuffix("\r")):
                body = m.group(1)[1:-1]
                if 2 <= len(body) <= max_chars and _NAME.fullmatch(body) and body not in seen:
                    seen.add(body)
                    out.append((i, body))
    return out
