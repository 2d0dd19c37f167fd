"""ctxfast: exact, fast context construction for coding agents.

The public API is plain Python over the private native module ``ctxfast._native``.
"""

from ctxfast._native import __version__
from ctxfast.bm25 import BM25Index, tokenize_code
from ctxfast.buffer import RollingBuffer, Turn
from ctxfast.errors import BudgetError, CtxfastError
from ctxfast.retrieval.vet import Verdict, vet
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
    "BM25Index",
    "BudgetError",
    "ContextSection",
    "CtxfastError",
    "IntentRouter",
    "RollingBuffer",
    "RouteDecision",
    "Turn",
    "Verdict",
    "__version__",
    "assemble_context",
    "count_tokens",
    "count_tokens_batch",
    "decode",
    "encode",
    "fits",
    "order_for_recall",
    "tokenize_code",
    "truncate_to_tokens",
    "vet",
]
