"""The learned ranker: features, the linear model file, training, and its use in retrieve."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from recon_fixture import indexed_repo
from test_eval_mine import mirrors  # noqa: F401  (the fixture: a bare mirror with one fix)

from ctxfast.cli import main
from ctxfast.errors import ConfigError
from ctxfast.eval.train_ranker import DEFAULT_L2, DEFAULT_STEPS, fit_listwise
from ctxfast.retrieval.config import RetrievalConfig
from ctxfast.retrieval.features import CANDIDATE_FEATURES, FILE_FEATURES
from ctxfast.retrieval.ranker import LinearStage, RankerModel, load_model, parse_model

FILES = {
    "shop/__init__.py": "",
    "shop/cart.py": (
        "def total_price(items):\n"
        "    # the cart total with the discount\n"
        "    return sum(items) * discount_rate()\n"
        "\n\n"
        "def discount_rate():\n"
        "    return 0.9\n"
    ),
    "shop/money.py": "def rounding(x):\n    return round(x, 2)\n",
}
TASK = "The cart total is wrong when the discount applies; see shop/money.py for rounding."


def _model(tmp_path, file_w: dict[str, float], def_w: dict[str, float]) -> str:
    def stage(names: tuple[str, ...], w: dict[str, float]) -> LinearStage:
        n = len(names)
        return LinearStage(names, np.zeros(n), np.ones(n), np.array([w.get(x, 0.0) for x in names]))

    model = RankerModel(stage(FILE_FEATURES, file_w), stage(CANDIDATE_FEATURES, def_w), {})
    path = tmp_path / "model.json"
    path.write_text(model.to_json(), encoding="utf-8")
    return str(path)


def test_defaults_are_pinned():
    cfg = RetrievalConfig()
    assert cfg.ranker == "hand" and cfg.ranker_model == "" and cfg.keep_features is False
    assert (DEFAULT_L2, DEFAULT_STEPS) == (1e-2, 400)
    with pytest.raises(ConfigError):
        RetrievalConfig(ranker="bogus")


def test_fit_listwise_finds_the_feature_that_marks_gold_and_is_deterministic():
    rng = np.random.default_rng(0)
    groups = []
    for _ in range(40):
        rows = rng.normal(size=(12, 3))
        gold = np.zeros(12, dtype=bool)
        g = int(rng.integers(12))
        rows[g, 1] += 3.0  # feature 1 marks the gold row; 0 and 2 are noise
        gold[g] = True
        groups.append((rows, gold))
    mean, scale, w = fit_listwise(groups, steps=400)
    assert w[1] > 1.0 and abs(w[0]) < w[1] / 4 and abs(w[2]) < w[1] / 4
    again = fit_listwise(groups, steps=400)
    assert np.array_equal(w, again[2]) and np.array_equal(mean, again[0])
    stage = LinearStage(("a", "b", "c"), mean, scale, w)
    hits = [int(np.argmax(stage.score(x))) == int(np.flatnonzero(gd)[0]) for x, gd in groups]
    assert sum(hits) >= 36


def test_a_model_with_other_columns_is_refused(tmp_path):
    path = Path(_model(tmp_path, {}, {}))
    data = json.loads(path.read_text(encoding="utf-8"))
    data["files"]["features"] = data["files"]["features"][::-1]
    with pytest.raises(ConfigError, match="retrain"):
        parse_model(json.dumps(data))
    data["version"] = 99
    with pytest.raises(ConfigError, match="version"):
        parse_model(json.dumps(data))


def test_learned_ranker_orders_files_and_candidates_by_the_model(tmp_path):
    repo = indexed_repo(tmp_path / "repo", FILES)
    hand = repo.retrieve(TASK, refresh=False)
    assert hand.features is None
    mention = _model(tmp_path, {"path_mentions": 5.0}, {"file_prob": 1.0, "named": 2.0})
    learned = repo.retrieve(TASK, config={"ranker": "learned", "ranker_model": mention})
    assert learned.ranked_files()[0] == "shop/money.py"
    assert learned.features is not None
    assert learned.features.file_rows.shape == (len(learned.features.files), len(FILE_FEATURES))
    probs = dict(learned.file_ranking)
    assert abs(sum(probs.values()) - 1.0) < 1e-9  # softmax over the pool
    # Candidates follow the definition stage: here their file's learned probability.
    assert learned.candidates[0].file == "shop/money.py"
    against = _model(tmp_path, {"path_mentions": -5.0, "log_defs": 1.0}, {"file_prob": 1.0})
    other = repo.retrieve(TASK, config={"ranker": "learned", "ranker_model": against})
    assert other.ranked_files()[0] == "shop/cart.py"


def test_feature_export_leaves_the_hand_ranking_unchanged(tmp_path):
    repo = indexed_repo(tmp_path / "repo", FILES)
    plain = repo.retrieve(TASK, refresh=False)
    kept = repo.retrieve(TASK, config={"keep_features": True}, refresh=False)
    assert kept.file_ranking == plain.file_ranking
    assert [c.to_dict() for c in kept.candidates] == [c.to_dict() for c in plain.candidates]
    f = kept.features
    assert f is not None and f.candidate_rows is not None
    assert len(f.candidates) == len(f.candidate_rows) >= len(kept.candidates)
    row = dict(zip(FILE_FEATURES, f.file_rows[f.files.index("shop/money.py")], strict=True))
    assert row["path_mentions"] == 1.0 and row["is_test"] == 0.0


def test_shipped_model_matches_the_feature_columns():
    model = load_model()
    assert model.files.features == FILE_FEATURES
    assert model.definitions.features == CANDIDATE_FEATURES
    assert model.meta["tasks"] > 0


def test_train_ranker_builds_a_model_from_mined_commits(tmp_path, mirrors):  # noqa: F811
    corpus = tmp_path / "corpus.jsonl"
    args = ["eval", "mine", "--mirror-root", str(mirrors), "--repo", "acme/shop:go"]
    assert main([*args, "--split", "train", "--out", str(corpus)]) == 0
    out = tmp_path / "model.json"
    work = tmp_path / "work"
    argv = ["eval", "train-ranker", "--corpus", str(corpus), "--mirror-root", str(mirrors)]
    assert main([*argv, "--work", str(work), "--out", str(out)]) == 0
    model = parse_model(out.read_text(encoding="utf-8"))
    assert model.meta["tasks"] == 1 and model.meta["repos"] == {"acme/shop": 1}
    assert model.meta["file_groups"] == 1  # the fix's file was among the ranked files
    assert np.all(np.isfinite(model.files.weights)) and np.all(model.files.scale > 0)
    cached = sorted(p.name for p in (work / "features").iterdir())
    assert cached == [f"{json.loads(corpus.read_text())['instance_id']}.npz"]
    again = tmp_path / "again.json"
    assert main([*argv, "--work", str(work), "--out", str(again)]) == 0
    assert again.read_text() == out.read_text()  # cached rows, same weights


def test_tied_columns_keep_their_ratio_and_the_prior_holds_without_evidence():
    rng = np.random.default_rng(1)
    groups = []
    for _ in range(30):
        rows = rng.normal(size=(10, 3))
        gold = np.zeros(10, dtype=bool)
        g = int(rng.integers(10))
        rows[g, 0] += 2.0
        gold[g] = True
        groups.append((rows, gold))
    # Column 2 is tied to column 0 at half its raw weight: it is not fit.
    _, scale, w = fit_listwise(groups, steps=300, ties={2: (0, 0.5)})
    assert w[0] > 0.5
    assert abs(w[2] / scale[2] - 0.5 * w[0] / scale[0]) < 1e-9
    # Column 1 carries no evidence: pulled to the prior (scaled by the fitted temperature),
    # it keeps the prior's sign where a fit towards zero would leave it near zero.
    prior = np.array([1.0, 1.0, 0.0])
    _, _, wp = fit_listwise(groups, l2=1.0, steps=300, prior=prior)
    _, _, w0 = fit_listwise(groups, l2=1.0, steps=300)
    assert wp[1] > 0.2 and abs(w0[1]) < 0.1
