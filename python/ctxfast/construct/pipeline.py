"""The construction pipeline: a → b → (ranking) → c → d → e → f → g → one ``DecisionContext``.

Everything is deterministic except the single optional ranking call, which fires only on a
non-empty residue of at most ``residue_cap`` items with a ranker configured. Every admission,
rejection and representation decision lands in ``admission_log`` with its driver.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import replace

from ctxfast.construct.budget import run_budget
from ctxfast.construct.compress import compress
from ctxfast.construct.config import ConstructConfig
from ctxfast.construct.dedup import dedup
from ctxfast.construct.evidence_ranker import EvidenceRanker, reference_score
from ctxfast.construct.gaps import Source
from ctxfast.construct.pool import PoolInputs, build_pool
from ctxfast.construct.ranker import Ranker, rank_residue
from ctxfast.construct.relevance_gate import fold_residue, run_gate
from ctxfast.construct.render import TASK_ID
from ctxfast.construct.represent import represent
from ctxfast.construct.schema import (
    CodeCandidate,
    DecisionContext,
    EvidenceItem,
    ImpactEdge,
    Kind,
    LogEntry,
    PlanNode,
)
from ctxfast.construct.task_cap import cap_task
from ctxfast.construct.terms import decision_terms
from ctxfast.errors import InvalidArgumentError


def default_plan(
    task: str, candidates: Sequence[CodeCandidate], localization: Sequence[str]
) -> PlanNode:
    """The working default when no planner ran: target the first localized entity (else the
    top-scored candidate definition); the obligation and acceptance criterion are the task."""
    target = localization[0] if localization else None
    if target is None:
        named = [c for c in candidates if c.qualname]
        if named:
            target = max(named, key=lambda c: c.score).qualname
    return PlanNode(
        node_id="default", obligation=task, target_entity=target, acceptance_criteria=(task,)
    )


def _freshest_failure(items: Sequence[EvidenceItem], admitted: set[str]) -> str | None:
    """The freshest failing output: the last test output, else traceback, else error."""
    for kind in (Kind.TEST_OUTPUT, Kind.TRACEBACK, Kind.ERROR, Kind.TOOL_OUTPUT):
        cands = [it for it in items if it.kind is kind and it.id in admitted]
        if cands:
            return max(cands, key=lambda it: it.meta.seq).id
    return None


def _task_section(task: str, config: ConstructConfig) -> tuple[str, list[LogEntry]]:
    """The task as the window shows it, cut to ``config.task_tokens`` (retrieval, the gate
    and dedup read all of it), with the log entry of the cut."""
    shown, cut = cap_task(task, config.task_tokens, config.encoding)
    if shown == task:
        return task, []
    why = f"over {config.task_tokens} tokens: {cut} lines cut (head, last frames and tail kept)"
    return shown, [LogEntry("construct", TASK_ID, "task_cut", why, "task")]


def construct(
    task: str,
    *,
    candidates: Sequence[CodeCandidate] = (),
    plan: PlanNode | None = None,
    impact: Sequence[ImpactEdge] = (),
    localization: Sequence[str] = (),
    patch: str | None = None,
    errors: Sequence[str] = (),
    tracebacks: Sequence[str] = (),
    tool_outputs: Sequence[str] = (),
    test_outputs: Sequence[str] = (),
    ceiling: int | None = None,
    ranker: Ranker | None = None,
    config: ConstructConfig | None = None,
    source: Source | None = None,
) -> DecisionContext:
    """Build the single observation for one decision; ``token_count <= ceiling`` always.

    ``source`` returns the current lines of a repository file; with it the window may close
    short gaps between the lines it shows (``ConstructConfig.budget.gap_lines``)."""
    config = config or ConstructConfig()
    ceiling = config.ceiling if ceiling is None else ceiling
    if ceiling < 0:
        raise InvalidArgumentError(f"ceiling must be non-negative, got {ceiling}")
    if not isinstance(task, str):
        raise InvalidArgumentError("task must be a string")
    log: list[LogEntry] = []
    timings: dict[str, float] = {}
    clock = time.perf_counter()

    def lap(stage: str) -> None:
        nonlocal clock
        now = time.perf_counter()
        timings[stage] = timings.get(stage, 0.0) + (now - clock) * 1000
        clock = now

    if plan is None:
        plan = default_plan(task, candidates, localization)
        log.append(
            LogEntry(
                "defaults",
                plan.node_id,
                "default_plan",
                f"target={plan.target_entity}; acceptance = task text",
            )
        )

    inputs = PoolInputs(
        task=task,
        plan=plan,
        candidates=tuple(candidates),
        impact=tuple(impact),
        localization=tuple(localization),
        patch=patch,
        errors=tuple(errors),
        tracebacks=tuple(tracebacks),
        tool_outputs=tuple(tool_outputs),
        test_outputs=tuple(test_outputs),
    )
    pool = build_pool(inputs, config)  # (a)
    log.extend(pool.log)
    lap("pool")
    gate = run_gate(pool, plan, config, extra_terms=[task])  # (b)
    log.extend(gate.log)
    lap("gate")
    by_id = pool.by_id()
    drivers = dict(gate.drivers)
    admitted_ids = list(gate.admitted)
    residue = [by_id[i] for i in gate.residue]
    scores: dict[str, float] = {}
    calls = 0
    chosen = ranker
    if chosen is None and config.ranking.evidence_ranker and residue:
        chosen = EvidenceRanker(residue, reference_score(pool.items, pool.change_set))
    by_model = chosen is not None and getattr(chosen, "calls_model", True)
    if len(residue) > config.ranking.residue_cap and not isinstance(chosen, EvidenceRanker):
        # The ranking step caps what a model is shown: an oversize residue is folded, never ranked.
        folded, flog = fold_residue(residue, plan, config)
        log.extend(flog)
        for i in folded:
            drivers[i] = "fold:obligation_bucket"
        admitted_ids += folded
    elif residue:
        # The cap bounds a model's prompt; the evidence ranker reads none, so it ranks all.
        rcfg = (
            config
            if by_model
            else replace(
                config,
                ranking=replace(
                    config.ranking, residue_cap=max(config.ranking.residue_cap, len(residue))
                ),
            )
        )
        outcome = rank_residue(residue, plan, chosen, rcfg)  # the one L entry
        calls = outcome.calls if by_model else 0  # a model call, or none
        log.extend(outcome.log)
        for i, s in outcome.admitted.items():
            drivers[i] = "rank:score" if by_model else "rank:evidence"
            scores[i] = s
        admitted_ids += list(outcome.admitted)
    room = max(0, config.gate.admitted_cap - len(gate.admitted))
    extra = admitted_ids[len(gate.admitted) :]
    for i in extra[room:]:
        log.append(LogEntry("gate", i, "rejected", f"admitted cap {config.gate.admitted_cap}"))
        drivers.pop(i, None)
    keep = set(admitted_ids[: len(gate.admitted) + room])
    admitted = [it for it in pool.items if it.id in keep]  # pool order, stable
    lap("rank")

    assigned, rlog = represent(admitted, drivers, plan, config, scores)  # (c)
    log.extend(rlog)
    lap("represent")
    terms = decision_terms(
        [
            plan.obligation,
            plan.target_entity,
            *plan.acceptance_criteria,
            *plan.required_validation,
            task,
        ],
        config.min_term_len,
    )
    freshest = _freshest_failure(admitted, keep)
    blocks, clog = compress(assigned, plan, terms, config, freshest)  # (d)
    log.extend(clog)
    lap("compress")
    blocks, dlog = dedup(blocks, config, task)  # (e)
    log.extend(dlog)
    lap("dedup")
    if freshest is not None and not any(b.id == freshest for b in blocks):
        freshest = None
    shown_task, tlog = _task_section(task, config)
    log.extend(tlog)
    result = run_budget(
        shown_task, blocks, config, ceiling, freshest, source, plan.target_entity
    )  # (f) + (g)
    log.extend(result.fill_log)
    placed = {i for e in result.entries for i in e.item_id.split("+")}
    left_out = {e.item_id for e in result.fill_log if e.decision == "left_out"}
    kept = {b.id for b in result.kept}
    for b in blocks:
        if b.id not in placed and b.id not in left_out:
            m = b.item.meta
            what = m.entity or (f"{m.file}:{m.start_line}-{m.end_line}" if m.file else "")
            if b.id in kept:  # its lines are shown by a stronger block of the same file
                log.append(LogEntry("budget", b.id, "merged", "lines shown by another block", what))
            else:
                log.append(LogEntry("budget", b.id, "evicted", "eviction ladder", what))
    lap("order_budget")
    return DecisionContext(
        task=task,
        acceptance_criteria=tuple(plan.acceptance_criteria),
        current_obligation=plan.obligation,
        window=result.entries,
        text=result.text,
        token_count=result.token_count,
        ceiling=ceiling,
        budget_log=result.log,
        admission_log=tuple(log),
        stable_core_only=result.stable_core_only,
        model_calls=calls,
        flags=result.flags,
        timings_ms={k: round(v, 3) for k, v in timings.items()},
    )


def stuff_everything(
    task: str,
    *,
    candidates: Sequence[CodeCandidate] = (),
    plan: PlanNode | None = None,
    impact: Sequence[ImpactEdge] = (),
    localization: Sequence[str] = (),
    patch: str | None = None,
    errors: Sequence[str] = (),
    tracebacks: Sequence[str] = (),
    tool_outputs: Sequence[str] = (),
    test_outputs: Sequence[str] = (),
    ceiling: int | None = None,
    config: ConstructConfig | None = None,
) -> tuple[str, int]:
    """The stuff-everything baseline: the whole candidate pool concatenated, cut at the window.

    No gate, representation, dedup or ordering — what a harness without a constructor sends.
    Returns ``(text, token_count)``.
    """
    from ctxfast.tokens import count_tokens, truncate_to_tokens

    config = config or ConstructConfig()
    ceiling = config.ceiling if ceiling is None else ceiling
    plan = plan or default_plan(task, candidates, localization)
    parts = [task, plan.obligation, *plan.acceptance_criteria]
    parts += [f"{e.tail} --{e.type.value}--> {e.head}" for e in impact]
    parts += list(localization)
    parts += [f"# {c.file}:{c.start_line}-{c.end_line}\n{c.text}" for c in candidates]
    if patch:
        parts.append(patch)
    parts += [*errors, *tracebacks, *tool_outputs, *test_outputs]
    text = truncate_to_tokens("\n\n".join(parts), ceiling, encoding=config.encoding, cut="line")
    return text, count_tokens(text, config.encoding)


__all__ = ["construct", "default_plan", "stuff_everything"]
