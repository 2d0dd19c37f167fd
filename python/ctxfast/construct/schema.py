"""Typed data of context construction: evidence items, plan/impact inputs, config,
and the emitted :class:`DecisionContext`.

Every threshold and cap of construction lives in :class:`ConstructConfig` as a default, so an
ablation or a different model window changes configuration, never code; each setting's effect
on the window is tested (``tests/test_settings_effect.py`` and the stage tests).
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
class ConstructConfig:
    """Every cap and threshold of construction, each with what it does and why its default."""

    ceiling: int = 24_000
    encoding: str = "cl100k_base"
    # (a) pool
    pool_cap: int = 256
    # The first design capped an item at 8 KB / 80 lines; a fix needs the code to change in full:
    # on 40 exact-tree Lite instances every-hunk coverage went .475 → .55 at the same
    # 8k-token target with 16 KB / 200 lines (400 lines / 32 KB measured the same).
    content_cap_bytes: int = 16 * 1024
    provenance_cap_chars: int = 200
    source_priority: tuple[Origin, ...] = (
        Origin.PLANNING,
        Origin.IMPACT,
        Origin.LOCALIZATION,
        Origin.RETRIEVAL,
        Origin.RECON,
        Origin.PATCH,
        Origin.LIVE,
    )
    # (b) gate
    admitted_cap: int = 64
    # A model ranker (``compose(ranker=)``) is called on the gate's residue only when it holds
    # at most this many items: the cap bounds the prompt and the reply the model may give
    # (the schema's ``maxItems``). A larger residue is folded without a call (below). The
    # no-model evidence ranker reads no prompt, so it ranks a residue of any size.
    residue_cap: int = 32
    residue_min_shared_terms: int = 2
    # Folding an oversize residue admits an item when the obligation, acceptance criterion,
    # validation or precondition sharing most terms with it names every part of its name
    # (``unicode_input`` under "handles unicode input"), a looser reading of the gate's
    # naming rule; False rejects the whole oversize residue.
    fold_oversize_residue: bool = True
    # the ranking step
    score_threshold: float = 0.5
    max_completion_tokens: int = 1024
    temperature: float = 0.0
    ranker_max_response_bytes: int = 64 * 1024
    # The model is shown each residue item as one signature line (never its body), cut to
    # this many characters: a long parameter list or a minified line cannot swell the prompt.
    residue_signature_chars: int = 200
    # (c)/(d) representation and compression
    compression_floor_bytes: int = 1024
    large_item_lines: int = 200
    window_lines: int = 40
    # The window of a cut body is chosen by the task's terms on its code lines only: a
    # docstring repeats the task's words (sympy's 250-line ``diophantine`` was cut to its
    # signature and docstring, the fix 45 lines further down). On 107 exact-tree Lite
    # instances at 8k it covered one more and lost none.
    window_code_only: bool = True
    # (b) gate: a definition the task names only by a bare name that at least this many
    # candidates share is residue, not a dependency (0: every named definition is admitted).
    # ``permute=True`` in a sympy issue admitted every ``permute`` method of the library. On
    # 107 exact-tree Lite instances at 8k: 41 windows change, the same instances are covered,
    # one more holds its gold file.
    named_ambiguity: int = 3
    insertion_gap_lines: int = 3
    # An older tool or test output the budget masks becomes a one-line pointer quoting its
    # first line up to this many characters: enough to tell which command or test it was.
    pointer_preview_chars: int = 60
    min_term_len: int = 3
    # Of several test outputs only the freshest is shown: a re-run supersedes the results
    # of earlier runs (False shows them too, as the budget allows).
    supersede_older_test_outputs: bool = True
    # (e) dedup: a model ranker's pick scoring at least ``score_threshold`` but below
    # ``filler_score_below`` is a guess, dropped unless a block the decision depends on
    # names it, so the room goes to what the model was sure of (``drop_filler=False`` keeps
    # every pick).
    drop_filler: bool = True
    filler_score_below: float = 0.6
    # (g) budget: share of the ceiling each tier is compressed to by its ladder step
    tier_shares: tuple[tuple[str, float], ...] = (
        ("stable_core", 0.15),
        ("working_set", 0.60),
        ("transient", 0.25),
    )
    # The ladder's last step, when only the stable core is left and the window is still
    # over the ceiling: each acceptance criterion is cut to this many characters before
    # the criteria after the first are dropped.
    acceptance_trim_chars: int = 200
    # Standalone window (no model ranker): the window fills toward ``target_tokens`` with the
    # next-best evidence and stops there (0 = no filling: the frugal window); the ceiling
    # still bounds everything.
    target_tokens: int = 8000
    # With the repository's source at hand (``compose``), the room the fill leaves closes
    # gaps of at most ``gap_lines`` unshown lines next to lines shown in full
    # (``construct.gaps``). On the 140 exact-tree Lite instances at 8k the same 78 are
    # covered with it as without; closing the gate's gaps before the fill, or holding back
    # 5-10% of the target for gaps, covered 76-77 (they took room from ranked bodies).
    gap_lines: int = 32
    # Without a model ranker, the residue is ranked once, deterministically, from the
    # retrieval evidence (``construct.evidence_ranker``); False keeps the frugal window.
    evidence_ranker: bool = True
    # The task's section of the window is cut to this many tokens (0: never cut), keeping
    # its head, a traceback's last frames and its tail (``construct.task_cap``): the task
    # is never evicted, so a 120 KB task left no room for any code.
    task_tokens: int = 1500

    def __post_init__(self) -> None:
        for name in (
            "ceiling",
            "pool_cap",
            "content_cap_bytes",
            "provenance_cap_chars",
            "admitted_cap",
            "residue_cap",
            "max_completion_tokens",
            "window_lines",
            "large_item_lines",
            "target_tokens",
            "gap_lines",
            "named_ambiguity",
            "task_tokens",
        ):
            if getattr(self, name) < 0:
                raise InvalidArgumentError(f"{name} must be non-negative")
        if not 0.0 <= self.score_threshold <= 1.0:
            raise InvalidArgumentError("score_threshold must lie in [0, 1]")
        if sorted(self.source_priority) != sorted(SOURCES):
            values = tuple(s.value for s in SOURCES)
            raise InvalidArgumentError(f"source_priority must be a permutation of {values}")
        shares = dict(self.tier_shares)
        if set(shares) != {"stable_core", "working_set", "transient"}:
            raise InvalidArgumentError("tier_shares must name stable_core, working_set, transient")
        if abs(sum(shares.values()) - 1.0) > 1e-9 or min(shares.values()) < 0:
            raise InvalidArgumentError("tier_shares must be non-negative and sum to 1")

    def share(self, tier: str) -> float:
        """The configured share of the ceiling for ``tier``."""
        return dict(self.tier_shares)[tier]


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
    "ConstructConfig",
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
