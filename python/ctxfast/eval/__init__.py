"""``ctxfast eval``: the instrument that measures every ctxfast stage on real repositories.

The harness is deliberately independent of the stages it measures: systems plug in through the
small :class:`~ctxfast.eval.systems.System` protocol, metrics are pure functions over plain data
(:mod:`ctxfast.eval.metrics`), and the decision rules (when a change wins, loses or cannot be
judged) are applied mechanically (:mod:`ctxfast.eval.compare`, :mod:`ctxfast.eval.ablation`).
"""

from ctxfast.eval.errors import EvalError
from ctxfast.eval.instances import Instance, Region, load_alignment, load_bench, sample

__all__ = ["EvalError", "Instance", "Region", "load_alignment", "load_bench", "sample"]
