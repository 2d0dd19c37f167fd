"""Orchestration: resolve trees, run every system per instance, score, aggregate, write JSON.

Instances are grouped by source tree so each tree is prepared (indexed) once per system; with
``--jobs N`` groups run in worker processes. A failure on one instance or tree is recorded in
``skipped`` with its reason and the run continues (fail-soft), so a 300-instance run is never
lost to one bad archive.
"""

from __future__ import annotations

import sys
from collections import defaultdict
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ctxfast.eval import metrics as M
from ctxfast.eval.ablation import ablation_entry
from ctxfast.eval.bench import Instance, Region, located_regions, present_symbols
from ctxfast.eval.compare import construction_rule, recon_rule, retrieval_rule
from ctxfast.eval.errors import EvalError
from ctxfast.eval.sources import Tree
from ctxfast.eval.systems import RetrievalOutput, System, read_text

SUITES = ("retrieval", "recon", "construct", "all")
TOP_KEYS = (
    "suite", "instances", "skipped", "file_acc", "file_recall_mean", "function_acc", "mrr",
    "required_file_recall", "required_symbol_recall", "irrelevant_context_ratio",
    "tokens_retrieved_p50", "retrieve_ms_p50", "region_recall_at_5", "context_efficiency",
    "question_accuracy", "gold_coverage", "relevance_precision", "tokens_per_covered",
    "baseline", "per_repo", "per_language", "per_instance", "ablation", "decision",
)  # fmt: skip
METRIC_KEYS = TOP_KEYS[3:18]
SUITE_METRICS = {
    "retrieval": (
        "file_acc", "file_recall_mean", "function_acc", "mrr", "required_file_recall",
        "required_symbol_recall", "irrelevant_context_ratio", "tokens_retrieved_p50",
        "retrieve_ms_p50",
    ),
    "recon": ("region_recall_at_5", "context_efficiency", "question_accuracy"),
    "construct": ("gold_coverage", "relevance_precision", "tokens_per_covered"),
}  # fmt: skip
SUITE_METRICS["all"] = tuple(
    k for s in ("retrieval", "recon", "construct") for k in SUITE_METRICS[s]
)
ABLATION_METRICS = {
    "retrieval": ("recall@1", "recall@3", "recall@5", "mrr", "required_file_recall",
                  "required_symbol_recall", "irrelevant_context_ratio", "tokens_retrieved_p50"),
    "recon": ("region_recall_at_5", "context_efficiency", "question_accuracy"),
    "construct": ("gold_coverage", "relevance_precision", "tokens_per_covered"),
}  # fmt: skip
ABLATION_METRICS["all"] = tuple(dict.fromkeys(v for s in ABLATION_METRICS.values() for v in s))


@dataclass
class Job:
    """One instance with everything needed to score it (picklable for worker processes)."""

    instance: Instance
    tree: Tree
    gold: list[Region]
    n_hunks: int
    gold_symbols: list[tuple[str, str]]


@dataclass
class RunConfig:
    suite: str = "retrieval"
    cache_dir: Path = field(default_factory=lambda: Path("~/.cache/ctxfast").expanduser())
    jobs: int = 1
    edge_share: float = 0.25
    progress: bool = True


# --------------------------------------------------------------------------- scoring


def _gold_line_tokens(
    root: Path, lines: set[tuple[str, int]], gold: Sequence[Region]
) -> dict[tuple[str, int], int]:
    """Token counts of delivered lines that lie inside gold (the only ones the ratio needs)."""
    from ctxfast.tokens import count_tokens

    want = [(f, n) for f, n in lines if any(g.file == f and g.start <= n <= g.end for g in gold)]
    by_file: dict[str, list[str]] = {}
    out = {}
    for f, n in want:
        if f not in by_file:
            by_file[f] = read_text(root / f).splitlines(keepends=True)
        text = by_file[f]
        if 1 <= n <= len(text):
            out[(f, n)] = count_tokens(text[n - 1])
    return out


def edge_placement(
    cands: Sequence[Any], gold: Sequence[Region], total_tokens: int, edge: float
) -> bool | None:
    """spec-08 §7.6 step 1: every item overlapping gold starts in the first or last ``edge``
    share of the window's tokens. None when no item overlaps gold."""
    if total_tokens <= 0:
        return None
    pos, starts = 0, []
    for c in cands:
        if any(g.overlaps(c.file, c.start, c.end) for g in gold):
            starts.append(pos)
        pos += c.tokens
    if not starts:
        return None
    lo, hi = edge * total_tokens, (1 - edge) * total_tokens
    return all(s <= lo or s >= hi for s in starts)


def score(job: Job, out: RetrievalOutput, symbol_level: bool, edge: float) -> dict[str, Any]:
    """Every per-instance metric for one system's output."""
    inst, gold = job.instance, job.gold
    rf = out.ranked_files
    syms = [(c.file, c.qualname) for c in out.candidates]
    fns = {(c.file, c.qualname) for c in out.candidates if c.qualname and c.is_function}
    delivered = {fl for c in out.candidates for fl in c.lines()}
    line_tokens = _gold_line_tokens(job.tree.path, delivered, gold)
    win_items = [M.WindowItem(c.file, c.qualname, c.start, c.end, c.tokens) for c in out.candidates]
    gsyms = job.gold_symbols if symbol_level else []
    return {
        "file_acc": {str(k): M.file_acc_at_k(rf, inst.gold_files, k) for k in M.KS_FILE},
        "file_recall": {str(k): M.file_recall_at_k(rf, inst.gold_files, k) for k in M.KS_FILE},
        "rr": M.reciprocal_rank(rf, inst.gold_files),
        "function_acc": {
            str(k): M.function_acc_at_k(syms, gsyms, k, fns) if symbol_level else None
            for k in M.KS_FUNCTION
        },
        "required_file_recall": M.required_file_recall(
            {c.file for c in out.candidates}, inst.gold_files
        ),
        "required_symbol_recall": (
            M.required_symbol_recall(syms, gsyms, fns) if symbol_level else None
        ),
        "irrelevant_context_ratio": M.irrelevant_context_ratio(
            out.token_count, sorted(delivered), line_tokens, gold
        ),
        "tokens": out.token_count,
        "ms": round(out.ms, 3),
        "region_recall_at_5": M.region_recall_at_k(out.regions(), gold),
        "context_efficiency": M.context_efficiency(out.regions(), gold),
        "covered": M.covers_all_gold(delivered, gold),
        "relevance_precision": M.relevance_precision(
            win_items, out.token_count, gold, job.gold_symbols if symbol_level else []
        ),
        "placement_ok": edge_placement(out.candidates, gold, out.token_count, edge),
        "top_files": rf[:10],
    }


def aggregate(rows: Sequence[dict[str, Any]], suite: str) -> dict[str, Any]:
    """Mean/median the per-instance scores into the stable metric keys."""
    agg: dict[str, Any] = {
        "file_acc": {str(k): M.mean(r["file_acc"][str(k)] for r in rows) for k in M.KS_FILE},
        "file_recall_mean": {
            str(k): M.mean(r["file_recall"][str(k)] for r in rows) for k in M.KS_FILE
        },
        "function_acc": {
            str(k): M.mean(r["function_acc"][str(k)] for r in rows) for k in M.KS_FUNCTION
        },
        "mrr": M.mean(r["rr"] for r in rows),
        "required_file_recall": M.mean(r["required_file_recall"] for r in rows),
        "required_symbol_recall": M.mean(r["required_symbol_recall"] for r in rows),
        "irrelevant_context_ratio": M.mean(r["irrelevant_context_ratio"] for r in rows),
        "tokens_retrieved_p50": M.p50(r["tokens"] for r in rows),
        "retrieve_ms_p50": M.p50(r["ms"] for r in rows),
        "region_recall_at_5": M.mean(r["region_recall_at_5"] for r in rows),
        "context_efficiency": M.mean(r["context_efficiency"] for r in rows),
        "question_accuracy": None,
        "gold_coverage": M.share(r["covered"] for r in rows),
        "relevance_precision": M.mean(r["relevance_precision"] for r in rows),
    }
    cov_rows = [r for r in rows if r["covered"] is not None]
    agg["tokens_per_covered"] = M.tokens_per_covered(
        sum(r["tokens"] for r in cov_rows), sum(1 for r in cov_rows if r["covered"])
    )
    keep = set(SUITE_METRICS[suite])
    for k in METRIC_KEYS:
        if k not in keep:
            agg[k] = {kk: None for kk in agg[k]} if isinstance(agg[k], dict) else None
    return agg


def scored_counts(rows: Sequence[dict[str, Any]], jobs: Sequence[Job]) -> dict[str, int]:
    return {
        "instances": len(rows),
        "line_level_instances": sum(1 for j in jobs if j.gold),
        "located_hunks": sum(len(j.gold) for j in jobs),
        "total_hunks": sum(j.n_hunks for j in jobs),
        "symbol_instances": sum(1 for j in jobs if j.gold_symbols),
        "placement_checked": sum(1 for r in rows if r.get("placement_ok") is not None),
        "placement_ok": sum(1 for r in rows if r.get("placement_ok")),
    }


# --------------------------------------------------------------------------- execution


def _run_group(
    systems: Sequence[System], jobs: Sequence[Job], cache_dir: Path, edge: float
) -> list[tuple[str, str, dict[str, Any] | None, str | None]]:
    """Prepare one tree per system and score its instances: (system, id, row, error)."""
    results: list[tuple[str, str, dict[str, Any] | None, str | None]] = []
    for system in systems:
        try:
            handle = system.prepare(jobs[0].tree, cache_dir)
        except Exception as exc:  # fail-soft: one broken tree must not end the run
            for j in jobs:
                results.append(
                    (
                        system.name,
                        j.instance.instance_id,
                        None,
                        f"{system.name}: prepare failed: {type(exc).__name__}: {exc}",
                    )
                )
            continue
        for j in jobs:
            try:
                out = system.retrieve(handle, j.instance)
                row = score(j, out, system.symbol_level, edge)
                results.append((system.name, j.instance.instance_id, row, None))
            except Exception as exc:
                results.append(
                    (
                        system.name,
                        j.instance.instance_id,
                        None,
                        f"{system.name}: {type(exc).__name__}: {exc}",
                    )
                )
    return results


def execute(
    systems: Sequence[System], jobs: Sequence[Job], cfg: RunConfig
) -> tuple[dict[str, dict[str, dict[str, Any]]], list[dict[str, str]]]:
    """Run all systems on all jobs; returns rows[system][instance_id] and errors."""
    groups: dict[str, list[Job]] = defaultdict(list)
    for j in jobs:
        groups[j.tree.key].append(j)
    rows: dict[str, dict[str, dict[str, Any]]] = {s.name: {} for s in systems}
    errors: list[dict[str, str]] = []
    from tqdm import tqdm

    bar = tqdm(total=len(jobs), desc="eval", unit="inst", file=sys.stderr, disable=not cfg.progress)

    def collect(res: list[tuple[str, str, dict[str, Any] | None, str | None]]) -> None:
        for name, iid, row, err in res:
            if row is not None:
                rows[name][iid] = row
            else:
                errors.append({"instance_id": iid, "reason": err or "unknown"})
        bar.update(len({iid for _, iid, _, _ in res}))

    try:
        if cfg.jobs <= 1:
            for g in groups.values():
                collect(_run_group(systems, g, cfg.cache_dir, cfg.edge_share))
        else:
            with ProcessPoolExecutor(max_workers=cfg.jobs) as pool:
                futs = [
                    pool.submit(_run_group, systems, g, cfg.cache_dir, cfg.edge_share)
                    for g in groups.values()
                ]
                for fut in as_completed(futs):
                    collect(fut.result())
    finally:
        bar.close()
    return rows, errors


def resolve_jobs(
    instances: Sequence[Instance],
    tree_for: Callable[[Instance], Tree],
    alignment: dict[str, dict[str, Any]] | None,
    release_trees: bool,
    progress: bool = False,
) -> tuple[list[Job], list[dict[str, str]]]:
    """Attach a tree and the gold usable on it to every instance, or record why not.

    Trees are fetched here (downloads happen once per release), before any system runs."""
    from tqdm import tqdm

    jobs, skipped = [], []
    for inst in tqdm(instances, desc="sources", unit="inst", file=sys.stderr, disable=not progress):
        al = (alignment or {}).get(inst.instance_id)
        if release_trees:
            if al is None:
                skipped.append(
                    {
                        "instance_id": inst.instance_id,
                        "reason": "no sdist_alignment record for this instance",
                    }
                )
                continue
            missing = [f for f, ok in (al.get("gold_files_present") or {}).items() if not ok]
            if missing:
                skipped.append(
                    {
                        "instance_id": inst.instance_id,
                        "reason": "gold file absent from the release: " + ", ".join(missing),
                    }
                )
                continue
        if not inst.gold_files:
            skipped.append({"instance_id": inst.instance_id, "reason": "no gold files"})
            continue
        try:
            tree = tree_for(inst)
        except EvalError as exc:
            skipped.append({"instance_id": inst.instance_id, "reason": str(exc)})
            continue
        if release_trees:
            gold, n_hunks = located_regions(al)
            syms = present_symbols(inst, al)
        else:
            gold, n_hunks, syms = inst.hunk_regions(), len(inst.gold_hunks), inst.gold_symbols
        jobs.append(Job(inst, tree, gold, n_hunks, syms))
    return jobs, skipped


def per_repo(rows: dict[str, dict[str, Any]], jobs: Sequence[Job], suite: str) -> dict[str, Any]:
    return _grouped(rows, jobs, suite, lambda i: i.repo)


def per_language(
    rows: dict[str, dict[str, Any]], jobs: Sequence[Job], suite: str
) -> dict[str, Any]:
    """The aggregates per task language (``Instance.language``): a multi-language set is
    judged language by language, since one language's gains can hide another's losses."""
    return _grouped(rows, jobs, suite, lambda i: i.language)


def _grouped(
    rows: dict[str, dict[str, Any]], jobs: Sequence[Job], suite: str, key: Any
) -> dict[str, Any]:
    by: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for j in jobs:
        if j.instance.instance_id in rows:
            by[key(j.instance)].append(rows[j.instance.instance_id])
    return {k: {"instances": len(rs), **aggregate(rs, suite)} for k, rs in sorted(by.items())}


def build_results(
    suite_meta: dict[str, Any],
    primary: System,
    baselines: Sequence[System],
    jobs: Sequence[Job],
    cfg: RunConfig,
    skipped: list[dict[str, str]],
    ablate: bool = False,
    construct: System | None = None,
) -> dict[str, Any]:
    """Run, score and assemble ``results.json`` with exactly :data:`TOP_KEYS`.

    ``construct`` (optional) is a separate constructor system whose output supplies the
    construction keys (gold coverage, relevance precision, tokens per covered); without it
    they are scored on the primary system's own delivered context."""
    systems = [primary, *baselines] + ([construct] if construct is not None else [])
    rows, errors = execute(systems, jobs, cfg)
    skipped = skipped + errors
    bad = {e["instance_id"] for e in errors}
    ok_jobs = [j for j in jobs if j.instance.instance_id not in bad]
    ok_ids = [j.instance.instance_id for j in ok_jobs]

    def agg_for(name: str) -> dict[str, Any]:
        return aggregate([rows[name][i] for i in ok_ids], cfg.suite)

    top = agg_for(primary.name)
    if construct is not None:
        cagg = agg_for(construct.name)
        for k in SUITE_METRICS["construct"]:
            top[k] = cagg[k]
    base = {
        s.name: {
            **agg_for(s.name),
            "per_repo": per_repo(rows[s.name], ok_jobs, cfg.suite),
            "per_language": per_language(rows[s.name], ok_jobs, cfg.suite),
        }
        for s in baselines
    }
    per_instance = [
        {
            "instance_id": j.instance.instance_id,
            "repo": j.instance.repo,
            "language": j.instance.language,
            "tree": j.tree.key,
            "gold_files": j.instance.gold_files,
            "located_hunks": len(j.gold),
            "total_hunks": j.n_hunks,
            primary.name: rows[primary.name][j.instance.instance_id],
            **{s.name: rows[s.name][j.instance.instance_id] for s in systems[1:]},
        }
        for j in ok_jobs
    ]
    ablation: dict[str, Any] = {}
    if ablate:
        ablation = run_ablation(primary, ok_jobs, cfg, top)
    decision = decide(primary, top, base)
    meta = dict(suite_meta)
    meta["system"] = primary.name
    meta["baselines"] = [s.name for s in baselines]
    meta["constructor"] = construct.name if construct is not None else None
    meta["scored"] = scored_counts([rows[primary.name][i] for i in ok_ids], ok_jobs)
    results = {
        "suite": meta,
        "instances": len(ok_jobs),
        "skipped": skipped,
        **top,
        "baseline": base,
        "per_repo": per_repo(rows[primary.name], ok_jobs, cfg.suite),
        "per_language": per_language(rows[primary.name], ok_jobs, cfg.suite),
        "per_instance": per_instance,
        "ablation": ablation,
        "decision": decision,
    }
    return {k: results[k] for k in TOP_KEYS}


def run_ablation(
    primary: System, jobs: Sequence[Job], cfg: RunConfig, base_agg: dict[str, Any]
) -> dict[str, Any]:
    from ctxfast.eval.compare import flat

    metrics = ABLATION_METRICS[cfg.suite]
    entries = []
    for switch in primary.switches():
        variant = primary.without(switch)
        rows, errors = execute([variant], jobs, cfg)
        ids = [j.instance.instance_id for j in jobs if j.instance.instance_id in rows[variant.name]]
        abl = aggregate([rows[variant.name][i] for i in ids], cfg.suite)
        entry = ablation_entry(switch, flat(base_agg), flat(abl), metrics)
        entry["failed_instances"] = len(errors)
        entries.append(entry)
    return {
        "rule": "DELETE iff no metric degrades beyond noise (|Δ| ≤ 5% relative)",
        "metrics": list(metrics),
        "switches": entries,
    }


def decide(primary: System, top: dict[str, Any], base: dict[str, Any]) -> dict[str, Any]:
    """Apply the decision rules with the baselines as 'current' (when they are different)."""
    out: dict[str, Any] = {}
    if "bm25" in base:
        out["retrieval_vs_bm25"] = retrieval_rule(base["bm25"], top)
        out["recon_vs_bm25"] = recon_rule(base["bm25"], top)
    if "stuff_everything" in base:
        out["construction_vs_stuff_everything"] = construction_rule(
            base["stuff_everything"], top, base["stuff_everything"]
        )
    if not out:
        out["note"] = f"primary system {primary.name} is itself the baseline: nothing to decide"
    return out


__all__ = [
    "SUITES",
    "TOP_KEYS",
    "Job",
    "RunConfig",
    "aggregate",
    "build_results",
    "edge_placement",
    "execute",
    "resolve_jobs",
    "score",
]
