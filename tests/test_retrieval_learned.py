"""The learned ranker: features, the linear model file, training, and its use in retrieve."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest
from recon_fixture import indexed_repo
from test_eval_mine import mirrors  # noqa: F401  (the fixture: a bare mirror with one fix)

from ctxfast.cli import main
from ctxfast.errors import ConfigError
from ctxfast.eval.train_ranker import (
    ADDED_COLUMNS,
    DEFAULT_L2,
    DEFAULT_STEPS,
    FILE_TIED,
    ZEROED,
    fit_listwise,
    hand_prior,
    load_rows,
    ties_of,
)
from ctxfast.retrieval.config import RetrievalConfig
from ctxfast.retrieval.features import CANDIDATE_FEATURES, FILE_FEATURES
from ctxfast.retrieval.learned_ranker import LinearStage, RankerModel, load_model, parse_model

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
    data["files"]["features"][3] = "no_such_signal"
    with pytest.raises(ConfigError, match="retrain"):
        parse_model(json.dumps(data))
    data["files"]["features"][3] = data["files"]["features"][4]  # a column twice
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


def test_a_task_no_signal_reaches_ranks_without_feature_rows(tmp_path):
    # A terse commit subject sharing no word with the code ("Handle broken pipes") leaves the
    # pool of files some signal touched empty; both the learned ranker and the feature
    # export must still answer, with the fill's files and no rows.
    repo = indexed_repo(tmp_path / "repo", FILES)
    task = "Handle broken pipes, closes"
    plain = repo.retrieve(task, refresh=False)
    for cfg in ({"ranker": "learned"}, {"keep_features": True}):
        r = repo.retrieve(task, config=cfg, refresh=False)
        assert r.features is not None and r.features.files == []
        assert r.features.file_rows.shape == (0, len(FILE_FEATURES))
        assert set(r.ranked_files()) == set(plain.ranked_files())


def test_shipped_model_matches_the_feature_columns():
    model = load_model()
    assert model.files is None or set(model.files.features) <= set(FILE_FEATURES)
    assert set(model.definitions.features) <= set(CANDIDATE_FEATURES)
    assert model.meta["tasks"] > 0


def test_a_model_may_use_a_subset_of_the_columns_in_any_order():
    rows = np.arange(2 * len(CANDIDATE_FEATURES), dtype=float).reshape(2, -1)
    names = ("log_span", "bm25")
    data = {"features": list(names), "mean": [0, 0], "scale": [1, 1], "weights": [1.0, 10.0]}
    stage = LinearStage.from_dict(data, CANDIDATE_FEATURES)
    want = rows[:, CANDIDATE_FEATURES.index("log_span")] + 10 * rows[:, 0]
    assert np.array_equal(stage.score(rows), want)


def _tree_table() -> dict:
    # Tree 1: x0 <= 0.5 ? (x1 <= 2 ? 1 : 2) : 3.   Tree 2: a single leaf, -0.25.
    return {
        "kind": "trees",
        "features": ["bm25", "log_span"],
        "roots": [0, 5],
        "feature": [0, 1, -1, -1, -1, -1],
        "threshold": [0.5, 2.0, 0, 0, 0, 0],
        "left": [1, 2, 2, 3, 4, 5],
        "right": [4, 3, 2, 3, 4, 5],
        "value": [0, 0, 1.0, 2.0, 3.0, -0.25],
        "depth": 2,
    }


def test_tree_stage_walks_every_tree_and_round_trips():
    from ctxfast.retrieval.learned_ranker import TreeStage, stage_from_dict

    stage = stage_from_dict(_tree_table(), CANDIDATE_FEATURES)
    assert isinstance(stage, TreeStage)
    rows = np.zeros((4, len(CANDIDATE_FEATURES)))
    span = CANDIDATE_FEATURES.index("log_span")
    rows[:, 0] = [0.5, 0.2, 0.9, 0.50001]
    rows[:, span] = [2.0, 3.0, 0.0, 0.0]
    assert stage.score(rows).tolist() == [0.75, 1.75, 2.75, 2.75]  # x <= threshold goes left
    again = stage_from_dict(json.loads(json.dumps(stage.to_dict())), CANDIDATE_FEATURES)
    assert np.array_equal(again.score(rows), stage.score(rows))
    assert stage.score(rows[:0]).shape == (0,)
    bad = _tree_table()
    bad["left"][1] = 99
    with pytest.raises(ConfigError, match="outside"):
        stage_from_dict(bad, CANDIDATE_FEATURES)


def test_boosted_trees_export_scores_exactly_as_lightgbm_predicts():
    lgb = pytest.importorskip("lightgbm")
    from ctxfast.eval.train_ranker import TREE_PARAMS, trees_of

    rng = np.random.default_rng(0)
    x = rng.normal(size=(600, 4))
    y = ((x[:, 1] > 0.3) & (x[:, 2] < 0)).astype(int)
    booster = lgb.train(TREE_PARAMS, lgb.Dataset(x, y, group=[30] * 20), 40)
    stage = trees_of(booster.dump_model(), ("a", "b", "c", "d"))
    assert np.allclose(stage.score(x), booster.predict(x), rtol=0, atol=1e-9)


def test_boosting_keeps_the_linear_part_and_learns_an_interaction():
    pytest.importorskip("lightgbm")
    from ctxfast.eval.train_ranker import boosted
    from ctxfast.retrieval.learned_ranker import SumStage, stage_from_dict

    rng = np.random.default_rng(2)
    groups = []
    for _ in range(200):
        rows = rng.uniform(size=(20, 3))
        g = int(rng.integers(20))
        rows[g, 0], rows[g, 1] = 0.9, 0.9  # gold: both high (an AND no sum separates well)
        for i in rng.choice(20, 4, replace=False):
            if i != g:
                rows[i, int(rng.integers(2))] = 0.95
        gold = np.zeros(20, dtype=bool)
        gold[g] = True
        groups.append((rows, gold))
    names = ("a", "b", "c")
    lin = LinearStage(names, *fit_listwise(groups, steps=200))
    both = boosted(lin, groups, names, fixed=("c",))
    assert isinstance(both, SumStage) and "c" not in both.trees.features

    def top1(stage) -> float:
        return float(
            np.mean([np.argmax(stage.score(x)) == np.flatnonzero(g)[0] for x, g in groups])
        )

    assert top1(both) > top1(lin) + 0.1
    again = stage_from_dict(json.loads(json.dumps(both.to_dict())), names)
    assert np.array_equal(again.score(groups[0][0]), both.score(groups[0][0]))


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
    if importlib.util.find_spec("lightgbm") is not None:
        from ctxfast.retrieval.learned_ranker import SumStage

        trees = tmp_path / "trees.json"
        assert main([*argv, "--work", str(work), "--out", str(trees), "--learner", "boosted"]) == 0
        boosted = parse_model(trees.read_text(encoding="utf-8"))
        assert isinstance(boosted.definitions, SumStage) and boosted.meta["learner"] == "boosted"


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


def test_candidate_rows_place_each_definition_inside_its_file(tmp_path):
    files = {
        **FILES,
        "shop/cart.py": FILES["shop/cart.py"]
        + "\n\nclass Basket:\n    def _clear(self):\n        return []\n",
    }
    repo = indexed_repo(tmp_path / "repo", files)
    task = "The cart total is wrong when the discount applies after `Basket` is emptied."
    f = repo.retrieve(task, config={"keep_features": True}, refresh=False).features
    assert f is not None and f.candidate_rows is not None
    rows = [dict(zip(CANDIDATE_FEATURES, r, strict=True)) for r in f.candidate_rows]
    in_cart = [r for (file, _), r in zip(f.candidates, rows, strict=True) if file == "shop/cart.py"]
    cart = {s: r for (file, s), r in zip(f.candidates, rows, strict=True) if file == "shop/cart.py"}
    best = max(in_cart, key=lambda r: r["bm25"])
    assert best["bm25_in_file_rrank"] == 1.0 and best["bm25_file_share"] == 1.0
    ranks = sorted((r["bm25_in_file_rrank"] for r in in_cart), reverse=True)
    assert ranks == [1.0 / (1 + i) for i in range(len(in_cart))]
    assert {r["file_candidates"] for r in in_cart} == {np.log1p(len(in_cart))}
    clear = cart["Basket._clear"]
    assert clear["class_named"] == 1.0 and clear["is_private"] == 1.0 and clear["is_dunder"] == 0.0
    assert cart["total_price"]["class_named"] == 0.0
    # "cart", "total", "discount" of the task's terms appear in total_price's body.
    assert cart["total_price"]["body_coverage"] > cart["discount_rate"]["body_coverage"] > 0


def test_literal_names_is_a_file_column_tied_to_literals(tmp_path):
    files = {**FILES, "shop/env.py": 'import os\nLIMIT = os.environ.get("SHOP_TAX_LIMIT")\n'}
    repo = indexed_repo(tmp_path / "repo", files)
    task = "The cart total ignores SHOP_TAX_LIMIT when the discount applies."
    f = repo.retrieve(task, config={"keep_features": True}, refresh=False).features
    assert f is not None
    rows = {
        p: dict(zip(FILE_FEATURES, r, strict=True))
        for p, r in zip(f.files, f.file_rows, strict=True)
    }
    assert rows["shop/env.py"]["literal_names"] == 1.0
    assert rows["shop/cart.py"]["literal_names"] == 0.0
    fprior, _ = hand_prior()
    ties = ties_of(FILE_FEATURES, fprior, FILE_TIED, ZEROED["files"])
    col = FILE_FEATURES.index("literal_names")
    assert ties[col] == (FILE_FEATURES.index("literals"), 1.0)


def test_rows_cached_before_a_column_existed_read_it_as_zero(tmp_path):
    """Rows stored without column names hold this version's columns minus the ones
    inserted since (``ADDED_COLUMNS``), and candidate columns appended since are cut off."""
    legacy_files = tuple(c for c in FILE_FEATURES if c not in ADDED_COLUMNS["files"])
    frows = np.arange(2 * len(legacy_files), dtype=float).reshape(2, len(legacy_files)) + 1
    crows = np.ones((3, 19))
    path = tmp_path / "t.npz"
    np.savez_compressed(
        path,
        repo=np.array("acme/shop"),
        files=np.array(["a.py", "b.py"], dtype=str),
        file_rows=frows,
        file_gold=np.array([True, False]),
        cand_rows=crows,
        cand_gold=np.array([True, False, False]),
        cand_file=np.array([0, 0, 1]),
    )
    t = load_rows(path)
    assert t.file_rows.shape == (2, len(FILE_FEATURES))
    assert t.cand_rows.shape == (3, len(CANDIDATE_FEATURES))
    for j, name in enumerate(FILE_FEATURES):
        want = frows[:, legacy_files.index(name)] if name in legacy_files else 0.0
        assert np.array_equal(t.file_rows[:, j], np.broadcast_to(want, (2,)))
    assert t.cand_rows[:, :19].sum() == 57 and t.cand_rows[:, 19:].sum() == 0


def _issue_bench(tmp_path: Path, repo: str = "acme/shop") -> tuple[Path, Path]:
    """An issue benchmark of one task whose tree is written at ``trees/ID``: the corpus's
    record shape, its gold function given by span (``gold_functions``) in its own spelling."""
    trees = tmp_path / "trees"
    for path, text in FILES.items():
        (trees / "shop-1" / path).parent.mkdir(parents=True, exist_ok=True)
        (trees / "shop-1" / path).write_text(text, encoding="utf-8")
    rec = {
        "instance_id": "shop-1",
        "repo": repo,
        "base_commit": "0" * 40,
        "problem_statement": TASK,
        "gold_files": ["shop/cart.py"],
        "gold_functions": [
            {
                "file": "shop/cart.py",
                "qualname": "cart::total_price",
                "start_line": 1,
                "end_line": 3,
            },
        ],
    }
    bench = tmp_path / "bench.jsonl"
    bench.write_text(json.dumps(rec) + "\n", encoding="utf-8")
    return bench, trees


def test_train_ranker_learns_definitions_from_issue_trees_keeping_hand_set_files(tmp_path):
    bench, trees = _issue_bench(tmp_path)
    out, work = tmp_path / "model.json", tmp_path / "work"
    argv = ["eval", "train-ranker", "--corpus", str(bench), "--trees", str(trees)]
    argv += ["--cache", str(tmp_path / "cache"), "--work", str(work), "--out", str(out)]
    assert main([*argv, "--hand-files", "--untied"]) == 0
    rows = load_rows(work / "features" / "shop-1.npz")
    # The gold function, named otherwise by the benchmark, is labelled by its span.
    labelled = rows.cand_gold.nonzero()[0]
    assert len(labelled) == 1 and rows.file_gold.sum() == 1
    model = parse_model(out.read_text(encoding="utf-8"))
    assert model.files is None and model.meta["file_stage"] == "hand"
    repo = indexed_repo(tmp_path / "repo", FILES)
    hand = repo.retrieve(TASK, refresh=False)
    learned = repo.retrieve(TASK, config={"ranker": "learned", "ranker_model": str(out)})
    assert learned.file_ranking == hand.file_ranking  # the hand-set file stage, scores too
    assert learned.candidates[0].qualname.endswith(".total_price")


def test_train_ranker_refuses_reserved_repositories_and_needs_one_tree_source(tmp_path):
    bench, trees = _issue_bench(tmp_path, repo="django/django")
    base = ["eval", "train-ranker", "--corpus", str(bench), "--work", str(tmp_path / "w")]
    base += ["--out", str(tmp_path / "m.json")]
    assert main([*base, "--trees", str(trees), "--cache", str(tmp_path / "c")]) != 0
    assert main(base) != 0  # neither --trees nor --mirror-root
    assert not (tmp_path / "m.json").exists()


TRACE_TASK = (
    "Total is wrong with a discount.\n"
    "Traceback (most recent call last):\n"
    '  File "shop/cart.py", line 3, in total_price\n'
    "    return sum(items) * discount_rate()\n"
    "ValueError: bad rate\n"
    "The test tests/test_cart.py fails; rounding in shop/money.py looks fine."
)


@pytest.mark.parametrize("task", [TASK, TRACE_TASK])
def test_hand_set_ranking_is_the_hand_weight_vector_over_the_feature_rows(tmp_path, task):
    """The hand-set fusion and the learned ranker read the same columns: scored with the
    weights ``hand_prior`` reads from the settings, the feature rows give the hand-set file
    order and every candidate's hand-set score, so the two rankers cannot drift apart."""
    files = {
        **FILES,
        "tests/test_cart.py": (
            "from shop.cart import total_price\n\n\n"
            "def test_total():\n    assert total_price([1]) == 0.9\n"
        ),
    }
    repo = indexed_repo(tmp_path / "repo", files)
    no_rules = {"module_header": False, "second_file_rank": 0, "top_k": 100}
    res = repo.retrieve(task, config={**no_rules, "keep_features": True}, refresh=False)
    f = res.features
    assert f is not None and f.candidate_rows is not None and len(f.candidates) > 2
    fprior, dprior = hand_prior(no_rules)
    fw = np.array([fprior.get(c, 0.0) for c in FILE_FEATURES])
    file_score = f.file_rows @ fw
    order = sorted(range(len(f.files)), key=lambda i: (-file_score[i], f.files[i]))
    assert [f.files[i] for i in order] == [p for p in res.ranked_files() if p in f.files]
    dw = np.array([dprior.get(c, 0.0) for c in CANDIDATE_FEATURES])
    want = dict(zip(f.candidates, (f.candidate_rows @ dw).tolist(), strict=True))
    got = {(c.file, c.symbol): c.score for c in res.candidates}
    assert set(got) == set(want)
    assert all(abs(got[k] - want[k]) < 1e-9 for k in got)
