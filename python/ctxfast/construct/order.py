"""Stage (f): edge-anchored ordering (spec 08 §3.6, lost-in-the-middle).

Decision-critical items fill the front block (the requirement, then critical definitions)
and the back block (insertion-point code immediately before its change target, the patch,
current errors, and the freshest failing output at the very end); supporting material fills
the middle. Stable content comes first and volatile last, so a serving engine can reuse the
KV-cache prefix across decisions. Critical definitions are the only movable critical items:
they go to whichever edge block is lighter in tokens, so neither block sinks into the
middle third when supporting material is present.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ctxfast.construct.compress import Block
from ctxfast.construct.dedup import ROLE_RANK
from ctxfast.construct.represent import Role
from ctxfast.construct.schema import Kind

_LIVE_ORDER = {
    Kind.PATCH: 0,
    Kind.ERROR: 1,
    Kind.TRACEBACK: 2,
    Kind.TOOL_OUTPUT: 3,
    Kind.TEST_OUTPUT: 4,
}


@dataclass(frozen=True)
class Layout:
    front: tuple[Block, ...]
    middle: tuple[Block, ...]
    back: tuple[Block, ...]

    def blocks(self) -> list[Block]:
        return [*self.front, *self.middle, *self.back]


def _edit_site(blocks: Sequence[Block]) -> list[Block]:
    """Change targets in pool order, each preceded by the insertion-point code before it."""
    targets = [b for b in blocks if b.role is Role.CHANGE_TARGET]
    inserts = [b for b in blocks if b.role is Role.INSERTION_POINT]
    out: list[Block] = []
    placed: set[str] = set()
    for t in targets:
        for ins in inserts:
            if ins.id not in placed and ins.item.meta.file == t.item.meta.file:
                out.append(ins)
                placed.add(ins.id)
        out.append(t)
    out[:0] = [ins for ins in inserts if ins.id not in placed]
    return out


def arrange(
    blocks: Sequence[Block],
    sizes: Mapping[str, int] | None = None,
    front_base: int = 0,
    freshest: str | None = None,
) -> Layout:
    """Place blocks: critical at the edges, supporting in the middle, freshest failure last.

    ``sizes`` (token estimates by id) lets critical definitions balance the two edge blocks;
    ``front_base`` is the size of the fixed task header that precedes the front block.
    """
    sizes = sizes or {}
    critical = [b for b in blocks if b.critical]
    supporting = [b for b in blocks if not b.critical]
    reqs = [b for b in critical if b.role is Role.REQUIREMENT]
    reqs.sort(key=lambda b: (b.item.kind is not Kind.PLAN_NODE, b.item.meta.seq))
    defs = [
        b
        for b in critical
        if b.role
        not in (Role.REQUIREMENT, Role.CHANGE_TARGET, Role.INSERTION_POINT, Role.LIVE_STATE)
        and b.item.kind not in _LIVE_ORDER
    ]
    site = _edit_site(critical)
    live = [b for b in critical if b.item.kind in _LIVE_ORDER and b not in site]
    live.sort(key=lambda b: (b.id == freshest, _LIVE_ORDER[b.item.kind], b.item.meta.seq))

    front_defs: list[Block] = []
    back_defs: list[Block] = []
    f = front_base + sum(sizes.get(b.id, 0) for b in reqs)
    k = sum(sizes.get(b.id, 0) for b in (*site, *live))
    for d in defs:
        if f <= k:
            front_defs.append(d)
            f += sizes.get(d.id, 0)
        else:
            back_defs.append(d)
            k += sizes.get(d.id, 0)
    supporting.sort(
        key=lambda b: (
            b.pointer_to is not None,
            b.tier == "transient",
            ROLE_RANK[b.role],
            b.item.meta.seq,
        )
    )
    return Layout(tuple(reqs + front_defs), tuple(supporting), tuple(back_defs + site + live))


def middle_third_violations(spans: Sequence[tuple[int, int, bool]]) -> list[int]:
    """Indexes of critical entries lying wholly inside the middle third of the window.

    ``spans`` are ``(start_token, end_token, critical)`` per entry in window order.
    """
    if not spans:
        return []
    total = spans[-1][1]
    lo, hi = total / 3, 2 * total / 3
    return [i for i, (s, e, crit) in enumerate(spans) if crit and s >= lo and e <= hi]


__all__ = ["Layout", "arrange", "middle_third_violations"]
