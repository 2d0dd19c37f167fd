"""``ctxfast bench``: ctxfast against the real alternative, same inputs, same run.

Prints throughput and the ratio; nothing here asserts a time. The asv suite in ``benches/``
measures the same operations for history.
"""

from __future__ import annotations

import glob
import os
import sysconfig
import time
from collections.abc import Callable
from typing import Any


def stdlib_sources(limit: int | None = None) -> list[str]:
    """Texts of the running Python's standard-library ``.py`` files (sorted by path)."""
    root = sysconfig.get_paths()["stdlib"]
    paths = sorted(glob.glob(os.path.join(root, "**", "*.py"), recursive=True))
    texts = []
    for path in paths[:limit] if limit else paths:
        if "site-packages" in path:
            continue
        try:
            with open(path, encoding="utf-8") as fh:
                texts.append(fh.read())
        except (UnicodeDecodeError, OSError):
            continue
    return texts


def best_time(fn: Callable[[], Any], repeat: int) -> float:
    best = float("inf")
    for _ in range(max(repeat, 1)):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def naive_truncate(text: str, max_tokens: int, elision: str, count: Callable[[str], int]) -> str:
    """The lab's word-by-word loop (O(w²)): the baseline ``truncate_to_tokens`` replaces."""
    if count(text) <= max_tokens:
        return text
    kept: list[str] = []
    for word in text.split():
        if count(" ".join([*kept, word]) + elision) > max_tokens:
            break
        kept.append(word)
    return " ".join(kept) + elision


def _line(label: str, ours: float, theirs: float, unit_amount: float, unit: str) -> str:
    return (
        f"{label:<38} ctxfast {unit_amount / ours:>10.2f} {unit}  "
        f"baseline {unit_amount / theirs:>10.2f} {unit}  ratio {theirs / ours:>7.2f}x"
    )


def bench_tokens(repeat: int = 3) -> list[str]:
    from ctxfast import _tiktoken_ref
    from ctxfast.harness.sections import ContextSection, assemble_context
    from ctxfast.tokens import count_tokens, count_tokens_batch, truncate_to_tokens

    enc = _tiktoken_ref.get_encoding("cl100k_base")
    texts = stdlib_sources()
    blob = "\n".join(texts)
    mb = len(blob.encode()) / 1e6
    lines = [f"corpus: {len(texts)} stdlib files, {mb:.1f} MB; best of {repeat}"]

    ours = best_time(lambda: count_tokens(blob), repeat)
    theirs = best_time(lambda: len(enc.encode(blob, disallowed_special=())), repeat)
    lines.append(_line("count_tokens, one string (1 thread)", ours, theirs, mb, "MB/s"))

    ours = best_time(lambda: [count_tokens(t) for t in texts], repeat)
    theirs = best_time(lambda: [len(enc.encode(t, disallowed_special=())) for t in texts], repeat)
    lines.append(_line("count_tokens, per file (1 thread)", ours, theirs, mb, "MB/s"))

    threads = os.cpu_count() or 1
    ours = best_time(lambda: count_tokens_batch(texts), repeat)
    theirs = best_time(lambda: enc.encode_ordinary_batch(texts, num_threads=threads), repeat)
    lines.append(_line(f"count_tokens_batch ({threads} threads)", ours, theirs, mb, "MB/s"))

    words = blob.split()[:50_000]
    section = " ".join(words)
    ours = best_time(lambda: truncate_to_tokens(section, 4000), repeat)
    theirs = best_time(lambda: naive_truncate(section, 4000, " […]", count_tokens), 1)
    lines.append(_line("truncate 50k words to 4000 tokens", ours, theirs, 1, "calls/s"))

    sections = [
        ContextSection(
            f"s{i}",
            texts[i % len(texts)][:4000],
            priority=i % 17,
            pinned=i < 3,
            truncatable=i % 2 == 0,
        )
        for i in range(200)
    ]
    per_call = best_time(lambda: assemble_context(sections, 24_000), repeat)
    lines.append(f"{'assemble_context, 200 sections':<38} {per_call * 1000:.2f} ms per call")
    return lines


#: What ``ctxfast bench`` says when the library it is timed against is missing.
BENCH_HINT = "ctxfast bench tokens times ctxfast against tiktoken: pip install 'ctxfast[bench]'"


def run_bench(target: str, repeat: int = 3) -> int:
    from ctxfast.errors import CtxfastError, InvalidArgumentError

    if target != "tokens":
        raise InvalidArgumentError(f"unknown bench target {target!r}")
    from ctxfast import _tiktoken_ref

    try:
        _tiktoken_ref.get_encoding("cl100k_base")
    except RuntimeError as exc:
        raise CtxfastError(BENCH_HINT) from exc
    for line in bench_tokens(repeat):
        print(line)
    return 0
