"""``ctxfast.compose``: one repository + one task → one ``DecisionContext`` (the main job).

Wires reconnaissance (03, the code graph), retrieval (04, ``Repository.retrieve``) and the
construction pipeline (08) together. Components 05–07 are other systems: their outputs are
accepted as typed inputs, and when the caller gives none ``compose`` derives working defaults
(the change targets: :mod:`ctxfast.construct.targets`; what they affect:
:mod:`ctxfast.construct.impact`; the lines around them: :mod:`ctxfast.construct.context_lines`;
all set by :class:`~ctxfast.construct.defaults.DefaultsConfig`) and names each default it used
in ``admission_log`` so a reader of the window can tell derived evidence from supplied evidence.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ctxfast.construct.budget import fill_size
from ctxfast.construct.class_view import class_view
from ctxfast.construct.compress import CompressSettings
from ctxfast.construct.config import ConstructConfig
from ctxfast.construct.context_lines import file_outline, with_context, with_margins
from ctxfast.construct.defaults import DefaultsConfig
from ctxfast.construct.gaps import Source
from ctxfast.construct.impact import derive_impact
from ctxfast.construct.pipeline import construct, default_plan
from ctxfast.construct.ranker import Ranker
from ctxfast.construct.schema import (
    CodeCandidate,
    DecisionContext,
    ImpactEdge,
    ImpactType,
    LogEntry,
    Origin,
    PlanNode,
)
from ctxfast.construct.source_reader import SourceReader
from ctxfast.construct.targets import (
    best_file_fallback,
    confident_localization,
    target_sources,
    window_candidates,
)
from ctxfast.construct.whole_files import (
    spare_files,
    with_whole_files,
    with_whole_targets,
)
from ctxfast.errors import InvalidArgumentError
from ctxfast.repository import Repository
from ctxfast.text import is_test_path
from ctxfast.tokens import count_tokens, fits

RETRIEVAL_TOKENS = 4000  # the retrieval design's cap on the slice handed to construction


def to_code_candidates(result: Any) -> tuple[list[CodeCandidate], list[LogEntry]]:
    """Retrieval candidates → ``04`` code candidates, rank order kept.

    The candidate's full source span is carried (construction does its own slicing against
    the decision's terms); provenance lists the recall sources that found it. A candidate
    with an impossible span is dropped and logged rather than failing the whole compose.
    """
    out: list[CodeCandidate] = []
    log: list[LogEntry] = []
    for c in result.candidates:
        where = f"{c.file}:{c.start_line}-{c.end_line}"
        if c.start_line < 1 or c.end_line < c.start_line:
            log.append(LogEntry("compose", c.qualname or where, "dropped", "invalid span"))
            continue
        sources = "; ".join(c.provenance) or "retrieval"
        out.append(
            CodeCandidate(
                qualname=c.qualname,
                kind=c.kind,
                file=c.file,
                start_line=c.start_line,
                end_line=c.end_line,
                score=float(c.score),
                signature=c.signature or None,
                text=c.text,
                provenance=f"04: {sources}",
                origin=Origin.RETRIEVAL,
            )
        )
    return out, log


def _retrieval_error(
    errors: Sequence[str], tracebacks: Sequence[str], test_outputs: Sequence[str]
) -> str | None:
    """The error text retrieval anchors on: every error and traceback, else the freshest
    test output (a failing test's output names the failing frames too)."""
    parts = [*errors, *tracebacks]
    if not parts and test_outputs:
        parts = [test_outputs[-1]]
    text = "\n\n".join(p for p in parts if p.strip())
    return text or None


@dataclass
class ComposeInputs:
    """Everything ``construct`` receives for one compose call, defaults already derived.

    Exposed so a caller (or a benchmark) can feed the identical inputs to another
    constructor, e.g. the :func:`~ctxfast.construct.pipeline.stuff_everything` baseline.
    """

    candidates: list[CodeCandidate]
    plan: PlanNode
    impact: list[ImpactEdge]
    localization: tuple[str, ...]
    log: list[LogEntry] = field(default_factory=list)
    timings_ms: dict[str, float] = field(default_factory=dict)
    #: The repository's lines of a file, as these candidates were read (``construct``'s
    #: ``source``: it may close short gaps between the lines the window shows).
    source: Source | None = None


def prepare(
    repo: Repository,
    task: str,
    *,
    plan: PlanNode | None = None,
    impact: Sequence[ImpactEdge] | None = None,
    localization: Sequence[str] | None = None,
    errors: Sequence[str] = (),
    tracebacks: Sequence[str] = (),
    test_outputs: Sequence[str] = (),
    defaults: DefaultsConfig | None = None,
    retrieval_config: Any = None,
    refresh: bool = True,
    target_tokens: int = 0,
    large_item_lines: int = CompressSettings.large_item_lines,
    encoding: str = ConstructConfig.encoding,
) -> ComposeInputs:
    """Refresh the index (unless ``refresh=False``), retrieve, and derive the defaults the
    caller did not supply. ``target_tokens`` is the size the window will fill toward: a
    larger window draws on more retrieved candidates. A class longer than
    ``large_item_lines`` (where construction would cut it to one window of lines) is shown
    as a view of its members."""
    if not isinstance(repo, Repository):
        raise InvalidArgumentError("repo must be a ctxfast.Repository")
    if not isinstance(task, str) or not task.strip():
        raise InvalidArgumentError("task must be a non-empty string")
    dcfg = defaults or DefaultsConfig()
    timings: dict[str, float] = {}
    clock = time.perf_counter()

    def lap(stage: str) -> None:
        nonlocal clock
        now = time.perf_counter()
        timings[stage] = round((now - clock) * 1000, 3)
        clock = now

    repo.ensure_index(refresh)
    lap("index")
    result = repo.retrieve(
        task,
        error=_retrieval_error(errors, tracebacks, test_outputs),
        max_tokens=RETRIEVAL_TOKENS,
        config=_retrieval_settings(retrieval_config, dcfg, target_tokens),
        refresh=False,
    )
    candidates, log = to_code_candidates(result)
    lap("retrieve")
    reader = SourceReader(repo.root)
    # Only definitions count: the best file's module header alone (imports, constants) is
    # what the rank rules add to any ranking, and the gate finds nothing in it to admit.
    stand_in = (
        None
        if any(c.qualname for c in candidates) or localization is not None
        else best_file_fallback(repo.graph, reader, result.ranked_files())
    )
    if stand_in is not None:
        candidates = [stand_in]
        log.append(
            LogEntry(
                "defaults",
                stand_in.qualname or stand_in.file,
                "best_file_fallback",
                "no retrieved definition: the best-ranked file stands in",
                stand_in.file,
            )
        )
    timings.update({f"retrieve.{k}": v for k, v in getattr(result, "timings_ms", {}).items()})

    if localization is None:
        loc = confident_localization(candidates, dcfg)
        if loc:
            rule = (
                f"within {dcfg.targets.localization_margin:.0%} of the best retrieval score"
                if dcfg.targets.confidence_localization
                else "fixed count"
            )
            log.append(
                LogEntry(
                    "defaults",
                    ",".join(loc),
                    "default_localization",
                    f"top {len(loc)} retrieved definitions ({rule}) stand in for the fault "
                    "entities",
                    ", ".join(loc),
                )
            )
    else:
        loc = tuple(localization)
    if plan is None:
        plan = default_plan(task, candidates, loc)
        source = "first localized entity" if localization else "top retrieved definition"
        log.append(
            LogEntry(
                "defaults",
                plan.node_id,
                "default_plan",
                f"target={plan.target_entity} ({source}); acceptance = task text",
            )
        )
    heads = list(dict.fromkeys(h for h in (plan.target_entity, *loc) if h))
    known = {c.qualname for c in candidates if c.qualname}
    graph = repo.graph
    targets = target_sources(graph, repo.root, heads, known, dcfg)
    candidates += targets.candidates
    log += targets.log
    change = set(heads)
    candidates = [with_margins(reader, c, dcfg) for c in candidates]
    viewed = [class_view(graph, reader, c, task, dcfg, large_item_lines) for c in candidates]
    log += [
        LogEntry(
            "defaults",
            c.qualname or c.file,
            "class_view",
            f"{len(v.lines or ())} of {c.end_line - c.start_line + 1} lines: header, "
            "constructor and the members scoring best for the task",
            f"{c.file}:{c.start_line}-{c.end_line}",
        )
        for c, v in zip(candidates, viewed, strict=True)
        if v is not c
    ]
    candidates = viewed
    candidates = [
        with_context(graph, reader, c, dcfg) if c.qualname in change else c for c in candidates
    ]

    def within(text: str, limit: int) -> int | None:
        """``text``'s tokens when at most ``limit`` (a huge file costs no full count)."""
        return count_tokens(text, encoding) if fits(text, limit, encoding) else None

    ranked = result.ranked_files()
    # A caller's localization is theirs: no guessed files become change targets beside it.
    candidates, whole_log, used = with_whole_files(
        reader.lines,
        candidates,
        heads,
        ranked,
        dcfg.whole_files,
        target_tokens,
        within,
        guesses=localization is None,
    )
    log += whole_log
    head_set = set(heads)
    loc = (*loc, *(e.item_id for e in whole_log if e.item_id not in head_set))
    candidates, target_log = with_whole_targets(
        reader.lines,
        candidates,
        heads,
        ranked,
        dcfg.whole_files,
        target_tokens,
        within,
        large_item_lines,
        used,
    )
    log += target_log
    candidates += spare_files(
        reader.lines, candidates, ranked, dcfg.whole_files, target_tokens, within
    )
    if dcfg.outlines.enabled:
        whole = {e.subject for e in whole_log}
        candidates += _outlines(graph, reader, result, candidates, change, dcfg, whole)
    if impact is None:
        derived = derive_impact(graph, repo.manifest(), repo.root, heads, known, dcfg)
        edges = derived.edges
        candidates = derived.with_sites(candidates) + derived.candidates
        log += derived.log
        n_called = sum(1 for e in edges if e.type is ImpactType.CALLED_BY)
        log.append(
            LogEntry(
                "defaults",
                ",".join(heads) or "-",
                "default_impact",
                f"{n_called} CalledBy edges from the code graph, "
                f"{len(edges) - n_called} ConfigConsumer edges from config references",
            )
        )
    else:
        edges = list(impact)
    lap("defaults")
    return ComposeInputs(candidates, plan, edges, loc, log, timings, reader.lines)


def _retrieval_settings(given: Any, cfg: DefaultsConfig, target_tokens: int = 0) -> Any:
    """The settings a window's retrieval step runs with: the caller's, and one of the
    window's own where the caller chose none.

    A window is not retrieval's ranked slice, so ``compose`` sets one retrieval setting from
    the window's settings (``cfg``), and no other: ``top_k``,
    :func:`~ctxfast.construct.targets.window_candidates` (``retrieval_candidates``, more for
    a larger ``target_tokens``) instead of retrieval's 20: the window fills its target with
    the next-best candidates, and drawing on more put the file to change in more windows
    (``TargetSettings.retrieval_candidates``; the measurements are in ``benches/README.md``).

    A caller's value is never overridden. In a mapping, every key the caller gives wins (its
    other fields are retrieval's defaults, as in ``repo.retrieve``). A ``RetrievalConfig``
    object is used exactly as given: every field of it counts as the caller's choice, so its
    ``top_k`` (20 unless set) is the number of candidates the window draws on."""
    own: dict[str, Any] = {"top_k": window_candidates(cfg, target_tokens)}
    if given is None:
        return own
    if isinstance(given, dict):
        return {**own, **given}
    return given


def _outlines(
    graph: Any,
    reader: SourceReader,
    result: Any,
    candidates: Sequence[CodeCandidate],
    change: set[str],
    cfg: DefaultsConfig,
    whole: set[str],
) -> list[CodeCandidate]:
    """Skeletons of the files holding a change target and of the best-ranked files, each
    scored like the best candidate of its file so the residue ranking can weigh it (a file
    already shown whole needs none)."""
    best: dict[str, float] = {}
    for c in candidates:
        if c.origin == Origin.RETRIEVAL:
            best[c.file] = max(best.get(c.file, float("-inf")), c.score)
    target_files = [c.file for c in candidates if c.qualname in change]
    ranked = [f for f in result.ranked_files() if f in best and not is_test_path(f)]
    ranked = ranked[: cfg.outlines.files]
    out = []
    for path in dict.fromkeys([*target_files, *ranked]):
        if path in whole:
            continue
        cand = file_outline(graph, reader, path, best.get(path, 0.0), cfg)
        if cand is not None:
            out.append(cand)
    return out


def with_target(cfg: ConstructConfig, target: int | None, ceiling: int) -> ConstructConfig:
    """``cfg`` filling toward ``target`` tokens when one is given. The fill size is the
    caller's only way to a larger window than the default's (a larger ceiling alone only
    bounds it), so a size the ceiling cannot hold is refused rather than silently capped."""
    if target is None:
        return cfg
    if isinstance(target, bool) or not isinstance(target, int) or target <= 0:
        raise InvalidArgumentError(f"target must be a positive number of tokens, got {target!r}")
    if target > ceiling:
        raise InvalidArgumentError(
            f"target ({target} tokens) must not exceed the ceiling ({ceiling} tokens)"
        )
    return replace(cfg, target_tokens=target)


def compose(
    repo: Repository,
    task: str,
    *,
    plan: PlanNode | None = None,
    impact: Sequence[ImpactEdge] | None = None,
    localization: Sequence[str] | None = None,
    patch: str | None = None,
    errors: Sequence[str] = (),
    tracebacks: Sequence[str] = (),
    tool_outputs: Sequence[str] = (),
    test_outputs: Sequence[str] = (),
    ceiling: int | None = None,
    target: int | None = None,
    ranker: Ranker | None = None,
    config: ConstructConfig | None = None,
    defaults: DefaultsConfig | None = None,
    retrieval_config: Any = None,
    refresh: bool = True,
) -> DecisionContext:
    """Build the single budgeted window for the next decision on ``task`` in ``repo``.

    Refreshes the index first (files edited since the last call are re-read, so the window
    shows the code as it is on disk), retrieves the code the task and errors point at,
    derives a plan, impact edges and fault entities for whatever the caller left out (each
    default is named in ``admission_log``), then runs the deterministic construction
    pipeline. The window never exceeds ``ceiling`` tokens (``token_count <= ceiling``).

    Args:
        repo: the repository to read; it is indexed on first use.
        task: what the agent is asked to do (issue text, instruction); must not be empty.
        plan: the plan step this decision serves (its obligation, target definition and
            acceptance criteria). Default: one derived from the task and the best retrieved
            definition.
        impact: edges "changing ``head`` affects ``tail``" (callers, config readers) whose
            tails must be shown. Default: callers and config consumers from the code graph.
        localization: qualified names of the definitions believed to hold the fault.
            Default: the top retrieved definitions.
        patch: the current working diff, shown as the agent's own change.
        errors: error messages seen so far; they steer retrieval and are shown verbatim.
        tracebacks: tracebacks seen so far; their project frames anchor retrieval.
        tool_outputs: other tool results worth showing (freshest last).
        test_outputs: test-run outputs (freshest last); the freshest steers retrieval when
            there is no error or traceback.
        ceiling: the token budget of the whole window (exact count, ``config.encoding``).
            Default: ``config.ceiling`` (24,000).
        target: the size the window fills toward with the next-best evidence, in tokens
            (positive, at most ``ceiling``). Default: ``config.target_tokens`` (8,000), or
            the ceiling when that is smaller.
        ranker: an optional model that orders the few candidates the rules cannot decide;
            ``model_calls`` counts its calls: 0 without one, or when no undecided residue
            (at most ``config.ranking.residue_cap`` items) remains.
        config: every cap, share and threshold of construction (:class:`ConstructConfig`).
        defaults: how the plan, impact and localization defaults are derived
            (:class:`DefaultsConfig`).
        retrieval_config: settings of the retrieval step (a ``RetrievalConfig`` or a mapping
            of its fields). Without one, or where a mapping leaves it out, the window sets
            ``top_k`` from ``defaults``; anything the caller gives is kept (a
            ``RetrievalConfig`` as it is).
        refresh: ``False`` skips the index refresh (for a caller that just refreshed it or
            knows the files did not change).
    """
    given = config or ConstructConfig()
    ceiling = given.ceiling if ceiling is None else ceiling
    cfg = with_target(given, target, ceiling)
    inputs = prepare(
        repo,
        task,
        plan=plan,
        impact=impact,
        localization=localization,
        errors=errors,
        tracebacks=tracebacks,
        test_outputs=test_outputs,
        defaults=defaults,
        retrieval_config=retrieval_config,
        refresh=refresh,
        target_tokens=fill_size(cfg, ceiling),
        large_item_lines=cfg.compress.large_item_lines,
        encoding=cfg.encoding,
    )
    t0 = time.perf_counter()
    ctx = construct(
        task,
        candidates=inputs.candidates,
        plan=inputs.plan,
        impact=inputs.impact,
        localization=inputs.localization,
        patch=patch,
        errors=errors,
        tracebacks=tracebacks,
        tool_outputs=tool_outputs,
        test_outputs=test_outputs,
        ceiling=ceiling,
        ranker=ranker,
        config=cfg,
        source=inputs.source,
    )
    timings = dict(inputs.timings_ms)
    timings["construct"] = round((time.perf_counter() - t0) * 1000, 3)
    timings.update({f"construct.{k}": v for k, v in ctx.timings_ms.items()})
    return replace(ctx, admission_log=(*inputs.log, *ctx.admission_log), timings_ms=timings)


__all__ = [
    "RETRIEVAL_TOKENS",
    "ComposeInputs",
    "compose",
    "prepare",
    "to_code_candidates",
    "with_target",
]
