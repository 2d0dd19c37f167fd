"""Where the shared parse cache lives.

Indexes of different trees that share files (versions of one repository in a benchmark
harness) reuse each other's per-file extractions through a content-addressed cache in one
directory (the Rust core's ``graph::parse_cache``). The directory is per user, not per repo,
so every index on the machine — and every batch worker that sees the same path — shares it.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from pathlib import Path

CACHE_DIR_ENV = "CTXFAST_CACHE_DIR"


def user_cache_dir() -> Path:
    """``$CTXFAST_CACHE_DIR``, else the platform's per-user cache directory + ``ctxfast``
    (``$XDG_CACHE_HOME`` or ``~/.cache`` on Linux, ``~/Library/Caches`` on macOS,
    ``%LOCALAPPDATA%`` on Windows)."""
    if os.environ.get(CACHE_DIR_ENV):
        return Path(os.environ[CACHE_DIR_ENV])
    if sys.platform == "darwin":
        base = Path.home() / "Library" / "Caches"
    elif sys.platform == "win32":
        base = Path(os.environ.get("LOCALAPPDATA") or Path.home() / "AppData" / "Local")
    else:
        base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "ctxfast"


@dataclass(frozen=True)
class ParseCache:
    """A parse cache directory and its payload bound (``None``: the core's default, 2 GiB;
    least recently used entries are evicted past it)."""

    dir: Path = field(default_factory=lambda: user_cache_dir() / "parse")
    max_bytes: int | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "dir", Path(self.dir))
        if self.max_bytes is not None and self.max_bytes <= 0:
            raise ValueError("ParseCache.max_bytes must be positive")
