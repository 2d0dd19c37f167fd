"""The eviction ladder: how a window over its ceiling is shrunk, one change at a time.

Three rungs, in order: (1) transient state — older outputs become pointers, the freshest
failure is cut to its tail; (2) working set — supporting material goes, change targets
narrow to their own lines and then to their best line window, bodies fall back to
signatures, and what still does not fit leaves whole; (3) stable core — only acceptance
detail is trimmed, never the task or the obligation. The caller re-measures after every
change and the ladder stops as soon as the window fits.

It is separate from ``budget``, which fills the window toward its target, runs the ladder
only when the result is over the ceiling, and handles what is left when even the last rung
does not fit. The ladder's settings (``tier_shares``, ``acceptance_trim_chars``) are the
budget's (``BudgetSettings``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from ctxfast.construct.compress import Block, mask_pointer, with_lines
from ctxfast.construct.line_windows import Numbered, own_lines, window_rows
from ctxfast.construct.measure import Measure
from ctxfast.construct.represent import Rendering, Role
from ctxfast.construct.schema import Kind
from ctxfast.construct.terms import decision_terms

if TYPE_CHECKING:
    from ctxfast.construct.config import ConstructConfig


#: ``step(label, change)``: apply one ladder change, re-measure, True once the window fits.
_Step = Callable[[str, Callable[[], bool]], bool]
#: ``set_block(i, **changes)``: replace fields of the block at position ``i`` of the state.
_SetBlock = Callable[..., None]
#: ``index(block_id)``: the block's current position in the state.
_Index = Callable[[str], int]


def run_ladder(
    task: str,
    state: list[Block],
    config: ConstructConfig,
    ceiling: int,
    freshest: str | None,
    m: Measure,
    step: _Step,
    set_block: _SetBlock,
    index: _Index,
    first: str | None = None,
) -> bool:
    """Run the eviction ladder's rungs in order until the window fits (True); False when
    every rung was tried and it still does not."""

    def is_first(b: Block) -> bool:
        """The change target the evidence ranks first: its full body goes last."""
        return first is not None and b.role is Role.CHANGE_TARGET and b.item.meta.entity == first

    return (
        # ---- step 1: transient state ----------------------------------------------------
        _mask_transient(state, config, freshest, step, set_block, index)
        or _cut_freshest(state, config, ceiling, freshest, m, step, set_block, index)
        # ---- step 2: working set by representation --------------------------------------
        or _omit_supporting(state, step, index)
        or _reduce_working_set(task, state, config, step, set_block, index, is_first)
        or _omit_working_set(state, freshest, step, index, is_first)
        # ---- step 3: stable core (supporting acceptance detail only) --------------------
        or _trim_acceptance(state, config, step, set_block, index)
    )


def _mask_transient(
    state: list[Block],
    config: ConstructConfig,
    freshest: str | None,
    step: _Step,
    set_block: _SetBlock,
    index: _Index,
) -> bool:
    """Ladder 1: every transient output but the freshest becomes a pointer, least critical
    and oldest first (an old output is history; the pointer says where it was)."""
    transient = sorted(
        (b for b in state if b.tier == "transient" and b.id != freshest),
        key=lambda b: (b.critical, b.item.meta.seq),
    )
    for b in transient:

        def mask(b: Block = b) -> bool:
            pointer = mask_pointer(b.item, config)
            if b.pointer_to is not None or len(pointer) >= len(b.text):
                return False  # a pointer that saves nothing is not a step
            set_block(
                index(b.id),
                text=pointer,
                fallback="",
                rendering=Rendering.TRUNCATED,
                critical=False,
                irreducible=False,
            )
            return True

        if step(f"ladder 1: masked {b.item.kind.value} {b.id} to a pointer", mask):
            return True
    return False


def _cut_freshest(
    state: list[Block],
    config: ConstructConfig,
    ceiling: int,
    freshest: str | None,
    m: Measure,
    step: _Step,
    set_block: _SetBlock,
    index: _Index,
) -> bool:
    """Ladder 1: the freshest failure over its share of the ceiling keeps only its tail,
    where a failure's cause is reported."""
    if freshest is not None and any(b.id == freshest for b in state):
        share = max(1, int(config.budget.share("transient") * ceiling))
        b = state[index(freshest)]
        lines = b.text.splitlines()
        if m.sizes([b.text])[0] > share and len(lines) > 1:

            def tail() -> bool:
                keep = list(lines)
                while len(keep) > 1 and m.sizes(["\n".join(keep)])[0] > share:
                    keep = keep[max(1, len(keep) // 4) :]
                set_block(
                    index(freshest),
                    text="[… head cut]\n" + "\n".join(keep),
                    rendering=Rendering.TRUNCATED,
                )
                return True

            if step(f"ladder 1: cut freshest failure {freshest} to its tail", tail):
                return True
    return False


def _omit_supporting(state: list[Block], step: _Step, index: _Index) -> bool:
    """Ladder 2: supporting material (not critical, outside the stable core) goes first,
    pointers before content and the newest first."""
    supporting = [b for b in state if not b.critical and b.tier != "stable_core"]
    supporting.sort(key=lambda b: (b.pointer_to is None, -b.item.meta.seq))
    for b in supporting:

        def drop(b: Block = b) -> bool:
            state.pop(index(b.id))
            return True

        if step(f"ladder 2: omitted supporting {b.role.value} {b.id}", drop):
            return True
    return False


def _reduce_working_set(
    task: str,
    state: list[Block],
    config: ConstructConfig,
    step: _Step,
    set_block: _SetBlock,
    index: _Index,
    is_first: Callable[[Block], bool],
) -> bool:
    """Ladder 2: the critical working set shrinks block by block, the first-ranked change
    target, irreducible blocks, change targets and the patch last: a change target narrows
    to the lines it needs (scored on the task's and the requirements' terms, as compression
    scores them), then every block falls back from its full text to its signature."""
    working = [b for b in state if b.critical and b.tier == "working_set"]
    working.sort(
        key=lambda b: (
            is_first(b),
            b.irreducible,
            b.role is Role.CHANGE_TARGET,
            b.item.kind is Kind.PATCH,
            b.item.meta.seq,
        )
    )
    terms = [task, *(b.text for b in state if b.role is Role.REQUIREMENT)]
    for b in working:
        narrows = b.role is Role.CHANGE_TARGET and b.rendering is Rendering.VERBATIM and b.is_code
        if narrows and _narrow_change_target(b, state, config, terms, step, index):
            return True
        cur = state[index(b.id)]
        if cur.fallback and cur.fallback != cur.text:

            def demote(b: Block = cur) -> bool:
                if b.is_code:
                    state[index(b.id)] = with_lines(
                        b, b.fallback_shown, rendering=Rendering.SIGNATURE, irreducible=False
                    )
                else:
                    set_block(
                        index(b.id),
                        text=b.fallback,
                        rendering=Rendering.SIGNATURE,
                        span=None,
                        irreducible=False,
                    )
                return True

            if step(f"ladder 2: {cur.role.value} {cur.id} verbatim → signature", demote):
                return True
    return False


def _narrow_change_target(
    b: Block,
    state: list[Block],
    config: ConstructConfig,
    terms: list[str],
    step: _Step,
    index: _Index,
) -> bool:
    """Ladder 2: a change target shown verbatim narrows to its definition's own lines, then
    to its best line window for the task's and the requirements' terms, halving the window
    each time; the lines naming one of the task's identifiers whole stay, as compression
    keeps them."""
    own = own_lines(b.item, b.shown)
    if len(own) < len(b.shown):

        def to_own(b: Block = b, own: Numbered = own) -> bool:
            state[index(b.id)] = with_lines(b, own)
            return True

        if step(f"ladder 2: change target {b.id} to its definition's own lines", to_own):
            return True
        b = state[index(b.id)]
    window = config.compress.window_lines
    while window >= 4:
        shown = b.shown
        if len(shown) <= window:
            window //= 2
            continue

        def shrink(b: Block = b, window: int = window, shown: Numbered = shown) -> bool:
            texts = [t for _, t in shown]
            rows = window_rows(texts, set(decision_terms(terms)), window, config, head=0)
            state[index(b.id)] = with_lines(b, tuple(shown[i] for i in rows))
            return True

        if step(f"ladder 2: change target {b.id} to its best {window}-line window", shrink):
            return True
        b = state[index(b.id)]
        window //= 2
    return False


def _omit_working_set(
    state: list[Block],
    freshest: str | None,
    step: _Step,
    index: _Index,
    is_first: Callable[[Block], bool],
) -> bool:
    """Ladder 2: what still does not fit leaves whole, the first-ranked change target last,
    then the freshest failure."""
    rest = [b for b in state if b.tier != "stable_core" and b.id != freshest]
    for b in sorted(rest, key=is_first):

        def drop_ws(b: Block = b) -> bool:
            state.pop(index(b.id))
            return True

        if step(f"ladder 2: omitted {b.role.value} {b.id}", drop_ws):
            return True
    if freshest is not None and any(b.id == freshest for b in state):

        def drop_fresh() -> bool:
            state.pop(index(freshest))
            return True

        if step(f"ladder 2: omitted freshest failure {freshest}", drop_fresh):
            return True
    return False


def _trim_acceptance(
    state: list[Block], config: ConstructConfig, step: _Step, set_block: _SetBlock, index: _Index
) -> bool:
    """Ladder 3: in the stable core only acceptance detail gives way: long criteria are
    trimmed, then every criterion but the first goes, last first."""
    criteria = [b for b in state if b.item.kind is Kind.ACCEPTANCE_CRITERIA]
    for b in criteria:
        if len(b.text) > config.budget.acceptance_trim_chars:

            def trim(b: Block = b) -> bool:
                set_block(
                    index(b.id),
                    text=b.text[: config.budget.acceptance_trim_chars] + " […]",
                    rendering=Rendering.TRUNCATED,
                )
                return True

            if step(f"ladder 3: trimmed acceptance detail {b.id}", trim):
                return True
    for b in reversed(criteria[1:]):

        def drop_c(b: Block = b) -> bool:
            state.pop(index(b.id))
            return True

        if step(f"ladder 3: omitted supporting acceptance criterion {b.id}", drop_c):
            return True
    return False


__all__ = ["run_ladder"]
