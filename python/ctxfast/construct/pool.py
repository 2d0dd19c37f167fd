"""Stage (a): evidence-pool assembly.

Collects everything the earlier components and the live execution state produced into one
uniform, addressable pool. This stage *selects nothing*: every item enters (or, past the
256-item cap, is queued out by source priority and logged). Ids are content hashes of
``kind + content + provenance`` so an identical input yields identical ids in every process,
which keeps the rendered window byte-stable for KV-cache reuse.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, ClassVar

from ctxfast.construct.schema import (
    SOURCES,
    CodeCandidate,
    EvidenceItem,
    ImpactEdge,
    ImpactType,
    ItemMeta,
    Kind,
    LogEntry,
    Origin,
    PlanNode,
)
from ctxfast.errors import InvalidArgumentError

if TYPE_CHECKING:
    from ctxfast.construct.config import ConstructConfig


@dataclass(frozen=True)
class PoolSettings:
    """What enters the evidence pool (``ConstructConfig.pool``), each cap bounding what one
    caller's inputs can cost."""

    FLAT_NAMES: ClassVar[Mapping[str, str]] = {}

    #: At most this many items (256) enter the pool; the rest are logged as cut.
    pool_cap: int = 256
    #: An item's content is cut to this many bytes (64 KB), at a line's end: enough for a
    #: long body's every line to be a candidate when compression picks the lines to show
    #: (at 16 KB the lines past the cap of a 500-line function were never shown, and the
    #: cut fell inside a line).
    content_cap_bytes: int = 64 * 1024
    #: An item's provenance note is cut to this many characters (200).
    provenance_cap_chars: int = 200
    #: When two sources give the same item, the first of this order wins: a planner's and
    #: an impact analyser's items are what the caller decided, retrieval's a guess.
    source_priority: tuple[Origin, ...] = (
        Origin.PLANNING,
        Origin.IMPACT,
        Origin.LOCALIZATION,
        Origin.RETRIEVAL,
        Origin.RECON,
        Origin.PATCH,
        Origin.LIVE,
    )

    def __post_init__(self) -> None:
        for name in ("pool_cap", "content_cap_bytes", "provenance_cap_chars"):
            if getattr(self, name) < 0:
                raise InvalidArgumentError(f"{name} must be non-negative")
        if sorted(self.source_priority) != sorted(SOURCES):
            values = tuple(s.value for s in SOURCES)
            raise InvalidArgumentError(f"source_priority must be a permutation of {values}")


_EDGE_KIND = {
    ImpactType.CALLED_BY: Kind.GRAPH_EDGE,
    ImpactType.CONFIG_CONSUMER: Kind.CONFIG,
    ImpactType.SCHEMA_CONSUMER: Kind.CONFIG,
    ImpactType.PRESERVE_OBLIGATION: Kind.DOWNSTREAM_OBLIGATION,
}


@dataclass(frozen=True)
class PoolInputs:
    """Everything one decision may draw on: outputs of 03–07 plus the live execution state.

    Live sequences are chronological (last = freshest).
    """

    task: str
    plan: PlanNode
    candidates: Sequence[CodeCandidate] = ()
    impact: Sequence[ImpactEdge] = ()
    localization: Sequence[str] = ()
    patch: str | None = None
    errors: Sequence[str] = ()
    tracebacks: Sequence[str] = ()
    tool_outputs: Sequence[str] = ()
    test_outputs: Sequence[str] = ()


@dataclass(frozen=True)
class Pool:
    """The uniform pool: items by id in collection order, plus what the caps did."""

    items: tuple[EvidenceItem, ...]
    change_set: tuple[str, ...]
    log: tuple[LogEntry, ...] = ()
    queued: tuple[EvidenceItem, ...] = field(default=())

    def by_id(self) -> dict[str, EvidenceItem]:
        return {it.id: it for it in self.items}


def change_set(plan: PlanNode, localization: Sequence[str]) -> tuple[str, ...]:
    """Entities the current change edits: the plan's target plus the localized entities."""
    out: dict[str, None] = {}
    if plan.target_entity:
        out[plan.target_entity] = None
    for ent in localization:
        if ent:
            out[ent] = None
    return tuple(out)


def _cap_bytes(text: str, cap: int) -> tuple[str, bool]:
    """``text`` cut to at most ``cap`` bytes at the end of its last whole line (mid-line
    only when its first line alone is longer): a line shown cut reads as the real line."""
    raw = text.encode("utf-8")
    if len(raw) <= cap:
        return text, False
    end = raw.rfind(b"\n", 0, cap + 1)
    return raw[: end if end > 0 else cap].decode("utf-8", "ignore"), True


def _shown_after_cap(meta: ItemMeta, content: str) -> ItemMeta:
    """Line addressing of code whose content the byte cap cut: only the lines still held
    (a first line cut inside counts as held) are claimed as shown."""
    kept = max(1, len(content.split("\n")))
    if meta.lines is not None:
        lines = meta.lines[:kept]
        return replace(meta, lines=lines, end_line=lines[-1])
    start = meta.start_line or 1
    return replace(meta, end_line=min(meta.end_line or start, start + kept - 1))


def _item_id(kind: Kind, content: str, provenance: str) -> str:
    h = hashlib.sha256(f"{kind.value}\0{content}\0{provenance}".encode()).hexdigest()
    return "E" + h[:10]


def _is_test_name(entity: str) -> bool:
    low = entity.lower()
    return "test" in low.split(".")[-1] or "/tests/" in low or low.startswith("tests.")


def wider_impact_digest(edges: Sequence[ImpactEdge], changes: Sequence[str]) -> str | None:
    """The fixed one-line digest of the transitive (non-direct) impact DAG, or None."""
    direct = set(changes)
    wider = [e for e in edges if e.head not in direct]
    if not wider:
        return None
    callers = sum(1 for e in wider if e.type is ImpactType.CALLED_BY)
    consumers = sum(
        1 for e in wider if e.type in (ImpactType.CONFIG_CONSUMER, ImpactType.SCHEMA_CONSUMER)
    )
    tails = sorted({e.tail for e in wider})
    tests = sum(1 for t in tails if _is_test_name(t))
    return (
        f"{callers} callers, {consumers} config/schema consumers, "
        f"{len(tails)} indirect dependents, {tests} tests — "
        "no direct evidence requires source expansion yet"
    )


def _check_candidate(c: CodeCandidate) -> None:
    """Refuse a candidate the pool cannot place: one not from recon or retrieval, with a span
    that is not a line range, or with explicit line numbers that do not match its text."""
    if c.origin not in (Origin.RECON, Origin.RETRIEVAL):
        raise InvalidArgumentError(f"candidate origin must be '03' or '04', got {c.origin!r}")
    if c.start_line < 1 or c.end_line < c.start_line:
        raise InvalidArgumentError(
            f"candidate {c.qualname or c.file} has an invalid span {c.start_line}-{c.end_line}"
        )
    if c.lines is not None and len(c.lines) != len(c.text.split("\n")):
        raise InvalidArgumentError(
            f"candidate {c.qualname or c.file}: {len(c.lines)} line numbers for "
            f"{len(c.text.split(chr(10)))} lines of text"
        )


def _candidate_kind(c: CodeCandidate) -> Kind:
    """The item kind of a code candidate: an outline lists symbols; a retrieval hit stays one;
    recon code is source code, or only a symbol when it carries no text."""
    if c.kind == "outline":
        return Kind.SYMBOL  # a file's definition lines: symbols, not code to edit
    if c.origin == Origin.RETRIEVAL:
        return Kind.RETRIEVED_HIT
    return Kind.SOURCE_CODE if c.text.strip() else Kind.SYMBOL


def _normalise(
    raw: list[tuple[str, Kind, str, str, ItemMeta]], config: ConstructConfig
) -> tuple[list[EvidenceItem], list[LogEntry]]:
    """Turn the collected inputs into items: content over the byte cap is cut (and logged),
    provenance is capped, and each item gets a content id, numbered when the same id repeats
    so every item stays addressable."""
    items: list[EvidenceItem] = []
    log: list[LogEntry] = []
    seen_ids: dict[str, int] = {}
    for source, kind, content, prov, meta in raw:
        # A whole file is bounded by its share of the window's target instead.
        content, cut = (
            (content, False) if meta.uncut else _cap_bytes(content, config.pool.content_cap_bytes)
        )
        if cut and meta.start_line is not None:
            meta = _shown_after_cap(meta, content)
        prov = prov[: config.pool.provenance_cap_chars]
        base = _item_id(kind, content, prov)
        n = seen_ids.get(base, 0) + 1
        seen_ids[base] = n
        item_id = base if n == 1 else f"{base}-{n}"
        if cut:
            meta = replace(meta, truncated=True)
            log.append(
                LogEntry(
                    "pool",
                    item_id,
                    "content_capped",
                    f"content over {config.pool.content_cap_bytes} bytes",
                )
            )
        items.append(EvidenceItem(item_id, source, kind, content, prov, meta))
    return items, log


def build_pool(inputs: PoolInputs, config: ConstructConfig) -> Pool:
    """Collect, normalise and index every candidate; enforce the pool caps.

    Raises :class:`InvalidArgumentError` on a malformed candidate (bad origin or span).
    """
    raw: list[tuple[str, Kind, str, str, ItemMeta]] = []
    plan = inputs.plan
    changes = change_set(plan, inputs.localization)

    def add(source: Origin, kind: Kind, content: str, prov: str, meta: ItemMeta) -> None:
        raw.append((source, kind, content, prov, replace(meta, seq=len(raw))))

    plan_lines = [f"obligation: {plan.obligation}"]
    if plan.target_entity:
        plan_lines.append(f"target: {plan.target_entity}")
    plan_lines += [f"precondition: {p}" for p in plan.preconditions]
    plan_lines += [f"required validation: {v}" for v in plan.required_validation]
    add(
        Origin.PLANNING,
        Kind.PLAN_NODE,
        "\n".join(plan_lines),
        f"07: plan node {plan.node_id}",
        ItemMeta(entity=plan.target_entity, plan=plan),
    )
    for i, crit in enumerate(plan.acceptance_criteria):
        add(
            Origin.PLANNING,
            Kind.ACCEPTANCE_CRITERIA,
            crit,
            f"07: acceptance criterion {i + 1} of plan node {plan.node_id}",
            ItemMeta(),
        )

    for e in inputs.impact:
        add(
            Origin.IMPACT,
            _EDGE_KIND[e.type],
            f"{e.tail} --{e.type.value}--> {e.head}",
            f"06: impact edge {e.type.value} of {e.head}",
            ItemMeta(entity=e.tail, edge_type=e.type.value, edge_head=e.head),
        )
    digest = wider_impact_digest(inputs.impact, changes)
    if digest is not None:
        add(
            Origin.IMPACT,
            Kind.GRAPH_EDGE,
            digest,
            "06: transitive impact DAG digest",
            ItemMeta(transitive_digest=True),
        )

    for ent in inputs.localization:
        add(
            Origin.LOCALIZATION,
            Kind.FAULT_ENTITY,
            ent,
            "05: localized fault entity",
            ItemMeta(entity=ent),
        )

    for c in inputs.candidates:
        _check_candidate(c)
        add(
            c.origin,
            _candidate_kind(c),
            c.text,
            c.provenance,
            ItemMeta(
                entity=c.qualname,
                file=c.file,
                start_line=c.start_line,
                end_line=c.end_line,
                signature=c.signature,
                score=c.score,
                lines=c.lines,
                sites=c.sites,
                site_of=c.site_of,
                site_edge=c.site_edge,
                whole_file=c.whole_file,
                uncut=c.uncut or c.whole_file,
            ),
        )

    if inputs.patch:
        add(Origin.PATCH, Kind.PATCH, inputs.patch, "patch: current working diff", ItemMeta())
    for kind, seq in (
        (Kind.ERROR, inputs.errors),
        (Kind.TRACEBACK, inputs.tracebacks),
        (Kind.TOOL_OUTPUT, inputs.tool_outputs),
        (Kind.TEST_OUTPUT, inputs.test_outputs),
    ):
        n = len(seq)
        for i, text in enumerate(seq):
            add(Origin.LIVE, kind, text, f"live: {kind.value} {i + 1} of {n}", ItemMeta())

    items, log = _normalise(raw, config)
    rank: dict[str, int] = {s: i for i, s in enumerate(config.pool.source_priority)}
    # Queue order: source priority; live outputs freshest first so the cap never drops the
    # current failure in favour of an older one.
    queue = sorted(
        items,
        key=lambda it: (rank[it.source], -it.meta.seq if it.source == Origin.LIVE else it.meta.seq),
    )
    keep = {it.id for it in queue[: config.pool.pool_cap]}
    kept = tuple(it for it in items if it.id in keep)
    queued = tuple(it for it in queue[config.pool.pool_cap :])
    for it in queued:
        log.append(
            LogEntry(
                "pool",
                it.id,
                "queued_over_cap",
                f"pool cap {config.pool.pool_cap} by source priority ({it.source})",
            )
        )
    return Pool(items=kept, change_set=changes, log=tuple(log), queued=queued)


__all__ = ["Pool", "PoolInputs", "build_pool", "change_set", "wider_impact_digest"]
