"""Budgeted section assembly: selection, constraint and arrangement kept separate.

``assemble_context`` owns selection (priority fill) and constraint (pinned sections fail
closed); ``order_for_recall`` owns arrangement. Unlike the lab version this module is based
on, the reported ``token_count`` is the exact count of the fully rendered text, headers and
separators included, and it never exceeds the budget.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from ctxfast.errors import BudgetError
from ctxfast.tokens import (
    DEFAULT_ELISION,
    DEFAULT_ENCODING,
    count_tokens,
    count_tokens_batch,
    truncate_to_tokens,
)

SEPARATOR = "\n\n"


@dataclass(frozen=True)
class ContextSection:
    """One candidate block of a prompt. Frozen so it cannot change between passes."""

    name: str
    text: str
    priority: int | float
    pinned: bool = False
    truncatable: bool = False


@dataclass(frozen=True)
class AssembledContext:
    """The rendered window and the decision made for every section (by name)."""

    text: str
    token_count: int
    included: list[str] = field(default_factory=list)
    truncated: list[str] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)


def render_section(name: str, body: str) -> str:
    """The rendered form of one section: a markdown header line, then the body."""
    return f"### {name}\n{body}"


def _render(sections: Sequence[ContextSection], chosen: dict[int, str]) -> str:
    return SEPARATOR.join(
        render_section(s.name, chosen[id(s)]) for s in sections if id(s) in chosen
    )


def assemble_context(
    sections: Sequence[ContextSection],
    budget: int,
    *,
    encoding: str = DEFAULT_ENCODING,
    elision: str = DEFAULT_ELISION,
) -> AssembledContext:
    """Select sections into ``budget`` tokens and render them in the caller's order.

    1. Pinned sections must all fit (rendered) or :class:`BudgetError` is raised.
    2. Non-pinned sections are taken by descending priority (stable for ties); one that does
       not fit whole is truncated when ``truncatable`` and dropped otherwise.
    3. The survivors render in the order given, ``### name`` headers joined by blank lines.

    Decisions are keyed by object identity, so value-equal sections are decided separately.
    Costs are estimated per section, then the whole render is counted exactly; if boundary
    effects push it over, the lowest-priority survivor is cut further or dropped until it fits.
    """
    if budget < 0:
        raise BudgetError(f"budget must be non-negative, got {budget}")
    sep_cost = count_tokens(SEPARATOR, encoding)
    chosen: dict[int, str] = {id(s): s.text for s in sections if s.pinned}
    pinned_text = _render(sections, chosen)
    pinned_tokens = count_tokens(pinned_text, encoding)
    if pinned_tokens > budget:
        raise BudgetError(f"pinned sections need {pinned_tokens} tokens but the budget is {budget}")
    remaining = budget - pinned_tokens
    truncated: set[int] = set()
    dropped: set[int] = set()
    ranked = sorted((s for s in sections if not s.pinned), key=lambda s: -s.priority)
    # One parallel native call counts every header and body up front.
    counts = count_tokens_batch(
        [render_section(s.name, "") for s in ranked] + [s.text for s in ranked], encoding
    )
    header_costs, body_costs = counts[: len(ranked)], counts[len(ranked) :]
    for section, header_cost, body_cost in zip(ranked, header_costs, body_costs, strict=True):
        overhead = header_cost + (sep_cost if chosen else 0)
        cost = overhead + body_cost
        if cost <= remaining:
            chosen[id(section)] = section.text
            remaining -= cost
            continue
        body = ""
        if section.truncatable and remaining > overhead:
            body = truncate_to_tokens(
                section.text, remaining - overhead, encoding=encoding, elision=elision
            )
        if body:
            chosen[id(section)] = body
            truncated.add(id(section))
            remaining -= overhead + count_tokens(body, encoding)
        else:
            dropped.add(id(section))

    text = _render(sections, chosen)
    total = count_tokens(text, encoding)
    while total > budget:
        victim = _lowest_priority_survivor(ranked, chosen)
        over = total - budget
        body = chosen[id(victim)]
        shorter = ""
        if victim.truncatable:
            shorter = truncate_to_tokens(
                body.removesuffix(elision) if id(victim) in truncated else body,
                max(count_tokens(body, encoding) - over, 0),
                encoding=encoding,
                elision=elision,
            )
        if shorter and shorter != body:
            chosen[id(victim)] = shorter
            truncated.add(id(victim))
        else:
            del chosen[id(victim)]
            truncated.discard(id(victim))
            dropped.add(id(victim))
        text = _render(sections, chosen)
        total = count_tokens(text, encoding)

    return AssembledContext(
        text=text,
        token_count=total,
        included=[s.name for s in sections if id(s) in chosen],
        truncated=[s.name for s in sections if id(s) in truncated],
        dropped=[s.name for s in sections if id(s) in dropped],
    )


def _lowest_priority_survivor(
    ranked: list[ContextSection], chosen: dict[int, str]
) -> ContextSection:
    for section in reversed(ranked):
        if id(section) in chosen:
            return section
    # Only pinned sections remain, and they were verified to fit on their own.
    raise BudgetError("pinned sections exceed the budget")


def order_for_recall(sections: Sequence[ContextSection]) -> list[ContextSection]:
    """Arrange sections so the highest priorities sit at the two ends of the window.

    Ranked by priority (stable), dealt alternately to the front and the back; the back is
    reversed, so rank 0 opens the window and rank 1 closes it (the U-shaped recall curve).
    """
    ranked = sorted(sections, key=lambda s: -s.priority)
    front = ranked[0::2]
    back = ranked[1::2]
    return front + back[::-1]


__all__ = [
    "SEPARATOR",
    "AssembledContext",
    "ContextSection",
    "assemble_context",
    "order_for_recall",
    "render_section",
]
