"""Stage (g): token budgeting — three tiers, a hard ceiling, an eviction ladder.

The window is measured on its exact rendered text with ``ctxfast.tokens``. Over the ceiling,
the ladder runs 1 → 2 → 3 and re-measures after every single change: (1) transient state —
older outputs become pointers, the freshest failure is tail-cut to its share; (2) working set
— supporting material goes, verbatim bodies fall back to signatures, the change target
shrinks to its best line window; (3) stable core — supporting acceptance detail is trimmed,
never the task or the obligation. If even that does not fit, only the stable core is emitted
and flagged. An over-ceiling window is never returned. The ladder's rungs are in
:mod:`ctxfast.construct.ladder`.

Before the ladder, the window *fills*: the ranked residue (next-best evidence) is added in
score order — as its full body when that still fits ``target_tokens``, else as its signature,
else not at all — so a standalone window uses its budget on purpose and stops at the target.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, ClassVar

from ctxfast.construct.compress import Block, with_lines
from ctxfast.construct.gaps import Source, close_gaps
from ctxfast.construct.ladder import run_ladder
from ctxfast.construct.measure import Measure
from ctxfast.construct.order import middle_third_violations
from ctxfast.construct.render import Layout, lay_out, task_text
from ctxfast.construct.represent import Rendering, Role
from ctxfast.construct.schema import Kind, LogEntry, WindowEntry
from ctxfast.errors import InvalidArgumentError
from ctxfast.numbered import render_numbered
from ctxfast.tokens import truncate_to_tokens

if TYPE_CHECKING:
    from ctxfast.construct.config import ConstructConfig


@dataclass(frozen=True)
class BudgetSettings:
    """How the window is fitted to its ceiling and filled toward its target
    (``ConstructConfig.budget``)."""

    FLAT_NAMES: ClassVar[Mapping[str, str]] = {}

    #: The share of the ceiling each tier is compressed to when the window is over it: the
    #: stable core (task, plan) 0.15, the working set (code) 0.60, transient outputs 0.25.
    #: The code gets most: it is what the window is for.
    tier_shares: tuple[tuple[str, float], ...] = (
        ("stable_core", 0.15),
        ("working_set", 0.60),
        ("transient", 0.25),
    )
    #: The last step, when only the stable core is left and the window is still over the
    #: ceiling: each acceptance criterion is cut to this many characters (200) before the
    #: criteria after the first are dropped.
    acceptance_trim_chars: int = 200
    #: The room the fill leaves closes gaps of at most this many unshown lines (32) next to
    #: lines shown in full, so a cut function is not shown in pieces. 0: off.
    gap_lines: int = 32

    def __post_init__(self) -> None:
        if self.gap_lines < 0:
            raise InvalidArgumentError("gap_lines must be non-negative")
        shares = dict(self.tier_shares)
        if set(shares) != {"stable_core", "working_set", "transient"}:
            raise InvalidArgumentError("tier_shares must name stable_core, working_set, transient")
        if abs(sum(shares.values()) - 1.0) > 1e-9 or min(shares.values()) < 0:
            raise InvalidArgumentError("tier_shares must be non-negative and sum to 1")

    def share(self, tier: str) -> float:
        """The configured share of the ceiling for ``tier``."""
        return dict(self.tier_shares)[tier]


@dataclass(frozen=True)
class BudgetResult:
    entries: tuple[WindowEntry, ...]
    text: str
    token_count: int
    log: tuple[str, ...]
    stable_core_only: bool
    flags: tuple[str, ...]
    fill_log: tuple[LogEntry, ...] = ()
    #: Every block the final window kept (some show no line of their own: a stronger block
    #: of the same file shows them).
    kept: tuple[Block, ...] = ()


def fill_size(config: ConstructConfig, ceiling: int) -> int:
    """The size the window fills toward: ``target_tokens``, or the ceiling when that is
    smaller. Every size derived from the target (the whole files ``compose`` chooses, the
    fill) then scales with a small ceiling instead of being chosen for a window the ceiling
    cannot hold and cut back by the ladder (2,000 tokens left a 761-token window)."""
    return min(config.target_tokens, ceiling)


def is_fill(b: Block) -> bool:
    """Residue the ranking admitted: next-best evidence the window adds only while it has
    room under its target size."""
    return b.driver.startswith("rank:") and b.pointer_to is None


def fill(
    task: str,
    blocks: Sequence[Block],
    config: ConstructConfig,
    target: int,
    freshest: str | None,
    m: Measure,
    source: Source | None = None,
) -> tuple[list[Block], list[LogEntry]]:
    """Grow the window toward ``target`` tokens with the best evidence first.

    The gate's admissions always stay; those shown as signatures that retrieval also found
    may grow to their full body. Ranked residue enters only while there is room: as its full
    body when that fits, else as its signature, else not at all. Candidates are taken in
    retrieval-score order (ties by pool order). Sizes are the blocks' own token counts on
    top of an exact count of the base window, so the target is approached closely; the
    ceiling is enforced exactly afterwards. With ``source``, the room the residue did not
    take closes short gaps in a file's listing (:mod:`ctxfast.construct.gaps`)."""
    log: list[LogEntry] = []
    state = [b for b in blocks if not is_fill(b)]
    if target <= 0:
        return state, log
    growable = [b for b in state if b.expansion and b.rendering is Rendering.SIGNATURE]
    extra = [b for b in blocks if is_fill(b)]
    order = sorted(
        [*growable, *extra],
        key=lambda b: (-(b.item.meta.score or 0.0), -(b.score or 0.0), b.item.meta.seq),
    )
    used = m.exact(lay_out(task, state, freshest).text)
    shown = {(b.item.meta.file, n) for b in state for n, _ in b.shown}
    chosen: dict[str, Block] = {}
    for b in order:
        options = [with_lines(b, b.expansion, rendering=Rendering.VERBATIM)] if b.expansion else []
        base = 0 if is_fill(b) else m.sizes([b.text])[0]  # a kept block is already counted
        if is_fill(b):
            options.append(b)
        subject = b.item.meta.entity or b.item.meta.file or b.id
        for opt in options:
            cost = _marginal(opt, shown, m, base) + (24 if is_fill(b) else 0)
            if used + cost <= target:
                used += cost
                shown |= {(opt.item.meta.file, n) for n, _ in opt.shown}
                chosen[b.id] = opt
                how = "full body" if opt.rendering is Rendering.VERBATIM else "signature"
                log.append(LogEntry("fill", b.id, "admitted", f"{how}, ~{used} tokens", subject))
                break
        else:
            if is_fill(b):
                why = f"beyond the {target}-token target"
                log.append(LogEntry("fill", b.id, "left_out", why, subject))
    out = [chosen.get(b.id, b) for b in blocks if not is_fill(b) or b.id in chosen]
    if source is not None and config.budget.gap_lines > 0:
        out, _, glog = close_gaps(out, source, target - used, config.budget.gap_lines, m.sizes)
        log += glog
    return out, log


def _marginal(opt: Block, shown: set[tuple[str | None, int]], m: Measure, base: int) -> int:
    """What showing ``opt`` adds to the window: code blocks of one file are laid out as one
    listing, so only the lines it does not already show cost anything (measured as those
    lines alone); other blocks cost their own size less ``base``, what they replace."""
    file = opt.item.meta.file
    new = tuple(p for p in opt.shown if (file, p[0]) not in shown)
    if len(new) == len(opt.shown):  # nothing shown yet (or not code): its own size
        return m.sizes([opt.text])[0] - base
    return m.sizes([render_numbered(new)])[0] if new else 0


def run_budget(
    task: str,
    blocks: Sequence[Block],
    config: ConstructConfig,
    ceiling: int,
    freshest: str | None,
    source: Source | None = None,
    first: str | None = None,
) -> BudgetResult:
    """Fill toward the target, then fit under ``ceiling`` by the eviction ladder; never
    exceed it. ``first`` is the change target the evidence ranks first: the ladder reduces
    it only after every other block of the working set."""
    m = Measure(config, ceiling)
    target = fill_size(config, ceiling)
    state, fill_log = fill(task, blocks, config, target, freshest, m, source)
    log: list[str] = []
    flags: list[str] = []

    def measure() -> tuple[bool, int | None]:
        layout = lay_out(task, state, freshest)
        parts = [e.text for e in layout.entries]
        text = layout.text
        estimate = sum(m.sizes(parts)) + len(parts)
        if estimate - 4 * len(parts) > ceiling:
            return False, None  # certainly over: skip the exact count
        n = m.exact(text)
        return n <= ceiling, n

    ok, n = measure()
    log.append(
        f"measured {n if n is not None else '>' + str(ceiling)} tokens against ceiling {ceiling}"
    )

    def step(label: str, fn: Callable[[], bool]) -> bool:
        """Apply one change; re-measure; True once the window fits."""
        if not fn():
            return False
        fits, count = measure()
        log.append(f"{label} → {count if count is not None else 'still over'}")
        return fits

    def set_block(i: int, **changes: object) -> None:
        state[i] = replace(state[i], **changes)  # type: ignore[arg-type]

    def index(bid: str) -> int:
        return next(i for i, b in enumerate(state) if b.id == bid)

    if not ok:
        ok = run_ladder(task, state, config, ceiling, freshest, m, step, set_block, index, first)
    stable_only = False
    if not ok:
        stable_only = True
        flags.append("stable_core_only")
        core = [b for b in state if b.role is Role.REQUIREMENT]
        # The task goal and current obligation first; acceptance detail only if it fits.
        plan = [b for b in core if b.item.kind is Kind.PLAN_NODE]
        crit = [b for b in core if b.item.kind is not Kind.PLAN_NODE]
        state[:] = plan + crit
        fits, count = measure()
        while not fits and len(state) > len(plan):
            state.pop()
            fits, count = measure()
        log.append(f"ladder exhausted: emitting the stable core only ({count} tokens)")
    layout: Layout = lay_out(task, state, freshest)
    text = layout.text
    n = m.exact(text)
    entries: list[WindowEntry] = list(layout.entries)
    if n > ceiling:
        flags.append("core_truncated")
        text = truncate_to_tokens(text, ceiling, encoding=config.encoding, cut="word")
        head = task_text("")
        kept = text[len(head) :] if text.startswith(head) else ""
        if not kept.replace("[…]", "").strip() and ceiling > 0:
            # Cutting at words left no task at all (one huge word): keep its head instead,
            # since a window without its task is worth nothing.
            text = truncate_to_tokens(layout.text, ceiling, encoding=config.encoding, cut="token")
        n = m.exact(text)
        entries = [e for e in entries if e.text in text]
        log.append(f"stable core alone exceeds the ceiling: truncated to {n} tokens")
    spans, pos = [], 0
    sizes = m.sizes([e.text for e in entries])
    for e, s in zip(entries, sizes, strict=True):
        spans.append((pos, pos + s, e.critical))
        pos += s + 1
    buried = middle_third_violations(spans)
    if buried:
        flags.append("critical_in_middle:" + ",".join(entries[i].item_id for i in buried))
    irreducible = [b.id for b in layout.blocks if b.irreducible]
    if irreducible:
        log.append("irreducible (kept, >floor): " + ", ".join(irreducible))
    log.append(f"final {n} tokens ≤ ceiling {ceiling}")
    return BudgetResult(
        tuple(entries),
        text,
        n,
        tuple(log),
        stable_only,
        tuple(flags),
        tuple(fill_log),
        tuple(state),
    )


__all__ = ["BudgetResult", "fill", "fill_size", "is_fill", "run_budget"]
