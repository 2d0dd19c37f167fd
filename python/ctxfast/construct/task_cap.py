"""The task as the window shows it: within its share of the window.

The task heads the window and is never evicted, so a pasted 120 KB log as the task left no
room for any code. Over ``ConstructConfig.task_tokens`` it is cut by lines, keeping what
says the most: its head (the issue's title and statement), a traceback's last frames and
the exception under them (where it failed), and its tail (the latest output, the question);
each run of cut lines is marked ``… [N lines cut] …``. Sizes are exact
(:mod:`ctxfast.tokens`); retrieval, the gate and dedup still read the whole task.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ctxfast.retrieval.query import parse_frames
from ctxfast.tokens import (
    DEFAULT_ELISION,
    count_tokens,
    count_tokens_batch,
    fits,
    truncate_to_tokens,
)

#: Shares of the cap for the head and the traceback's frames; the tail gets the rest.
HEAD_SHARE = 0.45
FRAMES_SHARE = 0.2
#: The last frames of a traceback kept, each with its source line.
LAST_FRAMES = 3


def cut_mark(n: int) -> str:
    return f"… [{n} line{'s' if n != 1 else ''} cut] …"


def cap_task(task: str, limit: int, encoding: str) -> tuple[str, int]:
    """``task`` within ``limit`` tokens (``0``: no cap) and the number of its lines cut.

    Lines are kept whole in the order head, last frames, tail, each part within its share
    (what a part leaves goes to the next); a line longer than the room left keeps its head.
    Until the joined text fits, the line kept last is given back."""
    if limit <= 0 or fits(task, limit, encoding):
        return task, 0
    lines = task.split("\n")
    sizes = count_tokens_batch(lines, encoding)
    kept: dict[int, str] = {}
    head, frames = int(limit * HEAD_SHARE), int(limit * FRAMES_SHARE)
    left = _take(lines, sizes, range(len(lines)), head, kept, encoding)
    left = _take(lines, sizes, _last_frames(lines), left + frames, kept, encoding)
    tail = range(len(lines) - 1, -1, -1)
    _take(lines, sizes, tail, left + limit - head - frames, kept, encoding)
    order = list(kept)
    text = _joined(lines, kept)
    while order and not fits(text, limit, encoding):
        kept.pop(order.pop())
        text = _joined(lines, kept)
    if not order:
        return truncate_to_tokens(task, limit, encoding=encoding, cut="word"), len(lines)
    return text, len(lines) - len(kept)


def _take(
    lines: Sequence[str],
    sizes: Sequence[int],
    order: Iterable[int],
    room: int,
    kept: dict[int, str],
    encoding: str,
) -> int:
    """Keep ``lines`` in ``order`` into ``kept`` while they fit ``room`` tokens (each costs
    its size and its line break); stops at the first that does not. A line longer than the
    whole room (a log pasted as one line) keeps its head. Returns the room left."""
    whole = room
    for i in order:
        if i in kept:
            continue
        text, cost = lines[i], sizes[i] + 1
        if sizes[i] >= whole:
            text = _clipped(text, room - 1, encoding)
            cost = count_tokens(text, encoding) + 1 if text else room + 1
        if cost > room:
            break
        kept[i] = text
        room -= cost
    return room


def _clipped(line: str, room: int, encoding: str) -> str:
    """The head of ``line`` within ``room`` tokens, cut after a word (within one, for a line
    with no break in its head)."""
    if room <= 1:
        return ""
    head = truncate_to_tokens(line, room, encoding=encoding, cut="word")
    if head.strip() == DEFAULT_ELISION.strip():
        head = truncate_to_tokens(line, room, encoding=encoding, cut="token")
    return head


def _last_frames(lines: Sequence[str]) -> list[int]:
    """Indexes of the last ``LAST_FRAMES`` traceback frame lines (the frame parser of
    retrieval decides what a frame is), innermost first, each followed by the line under it
    (its source), and after the innermost the lines down to the exception line."""
    frames = [i for i, line in enumerate(lines) if parse_frames(line)]
    out: list[int] = []
    for n, i in enumerate(reversed(frames[-LAST_FRAMES:])):
        out += [i, i + 1]
        if n == 0:
            out += _exception_lines(lines, i + 2)
    return [i for i in dict.fromkeys(out) if i < len(lines)]


def _exception_lines(lines: Sequence[str], start: int, limit: int = 4) -> list[int]:
    """The lines from ``start`` down to the first one that is not indented (the exception
    and its message), at most ``limit``."""
    out = []
    for i in range(start, min(start + limit, len(lines))):
        out.append(i)
        if lines[i][:1] not in (" ", "\t", "^", "~"):
            break
    return out


def _joined(lines: Sequence[str], kept: dict[int, str]) -> str:
    """The kept lines in task order, each run of cut lines as one marker line."""
    out: list[str] = []
    prev = -1
    for i in sorted(kept):
        if i > prev + 1:
            out.append(cut_mark(i - prev - 1))
        out.append(kept[i])
        prev = i
    if prev < len(lines) - 1:
        out.append(cut_mark(len(lines) - 1 - prev))
    return "\n".join(out)


__all__ = ["cap_task", "cut_mark"]
