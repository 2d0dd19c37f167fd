"""A fresh process imports only what its command needs: an agent runs ``ctxfast`` once per
tool call, and every module imported at start is paid on every call. The root package loads
its public names on first use; the command line's parser names every subcommand without
importing numpy, the harness toolkit or the evaluation harness."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from recon_fixture import write_project

import ctxfast


def _modules_after(code: str) -> set[str]:
    """The modules a fresh interpreter holds after running ``code``."""
    out = subprocess.run(
        [sys.executable, "-c", f"{code}\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return set(json.loads(out.splitlines()[-1]))


def test_importing_the_package_loads_no_layer():
    loaded = {m for m in _modules_after("import ctxfast") if m.startswith("ctxfast")}
    assert loaded == {"ctxfast", "ctxfast._native", "ctxfast.logs"}


def test_building_the_command_line_parser_imports_no_heavy_module():
    loaded = _modules_after("from ctxfast.cli import build_parser\nbuild_parser()")
    for heavy in ("numpy", "tqdm", "mcp", "ctxfast.harness", "ctxfast.recon.escalation"):
        assert heavy not in loaded, heavy


def test_the_compose_path_imports_no_module_it_does_not_use():
    loaded = _modules_after(
        "import ctxfast.cli.compose, ctxfast.construct.compose, ctxfast.progress\n"
        "ctxfast.progress.IndexBar(enabled=False)"
    )
    for heavy in ("numpy", "tqdm", "mcp", "ctxfast.recon.escalation", "ctxfast.recon.answers"):
        assert heavy not in loaded, heavy
    assert "ctxfast.recon.ego" not in loaded


def test_a_repo_map_in_a_new_process_imports_no_numpy(tmp_path: Path):
    """The map's PageRank is native: numpy's import alone cost a new process's map more
    than the map itself on a small tree."""
    root = write_project(tmp_path)
    ctxfast.Repository(root).index()
    loaded = _modules_after(
        f"from ctxfast import Repository\nr = Repository({str(root)!r})\n"
        "assert r.repo_map(refresh=False)\n"  # the global ranks: computed, then stored
        "assert r.repo_map('connect in pkg/db.py', refresh=False)"
    )
    assert "ctxfast.recon.pagerank" in loaded
    for heavy in ("numpy", "tqdm", "mcp", "ctxfast.harness"):
        assert heavy not in loaded, heavy


def test_every_public_name_resolves_and_is_listed():
    for name in ctxfast.__all__:
        assert getattr(ctxfast, name) is not None, name
    assert set(ctxfast.__all__) <= set(dir(ctxfast))
    assert ctxfast.compact.__name__ == "ctxfast.harness.compact"
    assert ctxfast.compose.__module__ == "ctxfast.construct.compose"


def test_the_map_path_imports_no_retrieval_stage_and_no_manifest():
    """A repo map, a graph query or a status read in a new process (one MCP or CLI call)
    needs the index and the map, not the retrieval pipeline, its settings or the manifest
    readers, whose imports cost more than a small repository's map."""
    loaded = _modules_after(
        "import ctxfast.cli.map, ctxfast.cli.graph, ctxfast.cli.status, ctxfast.repository\n"
        "ctxfast.cli.build_parser()"
    )
    for stage in (
        "ctxfast.retrieval.pipeline",
        "ctxfast.retrieval.config",
        "ctxfast.retrieval.localize",
        "ctxfast.recon.manifest",
    ):
        assert stage not in loaded, stage
