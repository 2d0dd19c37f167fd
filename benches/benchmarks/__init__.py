"""asv benchmark suites (see benches/README.md); shared fixtures live here."""

import os
import shutil
import sysconfig
import tempfile

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


def bench_tree(prefix: str) -> str:
    """The tree a suite times: ``$CTXFAST_BENCH_TREE`` when set (e.g. Django 4.2), else a
    fresh copy of :data:`PACKAGES` in a new temporary directory named by ``prefix``."""
    given = os.environ.get("CTXFAST_BENCH_TREE")
    if given:
        return given
    tree = os.path.join(tempfile.mkdtemp(prefix=prefix), "src")
    copy_stdlib_packages(tree)
    return tree
