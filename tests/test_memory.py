"""Memory retrieval: hashing/TF-IDF embedders, section chunks, cache, calibrated threshold."""

import random
import subprocess
import sys

import pytest

from ctxfast import memory
from ctxfast.errors import ConfigError
from ctxfast.harness.memory import (
    BASELINE_MARGIN,
    DIMS,
    HASHING_NOISE_FLOOR,
    TFIDF_NOISE_FLOOR,
    HashingEmbedder,
    MemoryIndex,
    chunk_sections,
    measure_noise_floor,
)

MEMORY = """# Project memory

## Database
We use SQLite with WAL mode; migrations live in db/migrations and run via make migrate.

## Authentication
JWT tokens are signed with RS256; the refresh token rotates on every login.

## Frontend
The React app is built with Vite; components live in web/src/components.
"""


def test_the_embedding_width_is_the_dims_setting():
    assert HashingEmbedder().embed("x").shape == (DIMS,)
    assert HashingEmbedder(64).embed("x").shape == (64,)


@pytest.mark.parametrize(
    "embedder, floor", [("hashing", HASHING_NOISE_FLOOR), ("tfidf", TFIDF_NOISE_FLOOR)]
)
def test_noise_floors_are_calibrated_on_random_text(embedder, floor):
    measured = [measure_noise_floor(embedder, seed=s, words=w) for s in (0, 1) for w in (20, 200)]
    # The floor sits above the 99th percentile of unrelated-text similarity...
    assert floor >= max(measured)
    # ...but not so far above it that real matches are thrown away.
    assert floor <= max(measured) + 0.05


def test_old_fixed_threshold_was_inside_the_noise_band():
    assert measure_noise_floor("hashing", quantile=0.5) > 0.02


def test_section_chunking():
    chunks = chunk_sections(MEMORY, "MEMORY.md")
    assert [c.section for c in chunks] == [
        "Project memory",
        "Database",
        "Authentication",
        "Frontend",
    ]
    long = "## Big\n" + "\n\n".join("para " * 50 for _ in range(20))
    parts = chunk_sections(long, "x", max_chars=600)
    assert len(parts) > 1 and all(len(p.text) <= 600 for p in parts)
    assert {p.section for p in parts} == {"Big"}


@pytest.mark.parametrize("embedder", ["hashing", "tfidf"])
def test_relevant_section_found_noise_rejected(embedder):
    idx = MemoryIndex(embedder=embedder)
    idx.add("MEMORY.md", MEMORY)
    hits = idx.search("how are JWT refresh tokens rotated on login?")
    assert hits and hits[0].section == "Authentication"
    assert all(h.score >= idx.threshold for h in hits)
    rng = random.Random(7)
    assert idx.search(memory.random_text(rng, 30)) == []


def test_threshold_combines_floor_and_corpus_baseline():
    idx = MemoryIndex(embedder="hashing")
    idx.add("a", MEMORY)
    assert idx.threshold == max(HASHING_NOISE_FLOOR, idx.noise_baseline() + BASELINE_MARGIN)
    # A corpus of near-duplicates has a high baseline, which lifts the threshold above the floor.
    dup = MemoryIndex(embedder="hashing")
    dup.add(
        "d",
        "\n".join(
            f"## S{i}\nthe deploy script pushes the image to the registry {i}" for i in range(6)
        ),
    )
    assert dup.threshold > HASHING_NOISE_FLOOR
    assert dup.threshold == pytest.approx(dup.noise_baseline() + BASELINE_MARGIN)
    assert MemoryIndex(min_score=0.9).threshold == 0.9


def test_embedding_cache_on_disk(tmp_path):
    a = MemoryIndex(embedder="hashing", cache_dir=tmp_path)
    a.add("m", MEMORY)
    assert a.cache_misses == 4 and a.cache_hits == 0
    assert len(list(tmp_path.rglob("*.npy"))) == 4
    b = MemoryIndex(embedder="hashing", cache_dir=tmp_path)
    b.add("m", MEMORY.replace("Vite", "webpack"))
    assert b.cache_hits == 3 and b.cache_misses == 1  # keyed on content: one chunk changed
    q = "SQLite WAL migrations"
    assert [h.section for h in a.search(q)] == [h.section for h in b.search(q)]
    # A corrupt entry is recomputed, not fatal.
    victim = next(tmp_path.rglob("*.npy"))
    victim.write_bytes(b"garbage")
    c = MemoryIndex(embedder="hashing", cache_dir=tmp_path)
    c.add("m", MEMORY)
    assert c.cache_misses == 1


def test_tfidf_fallback_without_numpy(tmp_path):
    code = (
        "import sys; sys.modules['numpy'] = None\n"
        "from ctxfast.harness.memory import MemoryIndex\n"
        "i = MemoryIndex(); i.add('m', open(sys.argv[1]).read())\n"
        "print(i.embedder_name, i.search('JWT refresh token')[0].section)\n"
    )
    f = tmp_path / "MEMORY.md"
    f.write_text(MEMORY, encoding="utf-8")
    out = subprocess.run(
        [sys.executable, "-c", code, str(f)], capture_output=True, text=True, check=True
    ).stdout
    assert out.split() == ["tfidf", "Authentication"]


def test_errors():
    with pytest.raises(ConfigError):
        MemoryIndex(embedder="bert")
    with pytest.raises(ConfigError):
        MemoryIndex().add_file("/nonexistent/MEMORY.md")
    assert MemoryIndex().search("anything") == []
