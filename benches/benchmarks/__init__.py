"""asv benchmark suites (see benches/README.md); shared fixtures live here."""

import os
import shutil
import sysconfig
from collections.abc import Callable

#: Standard-library packages copied as the real-code tree the suites index (~100 files).
PACKAGES = ("email", "json", "http", "urllib", "logging", "importlib")


def copy_stdlib_packages(dest: str) -> None:
    """Copies :data:`PACKAGES` (without tests and caches) under ``dest``."""
    stdlib = sysconfig.get_paths()["stdlib"]
    for pkg in PACKAGES:
        shutil.copytree(
            os.path.join(stdlib, pkg),
            os.path.join(dest, pkg),
            ignore=shutil.ignore_patterns("__pycache__", "tests", "test"),
        )


#: The standard library's own code, the tree :func:`copy_stdlib` makes: every top-level
#: module and these packages (those the running Python has), about 630 files and 12 MB.
#: Time to the first window is a ratio to an ``ast`` walk of the same files; on the ~100
#: files of :data:`PACKAGES` that walk takes 0.3 s, less than a process's start and a
#: compose, so the ratio swung 1.4-2.0 between runs of the same code.
STDLIB_PACKAGES = (
    *PACKAGES,
    "asyncio",
    "collections",
    "concurrent",
    "ctypes",
    "curses",
    "dbm",
    "distutils",
    "encodings",
    "html",
    "idlelib",
    "multiprocessing",
    "re",
    "sqlite3",
    "tkinter",
    "tomllib",
    "unittest",
    "wsgiref",
    "xml",
    "xmlrpc",
    "zoneinfo",
)


def copy_stdlib(dest: str) -> None:
    """Copies the standard library's top-level modules and :data:`STDLIB_PACKAGES` (their
    ``.py`` files, without tests) under ``dest``."""
    stdlib = sysconfig.get_paths()["stdlib"]
    os.makedirs(dest)
    for name in sorted(os.listdir(stdlib)):
        if name.endswith(".py"):
            shutil.copy2(os.path.join(stdlib, name), os.path.join(dest, name))
    for pkg in STDLIB_PACKAGES:
        if os.path.isdir(os.path.join(stdlib, pkg)):
            shutil.copytree(
                os.path.join(stdlib, pkg),
                os.path.join(dest, pkg),
                ignore=_not_code,
            )


def _not_code(directory: str, names: list[str]) -> list[str]:
    """What :func:`copy_stdlib` leaves out: tests, caches and every file but Python's."""
    tests = {"__pycache__", "tests", "test", "idle_test"}
    return [
        n
        for n in names
        if n in tests or (not n.endswith(".py") and not os.path.isdir(os.path.join(directory, n)))
    ]


def cache_root(name: str) -> str:
    """A new directory ``name`` in the working directory, for what a ``setup_cache`` builds.
    asv runs ``setup_cache`` and the timings in a temporary working directory of its own and
    removes it after the run; a ``tempfile.mkdtemp`` here outlived every run (114 MB each)."""
    root = os.path.abspath(name)
    os.makedirs(root)
    return root


def bench_tree(name: str, copy: Callable[[str], None] = copy_stdlib_packages) -> str:
    """The tree a suite times: ``$CTXFAST_BENCH_TREE`` when set (e.g. Django 4.2), else a
    fresh tree made by ``copy`` (:data:`PACKAGES` by default, :func:`copy_stdlib` for a
    bigger one) in :func:`cache_root` ``(name)``; call it from ``setup_cache``."""
    given = os.environ.get("CTXFAST_BENCH_TREE")
    if given:
        return given
    tree = os.path.join(cache_root(name), "src")
    copy(tree)
    return tree
