"""Batch indexing: spawned local workers and a real local Ray, over fixture trees."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from batch_fixture import V1, graph_rows, two_versions

from ctxfast import Repository
from ctxfast.batch import (
    DEFAULT_THREADS_PER_WORKER,
    DEFAULT_WORKERS,
    Tree,
    index_many,
    read_list_file,
)
from ctxfast.errors import InvalidArgumentError


def by_root(summary) -> dict[str, dict]:
    return {Path(r["root"]).name: r for r in summary.results}


def test_defaults_are_pinned() -> None:
    assert (DEFAULT_WORKERS, DEFAULT_THREADS_PER_WORKER) == (2, 1)
    with pytest.raises(InvalidArgumentError):
        index_many([], engine="dask")
    with pytest.raises(InvalidArgumentError):
        index_many([], workers=0)


def test_local_batch_caches_records_failures_and_resumes(tmp_path: Path) -> None:
    v1, v2 = two_versions(tmp_path)
    missing = tmp_path / "gone"
    cache = tmp_path / "cache"
    # Seeding off: this is the parse cache's test (test_seeded_index has the batch's seeds).
    kw = {"cache_dir": cache, "index_root": tmp_path / "idx", "progress": False, "seed": False}
    # One worker: v1 is finished (and cached) before v2 starts.
    s = index_many([v1, missing, v2], workers=1, **kw)
    r = by_root(s)
    assert [r[n]["status"] for n in ("v1", "gone", "v2")] == ["indexed", "failed", "indexed"]
    assert "not a directory" in r["gone"]["error"]
    assert r["v1"]["cache_hits"] == 0 and r["v2"]["cache_hits"] == len(V1) - 1
    assert r["v1"]["peak_rss_mb"] > 0 and r["v1"]["pid"] != r["v2"]["pid"]
    # The batch's index is the one a plain index() builds.
    plain = Repository(v2, tmp_path / "plain")
    plain.index()
    assert graph_rows(Path(r["v2"]["index_dir"]) / "recon.db") == graph_rows(plain.graph_db)
    out = s.to_json()
    assert (out["trees"], out["indexed"], out["failed"], out["skipped"]) == (3, 2, 1, 0)
    assert out["cache_hits"] == len(V1) - 1
    json.dumps(out)

    # A rerun skips the finished trees and tries the failed one again.
    again = by_root(index_many([v1, missing, v2], workers=2, **kw))
    assert [again[n]["status"] for n in ("v1", "gone", "v2")] == ["skipped", "failed", "skipped"]
    # An index changed behind the stamp's back is not current any more.
    (Path(r["v1"]["index_dir"]) / "recon.db").unlink()
    (Path(r["v2"]["index_dir"]) / "recon.db").touch()
    redo = by_root(index_many([v1, v2], **kw))
    assert redo["v1"]["status"] == redo["v2"]["status"] == "indexed"
    assert redo["v2"]["files_parsed"] == 0  # an incremental refresh of a current index
    forced = index_many([v1], recheck=True, **kw)
    assert forced.results[0]["status"] == "indexed"


def test_index_many_cli(tmp_path: Path) -> None:
    v1, v2 = two_versions(tmp_path)
    listing = tmp_path / "trees.txt"
    listing.write_text(f"# two versions\n{v1.name}\n\nv2\t{tmp_path / 'own'}\nnope\n")
    trees = read_list_file(listing, str(tmp_path / "idx"))
    assert trees[1] == Tree(str(v2), str(tmp_path / "own"))
    assert Path(trees[0].index_dir).parent == tmp_path / "idx"
    summary = tmp_path / "summary.json"
    cmd = [sys.executable, "-m", "ctxfast.cli", "index-many", str(listing)]
    cmd += ["--index-root", str(tmp_path / "idx"), "--no-cache", "--summary", str(summary)]
    p = subprocess.run(cmd, capture_output=True, text=True, check=False)
    assert p.returncode == 1, p.stderr  # one tree failed
    out = json.loads(summary.read_text())
    assert (out["indexed"], out["failed"], out["cache_dir"]) == (2, 1, None)
    assert (tmp_path / "own" / "recon.db").is_file()
    p = subprocess.run(cmd, capture_output=True, text=True, check=False)
    assert "2 skipped" in p.stderr


def test_ray_engine_on_a_local_ray(tmp_path: Path) -> None:
    # Ray is an optional extra (ctxfast[ray]): without it this engine is not tested.
    ray = pytest.importorskip("ray")

    v1, v2 = two_versions(tmp_path)
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        s = index_many(
            [v1, v2, tmp_path / "gone"],
            engine="ray",
            cache_dir=tmp_path / "cache",
            index_root=tmp_path / "idx",
            progress=False,
        )
    finally:
        ray.shutdown()
    r = by_root(s)
    assert [r[n]["status"] for n in ("v1", "v2", "gone")] == ["indexed", "indexed", "failed"]
    plain = Repository(v2, tmp_path / "plain")
    plain.index()
    assert graph_rows(Path(r["v2"]["index_dir"]) / "recon.db") == graph_rows(plain.graph_db)
    assert s.to_json()["engine"] == "ray"
    assert (tmp_path / "cache" / "parse-cache.db").is_file()
