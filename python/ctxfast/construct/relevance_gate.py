"""Stage (b): the hard relevance gate.

Admission is structural and has exactly two drivers: the item is required by the current
obligation (07), or it is a direct consequence of the change in the impact DAG (06).
"Semantically similar" never admits here: an unlinked item that shares decision terms is
*residue* (for the single ranking call), anything else is rejected. No model runs.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import TYPE_CHECKING, ClassVar

from ctxfast.construct.pool import Pool
from ctxfast.construct.schema import (
    CODE_KINDS,
    LIVE_OUTPUT_KINDS,
    EvidenceItem,
    Kind,
    LogEntry,
    PlanNode,
)
from ctxfast.construct.terms import decision_terms, has_word, short_name, terms_of
from ctxfast.errors import InvalidArgumentError
from ctxfast.retrieval.query import without_frame_paths
from ctxfast.text import split_identifier

if TYPE_CHECKING:
    from ctxfast.construct.config import ConstructConfig


@dataclass(frozen=True)
class GateSettings:
    """The relevance gate (``ConstructConfig.gate``): which pool items the plan admits as
    dependencies and which are residue for a ranker to judge."""

    FLAT_NAMES: ClassVar[Mapping[str, str]] = {}

    #: At most this many items (64) are admitted; the rest are residue.
    admitted_cap: int = 64
    #: An item no driver admits is offered to the ranker when it shares at least this many
    #: terms (2) with the decision, else rejected: one shared word is chance.
    residue_min_shared_terms: int = 2
    #: A residue over ``ranking.residue_cap`` is folded without a model call: an item is
    #: admitted when the plan node sharing most terms with it names every part of its name
    #: (``unicode_input`` under "handles unicode input"). Off rejects such a residue whole.
    fold_oversize_residue: bool = True
    #: A definition the task names only by a bare name that at least this many candidates
    #: share (3) is residue, not a dependency: ``permute=True`` in an issue would admit
    #: every ``permute`` method of the library. 0: every named definition is admitted.
    named_ambiguity: int = 3
    #: A code item ending at most this many lines (3) above the line where new code goes is
    #: admitted: it is what the insertion follows.
    insertion_gap_lines: int = 3

    def __post_init__(self) -> None:
        for name in ("admitted_cap", "named_ambiguity"):
            if getattr(self, name) < 0:
                raise InvalidArgumentError(f"{name} must be non-negative")


_TERM_SCAN_BYTES = 4096


@dataclass(frozen=True)
class GateResult:
    """Admitted ids (pool order) with their drivers, the residual set and the log."""

    admitted: tuple[str, ...]
    drivers: dict[str, str]
    residue: tuple[str, ...]
    rejected: tuple[str, ...]
    log: tuple[LogEntry, ...]


def item_terms(item: EvidenceItem, min_len: int) -> frozenset[str]:
    """Terms an item is about: its entity, signature and (the head of) its content."""
    return _item_terms(
        item.meta.entity, item.meta.signature, item.content[:_TERM_SCAN_BYTES], min_len
    )


@lru_cache(maxsize=4096)
def _item_terms(
    entity: str | None, signature: str | None, head: str, min_len: int
) -> frozenset[str]:
    text = " ".join(t for t in (entity, signature, head) if t)
    return frozenset(terms_of(text, min_len))


def _names(entity: str, text: str) -> bool:
    """Whether ``text`` names ``entity``: its qualname, or its short name when distinctive
    (both as whole words)."""
    name = short_name(entity)
    return has_word(text, entity) or (len(name) >= 4 and has_word(text, name))


def _ambiguous(
    entity: str, plan: PlanNode, namesakes: Counter[str] | None, config: ConstructConfig
) -> bool:
    """A bare name the task uses that many candidates share (``permute``, ``MatrixSymbol``
    as a handler method) does not say which of them matters: unless the task qualifies it
    (``Class.method``, the full qualname), such a definition competes as residue. The change
    target's own name is not ambiguous: its namesakes are its other layers (a wrapper, a
    binding, a stub)."""
    if not config.gate.named_ambiguity or namesakes is None:
        return False
    name = short_name(entity)
    if namesakes[name] < config.gate.named_ambiguity:
        return False
    if plan.target_entity and short_name(plan.target_entity) == name:
        return False
    parts = entity.split(".")
    qualified = ".".join(parts[-2:]) if len(parts) > 1 else entity
    texts = (plan.obligation, *plan.preconditions)
    return not any(entity in t or qualified in t for t in texts)


def _target_span(pool: Pool) -> tuple[str, int] | None:
    for it in pool.items:
        if it.kind in CODE_KINDS and it.meta.entity in pool.change_set and it.meta.file:
            return it.meta.file, it.meta.start_line or 1
    return None


def _freshest(pool: Pool) -> set[str]:
    last: dict[Kind, EvidenceItem] = {}
    for it in pool.items:
        if it.kind in LIVE_OUTPUT_KINDS:
            cur = last.get(it.kind)
            if cur is None or it.meta.seq > cur.meta.seq:
                last[it.kind] = it
    return {it.id for it in last.values()}


def _driver(
    item: EvidenceItem,
    plan: PlanNode,
    pool: Pool,
    config: ConstructConfig,
    freshest: set[str],
    target: tuple[str, int] | None,
    target_files: frozenset[str] = frozenset(),
    namesakes: Counter[str] | None = None,
) -> str | None:
    changes = pool.change_set
    if item.kind is Kind.PLAN_NODE:
        return "obligation:plan_node"
    if item.kind is Kind.ACCEPTANCE_CRITERIA:
        return "obligation:acceptance_criterion"
    if item.kind is Kind.PATCH:
        return "obligation:current_change"
    if item.meta.transitive_digest:
        return "impact:transitive_digest"
    if item.meta.edge_type is not None:
        return f"impact:{item.meta.edge_type}" if item.meta.edge_head in changes else None
    ent = item.meta.entity
    if ent:
        named = _entity_driver(ent, plan, changes, config, namesakes)
        if named is not None:
            return named
    if item.kind is Kind.SYMBOL and not ent and item.meta.file in target_files:
        return "obligation:target_file_outline"
    if item.kind in CODE_KINDS:
        code = _code_driver(item, pool, config, target)
        if code is not None:
            return code
    if item.kind in LIVE_OUTPUT_KINDS:
        return _live_driver(item, plan, changes, freshest)
    return None


def _entity_driver(
    ent: str,
    plan: PlanNode,
    changes: Sequence[str],
    config: ConstructConfig,
    namesakes: Counter[str] | None,
) -> str | None:
    """Why the plan requires the entity ``ent``, if it does: it is what changes, or the plan
    names it in a validation step, in the obligation or a precondition (unless the name is
    ambiguous), or in an acceptance criterion."""
    if ent in changes:
        return "obligation:change_target"
    if any(_names(ent, v) for v in plan.required_validation):
        return "obligation:validation_target"
    if (_names(ent, plan.obligation) or any(_names(ent, p) for p in plan.preconditions)) and (
        not _ambiguous(ent, plan, namesakes, config)
    ):
        return "obligation:dependency"
    if any(_names(ent, c) for c in plan.acceptance_criteria):
        return "obligation:acceptance_predicate"
    return None


def _code_driver(
    item: EvidenceItem, pool: Pool, config: ConstructConfig, target: tuple[str, int] | None
) -> str | None:
    """Why a code item is required, if it is: it is the tail of a direct impact edge of the
    change (the code consuming it), or it ends just above the line where new code goes."""
    ent = item.meta.entity
    changes = pool.change_set
    if ent:
        # Tails of direct impact edges: the consumer code of the change.
        for other in pool.items:
            if other.meta.edge_head in changes and other.meta.entity == ent:
                return f"impact:{other.meta.edge_type}"
    if target is not None and item.meta.file == target[0] and item.meta.end_line:
        gap = target[1] - item.meta.end_line
        if 1 <= gap <= config.gate.insertion_gap_lines + 1:
            return "obligation:insertion_point"
    return None


def _live_driver(
    item: EvidenceItem, plan: PlanNode, changes: Sequence[str], freshest: set[str]
) -> str | None:
    """Why a live output is required, if it is: an error or traceback always is; otherwise
    the freshest output of its kind, or one naming the change or a validation step."""
    if item.kind in (Kind.ERROR, Kind.TRACEBACK):
        return "obligation:current_error"
    if item.id in freshest:
        return "obligation:latest_live_state"
    text = item.content
    if any(_names(c, text) for c in changes) or any(
        _names(v, text) for v in plan.required_validation
    ):
        return "obligation:failing_state"
    return None


def _without_frame_paths(plan: PlanNode) -> PlanNode:
    """``plan`` with the traceback frame lines of its texts cut to what names code (the rule
    of query construction, :func:`~ctxfast.retrieval.query.without_frame_paths`): a pasted
    frame ``File "/Users/me/FastAPI/nan.py"`` does not name the class ``FastAPI``."""
    return replace(
        plan,
        obligation=without_frame_paths(plan.obligation),
        preconditions=tuple(map(without_frame_paths, plan.preconditions)),
        acceptance_criteria=tuple(map(without_frame_paths, plan.acceptance_criteria)),
    )


def run_gate(
    pool: Pool, plan: PlanNode, config: ConstructConfig, extra_terms: Sequence[str] = ()
) -> GateResult:
    """Admit by obligation or direct impact, emit the residue, cap the admitted set at 64."""
    terms = set(
        decision_terms(
            [
                plan.obligation,
                plan.target_entity,
                *plan.preconditions,
                *plan.required_validation,
                *plan.acceptance_criteria,
                *pool.change_set,
                *extra_terms,
            ],
            config.min_term_len,
        )
    )
    freshest = _freshest(pool)
    naming = _without_frame_paths(plan)
    target = _target_span(pool)
    target_files = frozenset(
        it.meta.file
        for it in pool.items
        if it.kind in CODE_KINDS and it.meta.entity in pool.change_set and it.meta.file
    )
    admitted: list[EvidenceItem] = []
    drivers: dict[str, str] = {}
    residue: list[str] = []
    rejected: list[str] = []
    log: list[LogEntry] = []
    namesakes = Counter(
        short_name(it.meta.entity) for it in pool.items if it.kind in CODE_KINDS and it.meta.entity
    )
    for item in pool.items:
        drv = _driver(item, naming, pool, config, freshest, target, target_files, namesakes)
        if drv is not None:
            admitted.append(item)
            drivers[item.id] = drv
            continue
        if item.meta.edge_type is not None:
            rejected.append(item.id)
            log.append(
                LogEntry(
                    "gate", item.id, "rejected", "transitive impact edge (counted in the digest)"
                )
            )
            continue
        shared = len(item_terms(item, config.min_term_len) & terms)
        # A file retrieval ranked among the best is residue on that ranking alone (a short
        # task shares few words with any file).
        if shared >= config.gate.residue_min_shared_terms or item.meta.whole_file:
            residue.append(item.id)
            log.append(
                LogEntry("gate", item.id, "residue", f"no driver; shares {shared} decision terms")
            )
        else:
            rejected.append(item.id)
            log.append(
                LogEntry("gate", item.id, "rejected", f"no driver; shares {shared} decision terms")
            )

    rank: dict[str, int] = {s: i for i, s in enumerate(config.pool.source_priority)}
    order = sorted(admitted, key=lambda it: (rank[it.source], it.meta.seq))
    keep = {it.id for it in order[: config.gate.admitted_cap]}
    final: list[str] = []
    for it in admitted:
        if it.id in keep:
            final.append(it.id)
            log.append(LogEntry("gate", it.id, "admitted", drivers[it.id]))
        else:
            rejected.append(it.id)
            log.append(
                LogEntry(
                    "gate",
                    it.id,
                    "rejected",
                    f"admitted cap {config.gate.admitted_cap} by source priority",
                )
            )
            drivers.pop(it.id)
    return GateResult(tuple(final), drivers, tuple(residue), tuple(rejected), tuple(log))


def fold_residue(
    residue: Sequence[EvidenceItem], plan: PlanNode, config: ConstructConfig
) -> tuple[list[str], list[LogEntry]]:
    """Fold an oversized (>cap) residue into its nearest obligation bucket, without a model.

    Each item goes to the bucket (obligation, criterion, validation, precondition) sharing
    the most terms with it, and is admitted only when that bucket's terms cover every part of
    the item's short name (``unicode_input`` under "handles unicode input"), a looser but
    still structural reading of the bucket's driver; otherwise it is rejected. Returns the
    admitted ids.
    """
    buckets: list[tuple[str, str]] = [("obligation", plan.obligation)]
    buckets += [
        (f"acceptance_criterion_{i + 1}", c) for i, c in enumerate(plan.acceptance_criteria)
    ]
    buckets += [(f"validation_{i + 1}", v) for i, v in enumerate(plan.required_validation)]
    buckets += [(f"precondition_{i + 1}", p) for i, p in enumerate(plan.preconditions)]
    bucket_terms = [set(terms_of(text, config.min_term_len)) for _, text in buckets]
    admitted: list[str] = []
    log: list[LogEntry] = []
    for item in residue:
        its = item_terms(item, config.min_term_len)
        best = max(range(len(buckets)), key=lambda i: (len(its & bucket_terms[i]), -i))
        name = buckets[best][0]
        ent = item.meta.entity
        parts = (
            [t for t in split_identifier(short_name(ent)) if len(t) >= config.min_term_len]
            if ent
            else []
        )
        if config.gate.fold_oversize_residue and parts and set(parts) <= bucket_terms[best]:
            admitted.append(item.id)
            log.append(
                LogEntry("fold", item.id, "admitted", f"fold:{name} covers {short_name(ent or '')}")
            )
        else:
            why = (
                f"fold:{name} has no driver"
                if config.gate.fold_oversize_residue
                else "fold disabled"
            )
            log.append(LogEntry("fold", item.id, "rejected", f"oversize residue; {why}"))
    return admitted, log


__all__ = ["GateResult", "fold_residue", "item_terms", "run_gate"]
