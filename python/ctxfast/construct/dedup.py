"""Stage (e): deduplication, before ordering and budgeting.

Dedup keys on *normalised content identity* (hashed natively), definition identity and
symbol identity — never on pool ids. Each distinct fact keeps one rendering, in its
strongest role; every duplicate is logged against its survivor and left out of the window
(a pointer in the text would only cost tokens and show internal ids). A requirement that
restates the task, and an impact edge whose consumer's code is in the window, are duplicates
too. Low-scoring ranker admissions that no load-bearing item mentions are dropped as filler.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, ClassVar

from ctxfast.construct.compress import Block, with_lines
from ctxfast.construct.represent import Rendering, Role
from ctxfast.construct.schema import CODE_KINDS, Kind, LogEntry
from ctxfast.construct.terms import mentions
from ctxfast.identity import content_identity, normalise_for_identity
from ctxfast.numbered import render_numbered

if TYPE_CHECKING:
    from ctxfast.construct.config import ConstructConfig


@dataclass(frozen=True)
class FillerSettings:
    """Which of a model ranker's picks are dropped as guesses (``ConstructConfig.filler``)."""

    FLAT_NAMES: ClassVar[Mapping[str, str]] = {}

    #: Drop a pick scoring below ``filler_score_below`` unless a block the decision depends
    #: on names it, so the room goes to what the model was sure of. Off keeps every pick.
    drop_filler: bool = True
    #: A pick scoring below this (0.6; the keep threshold is 0.5) is a guess.
    filler_score_below: float = 0.6


ROLE_RANK = {
    r: i
    for i, r in enumerate(
        [
            Role.CHANGE_TARGET,
            Role.INSERTION_POINT,
            Role.REQUIREMENT,
            Role.CRITICAL_DEFINITION,
            Role.LIVE_STATE,
            Role.IMPACT_DIRECT,
            Role.CONFIG_CONSUMER,
            Role.RELATED_TEST,
            Role.RELATED_SYMBOL,
            Role.FILE_OUTLINE,
            Role.IMPACT_WIDER,
            Role.STALE,
        ]
    )
}
_FAILURE = (Kind.ERROR, Kind.TRACEBACK, Kind.TEST_OUTPUT, Kind.TOOL_OUTPUT)


def _pointer(dup: Block, survivor: Block, why: str) -> Block:
    text = f"[{dup.id}: same as {survivor.id} — {why}]"
    return replace(
        dup,
        text=text,
        fallback=text,
        critical=False,
        irreducible=False,
        pointer_to=survivor.id,
        span=None,
    )


def _with_sites(b: Block, donor: Block) -> Block:
    """``b`` (the surviving rendering of a definition) with the call sites a duplicate of
    it knew, shown beside its signature when it is shown as one."""
    dm = donor.item.meta
    own = b.item.meta.site_of is not None
    meta = replace(
        b.item.meta,
        sites=dm.sites,
        site_of=b.item.meta.site_of if own else dm.site_of,
        site_edge=b.item.meta.site_edge if own else dm.site_edge,
    )
    wanted = set(dm.sites)
    pairs = {p[0]: p for p in (*b.fallback_shown, *b.shown, *donor.shown)}
    sig = tuple(sorted({*b.fallback_shown, *(p for n, p in pairs.items() if n in wanted)}))
    out = replace(b, item=replace(b.item, meta=meta), fallback_shown=sig)
    if b.rendering is not Rendering.VERBATIM:
        out = with_lines(out, sig)
    return replace(out, fallback=render_numbered(sig))


def _better(a: Block, b: Block) -> bool:
    # Strongest role first; between equal roles, real code outranks a bare entity name.
    def key(x: Block) -> tuple[int, bool, int]:
        return (ROLE_RANK[x.role], x.item.kind not in CODE_KINDS, x.item.meta.seq)

    return key(a) < key(b)


def _subject(b: Block) -> str:
    m = b.item.meta
    return m.entity or (f"{m.file}:{m.start_line}-{m.end_line}" if m.file else b.item.kind.value)


def _says_the_task(said: str, task: str, cut: bool = False) -> bool:
    """``said`` is ``task`` up to whitespace, or its start when the pool's byte cap ``cut``
    it."""
    said, want = " ".join(said.split()), " ".join(task.split())
    return bool(want) and (said == want or (cut and want.startswith(said)))


def _restates(b: Block, task: str) -> bool:
    """A requirement that only repeats the task (the default plan's obligation and
    acceptance criterion): a criterion equal to the task, or a plan node whose obligation is
    the task and that adds nothing but its target (the target is labelled on its code)."""
    plan = b.item.meta.plan
    if b.item.kind is Kind.ACCEPTANCE_CRITERIA:
        return _says_the_task(b.item.content, task, b.item.meta.truncated)
    if b.item.kind is not Kind.PLAN_NODE or plan is None:
        return False
    extra = plan.preconditions or plan.required_validation
    return not extra and _says_the_task(plan.obligation, task)


def _without_restated_obligation(b: Block, task: str) -> Block:
    """A plan node kept for what it adds to the task, without an obligation that only
    repeats the task: the window states the task once."""
    plan = b.item.meta.plan
    if b.item.kind is not Kind.PLAN_NODE or plan is None:
        return b
    if not _says_the_task(plan.obligation, task):
        return b
    meta = replace(b.item.meta, plan=replace(plan, obligation=""))
    return replace(b, item=replace(b.item, meta=meta))


def _collapse(
    out: list[Block], log: list[LogEntry], groups: dict[str, list[int]], why: str
) -> None:
    """Turn each group of live duplicates into one survivor (the strongest role) and pointers
    to it. The survivor inherits what a duplicate knew that it did not: criticality and the
    call sites of the definition."""
    for members in groups.values():
        live = [i for i in members if out[i].pointer_to is None]
        if len(live) < 2:
            continue
        best = live[0]
        for i in live[1:]:
            if _better(out[i], out[best]):
                best = i
        surv = out[best]
        if any(out[i].critical for i in live) and not surv.critical:
            out[best] = surv = replace(surv, critical=True)
        donor = next((out[i] for i in live if out[i].item.meta.sites), None)
        if donor is not None and not surv.item.meta.sites and surv.is_code:
            out[best] = surv = _with_sites(surv, donor)
        for i in live:
            if i != best:
                note = f"{why} → {surv.id} ({_subject(surv)})"
                log.append(LogEntry("dedup", out[i].id, "duplicate", note, _subject(out[i])))
                out[i] = _pointer(out[i], surv, why)


def _by_symbol(out: Sequence[Block]) -> dict[str, list[int]]:
    """Code and fault entities grouped by the definition they show: its qualified name, or
    its span when it has none (the same definition arrives from recon and from retrieval,
    or as a target and as related code). Blocks of one name whose spans do not meet are
    different definitions of it — Java and C++ overloads, ``@overload`` stubs and their
    implementation, per-platform variants — and stay apart; a block of the name with no
    span (a fault entity) joins the name's first definition."""
    by_symbol: dict[str, list[int]] = {}
    spans: dict[str, list[tuple[str, int, int]]] = {}
    for i, b in enumerate(out):
        m = b.item.meta
        if b.item.kind in CODE_KINDS or b.item.kind is Kind.FAULT_ENTITY:
            if m.entity:
                key = f"sym:{m.entity}"
                if m.file and m.start_line:
                    span = (m.file, m.start_line, m.end_line or m.start_line)
                    seen = spans.setdefault(m.entity, [])
                    k = next((k for k, s in enumerate(seen) if _meet(s, span)), None)
                    if k is None:
                        k = len(seen)
                        seen.append(span)
                    if k:
                        key = f"{key}#{k}"
            elif m.file and m.start_line:
                key = f"span:{m.file}:{m.start_line}-{m.end_line}"
            else:
                continue
            by_symbol.setdefault(key, []).append(i)
    return by_symbol


def _meet(a: tuple[str, int, int], b: tuple[str, int, int]) -> bool:
    """Two ``(file, first, last)`` spans share a file and a line."""
    return a[0] == b[0] and a[1] <= b[2] and b[1] <= a[2]


def _fold_failures(out: list[Block], log: list[LogEntry]) -> None:
    """Point a failure output at the newest other one that contains it (an error repeated
    in the test output): the failure is shown once, and the host inherits criticality."""
    failures = [i for i, b in enumerate(out) if b.item.kind in _FAILURE and b.pointer_to is None]
    norm = {i: normalise_for_identity(out[i].item.content) for i in failures}
    for i in failures:
        if out[i].pointer_to is not None or not norm[i]:
            continue
        hosts = [
            j
            for j in failures
            if j != i
            and out[j].pointer_to is None
            and len(norm[j]) > len(norm[i])
            and norm[i] in norm[j]
        ]
        if hosts:
            host = max(hosts, key=lambda j: out[j].item.meta.seq)
            if out[i].critical and not out[host].critical:
                out[host] = replace(out[host], critical=True)
            log.append(
                LogEntry(
                    "dedup",
                    out[i].id,
                    "duplicate",
                    f"same failure reported twice → {out[host].id}",
                    out[i].item.kind.value,
                )
            )
            out[i] = _pointer(out[i], out[host], "same failure reported twice")


def _drop_filler(out: list[Block], log: list[LogEntry], config: ConstructConfig) -> list[Block]:
    """``out`` without the filler: a ranker's low-scoring pick that no critical block
    mentions costs tokens without serving the task."""
    critical_text = "\n".join(b.text for b in out if b.critical)
    kept: list[Block] = []
    for b in out:
        filler = (
            b.pointer_to is None
            and b.driver == "rank:score"  # a model's mid-relevance pick
            and b.score is not None
            and b.score < config.filler.filler_score_below
            and not (b.item.meta.entity and mentions(critical_text, b.item.meta.entity))
        )
        if filler:
            log.append(
                LogEntry(
                    "dedup",
                    b.id,
                    "dropped",
                    f"mid-relevance filler (score {b.score:.2f})",
                    _subject(b),
                )
            )
        else:
            kept.append(b)
    return kept


def _label_consumers(out: list[Block]) -> set[str | None]:
    """Label each consumer shown as code with what it consumes (the head of its impact
    edge), so the edge itself can go; returns the entities shown as code."""
    code_at = {b.item.meta.entity: i for i, b in enumerate(out) if b.is_code and not b.pointer_to}
    for b in out:
        m = b.item.meta
        at = code_at.get(m.entity) if m.edge_type is not None and not b.is_code else None
        if at is not None and out[at].item.meta.site_of is None and m.edge_head:
            item = out[at].item
            out[at] = replace(
                out[at],
                item=replace(
                    item, meta=replace(item.meta, site_of=m.edge_head, site_edge=m.edge_type)
                ),
            )
    return set(code_at)


def dedup(
    blocks: Sequence[Block], config: ConstructConfig, task: str = ""
) -> tuple[list[Block], list[LogEntry]]:
    """Collapse the duplicate classes to one rendering each; drop filler."""
    out = list(blocks)
    log: list[LogEntry] = []
    idents = content_identity([b.item.content for b in out])

    # Class 1 + 3: same definition / same symbol (via 03 and 04, or target + related role).
    _collapse(out, log, _by_symbol(out), "same definition/symbol")

    # Class 2 + 4 (and any other exact repeat): same normalised content.
    by_content: dict[str, list[int]] = {}
    for i, b in enumerate(out):
        if b.item.content.strip():
            by_content.setdefault(idents[i], []).append(i)
    _collapse(out, log, by_content, "same normalised content")

    # Class 2: a failure line contained in another failure output (error also in test output).
    _fold_failures(out, log)

    if config.filler.drop_filler:
        out = _drop_filler(out, log, config)
    code_entities = _label_consumers(out)
    final: list[Block] = []
    for b in out:
        if b.pointer_to is not None:
            continue
        if _restates(b, task):
            log.append(LogEntry("dedup", b.id, "duplicate", "restates the task", _subject(b)))
            continue
        b = _without_restated_obligation(b, task)
        m = b.item.meta
        if m.edge_type is not None and not b.is_code and m.entity in code_entities:
            log.append(
                LogEntry("dedup", b.id, "duplicate", "the consumer's code is shown", _subject(b))
            )
            continue
        final.append(b)
    return final, log


__all__ = ["ROLE_RANK", "dedup"]
