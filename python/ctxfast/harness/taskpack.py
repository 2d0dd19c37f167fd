"""A task pack: the context a specialist receives, rendered byte-identically every time.

KV-cache prefix reuse (the difference between ~0.3 s and ~8 s to first token on local servers)
only works if equal inputs render to equal bytes, and a cached prefix only survives if what
changes between calls sits at the end. So sections render in an explicit kind order — stable
content first (instructions, skills, repo map, memory, files), volatile content last (task,
history) — and within a kind by name, never by insertion or hash order.

Selection under the budget is delegated to :func:`ctxfast.harness.sections.assemble_context`, so the
reported token count is exact for the rendered text and never exceeds the budget.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ctxfast.errors import ConfigError
from ctxfast.harness.profiles import ModelProfile, pack_budget
from ctxfast.harness.sections import AssembledContext, ContextSection, assemble_context
from ctxfast.tokens import DEFAULT_ENCODING

#: Section kinds from most stable (changes per project) to most volatile (changes per call).
DEFAULT_ORDER: tuple[str, ...] = (
    "instructions",
    "skills",
    "repo_map",
    "memory",
    "files",
    "task",
    "history",
)

#: Default selection priority per kind: what survives when the budget is tight.
DEFAULT_PRIORITY: dict[str, int] = {
    "task": 100,
    "instructions": 90,
    "files": 70,
    "history": 60,
    "skills": 50,
    "repo_map": 40,
    "memory": 30,
}


@dataclass(frozen=True)
class PackEntry:
    """One piece of a pack. ``name`` orders entries within a kind (e.g. a file path)."""

    kind: str
    name: str
    text: str
    priority: float
    pinned: bool
    truncatable: bool


class TaskPack:
    """Collects sections, then renders them in a fixed order under an exact token budget.

    >>> pack = TaskPack(budget=200)
    >>> pack.add("task", "task", "Fix the off-by-one in pager.py", pinned=True)
    >>> pack.add("instructions", "AGENTS.md", "Run pytest before committing.")
    >>> pack.render().text.splitlines()[0]
    '### instructions: AGENTS.md'
    """

    def __init__(
        self,
        budget: int,
        *,
        encoding: str = DEFAULT_ENCODING,
        order: Sequence[str] = DEFAULT_ORDER,
    ) -> None:
        if budget < 0:
            raise ConfigError(f"budget must be >= 0, got {budget}")
        if len(set(order)) != len(order):
            raise ConfigError(f"section order has duplicates: {list(order)}")
        self.budget = budget
        self.encoding = encoding
        self.order = tuple(order)
        self._entries: dict[tuple[str, str], PackEntry] = {}

    @classmethod
    def for_profile(
        cls, profile: ModelProfile, role: str = "implement", order: Sequence[str] = DEFAULT_ORDER
    ) -> TaskPack:
        """A pack sized by :func:`ctxfast.pack_budget` and counted in the profile's encoding."""
        return cls(pack_budget(profile, role), encoding=profile.encoding, order=order)

    def add(
        self,
        kind: str,
        name: str,
        text: str,
        *,
        priority: float | None = None,
        pinned: bool = False,
        truncatable: bool = True,
    ) -> None:
        """Adds (or replaces) the section ``kind``/``name``; ``kind`` must be in the order."""
        if kind not in self.order:
            raise ConfigError(f"unknown section kind {kind!r}; expected one of {self.order}")
        prio = DEFAULT_PRIORITY.get(kind, 0) if priority is None else priority
        self._entries[(kind, name)] = PackEntry(kind, name, text, prio, pinned, truncatable)

    def entries(self) -> list[PackEntry]:
        """Entries in render order: by kind rank, then by name (code-point order)."""
        rank = {k: i for i, k in enumerate(self.order)}
        return sorted(self._entries.values(), key=lambda e: (rank[e.kind], e.name))

    def render(self) -> AssembledContext:
        """Selects and renders the pack; headers are ``### kind: name`` (or ``### kind``)."""
        sections = [
            ContextSection(
                name=e.kind if e.name in ("", e.kind) else f"{e.kind}: {e.name}",
                text=e.text,
                priority=e.priority,
                pinned=e.pinned,
                truncatable=e.truncatable,
            )
            for e in self.entries()
        ]
        return assemble_context(sections, self.budget, encoding=self.encoding)


__all__ = ["DEFAULT_ORDER", "DEFAULT_PRIORITY", "PackEntry", "TaskPack"]
