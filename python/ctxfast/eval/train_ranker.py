"""Train the learned ranker (``retrieval.learned_ranker``) from a mined corpus of bug-fix commits.

usage: ctxfast eval train-ranker --corpus TASKS.jsonl [...] --mirror-root DIR --work DIR
       --out MODEL.json [--l2 X] [--limit N] [--learner linear|boosted] [--retrieval-config JSON]

For each task of the corpus (``ctxfast eval mine --split train``: repositories outside every
benchmark and outside the multi-language dev set) the tree at ``base_commit`` is written from
the mirror, indexed (sharing one parse cache), and retrieved with ``keep_features``: the file
rows of every file some signal points at and the candidate rows of every merged candidate,
labelled by the commit's gold files and gold definitions. Rows are cached per task under
``--work/features`` (the tree and its index are deleted once read), so a rerun only trains.

Each stage is a linear listwise model: per task, a softmax over the pool's scores, trained to
put its mass on the gold rows (cross-entropy, L2 on the weights, full-batch gradient descent
from zero on standardised features — deterministic, no dependency beyond numpy). The file
stage is trained first; the candidates' ``file_prob`` / ``file_rrank`` columns are then
recomputed from its scores, exactly as the pipeline computes them at query time.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ctxfast.eval.errors import EvalError
from ctxfast.eval.mine import check_split

if TYPE_CHECKING:  # numpy is imported where it is used: `ctxfast --help` must not pay for it
    import numpy as np

    from ctxfast.repository import Repository

#: L2 penalty pulling the standardised weights towards the hand-set prior (per task-averaged
#: loss): the corpus moves a weight away from the hand-set fusion only where its evidence is
#: strong.
DEFAULT_L2 = 1e-2
DEFAULT_STEPS = 400
DEFAULT_LEARNING_RATE = 0.1
#: Evidence the corpus cannot teach, because the miner strips it from every commit message
#: (file paths, the changed functions' names) or commit messages almost never carry it
#: (tracebacks): fit on the corpus, a task naming a function would learn to look away from
#: it. Those columns keep the hand-set fusion's ratio to the column they were added beside —
#: per raw unit, the ratio of their hand-set weights times the learned weight of the base.
FILE_TIED = {
    "path_mentions": "file_bm25",
    "traceback": "file_bm25",
    "definition_match": "file_bm25",
    # Environment-variable names and flags: commit messages rarely give them, and rows cached
    # before the column existed hold none (``load_rows``), so it keeps ``literals``' ratio.
    "literal_names": "literals",
}
DEFINITION_TIED = {"named": "bm25", "anchor": "bm25", "named_callee": "bm25"}
#: Columns that repeat a tied signal in another form: held at zero. (``file_named``, the
#: candidate's file defines a name the task uses, is what the miner strips: fit, it learns
#: that a file whose names the commit message uses holds no fix.)
ZEROED = {"files": ("named_defs",), "definitions": ("src_traceback", "file_named")}


def hand_prior(
    settings: dict[str, Any] | None = None,
) -> tuple[dict[str, float], dict[str, float]]:
    """The hand-set fusion's weights per raw unit of each feature column (files, definitions),
    read from the retrieval settings the rows were extracted with (the defaults updated by
    ``settings``, ``--retrieval-config``), so the prior is that fusion, not a copy of it, and
    a model is reproduced with the settings it was trained under."""
    from ctxfast.retrieval.config import RetrievalConfig
    from ctxfast.retrieval.pipeline import NAMED_BONUS
    from ctxfast.retrieval.signals import hand_weights

    cfg = RetrievalConfig.from_mapping(settings)
    files = hand_weights(cfg)
    test = cfg.demotions.test_penalty if cfg.demotions.demote_tests else 0.0
    demote = {
        "is_test": -test,
        "minor_language": -cfg.demotions.minor_language_penalty
        if cfg.demotions.demote_minor_languages
        else 0.0,
        "is_example": -cfg.demotions.example_penalty,
        "is_generated": -cfg.demotions.generated_penalty,
        "is_bundle": -cfg.demotions.bundle_penalty if cfg.demotions.bundle_min_files > 0 else 0.0,
    }
    defs = {
        "bm25": 1.0,
        "file_prob": 1.0,
        "anchor": cfg.rerank.traceback_bonus,
        "named": NAMED_BONUS,
        "named_callee": cfg.rerank.named_callee_bonus,
        "second_callee": cfg.rerank.second_callee_bonus,
        "goal": cfg.rerank.goal_candidate_weight,
        "src_dispatch": cfg.rerank.dispatch_bonus if cfg.sources.dispatch else 0.0,
        "src_literal": cfg.rerank.literal_bonus if cfg.sources.literal_defs else 0.0,
        "inline_test": -test,
        "in_file_log_rank": -cfg.rerank.same_file_decay,
    }
    return {**files, **demote}, {**defs, **demote}


def ties_of(
    names: tuple[str, ...], prior: dict[str, float], tied: dict[str, str], zeroed: tuple[str, ...]
) -> dict[int, tuple[int, float]]:
    out = {names.index(c): (names.index(b), prior[c] / prior[b]) for c, b in tied.items()}
    out.update({names.index(c): (0, 0.0) for c in zeroed})
    return out


@dataclass
class TaskRows:
    """The stored rows of one task."""

    repo: str
    files: list[str]
    file_rows: np.ndarray
    file_gold: np.ndarray
    cand_rows: np.ndarray
    cand_gold: np.ndarray
    cand_file: np.ndarray  # index into ``files`` of each candidate's file, -1 outside the pool


def _archive(mirror: Path, commit: str, dest: Path) -> None:
    dest.mkdir(parents=True)
    git = subprocess.Popen(
        ["git", "-C", str(mirror), "archive", "--format=tar", commit],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    tar = subprocess.run(["tar", "-x", "-C", str(dest)], stdin=git.stdout, capture_output=True)
    assert git.stdout is not None
    git.stdout.close()
    if git.wait() != 0 or tar.returncode != 0:
        raise RuntimeError(f"git archive {commit} failed")


def extract_task(
    task: dict[str, Any], mirror_root: Path, work: Path, config: dict[str, Any] | None = None
) -> Path | None:
    """Rows of one mined task, cached at ``work/features/ID.npz`` (None when the tree fails):
    the tree at ``base_commit`` is written from the mirror, indexed and deleted once read.
    ``config`` overrides the retrieval settings (the candidate pool the model will rank)."""
    from ctxfast.recon.parse_cache import ParseCache
    from ctxfast.repository import Repository

    out = work / "features" / f"{task['instance_id']}.npz"
    if out.exists():
        return out
    mirror = mirror_root / task["repo"].replace("/", "+") / "repo"
    scratch = work / f"scratch-{os.getpid()}"
    tree, index = scratch / "tree", scratch / "index"
    shutil.rmtree(scratch, ignore_errors=True)

    def repo() -> Repository:
        _archive(mirror, task["base_commit"], tree)
        return Repository(tree, index_dir=index, parse_cache=ParseCache(work / "parse-cache"))

    try:
        return _rows_of(task, repo, out, config)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def extract_tree_task(
    task: dict[str, Any], trees: Path, cache: Path, work: Path, config: dict[str, Any] | None = None
) -> Path | None:
    """Rows of one task whose tree is already written at ``trees/ID`` (a benchmark's
    ``--trees``), indexed in the evaluation's own cache layout (``cache/index/KEY``, the
    parse cache ``cache/parse``) so a tree the evaluation indexed is not indexed again."""
    from ctxfast.eval.trees import DirTrees
    from ctxfast.recon.parse_cache import ParseCache
    from ctxfast.repository import Repository

    out = work / "features" / f"{task['instance_id']}.npz"
    if out.exists():
        return out

    def repo() -> Repository:
        tree = DirTrees(trees).tree_for_instance(task["instance_id"])
        index_dir = cache / "index" / tree.key
        return Repository(tree.path, index_dir=index_dir, parse_cache=ParseCache(cache / "parse"))

    return _rows_of(task, repo, out, config)


def _rows_of(
    task: dict[str, Any],
    make_repo: Callable[[], Repository],
    out: Path,
    config: dict[str, Any] | None,
) -> Path | None:
    """Index the repository ``make_repo`` gives, retrieve for the task keeping the feature
    rows, and store them at ``out``; None when the tree does not build (skipped, not fatal)."""
    try:
        repo = make_repo()
        repo.index()
        res = repo.retrieve(
            task["problem_statement"], config={**(config or {}), "keep_features": True}
        )
    except Exception as exc:
        print(f"{task['instance_id']}: skipped ({exc})", file=sys.stderr)
        return None
    return store_rows(task, res, out)


def gold_labels(
    task: dict[str, Any], candidates: list[tuple[str, str | None]], spans: list[tuple[int, int]]
) -> list[bool]:
    """Which candidates are a gold definition: by ``(file, qualname)`` (``gold_symbols``,
    the mined and SWE-bench records) or by span (``gold_functions``, the issue corpus, whose
    qualnames follow its own parser's conventions; see ``metrics.aligned_to_gold``)."""
    from ctxfast.eval.metrics import aligned_to_gold

    syms = {(g["file"], g["qualname"]) for g in task.get("gold_symbols") or []}
    gold_spans = [
        (g["file"], g["qualname"], int(g["start_line"]), int(g["end_line"]))
        for g in task.get("gold_functions") or []
        if g.get("qualname") and g.get("start_line")
    ]
    if gold_spans:
        named, _ = aligned_to_gold(
            [(f, q, a, b, True) for (f, q), (a, b) in zip(candidates, spans, strict=True)],
            gold_spans,
        )
        syms |= {(f, q) for f, q, _, _ in gold_spans}
        return [c in syms for c in named]
    return [c in syms for c in candidates]


def store_rows(task: dict[str, Any], res: Any, out: Path) -> Path:
    """Write the feature rows of one retrieval ``res`` labelled by the task's gold files and
    gold definitions to ``out`` (a whole file or none: written aside, then renamed)."""
    import numpy as np

    from ctxfast.retrieval.features import CANDIDATE_FEATURES, FILE_FEATURES

    feats = res.features
    assert feats is not None and feats.candidate_rows is not None
    gold_files = set(task["gold_files"])
    where = {f: i for i, f in enumerate(feats.files)}
    spans = feats.candidate_spans or [(0, 0)] * len(feats.candidates)
    out.parent.mkdir(parents=True, exist_ok=True)
    part = out.with_name(f"{out.stem}.{os.getpid()}.part.npz")
    np.savez_compressed(
        part,
        repo=np.array(task["repo"]),
        file_columns=np.array(FILE_FEATURES),
        cand_columns=np.array(CANDIDATE_FEATURES),
        files=np.array(feats.files, dtype=str),
        file_rows=feats.file_rows,
        file_gold=np.array([f in gold_files for f in feats.files], dtype=bool),
        cand_rows=feats.candidate_rows,
        cand_gold=np.array(gold_labels(task, feats.candidates, spans), dtype=bool),
        cand_file=np.array([where.get(f, -1) for f, _ in feats.candidates], dtype=np.int64),
    )
    part.replace(out)  # an interrupted run never leaves a half file that looks done
    return out


#: Columns inserted after the first corpus was cached. Rows stored without column names
#: (``file_columns`` / ``cand_columns``) hold this version's columns without these, cut to
#: their width (later columns were appended at the end); what they lack reads as zeros.
ADDED_COLUMNS = {"files": ("literal_names",), "definitions": ()}


def _aligned(rows: np.ndarray, stored: tuple[str, ...], names: tuple[str, ...]) -> np.ndarray:
    """``rows`` (columns ``stored``) as this version's columns ``names``; a column the rows
    lack is zero."""
    import numpy as np

    if stored == names:
        return rows
    out = np.zeros((len(rows), len(names)))
    where = {c: i for i, c in enumerate(stored)}
    for j, c in enumerate(names):
        if c in where:
            out[:, j] = rows[:, where[c]]
    return out


def load_rows(path: Path) -> TaskRows:
    """The stored rows of one task, in this version's columns (see ``ADDED_COLUMNS``)."""
    import numpy as np

    from ctxfast.retrieval.features import CANDIDATE_FEATURES, FILE_FEATURES

    # Never pickle: a stored row file is data, and loading it must not run code. Files an
    # older version wrote with object arrays fail here; delete them to extract them again.
    z = np.load(path, allow_pickle=False)

    def stored(
        key: str, width: int, names: tuple[str, ...], added: tuple[str, ...]
    ) -> tuple[str, ...]:
        if key in z.files:
            return tuple(str(c) for c in z[key])
        return tuple(c for c in names if c not in added)[:width]

    frows, crows = z["file_rows"], z["cand_rows"]
    fcols = stored("file_columns", frows.shape[1], FILE_FEATURES, ADDED_COLUMNS["files"])
    ccols = stored("cand_columns", crows.shape[1], CANDIDATE_FEATURES, ADDED_COLUMNS["definitions"])
    return TaskRows(
        str(z["repo"]),
        [str(f) for f in z["files"]],
        _aligned(frows, fcols, FILE_FEATURES),
        z["file_gold"],
        _aligned(crows, ccols, CANDIDATE_FEATURES),
        z["cand_gold"],
        z["cand_file"],
    )


def fit_listwise(
    groups: list[tuple[np.ndarray, np.ndarray]],
    l2: float = DEFAULT_L2,
    steps: int = DEFAULT_STEPS,
    lr: float = DEFAULT_LEARNING_RATE,
    ties: dict[int, tuple[int, float]] | None = None,
    prior: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(mean, scale, weights)`` of a linear scorer whose per-group softmax puts its mass on
    the gold rows. ``groups`` are ``(rows, gold mask)`` pairs with at least one gold row.
    Adam on the mean cross-entropy over groups plus ``l2 · |w|²``, from zero: the same input
    always gives the same weights. ``ties`` maps a column to ``(base column, ratio)``: its
    weight per raw unit is held at ``ratio`` times the base column's (it is not fit).
    ``prior`` (weights per raw unit) is scaled by the one factor that fits best — the
    softmax's temperature — and the L2 penalty then pulls towards it instead of zero."""
    import numpy as np

    rows = np.concatenate([x for x, _ in groups])
    mean = rows.mean(axis=0)
    scale = rows.std(axis=0)
    scale[scale < 1e-9] = 1.0
    xs = (rows - mean) / scale
    for col, (base, ratio) in (ties or {}).items():
        # w_col·z_col = ratio·(w_base/scale_base)·(x_col - mean_col): fold into the base.
        xs[:, base] += ratio * (rows[:, col] - mean[col]) / scale[base]
        xs[:, col] = 0.0
    sizes = np.array([len(x) for x, _ in groups])
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    owner = np.repeat(np.arange(len(groups)), sizes)
    target = np.concatenate([g / g.sum() for _, g in groups])
    n = len(groups)

    def softmax_minus_target(s: np.ndarray) -> np.ndarray:
        top = np.maximum.reduceat(s, starts)
        e = np.exp(s - top[owner])
        gradient: np.ndarray = e / np.add.reduceat(e, starts)[owner] - target
        return gradient

    centre = np.zeros(xs.shape[1])
    if prior is not None:
        base = prior * scale  # the prior in standardised units
        proj = xs @ base
        tau = 1.0
        for _ in range(200):  # the temperature: Newton-free, plain gradient steps on one number
            tau -= 0.5 * float(proj @ softmax_minus_target(tau * proj)) / n
        centre = tau * base
    w = centre.copy()
    m = np.zeros_like(w)
    v = np.zeros_like(w)
    b1, b2, eps = 0.9, 0.999, 1e-8
    for t in range(1, steps + 1):
        grad = xs.T @ softmax_minus_target(xs @ w) / n + 2 * l2 * (w - centre)
        m = b1 * m + (1 - b1) * grad
        v = b2 * v + (1 - b2) * grad * grad
        w -= lr * (m / (1 - b1**t)) / (np.sqrt(v / (1 - b2**t)) + eps)
    for col, (base, ratio) in (ties or {}).items():
        w[col] = ratio * w[base] * scale[col] / scale[base]
    return mean, scale, w


#: Gradient-boosted trees of the definition stage (``--learner boosted``): LambdaRank on each
#: task's candidates, gold definitions labelled 1. Small, shallow trees and a large leaf
#: minimum, so each split rests on hundreds of candidates of many tasks; one thread and
#: ``deterministic`` so the same rows give the same trees byte for byte.
TREE_PARAMS: dict[str, Any] = {
    "objective": "lambdarank",
    "learning_rate": 0.05,
    "num_leaves": 15,
    "min_data_in_leaf": 50,
    "feature_fraction": 0.8,
    "lambdarank_truncation_level": 20,
    "deterministic": True,
    "force_row_wise": True,
    "num_threads": 1,
    "seed": 0,
    "verbose": -1,
}
TREE_ROUNDS = 200


def fit_trees(
    groups: list[tuple[np.ndarray, np.ndarray]],
    names: tuple[str, ...],
    columns: list[int],
    init: np.ndarray | None = None,
    params: dict[str, Any] | None = None,
    rounds: int = TREE_ROUNDS,
) -> Any:
    """A :class:`~ctxfast.retrieval.learned_ranker.TreeStage` over ``columns`` of the rows, fit by
    LightGBM (a training-only dependency: the shipped table is scored in numpy) on
    ``(rows, gold mask)`` groups, boosted from the scores ``init`` when given."""
    import lightgbm as lgb
    import numpy as np

    x = np.concatenate([g[0] for g in groups])[:, columns]
    y = np.concatenate([g[1] for g in groups]).astype(np.int64)
    data = lgb.Dataset(
        x, y, group=[len(g[1]) for g in groups], init_score=init, free_raw_data=False
    )
    booster = lgb.train({**TREE_PARAMS, **(params or {})}, data, rounds)
    return trees_of(booster.dump_model(), tuple(names[c] for c in columns), tuple(columns))


def trees_of(dump: dict[str, Any], names: tuple[str, ...], columns: tuple[int, ...] = ()) -> Any:
    """LightGBM's ``dump_model()`` as one flat node table (see ``TreeStage``)."""
    import numpy as np

    from ctxfast.retrieval.learned_ranker import TreeStage

    feature: list[int] = []
    threshold: list[float] = []
    left: list[int] = []
    right: list[int] = []
    value: list[float] = []
    roots: list[int] = []
    depth = 0

    def add(node: dict[str, Any], level: int) -> int:
        nonlocal depth
        me = len(feature)
        feature.append(-1)
        threshold.append(0.0)
        left.append(me)
        right.append(me)
        value.append(float(node.get("leaf_value", 0.0)))
        if "split_feature" in node:
            if node.get("decision_type", "<=") != "<=":
                raise EvalError(f"unsupported split {node.get('decision_type')}")
            depth = max(depth, level + 1)
            feature[me] = int(node["split_feature"])
            threshold[me] = float(node["threshold"])
            left[me] = add(node["left_child"], level + 1)
            right[me] = add(node["right_child"], level + 1)
        return me

    for tree in dump["tree_info"]:
        roots.append(add(tree["tree_structure"], 0))
    return TreeStage(
        names,
        np.array(roots, dtype=np.int64),
        np.array(feature, dtype=np.int64),
        np.array(threshold),
        np.array(left, dtype=np.int64),
        np.array(right, dtype=np.int64),
        np.array(value),
        depth,
        columns,
    )


def file_probs(rows: TaskRows, stage: Any) -> np.ndarray:
    from ctxfast.retrieval.features import softmax

    return softmax(stage.score(rows.file_rows))


def with_file_columns(rows: TaskRows, prob: np.ndarray) -> np.ndarray:
    """The candidate rows with ``file_prob`` / ``file_rrank`` as the pipeline computes them
    from the learned file probabilities (ranks by descending probability, ties by path)."""
    from ctxfast.retrieval.features import CANDIDATE_FEATURES, _rranks

    out = rows.cand_rows.copy()
    if not len(out):
        return out
    prob_by = dict(zip(rows.files, prob.tolist(), strict=True))
    rr = _rranks(prob_by)
    ip, ir = CANDIDATE_FEATURES.index("file_prob"), CANDIDATE_FEATURES.index("file_rrank")
    for i, fi in enumerate(rows.cand_file.tolist()):
        f = rows.files[fi] if fi >= 0 else None
        out[i, ip] = prob_by.get(f, 0.0) if f else 0.0
        out[i, ir] = rr.get(f, 0.0) if f else 0.0
    return out


def boosted(
    linear: Any,
    groups: list[tuple[np.ndarray, np.ndarray]],
    names: tuple[str, ...],
    fixed: Iterable[str],
    params: dict[str, Any] | None = None,
    rounds: int = TREE_ROUNDS,
) -> Any:
    """``linear`` plus trees fit to its residual over every column but ``fixed`` (the tied
    and zeroed ones, which keep their linear weight)."""
    import numpy as np

    from ctxfast.retrieval.learned_ranker import LinearStage, SumStage

    # The trees are fit to the residual of the linear part as it will be read back from the
    # model file (weights rounded to 6 digits), so the shipped sum is the one that was fit.
    linear = LinearStage.from_dict(linear.to_dict(), names)
    skip = set(fixed)
    cols = [i for i, n in enumerate(names) if n not in skip]
    init = np.concatenate([linear.score(x) for x, _ in groups])
    return SumStage(linear, fit_trees(groups, names, cols, init, params, rounds))


def train(
    tasks: list[TaskRows],
    l2: float = DEFAULT_L2,
    steps: int = DEFAULT_STEPS,
    learner: str = "linear",
    settings: dict[str, Any] | None = None,
    tied: bool = True,
    hand_files: bool = False,
) -> Any:
    """The two stages from the corpus rows; ``learner="boosted"`` adds trees to the
    definition stage (``boosted``). ``settings`` are the retrieval settings the rows were
    extracted with (the prior's weights). ``tied=False`` fits the columns commit messages
    cannot teach (``FILE_TIED``, ``DEFINITION_TIED``, ``ZEROED``): rows from issue texts.
    ``hand_files`` keeps the hand-set file stage (the model's ``files`` is None) and fits the
    definitions on the rows as extracted, whose file columns are that stage's."""
    import numpy as np

    from ctxfast.retrieval.features import CANDIDATE_FEATURES, FILE_FEATURES
    from ctxfast.retrieval.learned_ranker import LinearStage, RankerModel

    fgroups = [(t.file_rows, t.file_gold) for t in tasks if t.file_gold.any()]
    if not fgroups:
        raise EvalError("no task has a gold file among its ranked files")
    fprior, dprior = hand_prior(settings)
    fties = ties_of(FILE_FEATURES, fprior, FILE_TIED, ZEROED["files"]) if tied else {}
    fvec = np.array([fprior.get(c, 0.0) for c in FILE_FEATURES])
    files = (
        None
        if hand_files
        else LinearStage(FILE_FEATURES, *fit_listwise(fgroups, l2, steps, ties=fties, prior=fvec))
    )
    cgroups = []
    for t in tasks:
        if t.cand_gold.any():
            rows = t.cand_rows if files is None else with_file_columns(t, file_probs(t, files))
            cgroups.append((rows, t.cand_gold))
    if not cgroups:
        raise EvalError("no task has a gold definition among its candidates")
    dties = (
        ties_of(CANDIDATE_FEATURES, dprior, DEFINITION_TIED, ZEROED["definitions"]) if tied else {}
    )
    dvec = np.array([dprior.get(c, 0.0) for c in CANDIDATE_FEATURES])
    defs: Any = LinearStage(
        CANDIDATE_FEATURES, *fit_listwise(cgroups, l2, steps, ties=dties, prior=dvec)
    )
    if learner == "boosted":
        fixed = (*DEFINITION_TIED, *ZEROED["definitions"])
        defs = boosted(defs, cgroups, CANDIDATE_FEATURES, fixed)
    per_repo: dict[str, int] = defaultdict(int)
    for t in tasks:
        per_repo[t.repo] += 1
    meta = {
        "tasks": len(tasks),
        "file_groups": len(fgroups),
        "definition_groups": len(cgroups),
        "repos": dict(sorted(per_repo.items())),
        "l2": l2,
        "steps": steps,
        "learner": learner,
        "file_stage": "hand" if hand_files else "learned",
        "tied": (
            {"files": FILE_TIED, "definitions": DEFINITION_TIED, "zeroed": ZEROED} if tied else {}
        ),
        "prior": {"files": fprior, "definitions": dprior},
    }
    return RankerModel(files, defs, meta)


def file_acc(tasks: Iterable[TaskRows], stage: Any, k: int) -> float:
    """Share of tasks whose every gold file (in the pool) ranks in the top ``k``."""
    import numpy as np

    hits = []
    for t in tasks:
        if not t.file_gold.any():
            continue
        order = np.lexsort((np.array(t.files), -stage.score(t.file_rows)))
        top = set(order[:k].tolist())
        hits.append(all(i in top for i in np.flatnonzero(t.file_gold).tolist()))
    return float(np.mean(hits)) if hits else 0.0


def load_corpus(paths: list[Path], split: str = "train") -> list[dict[str, Any]]:
    tasks = []
    for p in paths:
        for line in p.read_text(encoding="utf-8").splitlines():
            if line.strip():
                tasks.append(json.loads(line))
    by_repo: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for t in sorted(tasks, key=lambda t: t["instance_id"]):
        by_repo[t["repo"]].append(t)
    for repo in by_repo:
        check_split(repo, split)
    # Round robin over repositories: a run stopped early still covers every repository.
    turns = [(i, repo, t) for repo, ts in by_repo.items() for i, t in enumerate(ts)]
    return [t for _, _, t in sorted(turns, key=lambda x: (x[0], x[1]))]


def register(esub: Any) -> None:
    """Add ``ctxfast eval train-ranker`` to the eval subcommands."""
    ap = esub.add_parser("train-ranker", help="train the learned ranker from a mined corpus")
    ap.add_argument("--corpus", required=True, nargs="+", type=Path, help="mined JSONL files")
    ap.add_argument("--mirror-root", type=Path, help="holds OWNER+NAME/repo (mined tasks)")
    ap.add_argument(
        "--trees",
        type=Path,
        help="DIR/<instance_id>/ trees of an issue benchmark (instead of --mirror-root); "
        "its repositories may be dev repositories, never reserved ones",
    )
    ap.add_argument(
        "--cache", type=Path, help="with --trees: the evaluation's cache root (index, parse)"
    )
    ap.add_argument("--repos", default="", help="comma-separated owner/name: train on these only")
    ap.add_argument(
        "--untied",
        action="store_true",
        help="fit every column (issue texts carry the paths, names and tracebacks commit "
        "messages lack, so no column keeps the hand-set ratio)",
    )
    ap.add_argument(
        "--hand-files",
        action="store_true",
        help="keep the hand-set file stage; learn the definition stage only",
    )
    ap.add_argument("--work", required=True, type=Path, help="feature cache and scratch trees")
    ap.add_argument("--out", required=True, type=Path, help="model JSON to write")
    ap.add_argument("--l2", type=float, default=DEFAULT_L2, help="L2 penalty on the weights")
    ap.add_argument(
        "--extract-only", action="store_true", help="cache the feature rows, do not train"
    )
    ap.add_argument(
        "--limit",
        type=int,
        default=0,
        help="use only the first N tasks of the round-robin order (0: all)",
    )
    ap.add_argument(
        "--learner",
        choices=("linear", "boosted"),
        default="linear",
        help="definition stage: linear, or linear plus boosted trees (needs lightgbm)",
    )
    ap.add_argument(
        "--retrieval-config",
        default="{}",
        help="JSON retrieval settings the rows are extracted with (e.g. the candidate pool)",
    )
    ap.add_argument(
        "--shard",
        default="0/1",
        help="K/N: extract only every N-th task from the K-th (parallel runs)",
    )
    ap.set_defaults(func=run)


def run(a: argparse.Namespace) -> int:
    if (a.trees is None) == (a.mirror_root is None):
        raise EvalError("give exactly one of --trees and --mirror-root")
    if a.trees is not None and a.cache is None:
        raise EvalError("--trees needs --cache")
    corpus = load_corpus(a.corpus, "train" if a.trees is None else "dev")
    if a.repos:
        keep = set(a.repos.split(","))
        corpus = [t for t in corpus if t["repo"] in keep]
    if a.limit:
        corpus = corpus[: a.limit]
    rcfg = json.loads(a.retrieval_config)
    k, n_shards = (int(x) for x in a.shard.split("/"))
    stored = []
    for n, task in enumerate(corpus, 1):
        if a.extract_only and (n - 1) % n_shards != k:
            continue
        path = (
            extract_task(task, a.mirror_root, a.work, rcfg)
            if a.trees is None
            else extract_tree_task(task, a.trees, a.cache, a.work, rcfg)
        )
        if path is not None:
            stored.append(path)
        if n % 25 == 0:
            print(f"{n}/{len(corpus)} tasks read", file=sys.stderr)
    if a.extract_only:
        return 0
    rows = [load_rows(p) for p in stored]
    model = train(
        rows, a.l2, learner=a.learner, settings=rcfg, tied=not a.untied, hand_files=a.hand_files
    )
    a.out.write_text(model.to_json() + "\n", encoding="utf-8")
    if model.files is not None:
        print(
            f"trained on {len(rows)} tasks: file Acc@1 {file_acc(rows, model.files, 1):.3f} "
            f"Acc@5 {file_acc(rows, model.files, 5):.3f} (training set)",
            file=sys.stderr,
        )
    return 0
