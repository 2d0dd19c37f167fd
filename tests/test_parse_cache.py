"""The shared parse cache through the Python API: where it lives, and that a second version
of a tree takes its unchanged files from the cache and still builds the identical graph."""

from __future__ import annotations

from pathlib import Path

import pytest
from batch_fixture import V1, graph_rows, two_versions

from ctxfast import ParseCache, Repository
from ctxfast.recon.parse_cache import CACHE_DIR_ENV, user_cache_dir


def test_default_cache_dir(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv(CACHE_DIR_ENV, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert user_cache_dir() == tmp_path / "xdg" / "ctxfast"
    assert ParseCache().dir == tmp_path / "xdg" / "ctxfast" / "parse"
    assert ParseCache().max_bytes is None  # the core's bound (2 GiB, pinned in Rust)
    monkeypatch.setenv(CACHE_DIR_ENV, str(tmp_path / "mine"))
    assert ParseCache().dir == tmp_path / "mine" / "parse"
    with pytest.raises(ValueError):
        ParseCache(tmp_path, max_bytes=0)
    assert Repository(tmp_path).parse_cache is None


def test_second_version_hits_the_cache_and_matches_a_cold_build(tmp_path: Path) -> None:
    v1, v2 = two_versions(tmp_path)
    cache = ParseCache(tmp_path / "cache")
    s1 = Repository(v1, tmp_path / "i1", parse_cache=cache).index()
    assert (s1.files_parsed, s1.cache_hits) == (len(V1), 0)
    repo2 = Repository(v2, tmp_path / "i2", parse_cache=cache)
    s2 = repo2.index()
    # Everything but the edited file and the new one came from the cache.
    assert (s2.files_parsed, s2.cache_hits) == (len(V1) + 1, len(V1) - 1)
    plain = Repository(v2, tmp_path / "p2")
    plain.index()
    assert graph_rows(repo2.graph_db) == graph_rows(plain.graph_db)
    assert (tmp_path / "cache" / "parse-cache.db").is_file()
