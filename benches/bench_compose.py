"""Warm ``repo.retrieve`` and ``ctxfast.compose`` latency per stage, and window size vs the
stuff-everything baseline.

Usage: python benches/bench_compose.py [DJANGO_DIR] [--repeat N] [--index-dir D]

DJANGO_DIR defaults to /tmp/dj/Django-4.2 (the extracted Django 4.2 source release:
``pip download --no-deps --no-binary :all: Django==4.2 -d /tmp/dj`` then untar). The index
lives outside the source tree (default /tmp/bench-compose-index) and is warmed first — index,
then one retrieval so the in-memory retrieval state exists — so the timed calls measure what
an agent loop pays per decision. For each of 20 realistic task strings, ``repo.retrieve``
and then ``compose`` run ``--repeat`` times each (24k ceiling, no ranker); p50/p90 are over
all timed calls, and the stage shares come from the per-stage ``timings_ms`` the pipelines
record ("outside stages" is the rest of the call: the index-change check, result assembly).
Nothing is cached per task, only per index, so repeats measure the same work. The baseline is
the naive constructor: the same inputs (retrieved candidates + derived defaults)
concatenated and cut at the ceiling.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections import defaultdict

from ctxfast import Repository
from ctxfast.construct import stuff_everything
from ctxfast.construct.compose import compose, prepare

TASKS = [
    "QuerySet.bulk_create() crashes when the model has a db_column on the primary key",
    "Fix the admin changelist so list_filter on a ForeignKey respects limit_choices_to",
    "JSONField lookups with key transforms return wrong results on SQLite",
    "The CSRF middleware should reject requests whose Origin header does not match",
    "slugify() should strip leading and trailing dashes and underscores",
    "Paginator.get_elided_page_range returns an off-by-one range near the last page",
    "makemigrations generates a spurious AlterField for choices ordering changes",
    "Template engine: {% include %} with only keyword leaks outer context variables",
    "FileResponse sets the wrong Content-Type for .br compressed files",
    "URLValidator accepts hostnames with a trailing dot followed by a port",
    "SessionMiddleware should not save the session when the response is 500",
    "Prefetch objects with to_attr fail when the queryset is sliced",
    "ModelForm validation does not call full_clean on unique_together with a condition",
    "The runserver autoreloader misses changes in template directories",
    "Aggregate over an annotated Window expression raises FieldError",
    "timesince() gives wrong output across a daylight saving transition",
    "ManifestStaticFilesStorage crashes on a CSS url() with a data URI",
    "Signal receivers connected with weak=False are never garbage collected",
    "Case/When with an empty Q() object generates invalid SQL",
    "The test client's force_login should honour AUTHENTICATION_BACKENDS ordering",
]


def pct(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, round(q * (len(s) - 1)))]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("root", nargs="?", default="/tmp/dj/Django-4.2")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--index-dir", default="/tmp/bench-compose-index")
    ap.add_argument("--ceiling", type=int, default=24_000)
    ap.add_argument("--ranker", default="hand", help="RetrievalConfig.ranker: hand or learned")
    args = ap.parse_args()

    repo = Repository(args.root, args.index_dir)
    t0 = time.perf_counter()
    stats = repo.index()
    print(
        f"index: {stats.files_parsed}/{stats.files_seen} files parsed, {stats.nodes} nodes, "
        f"{time.perf_counter() - t0:.2f}s"
    )
    t0 = time.perf_counter()
    rcfg = {"ranker": args.ranker}
    repo.retrieve("warm up the retrieval state", config=rcfg)
    repo.manifest()
    print(f"warm-up (retrieval state + manifest): {time.perf_counter() - t0:.2f}s")

    rtotals: list[float] = []
    rstage: dict[str, float] = defaultdict(float)
    for task in TASKS:
        for _ in range(args.repeat):
            t = time.perf_counter()
            res = repo.retrieve(task, config=rcfg)
            rtotals.append((time.perf_counter() - t) * 1000)
            for k, v in res.timings_ms.items():
                rstage[k] += v
    rstage["outside stages"] = max(0.0, sum(rtotals) - sum(rstage.values()))
    print(f"\nretrieve over {len(rtotals)} calls ({len(TASKS)} tasks × {args.repeat}):")
    print(
        f"  p50 {statistics.median(rtotals):.1f} ms   p90 {pct(rtotals, 0.9):.1f} ms   "
        f"max {max(rtotals):.1f} ms"
    )
    print("  share of time per stage:")
    for k, v in sorted(rstage.items(), key=lambda kv: -kv[1]):
        print(f"    {k:<26} {100 * v / sum(rtotals):5.1f}%   {v / len(rtotals):7.2f} ms/call")
    print()

    totals: list[float] = []
    stage_sum: dict[str, float] = defaultdict(float)
    ours: list[int] = []
    stuffed: list[int] = []
    for task in TASKS:
        for _ in range(args.repeat):
            t = time.perf_counter()
            ctx = compose(repo, task, ceiling=args.ceiling)
            totals.append((time.perf_counter() - t) * 1000)
            for k, v in ctx.timings_ms.items():
                if k != "construct":  # the sum of the construct.* stages
                    stage_sum[k] += v
            assert ctx.token_count <= args.ceiling and ctx.model_calls == 0
        # The baseline packs the same inputs compose derived, untimed.
        inputs = prepare(repo, task)
        _, n_stuffed = stuff_everything(
            task,
            candidates=inputs.candidates,
            plan=inputs.plan,
            impact=inputs.impact,
            localization=inputs.localization,
            ceiling=args.ceiling,
        )
        ours.append(ctx.token_count)
        stuffed.append(n_stuffed)
        print(
            f"  {ctx.token_count:6d} vs {n_stuffed:6d} tokens  "
            f"{len(inputs.candidates):3d} cands {len(inputs.impact):3d} edges  {task[:60]}"
        )

    sub = {k: v for k, v in stage_sum.items() if k.startswith("retrieve.")}
    stage_sum = defaultdict(float, {k: v for k, v in stage_sum.items() if k not in sub})
    total = sum(stage_sum.values())
    print(
        f"\ncompose over {len(totals)} calls ({len(TASKS)} tasks × {args.repeat}), "
        f"ceiling {args.ceiling}, no ranker:"
    )
    print(
        f"  p50 {statistics.median(totals):.1f} ms   p90 {pct(totals, 0.9):.1f} ms   "
        f"max {max(totals):.1f} ms"
    )
    print("  share of time per stage:")
    for k, v in sorted(stage_sum.items(), key=lambda kv: -kv[1]):
        print(f"    {k:<26} {100 * v / total:5.1f}%   {v / len(totals):7.2f} ms/call")
    print("  inside retrieve (spec-04 stages):")
    for k, v in sorted(sub.items(), key=lambda kv: -kv[1]):
        print(f"    {k:<26} {100 * v / total:5.1f}%   {v / len(totals):7.2f} ms/call")
    print("tokens per window (median / mean):")
    print(f"  compose            {statistics.median(ours):8.0f} / {statistics.mean(ours):8.0f}")
    print(
        f"  stuff_everything   {statistics.median(stuffed):8.0f} / {statistics.mean(stuffed):8.0f}"
    )
    ratio = sum(ours) / max(1, sum(stuffed))
    print(f"  compose / stuffed  {ratio:.2f}")


if __name__ == "__main__":
    main()
