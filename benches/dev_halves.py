"""Every system of one ``ctxfast eval retrieval`` results file, on two seeded halves of its
instances and per language: a ranking change that helps on one half only is noise.

Usage: python benches/dev_halves.py RESULTS.json [--seed N]

The halves are a seeded shuffle of the instance ids cut in two (the same seed gives the same
halves for every results file of the same benchmark), so two runs are compared on the same
instances. Cells are file Acc@1 / Acc@5 and function Acc@10 (function figures only for
systems that return definitions).
"""

from __future__ import annotations

import argparse
import json
import random
from collections import defaultdict
from pathlib import Path
from typing import Any


def _mean(rows: list[dict[str, Any]], key: str, k: str) -> float | None:
    vals = [r[key][k] for r in rows if r.get(key) and r[key].get(k) is not None]
    return sum(vals) / len(vals) if vals else None


def cell(rows: list[dict[str, Any]]) -> str:
    parts = [_mean(rows, "file_acc", "1"), _mean(rows, "file_acc", "5")]
    fn = _mean(rows, "function_acc", "10")
    text = "/".join(f"{x:.3f}" for x in parts if x is not None)
    return text + (f" fn {fn:.3f}" if fn is not None else "")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("results")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    res = json.loads(Path(args.results).read_text(encoding="utf-8"))
    rows = res["per_instance"]
    systems = [k for k in rows[0] if isinstance(rows[0][k], dict) and "file_acc" in rows[0][k]]
    ids = sorted(r["instance_id"] for r in rows)
    random.Random(args.seed).shuffle(ids)
    half = {i: ("A" if n < len(ids) // 2 else "B") for n, i in enumerate(ids)}
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        groups["all"].append(r)
        groups[f"half {half[r['instance_id']]}"].append(r)
        if r.get("language"):
            groups[f"lang {r['language']}"].append(r)
    print(f"{'group':16s} {'n':>4s}  " + "  ".join(f"{s:>28s}" for s in systems))
    for name in sorted(groups, key=lambda g: (g != "all", g)):
        g = groups[name]
        cells = "  ".join(f"{cell([r[s] for r in g if s in r]):>28s}" for s in systems)
        print(f"{name:16s} {len(g):4d}  {cells}")


if __name__ == "__main__":
    main()
