"""ctxfast: exact, fast context construction for coding agents.

The public API is plain Python over the private native module ``ctxfast._native``.
"""

from ctxfast import logs
from ctxfast._native import __version__
from ctxfast.bm25 import BM25Index, tokenize_code
from ctxfast.construct.compose import compose
from ctxfast.construct.defaults import DefaultsConfig
from ctxfast.construct.schema import (
    ConstructConfig,
    DecisionContext,
    ImpactEdge,
    ImpactType,
    LogEntry,
    PlanNode,
    WindowEntry,
)
from ctxfast.errors import BudgetError, CtxfastError
from ctxfast.harness import compact, memory, skills
from ctxfast.harness.buffer import RollingBuffer, Turn
from ctxfast.harness.excerpt import excerpt
from ctxfast.harness.instructions import Instructions, load_instructions
from ctxfast.harness.profiles import ModelProfile, pack_budget, resolve_profile
from ctxfast.harness.routing import IntentRouter, RouteDecision
from ctxfast.harness.sections import (
    AssembledContext,
    ContextSection,
    assemble_context,
    order_for_recall,
)
from ctxfast.harness.taskpack import TaskPack
from ctxfast.recon import ParseCache
from ctxfast.repository import IndexStats, Repository
from ctxfast.retrieval.candidates import Candidate
from ctxfast.retrieval.config import RetrievalConfig
from ctxfast.retrieval.pipeline import RetrievalResult
from ctxfast.retrieval.query import Query
from ctxfast.retrieval.vet import Verdict, vet
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
    "Candidate",
    "ConstructConfig",
    "ContextSection",
    "CtxfastError",
    "DecisionContext",
    "DefaultsConfig",
    "ImpactEdge",
    "ImpactType",
    "IndexStats",
    "Instructions",
    "IntentRouter",
    "LogEntry",
    "ModelProfile",
    "ParseCache",
    "PlanNode",
    "Query",
    "Repository",
    "RetrievalConfig",
    "RetrievalResult",
    "RollingBuffer",
    "RouteDecision",
    "TaskPack",
    "Turn",
    "Verdict",
    "WindowEntry",
    "__version__",
    "assemble_context",
    "compact",
    "compose",
    "count_tokens",
    "count_tokens_batch",
    "decode",
    "encode",
    "excerpt",
    "fits",
    "load_instructions",
    "logs",
    "memory",
    "order_for_recall",
    "pack_budget",
    "resolve_profile",
    "skills",
    "tokenize_code",
    "truncate_to_tokens",
    "vet",
]
