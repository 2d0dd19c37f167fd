"""ctxfast: exact, fast context construction for coding agents.

The public API is plain Python over the private native module ``ctxfast._native``. Every
name below is imported on first use (PEP 562), so ``import ctxfast`` — and with it every
``ctxfast`` command, a fresh process per agent tool call — loads only the layers the
caller touches: ``ctxfast compose`` never imports the harness toolkit or the evaluation
harness.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ctxfast import logs
from ctxfast._native import __version__

if TYPE_CHECKING:
    from ctxfast.bm25 import BM25Index, tokenize_code
    from ctxfast.construct.compose import compose
    from ctxfast.construct.config import ConstructConfig
    from ctxfast.construct.defaults import DefaultsConfig
    from ctxfast.construct.schema import (
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

#: Public name → the module it lives in (the attribute of that name there, or the module
#: itself for the toolkit modules ``compact``, ``memory`` and ``skills``).
_HOMES: dict[str, str] = {
    "assemble_context": "ctxfast.harness.sections",
    "AssembledContext": "ctxfast.harness.sections",
    "BM25Index": "ctxfast.bm25",
    "BudgetError": "ctxfast.errors",
    "Candidate": "ctxfast.retrieval.candidates",
    "compact": "ctxfast.harness.compact",
    "compose": "ctxfast.construct.compose",
    "ConstructConfig": "ctxfast.construct.config",
    "ContextSection": "ctxfast.harness.sections",
    "count_tokens": "ctxfast.tokens",
    "count_tokens_batch": "ctxfast.tokens",
    "CtxfastError": "ctxfast.errors",
    "DecisionContext": "ctxfast.construct.schema",
    "decode": "ctxfast.tokens",
    "DefaultsConfig": "ctxfast.construct.defaults",
    "encode": "ctxfast.tokens",
    "excerpt": "ctxfast.harness.excerpt",
    "fits": "ctxfast.tokens",
    "ImpactEdge": "ctxfast.construct.schema",
    "ImpactType": "ctxfast.construct.schema",
    "IndexStats": "ctxfast.repository",
    "Instructions": "ctxfast.harness.instructions",
    "IntentRouter": "ctxfast.harness.routing",
    "load_instructions": "ctxfast.harness.instructions",
    "LogEntry": "ctxfast.construct.schema",
    "memory": "ctxfast.harness.memory",
    "ModelProfile": "ctxfast.harness.profiles",
    "order_for_recall": "ctxfast.harness.sections",
    "pack_budget": "ctxfast.harness.profiles",
    "ParseCache": "ctxfast.recon",
    "PlanNode": "ctxfast.construct.schema",
    "Query": "ctxfast.retrieval.query",
    "Repository": "ctxfast.repository",
    "resolve_profile": "ctxfast.harness.profiles",
    "RetrievalConfig": "ctxfast.retrieval.config",
    "RetrievalResult": "ctxfast.retrieval.pipeline",
    "RollingBuffer": "ctxfast.harness.buffer",
    "RouteDecision": "ctxfast.harness.routing",
    "skills": "ctxfast.harness.skills",
    "TaskPack": "ctxfast.harness.taskpack",
    "tokenize_code": "ctxfast.bm25",
    "truncate_to_tokens": "ctxfast.tokens",
    "Turn": "ctxfast.harness.buffer",
    "Verdict": "ctxfast.retrieval.vet",
    "vet": "ctxfast.retrieval.vet",
    "WindowEntry": "ctxfast.construct.schema",
}
_MODULES = frozenset({"compact", "memory", "skills"})


def __getattr__(name: str) -> Any:
    """Imports the public name's module on first access and keeps the name here."""
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'ctxfast' has no attribute {name!r}")
    module = importlib.import_module(home)
    value = module if name in _MODULES else getattr(module, name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


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
