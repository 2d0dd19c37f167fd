"""``--report DIR``: a self-contained ``report.html`` with PNG plots (matplotlib extra).

Readable without the JSON: headline table, the window against its baselines, per-repository
table, recall@k curves per system, per-repository Acc@5 bars, token distributions and (construct
suite) gold coverage against tokens.
"""

from __future__ import annotations

import html
import json
from pathlib import Path
from typing import Any

from ctxfast.eval.errors import EvalError

KS = ("1", "3", "5", "10")
REPO_WINDOW_KEYS = ("gold_coverage", "gold_file_presence", "window_tokens_p50")


def _systems(results: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {results["suite"]["system"]: results, **results["baseline"]}


def _fmt(x: Any) -> str:
    return "–" if x is None else f"{x:.3f}" if isinstance(x, float) else html.escape(str(x))


def _plots(results: dict[str, Any], out: Path) -> list[str]:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as exc:
        raise EvalError("--report needs matplotlib: pip install 'ctxfast[report]'") from exc
    names: list[str] = []
    systems = _systems(results)

    fig, ax = plt.subplots(figsize=(6, 4))
    for name, m in systems.items():
        ys = [m["file_recall_mean"][k] for k in KS]
        if all(y is not None for y in ys):
            ax.plot([int(k) for k in KS], ys, marker="o", label=f"{name} recall@k")
        ys = [m["file_acc"][k] for k in KS]
        if all(y is not None for y in ys):
            ax.plot([int(k) for k in KS], ys, marker="s", linestyle="--", label=f"{name} Acc@k")
    ax.set_xlabel("k (files)")
    ax.set_ylim(0, 1)
    if ax.get_legend_handles_labels()[0]:  # the construct suite scores no file ranking
        ax.legend()
    ax.set_title("File-level recall / accuracy at k")
    fig.tight_layout()
    fig.savefig(out / "recall_at_k.png", dpi=100)
    plt.close(fig)
    names.append("recall_at_k.png")

    repos = sorted(results["per_repo"])
    if repos:
        fig, ax = plt.subplots(figsize=(8, 4))
        width = 0.8 / max(len(systems), 1)
        for i, (name, m) in enumerate(systems.items()):
            pr = (
                m.get("per_repo", results["per_repo"])
                if name != results["suite"]["system"]
                else results["per_repo"]
            )
            vals = [(pr.get(r) or {}).get("file_acc", {}).get("5") or 0.0 for r in repos]
            ax.bar([x + i * width for x in range(len(repos))], vals, width, label=name)
        ax.set_xticks([x + 0.4 - width / 2 for x in range(len(repos))])
        ax.set_xticklabels([r.split("/")[-1] for r in repos], rotation=45, ha="right")
        ax.set_ylim(0, 1)
        ax.set_ylabel("file Acc@5")
        ax.legend()
        fig.tight_layout()
        fig.savefig(out / "per_repo_acc5.png", dpi=100)
        plt.close(fig)
        names.append("per_repo_acc5.png")

    fig, ax = plt.subplots(figsize=(6, 4))
    for name in systems:
        toks = [r[name]["tokens"] for r in results["per_instance"] if name in r]
        if toks:
            ax.hist(toks, bins=20, alpha=0.6, label=name)
    ax.set_xlabel("tokens delivered per instance")
    ax.legend()
    fig.tight_layout()
    fig.savefig(out / "tokens.png", dpi=100)
    plt.close(fig)
    names.append("tokens.png")
    if results.get("coverage_curve"):
        names.append(_curve_plot(plt, results, out))
    return names


def _curve_plot(plt: Any, results: dict[str, Any], out: Path) -> str:
    """Every-hunk coverage against the tokens actually delivered (p50): the window filled
    toward each target and BM25 stuffing cut at it, with the fixed-size systems as points."""
    curve = results["coverage_curve"]
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for key, style in (("window", "o-"), ("stuffing", "s--")):
        pts = [
            p for p in curve[key] if p["tokens_p50"] is not None and p["gold_coverage"] is not None
        ]
        system = curve["window_system" if key == "window" else "stuffing_system"]
        ax.plot(
            [p["tokens_p50"] for p in pts],
            [p["gold_coverage"] for p in pts],
            style,
            label=f"{system} (target sizes)",
        )
        for p in pts:
            ax.annotate(
                f"{p['target_tokens'] // 1000}k",
                (p["tokens_p50"], p["gold_coverage"]),
                textcoords="offset points",
                xytext=(4, 4),
                fontsize=7,
            )
    systems = (results.get("construct_comparison") or {}).get("systems", {})
    fixed = [
        (role, m)
        for role, m in systems.items()
        if role != "window" and m["tokens_p50"] is not None and m["gold_coverage"] is not None
    ]
    for (role, m), marker in zip(fixed, "^vDPXh*", strict=False):
        ax.plot([m["tokens_p50"]], [m["gold_coverage"]], marker, label=f"{role} ({m['system']})")
    ax.set_xlabel("tokens delivered per instance (p50)")
    ax.set_ylabel("instances with every gold hunk in the window")
    ax.set_ylim(0, 1)
    ax.legend(fontsize=7)
    ax.set_title("Gold coverage versus tokens")
    fig.tight_layout()
    fig.savefig(out / "coverage_curve.png", dpi=100)
    plt.close(fig)
    return "coverage_curve.png"


def _comparison_table(results: dict[str, Any]) -> str:
    """The window against each baseline on the same instances (empty without a window)."""
    comp = results.get("construct_comparison") or {}
    if not comp:
        return ""
    cols = ("gold_coverage", "gold_file_presence", "tokens_p50", "tokens_per_covered", "covered")
    head = "".join(f"<th>{c}</th>" for c in cols)
    body = "".join(
        f"<tr><td>{html.escape(role)}</td><td>{html.escape(m.get('system', comp['window_system']))}"
        "</td>" + "".join(f"<td>{_fmt(m[c])}</td>" for c in cols) + "</tr>"
        for role, m in comp["systems"].items()
    )
    vs = "".join(
        f"<tr><td>{html.escape(role)}</td>" + "".join(f"<td>{_fmt(d[k])}</td>" for k in d) + "</tr>"
        for role, d in comp["vs_window"].items()
    )
    curve = results.get("coverage_curve") or {}
    pts = "".join(
        f"<tr><td>{w['target_tokens']}</td><td>{_fmt(w['gold_coverage'])}</td>"
        f"<td>{_fmt(w['tokens_p50'])}</td><td>{_fmt(b['gold_coverage'])}</td>"
        f"<td>{_fmt(b['tokens_p50'])}</td></tr>"
        for w, b in zip(curve.get("window", []), curve.get("stuffing", []), strict=True)
    )
    return (
        "<h2>Window versus baselines (same instances)</h2>"
        f"<table><tr><th>role</th><th>system</th>{head}</tr>{body}</table>"
        "<p>window minus baseline (coverage, file presence) and window tokens ÷ baseline "
        "tokens:</p><table><tr><th>baseline</th><th>Δ coverage</th><th>Δ gold files</th>"
        f"<th>tokens ratio</th></tr>{vs}</table>"
        + (
            "<h3>Coverage versus target size</h3><table><tr><th>target</th>"
            "<th>window coverage</th><th>window tokens p50</th><th>BM25 coverage</th>"
            f"<th>BM25 tokens p50</th></tr>{pts}</table>"
            if pts
            else ""
        )
    )


def _breakdown_section(results: dict[str, Any]) -> str:
    """The window and BM25 at the same tokens per slice (language group, fix size, half),
    then the miss taxonomy; empty when the run built no window."""
    bd = results.get("window_breakdown") or {}
    if not bd:
        return ""
    roles = list(bd["systems"])
    cols = ("gold_coverage", "gold_file_presence", "tokens_p50")
    head = "".join(f"<th>{html.escape(r)} {c}</th>" for r in roles for c in cols)
    body = "".join(
        f"<tr><td>{html.escape(g)}</td><td>{m['instances']}</td>"
        + "".join(f"<td>{_fmt(m[r][c])}</td>" for r in roles for c in cols)
        + "</tr>"
        for g, m in bd["groups"].items()
    )
    from ctxfast.eval.breakdown import format_misses

    return (
        "<h2>Window per slice (same instances)</h2>"
        f"<p>halves: {html.escape(bd['half_rule'])}</p>"
        f"<table><tr><th>slice</th><th>n</th>{head}</tr>{body}</table>"
        f"<h3>Misses and largest blocks</h3><pre>{html.escape(format_misses(bd))}</pre>"
    )


def write_report(results: dict[str, Any], out: Path) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    pngs = _plots(results, out)
    systems = _systems(results)
    keys = [
        "mrr",
        "required_file_recall",
        "required_symbol_recall",
        "irrelevant_context_ratio",
        "tokens_retrieved_p50",
        "retrieve_ms_p50",
        "region_recall_at_5",
        "context_efficiency",
        "gold_coverage",
        "relevance_precision",
        "tokens_per_covered",
        "gold_file_presence",
        "window_tokens_p50",
    ]
    head = "".join(f"<th>{html.escape(n)}</th>" for n in systems)
    rows = []
    for k in KS:
        rows.append(
            f"<tr><td>file Acc@{k}</td>"
            + "".join(f"<td>{_fmt(m['file_acc'][k])}</td>" for m in systems.values())
            + "</tr>"
        )
    for k in keys:
        rows.append(
            f"<tr><td>{k}</td>"
            + "".join(f"<td>{_fmt(m[k])}</td>" for m in systems.values())
            + "</tr>"
        )
    repo_rows = [
        f"<tr><td>{html.escape(r)}</td><td>{m['instances']}</td>"
        + "".join(f"<td>{_fmt(m['file_acc'][k])}</td>" for k in KS)
        + f"<td>{_fmt(m['mrr'])}</td>"
        + "".join(f"<td>{_fmt(m[k])}</td>" for k in REPO_WINDOW_KEYS)
        + "</tr>"
        for r, m in results["per_repo"].items()
    ]
    skipped = "".join(
        f"<li>{html.escape(s['instance_id'])}: {html.escape(s['reason'])}</li>"
        for s in results["skipped"]
    )
    # Probe summaries without their per-instance lists (those stay in results.json).
    probes = "".join(
        f"<h3>{html.escape(name)}</h3><pre>"
        + html.escape(
            json.dumps(
                {k: v for k, v in p.items() if k not in ("per_instance", "skipped")},
                indent=1,
                ensure_ascii=False,
            )
        )
        + "</pre>"
        for name, p in results["suite"].get("probes", {}).items()
    )
    decision = html.escape(str(results["decision"]))
    page = f"""<!doctype html><html><head><meta charset="utf-8">
<title>ctxfast eval — {html.escape(results["suite"]["name"])}</title>
<style>body{{font-family:sans-serif;max-width:1000px;margin:auto}}
td,th{{border:1px solid #ccc;padding:2px 6px}}table{{border-collapse:collapse}}</style></head>
<body><h1>ctxfast eval: {html.escape(results["suite"]["name"])}</h1>
<p>{results["instances"]} instances scored, {len(results["skipped"])} skipped;
scored counts: {html.escape(str(results["suite"].get("scored")))}</p>
<h2>Headline</h2><table><tr><th>metric</th>{head}</tr>{"".join(rows)}</table>
{_comparison_table(results)}
{_breakdown_section(results)}
<h2>Per repository ({html.escape(results["suite"]["system"])})</h2>
<table><tr><th>repo</th><th>n</th><th>Acc@1</th><th>Acc@3</th><th>Acc@5</th><th>Acc@10</th>
<th>MRR</th>{"".join(f"<th>{k}</th>" for k in REPO_WINDOW_KEYS)}</tr>{"".join(repo_rows)}</table>
{"".join(f'<h3>{p}</h3><img src="{p}">' for p in pngs)}
<h2>Model probes</h2>{probes}
<h2>Decision</h2><pre>{decision}</pre>
<h2>Skipped</h2><ul>{skipped}</ul></body></html>"""
    path = out / "report.html"
    path.write_text(page, encoding="utf-8")
    return path


__all__ = ["write_report"]
