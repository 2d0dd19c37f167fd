"""Retrieval state stored beside the index, so a fresh process does not rebuild it.

An agent runs ctxfast as a new process per tool call. What retrieval derives from one index
state (the BM25 indexes over files, definitions and API descriptions, the string-literal
fragments, the definition tables) takes seconds to build on a large repository and
milliseconds to read back, so each piece is written once to ``<index_dir>/state/`` under the
index's content key (the hash of every indexed file's content hash) and read by every later
process that sees the same key. A new key (any file changed) makes the old files stale; the
first write under the new key removes them. The store is a cache: a missing, unreadable or
corrupt piece is rebuilt, and a directory that cannot be written only costs the speed-up.
"""

from __future__ import annotations

import contextlib
import gc
import logging
import os
import pickle
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")

STATE_DIRNAME = "state"
#: Length of the content-key prefix that names a state file (64 bits of a SHA-256).
KEY_CHARS = 16
#: Bump when the layout of a stored piece changes, so old files are never misread.
FORMAT = 3

log = logging.getLogger(__name__)


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """Pauses the cyclic garbage collector while plain data is read back or indexed.

    A state piece is tens of thousands of tuples and strings; allocating them triggers
    collections that traverse every object made so far, for nothing, since such data holds
    no reference cycles (reference counting frees it). The collector is re-enabled after,
    unless the host program had it off."""
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()


class StateStore:
    """Pieces of retrieval state of one index state, each stored as one file."""

    def __init__(self, index_dir: Path, key: str) -> None:
        self.dir = index_dir / STATE_DIRNAME
        self.prefix = f"{key[:KEY_CHARS]}.v{FORMAT}."
        self._swept = False

    def path(self, name: str) -> Path:
        return self.dir / f"{self.prefix}{name}"

    def get(
        self,
        name: str,
        build: Callable[[], T],
        dump: Callable[[T], bytes],
        load: Callable[[bytes], T],
    ) -> T:
        """The piece ``name``: read back if stored for this key, else built and stored."""
        path = self.path(name)
        try:
            data = path.read_bytes()
        except OSError:
            pass
        else:
            try:
                with gc_paused():
                    return load(data)
            except Exception as exc:  # a corrupt or foreign file: rebuild it
                log.warning("rebuilding unreadable retrieval state %s: %s", path, exc)
        value = build()
        self._store(path, dump(value))
        return value

    def get_pickled(self, name: str, build: Callable[[], T]) -> T:
        """:meth:`get` for plain Python data (tuples, lists, dicts of str and int)."""
        return self.get(
            name, build, lambda v: pickle.dumps(v, protocol=pickle.HIGHEST_PROTOCOL), pickle.loads
        )

    def _store(self, path: Path, data: bytes) -> None:
        try:
            self.dir.mkdir(parents=True, exist_ok=True)
            if not self._swept:
                self._sweep()
            fd, tmp = tempfile.mkstemp(dir=self.dir, prefix=".tmp-")
            try:
                with os.fdopen(fd, "wb") as fh:
                    fh.write(data)
                os.replace(tmp, path)  # readers see the old file or the whole new one
            except BaseException:
                Path(tmp).unlink(missing_ok=True)
                raise
        except OSError as exc:
            log.info("retrieval state not stored (%s): %s", path, exc)

    def _sweep(self) -> None:
        """Removes the files of other index states (temp files are left to their writers,
        which may be live processes storing the same new state)."""
        self._swept = True
        for p in self.dir.iterdir():
            if not p.name.startswith((self.prefix, ".tmp-")):
                p.unlink(missing_ok=True)


__all__ = ["STATE_DIRNAME", "StateStore", "gc_paused"]
