"""The ``ctxfast`` logger: silent unless configured, and the native core's messages reach it."""

from __future__ import annotations

import logging
import os
import subprocess
import sys

from recon_fixture import write_project

from ctxfast import Repository
from ctxfast.logs import NATIVE_LOGGER_NAME


def test_native_stage_timings_reach_the_ctxfast_logger(tmp_path, caplog):
    repo = Repository(write_project(tmp_path / "proj"))
    with caplog.at_level(logging.DEBUG, logger="ctxfast"):
        repo.index()
    native = [r.getMessage() for r in caplog.records if r.name == NATIVE_LOGGER_NAME]
    assert native[0].startswith("index: discover done at ")
    assert native[-1].startswith("index: commit done at ")


def test_the_library_prints_nothing_and_the_cli_level_is_configurable(tmp_path):
    root = write_project(tmp_path / "proj")
    code = f"import ctxfast; ctxfast.Repository({str(root)!r}).index()"
    quiet = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert quiet.returncode == 0 and quiet.stderr == "" and quiet.stdout == ""
    loud = subprocess.run(
        [sys.executable, "-m", "ctxfast", "index", str(root)],
        capture_output=True,
        text=True,
        env={**os.environ, "CTXFAST_LOG": "debug"},
    )
    assert "ctxfast: DEBUG: index: discover done at" in loud.stderr  # a no-op refresh here
