"""Orchestration: resolve trees, run every system per instance, score, aggregate, write JSON.

Instances are grouped by source tree so each tree is prepared (indexed) once per system; with
``--jobs N`` groups run in worker processes. A failure on one instance or tree is recorded in
``skipped`` with its reason and the run continues (fail-soft), so a 300-instance run is never
lost to one bad archive.
"""

from __future__ import annotations

import multiprocessing
import sys
from collections import defaultdict
from collections.abc import Callable, Hashable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field, is_dataclass, replace
from pathlib import Path
from typing import Any

from ctxfast.eval import coverage as C
from ctxfast.eval import metrics as M
from ctxfast.eval import window_misses as W
from ctxfast.eval.ablation import ablation_entry
from ctxfast.eval.compare import construction_rule, recon_rule, retrieval_rule
from ctxfast.eval.errors import EvalError
from ctxfast.eval.gold_functions import with_derived_functions
from ctxfast.eval.instances import Instance, Region, line_count, located_regions, present_symbols
from ctxfast.eval.systems import (
    BM25Files,
    CtxfastConstruct,
    MatchedSystem,
    RetrievalOutput,
    SameTokens,
    System,
    read_text,
)
from ctxfast.eval.trees import Tree

SUITES = ("retrieval", "recon", "construct", "all")
TOP_KEYS = (
    "suite", "instances", "skipped", "file_acc", "file_recall_mean", "function_acc", "mrr",
    "required_file_recall", "required_symbol_recall", "irrelevant_context_ratio",
    "tokens_retrieved_p50", "retrieve_ms_p50", "region_recall_at_5", "context_efficiency",
    "question_accuracy", "gold_coverage", "relevance_precision", "tokens_per_covered",
    "baseline", "per_repo", "per_instance", "ablation", "decision",
    # Later keys are appended, so the keys above keep their places in every result file:
    # the window's coverage and curve,
    "gold_file_presence", "window_tokens_p50", "construct_comparison", "coverage_curve",
    # the figures per language,
    "per_language",
    # the window per language, fix size and repository half, with its misses explained
    "window_breakdown",
)  # fmt: skip
METRIC_KEYS = (*TOP_KEYS[3:18], "gold_file_presence", "window_tokens_p50")
SUITE_METRICS = {
    "retrieval": (
        "file_acc", "file_recall_mean", "function_acc", "mrr", "required_file_recall",
        "required_symbol_recall", "irrelevant_context_ratio", "tokens_retrieved_p50",
        "retrieve_ms_p50",
    ),
    "recon": ("region_recall_at_5", "context_efficiency", "question_accuracy"),
    "construct": ("gold_coverage", "relevance_precision", "tokens_per_covered",
                  "gold_file_presence", "window_tokens_p50"),
}  # fmt: skip
SUITE_METRICS["all"] = tuple(
    k for s in ("retrieval", "recon", "construct") for k in SUITE_METRICS[s]
)
ABLATION_METRICS = {
    "retrieval": ("recall@1", "recall@3", "recall@5", "mrr", "required_file_recall",
                  "required_symbol_recall", "irrelevant_context_ratio", "tokens_retrieved_p50"),
    "recon": ("region_recall_at_5", "context_efficiency", "question_accuracy"),
    "construct": ("gold_coverage", "relevance_precision", "tokens_per_covered",
                  "gold_file_presence", "window_tokens_p50"),
}  # fmt: skip
ABLATION_METRICS["all"] = tuple(dict.fromkeys(v for s in ABLATION_METRICS.values() for v in s))
#: Target sizes (``ConstructConfig.target_tokens``) of the coverage-versus-tokens curve; BM25
#: whole-file stuffing is cut at the same sizes.
CURVE_TARGETS = (2000, 4000, 8000, 16000, 24000)


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
    curve_targets: tuple[int, ...] = CURVE_TARGETS


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
    """Lost-in-the-middle placement: every item showing a gold line starts in the first or last
    ``edge`` share of the window's tokens. None when no item shows one."""
    if total_tokens <= 0:
        return None
    pos, starts = 0, []
    for c in cands:
        if M.shows_gold(c.file, (n for _, n in c.lines()), gold):
            starts.append(pos)
        pos += c.tokens
    if not starts:
        return None
    lo, hi = edge * total_tokens, (1 - edge) * total_tokens
    return all(s <= lo or s >= hi for s in starts)


def tree_line_counts(root: Path) -> Callable[[str], int | None]:
    """Line counts of a tree's files, each file read once (the miss analysis asks for the
    same gold file once per missed hunk)."""
    seen: dict[str, int | None] = {}

    def count(path: str) -> int | None:
        if path not in seen:
            seen[path] = line_count(root / path)
        return seen[path]

    return count


def score(job: Job, out: RetrievalOutput, symbol_level: bool, edge: float) -> dict[str, Any]:
    """Every per-instance metric for one system's output."""
    inst, gold = job.instance, job.gold
    lines_of = tree_line_counts(job.tree.path)
    rf = out.ranked_files
    syms, fns = M.aligned_to_gold(
        [(c.file, c.qualname, c.start, c.end, c.is_function) for c in out.candidates],
        inst.gold_spans,
    )
    delivered = {fl for c in out.candidates for fl in c.lines()}
    line_tokens = _gold_line_tokens(job.tree.path, delivered, gold)
    win_items = [
        M.WindowItem(c.file, c.qualname, c.start, c.end, c.tokens, c.kept_lines)
        for c in out.candidates
    ]
    surfaced = {f for f, _ in delivered}
    gsyms = job.gold_symbols if symbol_level else []
    return {
        "file_acc": {str(k): M.file_acc_at_k(rf, inst.gold_files, k) for k in M.KS_FILE},
        "file_recall": {str(k): M.file_recall_at_k(rf, inst.gold_files, k) for k in M.KS_FILE},
        "rr": M.reciprocal_rank(rf, inst.gold_files),
        "function_acc": {
            str(k): M.function_acc_at_k(syms, gsyms, k, fns) if symbol_level else None
            for k in M.KS_FUNCTION
        },
        "symbol_ranks": M.symbol_ranks(syms, gsyms, fns) if symbol_level else None,
        "required_file_recall": M.required_file_recall(surfaced, inst.gold_files),
        "gold_files_present": M.gold_files_present(surfaced, inst.gold_files),
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
        "hunks": len(gold),
        "missed_hunks": W.missed_hunks(out.candidates, gold, lines_of),
        "largest_block": W.largest_block(out.candidates, gold, inst.gold_files, lines_of),
        "blocks": W.block_summaries(out.candidates, gold, inst.gold_files, lines_of),
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
        "gold_file_presence": M.share(r["gold_files_present"] for r in rows),
    }
    # The same median as tokens_retrieved_p50, kept under the construct suite's own key (the
    # top level there holds the window's tokens beside the retrieval slice's).
    agg["window_tokens_p50"] = agg["tokens_retrieved_p50"]
    cov_rows = [r for r in rows if r["covered"] is not None]
    agg["tokens_per_covered"] = M.tokens_per_covered(
        sum(r["tokens"] for r in cov_rows), sum(1 for r in cov_rows if r["covered"])
    )
    keep = set(SUITE_METRICS[suite])
    for k in METRIC_KEYS:
        if k not in keep:
            agg[k] = dict.fromkeys(agg[k]) if isinstance(agg[k], dict) else None
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


Runnable = System | MatchedSystem
Outcome = tuple[str, str, dict[str, Any] | None, str | None]


def _run_group(
    systems: Sequence[Runnable], jobs: Sequence[Job], cache_dir: Path, edge: float
) -> list[Outcome]:
    """Score one tree's instances with every system: (system, id, row, error).

    Systems with the same ``handle_key`` share one prepared handle (the tree is indexed and
    warmed once, not once per curve point or ablation variant); matched systems run after
    the others and get their reference system's output on the same instance."""
    results: list[Outcome] = []
    handles: dict[Hashable, Any] = {}
    broken: dict[Hashable, str] = {}
    wanted = {s.reference for s in systems if isinstance(s, MatchedSystem)}
    outputs: dict[tuple[str, str], RetrievalOutput] = {}
    ordered = sorted(systems, key=lambda s: isinstance(s, MatchedSystem))
    for system in ordered:
        key = system.handle_key()
        if key not in handles and key not in broken:
            try:
                handles[key] = system.prepare(jobs[0].tree, cache_dir)
            except Exception as exc:  # fail-soft: one broken tree must not end the run
                broken[key] = f"prepare failed: {type(exc).__name__}: {exc}"
        for j in jobs:
            iid = j.instance.instance_id
            if key in broken:
                results.append((system.name, iid, None, f"{system.name}: {broken[key]}"))
                continue
            try:
                if isinstance(system, MatchedSystem):
                    ref = outputs.get((system.reference, iid))
                    if ref is None:
                        raise EvalError(f"reference system {system.reference} gave no output")
                    out = system.retrieve_matched(handles[key], j.instance, ref)
                else:
                    out = system.retrieve(handles[key], j.instance)
                if system.name in wanted:
                    outputs[(system.name, iid)] = out
                results.append((system.name, iid, score(j, out, system.symbol_level, edge), None))
            except Exception as exc:
                results.append(
                    (system.name, iid, None, f"{system.name}: {type(exc).__name__}: {exc}")
                )
    return results


def execute(
    systems: Sequence[Runnable], jobs: Sequence[Job], cfg: RunConfig
) -> tuple[dict[str, dict[str, dict[str, Any]]], list[dict[str, str]]]:
    """Run all systems on all jobs; returns rows[system][instance_id] and errors (each naming
    its instance, system and reason)."""
    groups: dict[str, list[Job]] = defaultdict(list)
    for j in jobs:
        groups[j.tree.key].append(j)
    rows: dict[str, dict[str, dict[str, Any]]] = {s.name: {} for s in systems}
    errors: list[dict[str, str]] = []
    from tqdm import tqdm

    bar = tqdm(total=len(jobs), desc="eval", unit="inst", file=sys.stderr, disable=not cfg.progress)

    def collect(res: list[Outcome]) -> None:
        for name, iid, row, err in res:
            if row is not None:
                rows[name][iid] = row
            else:
                errors.append({"instance_id": iid, "system": name, "reason": err or "unknown"})
        bar.update(len({iid for _, iid, _, _ in res}))

    try:
        if cfg.jobs <= 1:
            for g in groups.values():
                collect(_run_group(systems, g, cfg.cache_dir, cfg.edge_share))
        else:
            # Spawned, not forked: this process already runs native threads (rayon, SQLite),
            # and a forked child inherits their locks in whatever state they were.
            spawn = multiprocessing.get_context("spawn")
            with ProcessPoolExecutor(max_workers=cfg.jobs, mp_context=spawn) as pool:
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
            gold = inst.hunk_regions(tree.path)
            if not inst.gold_symbols and inst.gold_hunks:
                inst = with_derived_functions(inst, tree.path)
            n_hunks, syms = len(inst.gold_hunks), inst.gold_symbols
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


def _same_system(a: Any, b: Any) -> bool:
    """Equal in everything but the name, so one run serves both (the curve point at the
    default target is the default window; BM25 at 4,000 tokens is the BM25 baseline)."""
    if type(a) is not type(b) or not is_dataclass(a):
        return a is b
    same: bool = replace(a, name="") == replace(b, name="")  # type: ignore[type-var]
    return same


@dataclass
class RunPlan:
    """Every system one run executes, each distinct system once, under a unique name."""

    systems: list[Runnable] = field(default_factory=list)

    def add(self, system: Runnable) -> str:
        """Schedule ``system`` (unless an equal one is already scheduled); returns the name
        its rows are filed under."""
        for s in self.systems:
            if _same_system(s, system):
                return s.name
        taken = {s.name for s in self.systems}
        if system.name in taken:  # an ablation variant keeping its subject's name
            n = 2
            while f"{system.name}~{n}" in taken:
                n += 1
            system = replace(system, name=f"{system.name}~{n}")  # type: ignore[type-var]
        self.systems.append(system)
        return system.name


@dataclass(frozen=True)
class Variant:
    """One ``--ablate`` run: ``subject`` with ``switch`` off, filed under ``run``."""

    subject: str  # the subject's run name
    display: str
    switch: str
    run: str
    suite: str  # the aggregation (and ablation metrics) the subject is judged on


def _subjects(
    primary: System, construct: CtxfastConstruct | None, suite: str
) -> list[tuple[System, str]]:
    """What ``--ablate`` switches off: the constructor in the construct suite, the primary
    system otherwise, both in ``all``."""
    if construct is None:
        return [(primary, suite)]
    if suite == "construct":
        return [(construct, "construct")]
    if suite == "all":
        return [(primary, suite), (construct, "construct")]
    return [(primary, suite)]


def _plan_variants(
    plan: RunPlan,
    primary: System,
    p_run: str,
    construct: CtxfastConstruct | None,
    c_run: str | None,
    suite: str,
) -> list[Variant]:
    """Schedule one ``--ablate`` run per switch of each subject (:func:`_subjects`), each
    filed against the run of the full subject it is compared with."""
    variants: list[Variant] = []
    for subject, subject_suite in _subjects(primary, construct, suite):
        s_run = c_run if subject is construct and c_run is not None else p_run
        for switch in subject.switches():
            run = plan.add(subject.without(switch))
            variants.append(Variant(s_run, subject.name, switch, run, subject_suite))
    return variants


def _instance_entry(
    j: Job,
    rows: Mapping[str, Mapping[str, dict[str, Any]]],
    named_runs: Mapping[str, str],
    curve_runs: Sequence[tuple[int, str, str]],
) -> dict[str, Any]:
    """One ``per_instance`` row: the instance's facts, then each system's scored row under
    the system's name (``named_runs`` maps a name to its run), so a reader can compare the
    systems instance by instance; with a curve, the window and stuffing points per target."""
    iid = j.instance.instance_id
    entry: dict[str, Any] = {
        "instance_id": iid,
        "repo": j.instance.repo,
        "language": j.instance.language,
        "tree": j.tree.key,
        "multi_file": j.instance.multi_file,
        "gold_files": j.instance.gold_files,
        "located_hunks": len(j.gold),
        "total_hunks": j.n_hunks,
        **{name: rows[run][iid] for name, run in named_runs.items()},
    }
    if curve_runs:
        entry["curve"] = {
            "window": {str(t): C.instance_point(rows[w][iid]) for t, w, _ in curve_runs},
            "stuffing": {str(t): C.instance_point(rows[b][iid]) for t, _, b in curve_runs},
        }
    return entry


def build_results(
    suite_meta: dict[str, Any],
    primary: System,
    baselines: Sequence[System],
    jobs: Sequence[Job],
    cfg: RunConfig,
    skipped: list[dict[str, str]],
    ablate: bool = False,
    construct: CtxfastConstruct | None = None,
    stuffing: BM25Files | None = None,
    halves: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """Run, score and assemble ``results.json`` with exactly :data:`TOP_KEYS`.

    ``construct`` (optional) is a separate constructor system whose output supplies the
    construction keys (gold coverage, gold-file presence, window tokens, relevance
    precision, tokens per covered); without it they are scored on the primary system's own
    delivered context. With ``stuffing`` (whole-file BM25) beside it, the run adds the
    baseline cut at each window's own token count (``bm25_same_tokens``), the window-versus-
    baselines table, the coverage-versus-tokens curve at ``cfg.curve_targets`` and the
    ``window_breakdown`` of the two (repository ``halves`` as given, else
    :func:`~ctxfast.eval.breakdown.repo_halves` of the instances' repositories).

    Everything runs in one pass over the trees, so each tree is prepared once for all the
    systems sharing a handle (curve points and ablation variants included)."""
    plan = RunPlan()
    p_run = plan.add(primary)
    base_list: list[Runnable] = list(baselines)
    c_run = plan.add(construct) if construct is not None else None
    if construct is not None and c_run is not None and stuffing is not None:
        base_list.append(SameTokens(stuffing, reference=c_run))
    b_runs = {b.name: plan.add(b) for b in base_list}
    curve_runs: list[tuple[int, str, str]] = []
    if construct is not None and stuffing is not None:
        for t in cfg.curve_targets:
            at_t = replace(stuffing, name=f"{stuffing.name}@{t}", max_tokens=t)
            curve_runs.append((t, plan.add(construct.at_target(t)), plan.add(at_t)))
    main = {s.name for s in plan.systems}
    variants = _plan_variants(plan, primary, p_run, construct, c_run, cfg.suite) if ablate else []

    rows, errors = execute(plan.systems, jobs, cfg)
    main_errors = [e for e in errors if e["system"] in main]
    skipped = skipped + main_errors
    bad = {e["instance_id"] for e in main_errors}
    ok_jobs = [j for j in jobs if j.instance.instance_id not in bad]
    ok_ids = [j.instance.instance_id for j in ok_jobs]

    def rows_of(run: str, ids: Sequence[str] = ok_ids) -> list[dict[str, Any]]:
        return [rows[run][i] for i in ids]

    top = aggregate(rows_of(p_run), cfg.suite)
    repos = per_repo(rows[p_run], ok_jobs, cfg.suite)
    if c_run is not None:  # the construction keys are the window's, overall and per repo
        cagg = aggregate(rows_of(c_run), cfg.suite)
        crepos = per_repo(rows[c_run], ok_jobs, cfg.suite)
        for k in SUITE_METRICS["construct"]:
            top[k] = cagg[k]
            for repo, m in repos.items():
                m[k] = crepos[repo][k]
    base = {
        name: {
            **aggregate(rows_of(run), cfg.suite),
            "per_repo": per_repo(rows[run], ok_jobs, cfg.suite),
            "per_language": per_language(rows[run], ok_jobs, cfg.suite),
        }
        for name, run in b_runs.items()
    }
    comparison: dict[str, Any] = {}
    curve: dict[str, Any] = {}
    if construct is not None and c_run is not None:

        def summ(run: str) -> dict[str, Any]:
            rs = rows_of(run)
            return C.summary(aggregate(rs, "construct"), rs)

        others = {"retrieval_slice": {"system": primary.name, **summ(p_run)}}
        others.update({name: {"system": name, **summ(run)} for name, run in b_runs.items()})
        comparison = C.comparison(construct.name, summ(c_run), others)
        if curve_runs and stuffing is not None:
            curve = C.curve(
                [t for t, _, _ in curve_runs],
                [summ(w) for _, w, _ in curve_runs],
                [summ(b) for _, _, b in curve_runs],
                construct.name,
                stuffing.name,
            )
    named_runs = {primary.name: p_run, **b_runs}
    if construct is not None and c_run is not None:
        named_runs[construct.name] = c_run
    per_instance = [_instance_entry(j, rows, named_runs, curve_runs) for j in ok_jobs]
    window_bd: dict[str, Any] = {}
    if construct is not None and "bm25_same_tokens" in b_runs:
        from ctxfast.eval.breakdown import breakdown, repo_halves

        # keyed as per_instance files the rows: the constructor's name, each baseline's
        roles = {"window": construct.name, "bm25_same_tokens": "bm25_same_tokens"}
        split = halves if halves is not None else repo_halves(j.instance.repo for j in jobs)
        window_bd = breakdown(per_instance, roles, split)
    ablation = ablation_report(variants, rows, errors, ok_ids) if ablate else {}
    decision = decide(primary, top, base)
    meta = dict(suite_meta)
    meta["system"] = primary.name
    meta["baselines"] = list(b_runs)
    meta["constructor"] = construct.name if construct is not None else None
    meta["curve_targets"] = [t for t, _, _ in curve_runs]
    meta["scored"] = scored_counts(rows_of(p_run), ok_jobs)
    results = {
        "suite": meta,
        "instances": len(ok_jobs),
        "skipped": skipped,
        **top,
        "baseline": base,
        "per_repo": repos,
        "per_language": per_language(rows[p_run], ok_jobs, cfg.suite),
        "per_instance": per_instance,
        "ablation": ablation,
        "decision": decision,
        "construct_comparison": comparison,
        "coverage_curve": curve,
        "window_breakdown": window_bd,
    }
    return {k: results[k] for k in TOP_KEYS}


def _outcome(row: dict[str, Any]) -> tuple[Any, ...]:
    return row["tokens"], row["covered"], row["gold_files_present"], row["top_files"]


def ablation_report(
    variants: Sequence[Variant],
    rows: dict[str, dict[str, dict[str, Any]]],
    errors: Sequence[dict[str, str]],
    ok_ids: Sequence[str],
) -> dict[str, Any]:
    """Each switch judged by the shared rule against its subject on the same instances."""
    from ctxfast.eval.compare import flat

    entries = []
    for v in variants:
        ids = [i for i in ok_ids if i in rows[v.run]]
        base = aggregate([rows[v.subject][i] for i in ids], v.suite)
        abl = aggregate([rows[v.run][i] for i in ids], v.suite)
        entry = ablation_entry(v.switch, flat(base), flat(abl), ABLATION_METRICS[v.suite])
        entry["system"] = v.display
        entry["failed_instances"] = sum(1 for e in errors if e["system"] == v.run)
        # Instances where the switch changed nothing scored (a switch never changing any
        # is not wired to anything).
        entry["unchanged_instances"] = sum(
            1 for i in ids if _outcome(rows[v.run][i]) == _outcome(rows[v.subject][i])
        )
        entries.append(entry)
    metrics = dict.fromkeys(m for v in variants for m in ABLATION_METRICS[v.suite])
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
    "CURVE_TARGETS",
    "SUITES",
    "TOP_KEYS",
    "Job",
    "RunConfig",
    "RunPlan",
    "aggregate",
    "build_results",
    "edge_placement",
    "execute",
    "resolve_jobs",
    "score",
]
