"""Context construction: one budgeted, edge-ordered ``DecisionContext`` per decision.

Stages, one module each: ``pool`` (a), ``relevance_gate`` (b), ``ranker`` (the only model call),
``represent`` (c), ``compress`` (d, with ``line_windows`` choosing a long body's lines),
``dedup`` (e), ``order`` (f, with ``render`` laying out the text), ``budget`` (g, filling toward
the target size first, with ``ladder`` shrinking a window over its ceiling and ``measure``
counting tokens); ``pipeline`` runs them in that order. ``evidence_ranker`` answers the ranking
step from retrieval evidence when no model is configured. Without a planner, an impact analyser
or a localizer, ``compose`` derives stand-ins: ``targets`` (the change targets), ``impact``
(what a change affects) and ``context_lines`` (the lines shown around a target), reading files
through ``source_reader``, all set by ``defaults`` (:class:`DefaultsConfig`).
ARCHITECTURE.md lists each stage's inputs and outputs and the idea it is built on.
"""

from ctxfast.construct.compose import compose, to_code_candidates
from ctxfast.construct.config import ConstructConfig
from ctxfast.construct.defaults import DefaultsConfig
from ctxfast.construct.evidence_ranker import EvidenceRanker
from ctxfast.construct.line_windows import best_line_windows
from ctxfast.construct.pipeline import construct, default_plan, stuff_everything
from ctxfast.construct.ranker import OpenAICompatibleRanker, Ranker, RankerError, RankRequest
from ctxfast.construct.schema import (
    CodeCandidate,
    DecisionContext,
    EvidenceItem,
    ImpactEdge,
    ImpactType,
    Kind,
    LogEntry,
    PlanNode,
    WindowEntry,
)

__all__ = [
    "CodeCandidate",
    "ConstructConfig",
    "DecisionContext",
    "DefaultsConfig",
    "EvidenceItem",
    "EvidenceRanker",
    "ImpactEdge",
    "ImpactType",
    "Kind",
    "LogEntry",
    "OpenAICompatibleRanker",
    "PlanNode",
    "RankRequest",
    "Ranker",
    "RankerError",
    "WindowEntry",
    "best_line_windows",
    "compose",
    "construct",
    "default_plan",
    "stuff_everything",
    "to_code_candidates",
]
