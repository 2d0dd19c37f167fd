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
