"""Optional semantic ranking over project memory (notes, MEMORY.md, learned skills).

Two local embedders, no downloads: a signed feature-hashing embedder (word unigrams and
bigrams hashed into 384 signed dimensions, numpy) and, when numpy is unavailable or the caller
asks for it, lexical TF-IDF. Documents are chunked by markdown section, not by fixed size, so a
hit is a whole thought with its heading.

The score threshold is calibrated, not guessed. Hash collisions give unrelated texts a cosine
well above zero (a fixed 0.02 cut-off sits deep inside that noise band and injects noise as
"retrieved knowledge"), so the effective threshold is the larger of

* an absolute floor per embedder, measured on random text by :func:`measure_noise_floor`
  (the constants below are pinned against that measurement by the test suite), and
* the corpus's own noise baseline: the median pairwise similarity of its chunks plus a margin.

``min_score`` overrides both.
"""

from __future__ import annotations

import hashlib
import itertools
import math
import random
import re
import statistics
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ctxfast.confine import decode, read_regular
from ctxfast.errors import ConfigError
from ctxfast.text import word_pieces

DIMS = 384
#: 99th percentile of |cosine| between unrelated random texts, rounded up (see
#: :func:`measure_noise_floor`; pinned by tests/test_memory.py).
HASHING_NOISE_FLOOR = 0.15
TFIDF_NOISE_FLOOR = 0.05
BASELINE_MARGIN = 0.05
MAX_CHUNK_CHARS = 1500
MAX_BASELINE_CHUNKS = 200
EMBEDDER_VERSION = 1

_HEADING_RE = re.compile(r"^#{1,6}\s+(.*)$")


def tokenize(text: str) -> list[str]:
    """Lowercased word pieces; ``camelCase`` and ``snake_case`` split into their words."""
    return word_pieces(text)


def _features(text: str) -> Counter[str]:
    words = tokenize(text)
    feats = Counter(words)
    feats.update(f"{a} {b}" for a, b in itertools.pairwise(words))
    return feats


def _hash(feature: str) -> int:
    return int.from_bytes(hashlib.blake2b(feature.encode(), digest_size=8).digest(), "little")


class HashingEmbedder:
    """Signed feature hashing: stable across processes (blake2b, not ``hash()``)."""

    def __init__(self, dims: int = DIMS) -> None:
        if dims <= 0:
            raise ConfigError(f"dims must be > 0, got {dims}")
        import numpy  # noqa: F401  (fail here, not mid-search, when numpy is missing)

        self.dims = dims
        self.name = f"hashing-{dims}-v{EMBEDDER_VERSION}"

    def embed(self, text: str) -> Any:
        import numpy as np

        vec = np.zeros(self.dims, dtype=np.float32)
        for feat, tf in _features(text).items():
            h = _hash(feat)
            vec[h % self.dims] += (1.0 if (h >> 63) & 1 else -1.0) * (1.0 + math.log(tf))
        norm = float(np.linalg.norm(vec))
        return vec / norm if norm > 0 else vec


class TfidfModel:
    """Sparse TF-IDF over a fixed chunk list, cosine similarity, pure Python."""

    def __init__(self, texts: Sequence[str]) -> None:
        docs = [_features(t) for t in texts]
        df: Counter[str] = Counter()
        for d in docs:
            df.update(d.keys())
        n = len(docs)
        self.idf = {f: math.log((1 + n) / (1 + c)) + 1.0 for f, c in df.items()}
        self.vectors = [self.vector_of(d) for d in docs]

    def vector_of(self, feats: Counter[str]) -> dict[str, float]:
        vec = {f: (1.0 + math.log(tf)) * self.idf.get(f, 1.0) for f, tf in feats.items()}
        norm = math.sqrt(sum(v * v for v in vec.values()))
        return {f: v / norm for f, v in vec.items()} if norm else {}

    def query(self, text: str) -> dict[str, float]:
        return self.vector_of(_features(text))

    @staticmethod
    def cosine(a: dict[str, float], b: dict[str, float]) -> float:
        if len(a) > len(b):
            a, b = b, a
        return sum(v * b.get(f, 0.0) for f, v in a.items())


@dataclass(frozen=True)
class Chunk:
    source: str
    section: str
    text: str


@dataclass(frozen=True)
class MemoryHit:
    source: str
    section: str
    text: str
    score: float


def chunk_sections(text: str, source: str, max_chars: int = MAX_CHUNK_CHARS) -> list[Chunk]:
    """Splits markdown at headings; over-long sections split further at blank lines."""
    sections: list[tuple[str, list[str]]] = [("", [])]
    for line in text.splitlines():
        m = _HEADING_RE.match(line)
        if m:
            sections.append((m.group(1).strip(), [line]))
        else:
            sections[-1][1].append(line)
    chunks: list[Chunk] = []
    for title, lines in sections:
        body = "\n".join(lines).strip()
        if not body:
            continue
        piece = ""
        for para in re.split(r"\n\s*\n", body):
            if piece and len(piece) + len(para) + 2 > max_chars:
                chunks.append(Chunk(source, title, piece))
                piece = ""
            piece = f"{piece}\n\n{para}" if piece else para
        if piece:
            chunks.append(Chunk(source, title, piece))
    return chunks


def _numpy_available() -> bool:
    try:
        import numpy  # noqa: F401
    except ImportError:
        return False
    return True


class MemoryIndex:
    """Chunks memory documents, embeds them, and returns hits above a calibrated threshold.

    ``embedder`` is ``"auto"`` (hashing when numpy imports, else TF-IDF), ``"hashing"`` or
    ``"tfidf"``. With ``cache_dir`` the hashing vectors are cached on disk, keyed by the
    embedder id and a content hash (never by mtime), so a changed chunk is re-embedded.
    """

    def __init__(
        self,
        *,
        embedder: str = "auto",
        dims: int = DIMS,
        cache_dir: str | Path | None = None,
        min_score: float | None = None,
        margin: float = BASELINE_MARGIN,
        floor: float | None = None,
        max_chunk_chars: int = MAX_CHUNK_CHARS,
    ) -> None:
        if embedder == "auto":
            embedder = "hashing" if _numpy_available() else "tfidf"
        if embedder not in ("hashing", "tfidf"):
            raise ConfigError(f"unknown embedder {embedder!r}; expected auto, hashing or tfidf")
        self.embedder_name = embedder
        self._hasher = HashingEmbedder(dims) if embedder == "hashing" else None
        self.cache_dir = Path(cache_dir) if cache_dir is not None else None
        self.min_score = min_score
        self.margin = margin
        self.floor = (
            floor
            if floor is not None
            else (HASHING_NOISE_FLOOR if embedder == "hashing" else TFIDF_NOISE_FLOOR)
        )
        self.max_chunk_chars = max_chunk_chars
        self.chunks: list[Chunk] = []
        self.cache_hits = 0
        self.cache_misses = 0
        self._vectors: list[Any] = []
        self._tfidf: TfidfModel | None = None
        self._baseline: float | None = None

    # ---------------------------------------------------------------- building

    def add(self, source: str, text: str) -> int:
        """Adds a document; returns how many chunks it produced."""
        new = chunk_sections(text, source, self.max_chunk_chars)
        self.chunks.extend(new)
        if self._hasher is not None:
            self._vectors.extend(self._embed_cached(c.text) for c in new)
        self._tfidf = None
        self._baseline = None
        return len(new)

    def add_file(self, path: str | Path, source: str | None = None) -> int:
        p = Path(path)
        try:
            text = decode(read_regular(p))
        except OSError as exc:
            raise ConfigError(f"cannot read memory file {p}: {exc}") from exc
        return self.add(source or str(p), text)

    def _embed_cached(self, text: str) -> Any:
        import numpy as np

        assert self._hasher is not None
        if self.cache_dir is None:
            return self._hasher.embed(text)
        key = hashlib.sha256(f"{self._hasher.name}\0{text}".encode()).hexdigest()
        path = self.cache_dir / key[:2] / f"{key}.npy"
        if path.is_file():
            try:
                vec = np.load(path)
                if vec.shape == (self._hasher.dims,):
                    self.cache_hits += 1
                    return vec
            except (OSError, ValueError):
                pass  # a corrupt cache entry is recomputed and overwritten
        self.cache_misses += 1
        vec = self._hasher.embed(text)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp.npy")
        np.save(tmp, vec)
        tmp.replace(path)
        return vec

    # ---------------------------------------------------------------- scoring

    def _scores(self, query: str) -> list[float]:
        if not self.chunks:
            return []
        if self._hasher is not None:
            import numpy as np

            q = self._hasher.embed(query)
            return [float(x) for x in np.stack(self._vectors) @ q]
        if self._tfidf is None:
            self._tfidf = TfidfModel([c.text for c in self.chunks])
        qv = self._tfidf.query(query)
        return [TfidfModel.cosine(qv, v) for v in self._tfidf.vectors]

    def noise_baseline(self) -> float:
        """Median pairwise similarity between chunks (0 with fewer than two chunks)."""
        if self._baseline is not None:
            return self._baseline
        n = min(len(self.chunks), MAX_BASELINE_CHUNKS)
        idx = [round(i * (len(self.chunks) - 1) / (n - 1)) for i in range(n)] if n > 1 else []
        sims: list[float] = []
        if self._hasher is not None and idx:
            import numpy as np

            m = np.stack([self._vectors[i] for i in idx])
            g = m @ m.T
            sims = [float(g[a, b]) for a in range(n) for b in range(a + 1, n)]
        elif idx:
            if self._tfidf is None:
                self._tfidf = TfidfModel([c.text for c in self.chunks])
            vs = [self._tfidf.vectors[i] for i in idx]
            sims = [TfidfModel.cosine(vs[a], vs[b]) for a in range(n) for b in range(a + 1, n)]
        self._baseline = statistics.median(sims) if sims else 0.0
        return self._baseline

    @property
    def threshold(self) -> float:
        """``min_score`` if set, else ``max(floor, noise_baseline() + margin)``."""
        if self.min_score is not None:
            return self.min_score
        return max(self.floor, self.noise_baseline() + self.margin)

    def search(self, query: str, k: int = 5) -> list[MemoryHit]:
        """Up to ``k`` chunks scoring at least :attr:`threshold`, best first (ties: order added)."""
        if k <= 0:
            return []
        scores = self._scores(query)
        cut = self.threshold
        ranked = sorted(
            (i for i, s in enumerate(scores) if s >= cut), key=lambda i: (-scores[i], i)
        )
        return [
            MemoryHit(self.chunks[i].source, self.chunks[i].section, self.chunks[i].text, scores[i])
            for i in ranked[:k]
        ]


def random_text(rng: random.Random, words: int = 60, vocab: int = 5000) -> str:
    """Text of random pseudo-words from a ``vocab``-sized alphabet soup (shared across calls)."""
    return " ".join(_pseudo_word(rng.randrange(vocab)) for _ in range(words))


def _pseudo_word(i: int) -> str:
    letters = "abcdefghijklmnopqrstuvwxyz"
    out = ""
    i += 26 * 26  # at least three letters
    while i:
        i, r = divmod(i, 26)
        out += letters[r]
    return out


def measure_noise_floor(
    embedder: str = "hashing",
    *,
    pairs: int = 400,
    words: int = 60,
    quantile: float = 0.99,
    seed: int = 0,
    dims: int = DIMS,
) -> float:
    """The ``quantile`` of |similarity| between pairs of unrelated random texts.

    This is how the ``*_NOISE_FLOOR`` constants were chosen: any score at or below it is
    indistinguishable from two texts that have nothing to do with each other.
    """
    rng = random.Random(seed)
    texts = [random_text(rng, words) for _ in range(2 * pairs)]
    sims: list[float] = []
    if embedder == "hashing":
        h = HashingEmbedder(dims)
        vecs = [h.embed(t) for t in texts]
        sims = [abs(float(vecs[2 * i] @ vecs[2 * i + 1])) for i in range(pairs)]
    elif embedder == "tfidf":
        model = TfidfModel(texts)
        v = model.vectors
        sims = [abs(TfidfModel.cosine(v[2 * i], v[2 * i + 1])) for i in range(pairs)]
    else:
        raise ConfigError(f"unknown embedder {embedder!r}")
    sims.sort()
    return sims[min(len(sims) - 1, math.ceil(quantile * len(sims)) - 1)]


__all__ = [
    "BASELINE_MARGIN",
    "DIMS",
    "HASHING_NOISE_FLOOR",
    "TFIDF_NOISE_FLOOR",
    "Chunk",
    "HashingEmbedder",
    "MemoryHit",
    "MemoryIndex",
    "TfidfModel",
    "chunk_sections",
    "measure_noise_floor",
    "random_text",
    "tokenize",
]
