"""ctxfast: exact, fast context construction for coding agents.

The public API is plain Python over the private native module ``ctxfast._native``.
"""

from ctxfast._native import __version__
from ctxfast.buffer import RollingBuffer, Turn
from ctxfast.errors import BudgetError, CtxfastError
from ctxfast.recon import IndexStats, Repository
from ctxfast.routing import IntentRouter, RouteDecision
from ctxfast.sections import (
    AssembledContext,
    ContextSection,
    assemble_context,
    order_for_recall,
)
from ctxfast.tokens import (
    count_tokens,
    count_tokens_batch,
    decode,
    encode,
    fits,
    truncate_to_tokens,
)

__all__ = [
    "AssembledContext",
    "BudgetError",
    "ContextSection",
    "CtxfastError",
    "IndexStats",
    "IntentRouter",
    "Repository",
    "RollingBuffer",
    "RouteDecision",
    "Turn",
    "__version__",
    "assemble_context",
    "count_tokens",
    "count_tokens_batch",
    "decode",
    "encode",
    "fits",
    "order_for_recall",
    "truncate_to_tokens",
]
