"""State derived from the index, stored beside it, so a fresh process does not rebuild it.

An agent runs ctxfast as a new process per tool call. What retrieval derives from one index
state (the BM25 indexes over files, definitions and API descriptions, the string-literal
fragments, the definition tables) and what the repo map reads (its file graph, its global
ranks) take seconds to build on a large repository and milliseconds to read back, so each
piece is written once to ``<index_dir>/state/`` under the index's content key
(:func:`content_key_of`) and read by every later process that sees the same key. A new key
(any file changed) makes the old files stale; the first write under the new key removes
them. The store is a cache: a missing, unreadable or
corrupt piece is rebuilt, and a directory that cannot be written only costs the speed-up.

The directory is untrusted (a repository can ship its ``.ctxfast/``, and a piece's name is a
hash anyone can compute from the tree), so nothing read from it can execute or mislead: plain
data is stored as JSON (values only: unlike pickle or marshal it cannot even describe code), every
piece carries an HMAC-SHA256 tag over its name and bytes under the user's key
(:mod:`ctxfast.userkey`) and is decoded only when the tag verifies, and files are opened without
following links or blocking (:func:`ctxfast.confine.open_confined`).
"""

from __future__ import annotations

import contextlib
import gc
import hashlib
import hmac
import json
import logging
import os
import tempfile
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TypeVar

from ctxfast.confine import open_confined
from ctxfast.index_dir import drop_odd
from ctxfast.userkey import user_key

T = TypeVar("T")

STATE_DIRNAME = "state"
#: Length of the content-key prefix that names a state file (64 bits of a SHA-256).
KEY_CHARS = 16
#: Bump when the layout of a stored piece changes, so old files are never misread.
FORMAT = 5
#: What every piece starts with, then its tag, then the payload.
MAGIC = b"ctxfast-state\x00"
TAG_BYTES = 32
#: A piece larger than this is not read back (rebuilt instead): no stored file can make a
#: reader allocate without bound.
MAX_PIECE_BYTES = 1 << 31
#: Temporary files are named ``.tmp-<pid>-…`` so a sweep can tell a live writer's from one a
#: killed process left behind.
TMP_PREFIX = ".tmp-"

log = logging.getLogger(__name__)


def content_key_of(rows: Iterable[tuple[str, str, str | None]]) -> str:
    """The key of an index's content: the hash of every file's (path, content hash, language
    it was parsed as), in path order. The same bytes read by another grammar (a `.h` header
    read as C++ once the tree turned out to be C++) give other definitions, so a state built
    from the old parse must not be reused. Every reader of the store keys it this way: one
    key per content, so no reader's sweep removes another's pieces."""
    return hashlib.sha256("\n".join(f"{p}:{s}:{lang}" for p, s, lang in rows).encode()).hexdigest()


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
    """Pieces of state of one index content, each stored as one file."""

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
        """The piece ``name``: read back if stored for this key and its tag verifies, else
        built and stored."""
        path = self.path(name)
        payload = self._read(path)
        if payload is not None:
            try:
                with gc_paused():
                    return load(payload)
            except Exception as exc:  # verified yet undecodable: another build's layout
                log.warning("rebuilding unreadable retrieval state %s: %s", path, exc)
        value = build()
        self._store(path, dump(value))
        return value

    def get_plain(self, name: str, build: Callable[[], T]) -> T:
        """:meth:`get` for JSON data (dicts with str keys, lists, str, int; a tuple comes back
        as a list). The caller shapes its value for it, as the large pieces do
        (``LiteralIndex.to_plain``, the API index's locations)."""
        value: T = self.get(name, build, _dump_json, json.loads)
        return value

    def read(self, name: str) -> bytes | None:
        """The payload of the piece ``name`` if stored for this key and its tag verifies;
        nothing is built or stored."""
        return self._read(self.path(name))

    def names(self) -> list[str]:
        """The names of the pieces stored for this key, sorted."""
        try:
            found = [e.name for e in os.scandir(self.dir) if e.name.startswith(self.prefix)]
        except OSError:
            return []
        return sorted(n[len(self.prefix) :] for n in found)

    def others(self) -> list[StateStore]:
        """The stores of the other index states whose pieces are in the directory, the most
        recently written first (a refresh carries from the state it replaces, which the
        sweep of the first write under its own key then removes)."""
        found: dict[str, float] = {}
        try:
            entries = list(os.scandir(self.dir))
        except OSError:
            return []
        suffix = f".v{FORMAT}."
        for entry in entries:
            key, sep, _ = entry.name.partition(suffix)
            if not sep or len(key) != KEY_CHARS or entry.name.startswith(self.prefix):
                continue
            with contextlib.suppress(OSError):
                mtime = entry.stat(follow_symlinks=False).st_mtime
                found[key] = max(found.get(key, mtime), mtime)
        index_dir = self.dir.parent
        return [StateStore(index_dir, k) for k in sorted(found, key=lambda k: (-found[k], k))]

    def _tag(self, path: Path, payload: bytes) -> bytes:
        # HMAC-SHA256: hardware SHA makes it the cheapest keyed MAC here (22 ms for sympy's
        # 30 MB of pieces against 33 ms for keyed BLAKE2b).
        mac = hmac.new(user_key(), b"ctxfast-state\x00", hashlib.sha256)
        mac.update(path.name.encode("utf-8", "surrogateescape") + b"\x00")
        mac.update(payload)
        return mac.digest()

    def _read(self, path: Path) -> bytes | None:
        """The payload stored at ``path`` if its tag verifies; ``None`` when missing, and a
        logged ``None`` when unreadable or not written by this user's ctxfast. The header is
        read apart from the payload, so the payload (tens of MB) is never copied."""
        head = len(MAGIC) + TAG_BYTES
        try:
            with open_confined(self.dir.parent, f"{STATE_DIRNAME}/{path.name}") as fh:
                size = os.fstat(fh.fileno()).st_size
                if size > MAX_PIECE_BYTES:
                    log.info("retrieval state %s not read: over %d bytes", path, MAX_PIECE_BYTES)
                    return None
                # Positioned reads into exactly sized buffers: a buffered read after the
                # header would join its buffer to the rest, copying the whole payload.
                header = os.pread(fh.fileno(), head, 0)
                payload = os.pread(fh.fileno(), max(size - head, 0), head)
        except FileNotFoundError:
            return None
        except OSError as exc:
            log.info("retrieval state %s not read: %s", path, exc)
            return None
        if (
            len(header) < head
            or not header.startswith(MAGIC)
            or not hmac.compare_digest(header[len(MAGIC) :], self._tag(path, payload))
        ):
            log.warning("rebuilding retrieval state %s: not written by this user's ctxfast", path)
            return None
        return payload

    def _store(self, path: Path, payload: bytes) -> None:
        try:
            drop_odd(self.dir, want_dir=True)
            self.dir.mkdir(mode=0o700, parents=True, exist_ok=True)
            if not self._swept:
                self._sweep()
            fd, tmp = tempfile.mkstemp(dir=self.dir, prefix=f"{TMP_PREFIX}{os.getpid()}-")
            try:
                with os.fdopen(fd, "wb") as fh:
                    fh.write(MAGIC + self._tag(path, payload))
                    fh.write(payload)
                os.replace(tmp, path)  # readers see the old file or the whole new one
            except BaseException:
                Path(tmp).unlink(missing_ok=True)
                raise
        except OSError as exc:
            log.info("retrieval state not stored (%s): %s", path, exc)

    def _sweep(self) -> None:
        """Removes the files of other index states, and temporary files whose writer is gone
        (a live process may be storing the same new state: its files are left alone)."""
        self._swept = True
        for p in self.dir.iterdir():
            if p.name.startswith(TMP_PREFIX):
                if _writer_alive(p.name):
                    continue
            elif p.name.startswith(self.prefix):
                continue
            with contextlib.suppress(OSError):
                p.unlink()


def _dump_json(value: object) -> bytes:
    # ASCII with escapes: a lone surrogate (a file name decoded with surrogateescape) round-
    # trips as ``\udcxx`` instead of making bytes no UTF-8 decoder reads back.
    return json.dumps(value, separators=(",", ":")).encode("ascii")


def _writer_alive(name: str) -> bool:
    """True when the temporary file ``name`` (``.tmp-<pid>-…``) may belong to a live process:
    its pid runs, or the name carries none (an older layout's: left to age out)."""
    pid = name[len(TMP_PREFIX) :].split("-", 1)[0]
    if not pid.isdigit():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except OSError:  # exists, owned by someone else
        return True
    return True


__all__ = ["STATE_DIRNAME", "StateStore", "content_key_of", "gc_paused"]
