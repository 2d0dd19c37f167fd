"""asv benchmark suites (see benches/README.md); shared fixtures live here."""

import os
import shutil
import sysconfig

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


def cache_root(name: str) -> str:
    """A new directory ``name`` in the working directory, for what a ``setup_cache`` builds.
    asv runs ``setup_cache`` and the timings in a temporary working directory of its own and
    removes it after the run; a ``tempfile.mkdtemp`` here outlived every run (114 MB each)."""
    root = os.path.abspath(name)
    os.makedirs(root)
    return root


def bench_tree(name: str) -> str:
    """The tree a suite times: ``$CTXFAST_BENCH_TREE`` when set (e.g. Django 4.2), else a
    fresh copy of :data:`PACKAGES` in :func:`cache_root` ``(name)``; call it from
    ``setup_cache``."""
    given = os.environ.get("CTXFAST_BENCH_TREE")
    if given:
        return given
    tree = os.path.join(cache_root(name), "src")
    copy_stdlib_packages(tree)
    return tree
