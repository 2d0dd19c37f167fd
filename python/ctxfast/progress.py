"""Progress reporting for long native runs (indexing): poll counters from a helper thread.

The Rust indexer releases the GIL and never calls back into Python (a callback would have
to take the GIL from inside its worker threads); it only bumps atomic counters and checks a
cancel flag. This module runs the native call on a helper thread, polls the counters from
the calling thread (where Ctrl-C arrives, and turns into a cancel of the run), and turns them
into a ``tqdm`` bar on stderr for the CLI — shown only when stderr is a terminal, so piped
output and logs stay clean.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable
from typing import Any, TypeVar, cast

T = TypeVar("T")

#: ``report(stage, files_done, files_total)``; stage is discover, parse, resolve, write or done.
ProgressCallback = Callable[[str, int, int], None]

#: Seconds between two polls of the counters (a bar refresh rate, not a correctness knob).
POLL_INTERVAL_S = 0.1


def run_polled(
    work: Callable[[], T],
    snapshot: Callable[[], tuple[str, int, int]],
    report: ProgressCallback | None,
    interval: float = POLL_INTERVAL_S,
    cancel: Callable[[], None] | None = None,
) -> T:
    """Runs ``work()`` on a helper thread while the calling thread reports ``snapshot()``
    every ``interval`` seconds (``report=None``: only waits).

    The calling thread stays in Python, so Ctrl-C reaches it within ``interval`` even while
    ``work`` is in native code: ``cancel()`` is then called, ``work`` is waited for (it
    should stop promptly once cancelled) and the ``KeyboardInterrupt`` re-raised. ``report``
    always sees the final snapshot after ``work`` returns. An exception raised by ``report``
    stops the reporting and is re-raised once ``work`` is done, so a broken callback is
    neither silent nor able to interrupt a half-written index.
    """
    done = threading.Event()
    outcome: list[Any] = []
    failure: list[BaseException] = []

    def run() -> None:
        try:
            outcome.append(work())
        except BaseException as exc:  # re-raised in the caller's thread
            failure.append(exc)
        finally:
            done.set()

    worker = threading.Thread(target=run, name="ctxfast-index", daemon=True)
    report_failure: BaseException | None = None
    try:
        worker.start()  # inside: Ctrl-C may land while the thread starts, the run already on
        while not done.wait(interval):
            if report is not None and report_failure is None:
                try:
                    report(*snapshot())
                except Exception as exc:
                    report_failure = exc
    except BaseException:  # KeyboardInterrupt (or SystemExit from a signal handler)
        if cancel is not None:
            cancel()
        if worker.is_alive():
            worker.join()
        raise
    worker.join()
    if failure:
        raise failure[0]
    if report_failure is not None:
        raise report_failure
    if report is not None:
        report(*snapshot())
    return cast(T, outcome[0])


def _stderr_size(default: tuple[int, int] = (80, 24)) -> tuple[int, int]:
    """(columns, lines) of the terminal on stderr, each replaced by its default when the
    terminal reports 0 (a fresh pty does, and tqdm would then hide or blank the bar)."""
    try:
        size = os.get_terminal_size(sys.stderr.fileno())
    except (OSError, ValueError):
        return default
    return (size.columns or default[0], size.lines or default[1])


class IndexBar:
    """A ``tqdm`` bar over files parsed, labelled with the current stage (stderr, TTY only)."""

    def __init__(self, desc: str = "indexing", enabled: bool | None = None) -> None:
        self._desc = desc
        self._bar: Any = None
        if not (sys.stderr.isatty() if enabled is None else enabled):
            return  # no bar, and no tqdm import: a piped fresh process pays nothing for it
        from tqdm import tqdm

        cols, rows = _stderr_size()
        self._bar = tqdm(
            total=0,
            desc=desc,
            unit="file",
            file=sys.stderr,
            leave=False,
            ncols=cols,
            nrows=rows,
        )

    def __call__(self, stage: str, done: int, total: int) -> None:
        if self._bar is None:
            return
        if total and self._bar.total != total:
            self._bar.total = total
        self._bar.n = min(done, total) if total else done
        self._bar.set_description(f"{self._desc} ({stage})", refresh=False)
        self._bar.refresh()

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()

    def __enter__(self) -> IndexBar:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
