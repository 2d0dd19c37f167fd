"""The user's secret key: what tells an index this user's ctxfast wrote from one a repository
shipped.

A clone can bring its own ``.ctxfast/`` along, holding a ``recon.db`` whose rows describe other
source and retrieval state files of any content. Everything ctxfast stores under an index
directory is therefore tagged with a keyed MAC (the core's owner stamp in ``recon.db`` and
``api.db``, an HMAC-SHA256 over each retrieval-state piece) and used only when the tag
verifies; without this key nobody can make one that does.

The key is 32 random bytes in ``$CTXFAST_CONFIG_DIR/index.key`` (default
``$XDG_CONFIG_HOME/ctxfast`` or ``~/.config/ctxfast``), created on first use, readable by the
user only. When that file cannot be made or read (a read-only home), the process uses a key of
its own: nothing it finds verifies, so every index is rebuilt once per process, which costs
time but trusts nothing.
"""

from __future__ import annotations

import contextlib
import errno
import hmac
import logging
import os
import secrets
import stat
import sys
import threading
from pathlib import Path

from ctxfast import _native

CONFIG_DIR_ENV = "CTXFAST_CONFIG_DIR"
KEY_FILE = "index.key"
KEY_BYTES = 32

log = logging.getLogger(__name__)
_lock = threading.Lock()
_cached: tuple[Path, bytes] | None = None


def config_dir() -> Path:
    """``$CTXFAST_CONFIG_DIR``, else the platform's per-user configuration directory +
    ``ctxfast`` (``$XDG_CONFIG_HOME`` or ``~/.config`` on Linux, ``~/Library/Application
    Support`` on macOS)."""
    if os.environ.get(CONFIG_DIR_ENV):
        return Path(os.environ[CONFIG_DIR_ENV])
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Application Support" / "ctxfast"
    return Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config") / "ctxfast"


def user_key() -> bytes:
    """This user's key (read once per process and configuration directory)."""
    global _cached
    where = config_dir() / KEY_FILE
    with _lock:
        if _cached is None or _cached[0] != where:
            _cached = (where, _load_or_create(where))
        return _cached[1]


def new_stamp(db_path: str | os.PathLike[str]) -> tuple[str, str]:
    """A fresh ``(nonce, tag)`` owner stamp for the database at ``db_path`` (the core's rule,
    ``graph::owner``: the tag binds the nonce and the database's place under the key)."""
    nonce = secrets.token_hex(16)
    return nonce, _native.index_owner_tag(user_key(), nonce, os.fspath(db_path))


def stamp_verifies(nonce: object, tag: object, db_path: str | os.PathLike[str]) -> bool:
    """True when ``(nonce, tag)`` is an owner stamp this user's ctxfast made for ``db_path``."""
    if not isinstance(nonce, str) or not isinstance(tag, str):
        return False
    want = _native.index_owner_tag(user_key(), nonce, os.fspath(db_path))
    return hmac.compare_digest(want, tag)


def _load_or_create(path: Path) -> bytes:
    try:
        return _read(path)
    except FileNotFoundError:
        pass
    except OSError as exc:
        return _ephemeral(path, exc)
    key = secrets.token_bytes(KEY_BYTES)
    tmp = path.with_name(f".{KEY_FILE}.{os.getpid()}.{secrets.token_hex(4)}")
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "wb") as fh:
            fh.write(key)
        # A hard link appears whole or not at all, and fails if another process got there
        # first: every process ends up with the one key on disk.
        os.link(tmp, path)
    except FileExistsError:
        try:
            return _read(path)
        except OSError as exc:
            return _ephemeral(path, exc)
    except OSError as exc:
        return _ephemeral(path, exc)
    finally:
        with contextlib.suppress(OSError):
            tmp.unlink()
    return key


def _read(path: Path) -> bytes:
    """The key at ``path``: a regular file of this user, not a link, writable by nobody else,
    of exactly :data:`KEY_BYTES` bytes."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    with os.fdopen(fd, "rb") as fh:
        st = os.fstat(fh.fileno())
        if not stat.S_ISREG(st.st_mode) or st.st_mode & 0o022 or st.st_uid != os.getuid():
            raise OSError(errno.EPERM, "not a private regular file of this user", str(path))
        data = fh.read(KEY_BYTES + 1)
    if len(data) != KEY_BYTES:
        # A short key is one a writer is still filling in, or damage: wait for neither.
        raise OSError(errno.EINVAL, f"not a {KEY_BYTES}-byte key", str(path))
    return data


def _ephemeral(path: Path, exc: OSError) -> bytes:
    log.warning(
        "ctxfast key %s unusable (%s): this process trusts no stored index and rebuilds "
        "what it reads (set %s to a writable directory)",
        path,
        exc,
        CONFIG_DIR_ENV,
    )
    return secrets.token_bytes(KEY_BYTES)


__all__ = ["CONFIG_DIR_ENV", "config_dir", "new_stamp", "stamp_verifies", "user_key"]
