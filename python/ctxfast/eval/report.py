"""``--report DIR``: a self-contained ``report.html`` with PNG plots (matplotlib extra).

Readable without the JSON: headline table, per-repository table, recall@k curves per system,
per-repository Acc@5 bars and token distributions.
"""

from __future__ import annotations

import html
import json
from pathlib import Path
from typing import Any

from ctxfast.eval.errors import EvalError

KS = ("1", "3", "5", "10")


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
    return names


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
        + f"<td>{_fmt(m['mrr'])}</td></tr>"
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
<h2>Per repository ({html.escape(results["suite"]["system"])})</h2>
<table><tr><th>repo</th><th>n</th><th>Acc@1</th><th>Acc@3</th><th>Acc@5</th><th>Acc@10</th>
<th>MRR</th></tr>{"".join(repo_rows)}</table>
{"".join(f'<h3>{p}</h3><img src="{p}">' for p in pngs)}
<h2>Model probes</h2>{probes}
<h2>Decision</h2><pre>{decision}</pre>
<h2>Skipped</h2><ul>{skipped}</ul></body></html>"""
    path = out / "report.html"
    path.write_text(page, encoding="utf-8")
    return path


__all__ = ["write_report"]
