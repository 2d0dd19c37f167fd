"""Stage (f): edge-anchored ordering (against lost-in-the-middle) — the rules.

The requirement fills the front (the task, then any plan the caller gave); supporting code
fills the middle; the files holding critical code (change targets and what the decision must
reason over) come last, the strongest nearest the end; live outputs close the window with the
freshest failure at the very end. Stable content comes first and volatile last, so a serving
engine can reuse the KV-cache prefix across decisions. :mod:`ctxfast.construct.render` lays
the window out by these rules; this module holds them and the check that nothing critical
sinks into the middle third.
"""

from __future__ import annotations

from collections.abc import Sequence

from ctxfast.construct.schema import Kind

#: Order of the live outputs at the back of the window (the freshest failure goes last).
LIVE_ORDER = {
    Kind.PATCH: 0,
    Kind.ERROR: 1,
    Kind.TRACEBACK: 2,
    Kind.TOOL_OUTPUT: 3,
    Kind.TEST_OUTPUT: 4,
}


def middle_third_violations(spans: Sequence[tuple[int, int, bool]]) -> list[int]:
    """Indexes of critical entries lying wholly inside the middle third of the window.

    ``spans`` are ``(start_token, end_token, critical)`` per entry in window order.
    """
    if not spans:
        return []
    total = spans[-1][1]
    lo, hi = total / 3, 2 * total / 3
    return [i for i, (s, e, crit) in enumerate(spans) if crit and s >= lo and e <= hi]


__all__ = ["LIVE_ORDER", "middle_third_violations"]
