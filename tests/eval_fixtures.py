"""The shipped synthetic benchmark (tests/fixtures/eval) laid out as ``--trees DIR``."""

import shutil
from pathlib import Path

from ctxfast.eval.instances import load_bench

FIX = Path(__file__).parent / "fixtures" / "eval"
BENCH = FIX / "bench.jsonl"


def copy_eval_trees(root: Path) -> Path:
    """``root/<instance_id>/``: a fresh copy of each instance's fixture repository."""
    for inst in load_bench(BENCH):
        shutil.copytree(FIX / "repos" / inst.repo.split("/")[1], root / inst.instance_id)
    return root
