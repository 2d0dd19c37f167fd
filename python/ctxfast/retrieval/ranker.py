"""The learned ranker: two linear scorers (files, then candidate definitions) over the
feature rows of ``retrieval.features``, shipped as a small JSON file in the package.

Why linear: each weight can be read (the README prints them) and a model of forty numbers
fit on commit history of other repositories cannot memorise the benchmark the way signals
weighted one by one on it did. Scoring is a standardised dot product in numpy —
deterministic, microseconds per query. ``ctxfast eval train-ranker`` writes the file from the
mined corpus; ``RetrievalConfig(ranker="hand")`` keeps the hand-set fusion.
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
    """``score(x) = w · (x - mean) / scale`` over the named feature columns."""

    features: tuple[str, ...]
    mean: np.ndarray
    scale: np.ndarray
    weights: np.ndarray

    def score(self, rows: np.ndarray) -> np.ndarray:
        if rows.size == 0:
            return np.zeros(len(rows))
        return ((rows - self.mean) / self.scale) @ self.weights

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
        if feats != expected:
            raise ConfigError(
                "ranker model columns differ from this version's features; "
                "retrain with `ctxfast eval train-ranker`"
            )
        arrays = [np.asarray(data[k], dtype=np.float64) for k in ("mean", "scale", "weights")]
        if any(a.shape != (len(feats),) for a in arrays):
            raise ConfigError("ranker model: mean/scale/weights must have one value per feature")
        return cls(feats, *arrays)


@dataclass(frozen=True)
class RankerModel:
    files: LinearStage
    definitions: LinearStage
    meta: dict[str, Any]

    def to_json(self) -> str:
        return json.dumps(
            {
                "version": MODEL_VERSION,
                "files": self.files.to_dict(),
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
        LinearStage.from_dict(data["files"], FILE_FEATURES),
        LinearStage.from_dict(data["definitions"], CANDIDATE_FEATURES),
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
