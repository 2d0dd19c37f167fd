"""The index directory's own entries, made safe before anything opens them.

A repository is untrusted, and so is a ``.ctxfast/`` it ships: ``.ctxfast`` itself, or an entry
in it (``state``, ``.gitignore``, ``api.db``), may be a symbolic link to a directory or file
outside the tree (``~/.ssh``), and following it would sweep, overwrite or rewrite that target.
ctxfast never makes a link or special file there, so any it finds is removed — the link itself,
never what it points at — and the entry is made again: a shipped index costs a rebuild, nothing
more. The core does the same for ``recon.db`` and its side files under its build lock.
"""

from __future__ import annotations

import contextlib
import logging
import os
import stat
from pathlib import Path

log = logging.getLogger(__name__)

#: What ``<index_dir>/.gitignore`` holds: everything in the directory is ignored.
GITIGNORE = "# created by ctxfast: the index is a rebuildable cache\n*\n"


def drop_odd(path: Path, *, want_dir: bool) -> bool:
    """Removes ``path`` when it is a link, or not the kind of entry the index keeps there (a
    directory when ``want_dir``, else a regular file); True when something was removed. A
    missing entry is left missing."""
    try:
        st = os.lstat(path)
    except OSError:
        return False
    if stat.S_ISDIR(st.st_mode) if want_dir else stat.S_ISREG(st.st_mode):
        return False
    try:
        if stat.S_ISDIR(st.st_mode):
            import shutil  # a real directory where a file belongs: rare, never followed

            shutil.rmtree(path)
        else:
            os.unlink(path)
    except OSError as exc:
        log.warning("cannot remove %s (not what the index keeps there): %s", path, exc)
        return False
    log.warning("removed %s: not what the index keeps there (a link or special file)", path)
    return True


def prepare(index_dir: Path, *, repository_owned: bool) -> None:
    """Makes ``index_dir`` a real directory holding a ``.gitignore`` of ``*`` (so the index
    never shows up in the user's ``git status``). ``repository_owned`` is true for the default
    ``<repo>/.ctxfast``, which the repository may have shipped as a link; a directory the
    caller chose is theirs, link or not. Failures are left for the native run to report."""
    if repository_owned:
        drop_odd(index_dir, want_dir=True)
    with contextlib.suppress(OSError):
        # Never the repository itself: a tree deleted since is not made again by its index.
        index_dir.mkdir(mode=0o700, parents=not repository_owned, exist_ok=True)
        ignore = index_dir / ".gitignore"
        drop_odd(ignore, want_dir=False)
        if not ignore.exists():
            write_new(ignore, GITIGNORE.encode())


def write_new(path: Path, data: bytes) -> None:
    """Creates ``path`` with ``data``, never through a link and never over an existing entry."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)


__all__ = ["GITIGNORE", "drop_odd", "prepare", "write_new"]
