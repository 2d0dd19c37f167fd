"""The settings of construction: :class:`ConstructConfig`.

The window's size settings stay at the top (``ceiling``, ``target_tokens``, ``task_tokens``,
``encoding``, and ``min_term_len``, which several stages share); every other one lives in a
small group defined beside the stage that reads it, each field documented there with what it
does and why its default:

- ``pool`` (:class:`~ctxfast.construct.pool.PoolSettings`): what enters the evidence pool;
- ``gate`` (:class:`~ctxfast.construct.relevance_gate.GateSettings`): the relevance gate;
- ``ranking`` (:class:`~ctxfast.construct.ranker.RankerSettings`): ranking the residue;
- ``filler`` (:class:`~ctxfast.construct.dedup.FillerSettings`): a model's guesses;
- ``represent`` (:class:`~ctxfast.construct.represent.RepresentSettings`): live outputs;
- ``compress`` (:class:`~ctxfast.construct.compress.CompressSettings`): cutting long items;
- ``budget`` (:class:`~ctxfast.construct.budget.BudgetSettings`): fitting and filling.

Every setting is also known by its older flat name (``ConstructConfig(window_lines=30)``,
``{"window_lines": 30}``); the measurements behind the defaults are in ``benches/README.md``
("The measurements behind the settings' defaults").
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ctxfast import settings
from ctxfast.construct.budget import BudgetSettings
from ctxfast.construct.compress import CompressSettings
from ctxfast.construct.dedup import FillerSettings
from ctxfast.construct.pool import PoolSettings
from ctxfast.construct.ranker import RankerSettings
from ctxfast.construct.relevance_gate import GateSettings
from ctxfast.construct.represent import RepresentSettings
from ctxfast.errors import InvalidArgumentError


@settings.accept_flat_keywords("construct")
@dataclass(frozen=True)
class ConstructConfig:
    """Every setting of construction (see the module doc for the groups)."""

    #: The hard cap on the window's tokens (24,000), whatever it holds: what a model's
    #: context can spare for it. ``compose(ceiling=)`` overrides it per call.
    ceiling: int = 24_000
    #: Without a model ranker, the window fills toward this many tokens (8,000) with the
    #: next-best evidence and stops there: room for the code to change, its callers and
    #: neighbours, at a fraction of the ceiling. 0: no filling (the frugal window).
    target_tokens: int = 8000
    #: The task's section is cut to this many tokens (1,500), keeping its head, a
    #: traceback's last frames and its tail: the task is never evicted, so a huge pasted log
    #: would otherwise leave no room for code. 0: never cut.
    task_tokens: int = 1500
    #: The tokenizer tokens are counted with (``cl100k_base``, GPT-4's).
    encoding: str = "cl100k_base"
    #: Words shorter than this (3) are no decision terms for the gate and the compression:
    #: "a", "of", "id" match everything.
    min_term_len: int = 3
    pool: PoolSettings = field(default_factory=PoolSettings)
    gate: GateSettings = field(default_factory=GateSettings)
    ranking: RankerSettings = field(default_factory=RankerSettings)
    filler: FillerSettings = field(default_factory=FillerSettings)
    represent: RepresentSettings = field(default_factory=RepresentSettings)
    compress: CompressSettings = field(default_factory=CompressSettings)
    budget: BudgetSettings = field(default_factory=BudgetSettings)

    def __post_init__(self) -> None:
        for name in ("ceiling", "target_tokens", "task_tokens"):
            if getattr(self, name) < 0:
                raise InvalidArgumentError(f"{name} must be non-negative")

    @classmethod
    def from_mapping(cls, data: dict[str, Any] | None) -> ConstructConfig:
        """A config with the given settings overridden, in nested form
        (``{"compress": {"window_lines": 30}}``), by their flat names
        (``{"window_lines": 30}``) or both; an unknown name is a ``ConfigError``."""
        return settings.from_mapping(cls, data, "construct")


__all__ = ["ConstructConfig"]
