"""The learned ranker: two linear scorers (files, then candidate definitions) over the
feature rows of ``retrieval.features``, shipped as a small JSON file in the package.

Why linear: each weight can be read (the model is a plain JSON file), and with a few hundred
training issues a model of a few dozen numbers generalises across repositories where trees
fit to the same rows did not. Scoring is a standardised dot product in numpy —
deterministic, microseconds per query. ``ctxfast eval train-ranker`` writes the file from
issue benchmarks or mined commits; a model whose ``files`` stage is empty keeps the
hand-set file ranking; ``RetrievalConfig(ranker="hand")`` keeps the hand-set fusion.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from ctxfast.errors import ConfigError
from ctxfast.retrieval.features import CANDIDATE_FEATURES, FILE_FEATURES

#: The model shipped in the package (written by ``ctxfast eval train-ranker``).
MODEL_NAME = "ranker_model.json"
MODEL_VERSION = 1


@dataclass(frozen=True)
class LinearStage:
    """``score(x) = w · (x - mean) / scale`` over the named feature columns.

    ``columns`` are the positions of ``features`` in the rows the pipeline builds: a model
    may use a subset of the columns this version computes (training drops the ones that do
    not help), but never one it does not know."""

    features: tuple[str, ...]
    mean: np.ndarray
    scale: np.ndarray
    weights: np.ndarray
    columns: tuple[int, ...] = ()

    def score(self, rows: np.ndarray) -> np.ndarray:
        if rows.size == 0:
            return np.zeros(len(rows))
        x = rows[:, list(self.columns)] if self.columns else rows
        scores: np.ndarray = ((x - self.mean) / self.scale) @ self.weights
        return scores

    def to_dict(self) -> dict[str, Any]:
        return {
            "features": list(self.features),
            "mean": [round(float(x), 6) for x in self.mean],
            "scale": [round(float(x), 6) for x in self.scale],
            "weights": [round(float(x), 6) for x in self.weights],
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any], expected: tuple[str, ...]) -> LinearStage:
        feats = tuple(data["features"])
        mean, scale, weights = _arrays(data, feats)
        return cls(feats, mean, scale, weights, columns=columns_of(feats, expected))


def columns_of(feats: tuple[str, ...], expected: tuple[str, ...]) -> tuple[int, ...]:
    """Positions of a model's ``feats`` among the columns this version computes."""
    unknown = [f for f in feats if f not in expected]
    if unknown or len(set(feats)) != len(feats):
        raise ConfigError(
            f"ranker model columns {', '.join(unknown) or '(repeated)'} are not this version's "
            "features; retrain with `ctxfast eval train-ranker`"
        )
    return tuple(expected.index(f) for f in feats)


def _arrays(data: dict[str, Any], feats: tuple[str, ...]) -> list[np.ndarray]:
    arrays = [np.asarray(data[k], dtype=np.float64) for k in ("mean", "scale", "weights")]
    if any(a.shape != (len(feats),) for a in arrays):
        raise ConfigError("ranker model: mean/scale/weights must have one value per feature")
    return arrays


@dataclass(frozen=True)
class TreeStage:
    """A sum of regression trees (gradient boosting) over the named feature columns.

    All trees are held as one flat node table — ``feature`` (-1 at a leaf), ``threshold``
    (go left when ``x <= threshold``), ``left`` / ``right`` (node ids) and ``value`` (a
    leaf's score) — and walked together, one level per numpy step, so a query costs
    ``depth`` vectorised gathers over ``rows × trees`` whatever the number of trees.
    Trained offline (``ctxfast eval train-ranker --learner trees``); scoring needs numpy only."""

    features: tuple[str, ...]
    roots: np.ndarray
    feature: np.ndarray
    threshold: np.ndarray
    left: np.ndarray
    right: np.ndarray
    value: np.ndarray
    depth: int
    columns: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        # A leaf splits on column 0 into itself on both sides, so every row walks exactly
        # ``depth`` steps with no mask; ``child[2·node + (x > threshold)]`` is the next node.
        object.__setattr__(self, "_split", np.maximum(self.feature, 0))
        object.__setattr__(self, "_child", np.stack([self.left, self.right], axis=1).ravel())

    def score(self, rows: np.ndarray) -> np.ndarray:
        if rows.size == 0 or not len(self.roots):
            return np.zeros(len(rows))
        x = rows[:, list(self.columns)] if self.columns else rows
        flat = np.ascontiguousarray(x, dtype=np.float64).ravel()
        base = (np.arange(len(x)) * x.shape[1])[:, None]
        node = np.broadcast_to(self.roots, (len(x), len(self.roots)))
        split, child, thr = self._split, self._child, self.threshold  # type: ignore[attr-defined]
        for _ in range(self.depth):
            right = flat[base + split[node]] > thr[node]
            node = child[2 * node + right]
        scores: np.ndarray = self.value[node].sum(axis=1)
        return scores

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": "trees",
            "features": list(self.features),
            "roots": self.roots.tolist(),
            "feature": self.feature.tolist(),
            # JSON writes a float64 by its shortest repr, which reads back exactly:
            # thresholds and leaves are the fitted numbers, not roundings of them.
            "threshold": [float(t) for t in self.threshold],
            "left": self.left.tolist(),
            "right": self.right.tolist(),
            "value": [float(v) for v in self.value],
            "depth": self.depth,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any], expected: tuple[str, ...]) -> TreeStage:
        feats = tuple(data["features"])
        cols = columns_of(feats, expected)
        feature = np.asarray(data["feature"], dtype=np.int64)
        n = len(feature)
        arrays = [np.asarray(data[k]) for k in ("threshold", "left", "right", "value")]
        roots = np.asarray(data["roots"], dtype=np.int64)
        if any(len(a) != n for a in arrays) or feature.max(initial=-1) >= len(feats):
            raise ConfigError("ranker model: malformed tree table")
        thr, left, right, value = arrays
        ids = np.concatenate([roots, left[feature >= 0], right[feature >= 0]]).astype(np.int64)
        if n and (ids.min(initial=0) < 0 or ids.max(initial=0) >= n):
            raise ConfigError("ranker model: a tree points outside its node table")
        return cls(
            feats,
            roots,
            feature,
            thr.astype(np.float64),
            left.astype(np.int64),
            right.astype(np.int64),
            value.astype(np.float64),
            int(data["depth"]),
            cols,
        )


@dataclass(frozen=True)
class SumStage:
    """A linear stage plus trees fit to what it misses (boosted from its scores): the linear
    part keeps the columns the corpus cannot teach at their hand-set ratio, the trees add
    the interactions a sum cannot express (a definition's place inside a trusted file)."""

    linear: LinearStage
    trees: TreeStage

    @property
    def features(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys((*self.linear.features, *self.trees.features)))

    def score(self, rows: np.ndarray) -> np.ndarray:
        scores: np.ndarray = self.linear.score(rows) + self.trees.score(rows)
        return scores

    def to_dict(self) -> dict[str, Any]:
        return {"kind": "sum", "linear": self.linear.to_dict(), "trees": self.trees.to_dict()}


Stage = LinearStage | TreeStage | SumStage


def stage_from_dict(data: dict[str, Any], expected: tuple[str, ...]) -> Stage:
    kind = data.get("kind", "linear")
    if kind == "sum":
        return SumStage(
            LinearStage.from_dict(data["linear"], expected),
            TreeStage.from_dict(data["trees"], expected),
        )
    if kind == "trees":
        return TreeStage.from_dict(data, expected)
    return LinearStage.from_dict(data, expected)


@dataclass(frozen=True)
class RankerModel:
    """The two stages. ``files`` None keeps the hand-set file ranking (the fusion of
    ``localize.file_scores`` and its placement rule) and learns only the definitions, whose
    ``file_prob`` column is then that fusion's score over the best file's."""

    files: Stage | None
    definitions: Stage
    meta: dict[str, Any]

    def to_json(self) -> str:
        return json.dumps(
            {
                "version": MODEL_VERSION,
                "files": None if self.files is None else self.files.to_dict(),
                "definitions": self.definitions.to_dict(),
                "meta": self.meta,
            },
            indent=1,
            sort_keys=True,
        )


def parse_model(text: str) -> RankerModel:
    data = json.loads(text)
    if data.get("version") != MODEL_VERSION:
        raise ConfigError(f"ranker model version {data.get('version')} is not {MODEL_VERSION}")
    return RankerModel(
        None if data["files"] is None else stage_from_dict(data["files"], FILE_FEATURES),
        stage_from_dict(data["definitions"], CANDIDATE_FEATURES),
        dict(data.get("meta", {})),
    )


def load_model(path: str | None = None) -> RankerModel:
    """The model at ``path``, or the one shipped in the package; each is parsed once per
    process while the file is unchanged (a rewritten file is read again)."""
    if path:
        st = Path(path).stat()
        return _parsed_file(str(Path(path).resolve()), st.st_mtime_ns, st.st_size)
    return _shipped()


@cache
def _parsed_file(path: str, _mtime_ns: int, _size: int) -> RankerModel:
    return parse_model(Path(path).read_text(encoding="utf-8"))


@cache
def _shipped() -> RankerModel:
    text = resources.files("ctxfast.retrieval").joinpath(MODEL_NAME).read_text(encoding="utf-8")
    return parse_model(text)
