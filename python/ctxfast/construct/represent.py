"""Stage (c): representation choice — the (kind × role) → rendering table.

The table is data, not prose: the cheapest rendering that preserves what the decision needs
is the default, and expansion (signature/digest → verbatim) fires only on a deterministic
predicate — the decision's ``required_validation`` names the item, or the obligation targets
it. A (kind, role) pair outside the table renders as ``signature`` and is logged as a miss.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, ClassVar

from ctxfast.construct.schema import (
    CODE_KINDS,
    LIVE_OUTPUT_KINDS,
    EvidenceItem,
    Kind,
    LogEntry,
    PlanNode,
)
from ctxfast.construct.terms import mentions
from ctxfast.text import is_test_path

if TYPE_CHECKING:
    from ctxfast.construct.config import ConstructConfig


@dataclass(frozen=True)
class RepresentSettings:
    """How live outputs are represented (``ConstructConfig.represent``)."""

    FLAT_NAMES: ClassVar[Mapping[str, str]] = {}

    #: Of several test outputs only the freshest is shown: a re-run supersedes earlier
    #: results. Off shows them too, as the budget allows.
    supersede_older_test_outputs: bool = True


class Role(StrEnum):
    """An item's role in the current decision, assigned from its kind and gate driver."""

    CHANGE_TARGET = "change_target"
    INSERTION_POINT = "insertion_point"
    REQUIREMENT = "requirement"
    CRITICAL_DEFINITION = "critical_definition"
    RELATED_SYMBOL = "related_symbol"
    IMPACT_DIRECT = "impact_direct"
    IMPACT_WIDER = "impact_wider"
    RELATED_TEST = "related_test"
    CONFIG_CONSUMER = "config_consumer"
    FILE_OUTLINE = "file_outline"
    LIVE_STATE = "live_state"
    STALE = "stale"


class Rendering(StrEnum):
    VERBATIM = "verbatim"
    SIGNATURE = "signature"
    DIGEST = "digest"
    TRUNCATED = "truncated"
    OMITTED = "omitted"


_CODE = (Kind.SOURCE_CODE, Kind.SYMBOL, Kind.RETRIEVED_HIT)
_LIVE = (Kind.PATCH, Kind.ERROR, Kind.TRACEBACK, Kind.TOOL_OUTPUT, Kind.TEST_OUTPUT)

# The representation table, one row per (kind, role).
REPRESENTATION_TABLE: Mapping[tuple[Kind, Role], Rendering] = {
    **{
        (k, Role.CHANGE_TARGET): Rendering.VERBATIM
        for k in (*_CODE, Kind.FAULT_ENTITY, Kind.CHANGED_ENTITY)
    },
    **{(k, Role.INSERTION_POINT): Rendering.VERBATIM for k in _CODE},
    (Kind.PLAN_NODE, Role.REQUIREMENT): Rendering.VERBATIM,
    (Kind.ACCEPTANCE_CRITERIA, Role.REQUIREMENT): Rendering.VERBATIM,
    **{(k, Role.CRITICAL_DEFINITION): Rendering.SIGNATURE for k in _CODE},
    **{(k, Role.RELATED_SYMBOL): Rendering.SIGNATURE for k in _CODE},
    **{
        (k, Role.IMPACT_DIRECT): Rendering.SIGNATURE
        for k in (*_CODE, Kind.GRAPH_EDGE, Kind.DOWNSTREAM_OBLIGATION)
    },
    (Kind.GRAPH_EDGE, Role.IMPACT_WIDER): Rendering.DIGEST,
    **{(k, Role.RELATED_TEST): Rendering.SIGNATURE for k in _CODE},
    **{(k, Role.CONFIG_CONSUMER): Rendering.SIGNATURE for k in (*_CODE, Kind.CONFIG)},
    # A file's skeleton is already its cheapest faithful form.
    (Kind.SYMBOL, Role.FILE_OUTLINE): Rendering.VERBATIM,
    **{(k, Role.LIVE_STATE): Rendering.VERBATIM for k in _LIVE},
    **{(k, Role.STALE): Rendering.OMITTED for k in _LIVE},
}

# Roles whose items the decision depends on: pinned to the window edges by (f).
CRITICAL_ROLES = frozenset(
    {
        Role.CHANGE_TARGET,
        Role.INSERTION_POINT,
        Role.REQUIREMENT,
        Role.CRITICAL_DEFINITION,
    }
)


@dataclass(frozen=True)
class Assigned:
    """An admitted item with its role and rendering (and why)."""

    item: EvidenceItem
    role: Role
    rendering: Rendering
    driver: str
    score: float | None = None


def _is_test(item: EvidenceItem) -> bool:
    """Test code is code in a test file (the one rule, :func:`ctxfast.text.is_test_path`): a
    library name that merely contains "test" (``TestReport``, ``pytest_runtest_makereport``)
    is not a test."""
    return is_test_path(item.meta.file or "")


def assign_role(item: EvidenceItem, driver: str, stale: bool) -> Role:
    """The deterministic role of an admitted item from its kind and gate driver."""
    if item.kind in (Kind.PLAN_NODE, Kind.ACCEPTANCE_CRITERIA):
        return Role.REQUIREMENT
    if item.kind in (Kind.PATCH, *LIVE_OUTPUT_KINDS):
        return Role.STALE if stale else Role.LIVE_STATE
    if item.meta.transitive_digest:
        return Role.IMPACT_WIDER
    if driver == "obligation:change_target":
        return Role.CHANGE_TARGET
    if driver == "obligation:insertion_point":
        return Role.INSERTION_POINT
    if item.kind is Kind.SYMBOL and not item.meta.entity and item.meta.file:
        return Role.FILE_OUTLINE
    if driver in ("impact:ConfigConsumer", "impact:SchemaConsumer"):
        return Role.CONFIG_CONSUMER
    if driver.startswith("impact:"):
        return Role.IMPACT_DIRECT
    if item.kind in CODE_KINDS and _is_test(item):
        return Role.RELATED_TEST
    if driver == "obligation:dependency" and item.kind in CODE_KINDS:
        return Role.CRITICAL_DEFINITION
    return Role.RELATED_SYMBOL


def expansion_gate(item: EvidenceItem, plan: PlanNode) -> bool:
    """The gated-expansion predicate: the decision must reason over this item's body.

    True iff ``required_validation`` names the item (e.g. the test whose body the edit must
    satisfy) or the obligation's target is the item itself. Never a judgment that more text
    might help.
    """
    ent = item.meta.entity
    if not ent or item.kind not in CODE_KINDS:
        return False
    if plan.target_entity and ent == plan.target_entity:
        return True
    return any(mentions(v, ent) for v in plan.required_validation)


def stale_ids(items: Sequence[EvidenceItem], config: ConstructConfig) -> set[str]:
    """Superseded live history: every test output but the freshest (a re-run supersedes it)."""
    if not config.represent.supersede_older_test_outputs:
        return set()
    tests = [it for it in items if it.kind is Kind.TEST_OUTPUT]
    if len(tests) < 2:
        return set()
    newest = max(tests, key=lambda it: it.meta.seq)
    return {it.id for it in tests if it.id != newest.id}


def represent(
    items: Sequence[EvidenceItem],
    drivers: Mapping[str, str],
    plan: PlanNode,
    config: ConstructConfig,
    scores: Mapping[str, float] | None = None,
) -> tuple[list[Assigned], list[LogEntry]]:
    """Assign every admitted item its role and rendering; log misses and expansions."""
    stale = stale_ids(items, config)
    out: list[Assigned] = []
    log: list[LogEntry] = []
    for item in items:
        driver = drivers[item.id]
        role = assign_role(item, driver, item.id in stale)
        rendering = REPRESENTATION_TABLE.get((item.kind, role))
        if rendering is None:
            rendering = Rendering.SIGNATURE
            log.append(
                LogEntry(
                    "represent",
                    item.id,
                    "table_miss",
                    f"({item.kind.value}, {role.value}) not in table → signature",
                )
            )
        if rendering in (Rendering.SIGNATURE, Rendering.DIGEST) and expansion_gate(item, plan):
            rendering = Rendering.VERBATIM
            log.append(
                LogEntry(
                    "represent",
                    item.id,
                    "expanded",
                    "required_validation or obligation target names the item",
                )
            )
        log.append(LogEntry("represent", item.id, rendering.value, role.value))
        out.append(Assigned(item, role, rendering, driver, (scores or {}).get(item.id)))
    return out, log


__all__ = [
    "CRITICAL_ROLES",
    "REPRESENTATION_TABLE",
    "Assigned",
    "Rendering",
    "Role",
    "assign_role",
    "expansion_gate",
    "represent",
    "stale_ids",
]
