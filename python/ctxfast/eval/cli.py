"""``ctxfast eval`` subcommands (registered from :mod:`ctxfast.cli`)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from ctxfast.errors import ConfigError
from ctxfast.eval.errors import EvalError

#: The keys an eval ``--config`` file may hold (what :func:`main` reads from it).
CONFIG_KEYS = (
    "ablate_switches",
    "compose",
    "construct",
    "ctxfast",
    "curve_targets",
    "defaults",
    "edge_share",
    "max_tokens",
    "variants",
    "window_tokens",
)


def _load_config(path: str | None) -> dict[str, Any]:
    """The ``--config`` JSON object. An unknown key is an error: a setting put at the wrong
    level (``{"target_tokens": 12000}`` instead of ``{"construct": {...}}``) would
    otherwise be ignored, and the run would score the defaults under another name."""
    if not path:
        return {}
    try:
        cfg = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise EvalError(f"--config {path}: {exc}") from exc
    if not isinstance(cfg, dict):
        raise EvalError(f"--config {path}: expected a JSON object")
    unknown = sorted(set(cfg) - set(CONFIG_KEYS))
    if unknown:
        raise EvalError(
            f"--config {path}: unknown key(s) {', '.join(map(repr, unknown))}; "
            f"expected some of {', '.join(CONFIG_KEYS)}"
        )
    return cfg


def _probes(args: argparse.Namespace) -> dict[str, Any]:
    """Model-dependent probes are never faked: without an endpoint they are skipped (with one
    they are replaced by their results after the run, see :func:`_run_model_probes`)."""
    reason = "needs --model-url and --model (an OpenAI-compatible endpoint)"
    return {
        "lost_in_the_middle_bury": {"status": "skipped", "reason": reason},
        "oracle_diagnostic": {"status": "skipped", "reason": reason},
        "question_battery": {
            "status": "skipped",
            "reason": "release trees carry no ground truth for Q1-Q6; the battery is graded "
            "on fixture repos with known answers (tests/test_recon_map_answers.py)",
        },
    }


def _run_model_probes(
    args: argparse.Namespace,
    results: dict[str, Any],
    jobs: list[Any],
    primary: Any,
    constructor: Any,
    cache: Path,
) -> None:
    """Run the bury variant and the oracle diagnostic against the endpoint, on the instances
    the main run scored, and store them under ``suite.probes``."""
    from ctxfast.eval.probes import ProbeEndpoint, run_probes

    endpoint = ProbeEndpoint(
        args.model_url, args.model, args.model_key_env, timeout_s=args.model_timeout
    )
    scored = {r["instance_id"] for r in results["per_instance"]}
    results["suite"]["probes"].update(
        run_probes(
            endpoint.ask,
            {"model": args.model, "model_url": args.model_url},
            primary,
            constructor if constructor is not None else primary,
            [j for j in jobs if j.instance.instance_id in scored],
            cache,
            progress=not args.no_progress,
        )
    )


def curve_targets(flag: str | None, configured: Any) -> tuple[int, ...]:
    """``--curve-targets 2000,4000`` (an empty value: no curve), else the config file's
    ``curve_targets`` list, else :data:`~ctxfast.eval.runner.CURVE_TARGETS`."""
    from ctxfast.eval.runner import CURVE_TARGETS

    if flag is not None:
        raw: list[Any] = [t for t in flag.split(",") if t.strip()]
    elif configured is not None:
        raw = list(configured)
    else:
        return CURVE_TARGETS
    try:
        targets = tuple(int(t) for t in raw)
    except (TypeError, ValueError) as exc:
        raise EvalError(f"curve targets must be whole token counts: {raw}") from exc
    if any(t <= 0 for t in targets):
        raise EvalError(f"curve targets must be positive token counts: {list(targets)}")
    return tuple(dict.fromkeys(targets))


def run_suite(args: argparse.Namespace) -> int:
    from ctxfast.eval.breakdown import repo_halves
    from ctxfast.eval.instances import gold_file_globs, load_alignment, load_bench, sample
    from ctxfast.eval.runner import RunConfig, build_results, resolve_jobs
    from ctxfast.eval.systems import (
        BM25Files,
        CtxfastConstruct,
        CtxfastRetrieval,
        StuffEverything,
        ctxfast_available,
    )
    from ctxfast.eval.trees import DirTrees, ReleaseTrees

    BM25Files.require()  # every suite scores this baseline: check before any download
    cfg_file = _load_config(args.config)
    bench_path = Path(args.bench)
    instances = load_bench(bench_path)
    repos = args.repos.split(",") if args.repos else None
    chosen = sample(instances, args.limit, args.seed, repos)
    cache = Path(args.cache).expanduser() if args.cache else Path("~/.cache/ctxfast").expanduser()

    if args.pypi_sources:
        trees = ReleaseTrees(args.pypi_sources, cache / "sources")
        align_path = (
            Path(args.alignment)
            if args.alignment
            else Path(args.pypi_sources).with_name("sdist_alignment.jsonl")
        )
        if not align_path.exists():
            raise EvalError(f"release trees need {align_path} (line-level gold); use --alignment")
        alignment = load_alignment(align_path)
        jobs, skipped = resolve_jobs(
            chosen,
            lambda i: trees.tree_for(i.source_key),
            alignment,
            release_trees=True,
            progress=not args.no_progress,
        )
    else:
        dtrees = DirTrees(args.trees)
        jobs, skipped = resolve_jobs(
            chosen,
            lambda i: dtrees.tree_for_instance(i.instance_id),
            None,
            release_trees=False,
            progress=not args.no_progress,
        )

    max_tokens = int(cfg_file.get("max_tokens", 4000))
    window_tokens = int(cfg_file.get("window_tokens", 24000))
    by_repo: dict[str, list[Any]] = {}
    for i in chosen:
        by_repo.setdefault(i.repo, []).append(i)
    repo_globs = {r: gold_file_globs(insts) or ("*.py",) for r, insts in by_repo.items()}
    bm25 = BM25Files(
        max_tokens=max_tokens,
        globs=gold_file_globs(chosen) or ("*.py",),
        tree_globs=tuple(sorted({(j.tree.key, repo_globs[j.instance.repo]) for j in jobs})),
    )
    system_name = args.system
    if system_name == "auto":
        system_name = "ctxfast" if ctxfast_available() else "bm25"
    constructor: Any = None
    if system_name == "ctxfast":
        if not ctxfast_available():
            raise EvalError("--system ctxfast: ctxfast.Repository is not available in this build")
        primary: Any = CtxfastRetrieval(
            max_tokens=max_tokens,
            config=dict(cfg_file.get("ctxfast", {})),
            ablatable=tuple(cfg_file.get("ablate_switches", [])),
        )
        baselines: list[Any] = [bm25, StuffEverything(primary, window_tokens=window_tokens)]
        # Named variants of ctxfast's retrieval scored in the same run on the same handles
        # (``{"variants": {"ctxfast_learned": {"ranker": "learned"}}}``).
        for name, overrides in dict(cfg_file.get("variants", {})).items():
            baselines.append(
                CtxfastRetrieval(
                    name=name, max_tokens=max_tokens, config={**primary.config, **overrides}
                )
            )
        if args.suite in ("construct", "all"):
            constructor = CtxfastConstruct(
                options=dict(cfg_file.get("compose", {})),
                config=dict(cfg_file.get("construct", {})),
                defaults=dict(cfg_file.get("defaults", {})),
            )
            try:
                constructor.settings()
            except (ConfigError, TypeError, ValueError) as exc:
                raise EvalError(f"--config construct/defaults: {exc}") from exc
    else:
        primary = bm25
        baselines = [StuffEverything(bm25, window_tokens=window_tokens)]

    if (args.tasks_jsonl or args.summary_md) and constructor is None:
        raise EvalError("--tasks-jsonl/--summary-md need the construct suite with ctxfast")
    meta = {
        "name": args.suite,
        "bench": str(bench_path),
        "sources": str(args.pypi_sources or args.trees),
        "limit": args.limit,
        "seed": args.seed,
        "repos": repos,
        "sampled": len(chosen),
        "probes": _probes(args),
        "notes": {
            "tokens_per_covered": "offline stand-in for tokens-per-solved (gold coverage, "
            "not a model solve)",
            "line_level": "scored only on hunks located in the tree (see scored)",
        },
    }
    rc = RunConfig(
        suite=args.suite,
        cache_dir=cache,
        jobs=args.jobs,
        edge_share=float(cfg_file.get("edge_share", 0.25)),
        progress=not args.no_progress,
        curve_targets=curve_targets(args.curve_targets, cfg_file.get("curve_targets")),
    )
    results = build_results(
        meta,
        primary,
        baselines,
        jobs,
        rc,
        skipped,
        ablate=args.ablate,
        construct=constructor,
        stuffing=bm25 if constructor is not None else None,
        halves=repo_halves(i.repo for i in instances),
    )
    if args.model_url and args.model:
        _run_model_probes(args, results, jobs, primary, constructor, cache)
    out = Path(args.out)
    out.write_text(json.dumps(results, indent=1), encoding="utf-8")
    if args.report:
        from ctxfast.eval.report import write_report

        write_report(results, Path(args.report))
    write_breakdown(results, args.tasks_jsonl, args.summary_md)
    print(summary(results))
    return 0


def write_breakdown(results: dict[str, Any], tasks: str | None, summary_md: str | None) -> None:
    """``--tasks-jsonl`` (one record per task: slices, misses and why, largest block) and
    ``--summary-md`` (the breakdown tables); both need the window and its same-token
    baseline, so a run without them is refused rather than writing empty files."""
    if not (tasks or summary_md):
        return
    bd = results.get("window_breakdown") or {}
    if not bd:
        raise EvalError("--tasks-jsonl/--summary-md need the construct suite with ctxfast")
    from ctxfast.eval.breakdown import format_markdown, task_records

    halves = {r: h for h, repos in bd["halves"].items() for r in repos}
    if tasks:
        recs = task_records(results["per_instance"], bd["systems"], halves)
        text = "".join(json.dumps(r, sort_keys=True) + "\n" for r in recs)
        Path(tasks).write_text(text, encoding="utf-8")
    if summary_md:
        Path(summary_md).write_text(format_markdown(bd), encoding="utf-8")


def summary(results: dict[str, Any]) -> str:
    def f(x: Any) -> str:
        return "  -  " if x is None else f"{x:.3f}" if isinstance(x, float) else str(x)

    def tok(x: float | None) -> str:
        return "  -  " if x is None else f"{x:.0f}"

    lines = [
        f"{results['suite']['system']}: {results['instances']} instances, "
        f"{len(results['skipped'])} skipped"
    ]
    if results["suite"]["name"] != "construct":  # the construct suite ranks no files
        head = (
            f"{'repo':28} {'n':>3} {'Acc@1':>6} {'Acc@3':>6} {'Acc@5':>6} {'Acc@10':>6} {'MRR':>6}"
        )
        lines.append(head)
        rows = [("ALL", results), *results["per_repo"].items()]
        for name, m in rows:
            n = m.get("instances", results["instances"])
            fa = m["file_acc"]
            lines.append(
                f"{name:28} {n:>3} {f(fa['1']):>6} {f(fa['3']):>6} {f(fa['5']):>6} "
                f"{f(fa['10']):>6} {f(m['mrr']):>6}"
            )
        for name, b in results["baseline"].items():
            fa = b["file_acc"]
            lines.append(
                f"baseline {name}: Acc@5 {f(fa['5'])} gold_coverage {f(b['gold_coverage'])}"
                f" tokens_p50 {f(b['tokens_retrieved_p50'])}"
            )
    comp = results.get("construct_comparison") or {}
    if comp:
        lines.append(
            f"{'window and baselines':20} {'system':22} {'every-hunk':>10} {'gold files':>10} "
            f"{'tokens p50':>10} {'tok/covered':>11}"
        )
        for role, m in comp["systems"].items():
            lines.append(
                f"{role:20} {m.get('system', comp['window_system']):22} "
                f"{f(m['gold_coverage']):>10} {f(m['gold_file_presence']):>10} "
                f"{tok(m['tokens_p50']):>10} {tok(m['tokens_per_covered']):>11}"
            )
    bd = results.get("window_breakdown") or {}
    if bd:
        from ctxfast.eval.breakdown import format_misses, format_table

        lines += [format_table(bd), format_misses(bd)]
    curve = results.get("coverage_curve") or {}
    for w, b in zip(curve.get("window", []), curve.get("stuffing", []), strict=True):
        lines.append(
            f"curve @{w['target_tokens']}: window {f(w['gold_coverage'])} "
            f"({tok(w['tokens_p50'])} tok p50), {curve['stuffing_system']} "
            f"{f(b['gold_coverage'])} ({tok(b['tokens_p50'])} tok p50)"
        )
    # The construct suite ranks no files: its table per language is window_breakdown's.
    if len(results["per_language"]) > 1 and results["suite"]["name"] != "construct":
        names = [results["suite"]["system"], *results["baseline"]]
        lines.append(f"{'language':12} {'n':>3} " + " ".join(f"{n[:22]:>22}" for n in names))
        for lang, m in results["per_language"].items():
            cells = [m] + [b["per_language"].get(lang, {}) for b in results["baseline"].values()]
            lines.append(
                f"{lang:12} {m['instances']:>3} "
                + " ".join(
                    f"{f(c['file_acc']['1'])}/{f(c['file_acc']['5'])}/{f(c['mrr'])}".rjust(22)
                    for c in cells
                    if c
                )
            )
        lines.append("(cells: file Acc@1/Acc@5/MRR)")
    probes = results["suite"].get("probes", {})
    orc, bur = probes.get("oracle_diagnostic", {}), probes.get("lost_in_the_middle_bury", {})
    if "cells" in orc:
        sr = orc["success_rate"]
        lines.append(
            f"oracle diagnostic ({orc['status']}, {orc['answered']} answered, "
            f"{orc['errors']} failed calls): success retrieved {f(sr['retrieved'])} "
            f"oracle {f(sr['oracle'])}; " + ", ".join(f"{k} {v}" for k, v in orc["cells"].items())
        )
    if "success_rate" in bur:
        sr = bur["success_rate"]
        lines.append(
            f"bury probe ({bur['status']}, {bur['answered']} answered, {bur['errors']} failed "
            f"calls): edge {f(sr['edge'])} buried {f(sr['buried'])} — {bur['verdict'] or '-'}"
        )
    return "\n".join(lines)


def run_compare(args: argparse.Namespace) -> int:
    from ctxfast.eval.compare import compare, format_rules, load_results

    print(format_rules(compare(load_results(args.a), load_results(args.b))))
    return 0


def run_fidelity(args: argparse.Namespace) -> int:
    """Index the tree into a cache directory (never into the tree), then score the graph's
    definitions and invoke edges against jedi on a seeded sample."""
    import hashlib

    from ctxfast.eval.fidelity import (
        CodeGraphReader,
        format_fidelity,
        graph_fidelity,
        require_jedi,
    )
    from ctxfast.eval.fidelity_langs import analyser_command, call_graph_fidelity
    from ctxfast.repository import Repository

    root = Path(args.path).resolve()
    # The analyser must exist before the (long) indexing, not after.
    if args.language == "python":
        require_jedi()
    else:
        analyser_command(args.language, root)
    if not root.is_dir():
        raise EvalError(f"{args.path}: not a directory")
    if args.index_dir:
        index_dir = Path(args.index_dir)
    else:
        cache = Path(args.cache).expanduser() if args.cache else Path("~/.cache/ctxfast")
        digest = hashlib.sha1(str(root).encode()).hexdigest()[:12]
        index_dir = cache.expanduser() / "index" / f"fidelity-{root.name}-{digest}"
    repo = Repository(root, index_dir)
    repo.index()
    if args.language == "python":
        res = graph_fidelity(root, CodeGraphReader(repo.graph, root), args.sample, args.seed)
    else:
        res = call_graph_fidelity(root, repo.graph, args.language, args.sample, args.seed)
    res = {"tree": str(root), "index_dir": str(index_dir), **res}
    if args.out:
        Path(args.out).write_text(json.dumps(res, indent=1), encoding="utf-8")
    print(format_fidelity(res))
    return 0


def register(sub: Any) -> None:
    """Add ``ctxfast eval ...`` to the top-level subparsers."""
    p = sub.add_parser("eval", help="measure retrieval/recon/construction on a benchmark")
    esub = p.add_subparsers(dest="eval_command", required=True)
    for suite in ("retrieval", "recon", "construct", "all"):
        s = esub.add_parser(suite, help=f"run the {suite} suite")
        s.add_argument("bench", help="benchmark JSONL")
        src = s.add_mutually_exclusive_group(required=True)
        src.add_argument("--trees", help="DIR with DIR/<instance_id>/ trees")
        src.add_argument("--pypi-sources", help="sources.json mapping repo@version to sdists")
        s.add_argument("--alignment", help="sdist_alignment.jsonl (default: next to sources)")
        s.add_argument("--out", default="results.json", help="where the results JSON goes")
        s.add_argument("--report", help="write report.html + PNG plots into this directory")
        s.add_argument(
            "--tasks-jsonl",
            help="construct: write one JSON line per task (slices, missed hunks and why, "
            "largest block) for the window and BM25 at the same tokens",
        )
        s.add_argument(
            "--summary-md",
            help="construct: write the per-language / single-multi / halves table and the "
            "miss taxonomy as Markdown",
        )
        s.add_argument("--config", help="JSON config (max_tokens, window_tokens, ...)")
        s.add_argument("--ablate", action="store_true", help="switch each mechanism off in turn")
        s.add_argument(
            "--curve-targets",
            default=None,
            help="comma-separated window target sizes of the coverage-versus-tokens curve "
            "(construct/all with ctxfast; default 2000,4000,8000,16000,24000; '' = no curve)",
        )
        s.add_argument("--limit", type=int, default=None, help="score at most this many instances")
        s.add_argument("--seed", type=int, default=0, help="seed of the --limit sample")
        s.add_argument("--repos", help="comma-separated owner/name filter")
        s.add_argument("--jobs", type=int, default=1, help="worker processes")
        s.add_argument("--cache", help="cache root (default ~/.cache/ctxfast)")
        s.add_argument(
            "--system",
            default="auto",
            choices=["auto", "ctxfast", "bm25"],
            help="system to score (auto: ctxfast when this build has it, else plain BM25)",
        )
        s.add_argument(
            "--model-url",
            default=None,
            help="OpenAI-compatible base URL (…/v1): runs the bury and oracle probes",
        )
        s.add_argument("--model", default=None, help="model name sent to --model-url")
        s.add_argument(
            "--model-key-env",
            default="OPENAI_API_KEY",
            help="environment variable holding the endpoint's API key (sent when set)",
        )
        s.add_argument("--model-timeout", type=float, default=60.0, help="seconds per model call")
        s.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
        s.set_defaults(func=run_suite, suite=suite)
    from ctxfast.eval.mine import register as register_mine
    from ctxfast.eval.train_ranker import register as register_train_ranker

    register_mine(esub)
    register_train_ranker(esub)
    fd = esub.add_parser(
        "fidelity", help="precision/recall of the code graph's definitions and callers vs jedi"
    )
    fd.add_argument("path", help="repository root (indexed into the cache, not into the tree)")
    fd.add_argument("--sample", type=int, default=200, help="call sites and definitions sampled")
    fd.add_argument("--seed", type=int, default=0, help="seed of the sample")
    fd.add_argument(
        "--language",
        default="python",
        choices=["python", "go", "typescript", "javascript", "java", "rust", "php", "ruby"],
        help="python: jedi; go: go/types; typescript, javascript: tsc; java: javac;"
        " rust: rust-analyzer; php: PHP-Parser; ruby: Ripper",
    )
    fd.add_argument("--out", help="write the full result (with disagreements) as JSON")
    fd.add_argument("--index-dir", help="index directory (default under --cache)")
    fd.add_argument("--cache", help="cache root (default ~/.cache/ctxfast)")
    fd.set_defaults(func=run_fidelity)
    c = esub.add_parser("compare", help="apply the decision rules to two results files")
    c.add_argument("a", help="current system's results.json")
    c.add_argument("b", help="candidate's results.json")
    c.set_defaults(func=run_compare)


__all__ = ["register", "run_compare", "run_fidelity", "run_suite", "summary"]


if __name__ == "__main__":  # pragma: no cover
    sys.exit(1)
