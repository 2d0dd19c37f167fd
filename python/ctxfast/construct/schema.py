"""Typed data of context construction: evidence items, plan/impact inputs, config,
and the emitted :class:`DecisionContext`.

Every threshold and cap of construction lives in
:class:`~ctxfast.construct.config.ConstructConfig` as a default, so an ablation or a
different model window changes configuration, never code; each setting's effect on the
window is tested (``tests/test_settings_effect.py`` and the stage tests).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from enum import StrEnum
from typing import Any

from ctxfast.errors import InvalidArgumentError


class Kind(StrEnum):
    """The closed evidence-kind enum; nothing outside it enters the pool."""

    SOURCE_CODE = "source_code"
    SYMBOL = "symbol"
    RETRIEVED_HIT = "retrieved_hit"
    FAULT_ENTITY = "fault_entity"
    CHANGED_ENTITY = "changed_entity"
    GRAPH_EDGE = "graph_edge"
    CONFIG = "config"
    DOWNSTREAM_OBLIGATION = "downstream_obligation"
    PLAN_NODE = "plan_node"
    ACCEPTANCE_CRITERIA = "acceptance_criteria"
    PATCH = "patch"
    ERROR = "error"
    TRACEBACK = "traceback"
    TOOL_OUTPUT = "tool_output"
    TEST_OUTPUT = "test_output"


class Origin(StrEnum):
    """The component an evidence item comes from. The values are the design's component
    numbers (reconnaissance 03 … planning 07), so serialized items and configs keep them."""

    RECON = "03"
    RETRIEVAL = "04"
    LOCALIZATION = "05"
    IMPACT = "06"
    PLANNING = "07"
    PATCH = "patch"
    LIVE = "live"


SOURCES = tuple(Origin)

CODE_KINDS = frozenset({Kind.SOURCE_CODE, Kind.SYMBOL, Kind.RETRIEVED_HIT})
LIVE_OUTPUT_KINDS = frozenset({Kind.ERROR, Kind.TRACEBACK, Kind.TOOL_OUTPUT, Kind.TEST_OUTPUT})


class ImpactType(StrEnum):
    """Direct-consequence edge types that the hard gate admits on."""

    CALLED_BY = "CalledBy"
    CONFIG_CONSUMER = "ConfigConsumer"
    SCHEMA_CONSUMER = "SchemaConsumer"
    PRESERVE_OBLIGATION = "PreserveObligation"


@dataclass(frozen=True)
class ItemMeta:
    """Addressing data carried beside the pool item's fixed fields (never emitted with them).

    Later stages need the entity, span and freshness of an item without re-reading the
    source, so the pool records them once here.
    """

    entity: str | None = None
    file: str | None = None
    start_line: int | None = None
    end_line: int | None = None
    signature: str | None = None
    score: float | None = None
    seq: int = 0  # collection order; for live outputs, higher = fresher
    edge_type: str | None = None
    edge_head: str | None = None
    transitive_digest: bool = False
    truncated: bool = False
    lines: tuple[int, ...] | None = None
    sites: tuple[int, ...] = ()
    site_of: str | None = None
    site_edge: str | None = None  # see CodeCandidate.site_edge
    #: The item is its file, whole, chosen for the window (``defaults.with_whole_files``):
    #: its size is bounded by the window's target, so no per-item cap or line window cuts it.
    whole_file: bool = False
    #: Every line of the item is shown: construction neither cuts it to a line window nor
    #: to the byte cap (a file chosen whole, a change target's whole definition).
    uncut: bool = False
    #: A plan node's fields (its ``content`` is their text for the gate and the ranker): the
    #: window lays the plan out from them, each repository-derived name escaped.
    plan: PlanNode | None = None


@dataclass(frozen=True)
class EvidenceItem:
    """One uniform, addressable pool item; :meth:`to_dict` is its fixed JSON form."""

    id: str
    source: str
    kind: Kind
    content: str
    provenance: str
    meta: ItemMeta = field(default_factory=ItemMeta)

    def to_dict(self) -> dict[str, str]:
        """The pool item: ``{id, source, kind, content, provenance}`` and nothing else."""
        return {
            "id": self.id,
            "source": self.source,
            "kind": self.kind.value,
            "content": self.content,
            "provenance": self.provenance,
        }


@dataclass(frozen=True)
class PlanNode:
    """The current plan node (the obligation this decision serves)."""

    node_id: str
    obligation: str
    target_entity: str | None = None
    preconditions: tuple[str, ...] = ()
    required_validation: tuple[str, ...] = ()
    acceptance_criteria: tuple[str, ...] = ()
    decision_question: str | None = None

    def question(self) -> str:
        """The one-line decision question of the ranking step (derived from the obligation if
        not given)."""
        if self.decision_question:
            return self.decision_question
        return f"Which candidates does the next edit need to discharge: {self.obligation}?"


@dataclass(frozen=True)
class ImpactEdge:
    """An impact-DAG edge: ``tail`` is a consequence of changing ``head``."""

    head: str
    tail: str
    type: ImpactType

    def __post_init__(self) -> None:
        try:
            object.__setattr__(self, "type", ImpactType(self.type))
        except ValueError as exc:
            allowed = ", ".join(t.value for t in ImpactType)
            raise InvalidArgumentError(
                f"impact edge type {self.type!r} is not one of: {allowed}"
            ) from exc


@dataclass(frozen=True)
class CodeCandidate:
    """A code candidate from retrieval (04) or recon (03), as the graph/retrieval layers give it.

    ``start_line``/``end_line`` are the real 1-based lines of ``text`` in ``file``; ``origin``
    says which component produced it (the same definition may arrive via both; dedup keeps one).
    """

    qualname: str | None
    kind: str
    file: str
    start_line: int
    end_line: int
    score: float
    signature: str | None
    text: str
    provenance: str
    origin: Origin = Origin.RETRIEVAL
    #: When set, the exact file lines ``text`` holds (ascending, possibly with gaps: a class
    #: header line above a method, a file outline); ``text`` is those lines joined by
    #: newlines. ``None`` means the contiguous span ``start_line..end_line``.
    lines: tuple[int, ...] | None = None
    #: Lines of ``file`` inside the span that call the change entity (from the code graph),
    #: shown beside a caller's signature.
    sites: tuple[int, ...] = ()
    #: The entity ``sites`` call (the change entity this candidate is a caller of).
    site_of: str | None = None
    #: The impact edge ``sites`` stand for (``ImpactType`` value): ``CalledBy`` when they
    #: call ``site_of``, ``ConfigConsumer`` when they bind a configuration key.
    site_edge: str | None = None
    #: ``lines`` are the whole file (see :attr:`ItemMeta.whole_file`).
    whole_file: bool = False
    #: Every line in ``lines`` is shown (see :attr:`ItemMeta.uncut`); a whole file is.
    uncut: bool = False


@dataclass(frozen=True)
class WindowEntry:
    """One placed block of the window: which item, in what rendering, role, tier and text."""

    item_id: str
    kind: str
    role: str
    rendering: str
    tier: str
    critical: bool
    text: str
    # Where the block's code lives (None for non-code items): lets evaluators and callers
    # map the window back to the repository without re-deriving it from the text.
    entity: str | None = None
    file: str | None = None
    start_line: int | None = None
    end_line: int | None = None
    #: The exact file lines the block shows when they are not the whole span
    #: ``start_line..end_line`` (gaps are marked in the text); ``None`` = the whole span.
    lines: tuple[int, ...] | None = None

    def shown_lines(self) -> tuple[int, ...]:
        """The 1-based file lines this entry puts in front of the model (empty for non-code)."""
        if self.lines is not None:
            return self.lines
        if self.file is None or self.start_line is None:
            return ()
        return tuple(range(self.start_line, (self.end_line or self.start_line) + 1))


@dataclass(frozen=True)
class LogEntry:
    """One admission/rejection/representation decision with the driver that made it."""

    stage: str
    item_id: str
    decision: str
    driver: str
    #: What the item is, in words a reader can act on (a qualname or ``path:start-end``).
    subject: str = ""

    def to_dict(self) -> dict[str, str]:
        return asdict(self)


@dataclass(frozen=True)
class DecisionContext:
    """The single observation handed to the model for one decision.

    ``token_count`` is the exact count of :meth:`render` and never exceeds ``ceiling``.
    """

    task: str
    acceptance_criteria: tuple[str, ...]
    current_obligation: str
    window: tuple[WindowEntry, ...]
    text: str
    token_count: int
    ceiling: int
    budget_log: tuple[str, ...]
    admission_log: tuple[LogEntry, ...]
    stable_core_only: bool = False
    model_calls: int = 0
    flags: tuple[str, ...] = ()
    # Wall-clock milliseconds per stage, for benchmarks; excluded from equality and from
    # ``to_json`` so identical inputs still give identical emits.
    timings_ms: dict[str, float] = field(default_factory=dict, compare=False, repr=False)

    def render(self) -> str:
        """The exact text handed to the model (``token_count`` is counted on it)."""
        return self.text

    def to_json(self) -> str:
        """The window plus the logs, as deterministic JSON (sorted keys)."""
        payload: dict[str, Any] = {
            "task": self.task,
            "acceptance_criteria": list(self.acceptance_criteria),
            "current_obligation": self.current_obligation,
            "window": [asdict(e) for e in self.window],
            "token_count": self.token_count,
            "ceiling": self.ceiling,
            "budget_log": list(self.budget_log),
            "admission_log": [e.to_dict() for e in self.admission_log],
            "stable_core_only": self.stable_core_only,
            "model_calls": self.model_calls,
            "flags": list(self.flags),
        }
        return json.dumps(payload, sort_keys=True, ensure_ascii=False, indent=1)


__all__ = [
    "CODE_KINDS",
    "LIVE_OUTPUT_KINDS",
    "SOURCES",
    "CodeCandidate",
    "DecisionContext",
    "EvidenceItem",
    "ImpactEdge",
    "ImpactType",
    "ItemMeta",
    "Kind",
    "LogEntry",
    "Origin",
    "PlanNode",
    "WindowEntry",
]


def __getattr__(name: str) -> Any:
    # ``ConstructConfig`` lived here; it moved to ``construct.config`` beside its groups.
    if name == "ConstructConfig":
        from ctxfast.construct.config import ConstructConfig

        return ConstructConfig
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
